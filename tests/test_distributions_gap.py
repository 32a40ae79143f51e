"""minifw.distributions beyond the first families: transforms, TransformedDistribution,
biject_to/transform_to, StudentT, Cauchy, HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto, Chi2,
Geometric, NegativeBinomial, FisherSnedecor, VonMises, ContinuousBernoulli, Kumaraswamy,
LogisticNormal, the relaxed Bernoulli and one-hot categorical, LowRankMultivariateNormal,
MixtureSameFamily, their kl_divergence pairs, and Gamma/Beta/Dirichlet rsample by implicit
reparameterization. Values against PyTorch's (when installed), gradients against finite
differences, samples against closed forms, and argument validation."""
import math

import numpy as np
import pytest

import minifw
import minifw.distributions as D
from gradcheck import gradcheck
from minifw.distributions import transforms as TR
from minifw.distributions.gamma_grad import standard_gamma_grad

TOL = dict(rtol=1e-9, atol=1e-11)  # float64, the same closed forms as PyTorch's: equal up to rounding
# PyTorch's Bessel functions are polynomial fits (log I0 to ~1e-7, I1 / I0 to ~2e-4 at
# concentration 200); ours are series good to float64 (checked against mpmath below)
BESSEL_TOL = dict(rtol=5e-4, atol=1e-6)


def t64(values, requires_grad=False):
    return minifw.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _torch():
    torch = pytest.importorskip("torch")
    return torch, (lambda v: torch.tensor(v, dtype=torch.float64))


def _call(obj, method, *args):
    """obj.method(*args), or NotImplementedError if it is missing there."""
    try:
        value = getattr(obj, method)
        return value(*args) if callable(value) else value
    except NotImplementedError:
        return NotImplementedError


LOC = [[0.0, -1.5, 2.0], [0.3, 4.0, -0.7]]
SCALE = [[1.0, 0.5, 2.5], [0.1, 3.0, 1.2]]
ROW = [0.5, 1.7, 3.0]
COLUMN = [[0.8], [2.2]]
REAL = [[0.2, -1.0, 5.0], [0.0, 4.0, -3.0]]
POSITIVE = [[0.2, 1.0, 5.0], [0.05, 4.0, 2.5]]
UNIT = [[0.2, 0.5, 0.9], [0.01, 0.6, 0.35]]
PROBS = [[0.2, 0.4996, 0.9], [0.05, 0.7, 0.35]]  # one inside ContinuousBernoulli's Taylor band
CONC = [[0.5, 1.0, 2.5], [3.0, 0.7, 1.2]]
DF = [[0.8, 1.5, 2.5], [3.0, 5.0, 30.0]]  # below 1, in (1, 2], (2, 4] and above 4
SIMPLEX = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]
COUNTS = [[0.0, 1.0, 3.0], [2.0, 0.0, 7.0]]
ANGLES = [[0.2, -1.0, 3.0], [0.0, 2.0, -3.0]]
W = [[0.5, -0.2], [0.1, 0.8], [-0.4, 0.3]]
TRIL = [[1.2, 0.0, 0.0], [0.4, 0.7, 0.0], [-0.3, 0.5, 1.1]]

# name: (make(distributions, tensor), a value in the support, probabilities for icdf or None)
CASES = {
    "StudentT": (lambda d, T: d.StudentT(T(DF), T(LOC), T(SCALE)), REAL, None),
    "StudentT-broadcast": (lambda d, T: d.StudentT(T(ROW), T(COLUMN)), REAL, None),
    "Cauchy": (lambda d, T: d.Cauchy(T(LOC), T(SCALE)), REAL, UNIT),
    "Cauchy-broadcast": (lambda d, T: d.Cauchy(T(ROW), T(COLUMN)), REAL, UNIT),
    "HalfNormal": (lambda d, T: d.HalfNormal(T(SCALE)), POSITIVE, UNIT),
    "HalfCauchy": (lambda d, T: d.HalfCauchy(T(ROW)), POSITIVE, UNIT),
    "Gumbel": (lambda d, T: d.Gumbel(T(LOC), T(SCALE)), REAL, UNIT),
    "Weibull": (lambda d, T: d.Weibull(T(SCALE), T(CONC)), POSITIVE, UNIT),
    "Weibull-broadcast": (lambda d, T: d.Weibull(T(ROW), T(COLUMN)), POSITIVE, UNIT),
    "Pareto": (lambda d, T: d.Pareto(T(POSITIVE), T(DF)), [[0.3, 1.0, 6.0], [0.05, 7.0, 2.5]], UNIT),
    "Chi2": (lambda d, T: d.Chi2(T(DF)), POSITIVE, None),
    "InverseGamma": (lambda d, T: d.InverseGamma(T(DF), T(SCALE)), POSITIVE, None),
    "Geometric": (lambda d, T: d.Geometric(probs=T([[0.2, 0.5, 1.0], [0.05, 0.7, 0.35]])), COUNTS, None),
    "Geometric-logits": (lambda d, T: d.Geometric(logits=T(LOC)), COUNTS, None),
    "NegativeBinomial": (lambda d, T: d.NegativeBinomial(T(CONC), T(UNIT)), COUNTS, None),
    "NegativeBinomial-logits": (lambda d, T: d.NegativeBinomial(T(COLUMN), logits=T(ROW)), COUNTS, None),
    "FisherSnedecor": (lambda d, T: d.FisherSnedecor(T(DF), T([[5.0, 1.0, 3.0], [9.0, 4.5, 2.0]])), POSITIVE, None),
    "VonMises": (lambda d, T: d.VonMises(T(LOC), T([[0.01, 1.0, 5.0], [29.0, 31.0, 200.0]])), ANGLES, None),
    "ContinuousBernoulli": (lambda d, T: d.ContinuousBernoulli(T(PROBS)), UNIT, UNIT),
    "ContinuousBernoulli-logits": (lambda d, T: d.ContinuousBernoulli(logits=T(LOC)), UNIT, UNIT),
    "Kumaraswamy": (lambda d, T: d.Kumaraswamy(T(CONC), T(POSITIVE)), UNIT, UNIT),
    "LogisticNormal": (lambda d, T: d.LogisticNormal(T([[0.1, -0.5], [1.0, 2.0]]), T([1.0, 0.5])),
                       [[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]], None),
    "RelaxedBernoulli": (lambda d, T: d.RelaxedBernoulli(T(0.7), T(UNIT)), UNIT, None),
    "RelaxedBernoulli-logits": (lambda d, T: d.RelaxedBernoulli(T(2.0), logits=T(LOC)), UNIT, None),
    "LogitRelaxedBernoulli": (lambda d, T: d.relaxed_bernoulli.LogitRelaxedBernoulli(T(0.3), T(UNIT)), REAL, None),
    "RelaxedOneHotCategorical": (lambda d, T: d.RelaxedOneHotCategorical(T(0.5), T(SIMPLEX)),
                                 [[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]], None),
    "LowRankMultivariateNormal": (lambda d, T: d.LowRankMultivariateNormal(T(LOC), T(W), T(POSITIVE)),
                                  [[[0.2, -1.0, 5.0]], [[0.0, 4.0, -3.0]]], None),
    "MixtureSameFamily": (lambda d, T: d.MixtureSameFamily(d.Categorical(probs=T([[0.3, 0.7], [0.5, 0.5]])),
                                                           d.Normal(T([[0.0, 1.0], [2.0, -1.0]]),
                                                                    T([[1.0, 2.0], [0.5, 1.0]]))),
                          [[0.3, -2.0], [1.0, 1.0], [4.0, 0.0]], None),
    "MixtureSameFamily-mvn": (lambda d, T: d.MixtureSameFamily(
        d.Categorical(logits=T([0.3, -0.2])),
        d.Independent(d.Normal(T([[0.0, 1.0, 3.0], [2.0, -1.0, 0.0]]), T([[1.0, 2.0, 1.0], [0.5, 1.0, 1.0]])), 1)),
        REAL, None),
    "Transformed-affine-exp": (lambda d, T: d.TransformedDistribution(
        d.Normal(T(LOC), T(SCALE)), [d.AffineTransform(T(ROW), -2.0), d.ExpTransform()]), POSITIVE, UNIT),
    "Transformed-tanh": (lambda d, T: d.TransformedDistribution(d.Normal(T(ROW), 1.5), d.TanhTransform()),
                         [[0.2, -0.9, 0.5]], UNIT),
    "Transformed-sigmoid-power": (lambda d, T: d.TransformedDistribution(
        d.Normal(T(LOC), T(SCALE)), [d.SigmoidTransform(), d.PowerTransform(T(COLUMN))]), UNIT, UNIT),
    "Transformed-stickbreaking": (lambda d, T: d.TransformedDistribution(
        d.Normal(T(LOC), T(SCALE)), d.StickBreakingTransform()), [[0.1, 0.2, 0.3, 0.4]], None),
}
# PyTorch's Kumaraswamy.mode takes log1p(-concentration0): NaN whenever concentration0 > 1
OUR_KUMARASWAMY_MODE = {"Kumaraswamy"}
NO_CDF = set()  # every distribution here whose PyTorch form has a cdf has one


