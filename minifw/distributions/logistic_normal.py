"""The logistic-normal distribution on the simplex: a Normal vector mapped by stick breaking."""
from . import constraints
from .distribution import broadcast_all
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform()(X), X ~ N(loc, scale^2) over the last dim (K - 1 elements give
    a point of the K-simplex)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all("LogisticNormal", loc=loc, scale=scale)
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
