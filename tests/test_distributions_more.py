"""minifw.distributions beyond Normal, Categorical and Bernoulli (Uniform, Exponential, Laplace,
Gamma, Beta, Dirichlet, LogNormal, MultivariateNormal, Independent, OneHotCategorical, Poisson,
Binomial), cdf/icdf/expand, and kl_divergence between them: values and gradients against
PyTorch's (when installed), finite-difference gradients, sample statistics, densities that
integrate to one, seeds, argument validation, and the "cudasim" device."""
import math

import numpy as np
import pytest

import minifw
import minifw.distributions as D
from gradcheck import gradcheck

TOL = dict(rtol=1e-11, atol=1e-12)  # float64, the same formulas as PyTorch's: equal up to rounding
GRAD_TOL = dict(rtol=1e-9, atol=1e-11)


def t64(values, requires_grad=False):
    return minifw.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


LOC = [[0.0, -1.5, 2.0], [0.3, 4.0, -0.7]]
SCALE = [[1.0, 0.5, 2.5], [0.1, 3.0, 1.2]]
ROW = [0.5, 1.7, 3.0]  # broadcasts against a (2, 1) column
COLUMN = [[0.8], [2.2]]
REAL = [[0.2, -1.0, 5.0], [0.0, 4.0, -3.0]]
POSITIVE = [[0.2, 1.0, 5.0], [0.05, 4.0, 2.5]]
UNIT = [[0.2, 0.5, 0.9], [0.01, 0.6, 0.35]]
CONC = [[0.5, 1.0, 2.5], [3.0, 0.7, 1.2]]
SIMPLEX = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]
COV = [[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 1.5]]
COV2 = [[1.0, 0.2, 0.0], [0.2, 0.5, 0.1], [0.0, 0.1, 2.0]]
TRIL = [[1.2, 0.0, 0.0], [0.4, 0.7, 0.0], [-0.3, 0.5, 1.1]]
COUNTS = [[0.0, 1.0, 3.0], [2.0, 0.0, 7.0]]

# name: (make(distributions, tensor) -> a distribution, its parameters, a value in the support,
#        probabilities for icdf). The same lambda builds minifw's and PyTorch's.
CASES = {
    "Normal": (lambda d, T: d.Normal(T(LOC), T(SCALE)), REAL, UNIT),
    "Normal-broadcast": (lambda d, T: d.Normal(T(ROW), T(COLUMN)), REAL, UNIT),
    "Uniform": (lambda d, T: d.Uniform(T(LOC), T(LOC) + T(SCALE) * 4), [[0.5, -1.0, 5.0], [0.3, 5.0, 3.0]], UNIT),
    "Uniform-broadcast": (lambda d, T: d.Uniform(T(ROW) - 3, T(COLUMN) + 3), [[0.0, -1.0, 3.0]], UNIT),
    "Exponential": (lambda d, T: d.Exponential(T(POSITIVE)), [[0.0, 0.5, 2.0], [10.0, 0.1, 0.3]], UNIT),
    "Laplace": (lambda d, T: d.Laplace(T(LOC), T(SCALE)), REAL, UNIT),
    "Laplace-broadcast": (lambda d, T: d.Laplace(T(ROW), T(COLUMN)), REAL, UNIT),
    "Gamma": (lambda d, T: d.Gamma(T(CONC), T(POSITIVE)), POSITIVE, None),
    "Gamma-broadcast": (lambda d, T: d.Gamma(T(ROW), T(COLUMN)), [[0.0, 1.0, 2.0]], None),
    "Beta": (lambda d, T: d.Beta(T(CONC), T(POSITIVE)), UNIT, None),
    "Beta-broadcast": (lambda d, T: d.Beta(T(ROW), T(COLUMN)), UNIT, None),
    "Dirichlet": (lambda d, T: d.Dirichlet(T(CONC)), SIMPLEX, None),
    "Dirichlet-small": (lambda d, T: d.Dirichlet(T([[0.5, 0.3, 0.9], [1.5, 0.4, 2.0]])), SIMPLEX, None),
    "LogNormal": (lambda d, T: d.LogNormal(T(LOC), T(SCALE)), POSITIVE, UNIT),
    "MultivariateNormal-cov": (lambda d, T: d.MultivariateNormal(T(LOC), covariance_matrix=T(COV)), REAL, None),
    "MultivariateNormal-precision": (lambda d, T: d.MultivariateNormal(T(ROW), precision_matrix=T([COV, COV2])),
                                     REAL, None),
    "MultivariateNormal-tril": (lambda d, T: d.MultivariateNormal(T([ROW]), scale_tril=T([TRIL, TRIL])),
                                [[[0.0, 1.0, 2.0]]], None),
    "Independent": (lambda d, T: d.Independent(d.Normal(T(LOC), T(SCALE)), 1), REAL, None),
    "Independent-2": (lambda d, T: d.Independent(d.Laplace(T(LOC), T(SCALE)), 2), REAL, None),
    "OneHotCategorical": (lambda d, T: d.OneHotCategorical(probs=T(SIMPLEX)),
                          [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], None),
    "OneHotCategorical-logits": (lambda d, T: d.OneHotCategorical(logits=T(LOC)), [[0.0, 1.0, 0.0]], None),
    "Poisson": (lambda d, T: d.Poisson(T(POSITIVE)), COUNTS, None),
    "Binomial": (lambda d, T: d.Binomial(T([[3.0], [7.0]]), T(UNIT)), COUNTS, None),
    "Binomial-logits": (lambda d, T: d.Binomial(5, logits=T(LOC)), [[0.0, 5.0, 2.0]], None),
}
# what minifw does not have
NO_CDF = set()  # PyTorch's Beta has none either
NO_IMPLICIT_RSAMPLE = set()  # Gamma, Beta and Dirichlet: see tests/test_distributions_gap.py


