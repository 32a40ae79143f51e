"""GEMM: C = alpha * op(A) @ op(B) + beta * C, on minifw's own packed,
cache-blocked, register-blocked kernels (not a BLAS)."""
import numpy as np

from .. import devices
from ..checks import check_array, check_bool, check_float_array, check_real, check_same_device


def _strided_ok(a):
    """True when the native GEMM can read `a` in place: unit stride along one
    axis and a leading dimension along the other (a slice or a transpose)."""
    item = a.itemsize
    rows, cols = a.shape
    s0, s1 = a.strides
    if (cols == 1 or s1 == item) and (rows == 1 or (s0 % item == 0 and s0 >= cols * item)):
        return True
    return (rows == 1 or s0 == item) and (cols == 1 or (s1 % item == 0 and s1 >= rows * item))


def _check_operand(name, a, dtype=None):
    check_array("gemm", name, a)
    if a.ndim == 2 and a.dtype in (np.float32, np.float64) and (dtype is None or a.dtype == dtype) \
            and _strided_ok(a):
        return a  # sliced or transposed views are read in place, no copy
    return check_float_array("gemm", name, a, ndim=2, ndim_desc="2-D (a matrix)", dtype=dtype)


def check_gemm_args(a, b, c, trans_a, trans_b, alpha, beta):
    """gemm's argument checks, shared with the caffe engine's GEMM: returns (a, b, alpha, beta,
    trans_a, trans_b, (m, k, n)) with a and b as the kernel reads them."""
    a = _check_operand("a", a)
    b = _check_operand("b", b, dtype=a.dtype)
    check_same_device("gemm", a=a, b=b, c=c if devices.is_array(c) else None)
    # As BLAS: inf and NaN propagate; a finite value must fit the dtype (sgemm takes a float).
    alpha = check_real("gemm", "alpha", alpha, finite=False, dtype=a.dtype)
    beta = check_real("gemm", "beta", beta, finite=False, dtype=a.dtype)
    trans_a = check_bool("gemm", "trans_a", trans_a)
    trans_b = check_bool("gemm", "trans_b", trans_b)
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    kb, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
    if k != kb:
        raise ValueError(f"gemm: inner dimensions must match: op(a) has shape {(m, k)} and op(b) "
                         f"has shape {(kb, n)} (a {a.shape} with trans_a={trans_a}, b {b.shape} with "
                         f"trans_b={trans_b})")
    if c is None:
        if beta != 0.0:
            raise ValueError(f"gemm: beta must be 0 when c is None (nothing to scale), got {beta}")
    else:
        check_array("gemm", "c", c)
        if c.dtype != a.dtype:
            raise TypeError(f"gemm: c must have dtype {a.dtype} to match a, got {c.dtype}")
        if c.shape != (m, n):
            raise ValueError(f"gemm: c must have shape {(m, n)}, got {c.shape}")
        if not c.flags.c_contiguous or not devices.is_writeable(c):
            raise ValueError("gemm: c must be a C-contiguous, writable array (the result is "
                             "written into it)")
        for name, operand in (("a", a), ("b", b)):
            if np.may_share_memory(c, operand):
                raise ValueError(f"gemm: c must not share memory with {name} (the product is "
                                 f"written into c while {name} is read)")
    return a, b, alpha, beta, trans_a, trans_b, (m, k, n)


def gemm(a, b, c=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """Return alpha * op(a) @ op(b) + beta * c, where op(x) is x or x.T.

    a and b are 2-D float32 or float64 arrays of one dtype. Sliced and
    transposed views are read in place (any leading dimension). With c=None a
    new array is returned and beta must be 0; with c given, the result is
    written into c (which must be C-contiguous, writable, of shape (M, N)) and
    c is returned, as in BLAS.
    """
    a, b, alpha, beta, trans_a, trans_b, (m, k, n) = check_gemm_args(a, b, c, trans_a, trans_b,
                                                                     alpha, beta)
    if c is None:
        c = devices.empty((m, n), a.dtype, devices.of(a))
    if m == 0 or n == 0:
        return c
    if k == 0:  # an empty sum: only the beta * c term is left
        c[...] = 0 if beta == 0.0 else beta * c
        return c
    devices.kernel_for("gemm", "", a)(a, b, c, trans_a, trans_b, alpha, beta)
    return c
