"""minifw.linalg against NumPy's float64 results (batched, 1 x 1 and odd-sized matrices, float32
and float64), float64 finite-difference gradients of every differentiable function, PyTorch's
values and gradients when it is installed, the other devices ("cudasim" and "cuda", emulated
where there is no GPU) against the CPU, and the errors for bad input.

Eigenvectors and singular vectors are unique only up to sign, so their checks use quantities
that do not depend on the sign: elementwise squares, products like U diag(S) Vh, and the
first min(m, n) columns only (the rest of a full U or Vh is an arbitrary basis)."""
import math

import numpy as np
import pytest

import minifw
from minifw import devices
from gradcheck import gradcheck
from targets import cuda_available, emulate_cuda

LA = minifw.linalg
F64 = minifw.float64

# float64 results of the same LAPACK routines agree to a few ulps times the condition number;
# float32 ones, compared with float64 references on the same values, to ~1e-6 relative times
# the (small, < 50) condition numbers of these inputs.
TOL = {"float64": dict(rtol=1e-9, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-5)}


def arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def well_conditioned(shape, seed=0):
    """Random square matrices with the diagonal pushed out: condition numbers below ~10."""
    a, = arrays(seed, shape)
    return a + 3.0 * np.eye(shape[-1])


def spd(shape, seed=0):
    a, = arrays(seed, shape)
    return a @ a.swapaxes(-1, -2) + shape[-1] * np.eye(shape[-1])


def mf(a, dtype=F64, requires_grad=False, device="cpu"):
    return minifw.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


def out_list(out):
    return list(out) if isinstance(out, tuple) else [out]


# ------------------------------------------------------------------------------------------
# values against NumPy
# ------------------------------------------------------------------------------------------

SQUARE_SHAPES = {"1x1": (1, 1), "3x3": (3, 3), "batch-2x3-5x5": (2, 3, 5, 5)}
ANY_SHAPES = {"1x1": (1, 1), "tall-5x3": (5, 3), "wide-3x5": (3, 5), "batch-2-4x7": (2, 4, 7),
              "batch-2x1-3x3": (2, 1, 3, 3)}


def _sign_free(columns):
    return columns * columns


SQUARE_CASES = {
    "inv": (lambda A: LA.inv(A), lambda a: np.linalg.inv(a)),
    "det": (lambda A: LA.det(A), lambda a: np.linalg.det(a)),
    "slogdet": (lambda A: tuple(LA.slogdet(A)), lambda a: tuple(np.linalg.slogdet(a))),
    "solve": (lambda A: LA.solve(A, A.mT + 1), lambda a: np.linalg.solve(a, a.swapaxes(-1, -2) + 1)),
    "solve-vector": (lambda A: LA.solve(A, A[..., 0]),
                     lambda a: np.linalg.solve(a, a[..., 0:1])[..., 0]),
    "solve-right": (lambda A: LA.solve(A, A.mT + 1, left=False),
                    lambda a: (a.swapaxes(-1, -2) + 1) @ np.linalg.inv(a)),
    "solve_triangular-lower": (lambda A: LA.solve_triangular(A, A.mT + 1, upper=False),
                               lambda a: np.linalg.solve(np.tril(a), a.swapaxes(-1, -2) + 1)),
    "solve_triangular-upper-unit-right": (
        lambda A: LA.solve_triangular(A, A + 1, upper=True, left=False, unitriangular=True),
        lambda a: (a + 1) @ np.linalg.inv(np.triu(a, 1) + np.eye(a.shape[-1]))),
    "cholesky": (lambda A: LA.cholesky(A @ A.mT), lambda a: np.linalg.cholesky(a @ a.swapaxes(-1, -2))),
    "cholesky-upper": (lambda A: LA.cholesky(A @ A.mT, upper=True),
                       lambda a: np.linalg.cholesky(a @ a.swapaxes(-1, -2)).swapaxes(-1, -2)),
    "eigh-values": (lambda A: LA.eigh(A + A.mT).eigenvalues,
                    lambda a: np.linalg.eigvalsh(a + a.swapaxes(-1, -2))),
    "eigh-vectors": (lambda A: _sign_free(LA.eigh(A + A.mT, UPLO="U").eigenvectors),
                     lambda a: _sign_free(np.linalg.eigh(a + a.swapaxes(-1, -2))[1])),
    "eigvalsh": (lambda A: LA.eigvalsh(A + A.mT), lambda a: np.linalg.eigvalsh(a + a.swapaxes(-1, -2))),
    "matrix_power-3": (lambda A: LA.matrix_power(A, 3), lambda a: np.linalg.matrix_power(a, 3)),
    "matrix_power-0": (lambda A: LA.matrix_power(A, 0), lambda a: np.linalg.matrix_power(a, 0)),
    "matrix_power--2": (lambda A: LA.matrix_power(A, -2), lambda a: np.linalg.matrix_power(a, -2)),
    "pinv-hermitian": (lambda A: LA.pinv(A @ A.mT, hermitian=True),
                       lambda a: np.linalg.pinv(a @ a.swapaxes(-1, -2))),
    "cond": (lambda A: LA.cond(A), lambda a: np.linalg.cond(a)),
    "cond-fro": (lambda A: LA.cond(A, "fro"), lambda a: np.linalg.cond(a, "fro")),
}

