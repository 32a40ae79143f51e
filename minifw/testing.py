"""torch.testing for minifw: assert_close (tensors, NumPy arrays, numbers, and sequences and
mappings of them, compared element by element with tolerances chosen by dtype) and
make_tensor (a random tensor for a test), so that a test suite written against
torch.testing runs with its imports renamed.

    minifw.testing.assert_close(model(x), expected)             # float32: rtol 1.3e-6, atol 1e-5
    minifw.testing.assert_close(a, b, rtol=0, atol=0)            # exact
"""
import collections.abc
import math
import numbers

import numpy as np

from . import devices
from .checks import check_bool, check_real
from .tensor import Tensor, _dtype_arg, tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# Default (rtol, atol) by dtype, as PyTorch's: a float32 result may differ from another way
# of computing it by a few ulp relative, and by 1e-5 where values are near zero.
_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
               np.dtype(np.float64): (1e-7, 1e-7)}
# assert_allclose's (deprecated in PyTorch) defaults, from before assert_close
_ALLCLOSE_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-3), np.dtype(np.float32): (1e-4, 1e-5),
                        np.dtype(np.float64): (1e-5, 1e-8)}


def _tolerances(dtype, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"assert_close: give both rtol and atol or neither, got rtol={rtol!r} and "
                         f"atol={atol!r}")
    if rtol is not None:
        return (check_real("assert_close", "rtol", rtol, minimum=0),
                check_real("assert_close", "atol", atol, minimum=0))
    return _TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))


class _Mismatch(AssertionError):
    pass


def _fail(message, msg, path):
    if path:
        message += f"\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in path)}"
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise _Mismatch(message)


def _is_tensor_like(v):
    return isinstance(v, (Tensor, np.ndarray))


def _is_number(v):
    return isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, np.ndarray)


def _host(v):
    if isinstance(v, Tensor):
        return devices.to_device(v.detach()._data, devices.CPU).view(np.ndarray)
    return v


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path):
    kind = (bool if isinstance(actual, (bool, np.bool_)) else numbers.Integral
            if isinstance(actual, numbers.Integral) else numbers.Real)
    other = (bool if isinstance(expected, (bool, np.bool_)) else numbers.Integral
             if isinstance(expected, numbers.Integral) else numbers.Real)
    if kind is not other and check_dtype:
        _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", msg, path)
    float_like = numbers.Real in (kind, other)
    rtol, atol = _tolerances(np.float64 if float_like else np.int64, rtol, atol)
    a, e = complex(actual), complex(expected)
    if a == e or (equal_nan and math.isnan(abs(a)) and math.isnan(abs(e))):
        return
    diff = abs(a - e)
    if math.isfinite(diff) and diff <= atol + rtol * abs(e):
        return
    relative = diff / abs(e) if e != 0 else math.inf
    _fail(f"Scalars are not {'close' if float_like else 'equal'}!\n\nExpected {expected} but got "
          f"{actual}.\nAbsolute difference: {diff}{_allowed(atol, float_like)}\n"
          f"Relative difference: {relative}{_allowed(rtol, float_like)}", msg, path)


