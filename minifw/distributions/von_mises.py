"""The von Mises distribution: a Normal wrapped onto the circle (angles in radians)."""
import math

import numpy as np

from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host, host

_SERIES_LIMIT = 30.0  # below: the power series; above: the large-argument expansion


def _log_bessel_i(order, x):
    """log I_order(x) for order 0 or 1 and x >= 0, from Tensor ops (so differentiable in x):
    the power series sum (x/2)^(2k + order) / (k! (k + order)!), all terms positive, for
    x <= 30 (90 terms reach float64 precision there), and Hankel's expansion
    I(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4 order^2 - (2j - 1)^2) / (k! (8x)^k) above."""
    small = x.clamp(max=_SERIES_LIMIT)
    quarter_sq = small.pow(2) / 4
    term = (small / 2).pow(order) / math.factorial(order)
    total = term
    for k in range(1, 90):
        term = term * quarter_sq / (k * (k + order))
        total = total + term
    large = x.clamp(min=_SERIES_LIMIT)
    mu = 4 * order * order
    coefficient, expansion = 1.0, 1.0
    for k in range(1, 13):
        coefficient *= -(mu - (2 * k - 1) ** 2) / (k * 8)
        expansion = expansion + coefficient / large.pow(k)
    log_large = large - 0.5 * (2 * math.pi * large).log() + expansion.log()
    return total.log().where(x <= _SERIES_LIMIT, log_large)


class VonMises(Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on an interval of
    length 2 pi; samples lie in [-pi, pi). No rsample, as PyTorch's."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    _batch_attributes = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all("VonMises", loc=loc, concentration=concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """The circular variance 1 - I1(k) / I0(k)."""
        k = self.concentration
        return 1 - (_log_bessel_i(1, k) - _log_bessel_i(0, k)).exp()

    def sample(self, sample_shape=()):
        """Best and Fisher's rejection sampler (NumPy's), around loc, wrapped to [-pi, pi)."""
        shape = self._extended_shape(sample_shape)
        loc, k = host(self.loc), host(self.concentration)
        x = draw_on_host(lambda rng: rng.vonmises(np.broadcast_to(loc, shape) % (2 * np.pi),
                                                  np.broadcast_to(k, shape)), self.loc)
        return (x + math.pi) % (2 * math.pi) - math.pi

    def log_prob(self, value):
        value = self._value(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_bessel_i(0, k)
