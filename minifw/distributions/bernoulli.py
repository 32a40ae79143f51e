"""A coin of probability probs of showing 1 (or of log-odds logits)."""
from ..functions.losses import BinaryCrossEntropyWithLogits
from ..tensor import arange, rand
from . import constraints
from .categorical import _probs_or_logits
from .distribution import Distribution, broadcast_all, clamp_probs


def binary_cross_entropy_with_logits(logits, target):
    """Elementwise -[t log s + (1 - t) log(1 - s)], s = sigmoid(logits), in the stable form of
    nn.functional's (differentiable in both)."""
    logits, target = broadcast_all("Bernoulli", logits=logits, value=target)
    return BinaryCrossEntropyWithLogits.apply(logits, target.to(logits.dtype), reduction="none")


class Bernoulli(Distribution):
    """probs in [0, 1] or logits (log(p / (1 - p))); samples are 0.0 or 1.0 in the parameter's
    dtype."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _batch_attributes = ("probs", "logits", "_param")

    def __init__(self, probs=None, logits=None, validate_args=None):
        param = _probs_or_logits("Bernoulli", probs, logits)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @property
    def logits(self):
        if "logits" not in self.__dict__:
            p = clamp_probs(self.probs)
            self.__dict__["logits"] = p.log() - (-p).log1p()
        return self.__dict__["logits"]

    @logits.setter
    def logits(self, value):
        self.__dict__["logits"] = value

    @property
    def probs(self):
        if "probs" not in self.__dict__:
            self.__dict__["probs"] = self.logits.sigmoid()
        return self.__dict__["probs"]

    @probs.setter
    def probs(self, value):
        self.__dict__["probs"] = value

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        p = self.probs
        return (p >= 0.5).to(p.dtype).masked_fill(p == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        u = rand(*shape, dtype=p.dtype, device=p.device)
        return (u < p).to(p.dtype)

    def log_prob(self, value):
        value = self._value(value)
        return -binary_cross_entropy_with_logits(self.logits, value)

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(2, *self._batch_shape) if expand else values
