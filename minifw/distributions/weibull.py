"""The Weibull distribution: scale * E^(1 / concentration), E ~ Exponential(1)."""

from . import constraints
from .distribution import broadcast_all
from .exponential import Exponential
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform


class Weibull(TransformedDistribution):
    """cdf 1 - exp(-(x / scale)^concentration) on x >= 0."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    _batch_attributes = ("scale", "concentration")

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all("Weibull", scale=scale, concentration=concentration)
        base = Exponential(self.scale.new_ones(self.scale.shape), validate_args=False)
        transforms = [PowerTransform(self.concentration.reciprocal()), AffineTransform(0.0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * (1 + self.concentration.reciprocal()).lgamma().exp()

    @property
    def mode(self):
        c = self.concentration
        return self.scale * ((c - 1) / c).pow(c.reciprocal())

    @property
    def variance(self):
        c = self.concentration
        return self.scale.pow(2) * ((1 + 2 / c).lgamma().exp() - (2 * (1 + c.reciprocal()).lgamma()).exp())

    def entropy(self):
        c = self.concentration
        return EULER_GAMMA * (1 - c.reciprocal()) + (self.scale / c).log() + 1
