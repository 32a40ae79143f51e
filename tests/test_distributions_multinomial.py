"""Multinomial and OneHotCategoricalStraightThrough: log_prob, mean, variance, entropy
(against exact enumeration and PyTorch), samples, expand, the straight-through gradient and
bad arguments."""
import itertools
import math

import numpy as np
import pytest

import minifw
from minifw import distributions as D
from gradcheck import gradcheck

F64 = minifw.float64


def exact_entropy(n, p):
    h = 0.0
    for x in itertools.product(range(n + 1), repeat=len(p)):
        if sum(x) != n or any(k and q == 0 for k, q in zip(x, p)):
            continue  # impossible counts
        lp = math.lgamma(n + 1) - sum(math.lgamma(k + 1) for k in x) + \
            sum(k * math.log(q) for k, q in zip(x, p) if k)
        h -= math.exp(lp) * lp
    return h


@pytest.mark.parametrize("n, p", [(5, [0.2, 0.3, 0.5]), (1, [0.5, 0.5]), (7, [0.1, 0.6, 0.05, 0.25]),
                                  (0, [0.3, 0.7]), (4, [0.0, 0.4, 0.6])])
def test_entropy_and_moments_by_hand(n, p):
    d = D.Multinomial(n, minifw.tensor(p, dtype=F64))
    assert d.entropy().item() == pytest.approx(exact_entropy(n, p), rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(d.mean.numpy(), n * np.array(p))
    np.testing.assert_allclose(d.variance.numpy(), n * np.array(p) * (1 - np.array(p)))
    assert d.event_shape == (len(p),) and d.batch_shape == ()


def test_values_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=3)
    counts = np.array([[1, 2, 0, 3], [6, 0, 0, 0], [0, 1, 4, 1]], dtype=np.float64)
    for kw, tkw in (({"probs": minifw.tensor(probs)}, {"probs": torch.tensor(probs)}),
                    ({"logits": minifw.tensor(np.log(probs) + 1.3)},
                     {"logits": torch.tensor(np.log(probs) + 1.3)})):
        mine, theirs = D.Multinomial(6, **kw), torch.distributions.Multinomial(6, **tkw)
        np.testing.assert_allclose(mine.log_prob(minifw.tensor(counts)).numpy(),
                                   theirs.log_prob(torch.tensor(counts)).numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.mean.numpy(), theirs.mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.variance.numpy(), theirs.variance.numpy(), rtol=1e-12)
        # PyTorch's entropy takes lgamma(total_count + 1) in float32: 2e-8 off the exact value
        np.testing.assert_allclose(mine.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-6)
    zero = np.array([0.0, 0.5, 0.5])
    assert D.Multinomial(2, minifw.tensor(zero)).log_prob(minifw.tensor([0.0, 1.0, 1.0])).item() == \
        pytest.approx(torch.distributions.Multinomial(2, torch.tensor(zero)).log_prob(
            torch.tensor([0.0, 1.0, 1.0])).item())


def test_samples():
    minifw.manual_seed(0)
    d = D.Multinomial(10, minifw.tensor([[0.1, 0.9], [0.5, 0.5]], dtype=F64))
    s = d.sample((4000,))
    assert s.shape == (4000, 2, 2) and s.dtype == F64
    assert (s.numpy().sum(-1) == 10).all()
    np.testing.assert_allclose(s.numpy().mean(0), [[1.0, 9.0], [5.0, 5.0]], atol=0.1)
    e = d.expand((3, 2))
    assert e.sample().shape == (3, 2, 2) and e.log_prob(minifw.ones(3, 2, 2) * 5).shape == (3, 2)


def test_gradients():
    counts = minifw.tensor([2.0, 1.0, 3.0], dtype=F64)
    gradcheck(lambda p: D.Multinomial(6, probs=p / p.sum()).log_prob(counts),
              [minifw.tensor([0.2, 0.3, 0.5], dtype=F64, requires_grad=True)])
    gradcheck(lambda lg: D.Multinomial(4, logits=lg).entropy(),
              [minifw.tensor([0.1, -0.4, 0.8], dtype=F64, requires_grad=True)])


def test_bad_arguments():
    with pytest.raises(TypeError, match="Multinomial: total_count must be an int"):
        D.Multinomial(2.5, minifw.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="Multinomial: total_count must be >= 0"):
        D.Multinomial(-1, minifw.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="at least one dim"):
        D.Multinomial(2, minifw.tensor(0.5))
    d = D.Multinomial(3, minifw.tensor([0.5, 0.5]), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(minifw.tensor([-1.0, 2.0]))
    assert not d.support.check(minifw.tensor([2.0, 2.0])).item()


def test_straight_through_one_hot():
    p = minifw.tensor([0.2, 0.5, 0.3], dtype=F64, requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(probs=p)
    assert d.has_rsample
    minifw.manual_seed(1)
    draws = d.rsample((5,))
    assert draws.shape == (5, 3) and set(np.unique(draws.detach().numpy())) <= {0.0, 1.0}
    assert (draws.detach().numpy().sum(-1) == 1).all()
    w = minifw.tensor(np.arange(15.0).reshape(5, 3), dtype=F64)
    (draws * w).sum().backward()
    # d draws / d probs is the identity per draw, and probs = p / p.sum() (p sums to 1 here):
    # the weights summed over draws, less their mean under p
    g = w.numpy().sum(0)
    np.testing.assert_allclose(p.grad.numpy(), g - (p.detach().numpy() * g).sum())
    torch = pytest.importorskip("torch")
    assert torch.distributions.OneHotCategoricalStraightThrough.has_rsample
