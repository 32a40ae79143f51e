"""minifw.special: values against PyTorch's torch.special (where installed) and against
high-precision values from mpmath (where installed), gradients by finite differences in
float64 and against PyTorch's, the functions PyTorch gives no gradient, and devices."""
import math

import numpy as np
import pytest

import minifw
from minifw import special
from gradcheck import gradcheck, gradgradcheck

F64 = minifw.float64
GRID = np.concatenate([np.linspace(-12, 12, 97), [0.0, 1e-7, -1e-7, 25.0, -25.0, 60.0]])
PROBABILITIES = np.concatenate([np.linspace(0, 1, 41), [1e-12, 1e-100, 1 - 1e-12, -0.5, 1.5]])

UNARY = ["erf", "erfc", "erfcx", "erfinv", "expit", "exp2", "expm1", "log1p", "gammaln", "digamma",
         "psi", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "sinc", "entr",
         "bessel_j0", "bessel_j1", "spherical_bessel_j0", "modified_bessel_i0",
         "modified_bessel_i1", "round"]


def inputs(name):
    if name in ("ndtri", "erfinv"):
        return PROBABILITIES if name == "ndtri" else PROBABILITIES * 2 - 1
    if name in ("gammaln", "digamma", "psi"):
        return np.concatenate([np.linspace(0.05, 30, 60), [-2.5, -0.5]])
    if name == "entr":
        return np.concatenate([np.linspace(0, 5, 21), [-1.0]])
    return GRID


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_functions_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    x = inputs(name).astype(dtype)
    got = getattr(special, name)(minifw.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype
    # PyTorch's Bessel functions are polynomial fits, 4e-7 off near x = 5 (see the mpmath test)
    rtol = {"float64": 1e-11, "float32": 2e-5}[dtype]
    atol = 1e-6 if name.startswith(("bessel", "spherical")) else {"float64": 1e-13,
                                                                     "float32": 1e-6}[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_against_high_precision_values():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    x = np.linspace(-38, 30, 137)

    def check(fn, reference, points, rtol, atol=0.0):
        got = fn(minifw.tensor(points, dtype=F64)).numpy()
        want = np.array([float(reference(mpmath.mpf(float(v)))) for v in points])
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

    check(special.ndtr, mpmath.ncdf, x, 5e-13)
    check(special.log_ndtr, lambda v: mpmath.log(mpmath.erfc(-v / mpmath.sqrt(2)) / 2) if v < 0
          else mpmath.log1p(-mpmath.erfc(v / mpmath.sqrt(2)) / 2), x, 5e-13)
    check(special.erfcx, lambda v: mpmath.exp(v * v) * mpmath.erfc(v), x[x > -20], 5e-13)
    big = np.linspace(-700, 700, 141)
    check(special.i0e, lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v)), big, 5e-15)
    check(special.i1e, lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v)), big, 5e-15, 1e-300)
    check(special.i1, lambda v: mpmath.besseli(1, v), np.linspace(-50, 50, 101), 1e-14)
    wide = np.linspace(-60, 60, 241)
    check(special.bessel_j0, lambda v: mpmath.besselj(0, v), wide, 0, 5e-13)
    check(special.bessel_j1, lambda v: mpmath.besselj(1, v), wide, 0, 5e-13)
    p = np.concatenate([np.logspace(-300, -1, 120), np.linspace(0.05, 0.95, 19),
                        1 - np.logspace(-15, -2, 14)])
    x = special.ndtri(minifw.tensor(p, dtype=F64)).numpy()
    back = np.array([float(mpmath.ncdf(mpmath.mpf(float(v)))) for v in x])
    np.testing.assert_allclose(back, p, rtol=1e-12)
    s = np.array([1.5, 2.0, 3.7, 10.0, 2.0])
    q = np.array([0.3, 4.0, 0.01, 1.0, 55.5])
    got = special.zeta(minifw.tensor(s, dtype=F64), minifw.tensor(q, dtype=F64)).numpy()
    want = [float(mpmath.zeta(a, b)) for a, b in zip(s, q)]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_erfinv_near_plus_and_minus_one():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    y = np.concatenate([1 - np.logspace(-16, -1, 31), -(1 - np.logspace(-16, -1, 31))])
    got = minifw.tensor(y, dtype=F64).erfinv().numpy()
    want = [float(mpmath.erfinv(mpmath.mpf(float(v)))) for v in y]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_edge_values():
    assert special.ndtri(minifw.tensor([0.0, 0.5, 1.0], dtype=F64)).numpy().tolist() == \
        [-math.inf, 0.0, math.inf]
    assert np.isnan(special.ndtri(minifw.tensor([-0.1, 1.1, math.nan])).numpy()).all()
    assert special.erfcx(minifw.tensor([math.inf])).item() == 0.0
    assert special.erfcx(minifw.tensor([-30.0], dtype=F64)).item() == math.inf
    assert special.log_ndtr(minifw.tensor([-1e4], dtype=F64)).item() < -4.9e7
    entr = special.entr(minifw.tensor([-1.0, 0.0, math.nan])).numpy()
    assert entr[0] == -math.inf and entr[1] == 0.0 and np.isnan(entr[2])
    z = special.zeta(minifw.tensor([1.0, 0.5, 2.0, 2.0]), minifw.tensor([1.0, 1.0, -1.0, 0.0])).numpy()
    assert z[0] == math.inf and np.isnan(z[1]) and z[2] == math.inf and z[3] == math.inf
    assert special.xlog1py(minifw.tensor([0.0]), minifw.tensor([-1.0])).item() == 0.0
    assert np.isnan(special.xlog1py(minifw.tensor([0.0]), minifw.tensor([math.nan])).item())
    assert special.i1e(minifw.tensor([math.inf, -math.inf])).numpy().tolist() == [0.0, 0.0]


