"""The log-normal distribution: exp of a Normal(loc, scale) draw."""
import math

from . import constraints
from .distribution import Distribution, broadcast_all
from .normal import Normal


class LogNormal(Distribution):
    """Y = exp(X), X ~ N(loc, scale ** 2); base_dist is that Normal (PyTorch builds it as a
    TransformedDistribution; the densities and samples are the same)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _batch_attributes = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all("LogNormal", loc=loc, scale=scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def base_dist(self):
        return Normal(self.loc, self.scale, validate_args=False)

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).exp()

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        # the Normal's density at log y times |d log y / dy| = 1 / y
        log_y = self._value(value).log()
        return -((log_y - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi)) - log_y

    def cdf(self, value):
        return self.base_dist.cdf(self._value(value, "cdf").log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
