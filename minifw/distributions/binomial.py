"""The binomial distribution: successes in total_count coins of probability probs."""
import numpy as np

from ..tensor import arange
from . import constraints
from .categorical import _probs_or_logits
from .distribution import Distribution, broadcast_all, draw_on_host, host
from .probs_logits import ProbsOrLogits


def _clamp_by_zero(x):
    # max(x, 0) with PyTorch's gradient of 1/2 at 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ProbsOrLogits, Distribution):
    """total_count (non-negative integers, 1 by default) and probs in [0, 1] or logits,
    broadcast together; samples are counts in the parameter's floating dtype."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _batch_attributes = ("total_count", "probs", "logits", "_param")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        param = _probs_or_logits("Binomial", probs, logits)
        name = "probs" if probs is not None else "logits"
        total_count, param = broadcast_all("Binomial", total_count=total_count, **{name: param})
        self.total_count = total_count.to(param.dtype)
        self.__dict__[name] = param
        self._param, self._param_name = param, name
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def _given_parameters(self):
        return {"total_count": self.total_count, **super()._given_parameters()}

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n, p = host(self.total_count).astype(np.int64), host(self.probs)
        return draw_on_host(lambda rng: rng.binomial(np.broadcast_to(n, shape), np.broadcast_to(p, shape)),
                            self._param)

    def log_prob(self, value):
        value = self._value(value)
        n, logits = self.total_count, self.logits
        # log(1 + e^logits) = max(logits, 0) + log1p(e^-|logits|): stable for large |logits|
        normalizer = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - (n + 1).lgamma()
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalizer

    def _homogeneous_count(self, method):
        counts = host(self.total_count)
        if counts.size and counts.min() != counts.max():
            raise NotImplementedError(f"Binomial.{method}: needs one total_count for the whole batch, "
                                      f"got counts from {counts.min():g} to {counts.max():g}")
        return int(counts.max()) if counts.size else 0

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(1 + count, *self._batch_shape) if expand else values

    def entropy(self):
        """-sum_k P(k) log P(k) over the support (one total_count for the batch, as PyTorch's)."""
        self._homogeneous_count("entropy")
        log_pmf = self.log_prob(self.enumerate_support(False))
        return -(log_pmf.exp() * log_pmf).sum(0)
