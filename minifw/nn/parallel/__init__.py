"""Data parallelism (as torch.nn.parallel): DistributedDataParallel over the process group of
minifw.distributed, and DataParallel, which runs on one device."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
