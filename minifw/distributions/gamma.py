"""The gamma distribution (shape concentration, inverse scale rate), the conjugate prior of a
Poisson rate and a precision."""
import numpy as np

from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host, host


def no_implicit_rsample(name):
    return NotImplementedError(
        f"{name}.rsample: PyTorch differentiates {name} samples by implicit reparameterization "
        f"(the derivative of the sample through the inverse of its cdf), which minifw does not "
        f"implement; use sample() with log_prob (the score function) instead")


class Gamma(Distribution):
    """Density rate^c x^(c - 1) exp(-rate x) / Gamma(c) on x >= 0, c = concentration.
    sample() only: see rsample."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False  # PyTorch's is True (implicit reparameterization); see rsample
    _batch_attributes = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all("Gamma", concentration=concentration, rate=rate)
        super().__init__(tuple(self.concentration.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        raise no_implicit_rsample("Gamma")

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        c, rate = host(self.concentration), host(self.rate)
        x = draw_on_host(lambda rng: rng.standard_gamma(np.broadcast_to(c, shape)) / rate, self.rate)
        # a draw for a tiny concentration can underflow to 0, outside log_prob's domain
        return x.clamp(min=float(np.finfo(np.dtype(x.dtype)).tiny))

    def log_prob(self, value):
        value = self._value(value)
        c = self.concentration
        return c.xlogy(self.rate) + (c - 1).xlogy(value) - self.rate * value - c.lgamma()

    def cdf(self, value):
        raise NotImplementedError("Gamma.cdf needs the regularized incomplete gamma function "
                                  "(torch.special.gammainc), which minifw does not have")

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()