ANY_CASES = {
    "svd-S": (lambda A: LA.svd(A).S, lambda a: np.linalg.svd(a, compute_uv=False)),
    "svd-reconstructs": (lambda A: (lambda r: (r.U * r.S[..., None, :]) @ r.Vh)(LA.svd(A, False)),
                         lambda a: a),
    "svd-full-orthogonal": (lambda A: (lambda u: u.mT @ u)(LA.svd(A).U),
                            lambda a: np.broadcast_to(np.eye(a.shape[-2]), a.shape[:-1] + a.shape[-2:-1])),
    "svd-vectors": (lambda A: tuple(_sign_free(t) for t in LA.svd(A, full_matrices=False)[::2]),
                    lambda a: tuple(_sign_free(t) for t in np.linalg.svd(a, full_matrices=False)[::2])),
    "svdvals": (lambda A: LA.svdvals(A), lambda a: np.linalg.svd(a, compute_uv=False)),
    "qr-reconstructs": (lambda A: (lambda q, r: q @ r)(*LA.qr(A)), lambda a: a),
    "qr-complete-orthogonal": (lambda A: (lambda q: q.mT @ q)(LA.qr(A, "complete").Q),
                               lambda a: np.broadcast_to(np.eye(a.shape[-2]), a.shape[:-1] + a.shape[-2:-1])),
    "qr-R-upper-abs": (lambda A: LA.qr(A, "r").R.abs(), lambda a: np.abs(np.linalg.qr(a, "r"))),
    "pinv": (lambda A: LA.pinv(A), lambda a: np.linalg.pinv(a)),
    "lstsq": (lambda A: LA.lstsq(A, A[..., :2] + 1).solution,
              lambda a: np.linalg.pinv(a) @ (a[..., :2] + 1)),
    "matrix_rank": (lambda A: LA.matrix_rank(A), lambda a: np.linalg.matrix_rank(a)),
    "matrix_rank-deficient": (lambda A: LA.matrix_rank(A[..., :1] * A[..., :1, :]),
                              lambda a: np.linalg.matrix_rank(a[..., :1] * a[..., :1, :])),
    "norm-default": (lambda A: LA.norm(A), lambda a: np.linalg.norm(a.reshape(-1))),
    "diagonal": (lambda A: LA.diagonal(A, offset=1), lambda a: np.diagonal(a, 1, -2, -1)),
    "diagonal-dims": (lambda A: LA.diagonal(A, offset=-1, dim1=-1, dim2=-2),
                      lambda a: np.diagonal(a, -1, -1, -2)),
}
for _ord in ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
    ANY_CASES[f"matrix_norm-{_ord}"] = (lambda A, o=_ord: LA.matrix_norm(A, o),
                                        lambda a, o=_ord: np.linalg.norm(a, o, axis=(-2, -1)))
    ANY_CASES[f"matrix_norm-{_ord}-dims-keepdim"] = (
        lambda A, o=_ord: LA.matrix_norm(A, o, dim=(-1, 0), keepdim=True),
        lambda a, o=_ord: np.linalg.norm(a, o, axis=(-1, 0), keepdims=True))
for _ord in [2, 1, 3, 0.5, 0, math.inf, -math.inf, -1]:
    ANY_CASES[f"vector_norm-{_ord}"] = (lambda A, o=_ord: LA.vector_norm(A, o, dim=-1),
                                        lambda a, o=_ord: np.linalg.norm(a, o, axis=-1))
    ANY_CASES[f"norm-dim-{_ord}"] = (lambda A, o=_ord: LA.norm(A, o, dim=0, keepdim=True),
                                     lambda a, o=_ord: np.linalg.norm(a, o, axis=0, keepdims=True))


