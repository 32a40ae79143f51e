"""The gamma distribution (shape concentration, inverse scale rate), the conjugate prior of a
Poisson rate and a precision."""
import numpy as np

from ..tensor import tensor as _as_tensor
from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host, host
from .gamma_grad import standard_gamma_grad


def standard_gamma_rsample(concentration, shape):
    """Gamma(concentration, 1) draws of the given shape (concentration broadcast to it) whose
    gradient in concentration is the implicit reparameterization dz/dalpha (gamma_grad): the
    value is the draw, and z + dz/dalpha * (alpha - alpha.detach()) carries that derivative."""
    alpha = concentration.expand(*shape) if tuple(concentration.shape) != tuple(shape) else concentration
    a = np.broadcast_to(host(concentration).astype(np.float64), shape)
    z = draw_on_host(lambda rng: rng.standard_gamma(a), concentration)
    # a draw for a tiny concentration can underflow to 0, outside log_prob's domain
    z = z.clamp(min=float(np.finfo(np.dtype(z.dtype)).tiny))
    if not alpha.requires_grad:
        return z
    dz = standard_gamma_grad(a, host(z).astype(np.float64))
    dz = _as_tensor(dz.astype(np.dtype(z.dtype)), device=z.device)
    return z + dz * (alpha - alpha.detach())


class Gamma(Distribution):
    """Density rate^c x^(c - 1) exp(-rate x) / Gamma(c) on x >= 0, c = concentration.
    rsample() differentiates samples in both parameters (implicit reparameterization in
    concentration)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
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
        shape = self._extended_shape(sample_shape)
        x = standard_gamma_rsample(self.concentration, shape) / self.rate
        return x.clamp(min=float(np.finfo(np.dtype(x.dtype)).tiny))

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        c = self.concentration
        return c.xlogy(self.rate) + (c - 1).xlogy(value) - self.rate * value - c.lgamma()

    def cdf(self, value):
        """P(concentration, rate * value), the regularized lower incomplete gamma function;
        differentiable in value and rate, not in concentration (as PyTorch's)."""
        value = self._value(value)
        return self.concentration.igamma(self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()
