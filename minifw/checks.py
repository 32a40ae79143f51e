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

The vocabulary for arguments that are not arrays, used by every public entry point
of minifw.ops and minifw.nn.functional:

- check_int / check_ints: a Python or NumPy integer (never a bool, a float or an
  array), or an int-or-tuple of k of them, within bounds; sizes handed to the
  native library are bounded by MAX_SIZE, the largest it indexes, and every int
  by the int64 the bindings take.
- check_real: a real number (never a bool), finite unless told otherwise, and,
  given the dtype of the data it is applied to, representable in it (1e308 is a
  finite double but overflows float32, which would turn results into inf/NaN).
- check_bool: a bool or numpy.bool_ (never 1, 'True' or None).
- check_choice: a string from a fixed set.
- check_float_array: dtype and rank first, then the size, and only then a copy of a
  non-contiguous array (a broadcast view of a few bytes can stand for terabytes).
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


def check_no_zero_dims(fn, name, a):
    """Every dimension of `a` (an array or a Tensor) >= 1: a primitive whose problem describes
    its shape (convolution, pooling) refuses zero-size input under the argument's own name."""
    if 0 in tuple(a.shape):
        raise ValueError(f"{fn}: {name} must have every dimension >= 1, got shape {tuple(a.shape)}")
    return a


def check_array(fn, name, a):
    """`a` must be an array of an available device (a numpy.ndarray on the CPU)."""
    if not devices.is_array(a):
        raise TypeError(f"{fn}: {name} must be a numpy.ndarray (or a cupy.ndarray on 'cuda'), got "
                        f"{type(a).__name__}")
    return a


def check_float_array(fn, name, a, *, ndim=None, ndim_desc=None, dtype=None, copy=True):
    """`a` must be a float32/float64 array (of `dtype` when given) with `ndim`
    dimensions (an int or a tuple of allowed ranks) and at most MAX_SIZE elements.
    Returns it C-contiguous (with copy=False as it is: the caller checks the sizes
    of its problem first and then calls contiguous_for)."""
    check_array(fn, name, a)
    check_float_dtype_ndim(fn, name, a, ndim=ndim, ndim_desc=ndim_desc, dtype=dtype)
    check_elements(fn, name, a)
    return contiguous_for(fn, name, a) if copy else a


def check_elements(fn, name, a):
    """At most MAX_SIZE elements (a broadcast view can have any number)."""
    size = math.prod(a.shape)
    if size > MAX_SIZE:
        raise ValueError(f"{fn}: {name} must have at most 2**58 elements (the largest array the "
                         f"native library indexes), got shape {tuple(a.shape)} ({size} elements)")
    return a