@pytest.mark.parametrize("name", CASES)
def test_values_match_pytorch(name):
    torch, T = _torch()
    make, value, probabilities = CASES[name]
    ours, theirs = make(D, t64), make(torch.distributions, T)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    tol = BESSEL_TOL if name == "VonMises" else TOL
    checks = [("log_prob", value), ("entropy",), ("mean",), ("mode",), ("variance",), ("stddev",), ("cdf", value)]
    if probabilities is not None:
        checks.append(("icdf", probabilities))
    for method, *args in checks:
        if method == "mode" and name in OUR_KUMARASWAMY_MODE:
            continue
        if method == "cdf" and name == "Gumbel":
            theirs = make(torch.distributions, T)
            theirs.base_dist._validate_args = False  # its base Uniform refuses exp(-exp(.)) = 0
        mine = _call(ours, method, *(t64(a) for a in args))
        try:
            expected = _call(theirs, method, *(T(a) for a in args))
        except TypeError:  # PyTorch's VonMises.entropy is a broken stub
            expected = NotImplementedError
        if expected is NotImplementedError or (method == "cdf" and name in NO_CDF):
            assert mine is NotImplementedError, method
        else:
            assert mine is not NotImplementedError, method
            np.testing.assert_allclose(mine.numpy(), expected.numpy(), equal_nan=True, err_msg=method, **tol)
    assert ours.has_rsample == theirs.has_rsample
    if not name.startswith(("Pareto", "Transformed", "Mixture")):  # PyTorch wraps or prints tensors
        assert repr(ours.support) == repr(theirs.support)


def test_von_mises_bessel_functions_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    from minifw.distributions.von_mises import _log_bessel_i
    x = np.array([1e-8, 0.1, 1.0, 5.0, 15.0, 29.9, 30.1, 50.0, 300.0, 3000.0])
    for order in (0, 1):
        expected = np.array([float(mpmath.log(mpmath.besseli(order, v))) for v in x])
        np.testing.assert_allclose(_log_bessel_i(order, t64(x)).numpy(), expected, rtol=1e-14, atol=1e-15)


def test_kumaraswamy_mode_is_the_density_maximum():
    # PyTorch's is NaN here; ((c1 - 1) / (c1 c0 - 1))^(1 / c1) maximizes the density
    d = D.Kumaraswamy(t64([2.0, 3.0, 0.5]), t64([2.0, 1.5, 2.0]))
    mode = d.mode.numpy()
    assert np.isnan(mode[2])
    grid = np.linspace(1e-4, 1 - 1e-4, 20001)
    for i in range(2):
        density = d.log_prob(t64(np.stack([grid] * 3, -1))).numpy()[:, i]
        assert abs(grid[density.argmax()] - mode[i]) < 1e-4


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("MixtureSameFamily")])
def test_sample_shapes_and_expand(name):
    make, value, _ = CASES[name]
    d = make(D, t64)
    batch, event = d.batch_shape, d.event_shape
    for sample_shape in ((), (4,), (2, 3)):
        x = d.sample(sample_shape)
        assert tuple(x.shape) == sample_shape + batch + event
        assert not x.requires_grad
    big = d.expand((5,) + batch)
    assert big.batch_shape == (5,) + batch and big.event_shape == event
    assert tuple(big.sample((2,)).shape) == (2, 5) + batch + event
    x = d.sample()
    np.testing.assert_allclose(big.log_prob(x).numpy()[3], d.log_prob(x).numpy(), **TOL)


def test_mixture_sample_shapes_and_expand():
    for name in ("MixtureSameFamily", "MixtureSameFamily-mvn"):
        d = CASES[name][0](D, t64)
        x = d.sample((4,))
        assert tuple(x.shape) == (4,) + d.batch_shape + d.event_shape
        big = d.expand((3,) + d.batch_shape)
        assert tuple(big.sample((2,)).shape) == (2, 3) + d.batch_shape + d.event_shape
        np.testing.assert_allclose(big.log_prob(x.unsqueeze(1)).numpy()[:, 2], d.log_prob(x).numpy(), **TOL)


# ---- samples against closed forms ---------------------------------------------------------------
N = 200_000


