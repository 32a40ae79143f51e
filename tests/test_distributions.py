"""minifw.distributions: log_prob, entropy and kl_divergence against closed forms and against
PyTorch's (when installed), gradients by float64 finite differences, samples that a seed
reproduces and whose statistics are right, and PyTorch's default argument validation."""
import math

import numpy as np
import pytest

import minifw
from gradcheck import gradcheck
from minifw.distributions import Bernoulli, Categorical, Distribution, Normal, kl_divergence, register_kl

TOL = dict(rtol=1e-12, atol=1e-12)  # float64, the same formulas as PyTorch's: equal up to rounding


def t64(values, requires_grad=False):
    return minifw.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


LOC = [[0.0, -1.5, 2.0], [0.3, 4.0, -0.7]]
SCALE = [[1.0, 0.5, 2.5], [0.1, 3.0, 1.2]]
VALUE = [[0.2, -1.0, 5.0], [0.0, 4.0, -3.0]]
PROBS = [[0.2, 0.3, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 2.0, 3.0, 4.0]]  # last: unnormalized
LOGITS = [[0.5, -1.0, 2.0, 0.0], [3.0, 3.0, -2.0, 1.0], [-20.0, 0.0, 0.0, 15.0]]
COIN = [0.0, 0.2, 0.5, 0.9, 1.0]
COIN_LOGITS = [-30.0, -1.0, 0.0, 0.7, 25.0]


# ---- closed forms, without PyTorch ------------------------------------------------------------
def test_normal_closed_forms():
    loc, scale, value = np.array(LOC), np.array(SCALE), np.array(VALUE)
    d = Normal(t64(LOC), t64(SCALE))
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    expected = -((value - loc) ** 2) / (2 * scale ** 2) - np.log(scale) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(d.log_prob(t64(VALUE)).numpy(), expected, **TOL)
    np.testing.assert_allclose(d.entropy().numpy(), 0.5 * np.log(2 * math.pi * math.e * scale ** 2), **TOL)
    np.testing.assert_allclose(d.variance.numpy(), scale ** 2, **TOL)
    assert d.mean is d.loc and d.stddev is d.scale and d.mode is d.loc


def test_categorical_closed_forms():
    d = Categorical(probs=t64([[0.5, 0.25, 0.25], [1.0, 1.0, 2.0]]))  # normalized along the last dim
    np.testing.assert_allclose(d.probs.numpy(), [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]], **TOL)
    np.testing.assert_allclose(d.log_prob(minifw.tensor([0, 2])).numpy(), np.log([0.5, 0.5]), **TOL)
    np.testing.assert_allclose(d.entropy().numpy(), [1.5 * math.log(2)] * 2, **TOL)
    uniform = Categorical(logits=minifw.zeros(5, dtype=minifw.float64))
    assert uniform.entropy().item() == pytest.approx(math.log(5), abs=1e-15)
    assert uniform.batch_shape == () and uniform.param_shape == (5,)
    assert d.mode.tolist() == [0, 2]
    assert np.isnan(d.mean.numpy()).all() and d.mean.shape == (2,)
    assert d.enumerate_support().tolist() == [[0, 0], [1, 1], [2, 2]]


def test_bernoulli_closed_forms():
    d = Bernoulli(probs=t64([0.2, 0.5, 0.9]))
    np.testing.assert_allclose(d.log_prob(t64([1.0, 0.0, 0.0])).numpy(), np.log([0.2, 0.5, 0.1]), rtol=1e-12)
    p = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(d.entropy().numpy(), -(p * np.log(p) + (1 - p) * np.log1p(-p)), rtol=1e-12)
    np.testing.assert_allclose(Bernoulli(logits=t64([0.0, math.log(3)])).probs.numpy(), [0.5, 0.75], **TOL)
    np.testing.assert_allclose(d.variance.numpy(), p * (1 - p), **TOL)
    mode = d.mode.numpy()
    assert mode[0] == 0 and np.isnan(mode[1]) and mode[2] == 1