def contiguous(a):
    """`a` itself when C-contiguous, else a C-contiguous copy on its device
    (np.ascontiguousarray would turn a device's array into a host one)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def contiguous_for(fn, name, a):
    """contiguous(a), saying which argument could not be copied when memory runs out (a
    broadcast view such as np.broadcast_to(x, (2**20, 2**20)) takes a few bytes but
    copies to terabytes)."""
    if a.flags.c_contiguous:
        return a
    try:
        return a.copy(order="C")
    except MemoryError:
        raise MemoryError(f"{fn}: {name} is a non-contiguous view of shape {tuple(a.shape)} "
                          f"(strides {tuple(a.strides)}) whose C-contiguous copy needs "
                          f"{math.prod(a.shape) * a.itemsize} bytes, more than can be "
                          f"allocated") from None


def check_same_device(fn, **arrays):
    """Every array given (None is skipped) must be on one device; returns that device."""
    found = {name: devices.of(a) for name, a in arrays.items() if a is not None}
    if len(set(found.values())) > 1:
        listed = ", ".join(f"{name} on {str(dev)!r}" for name, dev in found.items())
        raise ValueError(f"{fn}: expected every array on one device, got {listed} (move them with "
                         f"Tensor.to or minifw.devices.to_device)")
    return next(iter(found.values()), devices.CPU)


# The most elements (and so the largest size, stride or padding) any buffer the native
# library indexes may have: native/bind_util.h's kMaxElements, far enough below 2**63
# that sums and products of a few sizes cannot wrap.
MAX_SIZE = 2 ** 58
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _bound_text(v):
    """2**58 rather than 288230376151711744 in messages."""
    for e in (58, 63, 64, 31, 32):
        for sign, text in ((1, ""), (-1, "-")):
            if v == sign * 2 ** e:
                return f"{text}2**{e}"
            if v == sign * 2 ** e - 1:
                return f"{text}2**{e} - 1"
    return repr(v)


def is_int(v):
    """A Python or NumPy integer, not a bool (True == 1 would otherwise pass as a size)."""
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _int_range(fn, name, v, minimum, maximum, got):
    lo = INT64_MIN if minimum is None else minimum
    hi = INT64_MAX if maximum is None else maximum
    if lo <= v <= hi:
        return
    if minimum is not None and v < minimum:
        raise ValueError(f"{fn}: {name} must be >= {minimum}, got {got}")
    why = (" (the largest size the native library indexes)" if hi == MAX_SIZE else
           " (it must fit int64)" if hi == INT64_MAX or lo == INT64_MIN else "")
    raise ValueError(f"{fn}: {name} must be in [{_bound_text(lo)}, {_bound_text(hi)}]{why}, got {got}")


def check_int(fn, name, v, *, minimum=None, maximum=None):
    """A Python or NumPy integer (not bool, float or array) in [minimum, maximum],
    which default to int64's range (what the native bindings take). Returns an int."""
    if not is_int(v):
        raise TypeError(f"{fn}: {name} must be an int, got {type(v).__name__} {v!r}")
    v = int(v)
    _int_range(fn, name, v, minimum, maximum, v)
    return v


def check_size(fn, name, v, *, minimum=1):
    """An int in [minimum, MAX_SIZE]: a size, stride or count handed to native code."""
    return check_int(fn, name, v, minimum=minimum, maximum=MAX_SIZE)


def check_ints(fn, name, v, k, *, minimum=None, maximum=MAX_SIZE):
    """An int, or a tuple or list of k ints, each in [minimum, maximum]. Returns a
    tuple of k ints. (A NumPy array is refused: its truth value is ambiguous, and a
    scalar one would stand for k equal values only by accident.)"""
    want = "an int or a pair of ints" if k == 2 else f"an int or a tuple of {k} ints"
    if isinstance(v, (tuple, list)):
        if len(v) != k:
            raise ValueError(f"{fn}: {name} must be {want}, got {v!r} ({len(v)} values)")
        items = tuple(v)
    elif is_int(v):
        items = (v,) * k
    else:
        raise TypeError(f"{fn}: {name} must be {want}, got {v!r} ({type(v).__name__})")
    for item in items:
        if not is_int(item):
            raise TypeError(f"{fn}: {name} must be {want}, got {v!r} (an element of type "
                            f"{type(item).__name__})")
        _int_range(fn, name, int(item), minimum, maximum, repr(v))
    return tuple(int(i) for i in items)


def check_pair(fn, name, v, *, minimum, maximum=MAX_SIZE):
    """An int or a pair of ints, each in [minimum, maximum]. Returns a tuple of two ints."""
    return check_ints(fn, name, v, 2, minimum=minimum, maximum=maximum)