def _check_moments(d, n=N, sigmas=6.0):
    """The sample mean within sigmas standard errors of the distribution's mean (and the
    variance within 10% where the fourth moment is finite enough to trust it)."""
    x = d.sample((n,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    se = np.sqrt(var / n)
    assert np.all(np.abs(x.mean(0) - mean) < sigmas * se + 1e-12), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1)


@pytest.mark.parametrize("make", [
    lambda: D.StudentT(t64([5.0, 9.0]), t64([0.5, -1.0]), t64([2.0, 0.3])),
    lambda: D.HalfNormal(t64([0.5, 2.0])),
    lambda: D.Gumbel(t64([0.5, -1.0]), t64([2.0, 0.3])),
    lambda: D.Weibull(t64([0.5, 2.0]), t64([3.0, 1.5])),
    lambda: D.Pareto(t64([0.5, 2.0]), t64([5.0, 9.0])),
    lambda: D.Chi2(t64([0.7, 4.0])),
    lambda: D.InverseGamma(t64([5.0, 9.0]), t64([2.0, 0.5])),
    lambda: D.Geometric(probs=t64([0.2, 0.8])),
    lambda: D.NegativeBinomial(t64([2.5, 10.0]), probs=t64([0.3, 0.6])),
    lambda: D.FisherSnedecor(t64([4.0, 10.0]), t64([12.0, 20.0])),
    lambda: D.VonMises(t64([0.5, -2.0]), t64([3.0, 40.0])),
    lambda: D.ContinuousBernoulli(probs=t64([0.1, 0.4999, 0.8])),
    lambda: D.Kumaraswamy(t64([0.5, 2.0]), t64([3.0, 1.5])),
    lambda: D.LowRankMultivariateNormal(t64([0.5, -1.0, 0.0]), t64(W), t64([0.2, 1.0, 0.5])),
    lambda: D.MixtureSameFamily(D.Categorical(probs=t64([0.3, 0.7])), D.Normal(t64([-2.0, 3.0]), t64([1.0, 0.5]))),
    lambda: D.Gamma(t64([0.3, 4.0]), t64([2.0, 0.5])),
    lambda: D.Beta(t64([0.3, 4.0]), t64([2.0, 0.5])),
    lambda: D.Dirichlet(t64([0.3, 4.0, 1.0])),
], ids=["StudentT", "HalfNormal", "Gumbel", "Weibull", "Pareto", "Chi2", "InverseGamma", "Geometric",
        "NegativeBinomial", "FisherSnedecor", "VonMises", "ContinuousBernoulli", "Kumaraswamy", "LowRankMultivariateNormal",
        "MixtureSameFamily", "Gamma-rsample", "Beta-rsample", "Dirichlet-rsample"])
def test_sample_moments(make):
    minifw.manual_seed(0)
    d = make()
    if isinstance(d, D.VonMises):
        # the circular mean and the circular variance 1 - E cos(x - loc)
        x = d.sample((N,)).numpy()
        np.testing.assert_allclose(np.angle(np.exp(1j * x).mean(0)), d.mean.numpy(), atol=0.02)
        np.testing.assert_allclose(1 - np.cos(x - d.loc.numpy()).mean(0), d.variance.numpy(), rtol=0.03, atol=1e-3)
        assert x.min() >= -math.pi and x.max() < math.pi
        return
    _check_moments(d)


@pytest.mark.parametrize("make", [
    lambda: D.Cauchy(t64([0.5, -1.0]), t64([2.0, 0.3])),
    lambda: D.HalfCauchy(t64([0.5, 2.0])),
    lambda: D.Gumbel(t64([0.5, -1.0]), t64([2.0, 0.3])),
    lambda: D.Weibull(t64([0.5, 2.0]), t64([0.6, 1.5])),
    lambda: D.Kumaraswamy(t64([0.5, 2.0]), t64([3.0, 0.4])),
    lambda: D.ContinuousBernoulli(logits=t64([-3.0, 0.0, 2.0])),
    lambda: D.RelaxedBernoulli(t64(0.5), probs=t64([0.3, 0.9])),
    lambda: D.MixtureSameFamily(D.Categorical(probs=t64([0.3, 0.7])), D.Cauchy(t64([-2.0, 3.0]), t64([1.0, 0.5]))),
], ids=["Cauchy", "HalfCauchy", "Gumbel", "Weibull", "Kumaraswamy", "ContinuousBernoulli", "RelaxedBernoulli",
        "MixtureSameFamily"])
def test_empirical_cdf_matches_cdf(make):
    minifw.manual_seed(1)
    d = make()
    x = d.sample((N,)).numpy()
    if isinstance(d, D.RelaxedBernoulli):
        # no cdf: P(Y <= y) = P(logit draw <= logit y) = sigmoid(T logit(y) - logits) (Concrete)
        y = np.array([0.1, 0.5, 0.9])[:, None]
        expected = 1 / (1 + np.exp(-(0.5 * np.log(y / (1 - y)) - d.logits.numpy())))
    else:
        probabilities = np.array([0.05, 0.3, 0.5, 0.8, 0.97])[:, None]
        y = d.icdf(t64(probabilities)).numpy() if not isinstance(d, D.MixtureSameFamily) else \
            np.array([-3.0, 0.0, 2.5, 3.2, 10.0])
        expected = d.cdf(t64(y)).numpy()
    empirical = (x[None] <= y[:, None]).mean(1)
    np.testing.assert_allclose(empirical, expected, atol=0.005)  # ~5 standard errors at N = 2e5


def test_relaxed_one_hot_categorical_samples_approach_one_hot():
    minifw.manual_seed(2)
    probs = t64([0.2, 0.5, 0.3])
    cold = D.RelaxedOneHotCategorical(t64(0.05), probs=probs).sample((20000,)).numpy()
    np.testing.assert_allclose(cold.sum(-1), 1.0, rtol=1e-12)
    # the argmax of a Gumbel-softmax draw is an exact Categorical draw, at any temperature
    np.testing.assert_allclose(np.bincount(cold.argmax(-1), minlength=3) / 20000, probs.numpy(), atol=0.015)
    assert np.mean(cold.max(-1) > 0.95) > 0.8


def test_a_seed_reproduces_samples():
    for make in (lambda: D.StudentT(3.0), lambda: D.Gamma(t64([0.5, 2.0]), 1.0), lambda: D.VonMises(0.0, 2.0),
                 lambda: D.NegativeBinomial(3.0, probs=0.4)):
        minifw.manual_seed(7)
        a = make().sample((5,)).numpy()
        minifw.manual_seed(7)
        np.testing.assert_array_equal(a, make().sample((5,)).numpy())


# ---- gradients -------------------------------------------------------------------------------
# name: (make(distributions, *parameters), parameters, a value); gradients of log_prob (+ entropy)
GRADIENT_CASES = {
    "StudentT": (lambda d, df, m, s: d.StudentT(df, m, s), [DF, ROW, SCALE], REAL),
    "Cauchy": (lambda d, m, s: d.Cauchy(m, s), [LOC, SCALE], REAL),
    "HalfNormal": (lambda d, s: d.HalfNormal(s), [SCALE], POSITIVE),
    "HalfCauchy": (lambda d, s: d.HalfCauchy(s), [SCALE], POSITIVE),
    "Gumbel": (lambda d, m, s: d.Gumbel(m, s), [LOC, COLUMN], REAL),
    "Weibull": (lambda d, s, c: d.Weibull(s, c), [SCALE, CONC], POSITIVE),
    "Pareto": (lambda d, s, a: d.Pareto(s, a), [[0.1, 0.2, 0.3]], [[0.5, 1.0, 6.0]]),
    "Chi2": (lambda d, df: d.Chi2(df), [DF], POSITIVE),
    "InverseGamma": (lambda d, c, r: d.InverseGamma(c, r), [CONC, COLUMN], POSITIVE),
    "Geometric": (lambda d, p: d.Geometric(probs=p), [UNIT], COUNTS),
    "NegativeBinomial": (lambda d, r, lg: d.NegativeBinomial(r, logits=lg), [CONC, LOC], COUNTS),
    "FisherSnedecor": (lambda d, a, b: d.FisherSnedecor(a, b), [DF, POSITIVE], POSITIVE),
    "VonMises": (lambda d, m, k: d.VonMises(m, k), [LOC, [[0.01, 1.0, 5.0], [29.0, 31.0, 200.0]]], ANGLES),
    "ContinuousBernoulli": (lambda d, p: d.ContinuousBernoulli(p), [[0.2, 0.45, 0.9]], UNIT),
    "Kumaraswamy": (lambda d, a, b: d.Kumaraswamy(a, b), [CONC, POSITIVE], UNIT),
    "LogisticNormal": (lambda d, m, s: d.LogisticNormal(m, s), [[0.1, -0.5], [1.0, 2.0]],
                       [[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]),
    "RelaxedBernoulli": (lambda d, t, p: d.RelaxedBernoulli(t, p), [0.7, UNIT], UNIT),
    "RelaxedOneHotCategorical": (lambda d, t, lg: d.RelaxedOneHotCategorical(t, logits=lg), [0.5, LOC],
                                 [[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]),
    "LowRankMultivariateNormal": (lambda d, m, w, c: d.LowRankMultivariateNormal(m, w, c), [LOC, W, ROW], REAL),
    "MixtureSameFamily": (lambda d, lg, m, s: d.MixtureSameFamily(d.Categorical(logits=lg), d.Normal(m, s)),
                          [[0.3, -0.4, 1.0], ROW, [1.0, 0.5, 2.0]], [[0.2], [-1.0], [3.0]]),
}
# no entropy (as PyTorch's)
_SKIP_ENTROPY = {"RelaxedBernoulli", "RelaxedOneHotCategorical", "LogisticNormal", "FisherSnedecor",
                 "MixtureSameFamily", "VonMises", "NegativeBinomial"}


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_by_finite_differences(name):
    make, params, value = GRADIENT_CASES[name]
    if name == "Pareto":
        params = [[0.1, 0.2, 0.3], [1.5, 2.0, 0.7]]

    def f(*leaves):
        d = make(D, *leaves)
        out = d.log_prob(t64(value))
        if name not in _SKIP_ENTROPY:
            out = out.sum() + d.entropy().sum()
        return out

    gradcheck(f, [t64(p, requires_grad=True) for p in params])


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_pytorch(name):
    torch, T = _torch()
    make, params, value = GRADIENT_CASES[name]
    if name == "Pareto":
        params = [[0.1, 0.2, 0.3], [1.5, 2.0, 0.7]]
    ours = [t64(p, requires_grad=True) for p in params]
    theirs = [T(p).requires_grad_() for p in params]
    make(D, *ours).log_prob(t64(value)).sum().backward()
    make(torch.distributions, *theirs).log_prob(T(value)).sum().backward()
    tol = BESSEL_TOL if name == "VonMises" else TOL
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), **tol)


@pytest.mark.parametrize("make, params, stat", [
    (lambda d, s, a: d.Pareto(s, a), [[1.0, 1.0, 1.0, 2.0], [0.5, 1.0, 2.0, 3.0]], "mean"),
    (lambda d, s, a: d.Pareto(s, a), [[1.0, 1.0, 1.0, 2.0], [0.5, 1.0, 2.0, 3.0]], "variance"),
    (lambda d, c1, c0: d.Beta(c1, c0), [[1.0, 0.5, 2.0, 1.0, 0.3], [1.0, 0.5, 3.0, 0.5, 4.0]], "mode"),
], ids=["Pareto-mean", "Pareto-variance", "Beta-mode"])
def test_gradients_where_a_statistic_is_infinite_or_undefined_match_pytorch(make, params, stat):
    """An infinite Pareto mean (alpha <= 1) or variance (alpha <= 2), and a Beta mode taken as 1
    (both concentrations below 1) or NaN: the clamped parameter gets a 0 gradient, as
    PyTorch's, not a NaN (the exact boundary, where PyTorch also gives NaN, included)."""
    torch, T = _torch()
    ours = [t64(p, requires_grad=True) for p in params]
    theirs = [T(p).requires_grad_() for p in params]
    with np.errstate(divide="ignore", invalid="ignore"):
        mine = getattr(make(D, *ours), stat)
        mine.sum().backward()
    expected = getattr(make(torch.distributions, *theirs), stat)
    expected.sum().backward()
    np.testing.assert_allclose(mine.detach().numpy(), expected.detach().numpy(), **TOL)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)


