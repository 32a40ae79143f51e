"""Multinomial: counts of total_count draws from K categories (probs or logits, as
Categorical's), and OneHotCategoricalStraightThrough, whose rsample passes gradients to the
probabilities straight through its one-hot draws."""
import math

import numpy as np

from ..tensor import arange, tensor
from . import constraints
from .distribution import draw_on_host, host
from .one_hot_categorical import CategoricalVectors, OneHotCategorical


class Multinomial(CategoricalVectors):
    """total_count (an int) draws from the categories of probs (or logits): a value is the
    vector of K counts. log_prob also takes vectors whose counts sum to another total, as
    PyTorch's."""

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if isinstance(total_count, bool) or not isinstance(total_count, (int, np.integer)):
            raise TypeError(f"Multinomial: total_count must be an int, got "
                            f"{type(total_count).__name__} {total_count!r}")
        if total_count < 0:
            raise ValueError(f"Multinomial: total_count must be >= 0, got {total_count}")
        self.total_count = int(total_count)
        super().__init__(probs, logits, validate_args=validate_args)

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = host(self.probs).astype(np.float64)
        probs = probs / probs.sum(-1, keepdims=True)
        return draw_on_host(lambda rng: rng.multinomial(self.total_count, np.broadcast_to(
            probs, shape)), self.probs)

    def log_prob(self, value):
        value = self._value(value)
        logits = self.logits.clamp(min=float(np.finfo(np.dtype(self.logits.dtype)).min))
        # 0 * log(0) is 0: a category of probability zero with a count of zero adds nothing
        weighted = (logits * value).where(value != 0, logits.new_zeros(()))
        return ((value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1)) + weighted.sum(-1)

    def entropy(self):
        """-log n! - n sum p log p + sum_i E[log x_i!], x_i ~ Binomial(n, p_i): the expectation
        summed over the counts 1..n."""
        n = self.total_count
        p = self.probs
        counts = arange(1, n + 1, dtype=p.dtype, device=p.device).reshape((n,) + (1,) * p.ndim)
        log_binomial = (math.lgamma(n + 1) - (counts + 1).lgamma() - (n - counts + 1).lgamma()
                        + counts * p.clamp(min=float(np.finfo(np.dtype(p.dtype)).tiny)).log()
                        + (n - counts) * (1 - p).clamp(min=float(np.finfo(np.dtype(p.dtype)).tiny)).log())
        expected_log_factorials = (log_binomial.exp() * (counts + 1).lgamma()).sum(0).sum(-1) \
            if n else tensor(0.0, dtype=p.dtype, device=p.device)
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_factorials


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with an rsample: the one-hot draw in the forward pass, the gradient
    of the probabilities in the backward (draw + probs - probs.detach())."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        draws = self.sample(sample_shape)
        probs = self.probs
        return draws + (probs - probs.detach())