def _torch():
    torch = pytest.importorskip("torch")
    return torch, (lambda v: torch.tensor(v, dtype=torch.float64))


def _call(obj, method, *args):
    """obj.method(*args), or the exception type it raised (NotImplementedError when missing)."""
    try:
        value = getattr(obj, method)
        return value(*args) if callable(value) else value
    except NotImplementedError:
        return NotImplementedError


# ---- against PyTorch --------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_values_match_pytorch(name):
    torch, T = _torch()
    make, value, probabilities = CASES[name]
    ours, theirs = make(D, t64), make(torch.distributions, T)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    checks = [("log_prob", value), ("entropy",), ("mean",), ("mode",), ("variance",), ("stddev",)]
    checks += [("cdf", value), ("icdf", probabilities)] if probabilities is not None else [("cdf", value)]
    for method, *args in checks:
        mine = _call(ours, method, *(t64(a) for a in args))
        expected = _call(theirs, method, *(T(a) for a in args))
        if method == "cdf" and name in NO_CDF:
            assert mine is NotImplementedError and expected is not NotImplementedError
        elif expected is NotImplementedError:
            assert mine is NotImplementedError, method
        else:
            assert mine is not NotImplementedError, method
            np.testing.assert_allclose(mine.numpy(), expected.numpy(), equal_nan=True, err_msg=method, **TOL)
    for expand in (True, False):
        mine, expected = _call(ours, "enumerate_support", expand), _call(theirs, "enumerate_support", expand)
        if expected is NotImplementedError:  # an infinite support, or Binomial's counts differing
            assert mine is NotImplementedError
        else:
            np.testing.assert_array_equal(mine.numpy(), expected.numpy())
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert ours.has_rsample == (theirs.has_rsample and name not in NO_IMPLICIT_RSAMPLE)
    if not name.startswith(("Uniform", "Binomial")):  # their bounds depend on the parameters
        assert repr(ours.support) == repr(theirs.support)
        assert {k: repr(c) for k, c in ours.arg_constraints.items()} == \
            {k: repr(c) for k, c in theirs.arg_constraints.items()}


def _leaves(lib_tensor, params):
    return [lib_tensor(p) for p in params]


# name: (make(distributions, *parameters), parameters, a value); gradients of log_prob + entropy
GRADIENT_CASES = {
    "Uniform": (lambda d, lo, hi: d.Uniform(lo, hi), [ROW, [4.0, 5.0, 6.0]], [[1.0, 2.0, 3.5]]),
    "Exponential": (lambda d, r: d.Exponential(r), [POSITIVE], POSITIVE[1:]),
    "Laplace": (lambda d, m, s: d.Laplace(m, s), [ROW, COLUMN], REAL),
    "Gamma": (lambda d, c, r: d.Gamma(c, r), [CONC, COLUMN], POSITIVE),
    "Beta": (lambda d, a, b: d.Beta(a, b), [CONC, ROW], UNIT),
    "Dirichlet": (lambda d, c: d.Dirichlet(c), [CONC], SIMPLEX),
    "LogNormal": (lambda d, m, s: d.LogNormal(m, s), [LOC, SCALE], POSITIVE),
    "MultivariateNormal-cov": (lambda d, m, c: d.MultivariateNormal(m, covariance_matrix=c), [LOC, COV], REAL),
    "MultivariateNormal-precision": (lambda d, m, p: d.MultivariateNormal(m, precision_matrix=p), [ROW, COV2],
                                     REAL),
    "MultivariateNormal-tril": (lambda d, m, L: d.MultivariateNormal(m, scale_tril=L), [LOC, TRIL], REAL),
    "Independent": (lambda d, m, s: d.Independent(d.Normal(m, s), 1), [LOC, SCALE], REAL),
    "OneHotCategorical": (lambda d, lg: d.OneHotCategorical(logits=lg), [LOC], [[1.0, 0.0, 0.0]]),
    "Poisson": (lambda d, r: d.Poisson(r), [POSITIVE], COUNTS),
    "Binomial": (lambda d, p: d.Binomial(7, probs=p), [UNIT], COUNTS),
}


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_pytorch(name):
    torch, T = _torch()
    make, params, value = GRADIENT_CASES[name]
    grads = []
    for lib, tensor in ((D, lambda v: t64(v, requires_grad=True)),
                        (torch.distributions, lambda v: T(v).requires_grad_())):
        leaves = _leaves(tensor, params)
        d = make(lib, *leaves)
        out = d.log_prob(t64(value) if lib is D else T(value)).sum()
        if name not in ("Poisson", "Binomial"):  # neither has a differentiable closed-form entropy in both
            out = out + d.entropy().sum()
        out.backward()
        grads.append([leaf.grad.numpy() for leaf in leaves])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, **GRAD_TOL)


