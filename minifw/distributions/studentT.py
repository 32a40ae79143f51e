"""Student's t distribution: a Normal whose precision is itself Gamma distributed (heavier
tails the fewer degrees of freedom df)."""
import math

from ..tensor import randn
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import standard_gamma_rsample


class StudentT(Distribution):
    """loc + scale * T, T with density proportional to (1 + t^2 / df)^(-(df + 1) / 2)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_attributes = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all("StudentT", df=df, loc=loc, scale=scale)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        # finite above 2 degrees of freedom, infinite in (1, 2], undefined at or below 1
        finite = self.scale.pow(2) * df / (df - 2).masked_fill(df <= 2, 1.0)
        return finite.masked_fill(df <= 2, math.inf).masked_fill(df <= 1, math.nan)

    def rsample(self, sample_shape=()):
        """X / sqrt(Z / df), X ~ N(0, 1), Z ~ Chi2(df) (a reparameterized Gamma draw), shifted
        and scaled: differentiable in df, loc and scale."""
        shape = self._extended_shape(sample_shape)
        x = randn(*shape, dtype=self.df.dtype, device=self.df.device)
        z = 2 * standard_gamma_rsample(0.5 * self.df, shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        y = (value - self.loc) / self.scale
        log_norm = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) \
            + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1)).lgamma()
        return -0.5 * (self.df + 1) * (y.pow(2) / self.df).log1p() - log_norm

    def entropy(self):
        df = self.df
        log_beta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma()) \
            + 0.5 * df.log() + log_beta
