"""Optimizer: parameter groups, per-parameter state, zero_grad, state_dict (as torch.optim)."""
import collections
import copy
import functools
import itertools
import math
import numbers

import numpy as np

from .. import devices
from ..autograd import enable_grad, increment_version
from ..nn.modules.module import RemovableHandle
from ..tensor import Tensor


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: holds param_groups (dicts with 'params' and hyper-parameters) and
    `state` (per-parameter buffers, keyed by the parameter). Subclasses define step().

    A subclass lists its numeric hyper-parameters in _HYPERS, (name, minimum, maximum,
    exclusive_max) each ("betas" a pair, each in [0, 1)): the constructor's values, every
    group add_param_group adds and every group load_state_dict loads must be finite and in
    range (ValueError otherwise, naming the optimizer and the hyper-parameter)."""

    _HYPERS = ()

    def __init_subclass__(cls, **kwargs):
        """Each subclass's step() counts its in-place change of every parameter it updated
        (autograd's version counters, as PyTorch's optimizers' in-place updates do), so that a
        graph that saved a parameter's old values refuses to backward after the step."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is None:
            return

        @functools.wraps(step)
        def counted_step(self, *args, **kwargs):
            # PyTorch's step hooks: the global pre-hooks, then this optimizer's, each of which
            # may return new (args, kwargs); the post-hooks after the step, the global ones last
            for hook in itertools.chain(tuple(_global_step_pre_hooks.values()),
                                        tuple(getattr(self, "_optimizer_step_pre_hooks", {}).values())):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{type(self).__name__}.step: a step pre-hook must "
                                           f"return None or a tuple (new_args, new_kwargs), got "
                                           f"{result!r}")
                    args, kwargs = result
            self._opt_called = True  # (what an lr scheduler checks: its step came after one)
            result = step(self, *args, **kwargs)
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        increment_version(p)
            for hook in itertools.chain(tuple(getattr(self, "_optimizer_step_post_hooks", {}).values()),
                                        tuple(_global_step_post_hooks.values())):
                hook(self, args, kwargs)
            return result

        cls.step = counted_step

    def __init__(self, params, defaults):
        self._check_hypers(defaults)
        self.defaults = defaults
        self._optimizer_step_pre_hooks = collections.OrderedDict()
        self._optimizer_step_post_hooks = collections.OrderedDict()
        self._optimizer_state_dict_pre_hooks = collections.OrderedDict()
        self._optimizer_state_dict_post_hooks = collections.OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = collections.OrderedDict()
        self._optimizer_load_state_dict_post_hooks = collections.OrderedDict()
        self.state = collections.defaultdict(dict)  # as PyTorch's: state[p] is {} until a step
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Tensors or of "
                            f"dicts, got a single Tensor (wrap it in a list)")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group):
        if not isinstance(group, dict):
            raise TypeError(f"add_param_group: a param group must be a dict, got {type(group).__name__}")
        group = dict(group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(f"{type(self).__name__}: parameters must be in an ordered collection "
                            f"(a set's order changes between runs); use a list")
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:  # (name, parameter) pairs, as named_parameters() yields them
            if len(names) != len(params):
                raise ValueError(f"{type(self).__name__}: all parameters of a group should be "
                                 f"with names or all without; some names are missing")
            params = [p[1] for p in params]
            group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize Tensors, got "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__} can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"{type(self).__name__}: parameter group didn't specify a value "
                                 f"of required optimization parameter {name}")
            group.setdefault(name, default)
        self._check_hypers(group)
        _check_implementation_switches(type(self).__name__, group)
        if any(("param_names" in g) != ("param_names" in group) for g in self.param_groups):
            raise ValueError(f"{type(self).__name__}: all param groups should be with names or all "
                             f"without; cannot add a param group "
                             f"{'with' if 'param_names' in group else 'without'} names")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def _check_hypers(self, values, where=""):
        """Checks the hyper-parameters of _HYPERS that `values` (a group, or the defaults)
        holds; a "betas" entry is stored back as a tuple."""
        cls = type(self).__name__ + where
        for name, minimum, maximum, exclusive_max in self._HYPERS:
            if name not in values or values[name] is required:
                continue
            if name == "betas":
                values[name] = _check_betas(cls, values[name])
            else:
                _check_hyper(cls, name, values[name], minimum, maximum, exclusive_max)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients: set each to None (PyTorch's default since 2.0: the next backward
        stores its gradient without adding to zeros, and step() skips a parameter it did not
        reach), or with set_to_none=False fill each with zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad._data[...] = 0

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _evaluate(closure):
        """closure() with autograd on (step runs under no_grad), as PyTorch's step(closure):
        the closure re-evaluates the model and returns the loss, which step returns."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _with_grads(self, group, new_state):
        """(p, g, state) for each parameter of `group` that has a gradient: g the gradient's
        array (negated with maximize), state the parameter's state, made by new_state(p) (after
        step = 0) at its first step; the step is counted before it is yielded."""
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state.update(new_state(p))
            state["step"] += 1
            yield p, (-p.grad._data if group.get("maximize", False) else p.grad._data), state

    # ---- hooks --------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) runs before each step(); it may return None or a tuple
        (new_args, new_kwargs) that step is then called with."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) runs after each step()."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) runs at the start of state_dict()."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs at the end of state_dict(); a dict it returns is
        what state_dict() returns."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs at the start of load_state_dict(), on a shallow copy
        of the dict given; a dict it returns is loaded instead."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) runs at the end of load_state_dict()."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state ------------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {name: Tensor or number}}, 'param_groups': [{..., 'params': [index]}]};
        parameters are numbered in group order, as in PyTorch (and a group made from
        named_parameters() keeps their names, 'param_names')."""
        for hook in tuple(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: (Tensor._make(v.copy()) if devices.is_array(v) else v)
                                           for k, v in self.state[p].items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in tuple(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load state_dict() of an optimizer with as many parameters in each group: the state of
        each parameter (by position) and each group's hyper-parameters. A group's
        'param_names' come from the dict where it has them, else the group keeps its own, as in
        PyTorch, and do not take part in matching parameters."""
        if isinstance(state_dict, dict):
            state_dict = dict(state_dict)  # shallow, as PyTorch's: for the pre-hooks to change
        for hook in tuple(self._optimizer_load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            got = sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict).__name__
            raise ValueError(f"{type(self).__name__}.load_state_dict: expected a dict with 'state' "
                             f"and 'param_groups' (from Optimizer.state_dict()), got {got}")
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(groups)} parameter groups, the optimizer "
                             f"has {len(self.param_groups)}")
        for i, (saved, own) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"loaded state dict's parameter group {i} has "
                                 f"{len(saved['params'])} parameters, the optimizer's has "
                                 f"{len(own['params'])}")
        cls = type(self).__name__
        for i, saved in enumerate(groups):
            # refused before anything changes: a loaded lr of nan would make every parameter nan
            self._check_hypers({k: v for k, v in saved.items() if k != "params"},
                               f".load_state_dict (parameter group {i})")
        saved_state = {int(k): v for k, v in state_dict["state"].items()}
        for index, entry in saved_state.items():
            if isinstance(entry, dict) and "step" in entry:
                v = entry["step"]
                if isinstance(v, Tensor) or devices.is_array(v):
                    if (v.numel() if isinstance(v, Tensor) else v.size) == 1:
                        _check_step(cls, index, v.item())
                else:
                    _check_step(cls, index, v)
        self.state = collections.defaultdict(dict)
        for saved, own in zip(groups, self.param_groups):
            for index, p in zip(saved["params"], own["params"]):
                if int(index) not in saved_state:
                    continue
                entry = {}
                for k, v in saved_state[int(index)].items():
                    if k == "step" and (v.numel() == 1 if isinstance(v, Tensor) else
                                        devices.is_array(v) and v.size == 1):
                        v = int(v.item())  # PyTorch's Adam, Adagrad, RMSprop keep it as a 0-d tensor
                    elif k == "step" and isinstance(v, numbers.Real):
                        v = int(v)  # checked above: a whole number >= 0
                    elif isinstance(v, Tensor) or devices.is_array(v):
                        array = v._data if isinstance(v, Tensor) else v
                        if array.shape != self._state_shape(k, p):
                            raise ValueError(f"loaded state {k!r} has shape {array.shape} for a "
                                             f"parameter of shape {p.shape}; expected "
                                             f"{self._state_shape(k, p)}")
                        v = devices.to_device(array, p.device).astype(p.dtype, copy=True)
                    entry[k] = v
                self.state[p] = entry
            for k, v in saved.items():
                if k != "params":
                    own[k] = copy.deepcopy(v)
            _check_implementation_switches(type(self).__name__, own)
        for hook in tuple(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    def _state_shape(self, name, p):
        """The shape state entry `name` of parameter p has (checked when loading): p's own,
        unless an optimizer keeps reduced statistics (Adafactor's row and column factors)."""
        return p.shape

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


# Step hooks of every optimizer (register_optimizer_step_pre_hook / _post_hook).
_global_step_pre_hooks = collections.OrderedDict()
_global_step_post_hooks = collections.OrderedDict()


def _add_hook(hooks, hook, prepend=False):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) runs before every optimizer's step(), before the
    optimizer's own pre-hooks; it may return (new_args, new_kwargs)."""
    return _add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) runs after every optimizer's step(), after the
    optimizer's own post-hooks."""
    return _add_hook(_global_step_post_hooks, hook)


# PyTorch's words for each hyper-parameter in its "Invalid ...: value" messages.
_LABELS = {"lr": "learning rate", "eps": "epsilon value", "betas[0]": "beta parameter at index 0",
           "betas[1]": "beta parameter at index 1"}


def _show(value):
    """value for a message: an int too long for str() (Python's 4300-digit limit) by its size."""
    if isinstance(value, numbers.Integral) and abs(int(value)) > 10 ** 30:
        return f"an int of {int(value).bit_length()} bits"
    return repr(value) if not isinstance(value, numbers.Real) else str(value)


def _check_hyper(cls, name, value, minimum=0.0, maximum=None, exclusive_max=False):
    """value, if it is a finite real number in [minimum, maximum] (or [minimum, maximum) with
    exclusive_max); else TypeError or ValueError naming cls and name. NaN and infinity are
    refused as PyTorch does ("Invalid learning rate: nan"): a step would turn every parameter
    into NaN. A Tensor is taken for the lr alone, as PyTorch 2 takes one (an lr scheduler
    then updates it in place): it must hold one element, whose value is checked."""
    if name == "lr" and isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{cls}: lr given as a Tensor must hold exactly one element, got a "
                             f"Tensor of shape {tuple(value.shape)}")
        if value.dtype == np.bool_:
            raise TypeError(f"{cls}: lr must be a real number or a one-element Tensor of numbers, "
                            f"got a bool Tensor")
        _check_hyper(cls, name, value.item(), minimum, maximum, exclusive_max)
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{cls}: {name} must be a real number, got {type(value).__name__} {value!r}")
    hi = "" if maximum is None else f" and {'<' if exclusive_max else '<='} {maximum}"
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond float's range
        finite = False
    if not finite:
        raise ValueError(f"{cls}: Invalid {_LABELS.get(name, name + ' value')}: {_show(value)} ({name} "
                         f"must be a finite number >= {minimum}{hi})")
    if value < minimum or (maximum is not None and (value >= maximum if exclusive_max else value > maximum)):
        raise ValueError(f"{cls}: {name} must be >= {minimum}{hi}, got {value} "
                         f"(Invalid {_LABELS.get(name, name + ' value')}: {value})")
    return value


