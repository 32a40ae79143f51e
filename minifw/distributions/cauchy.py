"""The Cauchy (Lorentz) distribution: heavy tails, no mean and no variance."""
import math

from ..tensor import full, rand
from . import constraints
from .distribution import Distribution, broadcast_all


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)), loc and scale broadcast together."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_attributes = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all("Cauchy", loc=loc, scale=scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mean(self):
        return full(self._batch_shape, math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(self._batch_shape, math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        """loc + scale tan(pi (u - 1/2)), u ~ U(0, 1): differentiable in loc and scale."""
        u = rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).pow(2).log1p()

    def cdf(self, value):
        value = self._value(value, "cdf")
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