def check_shape(fn, name, shape, ndim):
    if not isinstance(shape, (tuple, list)) or len(shape) != ndim:
        raise ValueError(f"{fn}: {name} must be a tuple of {ndim} ints, got {shape!r}")
    out = []
    for s in shape:
        if not is_int(s):
            raise TypeError(f"{fn}: {name} must be a tuple of {ndim} ints, got {shape!r}")
        if s < 1:
            raise ValueError(f"{fn}: {name} must have every dimension >= 1, got {tuple(shape)}")
        if s > MAX_SIZE:
            raise ValueError(f"{fn}: {name} must have every dimension <= 2**58 (the largest size "
                             f"the native library indexes), got {tuple(shape)}")
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
    """A string from `choices`."""
    if not isinstance(v, str):
        raise TypeError(f"{fn}: {name} must be a string, one of "
                        f"{', '.join(repr(c) for c in choices)}; got {type(v).__name__} {v!r}")
    if v not in choices:
        raise ValueError(f"{fn}: {name} must be one of {', '.join(repr(c) for c in choices)}; "
                         f"got {v!r}")
    return v


def check_real(fn, name, v, *, minimum=None, maximum=None, min_open=False, max_open=False, finite=True,
               dtype=None):
    """A real number (not bool; finite unless finite=False) within the given
    bounds. With `dtype` (the float dtype of the data it is applied to), a finite
    value must also be representable in that dtype: |v| <= finfo(dtype).max.
    Returns a float."""
    if type(v) is not float:  # (the common case, a Python float, skips the ABC check)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{fn}: {name} must be a real number, got {type(v).__name__} {v!r}")
        v = float(v)
    if finite and not math.isfinite(v):
        raise ValueError(f"{fn}: {name} must be finite, got {v!r}")
    if minimum is not None and (v <= minimum if min_open else v < minimum):
        raise ValueError(f"{fn}: {name} must be {'>' if min_open else '>='} {minimum}, got {v!r}")
    if maximum is not None and (v >= maximum if max_open else v > maximum):
        raise ValueError(f"{fn}: {name} must be {'<' if max_open else '<='} {maximum}, got {v!r}")
    if dtype is not None and math.isfinite(v):
        largest = _FLOAT_MAX.get(dtype)
        if largest is None:
            dtype = np.dtype(dtype)
            largest = _FLOAT_MAX[dtype] = float(np.finfo(dtype).max) if dtype.kind == "f" else math.inf
        if abs(v) > largest:
            raise ValueError(f"{fn}: {name} must be representable in {np.dtype(dtype).name}, the "
                             f"dtype of the data (|{name}| <= {largest:.8g}), got {v!r}")
    return v


_FLOAT_MAX = {}  # dtype -> the largest finite value of that float dtype (inf for others)


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
    # (not `d not in TENSOR_DTYPES` alone: a dtype compares equal to None, as np.dtype(None) is float64;
    # np.dtype also takes any object with a dtype attribute: a tensor or an array is not a dtype)
    if (d is None or d not in TENSOR_DTYPES
            or (hasattr(dtype, "ndim") and not isinstance(dtype, (np.dtype, type)))):
        raise TypeError(f"{fn}: dtype must be one of {TENSOR_DTYPE_NAMES}; got {dtype!r}")
    return d


def check_dims(fn, dim, ndim, name="dim"):
    """dim (int, tuple of ints or None) -> a tuple of non-negative axes, or None for all.
    `name` is the argument's name in messages (flatten's start_dim, ...)."""
    if dim is None:
        return None
    items = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = []
    for d in items:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{fn}: {name} must be an int or a tuple of ints, got {dim!r}")
        lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
        if not lo <= d <= hi:
            raise IndexError(f"{fn}: {name}: dimension out of range (expected to be in range of "
                             f"[{lo}, {hi}], but got {d})")
        out.append(int(d) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: {name} {dim!r} names an axis twice")
    return tuple(out)


def check_dim(fn, dim, ndim, name="dim"):
    """One dim (an int, not a tuple) as a non-negative axis."""
    if dim is None or isinstance(dim, (tuple, list)):
        raise TypeError(f"{fn}: {name} must be an int, got {dim!r}")
    return check_dims(fn, dim, ndim, name)[0]


def check_sizes(fn, args):
    """f(2, 3) or f((2, 3)) -> (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
            raise TypeError(f"{fn}: size must be ints, got {args!r}")
    return tuple(int(s) for s in args)