def test_kl_closed_forms():
    p, q = Normal(t64(1.0), t64(2.0)), Normal(t64(0.0), t64(1.0))
    # log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2
    assert kl_divergence(p, q).item() == pytest.approx(-math.log(2) + 5 / 2 - 0.5, rel=1e-14)
    a, b = Categorical(probs=t64([0.5, 0.5, 0.0])), Categorical(probs=t64([0.25, 0.25, 0.5]))
    assert kl_divergence(a, b).item() == pytest.approx(math.log(2), rel=1e-12)  # a's zero adds 0
    assert kl_divergence(b, a).item() == math.inf  # b reaches a category a cannot
    assert kl_divergence(a, a).item() == pytest.approx(0.0, abs=1e-15)
    c, e = Bernoulli(probs=t64(0.5)), Bernoulli(probs=t64(0.25))
    assert kl_divergence(c, e).item() == pytest.approx(0.5 * math.log(2 / 3) + 0.5 * math.log(2), rel=1e-12)


# ---- against PyTorch --------------------------------------------------------------------------
def _pairs(torch):
    """(minifw distribution, torch distribution, a value in its support) for each case."""
    td = torch.distributions
    T = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    return {
        "Normal": (Normal(t64(LOC), t64(SCALE)), td.Normal(T(LOC), T(SCALE)), VALUE),
        "Normal-broadcast": (Normal(t64([0.5, -1.0, 2.0]), 0.7), td.Normal(T([0.5, -1.0, 2.0]), 0.7), VALUE),
        "Categorical-probs": (Categorical(probs=t64(PROBS)), td.Categorical(probs=T(PROBS)),
                              [[0, 3, 2], [1, 1, 1]]),
        "Categorical-logits": (Categorical(logits=t64(LOGITS)), td.Categorical(logits=T(LOGITS)),
                               [[3, 0, 2]]),
        "Bernoulli-probs": (Bernoulli(probs=t64(COIN)), td.Bernoulli(probs=T(COIN)),
                            [[1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0]]),
        "Bernoulli-logits": (Bernoulli(logits=t64(COIN_LOGITS)), td.Bernoulli(logits=T(COIN_LOGITS)),
                             [1.0, 1.0, 0.0, 0.0, 1.0]),
    }


@pytest.mark.parametrize("name", ["Normal", "Normal-broadcast", "Categorical-probs", "Categorical-logits",
                                  "Bernoulli-probs", "Bernoulli-logits"])
def test_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs, value = _pairs(torch)[name]
    is_categorical = name.startswith("Categorical")
    value_ours = minifw.tensor(value) if is_categorical else t64(value)
    value_theirs = torch.tensor(value) if is_categorical else torch.tensor(value, dtype=torch.float64)
    np.testing.assert_allclose(ours.log_prob(value_ours).numpy(), theirs.log_prob(value_theirs).numpy(), **TOL)
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), **TOL)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    for prop in ("mean", "variance", "stddev", "mode", "probs", "logits"):
        if hasattr(theirs, prop) and not (prop in ("probs", "logits") and name.startswith("Normal")):
            np.testing.assert_allclose(getattr(ours, prop).numpy(), getattr(theirs, prop).numpy(),
                                       equal_nan=True, err_msg=prop, **TOL)
    assert repr(ours.support) == repr(theirs.support)
    assert {k: repr(c) for k, c in ours.arg_constraints.items()} == \
        {k: repr(c) for k, c in theirs.arg_constraints.items()}


def test_kl_matches_pytorch():
    torch = pytest.importorskip("torch")
    td = torch.distributions
    T = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    cases = [
        (Normal(t64(LOC), t64(SCALE)), Normal(t64(VALUE), 1.3),
         td.Normal(T(LOC), T(SCALE)), td.Normal(T(VALUE), 1.3)),
        (Categorical(probs=t64(PROBS)), Categorical(logits=t64(LOGITS[0])),
         td.Categorical(probs=T(PROBS)), td.Categorical(logits=T(LOGITS[0]))),
        (Categorical(logits=t64(LOGITS)), Categorical(probs=t64(PROBS)),  # zero probs in q: inf
         td.Categorical(logits=T(LOGITS)), td.Categorical(probs=T(PROBS))),
        (Bernoulli(probs=t64(COIN)), Bernoulli(logits=t64(COIN_LOGITS)),
         td.Bernoulli(probs=T(COIN)), td.Bernoulli(logits=T(COIN_LOGITS))),
        (Bernoulli(logits=t64(COIN_LOGITS)), Bernoulli(probs=t64(COIN)),
         td.Bernoulli(logits=T(COIN_LOGITS)), td.Bernoulli(probs=T(COIN))),
    ]
    for p, q, tp, tq in cases:
        np.testing.assert_allclose(kl_divergence(p, q).numpy(), td.kl_divergence(tp, tq).numpy(), **TOL)