@pytest.mark.parametrize("make, params", [
    (lambda d, m, s: d.Cauchy(m, s), [ROW, COLUMN]),
    (lambda d, s: d.HalfNormal(s), [ROW]),
    (lambda d, m, s: d.Gumbel(m, s), [ROW, COLUMN]),
    (lambda d, s, c: d.Weibull(s, c), [ROW, COLUMN]),
    (lambda d, s, a: d.Pareto(s, a), [ROW, COLUMN]),
    (lambda d, a, b: d.Kumaraswamy(a, b), [ROW, COLUMN]),
    (lambda d, p: d.ContinuousBernoulli(p), [[0.2, 0.4995, 0.9]]),
    (lambda d, m, w, c: d.LowRankMultivariateNormal(m, w, c), [ROW, W, ROW]),
    (lambda d, m, s: d.LogisticNormal(m, s), [[0.3, -0.2], [1.0, 0.5]]),
    (lambda d, t, lg: d.RelaxedOneHotCategorical(t, logits=lg), [0.5, ROW]),
], ids=["Cauchy", "HalfNormal", "Gumbel", "Weibull", "Pareto", "Kumaraswamy", "ContinuousBernoulli",
        "LowRankMultivariateNormal", "LogisticNormal", "RelaxedOneHotCategorical"])