def _value_cases():
    for name, (ours, ref) in SQUARE_CASES.items():
        for shape_id, shape in SQUARE_SHAPES.items():
            yield pytest.param(ours, ref, well_conditioned(shape, seed=1), id=f"{name}-{shape_id}")
    for name, (ours, ref) in ANY_CASES.items():
        for shape_id, shape in ANY_SHAPES.items():
            yield pytest.param(ours, ref, arrays(2, shape)[0], id=f"{name}-{shape_id}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ours, reference, a", list(_value_cases()))
def test_values_match_numpy_float64(ours, reference, a, dtype):
    a = a.astype(dtype).astype(np.float64)  # the same values in both precisions
    got = out_list(ours(mf(a, dtype=getattr(minifw, dtype))))
    want = out_list(reference(a))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g.dtype.kind == "f":
            assert g.dtype == getattr(minifw, dtype)
        np.testing.assert_allclose(g.numpy(), np.asarray(w), **TOL[dtype])


def test_structured_results():
    a = well_conditioned((2, 3, 3))
    sign, logabsdet = LA.slogdet(mf(a))
    assert LA.slogdet(mf(a)).logabsdet.shape == (2,)
    np.testing.assert_allclose((sign * logabsdet.exp()).numpy(), np.linalg.det(a), rtol=1e-12)
    singular = mf(np.ones((3, 3)))
    assert LA.slogdet(singular).sign.item() == 0 and LA.slogdet(singular).logabsdet.item() == -math.inf
    assert LA.det(singular).item() == 0
    L = LA.cholesky(mf(spd((4, 4))))
    assert np.array_equal(L.numpy(), np.tril(L.numpy()))
    U, S, Vh = LA.svd(mf(arrays(0, (5, 3))[0]))
    assert (U.shape, S.shape, Vh.shape) == ((5, 5), (3,), (3, 3))
    assert np.all(np.diff(S.numpy()) <= 0)
    Q, R = LA.qr(mf(arrays(0, (5, 3))[0]), mode="r")
    assert Q.shape == (0,) and R.shape == (3, 3)
    Q, R = LA.qr(mf(arrays(0, (5, 3))[0]), mode="complete")
    assert Q.shape == (5, 5) and R.shape == (5, 3)
    w = LA.eigh(mf(spd((4, 4)))).eigenvalues.numpy()
    assert np.all(np.diff(w) > 0)
    rank = LA.matrix_rank(mf(np.ones((2, 4, 3))))
    assert rank.dtype == minifw.int64 and rank.tolist() == [1, 1]
    assert LA.matrix_rank(mf(np.diag([1.0, 1e-3, 0.0])), atol=1e-2).item() == 1
    assert LA.matrix_rank(mf(np.diag([1.0, 1e-3, 0.0])), tol=1e-4).item() == 2
    assert LA.matrix_rank(mf(np.diag([1.0, -1e-3, 0.0])), hermitian=True).item() == 2


