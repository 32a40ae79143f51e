"""Argument checks shared by every primitive family.

Each check raises TypeError (wrong type or dtype) or ValueError (wrong value or
shape) with a message that names the function, the argument, what was expected
and what arrived, e.g.::

    conv2d_forward: x must be 4-D (N, C, H, W); got a 3-D array of shape (1, 28, 28)
"""
import numbers

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def dtype_name(dtype):
    return np.dtype(dtype).name


def check_float_array(fn, name, a, *, ndim=None, ndim_desc=None, dtype=None):
    """`a` must be a float32/float64 NumPy array (of `dtype` when given) with
    `ndim` dimensions (an int or a tuple of allowed ranks). Returns it C-contiguous."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{fn}: {name} must be a numpy.ndarray, got {type(a).__name__}")
    if a.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{fn}: {name} must have dtype float32 or float64, got {a.dtype}")
    if dtype is not None and a.dtype != np.dtype(dtype):
        raise TypeError(f"{fn}: {name} must have dtype {dtype_name(dtype)} to match the other "
                        f"operands, got {a.dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in allowed:
            want = ndim_desc or " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{fn}: {name} must be {want}; got a {a.ndim}-D array of shape "
                             f"{tuple(a.shape)}")
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a


def check_int(fn, name, v, *, minimum=None):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{fn}: {name} must be an int, got {type(v).__name__} {v!r}")
    v = int(v)
    if minimum is not None and v < minimum:
        raise ValueError(f"{fn}: {name} must be >= {minimum}, got {v}")
    return v


def check_pair(fn, name, v, *, minimum):
    """An int or a pair of ints, each >= minimum. Returns a tuple of two ints."""
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{fn}: {name} must be an int or a pair of ints, got {v!r}")
        items = tuple(v)
    else:
        items = (v, v)
    out = []
    for item in items:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{fn}: {name} must be an int or a pair of ints, got {v!r}")
        if item < minimum:
            raise ValueError(f"{fn}: {name} must be >= {minimum}, got {v!r}")
        out.append(int(item))
    return tuple(out)


def check_shape(fn, name, shape, ndim):
    if not isinstance(shape, (tuple, list)) or len(shape) != ndim:
        raise ValueError(f"{fn}: {name} must be a tuple of {ndim} ints, got {shape!r}")
    out = []
    for s in shape:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
            raise TypeError(f"{fn}: {name} must be a tuple of {ndim} ints, got {shape!r}")
        if s < 1:
            raise ValueError(f"{fn}: {name} must have every dimension >= 1, got {tuple(shape)}")
        out.append(int(s))
    return tuple(out)


def check_dtype_arg(fn, name, dtype):
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be 'float32' or 'float64', got {dtype!r}") from None
    if d not in FLOAT_DTYPES:
        raise TypeError(f"{fn}: {name} must be 'float32' or 'float64', got {dtype!r}")
    return d


def check_choice(fn, name, v, choices):
    if v not in choices:
        raise ValueError(f"{fn}: {name} must be one of {', '.join(repr(c) for c in choices)}; "
                         f"got {v!r}")
    return v
