"""The inverse gamma distribution: 1 / X, X ~ Gamma(concentration, rate) (the conjugate prior
of a Normal's variance)."""
import math

from . import constraints
from .distribution import broadcast_all
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """Density rate^c x^(-c - 1) exp(-rate / x) / Gamma(c) on x > 0, c = concentration;
    rsample through Gamma's (implicit reparameterization)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        concentration, rate = broadcast_all("InverseGamma", concentration=concentration, rate=rate)
        base = Gamma(concentration, rate, validate_args=False)  # checked below, by this name
        super().__init__(base, PowerTransform(-rate.new_ones(rate.shape)), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        c = self.concentration
        return (self.rate / (c - 1).masked_fill(c <= 1, 1.0)).masked_fill(c <= 1, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        safe = c.masked_fill(c <= 2, 3.0)
        return (self.rate.pow(2) / ((safe - 1).pow(2) * (safe - 2))).masked_fill(c <= 2, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
