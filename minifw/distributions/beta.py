"""The beta distribution on [0, 1] (a Dirichlet of two categories), the conjugate prior of a
Bernoulli's probs."""
import numpy as np

from ..tensor import ones_like, stack
from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host, host
from .gamma import standard_gamma_rsample


class Beta(Distribution):
    """Density x^(c1 - 1) (1 - x)^(c0 - 1) / B(c1, c0), c1 = concentration1, c0 =
    concentration0. rsample() is g1 / (g1 + g0) for reparameterized Gamma draws g1, g0
    (implicit reparameterization), so gradients reach both concentrations."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _batch_attributes = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(
            "Beta", concentration1=concentration1, concentration0=concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # the Dirichlet's mode of (c1, c0): (c1 - 1) / (c1 + c0 - 2) with each excess over 1
        # clamped at 0; with both below 1, PyTorch's choice among the two peaks, x = 1
        c1, c0 = self.concentration1, self.concentration0
        # (where, not clamp: a clamped excess passes no gradient, not even a NaN, as PyTorch's)
        excess1, excess0 = (c1 - 1).where(c1 >= 1, 0.0), (c0 - 1).where(c0 >= 1, 0.0)
        with np.errstate(invalid="ignore"):  # 0 / 0: NaN where c1 = c0 = 1 (every x a mode)
            mode = excess1 / (excess1 + excess0)
        return ones_like(mode).where((c1 < 1).logical_and(c0 < 1), mode)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(stack([self.concentration1, self.concentration0], -1), shape + (2,))
        x = g.select(-1, 0) / g.sum(-1)
        finfo = np.finfo(np.dtype(x.dtype))
        return x.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        c1, c0 = host(self.concentration1), host(self.concentration0)
        x = draw_on_host(lambda rng: rng.beta(np.broadcast_to(c1, shape), np.broadcast_to(c0, shape)),
                         self.concentration1)
        finfo = np.finfo(np.dtype(x.dtype))
        return x.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

    def log_prob(self, value):
        value = self._value(value)
        c1, c0 = self.concentration1, self.concentration0
        return (c1 - 1).xlogy(value) + (c0 - 1).xlogy(1 - value) + (c1 + c0).lgamma() \
            - (c1.lgamma() + c0.lgamma())

    def entropy(self):
        c1, c0 = self.concentration1, self.concentration0
        total = c1 + c0
        return c1.lgamma() + c0.lgamma() - total.lgamma() - (2 - total) * total.digamma() \
            - ((c1 - 1) * c1.digamma() + (c0 - 1) * c0.digamma())