def test_rsample_gradients_by_finite_differences(make, params):
    # with the seed fixed, rsample is a smooth function of the parameters
    def f(*leaves):
        minifw.manual_seed(3)
        return make(D, *leaves).rsample((4,))

    gradcheck(f, [t64(p, requires_grad=True) for p in params])


# ---- implicit reparameterization of Gamma samples ------------------------------------------------
def _gamma_quantiles():
    """(alpha, z) pairs spanning shapes from 0.01 to 5000 and quantiles from 1e-6 to 1 - 1e-6."""
    mpmath = pytest.importorskip("mpmath")
    pairs = []
    for a in (0.01, 0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 200.0, 5000.0):
        for q in (1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 0.999999):
            lo, hi = mpmath.mpf(0), mpmath.mpf(10 * a + 100)
            for _ in range(120):  # bisection on the regularized lower incomplete gamma function
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if mpmath.gammainc(a, 0, mid, regularized=True) < q else (lo, mid)
            if lo > 1e-300:
                pairs.append((a, float(lo)))
    return pairs


def test_gamma_sample_derivative_matches_finite_differences_of_the_cdf():
    # dz/dalpha = -(dF/dalpha) / f, with dF/dalpha by a high-precision finite difference of F
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    pairs = _gamma_quantiles()
    alpha, z = np.array(pairs).T
    mine = standard_gamma_grad(alpha, z)
    for a, x, g in zip(alpha, z, mine):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        h = mpmath.mpf(10) ** -15
        dF = (mpmath.gammainc(a + h, 0, x, regularized=True) - mpmath.gammainc(a - h, 0, x, regularized=True)) / (2 * h)
        density = x ** (a - 1) * mpmath.exp(-x) / mpmath.gamma(a)
        expected = float(-dF / density)
        assert abs(g - expected) <= 1e-11 * abs(expected), (float(a), float(x), g, expected)


def test_gamma_sample_derivative_matches_pytorch():
    torch, T = _torch()
    alpha, z = np.array(_gamma_quantiles()).T
    expected = torch._standard_gamma_grad(T(alpha), T(z)).numpy()
    # PyTorch's own approximation is good to about 1e-4 relative in the bulk and 1e-2 in the far
    # tails of small shapes (ours to 1e-11: the test above)
    np.testing.assert_allclose(standard_gamma_grad(alpha, z), expected, rtol=2e-2)


def test_gamma_rsample_gradient_is_the_implicit_derivative():
    torch, T = _torch()
    minifw.manual_seed(4)
    concentration = t64([[0.3, 1.0, 4.0, 50.0]], requires_grad=True)
    rate = t64([[2.0], [0.5]], requires_grad=True)
    x = D.Gamma(concentration, rate).rsample((3,))
    weights = np.random.default_rng(0).normal(size=x.shape)
    (x * t64(weights)).sum().backward()
    z = x.detach().numpy() * rate.detach().numpy()  # the standard gamma draws
    dz = torch._standard_gamma_grad(T(np.broadcast_to(concentration.detach().numpy(), z.shape).copy()), T(z)).numpy()
    expected_c = (weights * dz / rate.detach().numpy()).sum((0, 1), keepdims=True)[0]
    np.testing.assert_allclose(concentration.grad.numpy(), expected_c, rtol=2e-3)
    expected_r = (weights * -x.detach().numpy() / rate.detach().numpy()).sum((0, 2))[:, None]
    np.testing.assert_allclose(rate.grad.numpy(), expected_r, rtol=1e-12)


@pytest.mark.parametrize("make, params, expected", [
    # d/dtheta E[f(X)] estimated by the mean of rsample gradients, against its closed form
    (lambda c, r: D.Gamma(c, r).rsample((N,)).mean(0), [[0.4, 3.0], [2.0, 0.5]],
     lambda c, r: [1 / r, -c / r ** 2]),
    (lambda c1, c0: D.Beta(c1, c0).rsample((N,)).mean(0), [[0.4, 3.0], [2.0, 0.5]],
     lambda a, b: [b / (a + b) ** 2, -a / (a + b) ** 2]),
    (lambda c: D.Dirichlet(c).rsample((N,)).mean(0)[0], [[0.5, 2.0, 1.5]],
     lambda c: [np.array([c[1] + c[2], -c[0], -c[0]]) / c.sum() ** 2]),
    (lambda df: D.Chi2(df).rsample((N,)).mean(0), [[0.7, 5.0]], lambda df: [np.ones_like(df)]),
    (lambda c, r: D.InverseGamma(c, r).rsample((N,)).mean(0), [[4.0, 9.0], [2.0, 0.5]],
     lambda c, r: [-r / (c - 1) ** 2, 1 / (c - 1)]),
    (lambda df: D.StudentT(df).rsample((N,)).pow(2).mean(0), [[5.0, 9.0]],
     lambda df: [-2 / (df - 2) ** 2]),
    (lambda a, b: D.FisherSnedecor(a, b).rsample((N,)).mean(0), [[3.0, 8.0], [12.0, 20.0]],
     lambda a, b: [np.zeros_like(a), -2 / (b - 2) ** 2]),
], ids=["Gamma", "Beta", "Dirichlet", "Chi2", "InverseGamma", "StudentT", "FisherSnedecor"])
def test_rsample_gradients_are_unbiased(make, params, expected):
    minifw.manual_seed(5)
    leaves = [t64(p, requires_grad=True) for p in params]
    out = make(*leaves)
    out.sum().backward()
    for leaf, grad in zip(leaves, expected(*[np.asarray(p) for p in params])):
        np.testing.assert_allclose(leaf.grad.numpy(), grad, rtol=0.05, atol=0.01)


