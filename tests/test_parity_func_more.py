"""Parity with PyTorch's function transforms, linalg, special functions and distributions:
cases where minifw's results once differed from PyTorch's (values worked out by hand or
from series, so the tests need no PyTorch)."""
import math

import numpy as np
import pytest

import minifw
from minifw import special

F64 = minifw.float64
EULER_GAMMA = 0.57721566490153286061
ZETA3 = 1.2020569031595942854


def _lgamma_taylor(z, at):
    """lgamma(at + z) for |z| tiny, at 1 or 2, from the first three terms of its series."""
    one = -EULER_GAMMA * z + (math.pi ** 2 / 12) * z ** 2 - ZETA3 / 3 * z ** 3
    return one if at == 1 else math.log1p(z) + one


@pytest.mark.parametrize("at", [1, 2])
@pytest.mark.parametrize("z", [1e-10, -1e-10, 1e-8, -3e-7])
def test_lgamma_is_accurate_relative_to_its_value_near_its_zeros(at, z):
    got = minifw.tensor([at + z], dtype=F64).lgamma().item()
    want = _lgamma_taylor(z, at)
    assert got == pytest.approx(want, rel=1e-13)
    assert special.gammaln(minifw.tensor([at + z], dtype=F64)).item() == pytest.approx(want, rel=1e-13)


def test_lgamma_is_exactly_zero_at_one_and_two():
    for dtype in (minifw.float32, F64):
        out = minifw.tensor([1.0, 2.0], dtype=dtype).lgamma()
        assert out.tolist() == [0.0, 0.0]


def test_lgamma_keeps_its_values_across_the_series_boundaries():
    xs = [0.5, 0.4999, 1.5, 1.5001, 2.5, 2.5001, 3.0, 0.75, 2.25]
    got = minifw.tensor(xs, dtype=F64).lgamma().tolist()
    for x, g in zip(xs, got):
        assert g == pytest.approx(math.lgamma(x), rel=1e-13, abs=1e-15)


def test_digamma_at_negative_zero_is_plus_infinity():
    x = minifw.tensor([0.0, -0.0], dtype=F64)
    assert x.digamma().tolist() == [-math.inf, math.inf]
    assert special.psi(x).tolist() == [-math.inf, math.inf]
    assert special.polygamma(0, x).tolist() == [-math.inf, math.inf]


def test_transforms_with_equal_parameters_are_equal():
    from minifw.distributions import transforms

    t = minifw.tensor
    assert transforms.PowerTransform(t([-1.0, -1.0])) == transforms.PowerTransform(t([-1.0, -1.0]))
    assert transforms.PowerTransform(t([2.0, 2.0])) == transforms.PowerTransform(2.0)
    assert transforms.PowerTransform(t([2.0, 3.0])) != transforms.PowerTransform(2.0)
    assert transforms.AffineTransform(t([1.0, 1.0]), 2.0) == transforms.AffineTransform(1.0, t(2.0))
    assert transforms.AffineTransform(t([1.0, 2.0]), 2.0) != transforms.AffineTransform(t([1.0, 3.0]), 2.0)
    # shapes that do not broadcast hold different values
    assert transforms.AffineTransform(t([1.0, 2.0]), 2.0) != transforms.AffineTransform(t([1.0, 2.0, 3.0]), 2.0)
    assert transforms.AffineTransform(0.0, 1.0, event_dim=1) != transforms.AffineTransform(0.0, 1.0)


