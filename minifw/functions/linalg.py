"""Matrix functions (torch.linalg): inverse, determinant, solve and the factorizations,
each forward one call of the device's linear-algebra library (numpy.linalg or
cupy.linalg) over the leading batch dims (LU, which neither library has, is Gaussian
elimination with partial pivoting on the host, vectorized over the batch), and each
backward the matrix-calculus adjoint of that factorization, written next to it.

The adjoints of the spectral factorizations (eigh, svd) divide by differences of
eigenvalues (squared singular values), so they hold where those are distinct; the
gradients reaching a factorization only through its values (eigvalsh, svdvals) never
divide and hold everywhere. References: M. Seeger et al., "Auto-differentiating linear
algebra" (2017), J. Townsend, "Differentiating the singular value decomposition" (2016),
H.-J. Liao et al., "Differentiable programming tensor networks" (2019) for QR, and
Golub & Pereyra (1973) for the pseudo-inverse.
"""
import math

import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import unbroadcast
from .shape import IndexScatter


class LinAlgError(RuntimeError):
    """A matrix function could not be computed for its input (a singular matrix, one that
    is not positive-definite, a factorization that did not converge)."""


def _xp(a):
    return devices.array_module(devices.of(a))


def _call(name, a, *args, **kwargs):
    """xp.linalg.<name>(a, ...) for the array library of a's device, every array it returns on
    that device: NumPy 2 answers with named tuples, which an array library built on NumPy
    (a CuPy stand-in) may pass through unconverted."""
    out = getattr(_xp(a).linalg, name)(a, *args, **kwargs)
    if isinstance(out, tuple):
        return tuple(devices.to_device(o, devices.of(a)) for o in out)
    return out


def _mT(a):
    return a.swapaxes(-1, -2)


def _eye_like(a, n):
    return _xp(a).eye(n, dtype=a.dtype)


def _diag_embed(v):
    """A batch of vectors (..., k) as a batch of diagonal matrices (..., k, k)."""
    return v[..., :, None] * _eye_like(v, v.shape[-1])


def _skew(a):
    return a - _mT(a)


def _first_bad(xp, good):
    """The index of the first False in a flattened batch of flags, as a Python int."""
    flat = good.reshape(-1).astype(xp.int8)
    return int(xp.argmin(flat)) if flat.size else 0


def _factorize(fn, problem, op, a):
    """op(a), a library call over a batch of matrices, its failure turned into LinAlgError
    naming `fn`, the `problem` and the batch element it found. NumPy raises for a failed
    factorization; CuPy answers with non-finite values instead, so on "cuda" a finite
    input with a non-finite result is the failure."""
    xp = _xp(a)
    failures = (np.linalg.LinAlgError, getattr(xp.linalg, "LinAlgError", np.linalg.LinAlgError))
    try:
        out = op(a)
    except failures:
        batch = a.reshape((-1,) + a.shape[-2:])
        element = 0
        for element in range(batch.shape[0]):  # the error path only: find the culprit
            try:
                op(batch[element])
            except failures:
                break
        raise LinAlgError(_failure(fn, problem, a, element)) from None
    if devices.of(a).type == "cuda":
        batch = a.shape[:-2]

        def finite(x):  # per batch element: are all of x's values finite?
            return xp.isfinite(x).reshape(batch + (math.prod(x.shape[len(batch):]),)).all(axis=-1)
        good = ~finite(a)  # a non-finite input may give anything
        for o in out if isinstance(out, tuple) else (out,):
            good = good | finite(o)
        if not bool(good.all()):
            raise LinAlgError(_failure(fn, problem, a, _first_bad(xp, good)))
    return out


def _failure(fn, problem, a, element):
    batch = a.shape[:-2]
    if not batch:
        return f"{fn}: {problem}; input of shape {tuple(a.shape)}"
    index = np.unravel_index(element, batch)
    index = int(index[0]) if len(batch) == 1 else tuple(int(i) for i in index)
    return f"{fn}: {problem} (batch element {index}); input of shape {tuple(a.shape)}"


