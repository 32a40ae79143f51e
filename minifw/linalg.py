"""Linear algebra with torch.linalg's signatures: `torch.linalg.X` is `minifw.linalg.X`.

    L = minifw.linalg.cholesky(A @ A.mT + eye)     # A (..., n, n): every leading dim a batch
    x = minifw.linalg.solve(L, b)                   # b (..., n) or (..., n, k)
    n = minifw.linalg.matrix_norm(A, ord="nuc")

Every function takes float32 and float64 tensors on any device and works over the
leading (batch) dims. The factorizations run the device's own linear-algebra library
(numpy.linalg on "cpu" and "cudasim", cupy.linalg on "cuda") and are differentiable
through the Functions in minifw.functions.linalg; the rest (norms, cross, vecdot,
multi_dot, matrix_power) are compositions of Tensor ops, differentiable through those.
A matrix the function cannot handle (singular, not positive-definite) raises
LinAlgError, a RuntimeError as in PyTorch; wrong shapes, dtypes and orders raise
ValueError / TypeError naming the function and the argument.
"""
import collections
import math
import numbers

import numpy as np

from . import devices

from .checks import check_bool as _bool
from .checks import check_dim, check_dims
from .functions import linalg as _linalg
from .functions import normalization as _normalization
from .functions.linalg import LinAlgError
from .tensor import Tensor, eye, float32, float64, stack, where

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]

# PyTorch's result types: tuples whose fields also have names
SignLogAbsDet = collections.namedtuple("SignLogAbsDet", ["sign", "logabsdet"])
EigenDecomposition = collections.namedtuple("EigenDecomposition", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
LstsqResult = collections.namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])


# ------------------------------------------------------------------------------------------
# argument checks
# ------------------------------------------------------------------------------------------

def _float_tensor(fn, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if t.dtype not in (float32, float64):
        raise TypeError(f"{fn}: {name} must be a float32 or float64 tensor, got {t.dtype}")
    return t


def _matrices(fn, A, name="A", square=False):
    """A checked as a (batch of) matrices (..., m, n), square ones when `square`."""
    _float_tensor(fn, name, A)
    if A.ndim < 2:
        raise ValueError(f"{fn}: {name} must have at least 2 dims (..., rows, columns), got shape "
                         f"{tuple(A.shape)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{fn}: {name} must be a batch of square matrices (..., n, n), got "
                         f"{A.shape[-2]} x {A.shape[-1]} matrices (shape {tuple(A.shape)})")
    return A


def _batch_broadcast(fn, A, B, a_name="A", b_name="B"):
    try:
        return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of {a_name} {tuple(A.shape)} and {b_name} "
                         f"{tuple(B.shape)} do not broadcast") from None


def _same_dtype(fn, A, B, a_name="A", b_name="B"):
    if A.dtype != B.dtype:
        raise TypeError(f"{fn}: {a_name} and {b_name} must have one dtype, got {A.dtype} and "
                        f"{B.dtype}")


def _number(fn, name, v, *, allow_none=True):
    if v is None and allow_none:
        return None
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a real number{' or None' if allow_none else ''}, got "
                        f"{type(v).__name__} {v!r}")
    return float(v)


def _as_dtype(fn, x, dtype):
    if dtype is None:
        return x
    if dtype not in (float32, float64):
        raise TypeError(f"{fn}: dtype must be float32 or float64, got {dtype}")
    return x.to(dtype)


# ------------------------------------------------------------------------------------------
# inverse, determinant, solve
# ------------------------------------------------------------------------------------------

def inv(A):
    """The inverse of each square matrix of A (..., n, n); LinAlgError if one is singular."""
    return _linalg.Inverse.apply(_matrices("linalg.inv", A, square=True))


def det(A):
    """The determinant of each square matrix of A (..., n, n), shape (...). Its gradient
    (the cofactor matrix) is defined for singular matrices too."""
    return _linalg.Determinant.apply(_matrices("linalg.det", A, square=True))


def slogdet(A):
    """(sign, logabsdet): det(A) = sign * exp(logabsdet), without overflow for large n; a
    singular matrix gives sign 0 and logabsdet -inf. Only logabsdet carries a gradient."""
    sign, logabsdet = _linalg.SignLogDeterminant.apply(_matrices("linalg.slogdet", A, square=True))
    return SignLogAbsDet(sign, logabsdet)


