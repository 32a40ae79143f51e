"""A Categorical whose draws are one-hot vectors (as a Gumbel-softmax relaxation's targets)."""
from ..tensor import arange, eye
from . import constraints
from .categorical import Categorical, _probs_or_logits
from .distribution import Distribution


class CategoricalVectors(Distribution):
    """A distribution of vectors over K categories (OneHotCategorical, Multinomial): probs or
    logits as Categorical's, held by one, with event_shape (K,)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, probs=None, logits=None, validate_args=None):
        name = type(self).__name__
        param = _probs_or_logits(name, probs, logits)
        if param.ndim < 1:
            raise ValueError(f"{name}: {'probs' if probs is not None else 'logits'} must have at "
                             f"least one dim (the categories), got a 0-d tensor")
        # checked here (under this class's name), not again inside
        self._categorical = Categorical(probs=param if probs is not None else None,
                                        logits=param if probs is None else None, validate_args=False)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def _given_parameters(self):
        return {name: self._categorical.__dict__[name] for name in self.arg_constraints
                if name in self._categorical.__dict__}

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class OneHotCategorical(CategoricalVectors):
    """probs or logits as Categorical's; event_shape is (K,), and a value is a vector of K
    zeros with a one at the category."""

    support = constraints.one_hot
    has_enumerate_support = True

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return self._one_hot(self.probs.argmax(-1))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _one_hot(self, index):
        k = self._event_shape[0]
        return (arange(k, device=self.probs.device) == index.unsqueeze(-1)).to(self.probs.dtype)

    def sample(self, sample_shape=()):
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value):
        value = self._value(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        k = self._event_shape[0]
        values = eye(k, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((k,) + (1,) * len(self._batch_shape) + (k,))
        return values.expand(k, *self._batch_shape, k) if expand else values