# ------------------------------------------------------------------------------------------
# inverse, determinant, solve
# ------------------------------------------------------------------------------------------

class Inverse(Function):
    """inv(A). d inv = -inv dA inv, so gA = -inv^T g inv^T."""

    @staticmethod
    def forward(ctx, a):
        inv = _factorize("linalg.inv", "A is singular, so it has no inverse",
                         _xp(a).linalg.inv, a)
        ctx.save_for_backward(inv)
        return inv

    @staticmethod
    def backward(ctx, g):
        inv, = ctx.saved_tensors
        inv_t = _mT(inv)
        return -(inv_t @ g @ inv_t)

    @staticmethod
    def backward_graph(ctx, g):
        inv_t = ctx.saved_tensors[0].transpose(-1, -2)  # this node's output, in the graph
        return -(inv_t @ g @ inv_t)


def _cofactor(a):
    """det(A) inv(A)^T, the gradient of det, from the SVD A = U S Vh so that it also holds for
    singular A: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh. The products leaving one s_i out
    are the exclusive prefix and suffix products, so nothing divides by a zero s_i."""
    xp = _xp(a)
    u, s, vh = _call("svd", a)
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), axis=-1),
                               axis=-1), axis=-1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)


class Determinant(Function):
    """det(A); d det = det tr(inv dA), so gA = g det inv^T (the cofactor matrix)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _xp(a).linalg.det(a)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        if a.shape[-1] == 0:
            return _xp(a).zeros_like(a)
        return g[..., None, None] * _cofactor(a)

    @staticmethod
    def backward_graph(ctx, g):
        # det inv^T, recorded: for an invertible A (the cofactor of a singular one has no
        # recorded form here: inv raises, naming A as singular)
        a, = ctx.saved_tensors
        if a.shape[-1] == 0:
            return a * 0.0
        det = Determinant.apply(a)
        return (g * det).unsqueeze(-1).unsqueeze(-1) * Inverse.apply(a).transpose(-1, -2)


class SignLogDeterminant(Function):
    """(sign(det A), log|det A|); d log|det| = tr(inv dA), so gA = g inv^T. The sign is
    piecewise constant: it passes no gradient."""

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = _call("slogdet", a)
        ctx.save_for_backward(a)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, g_sign, g_logabsdet):
        a, = ctx.saved_tensors
        inv = _factorize("linalg.slogdet", "A is singular, so log|det A| = -inf has no gradient",
                         _xp(a).linalg.inv, a)
        return g_logabsdet[..., None, None] * _mT(inv)

    @staticmethod
    def backward_graph(ctx, g_sign, g_logabsdet):
        a, = ctx.saved_tensors
        return g_logabsdet.unsqueeze(-1).unsqueeze(-1) * Inverse.apply(a).transpose(-1, -2)


class Solve(Function):
    """X = inv(A) B for A (..., n, n) and B (..., n, k), the batch dims broadcast (`fn`: the
    caller its errors name). gB = inv(A)^T g, and from dX = -inv(A) dA X, gA = -gB X^T."""

    @staticmethod
    def forward(ctx, a, b, *, fn="linalg.solve"):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        xp = _xp(a)
        a_full = xp.broadcast_to(a, batch + a.shape[-2:])
        b_full = xp.broadcast_to(b, batch + b.shape[-2:])
        x = _factorize(fn, "A is singular, so the system has no unique solution",
                       lambda m: xp.linalg.solve(m, b_full) if m is a_full else xp.linalg.inv(m),
                       a_full)
        ctx.save_for_backward(a, x)
        ctx.shapes = a.shape, b.shape
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        xp = _xp(a)
        a_t = xp.broadcast_to(_mT(a), g.shape[:-2] + a.shape[-2:])
        gb = xp.linalg.solve(a_t, g)
        ga = unbroadcast(-(gb @ _mT(x)), shape_a) if ctx.needs_input_grad[0] else None
        return ga, unbroadcast(gb, shape_b) if ctx.needs_input_grad[1] else None

    @staticmethod
    def backward_graph(ctx, g):
        a, x = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        gb = Solve.apply(a.transpose(-1, -2), g)
        ga = unbroadcast(-(gb @ x.transpose(-1, -2)), shape_a) if ctx.needs_input_grad[0] else None
        return ga, unbroadcast(gb, shape_b) if ctx.needs_input_grad[1] else None


# ------------------------------------------------------------------------------------------
# factorizations
# ------------------------------------------------------------------------------------------

class Cholesky(Function):
    """The lower factor L of A = L L^T (A symmetric positive-definite; only its lower
    triangle is read). With P = tril(L^T gL) and Phi(P) its symmetric completion with
    half the diagonal, gA = inv(L)^T Phi(P) inv(L): a symmetric gradient."""

    @staticmethod
    def forward(ctx, a):
        lower = _factorize("linalg.cholesky", "A is not positive-definite",
                           _xp(a).linalg.cholesky, a)
        ctx.save_for_backward(lower)
        return lower

    @staticmethod
    def backward(ctx, g):
        lower, = ctx.saved_tensors
        xp = _xp(lower)
        p = xp.tril(_mT(lower) @ g)
        phi = 0.5 * (p + _mT(xp.tril(p, -1)))
        inv = xp.linalg.inv(lower)
        return _mT(inv) @ phi @ inv

    @staticmethod
    def backward_graph(ctx, g):
        lower, = ctx.saved_tensors  # this node's output, in the graph
        p = (lower.transpose(-1, -2) @ g).tril()
        phi = 0.5 * (p + p.tril(-1).transpose(-1, -2))
        inv = Inverse.apply(lower)
        return inv.transpose(-1, -2) @ phi @ inv


class SymmetricEigen(Function):
    """(w, V) with A = V diag(w) V^T, w ascending, from the triangle `uplo` of A.
    dw = diag(V^T dA V) and dV = V (F * (V^T dA V)), F_ij = 1 / (w_j - w_i) off the
    diagonal; the adjoint keeps the skew part of V^T gV (the rest moves V off the
    orthogonal group): gA = V (diag(gw) + skew(V^T gV) / 2 / E) V^T, E_ij = w_j - w_i."""

    @staticmethod
    def forward(ctx, a, *, uplo):
        w, v = _factorize("linalg.eigh", "the eigenvalue algorithm did not converge",
                          lambda m: _call("eigh", m, UPLO=uplo), a)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        xp = _xp(v)
        inner = _diag_embed(gw)
        if bool(xp.any(gv != 0)):  # without it the eigenvalues alone never divide
            gap = w[..., None, :] - w[..., :, None]
            gap = gap + _eye_like(gap, gap.shape[-1])  # the diagonal of the skew part is 0
            inner = inner + 0.5 * _skew(_mT(v) @ gv) / gap
        return v @ inner @ _mT(v)


class SingularValueDecomposition(Function):
    """(U, S, Vh) with A = U diag(S) Vh. Only the first k = min(m, n) columns of U (rows of
    Vh) are determined by A, so with full_matrices the gradient reaches A through those.
    The adjoint (Townsend 2016), E_ij = S_j^2 - S_i^2:
        inner = (skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)
        gA = U inner Vh + (I - U U^T) gU S^-1 Vh + U S^-1 gV^T (I - V V^T)
    where the last two terms exist only for tall (m > k) and wide (n > k) A."""

    @staticmethod
    def forward(ctx, a, *, full_matrices):
        u, s, vh = _factorize("linalg.svd", "the SVD algorithm did not converge",
                              lambda m: _call("svd", m, full_matrices=full_matrices), a)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.saved_tensors
        xp = _xp(s)
        k = s.shape[-1]
        m, n = u.shape[-2], vh.shape[-1]
        u, vh, gu, gvh = u[..., :, :k], vh[..., :k, :], gu[..., :, :k], gvh[..., :k, :]
        inner = _diag_embed(gs)
        if not (bool(xp.any(gu != 0)) or bool(xp.any(gvh != 0))):
            return u @ inner @ vh  # the singular values alone: no division by their gaps
        v, gv = _mT(vh), _mT(gvh)
        s2 = s * s
        gap = s2[..., None, :] - s2[..., :, None]
        gap = gap + _eye_like(gap, k)
        inner = inner + (_skew(_mT(u) @ gu) * s[..., None, :]
                         + s[..., :, None] * _skew(vh @ gv)) / gap
        if m > k:
            gu_sinv = gu / s[..., None, :]
            return (u @ inner + gu_sinv - u @ (_mT(u) @ gu_sinv)) @ vh
        if n > k:
            gv_sinv = gv / s[..., None, :]
            return u @ (inner @ vh + _mT(gv_sinv - v @ (vh @ gv_sinv)))
        return u @ inner @ vh


class SingularValues(Function):
    """The singular values S of A (descending); gA = U diag(gS) Vh, defined everywhere."""

    @staticmethod
    def forward(ctx, a):
        u, s, vh = _factorize("linalg.svdvals", "the SVD algorithm did not converge",
                              lambda m: _call("svd", m, full_matrices=False), a)
        ctx.save_for_backward(u, vh)
        return s

    @staticmethod
    def backward(ctx, g):
        u, vh = ctx.saved_tensors
        return (u * g[..., None, :]) @ vh


def _copy_lower_to_upper(m):
    xp = _xp(m)
    return xp.tril(m) + _mT(xp.tril(m, -1))


def _qr_backward_tall(q, r, gq, gr):
    """gA of A = Q R for m >= n (Q m x n, R n x n invertible):
    M = R gR^T - gQ^T Q, gA = (gQ + Q copyltu(M)) R^-T."""
    xp = _xp(q)
    m = r @ _mT(gr) - _mT(gq) @ q
    b = gq + q @ _copy_lower_to_upper(m)
    return _mT(xp.linalg.solve(r, _mT(b)))  # b R^-T without forming the inverse


class QRDecomposition(Function):
    """(Q, R) with A = Q R, Q orthonormal columns, R upper triangular; mode 'reduced',
    'complete' or 'r' (then Q is empty and there is no gradient). A wide A = [X | Y] is
    differentiated through its square part: X = Q U, Y = Q V, so gY = Q gV and X gets the
    square adjoint with gQ + Y gV^T (Liao et al. 2019)."""

    @staticmethod
    def forward(ctx, a, *, mode):
        xp = _xp(a)
        if mode == "r":
            r = xp.linalg.qr(a, mode="r")
            ctx.mode = mode
            return xp.zeros((0,), dtype=a.dtype), r
        q, r = _call("qr", a, mode=mode)
        ctx.save_for_backward(a, q, r)
        ctx.mode = mode
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        if ctx.mode == "r":
            raise RuntimeError("linalg.qr: the gradient needs Q, which mode='r' does not compute; "
                               "use mode='reduced'")
        a, q, r = ctx.saved_tensors
        m, n = a.shape[-2], a.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(f"linalg.qr: no gradient for mode='complete' with more rows than "
                               f"columns (A is {m} x {n}): the extra columns of Q are not "
                               f"determined by A; use mode='reduced'")
        if m >= n:
            return _qr_backward_tall(q, r, gq, gr)
        xp = _xp(a)
        y, gu, gv = a[..., :, m:], gr[..., :, :m], gr[..., :, m:]
        gx = _qr_backward_tall(q, r[..., :, :m], gq + y @ _mT(gv), gu)
        return xp.concatenate([gx, q @ gv], axis=-1)


# ------------------------------------------------------------------------------------------
# pseudo-inverse and least squares
# ------------------------------------------------------------------------------------------

def _tolerance(xp, s_max, shape, atol, rtol, dtype):
    """max(atol, rtol * s_max), rtol by default eps * max(m, n) unless atol > 0 was given."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(dtype).eps * max(shape[-2:])
    return xp.maximum(atol or 0.0, rtol * s_max)


