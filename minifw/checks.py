"""The argument checks of every layer, in one place.

Each check raises TypeError (wrong type or dtype) or ValueError (wrong value or
shape) with a message that names the function, the argument, what was expected
and what arrived, e.g.::

    conv2d_forward: x must be 4-D (N, C, H, W); got a 3-D array of shape (1, 28, 28)

minifw.ops checks arrays with these before any pointer reaches native code (the
binding re-checks sizes as the last line of defence); nn.functional checks
Tensors with the same functions (check_float_dtype_ndim is shared), and Tensor
methods normalize dims, sizes and dtypes with check_dims, check_sizes and
check_tensor_dtype. It imports nothing of minifw but minifw.devices (which
arrays count as arrays).
"""
import math
import numbers

import numpy as np

from . import devices

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# int32 is a storage dtype (creation, casts, indexing, arithmetic); the native primitives take
# float32/float64 data and int64 indices and targets only, which their own checks enforce.
TENSOR_DTYPES = FLOAT_DTYPES + (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.bool_))
TENSOR_DTYPE_NAMES = ", ".join(d.name for d in TENSOR_DTYPES)


def dtype_name(dtype):
    return np.dtype(dtype).name


def check_float_dtype_ndim(fn, name, a, *, ndim=None, ndim_desc=None, dtype=None, what="array"):
    """`a` (an array or a Tensor: `what` says which in the message) must be float32 or
    float64 (`dtype` when given) with `ndim` dimensions (an int or a tuple of allowed ranks)."""
    if a.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{fn}: {name} must have dtype float32 or float64, got {a.dtype}")
    if dtype is not None and a.dtype != np.dtype(dtype):
        raise TypeError(f"{fn}: {name} must have dtype {dtype_name(dtype)} to match the other "
                        f"operands, got {a.dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in allowed:
            want = ndim_desc or " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{fn}: {name} must be {want}; got a {a.ndim}-D {what} of shape "
                             f"{tuple(a.shape)}")
    return a


def check_array(fn, name, a):
    """`a` must be an array of an available device (a numpy.ndarray on the CPU)."""
    if not devices.is_array(a):
        raise TypeError(f"{fn}: {name} must be a numpy.ndarray (or a cupy.ndarray on 'cuda'), got "
                        f"{type(a).__name__}")
    return a


def check_float_array(fn, name, a, *, ndim=None, ndim_desc=None, dtype=None):
    """`a` must be a float32/float64 array (of `dtype` when given) with `ndim`
    dimensions (an int or a tuple of allowed ranks). Returns it C-contiguous."""
    check_array(fn, name, a)
    check_float_dtype_ndim(fn, name, a, ndim=ndim, ndim_desc=ndim_desc, dtype=dtype)
    return contiguous(a)


def contiguous(a):
    """`a` itself when C-contiguous, else a C-contiguous copy on its device
    (np.ascontiguousarray would turn a device's array into a host one)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def check_same_device(fn, **arrays):
    """Every array given (None is skipped) must be on one device; returns that device."""
    found = {name: devices.of(a) for name, a in arrays.items() if a is not None}
    if len(set(found.values())) > 1:
        listed = ", ".join(f"{name} on {str(dev)!r}" for name, dev in found.items())
        raise ValueError(f"{fn}: expected every array on one device, got {listed} (move them with "
                         f"Tensor.to or minifw.devices.to_device)")
    return next(iter(found.values()), devices.CPU)


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
    """`a` must be a float array with the dtype, shape and device of `ref`. Returns it
    C-contiguous."""
    a = check_float_array(fn, name, a, dtype=ref.dtype)
    check_same_device(fn, **{ref_name: ref, name: a})
    if a.shape != ref.shape:
        raise ValueError(f"{fn}: {name} must have the shape of {ref_name} {tuple(ref.shape)}, "
                         f"got {tuple(a.shape)}")
    return a


def check_channel_vector(fn, name, v, channels, dtype, *, writable=False):
    """A 1-D float array of `channels` values of `dtype` (bias, weight, running stats).
    With writable=True it is updated in place, so it cannot be copied: it must
    already be C-contiguous and writable."""
    if writable:
        check_array(fn, name, v)
        if not v.flags.c_contiguous or not devices.is_writeable(v):
            raise ValueError(f"{fn}: {name} is updated in place, so it must be a writable, "
                             f"C-contiguous array")
    v = check_float_array(fn, name, v, ndim=1, dtype=dtype, ndim_desc=f"1-D of shape ({channels},)")
    if v.shape[0] != channels:
        raise ValueError(f"{fn}: {name} must have shape ({channels},) to match the {channels} channels "
                         f"of x, got {tuple(v.shape)}")
    return v


# ---- dims, sizes and dtypes of Tensors -------------------------------------------

def check_tensor_dtype(dtype, fn="tensor"):
    """`dtype` given as np.dtype, NumPy type, Python type or name -> one of TENSOR_DTYPES."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d not in TENSOR_DTYPES:
        raise TypeError(f"{fn}: dtype must be one of {TENSOR_DTYPE_NAMES}; got {dtype!r}")
    return d


def check_dims(fn, dim, ndim):
    """dim (int, tuple of ints or None) -> a tuple of non-negative axes, or None for all."""
    if dim is None:
        return None
    items = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = []
    for d in items:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{fn}: dim must be an int or a tuple of ints, got {dim!r}")
        lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
        if not lo <= d <= hi:
            raise IndexError(f"{fn}: dimension out of range (expected to be in range of [{lo}, {hi}], "
                             f"but got {d})")
        out.append(int(d) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: dim {dim!r} names an axis twice")
    return tuple(out)


def check_dim(fn, dim, ndim):
    """One dim as a non-negative axis."""
    return check_dims(fn, dim, ndim)[0]


def check_sizes(fn, args):
    """f(2, 3) or f((2, 3)) -> (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
            raise TypeError(f"{fn}: size must be ints, got {args!r}")
    return tuple(int(s) for s in args)
