"""The Dirichlet distribution over probability vectors (the last dim), the conjugate prior of
a Categorical's probs."""
import numpy as np

from ..tensor import Tensor, arange, get_default_dtype
from ..tensor import tensor as _as_tensor
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma_rsample


class Dirichlet(Distribution):
    """Density Gamma(sum c) / prod Gamma(c_i) * prod x_i^(c_i - 1) on the simplex; batch_shape
    is concentration's shape without the last dim, event_shape its last dim. rsample() normalizes
    reparameterized Gamma(c_i, 1) draws, so gradients reach concentration."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _batch_attributes = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, Tensor):
            concentration = _as_tensor(concentration)
        if concentration.dtype.kind != "f":
            concentration = concentration.to(get_default_dtype())
        if concentration.ndim < 1:
            raise ValueError("Dirichlet: concentration must have at least one dim (the categories), "
                             "got a 0-d tensor")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        excess = (c - 1).clamp(min=0.0)
        with np.errstate(invalid="ignore"):  # 0 / 0 where every c < 1: replaced below
            mode = excess / excess.sum(-1, keepdim=True)
        # with every concentration below 1 the density peaks at a corner: PyTorch's choice of it
        corner = (arange(c.shape[-1], device=c.device) == mode.argmax(-1).unsqueeze(-1)).to(c.dtype)
        return corner.where((c < 1).all(-1).unsqueeze(-1), mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        """Independent Gamma(c_i, 1) draws, normalized; each draw's derivative in its c_i by
        implicit reparameterization, the normalization's by autograd."""
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(self.concentration, shape)
        x = g / g.sum(-1, keepdim=True)
        finfo = np.finfo(np.dtype(x.dtype))
        return x.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        value = self._value(value)
        c = self.concentration
        return (c - 1).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    def entropy(self):
        c = self.concentration
        k, total = c.shape[-1], c.sum(-1)
        return c.lgamma().sum(-1) - total.lgamma() - (k - total) * total.digamma() \
            - ((c - 1) * c.digamma()).sum(-1)
