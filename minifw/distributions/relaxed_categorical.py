"""Relaxed (Concrete / Gumbel-softmax) one-hot categorical distributions (Jang et al., Maddison
et al., 2017): points of the simplex that approach one-hot vectors as temperature goes to 0."""
import math


from ..tensor import rand
from . import constraints
from .categorical import Categorical
from .distribution import Distribution, clamp_probs
from .relaxed_bernoulli import RelaxedParameters, _temperature
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log_softmax((logits + g) / temperature), g
    standard Gumbel noise."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = _temperature("ExpRelaxedCategorical", temperature, self._categorical._param)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=False)
        self._validate_args = self._categorical._validate_args

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    def _given_parameters(self):
        return self._categorical._given_parameters()

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(*shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-u.log()).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        k = self._event_shape[0]
        # log((K - 1)! * temperature^(K - 1)) from the change of variables
        log_scale = math.lgamma(k) + (k - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedParameters, TransformedDistribution):
    """exp of an ExpRelaxedCategorical draw: a point of the simplex."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)
