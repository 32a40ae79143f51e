"""The exponential distribution (waiting times), with a reparameterized sample."""
from ..tensor import rand, zeros_like
from . import constraints
from .distribution import Distribution, broadcast_all


class Exponential(Distribution):
    """Density rate * exp(-rate * x) on x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _batch_attributes = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all("Exponential", rate=rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """-log(1 - u) / rate, u ~ U[0, 1) (the inverse cdf; 1 - u > 0, so always finite)."""
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.rate.dtype, device=self.rate.device)
        return -(-u).log1p() / self.rate

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        value = self._value(value, "cdf")
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
