"""The Gumbel (type I extreme value) distribution: the law of the maximum of many draws."""
import math

import numpy as np

from . import constraints
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform

EULER_GAMMA = 0.57721566490153286061


class Gumbel(TransformedDistribution):
    """cdf exp(-exp(-(x - loc) / scale)); built as loc - scale log(-log U), U ~ U(0, 1)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _batch_attributes = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all("Gumbel", loc=loc, scale=scale)
        finfo = np.finfo(np.dtype(self.loc.dtype))
        base = Uniform(self.loc.new_full(self.loc.shape, float(finfo.tiny)),
                       self.loc.new_full(self.loc.shape, 1 - float(finfo.eps)), validate_args=False)
        transforms = [ExpTransform().inv, AffineTransform(0.0, -1.0), ExpTransform().inv,
                      AffineTransform(self.loc, -self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)
