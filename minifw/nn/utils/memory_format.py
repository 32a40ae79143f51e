"""torch.nn.utils.memory_format's converters. minifw's tensors have one layout (contiguous,
NCHW for images; docs/pytorch.md), so there is no channels-last weight to convert to: each
function checks its arguments and returns the module unchanged."""
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _unchanged(fn, module, memory_format):
    if not isinstance(module, Module):
        raise TypeError(f"{fn}: module must be an nn.Module; got {type(module).__name__}")
    import minifw
    known = tuple(getattr(minifw, name) for name in ("contiguous_format", "channels_last",
                                                     "channels_last_3d", "preserve_format")
                  if hasattr(minifw, name))
    if known and memory_format not in known:
        raise ValueError(f"{fn}: memory_format must be a minifw memory format (such as "
                         f"minifw.channels_last); got {memory_format!r}")
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Returns `module` unchanged: minifw keeps every convolution weight in one layout."""
    return _unchanged("convert_conv2d_weight_memory_format", module, memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """Returns `module` unchanged: minifw keeps every convolution weight in one layout."""
    return _unchanged("convert_conv3d_weight_memory_format", module, memory_format)
