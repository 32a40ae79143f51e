"""torch.utils' names: `minifw.utils.data` is minifw.data (datasets, samplers, DataLoader)."""
from . import data

__all__ = ["data"]