def _grads_ours(make, params, value=None, method="log_prob"):
    leaves = [t64(p, requires_grad=True) for p in params]
    d = make(*leaves)
    out = getattr(d, method)(value) if value is not None else getattr(d, method)()
    out.sum().backward()
    return [np.zeros(leaf.shape) if leaf.grad is None else leaf.grad.numpy() for leaf in leaves]


def test_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    td = torch.distributions
    cases = [
        (Normal, td.Normal, [LOC, SCALE], t64(VALUE), "log_prob"),
        (Normal, td.Normal, [LOC, SCALE], None, "entropy"),
        (lambda p: Categorical(probs=p), lambda p: td.Categorical(probs=p), [PROBS[1:]],
         minifw.tensor([0, 3]), "log_prob"),
        (lambda p: Categorical(logits=p), lambda p: td.Categorical(logits=p), [LOGITS],
         minifw.tensor([2, 0, 3]), "log_prob"),
        (lambda p: Categorical(logits=p), lambda p: td.Categorical(logits=p), [LOGITS], None, "entropy"),
        (lambda p: Categorical(probs=p), lambda p: td.Categorical(probs=p), [PROBS[1:]], None, "entropy"),
        (lambda p: Bernoulli(logits=p), lambda p: td.Bernoulli(logits=p), [COIN_LOGITS],
         t64([1.0, 0.0, 1.0, 0.0, 1.0]), "log_prob"),
        (lambda p: Bernoulli(logits=p), lambda p: td.Bernoulli(logits=p), [COIN_LOGITS], None, "entropy"),
        (lambda p: Bernoulli(probs=p), lambda p: td.Bernoulli(probs=p), [COIN[1:4]],
         t64([1.0, 0.0, 1.0]), "log_prob"),
        (lambda p: Bernoulli(probs=p), lambda p: td.Bernoulli(probs=p), [COIN[1:4]], None, "entropy"),
    ]
    for make, make_torch, params, value, method in cases:
        ours = _grads_ours(make, params, value, method)
        leaves = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
        d = make_torch(*leaves)
        tv = None if value is None else torch.tensor(value.numpy())
        out = getattr(d, method)(tv) if tv is not None else getattr(d, method)()
        out.sum().backward()
        for g, leaf in zip(ours, leaves):
            expected = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad.numpy()  # entropy and loc
            np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-12, err_msg=method)


# ---- gradients by finite differences ----------------------------------------------------------
GRADCHECKS = {
    "Normal.log_prob": lambda loc, scale: Normal(loc, scale).log_prob(t64(VALUE)),
    "Normal.entropy": lambda loc, scale: Normal(loc, scale).entropy(),
    "Normal.kl": lambda loc, scale: kl_divergence(Normal(loc, scale), Normal(t64(VALUE), scale * 0.5 + 1)),
    "Categorical.log_prob": lambda loc, scale: Categorical(logits=loc).log_prob(minifw.tensor([2, 0])),
    "Categorical-probs.log_prob": lambda loc, scale: Categorical(probs=scale).log_prob(minifw.tensor([1, 2])),
    "Categorical.entropy": lambda loc, scale: Categorical(logits=loc).entropy() + Categorical(probs=scale).entropy(),
    "Categorical.kl": lambda loc, scale: kl_divergence(Categorical(logits=loc), Categorical(probs=scale)),
    "Bernoulli.log_prob": lambda loc, scale: Bernoulli(logits=loc).log_prob(t64([[1.0, 0.0, 1.0]])),
    "Bernoulli.entropy": lambda loc, scale: Bernoulli(logits=loc).entropy(),
    "Bernoulli.kl": lambda loc, scale: kl_divergence(Bernoulli(logits=loc), Bernoulli(probs=scale / 4)),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradients_by_finite_differences(name):
    loc, scale = t64(LOC, requires_grad=True), t64(SCALE, requires_grad=True)
    assert gradcheck(GRADCHECKS[name], [loc, scale])


def test_rsample_is_differentiable_and_sample_is_not():
    loc, scale = t64(LOC, requires_grad=True), t64(SCALE, requires_grad=True)
    d = Normal(loc, scale)
    minifw.manual_seed(3)
    x = d.rsample((4,))
    assert x.shape == (4, 2, 3) and x.requires_grad
    (x * 2).sum().backward()
    minifw.manual_seed(3)
    eps = minifw.randn(4, 2, 3, dtype=minifw.float64).numpy()
    np.testing.assert_allclose(loc.grad.numpy(), np.full((2, 3), 8.0), **TOL)
    np.testing.assert_allclose(scale.grad.numpy(), 2 * eps.sum(0), **TOL)

    def seeded_rsample(m, s):
        minifw.manual_seed(5)  # the same noise at every finite-difference evaluation
        return Normal(m, s).rsample((2,))

    assert gradcheck(seeded_rsample, [loc, scale])
    assert not d.sample().requires_grad
    assert Normal.has_rsample and not Categorical.has_rsample and not Bernoulli.has_rsample
    with pytest.raises(NotImplementedError, match="Categorical has no rsample"):
        Categorical(logits=t64([0.0, 1.0])).rsample()


def test_reinforce_step_moves_the_policy_towards_the_rewarded_action():
    logits = minifw.zeros(3, dtype=minifw.float64, requires_grad=True)
    loss = -Categorical(logits=logits).log_prob(minifw.tensor(1)) * 2.0  # action 1, advantage 2
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), -2.0 * (np.eye(3)[1] - 1 / 3), **TOL)