def _allowed(tolerance, shown):
    return f" (up to {tolerance} allowed)" if shown else ""


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path):
    if check_device and isinstance(actual, Tensor) and actual.device != expected.device:
        _fail(f"The values for attribute 'device' do not match: {actual.device} != "
              f"{expected.device}.", msg, path)
    if actual.shape != expected.shape:
        _fail(f"The values for attribute 'shape' do not match: {tuple(actual.shape)} != "
              f"{tuple(expected.shape)}.", msg, path)
    if check_dtype and actual.dtype != expected.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != "
              f"{expected.dtype}.", msg, path)
    a, e = _host(actual), _host(expected)
    dtype = np.promote_types(a.dtype, e.dtype)
    # of two dtypes (check_dtype=False), the looser tolerances, as PyTorch's
    rtol, atol = (max(pair) for pair in zip(*(_tolerances(d, rtol, atol) for d in (a.dtype, e.dtype))))
    if dtype.kind == "b":
        dtype = np.dtype(np.int64)
    a, e = a.astype(np.float64 if dtype.kind == "f" else np.int64), \
        e.astype(np.float64 if dtype.kind == "f" else np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e).astype(np.float64)
        close = (a == e) | (np.isfinite(diff) & (diff <= atol + rtol * np.abs(e)))
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return
    if a.ndim == 0:  # a 0-d tensor reads as a number, as in PyTorch's message
        relative = float(diff) / abs(float(e)) if e != 0 else math.inf
        shown = dtype.kind == "f"
        _fail(f"Scalars are not {'close' if shown else 'equal'}!\n\nExpected {e.item()} but got "
              f"{a.item()}.\nAbsolute difference: {diff.item() if shown else int(diff)}"
              f"{_allowed(atol, shown)}\nRelative difference: {relative}{_allowed(rtol, shown)}",
              msg, path)
    bad = int((~close).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(e != 0, diff / np.abs(e).astype(np.float64), np.where(diff == 0, 0.0, np.inf))
    shown = dtype.kind == "f"

    def worst(values):  # (value, where) of the largest, NaN counting as the largest
        k = int(np.argmax(np.where(np.isnan(values), np.inf, values)))
        where = np.unravel_index(k, values.shape)
        at = f" at index {tuple(int(i) for i in where)}" if values.ndim else ""
        return values.reshape(-1)[k], at

    greatest_abs, at_abs = worst(diff)
    greatest_rel, at_rel = worst(relative)
    greatest_abs = float(greatest_abs) if shown else int(greatest_abs)
    _fail(f"Tensor-likes are not {'close' if shown else 'equal'}!\n\nMismatched elements: {bad} / "
          f"{close.size} ({100 * bad / close.size:.1f}%)\nGreatest absolute difference: "
          f"{greatest_abs}{at_abs}{_allowed(atol, shown)}\nGreatest relative difference: "
          f"{float(greatest_rel)}{at_rel}{_allowed(rtol, shown)}", msg, path)


def _compare(actual, expected, path, options):
    if actual is None or expected is None:  # None matches only None
        if actual is not None or expected is not None:
            _fail(f"Only one of the inputs is None: actual is {type(actual).__name__}, expected "
                  f"is {type(expected).__name__}.", options["msg"], path)
        return
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        if type(actual) is not type(expected) and not (
                options["allow_subclasses"] and (isinstance(actual, type(expected)) or
                                                 isinstance(expected, type(actual)))):
            raise TypeError(f"assert_close: cannot compare a {type(actual).__name__} with a "
                            f"{type(expected).__name__}; convert one (minifw.as_tensor, .numpy())")
        return _compare_tensors(actual, expected, options["rtol"], options["atol"],
                                options["equal_nan"], options["check_device"],
                                options["check_dtype"], options["msg"], path)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, options["rtol"], options["atol"],
                                options["equal_nan"], options["check_dtype"], options["msg"], path)
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(map(repr, set(expected) - set(actual)))}\nExtra keys in the actual "
                  f"mapping: {sorted(map(repr, set(actual) - set(expected)))}", options["msg"], path)
        for key in expected:
            _compare(actual[key], expected[key], path + [key], options)
        return
    sequence = (collections.abc.Sequence,)
    if isinstance(actual, sequence) and isinstance(expected, sequence) and \
            not isinstance(actual, (str, bytes)) and not isinstance(expected, (str, bytes)):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                  options["msg"], path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + [i], options)
        return
    raise TypeError(f"assert_close: cannot compare inputs of type {type(actual).__name__} and "
                    f"{type(expected).__name__}" + (f" (item {''.join(f'[{p!r}]' for p in path)})"
                                                    if path else ""))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless `actual` and `expected` are close: for every element,
    |actual - expected| <= atol + rtol * |expected|, with the defaults of the dtype (float32:
    rtol 1.3e-6, atol 1e-5; float64: 1e-7 and 1e-7; integers and bools: exact) unless both
    are given. Tensors must also agree in shape, and in device and dtype unless those checks
    are off; NaNs are equal only with equal_nan=True. Sequences and mappings are compared
    item by item. `msg` (a string, or a callable given the default message) replaces the
    message. `check_layout` and `check_stride` are accepted: minifw's tensors are dense and
    contiguous."""
    for name, value in (("allow_subclasses", allow_subclasses), ("equal_nan", equal_nan),
                        ("check_device", check_device), ("check_dtype", check_dtype),
                        ("check_layout", check_layout), ("check_stride", check_stride)):
        check_bool("assert_close", name, value)
    if msg is not None and not isinstance(msg, str) and not callable(msg):
        raise TypeError(f"assert_close: msg must be a string or a callable, got {type(msg).__name__}")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, msg=msg)
    try:
        _compare(actual, expected, [], options)
    except _Mismatch as e:
        raise AssertionError(str(e)) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in PyTorch (use assert_close): the same comparison, NaNs equal by default,
    with the older, looser default tolerances (float32: rtol 1e-4, atol 1e-5; float64: 1e-5
    and 1e-8; the looser of the two inputs' dtypes); a number or list is made a tensor first
    (`expected` in `actual`'s dtype)."""
    import warnings
    warnings.warn("assert_allclose is deprecated: use minifw.testing.assert_close",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype, device=actual.device)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(np.dtype(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = (max(values) for values in zip(*pairs))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values drawn uniformly from [low, high) (floats: [-9, 9) by
    default; integers [-9, 10); bools either value), from minifw's global generator.
    exclude_zero replaces zeros by a small value (the dtype's tiny, or 1 for integers).
    `noncontiguous` and `memory_format` are accepted: minifw's tensors are contiguous."""
    from . import random as _random
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    d = _dtype_arg(dtype, "make_tensor")
    rng = _random._numpy_rng(None)
    if d.kind == "b":
        values = rng.integers(0, 2, shape).astype(bool)
    elif d.kind in "iu":
        lo = -9 if low is None else math.ceil(check_real("make_tensor", "low", low))
        hi = 10 if high is None else math.ceil(check_real("make_tensor", "high", high))
        if lo >= hi:
            raise ValueError(f"make_tensor: low must be below high, got low={low} and high={high}")
        values = rng.integers(lo, hi, shape).astype(d)
        if exclude_zero:
            values[values == 0] = 1
    else:
        lo = -9.0 if low is None else check_real("make_tensor", "low", low)
        hi = 9.0 if high is None else check_real("make_tensor", "high", high)
        if lo > hi:
            raise ValueError(f"make_tensor: low must not exceed high, got low={low} and high={high}")
        values = rng.uniform(lo, hi, shape).astype(d)
        if exclude_zero:
            values[values == 0] = np.finfo(d).tiny
    out = tensor(values, dtype=d, device=device)
    return out.requires_grad_(True) if requires_grad else out
