"""The Poisson distribution of counts at a rate."""
import numpy as np

from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host, host


class Poisson(Distribution):
    """P(k) = rate^k exp(-rate) / k!, k = 0, 1, ...; samples are whole numbers in the rate's
    floating dtype."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _batch_attributes = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all("Poisson", rate=rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = host(self.rate)
        return draw_on_host(lambda rng: rng.poisson(np.broadcast_to(rate, shape)), self.rate)

    def log_prob(self, value):
        value = self._value(value)
        return value.to(self.rate.dtype).xlogy(self.rate) - self.rate - (value + 1).lgamma()