# ---- sampling ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    pytest.param(lambda: Normal(t64(LOC), t64(SCALE)), id="Normal"),
    pytest.param(lambda: Categorical(probs=t64(PROBS)), id="Categorical"),
    pytest.param(lambda: Bernoulli(probs=t64(COIN)), id="Bernoulli"),
])
def test_a_seed_reproduces_samples_and_shapes_are_pytorchs(make):
    d = make()
    minifw.manual_seed(7)
    first = d.sample((5, 2)).numpy()
    minifw.manual_seed(7)
    assert np.array_equal(d.sample((5, 2)).numpy(), first)
    assert not np.array_equal(d.sample((5, 2)).numpy(), first)  # the generator moved on
    assert first.shape == (5, 2) + d.batch_shape + d.event_shape
    assert d.sample().shape == d.batch_shape and d.sample([3]).shape == (3,) + d.batch_shape
    assert d.sample((0,)).shape == (0,) + d.batch_shape


def test_sample_statistics():
    minifw.manual_seed(0)
    n = 20000
    normal = Normal(t64([1.0, -2.0]), t64([0.5, 3.0])).sample((n,)).numpy()
    assert (np.abs(normal.mean(0) - [1.0, -2.0]) < 4 * np.array([0.5, 3.0]) / math.sqrt(n)).all()  # 4 sigma
    np.testing.assert_allclose(normal.std(0), [0.5, 3.0], rtol=0.03)
    draws = Categorical(probs=t64([0.1, 0.0, 0.6, 0.3])).sample((n,))
    assert draws.dtype == minifw.int64
    frequencies = np.bincount(draws.numpy(), minlength=4) / n
    np.testing.assert_allclose(frequencies, [0.1, 0.0, 0.6, 0.3], atol=0.015)
    assert frequencies[1] == 0
    coins = Bernoulli(probs=t64([0.0, 0.3, 1.0])).sample((n,)).numpy()
    assert set(np.unique(coins)) <= {0.0, 1.0} and coins.dtype == np.float64
    np.testing.assert_allclose(coins.mean(0), [0.0, 0.3, 1.0], atol=0.015)


def test_float32_parameters_give_float32_samples_and_log_probs():
    d = Normal(minifw.zeros(3), 1.0)
    assert d.sample().dtype == minifw.float32 and d.log_prob(minifw.zeros(3)).dtype == minifw.float32
    assert Categorical(logits=minifw.zeros(3)).entropy().dtype == minifw.float32
    assert Normal(0.0, 1.0).loc.dtype == minifw.get_default_dtype()


