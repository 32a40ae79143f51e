"""Module: the base of every layer and model, as torch.nn.Module.

Assigning a Parameter, a Module or (through register_buffer) a Tensor to an
attribute registers it, so parameters(), state_dict() and friends find it by
its dotted name ("conv1.weight"). Forward hooks run around forward() when the
module is called, as PyTorch's.
"""
import collections
import collections.abc
import itertools
import warnings
import weakref

import numpy as np

from ...autograd import no_grad
from ... import devices
from ...checks import check_tensor_dtype
from ...tensor import Tensor, _cuda_device
from ..parameter import Parameter

IncompatibleKeys = collections.namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")



def _array_of(value):
    """The array of a state_dict entry (a Tensor, an array of any device, or array-like)."""
    if isinstance(value, Tensor):
        return value._data
    return value if devices.is_array(value) else np.asarray(value)

def _check_member_name(fn, kind, name):
    """A parameter's, buffer's or module's name: a non-empty string without ".", which
    state_dict keys use to join names (PyTorch's checks, its TypeError and KeyErrors)."""
    if not isinstance(name, str):
        raise TypeError(f"{fn}: {kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{fn}: {kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{fn}: {kind} name can\'t be empty string ""')


class RemovableHandle:
    """What register_forward_hook and register_forward_pre_hook return: remove() unregisters
    the hook (again: nothing); as a context manager, the hook is registered for the block."""

    _ids = itertools.count()  # next() on it is atomic: unique ids across threads

    def __init__(self, hooks, *extra):
        self.id = next(RemovableHandle._ids)
        # weak: a handle kept by the user does not keep a deleted module's hooks alive
        self._stores = [weakref.ref(hooks)] + [weakref.ref(d) for d in extra]

    def remove(self):
        for ref in self._stores:
            store = ref()
            if isinstance(store, dict):
                store.pop(self.id, None)
            elif store is not None:
                store.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IdSet(set):
    """A set that a weak reference can point at (the ids of a module's with_kwargs hooks)."""


class Module:
    """Base class of layers and models: subclass it, create sub-modules and Parameters
    in __init__, compute in forward(); call the module to run forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", _IdSet())
        object.__setattr__(self, "_forward_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_hooks_with_kwargs", _IdSet())
        object.__setattr__(self, "_forward_hooks_always_called", _IdSet())
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d.get("_forward_pre_hooks") or d.get("_forward_hooks")):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    # ---- forward hooks ----------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward(); returning something other than None
        replaces the positional arguments (a non-tuple becomes the only one). With
        with_kwargs=True, hook(module, args, kwargs) may return (new_args, new_kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) runs after forward(); returning something other than
        None replaces the output (later hooks see the replacement). With with_kwargs=True the
        hook is hook(module, args, kwargs, output); with always_call=True it runs even when
        forward (or an earlier hook) raises. Hooks run in registration order; prepend=True
        puts this one first."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_with_hooks(self, args, kwargs):
        result, called = None, set()
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):  # a hook may remove itself
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    replaced = hook(self, args, kwargs)
                    if replaced is not None:
                        if not (isinstance(replaced, tuple) and len(replaced) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {replaced!r}.")
                        args, kwargs = replaced
                else:
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                if replaced is not None:
                    result = replaced
            return result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                        if replaced is not None:
                            result = replaced
                    except Exception as e:  # the first error is the one to report
                        warnings.warn(f"forward hook with ``always_call=True`` raised an exception "
                                      f"that was silenced as another error was raised in forward: "
                                      f"{e}")
            raise

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    # ---- registration -------------------------------------------------------------
    def _check_ready(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before assigning "
                                 f"parameters or sub-modules")

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._check_ready()
            self._forget(name, keep=self._parameters)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._check_ready()
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to parameter {name!r} "
                                f"(a Parameter or None is required)")
            self._parameters[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer {name!r} "
                                f"(a Tensor or None is required)")
            self._buffers[name] = value
        elif "_modules" in self.__dict__ and name in self._modules and value is None:
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        """Drop `name` from every registry but `keep`, where the caller replaces it in place
        (so a replaced entry keeps its position, as PyTorch's)."""
        for store in (self._parameters, self._buffers, self._modules):
            if store is not keep:
                store.pop(name, None)
        if keep is not self._buffers:
            self._non_persistent.discard(name)
        self.__dict__.pop(name, None)

    def __getattr__(self, name):
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be a Parameter or None, got "
                            f"{type(param).__name__}")
        self._check_ready()
        _check_member_name("register_parameter", "parameter", name)
        self._forget(name, keep=self._parameters)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not learnable (BatchNorm's running_mean). Persistent
        buffers are part of state_dict()."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        self._check_ready()
        _check_member_name("register_buffer", "buffer", name)
        self._forget(name, keep=self._buffers)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got "
                            f"{type(module).__name__}")
        self._check_ready()
        _check_member_name("add_module", "module", name)
        self._forget(name, keep=self._modules)
        self._modules[name] = module

    register_module = add_module

    # ---- walking the tree -----------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every descendant, depth first, children
        in registration order. A module reachable by several paths is listed once, at the
        first, unless remove_duplicate=False; modules in `memo` (a set) are skipped."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:  # pre-order, as PyTorch's recursion
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            children = [(f"{name}.{n}" if name else n, m) for n, m in module._modules.items()
                        if m is not None]
            stack.extend(reversed(children))

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        return (m for _, m in self.named_children())

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, t in getattr(module, store).items():
                if t is None or id(t) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(t))  # a shared (tied) tensor is listed once
                yield (f"{module_name}.{name}" if module_name else name), t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def get_submodule(self, target):
        """The module at dotted path `target` ("" is this module): model.get_submodule("features.0")."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if module.__dict__.get("_modules", {}).get(item) is None:
                raise AttributeError(f"{module._get_name()} has no attribute `{item}` (looking "
                                     f"for submodule `{target}`)")
            module = module._modules[item]
        return module

    def _get_member(self, target, store, kind):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in getattr(module, store):
            raise AttributeError(f"{module._get_name()} has no {kind} `{name}` (looking for "
                                 f"`{target}`)")
        return getattr(module, store)[name]

    def get_parameter(self, target):
        """The Parameter at dotted path `target`: model.get_parameter("fc.weight")."""
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target):
        """The buffer at dotted path `target`: model.get_buffer("bn.running_mean")."""
        return self._get_member(target, "_buffers", "buffer")

    def apply(self, fn):
        """Call fn(module) on every descendant, then on self (children first, as PyTorch)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients -----------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) on this module
        and, through their own train(), on every child; eval() is train(False)."""
        if not isinstance(mode, bool):
            raise TypeError(f"train: mode must be a bool, got {type(mode).__name__}")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (the default since PyTorch 2.0, which
        frees the memory and lets the next backward take its gradient over without a copy),
        or to zeros in place with set_to_none=False."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad._data[...] = 0

    # ---- dtype and device ------------------------------------------------------------
    def _apply_to_tensors(self, convert):
        with no_grad():
            for m in self.modules():
                for store in (m._parameters, m._buffers):
                    for name, t in store.items():
                        if t is not None:
                            t._data = convert(t._data)
                            if t.grad is not None:
                                t.grad._data = convert(t.grad._data)
        return self

    def to(self, *args, dtype=None, device=None, non_blocking=False):
        """to(device), to(dtype) or to(device, dtype): parameters, their gradients and buffers
        move to the device (a copy there, through minifw.devices) and floating point ones
        convert to dtype, in place (the same Parameter objects, so optimizers keep working)."""
        for a in args:
            if isinstance(a, devices.device) or (isinstance(a, str) and
                                                 a.partition(":")[0] in devices.TYPES):
                device = a
            else:
                dtype = a
        target = None if device is None else devices.get(device, "Module.to")
        if dtype is not None:
            dtype = check_tensor_dtype(dtype, "Module.to")
            if dtype.kind != "f":
                raise TypeError(f"Module.to: dtype must be a floating point dtype, got {dtype}")
        if target is None and dtype is None:
            return self

        def convert(a):
            if target is not None:
                a = devices.to_device(a, target)
            return a.astype(dtype) if dtype is not None and a.dtype.kind == "f" else a

        return self._apply_to_tensors(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        """Everything on device "cuda" (or "cuda:<device>"), as in PyTorch. Without a GPU (or
        CuPy, or CUDA kernels in the build) the error says why; "cudasim" runs the same CUDA
        kernels on the CPU emulator."""
        return self.to(_cuda_device("Module.cuda", device))

    def float(self):
        return self.to(np.float32)

    def double(self):
        return self.to(np.float64)

    # ---- state ------------------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name, in registration order. The
        values share memory with the module (detached unless keep_vars) and so stay on its
        device, as in PyTorch; minifw.save writes host copies."""
        destination = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into this module's parameters and buffers (in place, so onto the
        module's device whatever device a value is on, as PyTorch's copy_). Every shape
        must match; with strict=True the keys must match exactly as well. Returns
        (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of names to tensors, got "
                            f"{type(state_dict).__name__}")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            array = _array_of(value)
            if array.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{tuple(array.shape)} from checkpoint, the shape in current model "
                              f"is {tuple(target.shape)}")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    devices.assign(target._data, Ellipsis,
                                   _array_of(state_dict[key]).astype(target.dtype, copy=False))
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------
    def extra_repr(self):
        """The text inside this module's parentheses in repr (its hyper-parameters)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        if not self._modules:
            return f"{self._get_name()}({', '.join(lines)})" if len(lines) <= 1 else \
                f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(itertools.chain(super().__dir__(), self._parameters, self._buffers,
                                          self._modules)))
