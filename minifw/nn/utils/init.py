"""skip_init, as torch.nn.utils.skip_init: a module built without running its initializers."""
import contextlib
import inspect

from .. import init as _init
from ..modules.module import Module

__all__ = ["skip_init"]

# the initializers a module's reset_parameters calls: each fills its tensor in place
_FILLING = ("uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_", "dirac_", "sparse_",
            "trunc_normal_", "orthogonal_", "xavier_uniform_", "xavier_normal_",
            "kaiming_uniform_", "kaiming_normal_")


@contextlib.contextmanager
def _initializers_skipped():
    saved = {name: getattr(_init, name) for name in _FILLING if hasattr(_init, name)}
    try:
        for name in saved:
            setattr(_init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, function in saved.items():
            setattr(_init, name, function)


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with its parameters and buffers left as allocated:
    the nn.init initializers its constructor calls do nothing (and draw no random numbers),
    so initializing the module afterwards costs no second pass. As in PyTorch, module_cls
    must take a `device` keyword argument. (PyTorch builds the module on the "meta" device and
    allocates it uninitialized; minifw has no meta device, so the tensors are allocated by the
    constructor and initializers reached through minifw.nn.init are skipped; a constructor
    that fills a tensor by its own Tensor methods still does so.)"""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"skip_init: expected a Module class; got {module_cls!r}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise ValueError("skip_init: expected a module class that accepts a device kwarg; "
                         f"{module_cls.__name__} does not")
    with _initializers_skipped():
        return module_cls(*args, **kwargs)
