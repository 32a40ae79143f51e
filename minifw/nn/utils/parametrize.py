"""Parametrizations, as torch.nn.utils.parametrize: a module's tensor (say `weight`) is
replaced by a function of an unconstrained original, evaluated at each access.

    register_parametrization(layer, "weight", Symmetric())
    layer.weight                              # Symmetric()(layer.parametrizations.weight.original)

The module's class is swapped for a subclass (ParametrizedLinear, ...) with a property of
that name; the originals live in `module.parametrizations[name]` (a ParametrizationList),
so a state_dict holds `parametrizations.weight.original` (or `original0`, `original1`, ...
where the parametrization's right_inverse returns several tensors), as in PyTorch."""
import contextlib

from ...autograd import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, at its first access
    (for a forward that reads a weight many times, as an RNN's)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the original(s): `original`,
    or `original0`, `original1`, ... when the first parametrization's right_inverse returns a
    sequence of tensors (whose forward then takes them as separate arguments)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        new = original
        if hasattr(first, "right_inverse"):
            with no_grad():
                try:
                    new = first.right_inverse(original)
                except NotImplementedError:  # as PyTorch: taken to be the identity
                    new = original
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        # a parameter stays a parameter and a buffer a buffer, as in PyTorch
        is_parameter = isinstance(original, Parameter)
        if self.is_tensor:
            if not unsafe and (new.dtype != original.dtype or tuple(new.shape) != tuple(original.shape)):
                raise ValueError(f"register_parametrization: right_inverse must keep the tensor's "
                                 f"shape {tuple(original.shape)} and dtype {original.dtype} (or pass "
                                 f"unsafe=True), got {tuple(new.shape)} {new.dtype}")
            if new is not original and new.dtype == original.dtype \
                    and tuple(new.shape) == tuple(original.shape):
                with no_grad():  # the same object keeps the value: an optimizer holding it still sees it
                    original.copy_(new)
                new = original
            if new is not original:
                new = Parameter(new.detach(), requires_grad=original.requires_grad) if is_parameter \
                    else new.detach()
            _register_tensor(self, "original", new, is_parameter)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise TypeError(f"register_parametrization: right_inverse must return a Tensor "
                                    f"or a sequence of Tensors, got a {type(t).__name__} at {i}")
                t = Parameter(t.detach(), requires_grad=original.requires_grad) if is_parameter \
                    else t.detach()
                _register_tensor(self, f"original{i}", t, is_parameter)
        if not unsafe:
            value = self()
            if not isinstance(value, Tensor) or tuple(value.shape) != tuple(original.shape) \
                    or value.dtype != original.dtype:
                raise ValueError(f"register_parametrization: the parametrization must give the "
                                 f"tensor's shape {tuple(original.shape)} and dtype {original.dtype} "
                                 f"(or pass unsafe=True), got "
                                 f"{getattr(value, 'shape', type(value).__name__)}")

    def _originals(self):
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self):
        modules = list(self._modules.values())
        x = modules[0](*self._originals())
        for m in modules[1:]:
            x = m(x)
        return x

    def right_inverse(self, value):
        """Set the originals so that the parametrized tensor becomes `value` (each
        parametrization's right_inverse, last first; one without it passes value on)."""
        with no_grad():
            for m in reversed(list(self._modules.values())):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} has no right_inverse: "
                                       f"the parametrized tensor cannot be assigned")
                value = m.right_inverse(value)
            values = (value,) if self.is_tensor else tuple(value)
            if len(values) != self.ntensors:
                raise ValueError(f"right_inverse must return {self.ntensors} tensors, got {len(values)}")
            for original, v in zip(self._originals(), values):
                if tuple(v.shape) != tuple(original.shape):
                    raise ValueError(f"right_inverse gave shape {tuple(v.shape)} for an original of "
                                     f"shape {tuple(original.shape)}")
                original.copy_(v)


def _register_tensor(module, name, value, is_parameter):
    if is_parameter:
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _give_class(module, original, names):
    """module's class becomes a new subclass of `original` on which each parametrized tensor in
    `names` is a property: a class of its own, so that other modules of `original` (and
    copies of this module, which share its class) are not touched."""
    module.__class__ = type(f"Parametrized{original.__name__}", (original,),
                            {"_original_class": original, **{n: _property(n) for n in names}})


def _property(name):
    def get(self):
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(get, set)


def is_parametrized(module, tensor_name=None):
    """Whether the module has parametrizations (for tensor_name, if given)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists._modules


def type_before_parametrizations(module):
    """The module's class as it was before register_parametrization swapped it (its class
    when it has no parametrizations)."""
    return type(module)._original_class if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make module.<tensor_name> the output of `parametrization` (a Module) applied to the
    tensor's original value, or chain it after the parametrizations the tensor has. With
    unsafe=False the parametrization must keep the tensor's shape and dtype. The original
    stays a parameter (the same object, where right_inverse keeps its shape and dtype) or a
    buffer, as it was; the parametrization takes the module's training mode. Returns module."""
    fn = "register_parametrization"
    if not isinstance(module, Module):
        raise TypeError(f"{fn}: module must be a minifw.nn.Module, got {type(module).__name__}")
    if not isinstance(parametrization, Module):
        raise TypeError(f"{fn}: parametrization must be a minifw.nn.Module, got "
                        f"{type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            value = parametrization(getattr(module, tensor_name))
            if tuple(value.shape) != tuple(getattr(module, tensor_name).shape):
                raise ValueError(f"{fn}: the parametrization must keep {tensor_name}'s shape "
                                 f"{tuple(getattr(module, tensor_name).shape)}, got {tuple(value.shape)}")
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
        return module
    if tensor_name in module._parameters and module._parameters[tensor_name] is not None:
        original = module._parameters[tensor_name]
    elif tensor_name in module._buffers and module._buffers[tensor_name] is not None:
        original = module._buffers[tensor_name]
    else:
        raise ValueError(f"{fn}: module {type(module).__name__} has no parameter or buffer named "
                         f"{tensor_name!r}")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    original_class = type(module)._original_class if is_parametrized(module) else type(module)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _give_class(module, original_class, module.parametrizations._modules)
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization for tensor_name: the tensor becomes a plain parameter
    again, holding its current parametrized value (leave_parametrized) or its original."""
    fn = "remove_parametrizations"
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"{fn}: module {type(module).__name__} has no parametrization on "
                         f"{tensor_name!r}")
    plist = module.parametrizations[tensor_name]
    is_parameter = any(n in plist._parameters for n in
                       (["original"] if plist.is_tensor else [f"original{i}" for i in range(plist.ntensors)]))
    with no_grad():
        if leave_parametrized:
            value = getattr(module, tensor_name).detach()
            requires_grad = any(o.requires_grad for o in plist._originals())
            if plist.is_tensor and tuple(value.shape) == tuple(plist.original.shape) \
                    and value.dtype == plist.original.dtype:
                plist.original.copy_(value)
                param = plist.original
            elif is_parameter:
                param = Parameter(value.clone(), requires_grad=requires_grad)
            else:
                param = value.clone()
        elif plist.is_tensor:
            param = plist.original
        else:
            raise ValueError(f"{fn}: leave_parametrized=False needs a single original tensor; "
                             f"{tensor_name!r} has {plist.ntensors}")
    del module.parametrizations[tensor_name]
    original_class = type(module)._original_class
    if module.parametrizations._modules:
        _give_class(module, original_class, module.parametrizations._modules)
    else:
        delattr(module, "parametrizations")
        module.__class__ = original_class
    _register_tensor(module, tensor_name, param, is_parameter)
    return module