def test_kl_divergence_of_two_inverse_gammas_is_that_of_their_gammas():
    from minifw import distributions as D

    c1, r1, c2, r2 = [minifw.tensor(v, dtype=F64) for v in
                      ([2.0, 3.0], [1.0, 2.0], [2.5, 3.0], [1.0, 4.0])]
    kl = D.kl_divergence(D.InverseGamma(c1, r1), D.InverseGamma(c2, r2))
    want = D.kl_divergence(D.Gamma(c1, r1), D.Gamma(c2, r2))
    np.testing.assert_allclose(kl.numpy(), want.numpy(), rtol=1e-12)
    # by hand: (a-b) psi(a) - lgamma(a) + lgamma(b) + b log(r/s) + a (s - r) / r
    a, r, b, s = 2.0, 1.0, 2.5, 1.0
    psi_a = 1.0 - EULER_GAMMA  # psi(2)
    by_hand = (a - b) * psi_a - math.lgamma(a) + math.lgamma(b) + b * math.log(r / s) + a * (s - r) / r
    assert kl[0].item() == pytest.approx(by_hand, rel=1e-12)


def test_kl_divergence_of_transformed_distributions_with_equal_affine_maps():
    from minifw import distributions as D
    from minifw.distributions import transforms

    def make(loc):
        shift = minifw.tensor([1.0, 2.0], dtype=F64)  # a separate tensor for each
        base = D.Normal(minifw.tensor(loc, dtype=F64), minifw.ones(2, dtype=F64))
        return D.TransformedDistribution(base, [transforms.AffineTransform(shift, 3.0)])

    kl = D.kl_divergence(make([0.0, 1.0]), make([1.0, 1.0]))
    np.testing.assert_allclose(kl.numpy(), [0.5, 0.0], rtol=1e-12)


def test_assert_close_takes_none_as_equal_to_none_only():
    minifw.testing.assert_close(None, None)
    minifw.testing.assert_close([None, minifw.tensor([1.0])], [None, minifw.tensor([1.0])])
    with pytest.raises(AssertionError, match="None"):
        minifw.testing.assert_close(None, minifw.tensor([1.0]))
    with pytest.raises(AssertionError, match="None"):
        minifw.testing.assert_close({"a": 1}, {"a": None})


@pytest.mark.filterwarnings("ignore:assert_allclose is deprecated")
def test_assert_allclose_keeps_its_older_default_tolerances():
    check = minifw.testing.assert_allclose
    check(minifw.tensor([1.0], dtype=F64), minifw.tensor([1.0 + 1e-6], dtype=F64))  # rtol 1e-5
    with pytest.raises(AssertionError):
        check(minifw.tensor([1.0], dtype=F64), minifw.tensor([1.0 + 2e-5], dtype=F64))
    check(minifw.tensor([1.0]), minifw.tensor([1.0 + 5e-5]))  # float32: rtol 1e-4
    with pytest.raises(AssertionError):
        check(minifw.tensor([1.0]), minifw.tensor([1.0 + 5e-4]))
    check(minifw.tensor([1.0]), minifw.tensor([1.0 + 5e-5], dtype=F64))  # the looser dtype's
    check(1.0, 1.0 + 1e-6)  # numbers and lists become tensors
    check([1.0, 2.0], [1.0, 2.00001])
    with pytest.raises(AssertionError):
        check(minifw.tensor([1, 2]), [1, 3])
    with pytest.raises(AssertionError):
        check(minifw.tensor([float("nan")]), minifw.tensor([float("nan")]), equal_nan=False)


def test_amp_custom_fwd_and_custom_bwd_leave_a_function_as_written():
    class Square(minifw.autograd.Function):
        @staticmethod
        @minifw.amp.custom_fwd(device_type="cpu", cast_inputs=minifw.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @minifw.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = minifw.tensor([1.0, 3.0], requires_grad=True)
    with minifw.autocast("cpu", enabled=False):
        Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]
    assert minifw.cuda.amp.custom_fwd(len) is len
    assert minifw.amp.custom_bwd(len, device_type="cuda") is len
    with pytest.raises(ValueError, match="device_type"):
        minifw.amp.custom_fwd(len, device_type=None)
    assert minifw.amp.is_autocast_available("cpu")


@pytest.mark.filterwarnings("ignore:GradScaler")
def test_grad_scaler_reports_its_schedule_settings():
    scaler = minifw.amp.GradScaler("cpu", growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (3.0, 0.25, 7)
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.5)
    scaler.set_growth_interval(9)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (4.0, 0.5, 9)