# (p, q) made by the same lambda in both libraries
KL_CASES = {
    "Uniform": lambda d, T: (d.Uniform(T(LOC), T(LOC) + 1), d.Uniform(T(LOC) - T(SCALE), T(LOC) + 3)),
    "Uniform-outside": lambda d, T: (d.Uniform(T(ROW), 5.0), d.Uniform(T(COLUMN), 4.0)),  # inf where p leaves q
    "Exponential": lambda d, T: (d.Exponential(T(POSITIVE)), d.Exponential(T(COLUMN))),
    "Laplace": lambda d, T: (d.Laplace(T(LOC), T(SCALE)), d.Laplace(T(ROW), T(COLUMN))),
    "Gamma": lambda d, T: (d.Gamma(T(CONC), T(POSITIVE)), d.Gamma(T(ROW), T(COLUMN))),
    "Beta": lambda d, T: (d.Beta(T(CONC), T(POSITIVE)), d.Beta(T(ROW), T(COLUMN))),
    "Dirichlet": lambda d, T: (d.Dirichlet(T(CONC)), d.Dirichlet(T(ROW))),
    "LogNormal": lambda d, T: (d.LogNormal(T(LOC), T(SCALE)), d.LogNormal(T(ROW), T(COLUMN))),
    "Poisson": lambda d, T: (d.Poisson(T(POSITIVE)), d.Poisson(T(COLUMN))),
    "MultivariateNormal": lambda d, T: (d.MultivariateNormal(T(LOC), covariance_matrix=T(COV)),
                                        d.MultivariateNormal(T(ROW), scale_tril=T([[TRIL]]))),
    "Independent": lambda d, T: (d.Independent(d.Normal(T(LOC), T(SCALE)), 1),
                                 d.Independent(d.Normal(T(ROW), T(COLUMN)), 1)),
    "OneHotCategorical": lambda d, T: (d.OneHotCategorical(probs=T(SIMPLEX)), d.OneHotCategorical(logits=T(LOC))),
    "Bernoulli": lambda d, T: (d.Bernoulli(probs=T(UNIT)), d.Bernoulli(logits=T(LOC))),
    "Categorical": lambda d, T: (d.Categorical(probs=T(SIMPLEX)), d.Categorical(logits=T(ROW))),
}


@pytest.mark.parametrize("name", KL_CASES)
def test_kl_matches_pytorch(name):
    torch, T = _torch()
    p, q = KL_CASES[name](D, t64)
    tp, tq = KL_CASES[name](torch.distributions, T)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), torch.distributions.kl_divergence(tp, tq).numpy(),
                               **TOL)


@pytest.mark.parametrize("name", ["Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "LogNormal",
                                  "MultivariateNormal", "Independent", "Uniform"])
def test_kl_gradients_match_pytorch(name):
    torch, T = _torch()
    grads = []
    for lib, tensor in ((D, lambda v: t64(v, requires_grad=True)),
                        (torch.distributions, lambda v: T(v).requires_grad_())):
        made = []

        def leaf(v):
            made.append(tensor(v))
            return made[-1]

        p, q = KL_CASES[name](lib, leaf)
        lib.kl_divergence(p, q).sum().backward()
        grads.append([np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in made])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, **GRAD_TOL)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "LogNormal"])
def test_rsample_gradients_match_pytorchs_inverse_cdf(name):
    """An inverse-cdf sample x = icdf(u) moves with the parameters as PyTorch's icdf at the same
    u = cdf(x) does (PyTorch's own rsample streams differ from minifw's)."""
    torch, T = _torch()
    make = {"Normal": lambda d, a, b: d.Normal(a, b), "Uniform": lambda d, a, b: d.Uniform(a, a + b),
            "Exponential": lambda d, a, b: d.Exponential(b), "Laplace": lambda d, a, b: d.Laplace(a, b),
            "LogNormal": lambda d, a, b: d.LogNormal(a, b)}[name]
    loc, scale = t64(ROW, requires_grad=True), t64(COLUMN, requires_grad=True)
    minifw.manual_seed(11)
    x = make(D, loc, scale).rsample((4,))
    x.sum().backward()
    tloc, tscale = T(ROW).requires_grad_(), T(COLUMN).requires_grad_()
    theirs = make(torch.distributions, tloc, tscale)
    u = theirs.cdf(torch.tensor(x.detach().numpy())).detach()
    theirs.icdf(u).sum().backward()
    for ours, theirs in ((loc, tloc), (scale, tscale)):
        expected = np.zeros(ours.shape) if theirs.grad is None else theirs.grad.numpy()  # Exponential: no loc
        np.testing.assert_allclose(np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy(), expected,
                                   **GRAD_TOL)


def test_multivariate_normal_rsample_gradients_match_pytorch():
    """loc + L eps with the same eps: gradients through the Cholesky factor of the covariance."""
    torch, T = _torch()
    loc, cov = t64(LOC, requires_grad=True), t64(COV, requires_grad=True)
    minifw.manual_seed(2)
    x = D.MultivariateNormal(loc, covariance_matrix=cov).rsample((5,))
    assert x.shape == (5, 2, 3)
    (x * t64(np.arange(30).reshape(5, 2, 3) / 10)).sum().backward()
    minifw.manual_seed(2)
    eps = T(minifw.randn(5, 2, 3, dtype=minifw.float64).numpy())
    tloc, tcov = T(LOC).requires_grad_(), T(COV).requires_grad_()
    L = torch.linalg.cholesky(tcov)
    y = tloc + (L @ eps.unsqueeze(-1)).squeeze(-1)
    np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), **TOL)
    (y * T(np.arange(30).reshape(5, 2, 3) / 10)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), **GRAD_TOL)
    np.testing.assert_allclose(cov.grad.numpy(), tcov.grad.numpy(), **GRAD_TOL)


