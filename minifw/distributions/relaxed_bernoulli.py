"""Relaxed (Concrete / Gumbel-softmax) Bernoulli distributions (Maddison et al., 2017): a
differentiable stand-in for a coin flip whose samples approach 0/1 as temperature goes to 0."""

from ..functions.activation import SmoothRectifier
from ..tensor import Tensor, rand
from ..tensor import tensor as _as_tensor
from . import constraints
from .distribution import Distribution, clamp_probs
from .probs_logits import ProbsOrLogits
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform


def _temperature(owner, temperature, like):
    if isinstance(temperature, Tensor):
        return temperature.to(like.dtype) if temperature.dtype.kind != "f" else temperature
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        return _as_tensor(float(temperature), dtype=like.dtype, device=like.device)
    raise TypeError(f"{owner}: temperature must be a number or a Tensor, got {type(temperature).__name__}")


class LogitRelaxedBernoulli(ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli draw: (logits + log u - log(1 - u)) / temperature,
    u ~ U(0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = False  # as PyTorch's, although rsample works (RelaxedBernoulli's is True)
    _batch_attributes = ("probs", "logits", "_param")

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        param = self._set_probs_or_logits("LogitRelaxedBernoulli", probs, logits)
        self.temperature = _temperature("LogitRelaxedBernoulli", temperature, param)
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs)
        u = clamp_probs(rand(*shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        diff = self.logits - value * self.temperature
        return self.temperature.log() + diff - 2 * SmoothRectifier.apply(diff, beta=1.0, threshold=20.0)


class RelaxedParameters:
    """A relaxed distribution's parameters: its base distribution's (temperature, probs,
    logits, and those given when it was made)."""

    def _given_parameters(self):
        return self.base_dist._given_parameters()

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(RelaxedParameters, TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli draw, in (0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)
