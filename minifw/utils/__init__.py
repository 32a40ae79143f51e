"""torch.utils' names: `minifw.utils.data` is minifw.data (datasets, samplers, DataLoader);
`minifw.utils.checkpoint` holds activation checkpointing."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