def _is_vector_rhs(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D, or when it has exactly A's
    batch dims followed by n."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B (left=False), A (..., n, n) and B (..., n, k) or
    (..., n) (see PyTorch's rule for vectors), batch dims broadcast; LinAlgError if A is
    singular."""
    fn = "linalg.solve"
    _matrices(fn, A, square=True)
    _float_tensor(fn, "B", B)
    _same_dtype(fn, A, B)
    if not isinstance(left, bool):
        raise TypeError(f"{fn}: left must be a bool, got {left!r}")
    vector = _is_vector_rhs(A, B)
    if not left and vector:
        raise ValueError(f"{fn}: with left=False, B must be a batch of matrices (..., k, n), got "
                         f"shape {tuple(B.shape)}")
    if B.ndim == 0:
        raise ValueError(f"{fn}: B must have at least 1 dim, got a 0-d tensor")
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    rows = Bm.shape[-2] if left else Bm.shape[-1]
    if rows != n:
        raise ValueError(f"{fn}: A of shape {tuple(A.shape)} and B of shape {tuple(B.shape)} do not "
                         f"match: B needs {n} {'rows' if left else 'columns'}, got {rows}")
    _batch_broadcast(fn, A, Bm)
    if left:
        X = _linalg.Solve.apply(A, Bm)
    else:  # X A = B is A^T X^T = B^T
        X = _linalg.Solve.apply(A.mT, Bm.mT).mT
    return X.squeeze(-1) if vector else X


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (left=False: X A = B) for triangular A (..., n, n): only its upper
    (upper=True) or lower triangle is read, and with unitriangular its diagonal is taken
    as ones. B (..., n, k) must be a matrix; batch dims broadcast."""
    fn = "linalg.solve_triangular"
    _matrices(fn, A, square=True)
    _matrices(fn, B, name="B")
    _same_dtype(fn, A, B)
    for name, v in (("upper", upper), ("left", left), ("unitriangular", unitriangular)):
        if not isinstance(v, bool):
            raise TypeError(f"{fn}: {name} must be a bool, got {v!r}")
    n = A.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        raise ValueError(f"{fn}: A of shape {tuple(A.shape)} and B of shape {tuple(B.shape)} do not "
                         f"match: B needs {n} {'rows' if left else 'columns'}, got {rows}")
    _batch_broadcast(fn, A, B)
    # the other triangle masked away, so that neither the solve nor its gradient sees it
    if unitriangular:
        T = (A.triu(1) if upper else A.tril(-1)) + eye(n, dtype=A.dtype, device=A.device)
    else:
        T = A.triu() if upper else A.tril()
    if left:
        return _linalg.Solve.apply(T, B, fn=fn)
    return _linalg.Solve.apply(T.mT, B.mT, fn=fn).mT


# ------------------------------------------------------------------------------------------
# factorizations
# ------------------------------------------------------------------------------------------

def cholesky(A, *, upper=False):
    """The lower triangular L with A = L L^T (upper=True: the upper U = L^T, A = U^T U) of
    each symmetric positive-definite matrix of A; only A's lower triangle is read.
    LinAlgError if a matrix is not positive-definite."""
    fn = "linalg.cholesky"
    _matrices(fn, A, square=True)
    if not isinstance(upper, bool):
        raise TypeError(f"{fn}: upper must be a bool, got {upper!r}")
    L = _linalg.Cholesky.apply(A)
    return L.mT if upper else L


def _uplo(fn, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"{fn}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


def eigh(A, UPLO="L"):
    """(eigenvalues, eigenvectors) of each symmetric matrix of A, read from its lower ('L') or
    upper ('U') triangle: eigenvalues ascending, (..., n); eigenvectors the columns of an
    orthogonal (..., n, n). Each eigenvector's sign is the library's choice; the gradient
    through the eigenvectors needs distinct eigenvalues."""
    fn = "linalg.eigh"
    w, V = _linalg.SymmetricEigen.apply(_matrices(fn, A, square=True), uplo=_uplo(fn, UPLO))
    return EigenDecomposition(w, V)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of each symmetric matrix of A; differentiable everywhere."""
    fn = "linalg.eigvalsh"
    w, _ = _linalg.SymmetricEigen.apply(_matrices(fn, A, square=True), uplo=_uplo(fn, UPLO))
    return w


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh for each matrix of A (..., m, n): S descending,
    (..., k) with k = min(m, n); U (..., m, m) and Vh (..., n, n), or (..., m, k) and
    (..., k, n) with full_matrices=False. The signs of singular vectors are the library's
    choice; the gradient through U and Vh needs distinct singular values (and, with
    full_matrices, ignores the columns of U / rows of Vh past k)."""
    fn = "linalg.svd"
    _matrices(fn, A)
    if not isinstance(full_matrices, bool):
        raise TypeError(f"{fn}: full_matrices must be a bool, got {full_matrices!r}")
    if driver is not None:
        raise ValueError(f"{fn}: driver is a CUDA (cuSOLVER) choice; give None, got {driver!r}")
    U, S, Vh = _linalg.SingularValueDecomposition.apply(A, full_matrices=full_matrices)
    return SVDResult(U, S, Vh)


def svdvals(A, *, driver=None):
    """The singular values of each matrix of A, descending, (..., min(m, n));
    differentiable everywhere."""
    fn = "linalg.svdvals"
    _matrices(fn, A)
    if driver is not None:
        raise ValueError(f"{fn}: driver is a CUDA (cuSOLVER) choice; give None, got {driver!r}")
    return _linalg.SingularValues.apply(A)


_QR_MODES = ("reduced", "complete", "r")


def qr(A, mode="reduced"):
    """(Q, R) with A = Q R for each matrix of A (..., m, n): mode 'reduced' gives Q
    (..., m, k) and R (..., k, n), k = min(m, n); 'complete' Q (..., m, m) and R (..., m, n);
    'r' only R (Q is an empty tensor). Differentiable except with 'r', and with 'complete'
    when m > n."""
    fn = "linalg.qr"
    _matrices(fn, A)
    if mode not in _QR_MODES:
        raise ValueError(f"{fn}: mode must be one of {_QR_MODES}, got {mode!r}")
    Q, R = _linalg.QRDecomposition.apply(A, mode=mode)
    return QRResult(Q, R)


# ------------------------------------------------------------------------------------------
# pseudo-inverse, least squares, rank
# ------------------------------------------------------------------------------------------

def _tolerances(fn, atol, rtol, rcond=None):
    atol, rtol = _number(fn, "atol", atol), _number(fn, "rtol", rtol)
    if rcond is not None:
        if rtol is not None:
            raise TypeError(f"{fn}: give rtol or the older rcond, not both")
        rtol = _number(fn, "rcond", rcond)
    for name, v in (("atol", atol), ("rtol", rtol)):
        if v is not None and (v < 0 or math.isnan(v)):
            raise ValueError(f"{fn}: {name} must be >= 0, got {v}")
    return atol, rtol


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse (..., n, m) of each matrix of A (..., m, n), singular
    values at most max(atol, rtol * the largest) counted as zero (rtol defaults to
    eps * max(m, n) unless atol > 0 is given; the older rcond, also positional, is rtol);
    hermitian=True uses the eigendecomposition of a symmetric A. The gradient assumes the
    rank does not change near A."""
    fn = "linalg.pinv"
    _matrices(fn, A, square=hermitian)
    atol, rtol = _tolerances(fn, atol, rtol, rcond)
    return _linalg.PseudoInverse.apply(A, atol=atol, rtol=rtol, hermitian=bool(hermitian))


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X minimizing ||A X - B|| for A (..., m, n) and B (..., m, k)
    or (..., m), as (solution, residuals, rank, singular_values). The solution is the
    minimum-norm one for every driver; the other fields are filled as each driver fills
    them in PyTorch: residuals (||A X - B||^2 per column) for m > n with every A of full
    rank, except with 'gelsy' (the default); rank except with 'gels'; singular_values with
    'gelsd' and 'gelss'; otherwise they are empty."""
    fn = "linalg.lstsq"
    _matrices(fn, A)
    _float_tensor(fn, "B", B)
    _same_dtype(fn, A, B)
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise ValueError(f"{fn}: driver must be one of {_LSTSQ_DRIVERS} or None, got {driver!r}")
    rtol = _number(fn, "rcond", rcond)
    if rtol is not None and not rtol >= 0:
        raise ValueError(f"{fn}: rcond must be >= 0 or None, got {rtol}")
    vector = _is_vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim < 2 or Bm.shape[-2] != A.shape[-2]:
        raise ValueError(f"{fn}: B must have as many rows as A ({A.shape[-2]}), got A of shape "
                         f"{tuple(A.shape)} and B of shape {tuple(B.shape)}")
    _batch_broadcast(fn, A, Bm)
    X = _linalg.LeastSquares.apply(A, Bm, rcond=rtol)
    empty = A.new_zeros((0,))
    S = svdvals(A.detach())
    rank = _count_above(S, None, rtol, A.shape)
    residuals = empty
    if driver != "gelsy" and A.shape[-2] > A.shape[-1] and bool((rank == A.shape[-1]).all()):
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    return LstsqResult(X.squeeze(-1) if vector else X, residuals,
                       empty.long() if driver == "gels" else rank,
                       S if driver in ("gelsd", "gelss") else empty)


def _count_above(S, atol, rtol, shape):
    """How many of the (descending) singular values S (..., k) exceed the tolerance, int64."""
    if S.shape[-1] == 0:
        return S.new_zeros(S.shape[:-1]).long()
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(S.dtype).eps) * max(shape[-2:])
    tol = (S[..., :1] * rtol).clamp_min(atol or 0.0)
    return (S > tol).sum(-1)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values of each matrix of A above max(atol, rtol * the largest),
    int64 (...); tol (older, also positional) is an absolute tolerance; hermitian=True reads
    the eigenvalues of a symmetric A instead."""
    fn = "linalg.matrix_rank"
    _matrices(fn, A, square=hermitian)
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError(f"{fn}: give tol or atol/rtol, not both")
        atol, rtol = _number(fn, "tol", tol), 0.0
    atol, rtol = _tolerances(fn, atol, rtol)
    A = A.detach()
    S = eigvalsh(A).abs().sort(-1, descending=True)[0] if hermitian else svdvals(A)
    return _count_above(S, atol, rtol, A.shape)


def matrix_power(A, n):
    """A multiplied by itself n times (n < 0: inv(A) |n| times; n = 0: the identity), by
    repeated squaring."""
    fn = "linalg.matrix_power"
    _matrices(fn, A, square=True)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{fn}: n must be an int, got {type(n).__name__} {n!r}")
    n = int(n)
    if n == 0:  # the identity, still connected to A (with a zero gradient), as PyTorch's
        identity = eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(*A.shape)
        return where(A.new_ones(A.shape).bool(), identity, A)
    base = inv(A) if n < 0 else A
    result, bits = None, abs(n)
    while True:  # the binary digits of |n|, least significant first
        if bits & 1:
            result = base if result is None else result @ base
        bits >>= 1
        if not bits:
            return result.clone() if result is A else result  # a new tensor, never A itself
        base = base @ base


def cond(A, p=None):
    """The condition number of each matrix of A in the norm p (None or 2: the ratio of the
    largest to the smallest singular value; 'fro', 'nuc', inf, -inf, 1, -1: norm(A) norm(inv A))."""
    fn = "linalg.cond"
    _matrices(fn, A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        S = svdvals(A)
        ratio = S[..., 0] / S[..., -1]
        return ratio if p in (None, 2) else 1.0 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


# ------------------------------------------------------------------------------------------
# norms
# ------------------------------------------------------------------------------------------

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm of x over `dim` (all elements when None) as vectors: (sum |x|^ord)^(1/ord)
    for any real ord, max |x| for inf, min |x| for -inf, the count of non-zeros for 0."""
    fn = "linalg.vector_norm"
    _float_tensor(fn, "x", x)
    ord = _number(fn, "ord", ord, allow_none=False)
    if math.isnan(ord):
        raise ValueError(f"{fn}: ord must be a number, got nan")
    axes = check_dims(fn, dim, x.ndim) if dim is not None and not (
        isinstance(dim, (tuple, list)) and not dim) else None
    if x.ndim == 0:
        axes = None
    reduced = x.numel() if axes is None else math.prod(x.shape[a] for a in axes)
    if reduced == 0 and (ord < 0 or math.isinf(ord)):
        raise ValueError(f"{fn}: the {ord} norm of an empty set of elements is undefined (its "
                         f"reduction has no identity); got x of shape {tuple(x.shape)}, dim {dim!r}")
    x = _as_dtype(fn, x, dtype)
    if keepdim and axes is None:  # every dim reduced: kept as ones, as PyTorch
        axes = tuple(range(x.ndim))
    return _normalization.VectorNorm.apply(x, p=ord, axes=axes, keepdim=bool(keepdim))


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _matrix_ord(fn, ord):
    known = isinstance(ord, str) or (isinstance(ord, numbers.Real) and not isinstance(ord, bool))
    if not known or ord not in _MATRIX_ORDS:
        raise ValueError(f"{fn}: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf; got {ord!r}")
    return ord


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ord-norm of the matrices spanned by the two dims `dim` of A: 'fro' (Frobenius),
    'nuc' (sum of singular values), 2 / -2 (largest / smallest singular value), 1 / -1
    (largest / smallest column sum of |A|), inf / -inf (largest / smallest row sum)."""
    fn = "linalg.matrix_norm"
    _float_tensor(fn, "A", A)
    ord = _matrix_ord(fn, ord)
    if A.ndim < 2:
        raise ValueError(f"{fn}: A must have at least 2 dims, got shape {tuple(A.shape)}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ValueError(f"{fn}: dim must be a pair of dims, got {dim!r}")
    rows, cols = check_dims(fn, dim, A.ndim)
    A = _as_dtype(fn, A, dtype)
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        others = [d for d in range(A.ndim) if d not in (rows, cols)]
        S = svdvals(A.permute(*others, rows, cols))
        out = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
    else:
        if A.shape[rows] == 0 or A.shape[cols] == 0:
            raise ValueError(f"{fn}: the {ord} norm of an empty matrix is undefined; got A of shape "
                             f"{tuple(A.shape)}")
        # 1: sum over the rows, extreme over the columns; inf: the other way round
        summed, extreme = (rows, cols) if abs(ord) == 1 else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = sums.amax(extreme, keepdim=True) if ord > 0 else sums.amin(extreme, keepdim=True)
        return out if keepdim else out.squeeze(max(rows, cols)).squeeze(min(rows, cols))
    if keepdim:
        out = out.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols))
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """vector_norm or matrix_norm by `dim`: one dim is a vector norm, two a matrix norm;
    without dim, a 1-D A (or any A when ord is None, as one flattened vector) gets the
    vector norm and a 2-D A the matrix norm."""
    fn = "linalg.norm"
    _float_tensor(fn, "A", A)
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dims) == 1:
            if isinstance(ord, str):
                raise ValueError(f"{fn}: ord {ord!r} is a matrix norm; a vector norm (one dim) "
                                 f"takes a number")
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise ValueError(f"{fn}: dim must be one dim or a pair of dims, got {dim!r}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return norm(A, ord, 0, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (0, 1), keepdim, dtype=dtype)
    raise ValueError(f"{fn}: with ord and no dim, A must be 1-D or 2-D, got {A.ndim}-D (shape "
                     f"{tuple(A.shape)}); give dim")


# ------------------------------------------------------------------------------------------
# products and views
# ------------------------------------------------------------------------------------------

def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along `dim` of input and other (same number of dims,
    the others broadcast)."""
    fn = "linalg.cross"
    _float_tensor(fn, "input", input)
    _float_tensor(fn, "other", other)
    _same_dtype(fn, input, other, "input", "other")
    if input.ndim != other.ndim:
        raise ValueError(f"{fn}: input and other must have the same number of dims, got shapes "
                         f"{tuple(input.shape)} and {tuple(other.shape)}")
    d = check_dim(fn, dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ValueError(f"{fn}: dim {dim} must have size 3 in both inputs, got {input.shape[d]} "
                         f"and {other.shape[d]}")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise ValueError(f"{fn}: the shapes {tuple(input.shape)} and {tuple(other.shape)} do not "
                         f"broadcast") from None
    a, b = input.expand(*shape), other.expand(*shape)
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def vecdot(x, y, *, dim=-1):
    """The dot product of x and y (broadcast) along `dim`."""
    fn = "linalg.vecdot"
    _float_tensor(fn, "x", x)
    _float_tensor(fn, "y", y)
    _same_dtype(fn, x, y, "x", "y")
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ValueError(f"{fn}: the shapes {tuple(x.shape)} and {tuple(y.shape)} do not "
                         f"broadcast") from None
    d = check_dim(fn, dim, len(shape))
    return (x * y).sum(d)


def matmul(input, other):
    """The matrix product, as minifw.Tensor.__matmul__ (torch.linalg.matmul)."""
    return input @ other


def _chain_order(sizes):
    """The cheapest parenthesization of a matrix chain with dims sizes[0] x sizes[1] x ...:
    split[i][j] is where the product of matrices i..j splits (the classic O(n^3) dynamic
    program over the multiply-add counts)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices, multiplied in the order that needs the fewest
    operations; the first may be a 1-D row vector and the last a 1-D column vector (their
    dim is dropped from the result)."""
    fn = "linalg.multi_dot"
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ValueError(f"{fn}: expected at least 2 tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        _float_tensor(fn, f"tensors[{i}]", t)
        first_or_last = i in (0, len(tensors) - 1)
        if not (t.ndim == 2 or (first_or_last and t.ndim == 1)):
            raise ValueError(f"{fn}: tensors[{i}] must be 2-D{' or 1-D' if first_or_last else ''}, "
                             f"got shape {tuple(t.shape)}")
    _same_dtype(fn, tensors[0], tensors[-1], "tensors[0]", f"tensors[{len(tensors) - 1}]")
    row, column = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = ([tensors[0].unsqueeze(0)] if row else [tensors[0]]) + tensors[1:-1] + \
        ([tensors[-1].unsqueeze(1)] if column else [tensors[-1]])
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(f"{fn}: tensors[{i}] of shape {tuple(tensors[i].shape)} and "
                             f"tensors[{i + 1}] of shape {tuple(tensors[i + 1].shape)} cannot be "
                             f"multiplied ({mats[i].shape[1]} != {mats[i + 1].shape[0]})")
        if mats[i].dtype != mats[i + 1].dtype:
            raise TypeError(f"{fn}: all tensors must have one dtype, got {mats[i].dtype} and "
                            f"{mats[i + 1].dtype}")
    split = _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])

    def product(i, j):
        return mats[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

    out = product(0, len(mats) - 1)
    if row:
        out = out.squeeze(0)
    if column:
        out = out.squeeze(-1)
    return out


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The `offset` diagonal of the matrices spanned by dim1 and dim2, as A's last dim (a
    copy; its gradient goes back onto that diagonal)."""
    fn = "linalg.diagonal"
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}: A must be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise ValueError(f"{fn}: A must have at least 2 dims, got shape {tuple(A.shape)}")
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, numbers.Integral):
        raise TypeError(f"{fn}: offset must be an int, got {offset!r}")
    d1, d2 = check_dim(fn, dim1, A.ndim, "dim1"), check_dim(fn, dim2, A.ndim, "dim2")
    if d1 == d2:
        raise ValueError(f"{fn}: dim1 and dim2 must be different dims, both are {d1}")
    return _linalg.MatrixDiagonal.apply(A, offset=int(offset), dim1=d1, dim2=d2)


# ---- the torch-namespace forms and Tensor methods ------------------------------------------------
#
# torch.det, torch.inverse, torch.logdet, torch.slogdet, torch.pinverse and torch.matrix_power
# (and the Tensor methods of those names) are these functions. minifw.tensor cannot import this
# module (it imports minifw.tensor), so the methods are attached to Tensor here; importing
# minifw imports this module.

def logdet(A):
    """log det(A): -inf where det(A) = 0, NaN where it is negative (as torch.logdet)."""
    sign, logabsdet = slogdet(A)
    return where(sign < 0, math.nan, logabsdet)


def pinverse(A, rcond=1e-15):
    """The pseudo-inverse with singular values below rcond times the largest dropped (as
    torch.pinverse; linalg.pinv's rtol)."""
    return pinv(A, rtol=rcond)


Tensor.det = det
Tensor._nuclear_norm = lambda self, dim, keepdim: matrix_norm(self, "nuc", dim, keepdim)  # norm(p="nuc")
Tensor.inverse = inv
Tensor.logdet = logdet
Tensor.slogdet = slogdet
Tensor.pinverse = pinverse
Tensor.matrix_power = matrix_power


# ---- the torch.* (and Tensor) forms PyTorch keeps beside torch.linalg ------------------------

SVDResultV = collections.namedtuple("SVDResultV", "U S V")
TriangularSolveResult = collections.namedtuple("TriangularSolveResult", "solution cloned_coefficient")


def _cholesky_method(self, upper=False):
    return cholesky(self, upper=_bool("cholesky", "upper", upper))


def _cholesky_solve(self, input2, upper=False):
    """x with A x = self, A = L L^T given its Cholesky factor input2 (upper: U^T U)."""
    L = input2.mT if _bool("cholesky_solve", "upper", upper) else input2
    y = solve_triangular(L, self, upper=False)
    return solve_triangular(L.mT, y, upper=True)


def _cholesky_inverse(self, upper=False):
    """The inverse of A = L L^T (upper: U^T U) given its Cholesky factor (this tensor)."""
    if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
        raise ValueError(f"cholesky_inverse: input must be a (batch of) square matrices, got "
                         f"shape {self.shape}")
    n = self.shape[-1]
    identity = eye(n, dtype=self.dtype, device=self.device).expand(*self.shape)
    return _cholesky_solve(identity, self, upper)


def _qr_method(self, some=True):
    return qr(self, mode="reduced" if _bool("qr", "some", some) else "complete")


def _svd_method(self, some=True, compute_uv=True):
    """(U, S, V) with self = U diag(S) V^T (V, not linalg.svd's Vh); with compute_uv=False
    U and V are zeros."""
    some, compute_uv = _bool("svd", "some", some), _bool("svd", "compute_uv", compute_uv)
    if not compute_uv:
        from .tensor import zeros
        m, n = self.shape[-2:]
        S = svdvals(self)
        lead = self.shape[:-2]
        return SVDResultV(zeros(*lead, m, m, dtype=self.dtype, device=self.device), S,
                          zeros(*lead, n, n, dtype=self.dtype, device=self.device))
    U, S, Vh = svd(self, full_matrices=not some)
    return SVDResultV(U, S, Vh.mT)


def _triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """(solution, cloned_coefficient): X with op(A) X = self, op(A) A or A^T, A triangular."""
    fn = "triangular_solve"
    upper, transpose = _bool(fn, "upper", upper), _bool(fn, "transpose", transpose)
    M = A.mT if transpose else A
    X = solve_triangular(M, self, upper=upper != transpose,
                         unitriangular=_bool(fn, "unitriangular", unitriangular))
    return TriangularSolveResult(X, A.clone())


Tensor.cholesky = _cholesky_method
Tensor.cholesky_solve = _cholesky_solve
Tensor.cholesky_inverse = _cholesky_inverse
Tensor.qr = _qr_method
Tensor.svd = _svd_method
Tensor.triangular_solve = _triangular_solve


# ---- the LU factorization -----------------------------------------------------------------

LUFactorResult = collections.namedtuple("LUFactorResult", ["LU", "pivots"])
LUFactorExResult = collections.namedtuple("LUFactorExResult", ["LU", "pivots", "info"])
LUResult = collections.namedtuple("LUResult", ["P", "L", "U"])


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info) of each square matrix of A by partial pivoting (LAPACK's getrf):
    L (unit diagonal) below the diagonal of LU, U on and above it, pivots 1-based int32 row
    swaps; info (int32) is 0, or k > 0 where U[k-1, k-1] is exactly zero (A singular).
    Differentiable in A where U is invertible; rectangular matrices are not supported."""
    fn = "linalg.lu_factor_ex"
    _matrices(fn, A, square=True)
    if not _bool(fn, "pivot", pivot):
        raise ValueError(f"{fn}: LU without pivoting is not supported (pivot must be True), as on "
                         f"PyTorch's CPU")
    LU, pivots = _linalg.LUFactorization.apply(A)
    diagonal = devices.to_device(LU.detach()._data, devices.CPU).diagonal(0, -2, -1)
    zero = diagonal == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    if _bool(fn, "check_errors", check_errors) and info.any():
        raise LinAlgError(f"{fn}: U[{int(info.max()) - 1},{int(info.max()) - 1}] is zero: the "
                          f"matrix is singular")
    return LUFactorExResult(LU, pivots, Tensor._make(devices.to_device(info, LU.device)))


def lu_factor(A, *, pivot=True):
    """(LU, pivots) as lu_factor_ex; LinAlgError where a matrix is singular (an exact zero on
    U's diagonal), as torch.linalg.lu_factor."""
    fn = "linalg.lu_factor"
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    bad = devices.to_device(info._data, devices.CPU)
    if bad.any():
        k = int(bad.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
        raise LinAlgError(f"{fn}: U[{k - 1},{k - 1}] is zero, so lu_solve would divide by zero; "
                          f"use linalg.lu_factor_ex or linalg.lu for a singular matrix")
    return LUFactorResult(LU, pivots)


def _permutation(fn, pivots, n):
    if not isinstance(pivots, Tensor) or pivots.dtype.kind not in "iu":
        raise TypeError(f"{fn}: pivots must be an integer tensor, got "
                        f"{getattr(pivots, 'dtype', type(pivots).__name__)}")
    host = devices.to_device(pivots._data, devices.CPU)
    if host.shape[-1:] != (n,) or (host.size and (host.min() < 1 or host.max() > n)):
        raise ValueError(f"{fn}: pivots must be (..., {n}) with values in [1, {n}], got shape "
                         f"{tuple(pivots.shape)}")
    return _linalg.lu_permutation(host)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from lu_factor's (LU, pivots): P a permutation matrix, L
    lower triangular with a unit diagonal, U upper triangular. Differentiable in LU_data."""
    fn = "lu_unpack"
    _matrices(fn, LU_data, name="LU_data", square=True)
    n = LU_data.shape[-1]
    P = L = U = None
    if _bool(fn, "unpack_pivots", unpack_pivots):
        perm = _permutation(fn, LU_pivots, n)
        matrix = np.zeros(perm.shape + (n,), dtype=LU_data.dtype)
        # A[perm] = L U, so A = P L U with P[perm[i], i] = 1
        np.put_along_axis(matrix, perm[..., None, :], 1.0, axis=-2)
        P = Tensor._make(devices.to_device(matrix, LU_data.device))
    if _bool(fn, "unpack_data", unpack_data):
        L = LU_data.tril(-1) + eye(n, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data.triu()
    return LUResult(P, L, U)


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U, as torch.linalg.lu (square matrices)."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return lu_unpack(LU, pivots)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (left=False: X A = B; adjoint: A^T in A's place) from lu_factor's
    (LU, pivots); differentiable in LU and B."""
    fn = "linalg.lu_solve"
    _matrices(fn, LU, name="LU", square=True)
    _matrices(fn, B, name="B")
    _same_dtype(fn, LU, B)
    left, adjoint = _bool(fn, "left", left), _bool(fn, "adjoint", adjoint)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    n = LU.shape[-1]
    if B.shape[-2] != n:
        raise ValueError(f"{fn}: B needs {n} rows for LU of shape {tuple(LU.shape)}, got shape "
                         f"{tuple(B.shape)}")
    perm = Tensor._make(devices.to_device(_permutation(fn, pivots, n).astype(np.int64), LU.device))
    if not adjoint:  # A = P L U: X = U^-1 L^-1 (P^T B), P^T B = B[perm]
        rows = B.expand(*perm.shape[:-1], *B.shape[-2:]) if B.ndim < perm.ndim + 1 else B
        permuted = rows.gather(-2, perm.unsqueeze(-1).expand(*perm.shape, B.shape[-1]))
        y = solve_triangular(LU, permuted, upper=False, unitriangular=True)
        return solve_triangular(LU, y, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    y = solve_triangular(LU.mT, B, upper=False)
    z = solve_triangular(LU.mT, y, upper=True, unitriangular=True)
    inverse = perm.argsort(-1)
    return z.gather(-2, inverse.unsqueeze(-1).expand(*inverse.shape, B.shape[-1]))


def _lu_method(self, pivot=True, get_infos=False):
    """torch.lu / Tensor.lu: (LU, pivots) or, with get_infos, (LU, pivots, infos)."""
    LU, pivots, info = lu_factor_ex(self, pivot=pivot)
    return (LU, pivots, info) if _bool("lu", "get_infos", get_infos) else (LU, pivots)


def _lu_solve_method(self, LU_data, LU_pivots):
    """torch.lu_solve(b, LU_data, LU_pivots) / b.lu_solve(LU_data, LU_pivots)."""
    return lu_solve(LU_data, LU_pivots, self)


Tensor.lu = _lu_method
Tensor.lu_solve = _lu_solve_method