# ---- gradients by finite differences ----------------------------------------------------------
def _seeded_rsample(make, shape=(3,)):
    def fn(a, b):
        minifw.manual_seed(5)  # the same noise at every finite-difference evaluation
        return make(a, b).rsample(shape)
    return fn


GRADCHECKS = {
    "Uniform.rsample": _seeded_rsample(lambda a, b: D.Uniform(a, a + b)),
    "Exponential.rsample": _seeded_rsample(lambda a, b: D.Exponential(b)),
    "Laplace.rsample": _seeded_rsample(lambda a, b: D.Laplace(a, b)),
    "LogNormal.rsample": _seeded_rsample(lambda a, b: D.LogNormal(a, b)),
    "MultivariateNormal.rsample": _seeded_rsample(
        lambda a, b: D.MultivariateNormal(a, scale_tril=b.tril() + t64(np.eye(3)) * 2)),
    "Normal.cdf+icdf": lambda a, b: D.Normal(a, b).cdf(t64(REAL)) + D.Normal(a, b).icdf(t64(UNIT)),
    "Laplace.cdf+icdf": lambda a, b: D.Laplace(a, b).cdf(t64(REAL)) + D.Laplace(a, b).icdf(t64(UNIT)),
    "Gamma.log_prob": lambda a, b: D.Gamma(b, b * 2).log_prob(t64(POSITIVE)),
    "Beta.log_prob+entropy": lambda a, b: D.Beta(b, b + 1).log_prob(t64(UNIT)) + D.Beta(b, 2.0).entropy(),
    "Dirichlet.log_prob+entropy": lambda a, b: D.Dirichlet(b).log_prob(t64(SIMPLEX)) + D.Dirichlet(b).entropy(),
    "MultivariateNormal.log_prob": lambda a, b: D.MultivariateNormal(
        a, covariance_matrix=b @ b.mT + t64(np.eye(3))).log_prob(t64(REAL)),
    "MultivariateNormal.kl": lambda a, b: D.kl_divergence(
        D.MultivariateNormal(a, precision_matrix=b @ b.mT + t64(np.eye(3))),
        D.MultivariateNormal(a * 0.5, scale_tril=b.tril() + t64(np.eye(3)) * 2)),
    "Gamma.kl": lambda a, b: D.kl_divergence(D.Gamma(b, b + 1), D.Gamma(b * 2, 1.5)),
    "Binomial.log_prob": lambda a, b: D.Binomial(7, logits=a).log_prob(t64(COUNTS)),
    "Poisson.log_prob": lambda a, b: D.Poisson(b).log_prob(t64(COUNTS)),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradients_by_finite_differences(name):
    a, b = t64([[0.0, -1.5, 2.0], [0.3, 1.0, -0.7], [0.2, 0.1, 0.5]][:2], requires_grad=True), None
    b = t64(SCALE, requires_grad=True)
    if name.startswith("MultivariateNormal"):
        a, b = t64(LOC, requires_grad=True), t64(TRIL, requires_grad=True)
    assert gradcheck(GRADCHECKS[name], [a, b])


# ---- without PyTorch: closed forms, statistics, seeds -----------------------------------------
SAMPLERS = {  # a distribution and its mean and variance, by formula
    "Uniform": (lambda: D.Uniform(t64([-1.0, 2.0]), t64([3.0, 2.5])), [1.0, 2.25], [16 / 12, 0.25 / 12]),
    "Exponential": (lambda: D.Exponential(t64([0.5, 4.0])), [2.0, 0.25], [4.0, 1 / 16]),
    "Laplace": (lambda: D.Laplace(t64([1.0, -2.0]), t64([0.5, 3.0])), [1.0, -2.0], [0.5, 18.0]),
    "Gamma": (lambda: D.Gamma(t64([0.3, 4.0]), t64([1.0, 2.0])), [0.3, 2.0], [0.3, 1.0]),
    "Beta": (lambda: D.Beta(t64([0.5, 2.0]), t64([0.5, 5.0])), [0.5, 2 / 7], [1 / 8, 10 / (49 * 8)]),
    "LogNormal": (lambda: D.LogNormal(t64([0.0, 1.0]), t64([0.25, 0.5])),
                  [math.exp(0.25 ** 2 / 2), math.exp(1.125)],
                  [math.expm1(0.0625) * math.exp(0.0625), math.expm1(0.25) * math.exp(2.25)]),
    "Poisson": (lambda: D.Poisson(t64([0.0, 0.7, 12.0])), [0.0, 0.7, 12.0], [0.0, 0.7, 12.0]),
    "Binomial": (lambda: D.Binomial(t64([10.0, 3.0]), t64([0.3, 0.9])), [3.0, 2.7], [2.1, 0.27]),
    "Dirichlet": (lambda: D.Dirichlet(t64([1.0, 2.0, 3.0])), [1 / 6, 2 / 6, 3 / 6],
                  [5 / 252, 8 / 252, 9 / 252]),
    "OneHotCategorical": (lambda: D.OneHotCategorical(probs=t64([0.1, 0.0, 0.9])), [0.1, 0.0, 0.9],
                          [0.09, 0.0, 0.09]),
    "MultivariateNormal": (lambda: D.MultivariateNormal(t64([1.0, -1.0, 0.0]), covariance_matrix=t64(COV)),
                           [1.0, -1.0, 0.0], np.diag(COV)),
    "Independent": (lambda: D.Independent(D.Exponential(t64([[0.5, 4.0]])), 2), [[2.0, 0.25]], [[4.0, 1 / 16]]),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_sample_statistics(name):
    make, mean, variance = SAMPLERS[name]
    d = make()
    minifw.manual_seed(0)
    n = 20000
    x = d.sample((n,)).numpy()
    assert x.shape == (n,) + d.batch_shape + d.event_shape and x.dtype == np.float64
    mean, variance = np.asarray(mean), np.asarray(variance)
    np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d.variance.numpy(), variance, rtol=1e-12, atol=1e-15)
    # 5 standard errors of the mean; the variance within 5 of its standard errors (by the 4th moment)
    assert (np.abs(x.mean(0) - mean) <= 5 * np.sqrt(variance / n) + 1e-12).all(), (x.mean(0), mean)
    fourth = ((x - x.mean(0)) ** 4).mean(0)
    assert (np.abs(x.var(0) - variance) <= 5 * np.sqrt(np.maximum(fourth - variance ** 2, 0) / n) + 1e-12).all()
    assert bool(d.support.check(t64(x)).all())
    if name == "MultivariateNormal":
        np.testing.assert_allclose(np.cov(x.T), COV, atol=0.08)


@pytest.mark.parametrize("make, lo, hi", [
    pytest.param(lambda **kw: D.Normal(t64([0.0, 1.0]), t64([1.0, 0.3]), **kw), -12.0, 12.0, id="Normal"),
    pytest.param(lambda **kw: D.Uniform(t64([-1.0, 0.5]), t64([2.0, 0.75]), **kw), -2.0, 3.0, id="Uniform"),
    pytest.param(lambda **kw: D.Exponential(t64([0.5, 3.0]), **kw), 0.0, 80.0, id="Exponential"),
    pytest.param(lambda **kw: D.Laplace(t64([0.0, 1.0]), t64([1.0, 0.3]), **kw), -40.0, 40.0, id="Laplace"),
    pytest.param(lambda **kw: D.Gamma(t64([2.0, 5.0]), t64([1.0, 3.0]), **kw), 0.0, 60.0, id="Gamma"),
    pytest.param(lambda **kw: D.Beta(t64([2.0, 5.0]), t64([3.0, 1.5]), **kw), 0.0, 1.0, id="Beta"),
    pytest.param(lambda **kw: D.LogNormal(t64([0.0, 0.5]), t64([0.5, 0.3]), **kw), 1e-12, 60.0, id="LogNormal"),
])
def test_densities_integrate_to_one_and_cdfs_agree(make, lo, hi):
    d = make(validate_args=False)  # the grid runs outside Uniform's support
    grid = np.linspace(lo, hi, 200001)
    density = d.log_prob(t64(np.stack([grid, grid], 1))).exp().numpy()
    # the trapezoid rule's error on the kinks at Uniform's and Laplace's edges stays below 1e-4
    np.testing.assert_allclose(np.trapezoid(density, grid, axis=0), [1.0, 1.0], atol=2e-4)
    if isinstance(d, (D.Gamma, D.Beta)):
        return  # no cdf (the incomplete gamma and beta functions), in PyTorch's Beta either
    x = t64([[0.6, 0.6], [0.9, 0.7]])
    below = [[np.trapezoid(density[:, i] * (grid <= x.numpy()[j, i]), grid) for i in range(2)] for j in range(2)]
    np.testing.assert_allclose(d.cdf(x).numpy(), below, atol=2e-3)
    np.testing.assert_allclose(d.icdf(d.cdf(x)).numpy(), x.numpy(), rtol=1e-9)


def test_probability_masses_sum_to_one():
    k = t64(np.arange(200.0)).unsqueeze(-1)
    assert D.Poisson(t64([0.5, 30.0])).log_prob(k).exp().sum(0).numpy() == pytest.approx([1.0, 1.0], abs=1e-12)
    b = D.Binomial(12, t64([0.0, 0.3, 1.0]))
    pmf = b.log_prob(b.enumerate_support()).exp()
    assert pmf.sum(0).numpy() == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)
    assert pmf[:, 1].numpy() == pytest.approx([math.comb(12, i) * 0.3 ** i * 0.7 ** (12 - i) for i in range(13)])


