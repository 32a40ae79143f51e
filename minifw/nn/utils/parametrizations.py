"""Weight normalization and spectral normalization as parametrizations (as
torch.nn.utils.parametrizations): the module's weight is computed from its originals at
each access, and the originals are what the optimizer trains.

    layer = weight_norm(nn.Linear(20, 40))    # parametrizations.weight.original0 (g), original1 (v)
    layer = spectral_norm(nn.Conv2d(3, 8, 3))  # parametrizations.weight.original, buffers _u, _v
"""
from ...autograd import no_grad
from ...tensor import Tensor, randn
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from .parametrize import register_parametrization


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dim but `dim` (kept, size-1 elsewhere); over all of v for
    dim -1."""
    if dim == -1:
        return (v * v).sum().sqrt()
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return (v * v).sum(dim=axes, keepdim=True).sqrt() if axes else v.abs()


def _weight_norm_dim(fn, dim, ndim):
    """The kept dim in [0, ndim), or -1 (dim None) for one norm over the whole tensor."""
    if dim is None:
        return -1
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fn}: dim must be an int or None, got {type(dim).__name__}")
    if not -ndim <= dim < max(ndim, 1):
        raise ValueError(f"{fn}: dim must be in [{-ndim}, {ndim - 1}] for a {ndim}-D weight, got {dim}")
    return dim % ndim if ndim else 0


class _WeightNorm(Module):
    """weight = g * v / ||v||, the norm over every dim but `dim` (Salimans & Kingma, 2016)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize module.<name> as g * v / ||v|| (g: original0, v: original1); dim is the
    dim kept by the norm (None, or -1 as in PyTorch: one norm over the whole tensor). A state
    dict of the older hook-based weight_norm (<name>_g, <name>_v) loads into it. Returns
    module."""
    fn = "weight_norm"
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"{fn}: module {type(module).__name__} has no parameter or buffer named {name!r}")
    if dim == -1:  # as PyTorch's weight norms: the whole tensor, not its last dim
        dim = None
    register_parametrization(module, name, _WeightNorm(_weight_norm_dim(fn, dim, weight.ndim)), unsafe=True)

    def load_older_keys(state_dict, prefix, *args):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_older_keys)
    return module


def _output_dim(module):
    """The dim of a layer's weight that holds its outputs: 1 for the transposed convolutions,
    0 for the others."""
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


class _SpectralNorm(Module):
    """weight / sigma, sigma the weight's largest singular value estimated by power
    iteration (Miyato et al., 2018): in training mode each access runs n_power_iterations
    steps on the kept vectors _u and _v (buffers); in eval mode they stay as they are."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = F.normalize(randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            v = F.normalize(randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, mat, n):
        for _ in range(n):
            self._u.copy_(F.normalize(mat @ self._v, dim=0, eps=self.eps))
            self._v.copy_(F.normalize(mat.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize module.<name> as weight / sigma (its spectral norm, by power iteration).
    dim: the output dim, 1 for the transposed convolutions and 0 otherwise by default. Returns
    module."""
    fn = "spectral_norm"
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"{fn}: module {type(module).__name__} has no parameter or buffer named {name!r}")
    if not isinstance(n_power_iterations, int) or isinstance(n_power_iterations, bool) \
            or n_power_iterations <= 0:
        raise ValueError(f"{fn}: n_power_iterations must be a positive int, got {n_power_iterations!r}")
    if dim is None:
        dim = _output_dim(module)
    dim = _weight_norm_dim(fn, dim, weight.ndim)
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