def test_binary_and_other_functions_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-2, 3, 50), rng.uniform(-0.9, 4, 50)
    T = torch.tensor
    np.testing.assert_allclose(special.xlog1py(minifw.tensor(a), minifw.tensor(b)).numpy(),
                               torch.special.xlog1py(T(a), T(b)).numpy(), rtol=1e-13)
    np.testing.assert_allclose(special.xlog1py(2.0, minifw.tensor(b)).numpy(),
                               torch.special.xlog1py(2.0, T(b)).numpy(), rtol=1e-13)
    s, q = rng.uniform(1.1, 8, 50), rng.uniform(0.05, 10, 50)
    np.testing.assert_allclose(special.zeta(minifw.tensor(s), minifw.tensor(q)).numpy(),
                               torch.special.zeta(T(s), T(q)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(special.zeta(minifw.tensor(s), 2.5).numpy(),
                               torch.special.zeta(T(s), 2.5).numpy(), rtol=1e-12)
    x = np.abs(a) + 0.1
    np.testing.assert_allclose(special.gammainc(minifw.tensor(x), minifw.tensor(x + b)).numpy(),
                               torch.special.gammainc(T(x), T(x + b)).numpy(), rtol=1e-8)
    np.testing.assert_allclose(special.gammaincc(minifw.tensor(x), minifw.tensor(x + b)).numpy(),
                               torch.special.gammaincc(T(x), T(x + b)).numpy(), rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(special.polygamma(2, minifw.tensor(x)).numpy(),
                               torch.special.polygamma(2, T(x)).numpy(), rtol=1e-10)
    np.testing.assert_allclose(special.multigammaln(minifw.tensor(x + 2), 3).numpy(),
                               torch.special.multigammaln(T(x + 2), 3).numpy(), rtol=1e-12)
    np.testing.assert_allclose(special.logit(minifw.tensor(np.linspace(0, 1, 11)), 0.1).numpy(),
                               torch.special.logit(T(np.linspace(0, 1, 11)), 0.1).numpy())
    m = rng.uniform(-1, 1, (3, 4))
    for name in ("softmax", "log_softmax"):
        np.testing.assert_allclose(getattr(special, name)(minifw.tensor(m), 1).numpy(),
                                   getattr(torch.special, name)(T(m), 1).numpy(), rtol=1e-13)
    np.testing.assert_allclose(special.logsumexp(minifw.tensor(m), 0).numpy(),
                               torch.special.logsumexp(T(m), 0).numpy(), rtol=1e-13)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-1.2, 1.2, 25)
    n = np.arange(25) % 9 - 1  # degrees -1 (zero) to 7
    got = getattr(special, name)(minifw.tensor(x), minifw.tensor(n)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got = getattr(special, name)(minifw.tensor(x), 5).numpy()
    want = getattr(torch.special, name)(torch.tensor(x), 5).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_polynomials_by_hand():
    x = minifw.tensor([0.5], dtype=F64)
    assert special.chebyshev_polynomial_t(x, 3).item() == pytest.approx(4 * 0.125 - 3 * 0.5)
    assert special.hermite_polynomial_h(x, 2).item() == pytest.approx(4 * 0.25 - 2)
    assert special.legendre_polynomial_p(x, 2).item() == pytest.approx((3 * 0.25 - 1) / 2)
    assert special.laguerre_polynomial_l(x, -1).item() == 0.0
    with pytest.raises(ValueError, match="n must hold whole numbers"):
        special.legendre_polynomial_p(x, 1.5)


# moderate values: finite differences of sums of large values (I1(25) ~ 5e9) lose the digits
MODERATE = np.array([-6.0, -4.5, -2.25, -0.75, 0.5, 1.75, 3.0, 5.5])
DIFFERENTIABLE = {
    "erfcx": np.array([-1.5, -0.5, 0.5, 1.75, 3.0, 5.5, 9.0]), "ndtr": MODERATE, "log_ndtr": np.concatenate([MODERATE, [-30.0]]),
    "i1": MODERATE, "i0e": MODERATE, "i1e": MODERATE,
    "ndtri": np.array([1e-6, 0.01, 0.3, 0.5, 0.8, 0.999]),
    "entr": np.array([0.01, 0.3, 1.0, 2.5]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_by_finite_differences(name):
    x = DIFFERENTIABLE[name]
    x = x[np.abs(x) > 1e-3]  # away from 0, where some derivatives have a kink
    gradcheck(getattr(special, name), [minifw.tensor(x, dtype=F64, requires_grad=True)])


@pytest.mark.parametrize("name", ["erfcx", "ndtr", "ndtri", "log_ndtr", "i0e", "entr"])
def test_second_derivatives(name):
    x = DIFFERENTIABLE[name]
    x = x[np.abs(x) > 1e-3][:6]
    gradgradcheck(getattr(special, name), [minifw.tensor(x, dtype=F64, requires_grad=True)])


def test_binary_gradients():
    rng = np.random.default_rng(1)
    a = minifw.tensor(rng.uniform(-2, 2, 6), dtype=F64, requires_grad=True)
    b = minifw.tensor(rng.uniform(-0.5, 3, 6), dtype=F64, requires_grad=True)
    gradcheck(special.xlog1py, [a, b])
    s = minifw.tensor(rng.uniform(1.5, 5, 6), dtype=F64)
    q = minifw.tensor(rng.uniform(0.2, 4, 6), dtype=F64, requires_grad=True)
    gradcheck(special.zeta, [s, q])
    s.requires_grad_(True)
    with pytest.raises(RuntimeError, match="zeta: the derivative for 'input'"):
        special.zeta(s, q).sum().backward()


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    for name, x in DIFFERENTIABLE.items():
        mine = minifw.tensor(x, dtype=F64, requires_grad=True)
        getattr(special, name)(mine).sum().backward()
        theirs = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        getattr(torch.special, name)(theirs).sum().backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_every_name_is_torchs_and_the_rest_are_known():
    torch = pytest.importorskip("torch")
    mine = set(special.__all__)
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and
              callable(getattr(torch.special, n)) and n != "Tensor"}
    assert mine <= theirs
    assert theirs - mine == {"airy_ai", "bessel_y0", "bessel_y1", "modified_bessel_k0",
                             "modified_bessel_k1", "scaled_modified_bessel_k0",
                             "scaled_modified_bessel_k1"}  # docs/pytorch.md, "What is missing"


def test_functions_without_gradients_as_torch():
    x = minifw.tensor([0.5, 2.0], requires_grad=True)
    for name in ("bessel_j0", "bessel_j1", "spherical_bessel_j0", "modified_bessel_i0",
                 "modified_bessel_i1"):
        out = getattr(special, name)(x)
        assert not out.requires_grad and out.dtype == minifw.float32
    assert not special.hermite_polynomial_h(x, 3).requires_grad


def test_devices_and_dtypes():
    x = np.array([0.1, 0.5, 2.0])
    for name in ("erfcx", "ndtr", "i1e", "bessel_j0", "entr"):
        cpu = getattr(special, name)(minifw.tensor(x))
        sim = getattr(special, name)(minifw.tensor(x, device="cudasim"))
        assert sim.device == minifw.device("cudasim")
        np.testing.assert_array_equal(sim.cpu().numpy(), cpu.numpy())
    assert special.ndtr(minifw.tensor([1, 2])).dtype == minifw.float32  # integers: default float
    with pytest.raises(TypeError, match="special.ndtr: input must be a Tensor"):
        special.ndtr([1.0])
    with pytest.raises(TypeError, match="special.zeta: input or other must be a Tensor"):
        special.zeta(2.0, 1.0)


def test_upper_incomplete_gamma_keeps_its_digits_in_the_tail():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a = np.array([0.5, 2.0, 10.0, 3.0, 30.0])
    x = np.array([50.0, 40.0, 60.0, 0.5, 10.0])
    got = special.gammaincc(minifw.tensor(a, dtype=F64), minifw.tensor(x, dtype=F64)).numpy()
    want = [float(mpmath.gammainc(p, q, mpmath.inf, regularized=True)) for p, q in zip(a, x)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)  # 1.5e-23 for the first, not 0
    lower = special.gammainc(minifw.tensor(a, dtype=F64), minifw.tensor(x, dtype=F64)).numpy()
    want = [float(mpmath.gammainc(p, 0, q, regularized=True)) for p, q in zip(a, x)]
    np.testing.assert_allclose(lower, want, rtol=1e-12, atol=0)
    assert special.gammainc(minifw.tensor([math.inf]), minifw.tensor([2.0])).item() == 0.0
    assert special.spherical_bessel_j0(minifw.tensor([math.inf, -math.inf])).numpy().tolist() == [0, 0]


@pytest.mark.parametrize("name", ["i0", "i1", "i1e"])
def test_bessel_second_derivatives(name):
    fn = (lambda x: x.i0()) if name == "i0" else getattr(special, name)
    gradgradcheck(fn, [minifw.tensor([-2.5, -0.7, 0.4, 1.9], dtype=F64, requires_grad=True)])


def test_binary_second_derivatives():
    a = minifw.tensor([0.5, -1.5, 2.0], dtype=F64, requires_grad=True)
    b = minifw.tensor([0.3, 1.2, -0.4], dtype=F64, requires_grad=True)
    gradgradcheck(special.xlog1py, [a, b])
    s = minifw.tensor([2.5, 3.0, 4.5], dtype=F64)
    q = minifw.tensor([0.7, 1.5, 3.0], dtype=F64, requires_grad=True)
    gradgradcheck(special.zeta, [s, q])


INF, NAN = math.inf, math.nan
ZETA_EDGES = [  # (s, q, zeta(s, q) as torch.special.zeta gives it)
    (INF, 0.5, INF), (INF, 0.25, INF), (INF, 1e-300, INF), (INF, 1.0, 1.0), (INF, -0.5, INF),
    (INF, -1.5, INF), (INF, 0.0, INF), (INF, -2.0, INF), (INF, 1.5, NAN), (INF, 2.0, NAN),
    (1.0, 0.5, INF), (1.0, -3.0, INF), (1.0, NAN, INF),
    (2.0, 0.0, INF), (2.0, -1.0, INF), (2.5, -2.0, INF), (2.0, -INF, INF), (0.5, -1.0, NAN),
    (2.5, -0.5, NAN), (2.0, -0.5, 4.0 + math.pi ** 2 / 2),  # (-0.5)**-2 + zeta(2, 0.5)
    (NAN, 0.0, INF), (NAN, -1.0, INF), (NAN, -INF, INF), (NAN, 0.5, NAN), (NAN, -0.5, NAN),
    (NAN, 1.0, NAN), (2.0, NAN, NAN), (-INF, 0.5, NAN), (0.5, 0.5, NAN),
]


def test_zeta_edge_values():
    s = minifw.tensor([e[0] for e in ZETA_EDGES], dtype=F64)
    q = minifw.tensor([e[1] for e in ZETA_EDGES], dtype=F64)
    got = special.zeta(s, q).numpy()
    want = np.array([e[2] for e in ZETA_EDGES])
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    # q = inf: the limit 0, where PyTorch's gives NaN (docs/pytorch.md)
    assert special.zeta(minifw.tensor([2.0, INF], dtype=F64), INF).numpy().tolist() == [0.0, 0.0]


def test_zeta_edge_values_match_torch():
    torch = pytest.importorskip("torch")
    s = [e[0] for e in ZETA_EDGES]
    q = [e[1] for e in ZETA_EDGES]
    want = torch.special.zeta(torch.tensor(s, dtype=torch.float64),
                              torch.tensor(q, dtype=torch.float64)).numpy()
    got = special.zeta(minifw.tensor(s, dtype=F64), minifw.tensor(q, dtype=F64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
