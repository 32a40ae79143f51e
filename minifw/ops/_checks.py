"""Argument checks shared by the non-convolution primitive families, on top
of _validate: real-valued parameters, flags, operands that must match another
operand's shape and dtype, and arrays the primitive writes into."""
import math
import numbers

import numpy as np

from ._validate import check_float_array

_NATIVE_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def native_suffix(dtype):
    return _NATIVE_SUFFIX[np.dtype(dtype)]


def check_real(fn, name, v, *, minimum=None, maximum=None, min_open=False, max_open=False, finite=True):
    """A real number (not bool; finite unless finite=False) within the given
    bounds. Returns a float."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a real number, got {type(v).__name__} {v!r}")
    v = float(v)
    if finite and not math.isfinite(v):
        raise ValueError(f"{fn}: {name} must be finite, got {v!r}")
    if minimum is not None and (v <= minimum if min_open else v < minimum):
        raise ValueError(f"{fn}: {name} must be {'>' if min_open else '>='} {minimum}, got {v!r}")
    if maximum is not None and (v >= maximum if max_open else v > maximum):
        raise ValueError(f"{fn}: {name} must be {'<' if max_open else '<='} {maximum}, got {v!r}")
    return v


def check_bool(fn, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def check_like(fn, name, a, ref, ref_name):
    """`a` must be a float array with the dtype and shape of `ref`. Returns it C-contiguous."""
    a = check_float_array(fn, name, a, dtype=ref.dtype)
    if a.shape != ref.shape:
        raise ValueError(f"{fn}: {name} must have the shape of {ref_name} {tuple(ref.shape)}, "
                         f"got {tuple(a.shape)}")
    return a


def check_channel_vector(fn, name, v, channels, dtype, *, writable=False):
    """A 1-D float array of `channels` values of `dtype` (bias, weight, running stats).
    With writable=True it is updated in place, so it cannot be copied: it must
    already be C-contiguous and writable."""
    if writable:
        if not isinstance(v, np.ndarray):
            raise TypeError(f"{fn}: {name} must be a numpy.ndarray, got {type(v).__name__}")
        if not v.flags.c_contiguous or not v.flags.writeable:
            raise ValueError(f"{fn}: {name} is updated in place, so it must be a writable, "
                             f"C-contiguous array")
    v = check_float_array(fn, name, v, ndim=1, dtype=dtype, ndim_desc=f"1-D of shape ({channels},)")
    if v.shape[0] != channels:
        raise ValueError(f"{fn}: {name} must have shape ({channels},) to match the {channels} channels "
                         f"of x, got {tuple(v.shape)}")
    return v
