"""Module: the base of every layer and model, as torch.nn.Module.

Assigning a Parameter, a Module or (through register_buffer) a Tensor to an
attribute registers it, so parameters(), state_dict() and friends find it by
its dotted name ("conv1.weight"). Forward hooks run around forward() when the
module is called, as PyTorch's; so do the global hooks (register_module_forward_hook, ...),
which apply to every module.

Backward hooks, as PyTorch's BackwardHook (torch/utils/hooks.py): when a module has any, its
call wraps the Tensors among its positional arguments, and those it returns, in an identity
Function (BackwardHookFunction). The walk reaches the outputs' node first, with the gradients
of the outputs: the pre-hooks run there and grad_output is kept; it reaches the inputs' node
once every use of the inputs inside forward has added its part, with grad_input: the full
hooks run there. Each call has its own state, so a module called twice in one graph fires its
hooks twice. A module without backward hooks records nothing extra.

State-dict hooks run inside state_dict() and load_state_dict(), per module, in PyTorch's
order: a module's pre-hooks, its own entries, its children (each with its own hooks), its
post-hooks.
"""
import collections
import collections.abc
import functools
import itertools
import threading
import warnings
import weakref

import numpy as np

from ...autograd import Function, is_grad_enabled, no_grad
from ... import devices
from ...checks import check_tensor_dtype
from ...tensor import Tensor, _cuda_device
from ..parameter import Parameter


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")):
    """load_state_dict's result: (missing_keys, unexpected_keys), shown as PyTorch shows it
    ("<All keys matched successfully>" when both are empty)."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


IncompatibleKeys = _IncompatibleKeys
_loading = threading.local()  # .copies: the copies a load_state_dict in progress makes at its end


def _array_of(value):
    """The array of a state_dict entry (a Tensor, an array of any device, or array-like)."""
    if isinstance(value, Tensor):
        return value._data
    return value if devices.is_array(value) else np.asarray(value)

def _copy_into(target, array):
    with no_grad():
        devices.assign(target._data, Ellipsis, array.astype(target.dtype, copy=False))


def _assign(module, name, target, value):
    """load_state_dict(assign=True)'s change of member `name` (now `target`) to `value`."""
    if not isinstance(value, Tensor):
        value = Tensor._make(_array_of(value))
    if name in module._parameters:
        if isinstance(value, Parameter):
            value.requires_grad_(target.requires_grad)
        else:
            value = Parameter(value, requires_grad=target.requires_grad)
        module._parameters[name] = value
    else:
        module._buffers[name] = value


def _raise_load_errors(module, errors, missing, unexpected):
    """PyTorch's message: missing keys, then unexpected ones, then every other problem."""
    head = []
    if missing:
        head.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
    if unexpected:
        head.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
    raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t"
                       + "\n\t".join(head + errors))


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
    """What every hook registration returns: remove() unregisters the hook (again: nothing);
    as a context manager, the hook is registered for the block."""

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


# ---- hooks on every module (PyTorch's register_module_*_hook) ---------------------------------
# _global_hook_ids holds the id of every global hook registered, so that Module.__call__ tells
# with one test that there are none.
_global_hook_ids = _IdSet()
_global_forward_pre_hooks = collections.OrderedDict()
_global_forward_hooks = collections.OrderedDict()
_global_forward_hooks_with_kwargs = _IdSet()
_global_forward_hooks_always_called = _IdSet()
_global_backward_pre_hooks = collections.OrderedDict()
_global_backward_hooks = collections.OrderedDict()
_global_is_full_backward_hook = None  # as a module's _is_full_backward_hook


def _register_global(hooks, hook, *extra):
    handle = RemovableHandle(hooks, _global_hook_ids, *extra)
    hooks[handle.id] = hook
    _global_hook_ids.add(handle.id)
    return handle


