"""The half-normal and half-Cauchy distributions: |X| for a centred Normal or Cauchy X."""
import math


from ..tensor import full_like, zeros_like
from . import constraints
from .cauchy import Cauchy
from .distribution import broadcast_all
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class _Folded(TransformedDistribution):
    """|X| for X of a distribution symmetric about 0: twice its density on x >= 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None

    def __init__(self, scale, validate_args=None):
        scale, = broadcast_all(type(self).__name__, scale=scale)
        super().__init__(self._base(0.0 * scale, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.masked_fill(value.expand(*log_prob.shape) < 0, -math.inf) \
            if tuple(value.shape) != tuple(log_prob.shape) else log_prob.masked_fill(value < 0, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value, "cdf")
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|X|, X ~ N(0, scale^2)."""

    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|X|, X ~ Cauchy(0, scale): no mean, no variance."""

    _base = Cauchy

    @property
    def mean(self):
        return full_like(self.scale, math.inf)

    @property
    def variance(self):
        return full_like(self.scale, math.inf)
