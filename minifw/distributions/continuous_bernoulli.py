"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019): the
Bernoulli likelihood p^x (1 - p)^(1 - x) normalized over x in [0, 1], as VAEs on pixel
intensities use it."""
import math

import numpy as np

from ..tensor import rand
from . import constraints
from .bernoulli import binary_cross_entropy_with_logits
from .distribution import Distribution
from .probs_logits import ProbsOrLogits


class ContinuousBernoulli(ProbsOrLogits, Distribution):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1], probs p or logits. Near p = 1/2 (inside lims)
    the normalizer, mean and variance, which are 0/0 there, use their Taylor expansions."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _batch_attributes = ("probs", "logits", "_param")

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        param = self._set_probs_or_logits("ContinuousBernoulli", probs, logits)
        if probs is not None:
            # keep p inside (0, 1): log(p) and log(1 - p) stay finite
            finfo = np.finfo(np.dtype(param.dtype))
            self.__dict__["probs"] = param.clamp(min=float(finfo.eps), max=1 - float(finfo.eps))
        self._lims = lims
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def _outside(self):
        return (self.probs <= self._lims[0]).logical_or(self.probs >= self._lims[1])

    def _cut_probs(self):
        """probs, with the ones inside lims replaced by lims[0] (their exact formulas are 0/0)."""
        return self.probs.masked_fill(self._outside().logical_not(), self._lims[0])

    def _log_normalizer(self):
        # log C(p) = log(|log(1 - p) - log p| / |1 - 2p|); its Taylor expansion around 1/2
        outside = self._outside()
        p = self._cut_probs()
        below = p.masked_fill(p > 0.5, 0.0)
        above = p.masked_fill(p < 0.5, 1.0)
        log_norm = ((-p).log1p() - p.log()).abs().log() - \
            (-2 * below).log1p().where(p <= 0.5, (2 * above - 1).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return log_norm.where(outside, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        exact = p / (2 * p - 1) + 1 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return exact.where(self._outside(), taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        exact = p * (p - 1) / (1 - 2 * p).pow(2) + 1 / ((-p).log1p() - p.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return exact.where(self._outside(), taylor)

    def rsample(self, sample_shape=()):
        """icdf(u), u ~ U(0, 1): differentiable in the parameter."""
        u = rand(*self._extended_shape(sample_shape), dtype=self._param.dtype, device=self._param.device)
        return self.icdf(u)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        logits = self.logits
        if tuple(value.shape) != tuple(logits.shape):
            shape = np.broadcast_shapes(tuple(value.shape), tuple(logits.shape))
            logits, value = logits.expand(*shape), value.expand(*shape)
        return -binary_cross_entropy_with_logits(logits, value) + self._log_normalizer()

    def cdf(self, value):
        value = self._value(value, "cdf")
        p = self._cut_probs()
        exact = (p.pow(value) * (1 - p).pow(1 - value) + p - 1) / (2 * p - 1)
        cdf = exact.where(self._outside(), value.expand(*exact.shape) if tuple(value.shape) != tuple(exact.shape)
                          else value)
        return cdf.masked_fill(value <= 0, 0.0).masked_fill(value >= 1, 1.0)

    def icdf(self, value):
        p = self._cut_probs()
        exact = ((-p + value * (2 * p - 1)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        shape = tuple(exact.shape)
        return exact.where(self._outside(), value if tuple(value.shape) == shape else value.expand(*shape))

    def entropy(self):
        log_p0, log_p1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._log_normalizer() - log_p0
