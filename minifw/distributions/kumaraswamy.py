"""The Kumaraswamy distribution on [0, 1]: like a Beta, with a closed-form cdf and quantile."""
import math

from . import constraints
from .distribution import broadcast_all
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform


def _moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    arg = 1 + n / a
    return b * (arg.lgamma() + b.lgamma() - (arg + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """cdf 1 - (1 - x^c1)^c0 on [0, 1] (c1 = concentration1, c0 = concentration0); built as
    (1 - U^(1 / c0))^(1 / c1), U ~ U(0, 1)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    _batch_attributes = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(
            "Kumaraswamy", concentration1=concentration1, concentration0=concentration0)
        c1 = self.concentration1
        base = Uniform(c1.new_zeros(c1.shape), c1.new_ones(c1.shape), validate_args=False)
        transforms = [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                      PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((c1 - 1) / (c1 c0 - 1))^(1 / c1), defined where both concentrations are at least 1
        c1, c0 = self.concentration1, self.concentration0
        log_mode = c1.reciprocal() * ((c1 - 1).log() - (c1 * c0 - 1).log())
        return log_mode.masked_fill((c1 < 1).logical_or(c0 < 1), math.nan).exp()

    @property
    def variance(self):
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        c1, c0 = self.concentration1, self.concentration0
        harmonic = (c0 + 1).digamma() + EULER_GAMMA
        return (1 - c0.reciprocal()) + (1 - c1.reciprocal()) * harmonic - c1.log() - c0.log()