# ---- transforms --------------------------------------------------------------------------------
# name: (make(distributions module or transforms module, tensor), an input x)
TRANSFORMS = {
    "Exp": (lambda tr, T: tr.ExpTransform(), REAL),
    "Affine": (lambda tr, T: tr.AffineTransform(T(ROW), T(COLUMN)), REAL),
    "Affine-negative-number": (lambda tr, T: tr.AffineTransform(1.0, -2.5), REAL),
    "Affine-event": (lambda tr, T: tr.AffineTransform(T(ROW), T(ROW), event_dim=1), REAL),
    "Sigmoid": (lambda tr, T: tr.SigmoidTransform(), REAL),
    "Softplus": (lambda tr, T: tr.SoftplusTransform(), REAL),
    "Tanh": (lambda tr, T: tr.TanhTransform(), [[0.2, -1.0, 3.0], [0.0, 0.5, -2.0]]),
    "Power": (lambda tr, T: tr.PowerTransform(T(COLUMN)), POSITIVE),
    "Power-number": (lambda tr, T: tr.PowerTransform(-1.5), POSITIVE),
    "StickBreaking": (lambda tr, T: tr.StickBreakingTransform(), REAL),
    "Compose": (lambda tr, T: tr.ComposeTransform([tr.AffineTransform(0.5, 2.0), tr.ExpTransform(),
                                                   tr.PowerTransform(0.5)]), REAL),
    "Compose-event": (lambda tr, T: tr.ComposeTransform([tr.StickBreakingTransform(), tr.AffineTransform(0.0, 2.0)]),
                      REAL),
    "Independent": (lambda tr, T: tr.IndependentTransform(tr.SigmoidTransform(), 1), REAL),
    "Reshape": (lambda tr, T: tr.ReshapeTransform((3,), (3, 1)), REAL),
    "Inverse-exp": (lambda tr, T: tr.ExpTransform().inv, POSITIVE),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_pytorch(name):
    torch, T = _torch()
    make, x = TRANSFORMS[name]
    ours, theirs = make(TR, t64), make(torch.distributions.transforms, T)
    y, y_t = ours(t64(x)), theirs(T(x))
    np.testing.assert_allclose(y.numpy(), y_t.numpy(), **TOL)
    np.testing.assert_allclose(ours.inv(y).numpy(), x, rtol=1e-9, atol=1e-10)  # without a cache
    np.testing.assert_allclose(ours.log_abs_det_jacobian(t64(x), y).numpy(),
                               theirs.log_abs_det_jacobian(T(x), y_t).numpy(), **TOL)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)
    assert ours.forward_shape((7, 2, 3)) == tuple(theirs.forward_shape((7, 2, 3)))
    assert ours.inverse_shape(ours.forward_shape((7, 2, 3))) == (7, 2, 3)


@pytest.mark.parametrize("name", ["Exp", "Sigmoid", "Tanh", "Power", "Affine", "Softplus", "StickBreaking"])
def test_log_abs_det_jacobian_by_finite_differences(name):
    # log |det dy/dx| of the Jacobian formed column by column with central differences
    transform = TRANSFORMS[name][0](TR, t64)
    x = np.asarray([0.3, 0.9, 1.7]) if name == "Power" else np.asarray([0.3, -0.8, 1.2])
    y = transform(t64(x)).numpy()
    eps = 1e-6
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        columns.append((transform(t64(x + step)).numpy() - transform(t64(x - step)).numpy()) / (2 * eps))
    jac = np.stack(columns, -1)
    if name == "StickBreaking":
        expected = np.linalg.slogdet(jac[:-1])[1]  # the last output is 1 minus the others
    else:
        expected = np.log(np.abs(np.diagonal(jac[0] if jac.ndim == 3 else jac)))
    got = transform.log_abs_det_jacobian(t64(x), t64(y)).numpy()
    np.testing.assert_allclose(got if name == "StickBreaking" else got.reshape(-1, 3)[0], expected,
                               rtol=1e-7, atol=1e-8)


def test_transform_gradients_by_finite_differences():
    for transform in (TR.SigmoidTransform(), TR.TanhTransform(), TR.StickBreakingTransform(),
                      TR.SoftplusTransform(), TR.LowerCholeskyTransform()):
        def f(x, transform=transform):
            y = transform(x)
            return (y, transform.log_abs_det_jacobian(x, y)) if transform.bijective and \
                not isinstance(transform, TR.LowerCholeskyTransform) else y
        gradcheck(f, [t64([[0.3, -0.8, 1.2], [0.1, 2.0, -0.4], [0.5, 0.6, -1.1]], requires_grad=True)])


def test_cache_returns_the_forward_input_and_keeps_its_graph():
    x = t64([0.3, 25.0], requires_grad=True)
    t = TR.TanhTransform(cache_size=1)
    y = t(x)
    assert t.inv(y) is x  # tanh(25) = 1.0 in float64: only the cache gives x back
    assert t(x) is y
    uncached = TR.TanhTransform()
    assert np.isinf(uncached.inv(uncached(x)).detach().numpy()[1])
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        TR.ExpTransform(cache_size=2)


def test_transform_properties():
    assert TR.ExpTransform().sign == 1 and TR.AffineTransform(0.0, -2.0).sign == -1
    assert TR.ComposeTransform([TR.AffineTransform(0.0, -2.0), TR.ExpTransform()]).sign == -1
    assert TR.ExpTransform() == TR.ExpTransform() and TR.ExpTransform().inv == TR.ExpTransform().inv
    assert TR.ExpTransform().inv.inv == TR.ExpTransform()
    assert TR.ExpTransform().event_dim == 0 and TR.StickBreakingTransform().event_dim == 1
    assert not TR.AbsTransform().bijective and not TR.SoftmaxTransform().bijective
    with pytest.raises(NotImplementedError, match="AbsTransform.log_abs_det_jacobian"):
        TR.AbsTransform().log_abs_det_jacobian(t64([1.0]), t64([1.0]))
    y = TR.SoftmaxTransform()(t64(REAL))
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0)
    np.testing.assert_allclose(TR.SoftmaxTransform()(TR.SoftmaxTransform().inv(y)).numpy(), y.numpy(), **TOL)
    lower = TR.LowerCholeskyTransform()(t64([[0.5, 9.0], [-1.0, 0.2]])).numpy()
    np.testing.assert_allclose(lower, [[math.exp(0.5), 0.0], [-1.0, math.exp(0.2)]], **TOL)
    with pytest.raises(TypeError, match="ExpTransform: x must be a Tensor, got list"):
        TR.ExpTransform()([1.0])
    with pytest.raises(ValueError, match="ReshapeTransform: in_shape .* different numbers of elements"):
        TR.ReshapeTransform((2, 3), (5,))
    with pytest.raises(TypeError, match="ComposeTransform: parts must be Transforms, got int"):
        TR.ComposeTransform([TR.ExpTransform(), 3])


