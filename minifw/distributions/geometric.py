"""The geometric distribution: the number of failures before the first success of Bernoulli(p)
trials."""
import numpy as np

from ..tensor import rand
from . import constraints
from .bernoulli import binary_cross_entropy_with_logits
from .distribution import Distribution
from .probs_logits import ProbsOrLogits


class Geometric(ProbsOrLogits, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, ...; probs p in (0, 1] or logits."""

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _batch_attributes = ("probs", "logits", "_param")

    def __init__(self, probs=None, logits=None, validate_args=None):
        param = self._set_probs_or_logits("Geometric", probs, logits)
        super().__init__(tuple(param.shape), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError("Geometric: probs must be in (0, 1], got a zero probability")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """floor(log U / log(1 - p)), U ~ U(tiny, 1): the inverse of the cdf."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        tiny = float(np.finfo(np.dtype(probs.dtype)).tiny)
        u = rand(*shape, dtype=probs.dtype, device=probs.device).clamp(min=tiny)
        return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value):
        value = self._value(value)
        probs = self.probs
        # 0 * log(0) = 0 where p = 1 and k = 0
        certain = (probs == 1).logical_and(value == 0)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(probs.shape))
        safe = probs.expand(*shape).masked_fill(certain.expand(*shape), 0.0)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs) / self.probs
