"""torch.utils.data._utils's one module that scripts import: `collate`."""
from . import collate

__all__ = ["collate"]
