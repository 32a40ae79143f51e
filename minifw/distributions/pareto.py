"""The Pareto (power law) distribution: scale * exp(E), E ~ Exponential(alpha)."""

from . import constraints
from .distribution import broadcast_all
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform


class Pareto(TransformedDistribution):
    """Density alpha scale^alpha / x^(alpha + 1) on x >= scale."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    _batch_attributes = ("scale", "alpha")

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all("Pareto", scale=scale, alpha=alpha)
        base = Exponential(self.alpha, validate_args=False)
        super().__init__(base, [ExpTransform(), AffineTransform(0.0, self.scale)], validate_args=validate_args)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        # infinite for alpha <= 1; (where, not clamp: no NaN gradient below 1, as PyTorch's)
        alpha = self.alpha.where(self.alpha >= 1, 1.0)
        return alpha * self.scale / (alpha - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        alpha = self.alpha.where(self.alpha >= 2, 2.0)  # infinite for alpha <= 2 (as mean's)
        return self.scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