def test_pinv_and_matrix_rank_take_the_older_tolerance_positionally():
    # PyTorch's pinv(A, rcond, hermitian) and matrix_rank(A, tol, hermitian) overloads
    d = mf(np.diag([1.0, 1e-3, 0.0]))
    np.testing.assert_allclose(LA.pinv(d, 1e-2).numpy(), np.diag([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(LA.pinv(d, 1e-4).numpy(), np.diag([1.0, 1e3, 0.0]))
    np.testing.assert_allclose(LA.pinv(d, minifw.tensor(1e-2)).numpy(), LA.pinv(d, rtol=1e-2).numpy())
    np.testing.assert_allclose(LA.pinv(d, 1e-4, True).numpy(), np.diag([1.0, 1e3, 0.0]))
    assert LA.matrix_rank(d, 1e-2).item() == 1 and LA.matrix_rank(d, 1e-4).item() == 2
    assert LA.matrix_rank(d, minifw.tensor(1e-2), True).item() == 1
    with pytest.raises(TypeError, match="rtol or the older rcond"):
        LA.pinv(d, 1e-2, rtol=1e-3)
    with pytest.raises(TypeError, match="tol or atol/rtol"):
        LA.matrix_rank(d, 1e-2, atol=1e-3)
    with pytest.raises(TypeError, match="rcond must be a real number"):
        LA.pinv(d, "0.1")


def test_lstsq_fields_follow_the_driver():
    a, b = arrays(3, (2, 5, 3), (2, 5, 2))
    for driver, (res, rank, sv) in {None: (0, 2, 0), "gelsy": (0, 2, 0), "gelsd": (2, 2, 2),
                                    "gelss": (2, 2, 2), "gels": (2, 0, 0)}.items():
        out = LA.lstsq(mf(a), mf(b), driver=driver)
        assert out.solution.shape == (2, 3, 2)
        assert (out.residuals.shape[-1:] if res else out.residuals.shape) == ((2,) if res else (0,))
        assert (len(out.rank.shape), out.rank.numel()) == ((1, 2) if rank else (1, 0))
        assert out.singular_values.shape == ((2, 3) if sv else (0,))
        if res:
            x = np.linalg.lstsq(a[0], b[0], rcond=None)
            np.testing.assert_allclose(out.residuals.numpy()[0], x[1], rtol=1e-10)
    vector = LA.lstsq(mf(a[0]), mf(b[0, :, 0]))
    np.testing.assert_allclose(vector.solution.numpy(), np.linalg.lstsq(a[0], b[0, :, 0], rcond=None)[0],
                               rtol=1e-10)


def test_products_and_multi_dot_order():
    a, b = arrays(4, (2, 1, 3), (4, 3))
    np.testing.assert_allclose(LA.cross(mf(a), mf(b)[None]).numpy(), np.cross(a, b[None]), rtol=1e-12)
    np.testing.assert_allclose(LA.vecdot(mf(a), mf(b)).numpy(), np.sum(a * b, -1), rtol=1e-12)
    chain = arrays(5, (7,), (7, 2), (2, 9), (9, 3), (3,))
    np.testing.assert_allclose(LA.multi_dot([mf(c) for c in chain]).numpy(), np.linalg.multi_dot(chain),
                               rtol=1e-12)
    assert LA.multi_dot([mf(c) for c in chain]).shape == ()
    # the chain (10x100)(100x5)(5x50): (AB)C costs 7500 multiply-adds, A(BC) 75000
    from minifw.linalg import _chain_order
    assert _chain_order([10, 100, 5, 50])[0][2] == 1


# ------------------------------------------------------------------------------------------
# gradients: one table for finite differences, PyTorch and the devices
# ------------------------------------------------------------------------------------------

def _sym(x):
    return (x + x.mT) * 0.5


def _svd_invariants(r, k):
    return r.U[..., :k] ** 2, r.S, r.Vh[..., :k, :] ** 2


SQ = well_conditioned((2, 3, 3), seed=7)
TALL, WIDE = arrays(8, (2, 5, 3), (2, 3, 5))
RHS = arrays(9, (2, 3, 2))[0]
SPD = spd((2, 3, 3), seed=10)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2
# inputs of the vector norms with no zeros and no ties, so every ord is differentiable there
VEC = np.array([[0.3, -1.2, 2.1, -0.7], [1.5, 0.4, -0.9, 2.6]])

GRAD_CASES = {
    "inv": (lambda la, a: la.inv(a), [SQ]),
    "det": (lambda la, a: la.det(a), [SQ]),
    "det-singular": (lambda la, a: la.det(a), [SINGULAR]),
    "slogdet": (lambda la, a: la.slogdet(a).logabsdet, [SQ]),
    "solve": (lambda la, a, b: la.solve(a, b), [SQ, RHS]),
    "solve-vector-broadcast": (lambda la, a, b: la.solve(a, b), [SQ, RHS[0, :, 0]]),
    "solve-right": (lambda la, a, b: la.solve(a, b, left=False), [SQ, RHS.swapaxes(-1, -2)]),
    "solve_triangular": (lambda la, a, b: la.solve_triangular(a, b, upper=False), [SQ, RHS]),
    "solve_triangular-upper-unit-right": (
        lambda la, a, b: la.solve_triangular(a, b, upper=True, left=False, unitriangular=True),
        [SQ, RHS[0].T]),
    "cholesky": (lambda la, a: la.cholesky(_sym(a)), [SPD]),
    "cholesky-upper": (lambda la, a: la.cholesky(_sym(a), upper=True), [SPD]),
    "eigh": (lambda la, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(la.eigh(_sym(a))), [SPD]),
    "eigh-upper": (lambda la, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(la.eigh(_sym(a), "U")),
                   [SPD]),
    "eigvalsh": (lambda la, a: la.eigvalsh(_sym(a)), [SPD]),
    "svd-tall": (lambda la, a: _svd_invariants(la.svd(a, full_matrices=False), 3), [TALL]),
    "svd-wide-full": (lambda la, a: _svd_invariants(la.svd(a), 3), [WIDE]),
    "svd-tall-full": (lambda la, a: _svd_invariants(la.svd(a), 3), [TALL]),
    "svd-square": (lambda la, a: _svd_invariants(la.svd(a), 3), [SQ]),
    "svd-product": (lambda la, a: (lambda r: r.U @ r.Vh)(la.svd(a, full_matrices=False)), [TALL]),
    "svdvals": (lambda la, a: la.svdvals(a), [WIDE]),
    "qr-tall": (lambda la, a: tuple(la.qr(a)), [TALL]),
    "qr-square-complete": (lambda la, a: tuple(la.qr(a, "complete")), [SQ]),
    "qr-wide": (lambda la, a: tuple(la.qr(a)), [WIDE]),
    "pinv-tall": (lambda la, a: la.pinv(a), [TALL]),
    "pinv-wide": (lambda la, a: la.pinv(a), [WIDE]),
    "pinv-hermitian": (lambda la, a: la.pinv(_sym(a), hermitian=True), [SPD]),
    "lstsq": (lambda la, a, b: la.lstsq(a, b).solution, [TALL, arrays(11, (2, 5, 2))[0]]),
    "matrix_power-3": (lambda la, a: la.matrix_power(a, 3), [SQ]),
    "matrix_power--2": (lambda la, a: la.matrix_power(a, -2), [SQ]),
    "matrix_power-0": (lambda la, a: la.matrix_power(a, 0), [SQ]),
    "cross": (lambda la, a, b: la.cross(a, b, dim=1), [arrays(12, (2, 3))[0], arrays(13, (1, 3))[0]]),
    "vecdot": (lambda la, a, b: la.vecdot(a, b), [TALL, arrays(14, (3,))[0]]),
    "multi_dot": (lambda la, a, b, c: la.multi_dot([a, b, c]), [VEC[0], arrays(15, (4, 5))[0], TALL[0]]),
    "diagonal": (lambda la, a: la.diagonal(a, offset=1, dim1=0, dim2=2), [TALL]),
    "norm": (lambda la, a: la.norm(a), [TALL]),
}
for _ord in [2, 1, 3, 0.5, math.inf, -math.inf, -1]:
    GRAD_CASES[f"vector_norm-{_ord}"] = (lambda la, a, o=_ord: la.vector_norm(a, o, dim=-1), [VEC])
for _ord in ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
    GRAD_CASES[f"matrix_norm-{_ord}"] = (lambda la, a, o=_ord: la.matrix_norm(a, o), [TALL])


@pytest.mark.parametrize("fn, inputs", list(GRAD_CASES.values()), ids=list(GRAD_CASES))
def test_gradients_match_finite_differences(fn, inputs):
    tensors = [mf(a, requires_grad=True) for a in inputs]
    assert gradcheck(lambda *t: fn(LA, *t), tensors)


@pytest.mark.parametrize("fn, inputs", list(GRAD_CASES.values()), ids=list(GRAD_CASES))
def test_values_and_gradients_match_pytorch(fn, inputs):
    torch = pytest.importorskip("torch")
    if inputs[0] is SINGULAR:
        pytest.skip("PyTorch gives det of a singular matrix a zero gradient; minifw gives the "
                    "cofactor matrix, which finite differences confirm (det-singular above)")
    ours = [mf(a, requires_grad=True) for a in inputs]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs]
    out_ours, out_theirs = out_list(fn(LA, *ours)), out_list(fn(torch.linalg, *theirs))
    weights = arrays(16, *[tuple(o.shape) for o in out_theirs])
    for o, t in zip(out_ours, out_theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum(((o * mf(w)).sum() for o, w in zip(out_ours, weights)), mf(0.0)).backward()
    sum(((t * torch.tensor(w)).sum() for t, w in zip(out_theirs, weights)), torch.tensor(0.0,
        dtype=torch.float64)).backward()
    for o, t in zip(ours, theirs):
        want = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
        np.testing.assert_allclose(o.grad.numpy(), want, rtol=1e-9, atol=1e-11)


RAW_SYMMETRIC_CASES = {
    "cholesky": lambda la, a: la.cholesky(a),
    "eigh": lambda la, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(la.eigh(a)),
    "eigh-upper": lambda la, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(la.eigh(a, "U")),
    "eigvalsh": lambda la, a: la.eigvalsh(a),
}


@pytest.mark.parametrize("fn", list(RAW_SYMMETRIC_CASES.values()), ids=list(RAW_SYMMETRIC_CASES))
def test_symmetric_input_gradients_are_pytorchs_symmetric_ones(fn):
    """The factorizations read one triangle of A, yet (as PyTorch's) their gradient is the
    symmetric one, which the finite differences through (x + x^T) / 2 above do not see."""
    torch = pytest.importorskip("torch")
    ours = mf(SPD, requires_grad=True)
    theirs = torch.tensor(SPD, requires_grad=True)
    outs = out_list(fn(LA, ours)), out_list(fn(torch.linalg, theirs))
    weights = arrays(18, *[tuple(o.shape) for o in outs[1]])
    sum((o * mf(w)).sum() for o, w in zip(outs[0], weights)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(outs[1], weights)).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours.grad.numpy(), ours.grad.numpy().swapaxes(-1, -2), rtol=1e-9, atol=1e-11)


@pytest.fixture(params=["cudasim", "cuda"])
def dev(request, monkeypatch):
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


DEVICE_CASES = ["inv", "det", "slogdet", "solve", "solve-vector-broadcast", "solve_triangular",
                "cholesky-upper", "eigh", "svd-wide-full", "svd-tall", "svdvals", "qr-tall", "qr-wide",
                "pinv-wide", "lstsq",
                "matrix_power--2", "cross", "multi_dot", "diagonal", "vector_norm-3",
                "matrix_norm-nuc", "matrix_norm-inf"]


@pytest.mark.parametrize("case", DEVICE_CASES)
def test_other_devices_match_the_cpu(dev, case):
    fn, inputs = GRAD_CASES[case]
    results = {}
    for device in ("cpu", dev):
        tensors = [mf(a, requires_grad=True, device=device) for a in inputs]
        outs = out_list(fn(LA, *tensors))
        weights = arrays(17, *[tuple(o.shape) for o in outs])
        sum(((o * mf(w, device=device)).sum() for o, w in zip(outs, weights)),
            mf(0.0, device=device)).backward()
        for t in outs + [t.grad for t in tensors]:
            assert t.device == device and devices.of(t._data) == devices.get(device)
        results[device] = [o.detach().cpu().numpy() for o in outs] + [t.grad.cpu().numpy() for t in tensors]
    for got, want in zip(results[dev], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_float32_gradients_stay_float32_and_match_float64():
    grads = {}
    for dtype in (minifw.float32, F64):
        a = mf(SQ, dtype=dtype, requires_grad=True)
        (LA.inv(a).sum() + LA.det(a).sum() + LA.svdvals(a).sum() + LA.eigvalsh(a).sum()
         + LA.matrix_norm(a, "nuc").sum() + LA.cholesky(a @ a.mT).sum()).backward()
        assert a.grad.dtype == dtype
        grads[dtype] = a.grad.numpy()
    np.testing.assert_allclose(grads[minifw.float32], grads[F64], **TOL["float32"])


def test_qr_mode_r_and_complete_tall_refuse_gradients():
    a = mf(TALL, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"linalg\.qr: .*mode='r'"):
        LA.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match=r"linalg\.qr: .*mode='complete'.*5 x 3"):
        LA.qr(a, mode="complete").Q.sum().backward()


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------

def test_linalg_error_is_a_runtime_error():
    assert issubclass(LA.LinAlgError, RuntimeError)


@pytest.mark.parametrize("call, match", [
    (lambda: LA.inv(mf(np.ones((3, 3)))), r"linalg\.inv: A is singular"),
    (lambda: LA.solve(mf(np.zeros((2, 2))), mf(np.ones(2))), r"linalg\.solve: A is singular"),
    (lambda: LA.solve_triangular(mf(np.triu(np.ones((3, 3)), 1)), mf(np.ones((3, 1))), upper=True),
     r"linalg\.solve_triangular: A is singular"),
    (lambda: LA.cholesky(mf(-np.eye(3))), r"linalg\.cholesky: A is not positive-definite"),
    (lambda: LA.slogdet(mf(np.ones((2, 2)), requires_grad=True)).logabsdet.backward(),
     r"linalg\.slogdet: A is singular"),
], ids=["inv", "solve", "solve_triangular", "cholesky", "slogdet-backward"])
def test_singular_and_indefinite_matrices_raise_linalg_error(call, match):
    with pytest.raises(LA.LinAlgError, match=match):
        call()


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_linalg_error_names_the_batch_element(device):
    a = np.stack([np.eye(3), np.eye(3), np.ones((3, 3))]).reshape(3, 1, 3, 3)
    with pytest.raises(LA.LinAlgError, match=r"batch element \(2, 0\)\); input of shape \(3, 1, 3, 3\)"):
        LA.inv(mf(a, device=device))


def test_linalg_error_on_emulated_cuda(monkeypatch):
    if not cuda_available():
        emulate_cuda(monkeypatch)
    a = np.stack([np.eye(3), 2 * np.eye(3), -np.eye(3)])
    with pytest.raises(LA.LinAlgError, match=r"linalg\.cholesky: .*batch element 2\)"):
        LA.cholesky(mf(a, device="cuda"))


def test_non_finite_results_of_finite_input_are_failures_on_cuda(monkeypatch):
    """CuPy reports a failed factorization with NaN instead of an exception."""
    from minifw.functions.linalg import _factorize
    if not cuda_available():
        emulate_cuda(monkeypatch)
    a = mf(np.stack([np.eye(2), np.eye(2)]), device="cuda")._data

    def fails_on_the_second(m):
        out = m.copy()
        out[1] = float("nan")
        return out
    with pytest.raises(LA.LinAlgError, match=r"linalg\.inv: A is singular \(batch element 1\)"):
        _factorize("linalg.inv", "A is singular", fails_on_the_second, a)
    nan_input = mf(np.full((2, 2), np.nan), device="cuda")._data
    assert _factorize("linalg.inv", "A is singular", fails_on_the_second, nan_input) is not None


@pytest.mark.parametrize("call, error, match", [
    (lambda: LA.inv(mf(np.ones((2, 3)))), ValueError, r"linalg\.inv: A must be a batch of square "
                                                      r"matrices .* got 2 x 3"),
    (lambda: LA.det(mf(np.ones(3))), ValueError, r"linalg\.det: A must have at least 2 dims.*\(3,\)"),
    (lambda: LA.inv(minifw.ones(2, 2, dtype=minifw.int64)), TypeError,
     r"linalg\.inv: A must be a float32 or float64 tensor, got int64"),
    (lambda: LA.inv(np.eye(2)), TypeError, r"linalg\.inv: A must be a Tensor, got ndarray"),
    (lambda: LA.solve(mf(np.eye(3)), mf(np.ones((2, 1)))), ValueError,
     r"linalg\.solve: .*needs 3 rows, got 2"),
    (lambda: LA.solve(mf(np.eye(2)), mf(np.ones(2), dtype=minifw.float32)), TypeError,
     r"linalg\.solve: A and B must have one dtype"),
    (lambda: LA.solve(mf(np.ones((2, 2, 2))), mf(np.ones((3, 2, 1)))), ValueError,
     r"linalg\.solve: the batch dims"),
    (lambda: LA.solve_triangular(mf(np.eye(2)), mf(np.ones(2)), upper=True), ValueError,
     r"linalg\.solve_triangular: B must have at least 2 dims"),
    (lambda: LA.solve_triangular(mf(np.eye(2)), mf(np.ones((2, 1))), upper=None), TypeError,
     r"linalg\.solve_triangular: upper must be a bool, got None"),
    (lambda: LA.eigh(mf(np.eye(2)), UPLO="X"), ValueError, r"linalg\.eigh: UPLO must be 'L' or 'U', got 'X'"),
    (lambda: LA.qr(mf(np.eye(2)), mode="full"), ValueError, r"linalg\.qr: mode must be one of"),
    (lambda: LA.vector_norm(mf(np.ones(3)), "fro"), TypeError, r"linalg\.vector_norm: ord must be a real"),
    (lambda: LA.vector_norm(mf(np.ones(3)), 2, dim=1), IndexError, r"linalg\.vector_norm: dim"),
    (lambda: LA.vector_norm(mf(np.ones((0, 2))), math.inf), ValueError, r"linalg\.vector_norm: the inf "
                                                                         r"norm of an empty"),
    (lambda: LA.matrix_norm(mf(np.eye(2)), 3), ValueError,
     r"linalg\.matrix_norm: ord must be one of .* got 3"),
    (lambda: LA.matrix_norm(mf(np.eye(2)), dim=(0,)), ValueError, r"linalg\.matrix_norm: dim must be a pair"),
    (lambda: LA.matrix_norm(mf(np.eye(2)), dim=(0, 0)), ValueError, r"linalg\.matrix_norm: dim .* twice"),
    (lambda: LA.norm(mf(np.ones((2, 2, 2))), 2), ValueError, r"linalg\.norm: with ord and no dim, A must "
                                                             r"be 1-D or 2-D, got 3-D"),
    (lambda: LA.norm(mf(np.ones(3)), "nuc", dim=0), ValueError, r"linalg\.norm: ord 'nuc' is a matrix norm"),
    (lambda: LA.norm(mf(np.ones((2, 2, 2))), dim=(0, 1, 2)), ValueError, r"linalg\.norm: dim must be one "),
    (lambda: LA.cross(mf(np.ones(2)), mf(np.ones(2))), ValueError, r"linalg\.cross: dim -1 must have size 3"),
    (lambda: LA.cross(mf(np.ones((2, 3))), mf(np.ones(3))), ValueError,
     r"linalg\.cross: .*same number of dims"),
    (lambda: LA.multi_dot([mf(np.ones((2, 3)))]), ValueError, r"linalg\.multi_dot: expected at least 2"),
    (lambda: LA.multi_dot([mf(np.ones((2, 3))), mf(np.ones((2, 3)))]), ValueError,
     r"linalg\.multi_dot: .*cannot be multiplied \(3 != 2\)"),
    (lambda: LA.multi_dot([mf(np.ones((2, 3))), mf(np.ones(3)), mf(np.ones(1))]), ValueError,
     r"linalg\.multi_dot: tensors\[1\] must be 2-D, got shape \(3,\)"),
    (lambda: LA.matrix_power(mf(np.eye(2)), 1.5), TypeError, r"linalg\.matrix_power: n must be an int"),
    (lambda: LA.pinv(mf(np.eye(2)), rtol=-1), ValueError, r"linalg\.pinv: rtol must be >= 0, got -1"),
    (lambda: LA.lstsq(mf(np.eye(2)), mf(np.ones((3, 1)))), ValueError,
     r"linalg\.lstsq: B must have as many rows"),
    (lambda: LA.lstsq(mf(np.eye(2)), mf(np.ones((2, 1))), rcond=-0.5), ValueError,
     r"linalg\.lstsq: rcond must be >= 0 or None, got -0\.5"),
    (lambda: LA.lstsq(mf(np.eye(2)), mf(np.ones((2, 1))), driver="gelsx"), ValueError,
     r"linalg\.lstsq: driver"),
    (lambda: LA.diagonal(mf(np.eye(2)), dim1=0, dim2=-2), ValueError, r"linalg\.diagonal: dim1 and dim2"),
    (lambda: LA.svd(mf(np.eye(2)), driver="gesvdj"), ValueError, r"linalg\.svd: driver"),
], ids=lambda v: "" if callable(v) or isinstance(v, type) else v[:40])
def test_bad_arguments_name_the_function_and_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_linalg_is_a_minifw_attribute():
    import minifw.linalg as linalg_module
    assert minifw.linalg is linalg_module
    assert set(linalg_module.__all__) <= set(dir(linalg_module))


def test_the_torch_namespace_forms_and_tensor_methods():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 3))
    x = minifw.tensor(a)
    np.testing.assert_allclose(x.det().numpy(), np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(minifw.det(x).numpy(), np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(x.inverse().numpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(minifw.inverse(x).numpy(), np.linalg.inv(a), rtol=1e-10)
    sign, logabs = x.slogdet()
    np.testing.assert_allclose(sign.numpy() * np.exp(logabs.numpy()), np.linalg.det(a), rtol=1e-12)
    # logdet: NaN where the determinant is negative, -inf where it is zero
    want = np.where(np.linalg.det(a) < 0, np.nan, np.log(np.abs(np.linalg.det(a))))
    np.testing.assert_allclose(x.logdet().numpy(), want, rtol=1e-12)
    assert minifw.logdet(minifw.zeros(2, 2, dtype=minifw.float64)).item() == -np.inf
    np.testing.assert_allclose(x.pinverse().numpy(), np.linalg.pinv(a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.matrix_power(3).numpy(), np.linalg.matrix_power(a, 3), rtol=1e-12)
    np.testing.assert_allclose(minifw.matrix_power(x, -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-9)
    spd = minifw.tensor(a @ a.transpose(0, 2, 1) + 3 * np.eye(3), requires_grad=True)
    gradcheck(lambda m: m.logdet(), [spd])
    with pytest.raises(ValueError, match="linalg.det"):
        minifw.ones(2, 3).det()
