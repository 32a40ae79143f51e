"""The continuous uniform distribution on [low, high), with a reparameterized sample."""
import math

import numpy as np

from ..tensor import rand
from . import constraints
from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    """U(low, high), low < high numbers or tensors (broadcast together)."""

    has_rsample = True
    _batch_attributes = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all("Uniform", low=low, high=high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)

    @property
    def arg_constraints(self):
        # each bound is constrained by the other, as PyTorch's dependent constraints
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def _given_parameters(self):
        return {"low": self.low, "high": self.high}

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan  # every point of the interval is a mode

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """low + (high - low) * u, u ~ U(0, 1): differentiable in low and high."""
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        inside = (self.low <= value).logical_and(self.high > value).to(self.low.dtype)
        with np.errstate(divide="ignore"):  # log 0 = -inf outside, as PyTorch's
            return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        value = self._value(value, "cdf")
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