def pseudo_inverse(a, atol, rtol, hermitian):
    """pinv(A) from the SVD (the eigendecomposition for hermitian), singular values at most
    max(atol, rtol * largest) counting as zero."""
    xp = _xp(a)
    if 0 in a.shape[-2:]:
        return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    if hermitian:
        w, v = _call("eigh", a)  # ascending: the largest |w| is at one end
        w_max = xp.maximum(xp.abs(w[..., 0]), xp.abs(w[..., -1]))
        tol = _tolerance(xp, w_max, a.shape, atol, rtol, a.dtype)
        keep = xp.abs(w) > tol[..., None]
        w_inv = xp.where(keep, 1.0 / xp.where(keep, w, 1.0), 0.0).astype(a.dtype)
        return (v * w_inv[..., None, :]) @ _mT(v)
    u, s, vh = _call("svd", a, full_matrices=False)
    tol = _tolerance(xp, s[..., 0], a.shape, atol, rtol, a.dtype)
    keep = s > tol[..., None]
    s_inv = xp.where(keep, 1.0 / xp.where(keep, s, 1.0), 0.0).astype(a.dtype)
    return _mT(vh) @ (s_inv[..., :, None] * _mT(u))


def _pinv_backward(a, p, g):
    """gA of P = pinv(A) where the rank is locally constant (Golub & Pereyra):
    dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P, so
    gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)."""
    p_t, g_t = _mT(p), _mT(g)
    residual_rows = g_t @ p @ p_t - a @ (p @ (g_t @ p @ p_t))        # (I - A P) g^T P P^T
    residual_cols = p_t @ (p @ g_t) - (p_t @ (p @ g_t) @ p) @ a       # P^T P g^T (I - P A)
    return -(p_t @ g @ p_t) + residual_rows + residual_cols