# ---- validation, as PyTorch's default ---------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    pytest.param(lambda: Normal(0.0, 0.0), r"Normal: scale must satisfy GreaterThan\(lower_bound=0.0\)",
                 id="scale-zero"),
    pytest.param(lambda: Normal(t64([0.0, 1.0]), t64([1.0, -2.0])), r"scale .* shape \(2,\): \[-2.\]",
                 id="scale-negative"),
    pytest.param(lambda: Normal(math.nan, 1.0), r"Normal: loc must satisfy Real\(\)", id="loc-nan"),
    pytest.param(lambda: Normal(t64([0.0, 1.0]), t64([1.0, 2.0, 3.0])),
                 r"Normal: the shapes of loc, scale do not broadcast together: \(2,\), \(3,\)", id="shapes"),
    pytest.param(lambda: Categorical(probs=t64([0.5, -0.1, 0.6])), "Categorical: probs must satisfy Simplex",
                 id="probs-negative"),
    pytest.param(lambda: Categorical(probs=t64([0.0, 0.0])), "Categorical: probs must satisfy Simplex",
                 id="probs-zero-sum"),
    pytest.param(lambda: Categorical(logits=t64([0.0, math.nan])), "Categorical: logits must satisfy",
                 id="logits-nan"),
    pytest.param(lambda: Categorical(probs=t64([0.5]), logits=t64([0.5])),
                 "Categorical: give either probs or logits, not both", id="both"),
    pytest.param(lambda: Categorical(), r"give either probs or logits, not both \(got neither\)", id="neither"),
    pytest.param(lambda: Categorical(logits=t64(1.0)), "Categorical: logits must have at least one dim",
                 id="0-d"),
    pytest.param(lambda: Bernoulli(probs=t64([0.5, 1.5])), r"Bernoulli: probs must satisfy Interval.*\[1.5\]",
                 id="probs-above-1"),
    pytest.param(lambda: Normal(0.0, 1.0).log_prob(0.5), "Normal.log_prob: value must be a Tensor, got float",
                 id="value-not-tensor"),
    pytest.param(lambda: Normal(t64([0.0, 1.0]), 1.0).log_prob(t64([1.0, 2.0, 3.0])),
                 r"value of shape \(3,\) does not broadcast with batch_shape \+ event_shape \(2,\)",
                 id="value-shape"),
    pytest.param(lambda: Categorical(logits=t64([0.0, 1.0])).log_prob(minifw.tensor([2])),
                 r"Categorical.log_prob: value must be in the support IntegerInterval\(lower_bound=0, "
                 r"upper_bound=1\), got invalid values .*\[2\]", id="category-out-of-range"),
    pytest.param(lambda: Categorical(logits=t64([0.0, 1.0])).log_prob(t64([0.5])),
                 "Categorical.log_prob: value must be in the support", id="category-not-integer"),
    pytest.param(lambda: Bernoulli(probs=t64(0.5)).log_prob(t64(0.3)),
                 r"Bernoulli.log_prob: value must be in the support Boolean\(\)", id="coin-value"),
])
def test_bad_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_validate_args_false_and_the_default_switch():
    Normal(0.0, -1.0, validate_args=False)  # no check, as PyTorch's
    assert Categorical(logits=t64([0.0, 1.0]), validate_args=False).log_prob(minifw.tensor([1])).shape == (1,)
    assert Normal(0.0, 1.0, validate_args=False).log_prob(0.0).item() == pytest.approx(-0.5 * math.log(2 * math.pi))
    try:
        Distribution.set_default_validate_args(False)
        Bernoulli(probs=t64(2.0))
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Bernoulli: probs must satisfy"):
        Bernoulli(probs=t64(2.0))
    with pytest.raises(ValueError, match="set_default_validate_args: value must be True or False"):
        Distribution.set_default_validate_args("yes")
    with pytest.raises(TypeError, match="Normal: scale must be a number or a Tensor, got str"):
        Normal(0.0, "1")
    with pytest.raises(TypeError, match=r"Normal: sample_shape must be a tuple of non-negative ints .*got 5"):
        Normal(0.0, 1.0).sample(5)


def test_kl_registry():
    with pytest.raises(NotImplementedError, match="no KL\\(p \\|\\| q\\) is implemented for p of type Normal "
                                                  "and q of type Categorical"):
        kl_divergence(Normal(0.0, 1.0), Categorical(logits=t64([0.0, 1.0])))

    class Narrow(Normal):
        pass

    @register_kl(Narrow, Normal)
    def _kl_narrow(p, q):
        return minifw.tensor(-1.0)

    try:
        assert kl_divergence(Narrow(0.0, 1.0), Normal(0.0, 1.0)).item() == -1.0
        assert kl_divergence(Normal(0.0, 1.0), Narrow(0.0, 2.0)).item() > 0  # falls back to Normal-Normal
    finally:
        from minifw.distributions import kl
        del kl._KL_REGISTRY[Narrow, Normal]


def test_reachable_as_in_pytorch():
    import minifw.distributions as distributions
    assert minifw.distributions is distributions
    assert distributions.normal.Normal is Normal and distributions.kl.kl_divergence is kl_divergence
    assert distributions.categorical.Categorical is Categorical and distributions.bernoulli.Bernoulli is Bernoulli
    assert distributions.constraints.positive.check(t64([1.0, 0.0])).tolist() == [True, False]
    assert repr(Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