def test_closed_forms():
    u = D.Uniform(t64(0.0), 4.0, validate_args=False)
    assert u.log_prob(t64([-1.0, 0.0, 3.9, 4.0])).numpy().tolist() == [-math.inf, -math.log(4), -math.log(4),
                                                                     -math.inf]
    assert u.cdf(t64([-1.0, 1.0, 5.0])).numpy().tolist() == [0.0, 0.25, 1.0]
    assert D.Exponential(2.0).log_prob(t64(0.5)).item() == pytest.approx(math.log(2) - 1)
    assert D.Laplace(1.0, 2.0).log_prob(t64(3.0)).item() == pytest.approx(-math.log(4) - 1)
    assert D.Gamma(1.0, 3.0).log_prob(t64(0.0)).item() == pytest.approx(math.log(3))  # 0 in the support
    assert D.Poisson(t64(0.0)).log_prob(t64([0.0, 1.0])).numpy().tolist() == pytest.approx([0.0, -math.inf],
                                                                                         abs=1e-14)
    assert D.Dirichlet(t64([1.0, 1.0, 1.0])).log_prob(t64([0.2, 0.3, 0.5])).item() == pytest.approx(math.log(2))
    mvn = D.MultivariateNormal(t64([0.0, 0.0]), scale_tril=t64([[2.0, 0.0], [0.0, 3.0]]))
    independent = D.Independent(D.Normal(t64([0.0, 0.0]), t64([2.0, 3.0])), 1)
    x = t64([[0.3, -1.0], [2.0, 0.5]])
    np.testing.assert_allclose(mvn.log_prob(x).numpy(), independent.log_prob(x).numpy(), **TOL)
    assert mvn.entropy().item() == pytest.approx(independent.entropy().item(), rel=1e-14)
    assert D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(0.5, 2.0)).item() == math.inf
    assert D.Normal(0.0, 1.0).icdf(t64(0.975)).item() == pytest.approx(1.959963984540054, rel=1e-12)


