"""Calling a module with other tensors in place of its parameters and buffers, as
torch.nn.utils.stateless.functional_call (and torch.func.functional_call)."""
import contextlib
import warnings

from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["functional_call"]


def _owner(module, key):
    """(submodule, attribute name) for a dotted key such as "layers.0.weight"."""
    *path, name = key.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    return owner, name


def _tied_names(module):
    """For each parameter or buffer shared under several names: name -> all its names."""
    names = {}
    for store in ("_parameters", "_buffers"):
        for prefix, sub in module.named_modules(remove_duplicate=False):
            for name, value in sub.__dict__[store].items():
                if value is not None:
                    names.setdefault(id(value), []).append(f"{prefix}.{name}" if prefix else name)
    return {n: group for group in names.values() if len(group) > 1 for n in group}


def _merged(fn, dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise TypeError(f"{fn}: parameter_and_buffer_dicts must be a dict or a tuple of dicts; "
                        f"got {type(dicts).__name__}")
    merged, repeated = {}, []
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(f"{sorted(set(repeated))} appeared in multiple dictionaries; behavior of "
                         f"functional call is ambiguous")
    return merged


@contextlib.contextmanager
def _reparametrized(fn, module, values, tie_weights, strict):
    values = dict(values)
    if tie_weights:
        tied = _tied_names(module)
        for key in list(values):
            for other in tied.get(key, ()):
                if other in values and values[other] is not values[key]:
                    raise ValueError(f"{fn}: {key!r} and {other!r} are tied in the module (one "
                                     f"tensor), but were given different values")
                values.setdefault(other, values[key])
    if strict:
        expected = {k for k, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {k for k, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(lines))
    restore = []
    try:
        for key, value in values.items():
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{fn}: the value for {key!r} must be a Tensor or None; got "
                                f"{type(value).__name__}")
            owner, name = _owner(module, key)
            # written into the registries directly: a plain Tensor may stand for a Parameter
            for store in ("_parameters", "_buffers"):
                registry = owner.__dict__[store]
                if name in registry:
                    restore.append((registry, name, registry[name]))
                    registry[name] = value
                    break
            else:
                if isinstance(getattr(type(owner), name, None), property):
                    # a parametrized tensor: assigned through its right_inverse, as PyTorch
                    # does, and its value now assigned back afterwards
                    with no_grad():
                        old = getattr(owner, name)
                else:
                    old = owner.__dict__.get(name, _MISSING)
                restore.append((owner, name, old))
                object.__setattr__(owner, name, value)
        yield
    finally:
        for target, name, old in reversed(restore):
            if isinstance(target, dict):
                target[name] = old
            elif old is _MISSING:
                object.__delattr__(target, name)
            else:
                object.__setattr__(target, name, old)


_MISSING = object()


def _call(fn, module, parameter_and_buffer_dicts, args, kwargs, tie_weights, strict):
    values = _merged(fn, parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    with _reparametrized(fn, module, values, tie_weights, strict):
        return module(*args, **kwargs)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the tensors of `parameter_and_buffer_dicts` (a dict, or a
    tuple of dicts, from dotted names such as "0.weight" to Tensors) standing for the module's
    parameters and buffers during the call; the module is unchanged afterwards. With
    tie_weights=True a tensor given for one name of a parameter shared under several names
    stands for all of them; strict=True makes missing or unexpected names an error. args
    that is not a tuple is the single positional argument."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _call("functional_call", module, parameter_and_buffer_dicts, args, kwargs,
                 tie_weights, strict)
