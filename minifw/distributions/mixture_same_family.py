"""MixtureSameFamily: a mixture whose components are one batched distribution, chosen by a
Categorical (a Gaussian mixture model as one distribution)."""
import numpy as np

from ..autograd import no_grad
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """mixture_distribution: a Categorical over K components (batch_shape B); 
    component_distribution: any distribution with batch_shape B + (K,). Samples pick a
    component, then draw from it; log_prob is the log-sum-exp over components. No rsample, as
    PyTorch's."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(f"MixtureSameFamily: mixture_distribution must be a Categorical, got "
                             f"{type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise ValueError(f"MixtureSameFamily: component_distribution must be a Distribution, got "
                             f"{type(component_distribution).__name__}")
        mix_batch, comp_batch = mixture_distribution.batch_shape, component_distribution.batch_shape
        if len(comp_batch) < 1:
            raise ValueError("MixtureSameFamily: component_distribution must have a batch dim for the "
                             "components, got batch_shape ()")
        try:
            fits = np.broadcast_shapes(mix_batch, comp_batch[:-1]) == comp_batch[:-1]
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"MixtureSameFamily: mixture_distribution's batch_shape {mix_batch} does not "
                             f"broadcast with component_distribution's {comp_batch[:-1]} (its batch_shape "
                             f"without the last dim)")
        k = mixture_distribution.logits.shape[-1]
        if comp_batch[-1] != k:
            raise ValueError(f"MixtureSameFamily: mixture_distribution has {k} components, but "
                             f"component_distribution's last batch dim is {comp_batch[-1]}")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_components = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch[:-1], component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_components,))
        new._mixture_distribution = self._mixture_distribution.expand(tuple(batch_shape))
        return new

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def support(self):
        return self._component_distribution.support

    def _pad_probs(self, t):
        """The mixture's probs (..., K) shaped to multiply component values (..., K, event)."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_probs(None)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(X | k)] + Var(E[X | k])
        probs = self._pad_probs(None)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self._component_distribution.variance).sum(dim)
        var_cond_mean = (probs * (self._component_distribution.mean - self.mean.unsqueeze(dim)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob_x = self._component_distribution.log_prob(self._pad(value))  # (..., B, K)
        log_mix = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value, "cdf")
        cdf_x = self._component_distribution.cdf(self._pad(value))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape=()):
        with no_grad():
            sample_shape = tuple(sample_shape)
            index = self._mixture_distribution.sample(sample_shape)          # sample + B
            x = self._component_distribution.sample(sample_shape)           # sample + B + (K,) + E
            event = self._event_shape
            index = index.reshape(tuple(index.shape) + (1,) * (1 + len(event)))
            index = index.expand(*(tuple(x.shape[:len(x.shape) - len(event) - 1]) + (1,) + event))
            return x.gather(len(x.shape) - len(event) - 1, index).squeeze(len(x.shape) - len(event) - 1)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  "
                f"{self._component_distribution!r})")