class PseudoInverse(Function):
    """The Moore-Penrose pseudo-inverse of A (..., m, n), an (..., n, m)."""

    @staticmethod
    def forward(ctx, a, *, atol, rtol, hermitian):
        p = _factorize("linalg.pinv", "the SVD algorithm did not converge",
                       lambda m: pseudo_inverse(m, atol, rtol, hermitian), a)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, g):
        a, p = ctx.saved_tensors
        return _pinv_backward(a, p, g)


class LeastSquares(Function):
    """The minimum-norm X minimizing ||A X - B|| for A (..., m, n), B (..., m, k): pinv(A) B,
    singular values below rcond * largest counting as zero. Differentiated as pinv(A) B:
    gB = pinv(A)^T g and gA is the pseudo-inverse's adjoint for g B^T."""

    @staticmethod
    def forward(ctx, a, b, *, rcond):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        xp = _xp(a)
        a_full = xp.broadcast_to(a, batch + a.shape[-2:])
        b_full = xp.broadcast_to(b, batch + b.shape[-2:])
        p = _factorize("linalg.lstsq", "the SVD algorithm did not converge",
                       lambda m: pseudo_inverse(m, None, rcond, False), a_full)
        x = p @ b_full
        ctx.save_for_backward(a_full, b_full, p)
        ctx.shapes = a.shape, b.shape
        return x

    @staticmethod
    def backward(ctx, g):
        a, b, p = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        ga = unbroadcast(_pinv_backward(a, p, g @ _mT(b)), shape_a) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(_mT(p) @ g, shape_b) if ctx.needs_input_grad[1] else None
        return ga, gb