@pytest.mark.parametrize("make", [
    pytest.param(lambda: D.Uniform(t64(LOC), t64(LOC) + 1), id="Uniform"),
    pytest.param(lambda: D.Gamma(t64(CONC), 2.0), id="Gamma"),
    pytest.param(lambda: D.Dirichlet(t64(CONC)), id="Dirichlet"),
    pytest.param(lambda: D.MultivariateNormal(t64(LOC), covariance_matrix=t64(COV)), id="MultivariateNormal"),
    pytest.param(lambda: D.Poisson(t64(POSITIVE)), id="Poisson"),
    pytest.param(lambda: D.Binomial(10, t64(UNIT)), id="Binomial"),
    pytest.param(lambda: D.OneHotCategorical(logits=t64(LOC)), id="OneHotCategorical"),
    pytest.param(lambda: D.Independent(D.Laplace(t64(LOC), 1.0), 1), id="Independent"),
])
def test_a_seed_reproduces_samples(make):
    d = make()
    minifw.manual_seed(7)
    first = d.sample((5,)).numpy()
    minifw.manual_seed(7)
    assert np.array_equal(d.sample((5,)).numpy(), first)
    assert not np.array_equal(d.sample((5,)).numpy(), first)  # the generator moved on
    assert first.shape == (5,) + d.batch_shape + d.event_shape
    assert d.sample().shape == d.batch_shape + d.event_shape


def test_expand_broadcasts_the_batch_and_shares_the_parameters():
    loc = t64([0.0, 1.0, 2.0], requires_grad=True)
    d = D.Normal(loc, 1.0).expand((4, 3))
    assert d.batch_shape == (4, 3) and d.loc.shape == (4, 3) and d.sample((2,)).shape == (2, 4, 3)
    d.log_prob(t64(np.zeros((4, 3)))).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [0.0, -4.0, -8.0], **TOL)
    m = D.MultivariateNormal(t64([0.0, 1.0]), covariance_matrix=t64([[1.0, 0.2], [0.2, 2.0]])).expand([5])
    assert m.batch_shape == (5,) and m.event_shape == (2,) and m.covariance_matrix.shape == (5, 2, 2)
    assert m.rsample((3,)).shape == (3, 5, 2) and m.entropy().shape == (5,)
    c = D.Categorical(logits=t64([0.0, 1.0, 2.0])).expand((2, 4))
    assert c.batch_shape == (2, 4) and c.sample().shape == (2, 4) and c.probs.shape == (2, 4, 3)
    assert c.enumerate_support().shape == (3, 2, 4)
    b = D.Bernoulli(probs=t64([0.2, 0.7])).expand((3, 2))
    assert b.batch_shape == (3, 2) and b.logits.shape == (3, 2) and b.entropy().shape == (3, 2)
    h = D.OneHotCategorical(probs=t64(SIMPLEX)).expand((4, 2))
    assert h.batch_shape == (4, 2) and h.sample().shape == (4, 2, 3)
    i = D.Independent(D.Normal(t64(LOC), 1.0), 1).expand((5, 2))
    assert i.batch_shape == (5, 2) and i.base_dist.batch_shape == (5, 2, 3) and i.log_prob(t64(REAL)).shape == (5, 2)
    dirichlet = D.Dirichlet(t64(CONC[0])).expand((2,))
    assert dirichlet.concentration.shape == (2, 3) and dirichlet.entropy().shape == (2,)
    with pytest.raises(ValueError, match=r"Normal.expand: batch_shape \(3,\) cannot be broadcast to \(4, 2\)"):
        D.Normal(loc, 1.0).expand((4, 2))
    with pytest.raises(TypeError, match="Gamma.expand: batch_shape must be a tuple"):
        D.Gamma(1.0, 1.0).expand(3)