def _lr_value(lr):
    """A group's lr as the number a step uses: a Tensor lr (see _check_hyper) by its current
    value, read once per group and step."""
    return lr.item() if isinstance(lr, Tensor) else lr


def _check_betas(cls, betas):
    """betas as a tuple (beta1, beta2), each a finite number in [0, 1); else TypeError or
    ValueError naming betas."""
    if isinstance(betas, (str, bytes)) or not isinstance(betas, (tuple, list)):
        raise TypeError(f"{cls}: betas must be a tuple of two numbers (beta1, beta2), got "
                        f"{type(betas).__name__} {_show(betas)}")
    if len(betas) != 2:
        raise ValueError(f"{cls}: betas must be a tuple of two numbers (beta1, beta2), got "
                         f"{len(betas)} values: {tuple(betas)!r}")
    for i, beta in enumerate(betas):
        _check_hyper(cls, f"betas[{i}]", beta, 0.0, 1.0, exclusive_max=True)
    return tuple(betas)


def _check_step(cls, index, value):
    """A loaded state's "step" (the updates taken so far) as an int >= 0, else ValueError naming
    the entry: Adam's bias corrections take 1 - beta ** step, which a negative step makes
    negative (math domain error) and NaN or a fraction makes meaningless."""
    try:
        step = float(value) if isinstance(value, numbers.Real) else None
    except OverflowError:
        step = None
    if (isinstance(value, bool) or step is None or not math.isfinite(step) or step < 0
            or step != int(step) or step > 2 ** 53):
        raise ValueError(f"{cls}.load_state_dict: state entry 'step' of parameter {index} must be a "
                         f"whole number >= 0 (the updates taken so far), got {_show(value)}")
    return int(step)


# PyTorch's switches between implementations of one update rule, each at the value that asks
# for nothing beyond the plain per-parameter loop, which is the one implementation minifw has.
# Other values are refused rather than ignored: a script that asks for them expects something
# (a speed, CUDA-graph capture, gradients through the step) that it would silently not get.
_IMPLEMENTATION_SWITCHES = {
    "foreach": (None, "the multi-tensor (foreach) implementation; minifw updates one parameter "
                      "at a time, with the same results"),
    "fused": (None, "a fused kernel over all parameters; minifw has none (its SGD already "
                    "updates each parameter in one native pass where it can, unasked)"),
    "capturable": (False, "an update that CUDA graphs can capture; minifw has no CUDA graphs"),
    "differentiable": (False, "autograd through the optimizer step; minifw's step is not recorded"),
}


def _check_implementation_switches(cls, group):
    for name, (default, what) in _IMPLEMENTATION_SWITCHES.items():
        value = group.get(name, default)
        if value is not None and value is not False:
            allowed = "None or False" if default is None else "False"
            raise ValueError(f"{cls}: {name}={value!r} asks for {what}; {name} must be {allowed}")
