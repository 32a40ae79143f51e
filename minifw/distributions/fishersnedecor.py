"""The F distribution: the ratio of two chi-squared variables, each over its degrees of freedom."""
import math

import numpy as np

from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import standard_gamma_rsample


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2), X1 ~ Chi2(df1), X2 ~ Chi2(df2) independent."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _batch_attributes = ("df1", "df2")

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all("FisherSnedecor", df1=df1, df2=df2)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    @property
    def mean(self):
        df2 = self.df2.masked_fill(self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, math.nan)

    @property
    def variance(self):
        df2 = self.df2.masked_fill(self.df2 <= 4, math.nan)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        """The ratio of two reparameterized Gamma draws: differentiable in df1 and df2."""
        shape = self._extended_shape(sample_shape)
        x1 = standard_gamma_rsample(0.5 * self.df1, shape) / (0.5 * self.df1)
        x2 = standard_gamma_rsample(0.5 * self.df2, shape) / (0.5 * self.df2)
        tiny = float(np.finfo(np.dtype(x1.dtype)).tiny)
        return (x1 / x2).clamp(min=tiny)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        half1, half2 = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        log_norm = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return log_norm + half1 * ratio.log() + (half1 - 1) * value.log() \
            - (half1 + half2) * (ratio * value).log1p()