def test_rsample_where_pytorch_has_it_and_the_difference_stated():
    for d in (D.Uniform(0.0, 1.0), D.Exponential(1.0), D.Laplace(0.0, 1.0), D.LogNormal(0.0, 1.0),
              D.MultivariateNormal(t64([0.0]), scale_tril=t64([[1.0]])), D.Independent(D.Normal(t64([0.0]), 1.0), 1)):
        assert d.has_rsample and not d.sample().requires_grad
    for d in (D.Gamma(1.0, 1.0), D.Beta(1.0, 1.0), D.Dirichlet(t64([1.0, 1.0]))):
        assert d.has_rsample and not d.sample().requires_grad  # implicit reparameterization
    for d in (D.Poisson(1.0), D.Binomial(3, t64(0.5)), D.OneHotCategorical(probs=t64([0.5, 0.5]))):
        assert not d.has_rsample
        with pytest.raises(NotImplementedError, match="has no rsample"):
            d.rsample()
    with pytest.raises(NotImplementedError, match="Bernoulli has no cdf"):
        D.Bernoulli(probs=t64(0.5)).cdf(t64(1.0))
    with pytest.raises(NotImplementedError, match="Binomial.entropy: needs one total_count"):
        D.Binomial(t64([2.0, 3.0]), t64(0.5)).entropy()


def test_float32_parameters_give_float32_results():
    for d in (D.Gamma(minifw.ones(3), 1.0), D.Laplace(minifw.zeros(3), 1.0), D.Poisson(minifw.ones(3)),
              D.Dirichlet(minifw.ones(3)), D.MultivariateNormal(minifw.zeros(2), scale_tril=minifw.eye(2))):
        x = d.sample()
        assert x.dtype == minifw.float32 and d.log_prob(x).dtype == minifw.float32


# ---- validation, as PyTorch's default ---------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    pytest.param(lambda: D.Uniform(t64([0.0, 1.0]), t64([1.0, 1.0])),
                 r"Uniform: low must satisfy LessThan\(upper_bound=.*\[1.\]", id="uniform-empty"),
    pytest.param(lambda: D.Exponential(t64([1.0, 0.0])), r"Exponential: rate must satisfy GreaterThan\(lower_bound="
                 r"0.0\), got invalid values in a tensor of shape \(2,\): \[0.\]", id="rate-zero"),
    pytest.param(lambda: D.Laplace(0.0, -1.0), r"Laplace: scale must satisfy GreaterThan", id="scale-negative"),
    pytest.param(lambda: D.Gamma(t64([1.0, -2.0]), 1.0), r"Gamma: concentration must satisfy .*\[-2.\]",
                 id="concentration-negative"),
    pytest.param(lambda: D.Beta(1.0, 0.0), "Beta: concentration0 must satisfy GreaterThan", id="beta"),
    pytest.param(lambda: D.Dirichlet(t64([1.0, 0.0])), r"Dirichlet: concentration must satisfy "
                 r"IndependentConstraint\(GreaterThan\(lower_bound=0.0\), 1\)", id="dirichlet"),
    pytest.param(lambda: D.Dirichlet(t64(1.0)), "Dirichlet: concentration must have at least one dim",
                 id="dirichlet-0-d"),
    pytest.param(lambda: D.Poisson(-0.5), r"Poisson: rate must satisfy GreaterThanEq\(lower_bound=0.0\)",
                 id="poisson"),
    pytest.param(lambda: D.Binomial(2.5, t64(0.5)), r"Binomial: total_count must satisfy "
                 r"IntegerGreaterThan\(lower_bound=0\)", id="binomial-count"),
    pytest.param(lambda: D.Binomial(3, t64(0.5), logits=t64(0.0)), "Binomial: give either probs or logits",
                 id="binomial-both"),
    pytest.param(lambda: D.LogNormal(0.0, 0.0), "LogNormal: scale must satisfy", id="lognormal"),
    pytest.param(lambda: D.MultivariateNormal(t64([0.0, 0.0]),
                                              covariance_matrix=t64([[1.0, 2.0], [2.0, 1.0]])),
                 r"MultivariateNormal: covariance_matrix must satisfy PositiveDefinite\(\)",
                 id="not-positive-definite"),
    pytest.param(lambda: D.MultivariateNormal(t64([0.0, 0.0]), scale_tril=t64([[1.0, 0.5], [0.0, 1.0]])),
                 r"MultivariateNormal: scale_tril must satisfy LowerCholesky\(\)", id="not-lower"),
    pytest.param(lambda: D.MultivariateNormal(t64([0.0, 0.0]), covariance_matrix=t64(np.eye(2)),
                                              scale_tril=t64(np.eye(2))),
                 "give exactly one of covariance_matrix, precision_matrix and scale_tril, got covariance_matrix, "
                 "scale_tril", id="mvn-two"),
    pytest.param(lambda: D.MultivariateNormal(t64([0.0, 0.0]), scale_tril=t64(np.eye(3))),
                 r"scale_tril must be \(..., n, n\) with n = 2 \(loc's last dim\), got a tensor of shape \(3, 3\)",
                 id="mvn-size"),
    pytest.param(lambda: D.MultivariateNormal(t64(0.0), scale_tril=t64(np.eye(1))),
                 "loc must have at least one dim", id="mvn-0-d"),
    pytest.param(lambda: D.Independent(D.Normal(t64([0.0]), 1.0), 2),
                 r"Independent: reinterpreted_batch_ndims must be an int in \[0, 1\] .* got 2", id="independent"),
    pytest.param(lambda: D.OneHotCategorical(probs=t64([0.5, -0.5])), "OneHotCategorical: probs must satisfy Simplex",
                 id="one-hot-probs"),
    pytest.param(lambda: D.Exponential(1.0).log_prob(t64(-1.0)),
                 r"Exponential.log_prob: value must be in the support GreaterThanEq\(lower_bound=0.0\), got invalid "
                 r"values .*\[-1.\]", id="exponential-value"),
    pytest.param(lambda: D.Normal(0.0, 1.0).cdf(t64([math.nan])),
                 r"Normal.cdf: value must be in the support Real\(\)", id="normal-cdf-value"),
    pytest.param(lambda: D.Beta(1.0, 2.0).log_prob(t64(1.5)), "Beta.log_prob: value must be in the support Interval",
                 id="beta-value"),
    pytest.param(lambda: D.Poisson(1.0).log_prob(t64(0.5)), "Poisson.log_prob: value must be in the support",
                 id="poisson-value"),
    pytest.param(lambda: D.Dirichlet(t64([1.0, 1.0])).log_prob(t64([0.5, 0.6])),
                 r"Dirichlet.log_prob: value must be in the support Simplex\(\)", id="dirichlet-value"),
    pytest.param(lambda: D.MultivariateNormal(t64([0.0, 0.0]), scale_tril=t64(np.eye(2))).log_prob(t64([1.0])),
                 r"MultivariateNormal.log_prob: the right-most dims of value must be the event shape \(2,\)",
                 id="mvn-value"),
    pytest.param(lambda: D.OneHotCategorical(probs=t64([0.5, 0.5])).log_prob(t64([1.0, 1.0])),
                 r"OneHotCategorical.log_prob: value must be in the support OneHot\(\)", id="one-hot-value"),
    pytest.param(lambda: D.Binomial(3, t64(0.5)).log_prob(t64(4.0)),
                 r"Binomial.log_prob: value must be in the support IntegerInterval", id="binomial-value"),
])
def test_bad_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_validate_args_false_skips_the_checks():
    assert D.Exponential(-1.0, validate_args=False).rate.item() == -1.0
    assert D.Gamma(2.0, 1.0, validate_args=False).log_prob(t64(-1.0)).isnan().item()
    assert D.Uniform(0.0, 1.0, validate_args=False).log_prob(t64(2.0)).item() == -math.inf
    with pytest.raises(NotImplementedError, match="kl_divergence: Independent distributions with different"):
        D.kl_divergence(D.Independent(D.Normal(t64([[0.0]]), 1.0), 1), D.Independent(D.Normal(t64([[0.0]]), 1.0), 2))


