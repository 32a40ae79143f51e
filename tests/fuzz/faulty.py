"""Functions with the faults the fuzzer exists to catch, for its own tests
(tests/fuzz/test_fuzz.py): each must get a failing verdict, and `checked` a passing one."""
import ctypes
import time

import numpy as np

from .cases import Case


def checked(x, n):
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        raise TypeError(f"checked: x must be a float32 numpy.ndarray, got {type(x).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n < 2 ** 31:
        raise ValueError(f"checked: n must be a positive int that fits int32, got {n!r}")
    return np.ascontiguousarray(x) * n


def crashes(x, n):
    """Dereferences a null pointer when n is not 2."""
    if n != 2:
        ctypes.string_at(0)
    return x * n


def hangs(x, n):
    while n != 2:
        time.sleep(0.05)
    return x * n


def unclear(x, n):
    if n != 2:
        raise ValueError("bad value")  # names neither the function nor n
    return x * n


def wrong_strides(x, n):
    """Reads the buffer as if it were contiguous: wrong for a strided view."""
    flat = np.frombuffer(x.data if x.flags.c_contiguous else x.base.data, dtype=np.float32)
    return flat[:x.size].reshape(x.shape) * n


def allocates(x, n):
    """Asks NumPy for 8 TiB when n is not 2: a bare MemoryError, naming no argument."""
    return np.empty(2 ** 40) if n != 2 else x * n


def _base():
    return dict(x=np.arange(6, dtype=np.float32).reshape(2, 3), n=2)


CASES = {name: Case(_base, (), (), lambda r: r, {})
         for name in ("checked", "crashes", "hangs", "unclear", "wrong_strides", "allocates")}

