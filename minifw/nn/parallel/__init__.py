"""Multi-process data parallelism (as torch.nn.parallel): DistributedDataParallel over the
process group of minifw.distributed."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