# ------------------------------------------------------------------------------------------
# a batched diagonal
# ------------------------------------------------------------------------------------------

class MatrixDiagonal(Function):
    """The `offset` diagonal of the matrices spanned by dims dim1 and dim2, as the last dim
    (torch.diagonal); the gradient goes back onto that diagonal of zeros."""

    @staticmethod
    def forward(ctx, a, *, offset, dim1, dim2):
        ctx.args = a.shape, offset, dim1, dim2
        return a.diagonal(offset, dim1, dim2).copy()

    @staticmethod
    def backward(ctx, g):
        shape, offset, dim1, dim2 = ctx.args
        dev = devices.of(g)
        # the two dims moved last, the diagonal written with one advanced index, moved back
        order = [d for d in range(len(shape)) if d not in (dim1, dim2)] + [dim1, dim2]
        moved = devices.zeros(tuple(shape[d] for d in order), g.dtype, dev)
        k = g.shape[-1]
        rows = devices.to_device(np.arange(k) + max(-offset, 0), dev)
        cols = devices.to_device(np.arange(k) + max(offset, 0), dev)
        moved[..., rows, cols] = g
        return _xp(g).moveaxis(moved, (-2, -1), (dim1, dim2))

    @staticmethod
    def backward_graph(ctx, g):
        shape, offset, dim1, dim2 = ctx.args
        dev = devices.of(g._data)
        order = [d for d in range(len(shape)) if d not in (dim1, dim2)] + [dim1, dim2]
        k = g.shape[-1]
        rows = devices.to_device(np.arange(k) + max(-offset, 0), dev)
        cols = devices.to_device(np.arange(k) + max(offset, 0), dev)
        moved = IndexScatter.apply(g, shape=tuple(shape[d] for d in order), index=(Ellipsis, rows, cols))
        return moved.movedim((-2, -1), (dim1, dim2))


