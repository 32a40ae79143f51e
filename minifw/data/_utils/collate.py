"""torch.utils.data._utils.collate's names, which older scripts import from there:
default_collate and default_convert (minifw.data.dataloader's)."""
from ..dataloader import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
