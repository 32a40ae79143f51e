"""Argument helpers shared by the layers (as torch.nn.modules.utils): pairs of ints,
positive sizes, the (dtype, device) factory arguments of parameters, and the norms' affine
weight and bias."""
import numbers

import numpy as np

from ... import devices
from ...checks import MAX_SIZE, check_tensor_dtype
from ...tensor import Tensor, get_default_dtype, tensor
from ..parameter import Parameter


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


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