def _lu_on_host(a):
    """(LU, pivots) of each square matrix of the host array `a` by Gaussian elimination with
    partial pivoting, as LAPACK's getrf: LU holds L's multipliers below the diagonal (L has a
    unit diagonal) and U on and above it; pivots[k] (1-based) is the row swapped with row k at
    step k. A zero pivot column is left as it is (U then has a zero on its diagonal)."""
    n = a.shape[-1]
    lu = np.array(a, copy=True).reshape(-1, n, n)
    pivots = np.zeros(lu.shape[:2], np.int32)
    rows = np.arange(lu.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(n):
            p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
            pivots[:, k] = p + 1
            swapped = lu[rows, p, :].copy()
            lu[rows, p, :] = lu[rows, k, :]
            lu[rows, k, :] = swapped
            pivot = lu[:, k, k][:, None]
            multipliers = np.where(pivot != 0, lu[:, k + 1:, k] / np.where(pivot != 0, pivot, 1), 0)
            lu[:, k + 1:, k] = multipliers
            lu[:, k + 1:, k + 1:] -= multipliers[:, :, None] * lu[:, k, None, k + 1:]
    return lu.reshape(a.shape), pivots.reshape(a.shape[:-1])


def lu_permutation(pivots):
    """perm with A[..., perm, :] = L U, from LAPACK's 1-based sequential row swaps."""
    n = pivots.shape[-1]
    flat = pivots.reshape(-1, n) - 1
    perm = np.tile(np.arange(n), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for k in range(n):
        swapped = perm[rows, flat[:, k]].copy()
        perm[rows, flat[:, k]] = perm[:, k]
        perm[:, k] = swapped
    return perm.reshape(pivots.shape)


class LUFactorization(Function):
    """(LU, pivots) of square matrices, A[perm] = L U (see _lu_on_host); pivots are not
    differentiable. With gL = tril(gLU, -1) and gU = triu(gLU), the gradient of L U in A's
    permuted rows is L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T (U invertible)."""

    @staticmethod
    def forward(ctx, a):
        lu, pivots = _lu_on_host(devices.to_device(a, devices.CPU))
        dev = devices.of(a)
        lu, pivots = devices.to_device(lu, dev), devices.to_device(pivots, dev)
        ctx.save_for_backward(lu, pivots)
        return lu, pivots

    @staticmethod
    def backward(ctx, g, g_pivots):
        lu, pivots = ctx.saved_tensors
        xp = _xp(lu)
        n = lu.shape[-1]
        eye = xp.eye(n, dtype=lu.dtype)
        lower, upper = xp.tril(lu, -1) + eye, xp.triu(lu)
        phi = xp.tril(_mT(lower) @ xp.tril(g, -1), -1) + xp.triu(xp.triu(g) @ _mT(upper))
        left = xp.linalg.solve(_mT(lower), phi)  # L^-T phi
        permuted = _mT(xp.linalg.solve(upper, _mT(left)))  # (L^-T phi) U^-T
        perm = devices.to_device(lu_permutation(devices.to_device(pivots, devices.CPU)),
                                 devices.of(lu))
        ga = xp.zeros_like(permuted)
        xp.put_along_axis(ga, perm[..., None].astype(np.int64), permuted, axis=-2)
        return ga