@pytest.mark.parametrize("constraint", ["real", "positive", "greater_than", "greater_than_eq", "less_than",
                                        "unit_interval", "interval", "half_open_interval", "simplex",
                                        "real_vector", "independent", "lower_cholesky"])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to_match_pytorch(constraint, registry):
    torch, T = _torch()

    def make(c):
        return {"real": c.real, "positive": c.positive, "greater_than": c.greater_than(1.5),
                "greater_than_eq": c.greater_than_eq(-2.0), "less_than": c.less_than(3.0),
                "unit_interval": c.unit_interval, "interval": c.interval(-1.0, 4.0),
                "half_open_interval": c.half_open_interval(-1.0, 4.0), "simplex": c.simplex,
                "real_vector": c.real_vector, "independent": c.independent(c.positive, 1),
                "lower_cholesky": c.lower_cholesky}[constraint]

    ours = getattr(D, registry)
    theirs = getattr(torch.distributions, registry)
    x = [[0.3, -1.2, 2.0], [0.0, 0.7, -0.4], [1.1, -0.3, 0.2]]
    try:
        t_theirs = theirs(make(torch.distributions.constraints))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours(make(D.constraints))
        return
    t_ours = ours(make(D.constraints))
    y = t_ours(t64(x))
    np.testing.assert_allclose(y.numpy(), t_theirs(T(x)).numpy(), **TOL)
    assert bool(make(D.constraints).check(y).all())
    if t_theirs.bijective:
        np.testing.assert_allclose(t_ours.inv(y).numpy(), x, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(t_ours.log_abs_det_jacobian(t64(x), y).numpy(),
                                   t_theirs.log_abs_det_jacobian(T(x), t_theirs(T(x))).numpy(), **TOL)


def test_biject_to_refuses_integers():
    with pytest.raises(NotImplementedError, match="integers"):
        D.biject_to(D.constraints.nonnegative_integer)
    with pytest.raises(NotImplementedError, match="no transform is registered for Boolean"):
        D.transform_to(D.constraints.boolean)


def test_transformed_distribution_shapes_and_methods():
    d = D.TransformedDistribution(D.Normal(t64([0.0, 1.0]), 1.0), [D.ExpTransform()])
    assert d.has_rsample and d.batch_shape == (2,) and d.event_shape == ()
    x = d.rsample((3,))
    assert tuple(x.shape) == (3, 2) and bool((x > 0).all())
    ln = D.LogNormal(t64([0.0, 1.0]), 1.0)
    v = t64([0.5, 3.0])
    np.testing.assert_allclose(d.log_prob(v).numpy(), ln.log_prob(v).numpy(), **TOL)
    np.testing.assert_allclose(d.cdf(v).numpy(), ln.cdf(v).numpy(), **TOL)
    np.testing.assert_allclose(d.icdf(t64([0.2, 0.7])).numpy(), ln.icdf(t64([0.2, 0.7])).numpy(), **TOL)
    # a transform on vectors turns the base's batch dim into the event
    s = D.TransformedDistribution(D.Normal(t64(LOC), 1.0), D.StickBreakingTransform())
    assert s.batch_shape == (2,) and s.event_shape == (4,) and isinstance(s.base_dist, D.Independent)
    assert s.expand((5, 2)).batch_shape == (5, 2)
    with pytest.raises(TypeError, match="TransformedDistribution: transforms must be a Transform or a list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    with pytest.raises(ValueError, match="TransformedDistribution.log_prob: value must be in the support"):
        d.log_prob(t64([-1.0, 1.0]))


# ---- KL divergence ---------------------------------------------------------------------------
KL_CASES = {
    "Cauchy": (lambda d, T: d.Cauchy(T(LOC), T(SCALE)), lambda d, T: d.Cauchy(T(ROW), T(COLUMN))),
    "Gumbel": (lambda d, T: d.Gumbel(T(LOC), T(SCALE)), lambda d, T: d.Gumbel(T(ROW), T(COLUMN))),
    "HalfNormal": (lambda d, T: d.HalfNormal(T(SCALE)), lambda d, T: d.HalfNormal(T(COLUMN))),
    "Geometric": (lambda d, T: d.Geometric(probs=T(UNIT)), lambda d, T: d.Geometric(logits=T(LOC))),
    "Pareto": (lambda d, T: d.Pareto(T(SCALE), T(CONC)), lambda d, T: d.Pareto(T(COLUMN), T(ROW))),
    "ContinuousBernoulli": (lambda d, T: d.ContinuousBernoulli(T(PROBS)),
                            lambda d, T: d.ContinuousBernoulli(logits=T(LOC))),
    "Binomial": (lambda d, T: d.Binomial(T([[7.0], [5.0]]), T(UNIT)),
                 lambda d, T: d.Binomial(T([[7.0], [3.0]]), T(SIMPLEX))),
    "Chi2": (lambda d, T: d.Chi2(T(DF)), lambda d, T: d.Chi2(T(COLUMN))),
    "LowRank-LowRank": (lambda d, T: d.LowRankMultivariateNormal(T(LOC), T(W), T(POSITIVE)),
                        lambda d, T: d.LowRankMultivariateNormal(T(ROW), T(W) * 2, T(ROW))),
    "LowRank-MVN": (lambda d, T: d.LowRankMultivariateNormal(T(LOC), T(W), T(ROW)),
                    lambda d, T: d.MultivariateNormal(T(ROW), scale_tril=T([TRIL, TRIL]))),
    "MVN-LowRank": (lambda d, T: d.MultivariateNormal(T(ROW), covariance_matrix=T([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3],
                                                                                  [0.1, -0.3, 1.5]])),
                    lambda d, T: d.LowRankMultivariateNormal(T(LOC), T(W), T(POSITIVE))),
    "Transformed": (lambda d, T: d.TransformedDistribution(d.Normal(T(LOC), T(SCALE)), d.ExpTransform()),
                    lambda d, T: d.TransformedDistribution(d.Normal(T(ROW), T(COLUMN)), d.ExpTransform())),
    "Transformed-event": (lambda d, T: d.LogisticNormal(T(LOC), T(SCALE)),
                          lambda d, T: d.LogisticNormal(T(ROW), T(ROW))),
}


@pytest.mark.parametrize("name", KL_CASES)
def test_kl_matches_pytorch(name):
    torch, T = _torch()
    make_p, make_q = KL_CASES[name]
    mine = D.kl_divergence(make_p(D, t64), make_q(D, t64))
    expected = torch.distributions.kl_divergence(make_p(torch.distributions, T), make_q(torch.distributions, T))
    np.testing.assert_allclose(mine.numpy(), expected.numpy(), rtol=1e-9, atol=1e-10)


def test_kl_gradients_by_finite_differences():
    gradcheck(lambda a, b: D.kl_divergence(D.Gumbel(a, b), D.Gumbel(b, a + 1.0)),
              [t64(ROW, requires_grad=True), t64([1.0, 0.5, 2.0], requires_grad=True)])
    gradcheck(lambda m, w: D.kl_divergence(D.LowRankMultivariateNormal(m, w, t64(ROW)),
                                           D.MultivariateNormal(t64(ROW), covariance_matrix=t64(np.eye(3) * 2))),
              [t64(LOC, requires_grad=True), t64(W, requires_grad=True)])


def test_kl_refusals():
    with pytest.raises(NotImplementedError, match="different transforms"):
        D.kl_divergence(D.TransformedDistribution(D.Normal(0.0, 1.0), D.ExpTransform()),
                        D.TransformedDistribution(D.Normal(0.0, 1.0), D.SigmoidTransform()))
    with pytest.raises(NotImplementedError, match="fewer trials"):
        D.kl_divergence(D.Binomial(2, t64(0.5)), D.Binomial(3, t64(0.5)))
    with pytest.raises(NotImplementedError, match="no KL"):
        D.kl_divergence(D.StudentT(3.0), D.Normal(0.0, 1.0))


# ---- argument validation ---------------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: D.StudentT(-1.0), "StudentT: df must satisfy GreaterThan"),
    (lambda: D.Cauchy(0.0, 0.0), "Cauchy: scale must satisfy GreaterThan"),
    (lambda: D.HalfNormal(-1.0), "HalfNormal: scale must satisfy GreaterThan"),
    (lambda: D.HalfCauchy(t64([1.0, -2.0])), "HalfCauchy: scale must satisfy GreaterThan"),
    (lambda: D.Gumbel(0.0, -1.0), "Gumbel: scale must satisfy GreaterThan"),
    (lambda: D.Weibull(1.0, 0.0), "Weibull: concentration must satisfy GreaterThan"),
    (lambda: D.Pareto(1.0, -2.0), "Pareto: alpha must satisfy GreaterThan"),
    (lambda: D.Chi2(0.0), "Chi2: df must satisfy GreaterThan"),
    (lambda: D.InverseGamma(1.0, -1.0), "InverseGamma: rate must satisfy GreaterThan"),
    (lambda: D.Geometric(probs=t64(1.5)), "Geometric: probs must satisfy Interval"),
    (lambda: D.Geometric(probs=t64(0.0)), r"Geometric: probs must be in \(0, 1\]"),
    (lambda: D.NegativeBinomial(-1.0, probs=t64(0.5)), "NegativeBinomial: total_count must satisfy GreaterThanEq"),
    (lambda: D.NegativeBinomial(2.0, probs=t64(1.0)), "NegativeBinomial: probs must satisfy HalfOpenInterval"),
    (lambda: D.FisherSnedecor(1.0, 0.0), "FisherSnedecor: df2 must satisfy GreaterThan"),
    (lambda: D.VonMises(0.0, -1.0), "VonMises: concentration must satisfy GreaterThan"),
    (lambda: D.ContinuousBernoulli(probs=t64(1.5)), "ContinuousBernoulli: probs must satisfy Interval"),
    (lambda: D.ContinuousBernoulli(), "ContinuousBernoulli: give either probs or logits"),
    (lambda: D.Kumaraswamy(1.0, -1.0), "Kumaraswamy: concentration0 must satisfy GreaterThan"),
    (lambda: D.LogisticNormal(0.0, -1.0), "Normal: scale must satisfy GreaterThan"),
    (lambda: D.RelaxedBernoulli(0.5, probs=t64(2.0)), "LogitRelaxedBernoulli: probs must satisfy Interval"),
    (lambda: D.RelaxedOneHotCategorical(0.5, probs=t64([0.5, -0.1])), "Categorical: probs must satisfy Simplex"),
    (lambda: D.LowRankMultivariateNormal(t64([0.0, 1.0]), t64([[1.0], [1.0]]), t64([1.0, -1.0])),
     "LowRankMultivariateNormal: cov_diag must satisfy IndependentConstraint"),
    (lambda: D.LowRankMultivariateNormal(t64([0.0, 1.0]), t64([[1.0], [1.0], [2.0]]), t64([1.0, 1.0])),
     r"LowRankMultivariateNormal: cov_factor must be \(..., n, rank\) with n = 2"),
    (lambda: D.MixtureSameFamily(D.Categorical(probs=t64([0.5, 0.5])), D.Normal(t64([0.0, 1.0, 2.0]), 1.0)),
     "MixtureSameFamily: mixture_distribution has 2 components, but component_distribution's last batch dim is 3"),
    (lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t64([0.0, 1.0]), 1.0)),
     "MixtureSameFamily: mixture_distribution must be a Categorical, got Normal"),
    (lambda: D.StudentT(3.0).log_prob(t64(math.nan)), "StudentT.log_prob: value must be in the support"),
    (lambda: D.HalfNormal(1.0).log_prob(t64(-1.0)), "HalfNormal.log_prob: value must be in the support"),
    (lambda: D.Geometric(probs=t64(0.5)).log_prob(t64(1.5)), "Geometric.log_prob: value must be in the support"),
    (lambda: D.Pareto(2.0, 1.0).log_prob(t64(1.0)), "Pareto.log_prob: value must be in the support"),
    (lambda: D.Kumaraswamy(2.0, 1.0).log_prob(t64(1.5)), "Kumaraswamy.log_prob: value must be in the support"),
    (lambda: D.LogisticNormal(t64([0.0, 1.0]), 1.0).log_prob(t64([0.5, 0.6, 0.1])),
     "LogisticNormal.log_prob: value must be in the support"),
    (lambda: D.Gumbel(t64([0.0, 1.0]), 1.0).log_prob(t64([0.0, 1.0, 2.0])), "Gumbel.log_prob: value of shape"),
])
def test_bad_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_validate_args_false_skips_the_checks():
    d = D.HalfNormal(1.0, validate_args=False)
    assert d.log_prob(t64(-1.0)).item() == -math.inf
    assert math.isnan(D.StudentT(-1.0, validate_args=False).log_prob(t64(0.0)).item())
    D.Pareto(2.0, 1.0, validate_args=False).log_prob(t64(1.0))


def test_reachable_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("TransformedDistribution", "StudentT", "Cauchy", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull",
                 "Pareto", "Chi2", "InverseGamma", "Geometric", "NegativeBinomial", "FisherSnedecor", "VonMises",
                 "ContinuousBernoulli", "Kumaraswamy", "LogisticNormal", "RelaxedBernoulli",
                 "RelaxedOneHotCategorical", "LowRankMultivariateNormal",
                 "MixtureSameFamily", "biject_to", "transform_to", "ExpTransform", "AffineTransform",
                 "StickBreakingTransform", "ComposeTransform"):
        assert hasattr(torch.distributions, name) and hasattr(D, name), name
    assert D.transforms is TR
    from minifw.distributions.constraint_registry import biject_to
    assert biject_to is D.biject_to
