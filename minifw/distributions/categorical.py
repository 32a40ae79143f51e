"""A distribution over K categories 0 .. K - 1 (the last dim of probs or logits), as a
discrete policy's."""
import functools
import math

import numpy as np

from ..tensor import Tensor, arange, full, get_default_dtype, int64, zeros
from ..tensor import tensor as _as_tensor
from . import constraints
from .distribution import Distribution, clamp_probs


def _probs_or_logits(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give either probs or logits, not both (got "
                         f"{'both' if probs is not None else 'neither'})")
    param = probs if probs is not None else logits
    if not isinstance(param, Tensor):
        param = _as_tensor(param)
    if param.dtype.kind != "f":
        param = param.to(get_default_dtype())
    return param


class Categorical(Distribution):
    """probs (non-negative, normalized along the last dim) or logits (log-probabilities up to
    a constant). batch_shape is the parameter's shape without the last dim; samples are int64
    category indices."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _batch_attributes = ("probs", "logits", "_param")

    def __init__(self, probs=None, logits=None, validate_args=None):
        param = _probs_or_logits("Categorical", probs, logits)
        if param.ndim < 1:
            raise ValueError(f"Categorical: {'probs' if probs is not None else 'logits'} must have "
                             f"at least one dim (the categories), got a 0-d tensor")
        if probs is not None:
            with np.errstate(invalid="ignore", divide="ignore"):  # a zero row: NaN, refused below
                self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - param.logsumexp(-1, keepdim=True)  # normalized log-probs
        self._param = self.probs if probs is not None else self.logits
        self._num_events = param.shape[-1]
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)

    @functools.cached_property
    def logits(self):
        return clamp_probs(self.probs).log()

    @functools.cached_property
    def probs(self):
        return self.logits.softmax(-1)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return full(self._batch_shape, math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = int(np.prod(shape[:len(shape) - len(self._batch_shape)], dtype=np.int64))
        probs = self.probs.detach().reshape(-1, self._num_events)
        if n == 0 or probs.shape[0] == 0:
            return zeros(*shape, dtype=int64, device=probs.device)
        samples = probs.multinomial(n, replacement=True)  # one row of n draws per distribution
        return samples.T.reshape(shape)

    def log_prob(self, value):
        value = self._value(value).long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        log_pmf = self.logits if tuple(self.logits.shape) == shape else self.logits.expand(*shape)
        index = value.expand(*shape[:-1], 1)
        return log_pmf.gather(-1, index).squeeze(-1)

    def entropy(self):
        # a zero probability has logit -inf in PyTorch's sense; clamping keeps 0 * logit at 0
        logits = self.logits.clamp(min=float(np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        """The categories 0 .. K - 1 along a new first dim (broadcast over the batch if expand)."""
        values = arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(self._num_events, *self._batch_shape) if expand else values
