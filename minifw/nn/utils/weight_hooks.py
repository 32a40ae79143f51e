"""The older, hook-based weight_norm and spectral_norm of torch.nn.utils (deprecated there in
favour of nn.utils.parametrizations, and here too, with the same FutureWarning for
weight_norm): the module's `weight` parameter is replaced by `weight_g` and `weight_v`
(weight_norm) or `weight_orig` with buffers `weight_u` and `weight_v` (spectral_norm), and
a forward pre-hook recomputes `weight` as a plain tensor attribute before each forward."""
import warnings

from ...autograd import no_grad
from ...tensor import Tensor, randn
from .. import functional as F
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _output_dim, _weight_norm_dim


def _take_parameter(fn, module, name):
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, (_WeightNormHook, _SpectralNormHook)) and hook.name == name:
            raise RuntimeError(f"{fn}: {name!r} of {type(module).__name__} already has a "
                               f"{hook.applied_by} hook registered")
    param = module._parameters.get(name)
    if not isinstance(param, Parameter):
        raise ValueError(f"{fn}: module {type(module).__name__} has no parameter named {name!r}")
    del module._parameters[name]
    return param


def _remove_hook(fn, module, name, kind):
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            del module._forward_pre_hooks[key]
            return hook
    raise ValueError(f"{fn}: no {kind.applied_by} of {name!r} found in {type(module).__name__}")


class _WeightNormHook:
    applied_by = "weight_norm"

    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module, args):
        object.__setattr__(module, self.name, self.compute(module))


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v|| with parameters <name>_g and <name>_v, recomputed before
    each forward (dim: the dim the norm keeps; None, or -1 as in PyTorch, for one norm over the
    whole tensor)."""
    fn = "weight_norm"
    warnings.warn("minifw.nn.utils.weight_norm is deprecated in favour of "
                  "minifw.nn.utils.parametrizations.weight_norm", FutureWarning, stacklevel=2)
    weight = _take_parameter(fn, module, name)
    if dim == -1:  # as PyTorch's weight norms: the whole tensor, not its last dim
        dim = None
    hook = _WeightNormHook(name, _weight_norm_dim(fn, dim, weight.ndim))
    with no_grad():
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, hook.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
    hook(module, ())
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo weight_norm: <name> becomes one parameter again, holding g * v / ||v||."""
    hook = _remove_hook("remove_weight_norm", module, name, _WeightNormHook)
    with no_grad():
        weight = hook.compute(module).detach()
    module.__dict__.pop(name, None)
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module


class _SpectralNormHook:
    applied_by = "spectral_norm"

    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.flatten(1)

    def compute(self, module, power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.matrix(weight)
        if power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mat.detach().T @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat.detach() @ v, dim=0, eps=self.eps))
        sigma = (u.clone() * (mat @ v.clone())).sum()
        return weight / sigma

    def __call__(self, module, args):
        object.__setattr__(module, self.name, self.compute(module, module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> = <name>_orig / sigma, sigma its spectral norm by power iteration on the
    buffers <name>_u and <name>_v (run before each forward in training mode)."""
    fn = "spectral_norm"
    if not isinstance(n_power_iterations, int) or isinstance(n_power_iterations, bool) \
            or n_power_iterations <= 0:
        raise ValueError(f"{fn}: n_power_iterations must be a positive int, got {n_power_iterations!r}")
    weight = _take_parameter(fn, module, name)
    if weight.ndim == 0:
        module._parameters[name] = weight
        raise ValueError(f"{fn}: {name!r} must have at least one dim, got a 0-d tensor")
    if dim is None:
        dim = _output_dim(module)
    hook = _SpectralNormHook(name, n_power_iterations, _weight_norm_dim(fn, dim, weight.ndim), eps)
    h, w = hook.matrix(weight).shape
    with no_grad():
        u = F.normalize(randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
        v = F.normalize(randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
    module.register_parameter(name + "_orig", weight)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    object.__setattr__(module, name, weight.detach().clone())
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo spectral_norm: <name> becomes one parameter again, holding orig / sigma."""
    hook = _remove_hook("remove_spectral_norm", module, name, _SpectralNormHook)
    with no_grad():
        weight = hook.compute(module, False).detach()
    module.__dict__.pop(name, None)
    del module._parameters[name + "_orig"], module._buffers[name + "_u"], module._buffers[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module
