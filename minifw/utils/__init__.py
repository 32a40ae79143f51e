"""torch.utils' names: `minifw.utils.data` is the package minifw.data (datasets, samplers,
DataLoader), its modules importable under both names as the same module objects
(`from minifw.utils.data.sampler import SubsetRandomSampler`,
`from minifw.utils.data.distributed import DistributedSampler`); `minifw.utils.checkpoint` holds
activation checkpointing, `minifw.utils.benchmark` torch.utils.benchmark's Timer, Measurement and
Compare, `minifw.utils.hooks` RemovableHandle, `minifw.utils.tensorboard` the SummaryWriter that
writes TensorBoard's event files."""
import sys

from .. import data
from . import checkpoint


def _alias_data_modules():
    """Registers minifw.data and each of its loaded modules under minifw.utils.data's name, so
    that an import through that name finds the module itself, never a second copy."""
    prefix = data.__name__
    for name, module in list(sys.modules.items()):
        if module is not None and (name == prefix or name.startswith(prefix + ".")):
            sys.modules.setdefault(__name__ + ".data" + name[len(prefix):], module)


_alias_data_modules()

_LAZY = ("benchmark", "hooks", "tensorboard")  # imported when first asked for: they import nn or vision


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["benchmark", "checkpoint", "data", "hooks", "tensorboard"]
