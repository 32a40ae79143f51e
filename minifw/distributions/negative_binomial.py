"""The negative binomial distribution: the number of successes before total_count failures of
Bernoulli(probs) trials (a Gamma-Poisson mixture)."""
import numpy as np

from ..functions.activation import SmoothRectifier
from . import constraints
from .categorical import _probs_or_logits
from .distribution import Distribution, broadcast_all, draw_on_host, host
from .probs_logits import ProbsOrLogits


def _log_sigmoid(x):
    return -SmoothRectifier.apply(-x, beta=1.0, threshold=20.0)


class NegativeBinomial(ProbsOrLogits, Distribution):
    """P(k) = C(k + r - 1, k) (1 - p)^r p^k, r = total_count > 0 (need not be an integer),
    p = probs in [0, 1) or logits."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _batch_attributes = ("total_count", "probs", "logits", "_param")

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        param = _probs_or_logits("NegativeBinomial", probs, logits)
        self.total_count, param = broadcast_all("NegativeBinomial", total_count=total_count,
                                                **{"probs" if probs is not None else "logits": param})
        self.total_count = self.total_count.to(param.dtype)
        self.__dict__["probs" if probs is not None else "logits"] = param
        self._param, self._param_name = param, "probs" if probs is not None else "logits"
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def _given_parameters(self):
        return {"total_count": self.total_count, self._param_name: self._param}

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        """Poisson(G), G ~ Gamma(total_count, (1 - p) / p): NumPy's exact samplers."""
        shape = self._extended_shape(sample_shape)
        r, odds = host(self.total_count), host(self.logits.exp())

        def draw(rng):
            rate = rng.standard_gamma(np.broadcast_to(r, shape)) * odds
            return rng.poisson(rate)

        return draw_on_host(draw, self.total_count)

    def log_prob(self, value):
        value = self._value(value)
        r = self.total_count
        log_unnormalized = r * _log_sigmoid(-self.logits) + value * _log_sigmoid(self.logits)
        log_normalization = -(r + value).lgamma() + (1.0 + value).lgamma() + r.lgamma()
        # r + k = 0: the only outcome has probability 1
        zero = (r + value) == 0
        log_normalization = log_normalization.masked_fill(zero.expand(*log_normalization.shape)
                                                          if tuple(zero.shape) != tuple(log_normalization.shape)
                                                          else zero, 0.0)
        return log_unnormalized - log_normalization