def register_module_forward_pre_hook(hook):
    """hook(module, args) runs before every module's forward (before the module's own
    pre-hooks), as Module.register_forward_pre_hook. Returns a handle."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) runs after every module's forward (before the module's own
    forward hooks), as Module.register_forward_hook. Returns a handle."""
    handle = _register_global(_global_forward_hooks, hook, _global_forward_hooks_with_kwargs,
                              _global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module, before the module's own ones, as
    Module.register_full_backward_pre_hook. Returns a handle."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before the module's own ones,
    as Module.register_full_backward_hook. Returns a handle."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = True
    return _register_global(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """The deprecated global backward hook: in minifw the full hook (see
    Module.register_backward_hook), with PyTorch's deprecation warning."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _warn_backward_hook()
    _global_is_full_backward_hook = False
    return _register_global(_global_backward_hooks, hook)


def _warn_backward_hook():
    warnings.warn("register_backward_hook is deprecated in favor of register_full_backward_hook; "
                  "in minifw it is the full hook: grad_input holds the gradients with respect to "
                  "the module's inputs (PyTorch's gives those of the inputs of the module's last "
                  "operation)", FutureWarning, stacklevel=3)


# ---- backward hooks -----------------------------------------------------------------------------
class BackwardHookFunction(Function):
    """The identity on a module's input (or output) Tensors, recorded so that the backward walk
    calls `on_backward` with their gradients; what it returns goes on instead. Tensors that do
    not require grad come out marked non-differentiable, as in PyTorch's."""

    _on_arrays = False  # Tensors in and out: the hooks get and return Tensors

    @staticmethod
    def forward(ctx, on_backward, requires, *tensors):
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(False)  # a pre-hook sees None for a gradient that never came
        ctx.mark_non_differentiable(*[t for t, r in zip(tensors, requires) if not r])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx.on_backward(grads))


class _BackwardHook:
    """One call's backward hooks (PyTorch's torch.utils.hooks.BackwardHook): the hooks get
    tuples with one entry per positional argument (grad_input) or per output (grad_output),
    None where it is not a Tensor or got no gradient."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_index = self.output_index = None
        self.input_meta = self.output_meta = ()

    @staticmethod
    def _pack(index, values, size):
        packed = [None] * size
        for i, v in zip(index, values):
            packed[i] = v
        return tuple(packed)

    @staticmethod
    def _wrap(values, on_backward):
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        requires = tuple(values[i].requires_grad for i in index)
        if not (any(requires) and is_grad_enabled()):
            return values, None, ()
        tensors = [values[i] for i in index]
        meta = tuple((t.shape, t.dtype, t.device) for t in tensors)
        wrapped = BackwardHookFunction.apply(on_backward, requires, *tensors)
        values = list(values)
        for i, t in zip(index, wrapped):
            values[i] = t
        return tuple(values), index, meta

    @staticmethod
    def _materialized(grads, meta):
        """Zeros for the gradients that never came, as PyTorch's BackwardHookFunction gets them
        (so that grad_input has zeros there, and an input that requires grad gets them)."""
        return tuple(Tensor._make(devices.zeros(*m)) if g is None else g for g, m in zip(grads, meta))

    def setup_input_hook(self, args):
        args, self.input_index, self.input_meta = self._wrap(args, self._input_grads)
        self.n_inputs = len(args)
        return args

    def setup_output_hook(self, result):
        if not isinstance(result, (Tensor, tuple)):
            warnings.warn(f"For backward hooks to be called, module output should be a Tensor or a "
                          f"tuple of Tensors but received {type(result)}", stacklevel=3)
        single = not isinstance(result, tuple)
        outputs, self.output_index, self.output_meta = self._wrap((result,) if single else result,
                                                                  self._output_grads)
        self.n_outputs = 1 if single else len(result)
        return outputs[0] if single else outputs

    def _output_grads(self, grads):
        """At the outputs' node: keep grad_output, after the pre-hooks (which may replace it)."""
        self.grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            replaced = hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(replaced)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = replaced
        grad_outputs = self.grad_outputs
        if self.input_index is None:
            # no input requires grad, so no inputs' node will run: the hooks run here
            warnings.warn("Full backward hook is firing when gradients are computed with respect to "
                          "module outputs since no inputs require gradients.", stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, grad_inputs, self.grad_outputs)
                if result is not None and not (isinstance(result, tuple) and
                                               all(g is None for g in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                       "should always return None or None for all gradients.")
            self.grad_outputs = None
        return self._materialized([grad_outputs[i] for i in self.output_index], self.output_meta)

    def _input_grads(self, grads):
        """At the inputs' node: the full hooks, with grad_input (which they may replace)."""
        grads = self._materialized(grads, self.input_meta)
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs' node
            return grads
        grad_inputs = self._pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            replaced = hook(self.module, grad_inputs, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got "
                                   f"{len(replaced)}, but expected {len(grad_inputs)}")
            grad_inputs = replaced
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_index)


class Buffer(Tensor):
    """A tensor that, assigned to a module's attribute, is registered as a buffer (state that is
    not learnable), as PyTorch 2.5's nn.Buffer: `self.mask = nn.Buffer(t, persistent=False)` is
    `self.register_buffer("mask", t, persistent=False)`. It shares t's memory."""

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            array = np.empty(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._data
        else:
            raise TypeError(f"Buffer: data must be a minifw.Tensor or None, got {type(data).__name__}")
        if not isinstance(persistent, bool):
            raise TypeError(f"Buffer: persistent must be a bool, got {type(persistent).__name__}")
        self._set(array, None, 0, False)
        if isinstance(data, Tensor):
            self._version_counter = data._version_counter
        self.persistent = persistent


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
        object.__setattr__(self, "_backward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_backward_hooks", collections.OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)
        object.__setattr__(self, "_state_dict_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_state_dict_hooks", collections.OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks_with_module", _IdSet())
        object.__setattr__(self, "_load_state_dict_post_hooks", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (_global_hook_ids or d.get("_forward_pre_hooks") or d.get("_forward_hooks")
                or d.get("_backward_hooks") or d.get("_backward_pre_hooks")):
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

    # ---- backward hooks ---------------------------------------------------------------
    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) runs when the gradients of the module's outputs have been
        computed, before those of its inputs; a tuple it returns replaces grad_output (a tuple,
        one entry per output, None where an output is not a Tensor or got no gradient)."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) runs when the gradients with respect to the
        module's inputs have been computed; a tuple it returns replaces grad_input. grad_input
        has one entry per positional argument (keyword arguments get none), None where the
        argument is not a Tensor or gets no gradient. When no input requires grad, the hook
        runs with grad_input all None once grad_output is known, as PyTorch's."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a "
                               "single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated in PyTorch, whose version gives the gradients of the module's last
        operation rather than of the module; minifw's is register_full_backward_hook, with
        PyTorch's deprecation (a FutureWarning) and its rule against mixing the two."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a "
                               "single Module. Please use only one of them.")
        _warn_backward_hook()
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _call_with_hooks(self, args, kwargs):
        result, called = None, set()
        d = self.__dict__
        pre_hooks = list(itertools.chain(_global_forward_pre_hooks.items(),
                                         d.get("_forward_pre_hooks", {}).items()))
        backward_hooks = list(itertools.chain(_global_backward_hooks.values(),
                                              d.get("_backward_hooks", {}).values()))
        backward_pre_hooks = list(itertools.chain(_global_backward_pre_hooks.values(),
                                                  d.get("_backward_pre_hooks", {}).values()))
        try:
            for hook_id, hook in pre_hooks:  # (a list: a hook may remove itself)
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
            backward = None
            if backward_hooks or backward_pre_hooks:
                backward = _BackwardHook(self, backward_hooks, backward_pre_hooks)
                args = backward.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in self._all_forward_hooks():
                called.add(hook_id)
                replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                if replaced is not None:
                    result = replaced
            if backward is not None:
                result = backward.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in self._all_forward_hooks():
                if hook_id in called:
                    continue
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    try:
                        replaced = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                        if replaced is not None:
                            result = replaced
                    except Exception as e:  # the first error is the one to report
                        warnings.warn(f"forward hook with ``always_call=True`` raised an exception "
                                      f"that was silenced as another error was raised in forward: "
                                      f"{e}")
            raise

    def _all_forward_hooks(self):
        return list(itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()))

    def _run_forward_hook(self, hook_id, hook, args, kwargs, result):
        if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
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
        elif isinstance(value, Buffer):
            self.register_buffer(name, value, value.persistent)
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

    def set_submodule(self, target, module, strict=False):
        """Put `module` at dotted path `target` ("features.0"), as PyTorch's: the parent must
        exist; with strict=True the name must already be a member of it; a member there that
        is not a module is an AttributeError either way."""
        if not isinstance(target, str) or target == "":
            raise ValueError(f"set_submodule: target must be a dotted path, got {target!r}")
        if not isinstance(module, Module):
            raise ValueError(f"set_submodule: module must be an nn.Module, got {type(module).__name__}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def compile(self, *args, **kwargs):
        """Module.compile, as minifw.compile: accepted (any arguments) and changes nothing;
        returns None, as PyTorch's in-place form."""
        return None

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
                        if t is not None and hasattr(t, "materialize"):
                            t._convert(convert)  # a lazy layer's: only dtype and device change
                        elif t is not None:
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

    def half(self):
        """Refused, as Tensor.half is: minifw computes in float32 and float64 only."""
        raise TypeError("Module.half: minifw has no float16 tensors (float32 and float64 only); "
                        "keep the model in float32")

    def bfloat16(self):
        """Refused, as Tensor.bfloat16 is: minifw computes in float32 and float64 only."""
        raise TypeError("Module.bfloat16: minifw has no bfloat16 tensors (float32 and float64 "
                        "only); keep the model in float32")

    def share_memory(self):
        """share_memory_() on every parameter and buffer (see Tensor.share_memory_)."""
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for t in store.values():
                    if t is not None:
                        t.share_memory_()
        return self

    # ---- state ------------------------------------------------------------------------
    _version = 1  # a layout version for state dicts, as PyTorch's (its local_metadata["version"])

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs at the start of this module's part of
        state_dict(), before its own entries are written."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) runs at the end of this module's
        part of state_dict(), after its children's; it may change state_dict in place and must
        return None."""
        hook._from_public_api = True  # as PyTorch marks it: its return value is an error
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        """The older, private form of register_state_dict_post_hook that libraries use: a state
        dict the hook returns replaces the one being built (which only matters at the root)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that "
                               "was previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) runs before this module's entries are loaded; it may change
        state_dict (the copy load_state_dict works on) and the lists in place."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """The private form: hook(state_dict, prefix, ...) without the module, unless
        with_module."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks,
                                 self._load_state_dict_pre_hooks_with_module)
        self._load_state_dict_pre_hooks[handle.id] = hook
        if with_module:
            self._load_state_dict_pre_hooks_with_module.add(handle.id)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after this module and its children are loaded;
        it may change incompatible_keys.missing_keys and .unexpected_keys in place (before
        strict=True checks them) and must return None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its children's), as PyTorch's: what a subclass
        overrides to store something else."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name, in registration order. The
        values share memory with the module (detached unless keep_vars) and so stay on its
        device, as in PyTorch; minifw.save writes host copies. The dict's `_metadata` holds
        each module's {"version": ...} under its dotted name, as PyTorch's."""
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own entries (its parameters and persistent buffers, not its
        children's) from state_dict, whose keys are prefixed with `prefix`, as PyTorch's: run
        the load pre-hooks, then check each value's shape, noting problems in the lists.
        Inside load_state_dict the copies wait until the whole tree has been checked (a
        failed load changes nothing), except for a module whose class overrides this method,
        which may read its values right after calling it, as in PyTorch: its copies are made
        at once, and undone if the load fails. Called by itself, it copies at once."""
        for hook_id, hook in list(self._load_state_dict_pre_hooks.items()):
            if hook_id in self._load_state_dict_pre_hooks_with_module:
                hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                     unexpected_keys, error_msgs)
            else:
                hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                     error_msgs)
        own = {name: value for name, value in itertools.chain(
            self._parameters.items(),
            ((name, b) for name, b in self._buffers.items() if name not in self._non_persistent))
            if value is not None}
        copies = getattr(_loading, "copies", None)
        at_once = copies is None or type(self)._load_from_state_dict is not Module._load_from_state_dict
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, target in own.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            array = _array_of(state_dict[key])
            if array.shape != target.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{tuple(array.shape)} from checkpoint, the shape in current "
                                  f"model is {tuple(target.shape)}")
            elif assign:
                put = functools.partial(_assign, self, name, target, state_dict[key])
                if not at_once:
                    copies.append(put)
                else:
                    if copies is not None:  # the member it had, should the load fail
                        store = self._parameters if name in self._parameters else self._buffers
                        _loading.undo.append(functools.partial(store.__setitem__, name, target))
                    put()
            elif not at_once:
                copies.append((target, array))
            else:
                if copies is not None:  # the value it had, should the load fail
                    _loading.undo.append((target, target._data.copy()))
                _copy_into(target, array)
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    name = key[len(prefix):].split(".", 1)
                    if (name[0] not in self._modules) if len(name) > 1 else (name[0] not in own):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values into this module's parameters and buffers (in place, so onto the
        module's device whatever device a value is on, as PyTorch's copy_). Every shape
        must match; with strict=True the keys must match exactly as well. Returns
        (missing_keys, unexpected_keys).

        assign=True puts the state dict's tensors themselves in the module instead, as
        PyTorch's: a parameter becomes a Parameter sharing the loaded tensor's memory (with
        its dtype and device, and the module's requires_grad), a buffer the loaded tensor.

        The walk is PyTorch's: each module's load pre-hooks and entries, then its children
        (each seeing only the keys under its prefix), then its post-hooks. Unlike PyTorch, a
        load that fails changes nothing: the values are copied only once every module has
        been checked (before the post-hooks, which see the loaded values; when a post-hook
        could still clear strict's missing or unexpected keys, before they are checked)."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of names to tensors, got "
                            f"{type(state_dict).__name__}")
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)  # the hooks may change this copy
        if metadata is not None:
            state_dict._metadata = metadata
        missing, unexpected, errors, walked = [], [], [], []

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata = dict(local_metadata, assign_to_params_buffers=True)
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            walked.append(module)  # post-hooks run in this order: children before parents

        outer = getattr(_loading, "copies", None), getattr(_loading, "undo", None)  # (a hook may
        _loading.copies, _loading.undo = copies, undo = [], []                     # load another)
        try:
            load(self, state_dict)
        finally:
            _loading.copies, _loading.undo = outer
        post_hooks = any(m._load_state_dict_post_hooks for m in walked)
        if errors or (strict and (missing or unexpected) and not post_hooks):
            for entry in reversed(undo):  # (target, old array), or a function that undoes a
                entry() if callable(entry) else _copy_into(*entry)  # lazy layer's materialize
            _raise_load_errors(self, errors, missing if strict else [], unexpected if strict else [])
        for entry in copies:  # (target, array), or a function that assigns (assign=True)
            entry() if callable(entry) else _copy_into(*entry)
        incompatible = IncompatibleKeys(missing, unexpected)
        for module in walked:
            for hook in list(module._load_state_dict_post_hooks.values()):
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` "
                                         "are not expected to return new values, if "
                                         "incompatible_keys need to be modified, it should be done "
                                         "inplace.")
        if strict and (missing or unexpected):
            _raise_load_errors(self, [], missing, unexpected)
        return incompatible

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