# ---- on the "cudasim" device ------------------------------------------------------------------
@pytest.mark.parametrize("make, value", [
    pytest.param(lambda dev: D.Normal(t64(LOC).to(dev), t64(SCALE).to(dev)), REAL, id="Normal"),
    pytest.param(lambda dev: D.Laplace(t64(LOC).to(dev), t64(SCALE).to(dev)), REAL, id="Laplace"),
    pytest.param(lambda dev: D.Exponential(t64(POSITIVE).to(dev)), POSITIVE, id="Exponential"),
    pytest.param(lambda dev: D.Gamma(t64(CONC).to(dev), t64(POSITIVE).to(dev)), POSITIVE, id="Gamma"),
    pytest.param(lambda dev: D.Dirichlet(t64(CONC).to(dev)), SIMPLEX, id="Dirichlet"),
    pytest.param(lambda dev: D.MultivariateNormal(t64(LOC).to(dev), covariance_matrix=t64(COV).to(dev)), REAL,
                 id="MultivariateNormal"),
    pytest.param(lambda dev: D.Poisson(t64(POSITIVE).to(dev)), COUNTS, id="Poisson"),
])
def test_cudasim_matches_the_cpu(make, value):
    results = {}
    for dev in ("cpu", "cudasim"):
        d = make(dev)
        minifw.manual_seed(3)
        x = d.rsample((4,)) if d.has_rsample else d.sample((4,))
        lp = d.log_prob(t64(value).to(dev))
        assert x.device == d.mean.device and lp.device == d.mean.device and str(lp.device) == dev
        results[dev] = (x.detach().cpu().numpy(), lp.detach().cpu().numpy())
    for cpu, sim in zip(results["cpu"], results["cudasim"]):
        np.testing.assert_allclose(sim, cpu, rtol=1e-12, atol=1e-14)


def test_reachable_as_in_pytorch():
    assert D.uniform.Uniform is D.Uniform and D.multivariate_normal.MultivariateNormal is D.MultivariateNormal
    assert D.gamma.Gamma is D.Gamma and D.one_hot_categorical.OneHotCategorical is D.OneHotCategorical
    assert D.constraints.nonnegative.check(t64([0.0, -1.0])).tolist() == [True, False]
    assert repr(D.Independent(D.Normal(0.0, t64([1.0])), 1)) == "Independent(Normal(loc: 0.0, scale: 1.0), 1)"
    assert repr(D.Gamma(2.0, 3.0)) == "Gamma(concentration: 2.0, rate: 3.0)"
