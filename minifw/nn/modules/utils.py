"""Argument helpers shared by the layers (as torch.nn.modules.utils): pairs of ints,
positive sizes, the (dtype, device) factory arguments of parameters, and the norms' affine
weight and bias; and consume_prefix_in_state_dict_if_present, which strips the `module.` a
DataParallel or DistributedDataParallel wrapper put before every key of a state_dict."""
import collections.abc
import numbers

import numpy as np

from ... import devices
from ...checks import MAX_SIZE, check_tensor_dtype
from ...tensor import Tensor, get_default_dtype, tensor
from ..parameter import Parameter


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _ntuple(n, name="parse"):
    """A function that makes an n-tuple of one value, and passes an iterable's items through
    as a tuple (a custom layer's `_pair(kernel_size)`)."""
    def parse(v):
        if isinstance(v, collections.abc.Iterable):
            return tuple(v)
        return (v,) * n
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Remove `prefix` from the start of every key of `state_dict` that has it, in place (the
    renamed entries move to the end, in their order). The keys of its `_metadata`, where it
    has one, are renamed alike, and the metadata entry named by the prefix without its final
    dot becomes the root's ('')."""
    if not isinstance(prefix, str):
        raise TypeError(f"consume_prefix_in_state_dict_if_present: prefix must be a str, got "
                        f"{type(prefix).__name__} {prefix!r}")
    if not isinstance(state_dict, collections.abc.MutableMapping):
        raise TypeError(f"consume_prefix_in_state_dict_if_present: state_dict must be a dict, "
                        f"got {type(state_dict).__name__}")
    if not prefix:
        return
    for key in [k for k in state_dict if isinstance(k, str) and k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix[:-1] if prefix.endswith(".") else None
    for key in list(metadata):
        if key == "":
            continue
        if key == bare:
            metadata[""] = metadata.pop(key)
        elif key.startswith(prefix):
            metadata[key[len(prefix):]] = metadata.pop(key)


def _positive_int(cls, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__} {v!r}")
    if v < 1:
        raise ValueError(f"{cls}: {name} must be >= 1, got {v}")
    if v > MAX_SIZE:
        raise ValueError(f"{cls}: {name} must be at most 2**58 (the largest size the native "
                         f"library indexes), got {v}")
    return int(v)


def _factory(cls, dtype, device):
    """(dtype, device) of a layer's parameters and buffers: PyTorch's factory arguments."""
    dev = devices.get(device, cls)
    dtype = get_default_dtype() if dtype is None else check_tensor_dtype(dtype, cls)  # as PyTorch's layers
    if dtype.kind != "f":
        raise TypeError(f"{cls}: dtype must be float32 or float64, got {dtype}")
    return dtype, dev


def _empty_parameter(shape, dtype, dev):
    return Parameter(Tensor._make(devices.empty(shape, dtype, dev)))


def _ones_and_zeros(module, shape, dtype, dev, affine, bias):
    """weight (ones) and bias (zeros) of `shape` when affine, else None, as PyTorch's norms."""
    if affine:
        module.weight = Parameter(tensor(np.ones(shape, dtype), device=dev))
        if bias:
            module.bias = Parameter(tensor(np.zeros(shape, dtype), device=dev))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
