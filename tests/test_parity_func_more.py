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
