"""Reverse-mode automatic differentiation.

A differentiable operation is a `Function` subclass with two static methods
side by side: `forward(ctx, *inputs)` computes on NumPy arrays and saves what
the gradient needs with `ctx.save_for_backward`; `backward(ctx, *grad_outputs)`
gets one gradient per output (zeros for an unused float output, None for an
integer one) and returns one per positional input (None where there is none).
`Function.apply` unwraps Tensors, runs forward and, when a gradient will be
needed, records a `Node` (the output's `grad_fn`) that points at the nodes of
its inputs. `Tensor.backward` then walks that graph:

1. collect the nodes reachable from the output in topological order, with an
   explicit stack (no recursion, so a 10,000-step unroll is fine);
2. visit them in reverse, each exactly once, after every consumer of its
   outputs has added its contribution: call backward, add the results into
   the gradients of the input nodes, or into `.grad` of leaf tensors;
3. free each node's saved arrays once it has run, unless retain_graph=True.
   A later backward through a node whose saved arrays are gone is an error,
   raised before any gradient is computed; nodes that saved nothing (Add,
   Sum, Reshape, ...) can be walked again, as in PyTorch.

Backward runs on arrays, with no graph recorded. Arrays are allocated through
minifw.devices, on the device of the arrays they join.

Gradients of gradients (create_graph=True) take the same walk with Tensors for
gradients, recording as it goes: each node runs its Function's
`backward_graph` (the formula in recorded Tensor operations, with the saved
arrays turned back into Tensors joined to the graph), a user's Function its
backward on Tensors; a Function without one gives its first derivatives behind
a node that refuses to be differentiated (`_graph_backward`; docs/autograd.md).

The same walk serves PyTorch's API (`_execute`): `backward(..., inputs=)`
and `grad(outputs, inputs)` first mark the nodes on a path to the tensors
asked for and run only those; grad() returns the gradients instead of adding
them into .grad. Leaves with hooks, and those asked for, get their gradients
summed before they go on (`_Leaf`), so that a hook sees the whole gradient
once per walk, as PyTorch's AccumulateGrad does; every other leaf gets each
contribution added into .grad as it comes. Hooks (`register_hook`) and
retained gradients (`retain_grad`) run when a node is visited, on the
gradients of its outputs, before its backward.

Functions defined outside minifw. A subclass of Function defined in another
module (a user's) works as PyTorch's torch.autograd.Function: forward gets
Tensors (detached views of the inputs, under no_grad) and returns Tensors;
`ctx.save_for_backward` takes Tensors and `ctx.saved_tensors` gives Tensors;
backward gets and returns Tensors (`_apply_on_tensors`, `FunctionCtx`,
`_user_backward`). The class attribute `_on_arrays`, set per class when it is
defined, tells which convention a Function follows; minifw's own Functions
keep the array one above, with no conversion on their path.

Devices. The tensors a Function is applied to must be on one device (a 0-d
tensor on the CPU may join tensors of another device, as a number does, as
in PyTorch); its results are put on that device, and every gradient on the
device of the tensor or node it flows into, so a leaf's .grad lives where the
leaf lives. Only ToDevice (Tensor.to) moves data between devices. Most NumPy
functions keep a devices.CudaSimArray a CudaSimArray, but a few (np.where,
np.concatenate, np.stack; a 0-d result that became a NumPy scalar) return a
plain array: such a result is copied back onto the device here rather than
left silently on the CPU.

In-place operations and version counters, as in PyTorch. Every Tensor has a
`VersionCounter` that each in-place operation on it increments. Tensors that
share memory through minifw's own operations share one counter: `detach()`,
and every output of a Function that is a view of an input's memory (reshape,
permute, expand, basic indexing, narrow, chunk, split, ...: found in
`Function.apply` from the array owning the memory), which also keeps that
input (or the input's own base) as its `_base`. `Tensor.data` gets a counter
of its own, as in PyTorch: changes through it are not tracked. A change made
to an array directly (`t._data[...] = ...`) is not counted either; call
`increment_version(t)` after one.

When a recorded Function saved arrays, `Function.apply` notes the version of
each input or output tensor whose memory a saved array is (or is a view of),
and `ctx.saved_tensors` raises PyTorch's "modified by an inplace operation"
error when one has changed since.

An in-place operation that autograd records (a Tensor method ending in "_",
or __setitem__, on a tensor that requires grad or with an operand that does)
runs its Function out of place or into the tensor's own array, writes the
result into the tensor's memory and makes the new node the tensor's grad_fn,
so that gradients flow through the in-place step into the tensor's earlier
history; what that node saved from the memory about to be overwritten is
copied first. The other tensors sharing that memory (its base, its views,
detach()) may now hold values their own history does not explain: PyTorch
replays a view's history onto its base; minifw instead counts such
operations and keeps the parts of memory they wrote (`VersionCounter.history`
and `record`), and refuses to record an operation on a tensor whose elements
were written that way after its history was set (a view of other elements,
such as out[t - 1] after out[t] = h, stays usable).

Anomaly detection, as torch.autograd.detect_anomaly: with it on, `Function.apply`
records where each call was made (the user's frames of the Python stack, the
minifw frames left out) and, with check_nan, checks what every forward returned
and every backward returned for nan and inf, raising a RuntimeError that names
the first Function that produced one, with that call's place in the user's code
and where its inputs were made. With it off (the default) the cost is one test
of a module flag per Function call and per node walked. On "cuda" each check
copies a flag back from the GPU, so it waits for the GPU to finish each op.
docs/anomaly.md says where minifw differs from PyTorch (it checks forward too,
and counts inf as an anomaly).
"""
import contextlib
import functools
import inspect
import linecache
import os
import threading
import warnings
import weakref

import sys

import numpy as np

from .. import devices
from . import names

Tensor = None  # minifw.Tensor, set by minifw.tensor when it defines the class (see there)
stack = None  # minifw.stack, set there too

class _ThreadState(threading.local):
    """Grad mode and friends, per thread as in PyTorch. The class attributes are every new
    thread's defaults, so reading one is a plain attribute lookup (on every operation)."""
    enabled = True  # grad mode
    inference = False  # inside inference_mode(True)
    inside = False  # inside a user Function's forward (see _Inside)


_state = _ThreadState()


def is_grad_enabled():
    return _state.enabled


def _check_mode(name, mode):
    """A grad mode switch's `mode`: a bool (NumPy's too), not anything with a truth value."""
    if not isinstance(mode, (bool, np.bool_)):
        raise TypeError(f"{name}: mode must be a bool, got {type(mode).__name__} {mode!r}")
    return bool(mode)


def _in_mode_generator(make_cm, func):
    """A generator function whose every step (the first, each send, throw and close) runs
    inside a fresh context manager from make_cm(): the mode holds while the generator's own
    code runs, and the caller's mode in between."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with make_cm():
            gen = func(*args, **kwargs)
        try:
            with make_cm():
                item = next(gen)
            while True:
                try:
                    sent = yield item
                except GeneratorExit:
                    with make_cm():
                        gen.close()
                    raise
                except BaseException as exc:
                    with make_cm():
                        item = gen.throw(exc)
                else:
                    with make_cm():
                        item = gen.send(sent)
        except StopIteration as stop:
            return stop.value
    return wrapper


class _ModeDecorator(contextlib.ContextDecorator):
    """contextlib's decorator, and for a generator function one that holds the mode while
    the generator runs (not just while it is created)."""

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"{type(self).__name__}: decorates a function, got "
                            f"{type(func).__name__} {func!r}")
        if inspect.isgeneratorfunction(func):
            return _in_mode_generator(self._recreate_cm, func)
        return super().__call__(func)


class _GradMode(_ModeDecorator):
    def __init__(self, mode):
        self.mode = bool(mode)

    def _recreate_cm(self):
        # a fresh one per call of a decorated function: recursion and threads keep their own prev
        return _GradMode(self.mode)

    def __enter__(self):
        self.prev = is_grad_enabled()
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class set_grad_enabled(_GradMode):
    """Switch recording on or off now; in a `with` statement, switch back afterwards:

        with minifw.set_grad_enabled(training):
            loss = model(x)

    As a decorator (`@set_grad_enabled(False)`) it switches nothing at the definition: the
    mode it set is undone, and the function runs in `mode`."""

    def __init__(self, mode):
        super().__init__(_check_mode("set_grad_enabled", mode))
        self.prev = is_grad_enabled()
        _state.enabled = self.mode

    def __call__(self, func):
        _state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        return self


class _NoArgumentMode(_GradMode):
    """no_grad and enable_grad: called with no argument they are context managers (and
    decorators), and used bare as a decorator (`@minifw.no_grad`) they decorate."""
    _mode = None

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if callable(orig_func):
            return cls()(orig_func)
        raise TypeError(f"{cls.__name__}: takes no argument (or, as a bare decorator, a "
                        f"function), got {type(orig_func).__name__} {orig_func!r}")

    def __init__(self, orig_func=None):
        super().__init__(self._mode)

    def _recreate_cm(self):
        return type(self)()


class no_grad(_NoArgumentMode):
    """Context manager (or decorator) in which no graph is recorded."""
    _mode = False


class enable_grad(_NoArgumentMode):
    """Context manager (or decorator) in which graphs are recorded, even inside no_grad."""
    _mode = True


class inference_mode(_ModeDecorator):
    """As torch.inference_mode(mode=True), a context manager or decorator (with or without
    the call): with mode True no graph is recorded in the block, as under no_grad(); with
    False nothing changes. PyTorch also marks the tensors made inside as inference tensors,
    which autograd later refuses; minifw's are ordinary tensors."""

    def __new__(cls, mode=True):
        if isinstance(mode, (bool, np.bool_)):
            return super().__new__(cls)
        if callable(mode):
            return cls()(mode)
        raise TypeError(f"inference_mode: mode must be a bool (or, as a bare decorator, a "
                        f"function), got {type(mode).__name__} {mode!r}")

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _recreate_cm(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self.prev = is_grad_enabled()
        self.prev_inference = is_inference_mode_enabled()
        if self.mode:
            _state.enabled = False
        _state.inference = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev
        _state.inference = self.prev_inference
        return False


def is_inference_mode_enabled():
    """Whether the innermost inference_mode block in this thread has mode True."""
    return _state.inference


# ---- profiling ----------------------------------------------------------------------------

# The active minifw.profiler.profile (None when none is): every Function's forward and every
# node's backward is timed as one event while one is (`begin` returns a token, `end` takes it
# and the outputs). A module global, read once per operation.
_profiler = None


def _set_profiler(profiler):
    global _profiler
    previous, _profiler = _profiler, profiler
    return previous


# ---- anomaly detection ----------------------------------------------------------------

# Global, not per thread, as PyTorch's AnomalyMode; read on every Function call, hence plain
# module globals (one lookup each).
_anomaly_enabled = False
_anomaly_check_nan = True


def is_anomaly_enabled():
    """Whether anomaly detection is on (torch.is_anomaly_enabled)."""
    return _anomaly_enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection, when on, checks results for nan and inf."""
    return _anomaly_check_nan


def _set_anomaly(enabled, check_nan):
    global _anomaly_enabled, _anomaly_check_nan
    _anomaly_enabled, _anomaly_check_nan = enabled, check_nan


def _check_flag(fn, name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager (or decorator) that turns anomaly detection on for its block and
    restores the previous setting afterwards, as torch.autograd.detect_anomaly:

        with minifw.autograd.detect_anomaly():
            loss = model(x)          # a Function whose forward returns nan/inf raises here
            loss.backward()          # ... or whose backward does, here

    The error names the Function and shows the user's line that called it. check_nan=False
    records those lines (shown when a backward raises) without checking values. Slow: for
    debugging only."""

    def __init__(self, check_nan=True):
        self.check_nan = _check_flag("detect_anomaly", "check_nan", check_nan)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def _recreate_cm(self):
        fresh = object.__new__(detect_anomaly)  # no second warning per decorated call
        fresh.check_nan = self.check_nan
        return fresh

    def __enter__(self):
        self.prev = (_anomaly_enabled, _anomaly_check_nan)
        _set_anomaly(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off now (torch.autograd.set_detect_anomaly); in a `with`
    statement, switch back to the previous setting afterwards."""

    def __init__(self, mode, check_nan=True):
        mode = _check_flag("set_detect_anomaly", "mode", mode)
        check_nan = _check_flag("set_detect_anomaly", "check_nan", check_nan)
        self.prev = (_anomaly_enabled, _anomaly_check_nan)
        _set_anomaly(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # minifw/
_SITE_FRAMES = 8  # innermost user frames kept per call: the lines a reader needs


def _user_frames():
    """(file, line, function) of the innermost user frames of the current stack, outermost
    first; frames of minifw's own files are left out. Source lines are read only when an
    error is reported."""
    frames = []
    f = sys._getframe(1)
    while f is not None and len(frames) < _SITE_FRAMES:
        code = f.f_code
        if not code.co_filename.startswith(_PACKAGE_DIR):
            frames.append((code.co_filename, f.f_lineno, code.co_name))
        f = f.f_back
    frames.reverse()
    return tuple(frames)


def _format_frames(frames, indent="  "):
    if not frames:
        return f"{indent}(no frame outside minifw)"
    lines = []
    for file, line, name in frames:
        lines.append(f'{indent}File "{file}", line {line}, in {name}')
        source = linecache.getline(file, line).strip()
        if source:
            lines.append(f"{indent}  {source}")
    return "\n".join(lines)


def _nonfinite(a):
    """'nan' or 'inf' when the float array (or scalar) `a` holds one (nan first), else None.
    On "cuda" the answer comes back from the GPU: a synchronization."""
    if isinstance(a, np.generic):
        a = np.asarray(a)
    elif isinstance(a, Tensor):  # create_graph=True: backward's results are Tensors
        a = a._data
    elif not devices.is_array(a):
        return None
    if a.dtype.kind not in "fc" or bool(np.isfinite(a).all()):
        return None
    return "nan" if bool(np.isnan(a).any()) else "inf"


def _first_nonfinite(arrays):
    for i, a in enumerate(arrays):
        kind = None if a is None else _nonfinite(a)
        if kind is not None:
            return i, kind
    return None


def _inputs_made_at(edges):
    """Where the inputs of a call were made: the innermost user frame of each input's
    recorded producer (anomaly detection records one per call)."""
    lines = []
    for k, edge in enumerate(edges):
        if isinstance(edge, Tensor):
            edge = (edge.grad_fn, edge._output_nr) if edge.grad_fn is not None else None
        if not isinstance(edge, tuple):
            continue
        producer, i = edge
        site = getattr(producer, "site", None)
        if site:
            lines.append(f"input {k} is output {i} of {producer.name()}, made at:\n"
                         f"{_format_frames(site[-1:], '    ')}")
    return "".join("\n  " + line for line in lines)


def _forward_anomaly(cls, index, kind, site, args):
    edges = [a if isinstance(a, Tensor) else None for a in args]
    return RuntimeError(
        f"Function '{cls.__name__}' returned {kind} values in its {index}th output during "
        f"forward.\nForward call (most recent call last):\n{_format_frames(site)}"
        f"{_inputs_made_at(edges)}")


def _run_backward_checked(node, grads, call=None):
    """node's backward under anomaly detection: an error inside it is reported with the
    forward call that made the node (as a warning, as PyTorch does, then re-raised), and
    with check_nan a nan or inf in what it returns is an error. `call(node, grads)`, when
    given, runs the backward instead (_user_backward, for a user's Function)."""
    site = getattr(node, "site", None)
    try:
        in_grads = node.function.backward(node.ctx, *grads) if call is None else call(node, grads)
    except Exception:
        if site is not None:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                          f"the error (most recent call last):\n{_format_frames(site)}", stacklevel=4)
        raise
    if _anomaly_check_nan:
        bad = _first_nonfinite(in_grads if isinstance(in_grads, tuple) else (in_grads,))
        if bad is not None:
            where = ("(it was made before anomaly detection was enabled)" if site is None else
                     f"Traceback of forward call that caused the error (most recent call last):\n"
                     f"{_format_frames(site)}{_inputs_made_at(node.edges)}")
            raise RuntimeError(f"Function '{node.name()}' returned {bad[1]} values in its "
                               f"{bad[0]}th output.\n{where}")
    return in_grads


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


class VersionCounter:
    """How many in-place operations have changed a tensor's memory (`version`), and how
    many of them autograd recorded (`history`), with the parts of the memory the last of
    those wrote; one object shared by the tensors that share the memory (see "In-place
    operations" above)."""

    __slots__ = ("version", "history", "_written")

    KEPT = 32  # recorded writes remembered; a tensor older than them is taken as overwritten

    def __init__(self):
        self.version = self.history = 0
        self._written = None  # [(history after the write, the array written)], made when needed

    def record(self, region):
        """Count an in-place operation autograd recorded, which wrote the array `region`."""
        self.history += 1
        if self._written is None:
            self._written = []
        self._written.append((self.history, region))
        del self._written[:-self.KEPT]

    def written_since(self, history, array):
        """Whether a recorded in-place operation after `history` wrote memory of `array`."""
        written = self._written or []
        if history < self.history - len(written):
            return True
        # bounds first (cheap everywhere); the exact test only where they overlap
        return any(after > history and np.may_share_memory(array, region)
                   and np.shares_memory(array, region) for after, region in written)

    def written_only_within(self, history, area):
        """Whether every recorded in-place write after `history` lies inside the array `area`
        (a view of this memory): then overwriting `area` leaves nothing those writes changed."""
        written = self._written or []
        if history < self.history - len(written):
            return False
        return all(after <= history or _within(region, area) for after, region in written)


def _byte_span(a):
    """[first, last + 1) byte addresses of an array's elements, on any device."""
    start = a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr
    low = high = start
    for n, s in zip(a.shape, a.strides):
        if n > 1:
            low, high = (low, high + (n - 1) * s) if s >= 0 else (low + (n - 1) * s, high)
    return low, high + a.itemsize


def _within(region, area):
    """Every element of `region` is an element of `area`: the same view, or a region whose
    bytes lie inside a C-contiguous area (whose span holds its elements and nothing else)."""
    if region.shape == area.shape and region.strides == area.strides and \
            _byte_span(region) == _byte_span(area):
        return True
    if not area.flags.c_contiguous:
        return False
    (low, high), (area_low, area_high) = _byte_span(region), _byte_span(area)
    return area_low <= low and high <= area_high


def increment_version(tensor):
    """Count an in-place change made to `tensor`'s array directly (as optimizers do), so
    that a graph which saved the old values refuses to backward through them."""
    tensor._version_counter.version += 1


class Context:
    """What forward leaves for backward: saved arrays and any plain attributes."""

    _saved = ()  # None once freed
    _saved_versions = ()  # (counter, version when saved, description) per tensor saved
    _saved_sources = ()  # per saved array: k >= 0 input k, -1 - i output i, None neither

    def save_for_backward(self, *arrays):
        self._saved = arrays

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError(_FREED)
        for counter, version, what in self._saved_versions:
            if counter.version != version:
                raise RuntimeError(_modified_in_place(what, counter.version, version))
        return self._saved


class FunctionCtx(Context):
    """The ctx of a Function defined outside minifw, as PyTorch's: it saves Tensors and gives
    Tensors back (the arrays are kept, so freeing and the version checks work as for
    minifw's own Functions), and takes PyTorch's marks."""

    _materialize_grads = True
    _dirty = _non_differentiable = ()

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of "
                                f"type {type(t).__name__}")
        self._saved = tuple(None if t is None else t._data for t in tensors)

    @property
    def saved_tensors(self):
        arrays = Context.saved_tensors.fget(self)
        return tuple(None if a is None else Tensor._make(a) for a in arrays)

    def mark_dirty(self, *tensors):
        """The input tensors forward changed in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Outputs that get no gradient: they do not require grad, and backward gets zeros
        (None without materialized gradients) for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward gets None, not zeros, for an output that received no gradient."""
        self._materialize_grads = bool(value)


def _modified_in_place(what, now, expected):
    dtype, dev, shape, producer, output_nr = what
    producer = producer() if producer is not None else None  # a weak reference to the node
    made = "" if producer is None else f", which is output {output_nr} of {producer.name()}"
    return (f"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{Tensor._type_name(dtype, dev)} [{', '.join(map(str, shape))}]]{made}, "
            f"is at version {now}; expected version {expected} instead. Hint: the in-place "
            f"operation changed a tensor that an earlier operation saved for its gradient; do it "
            f"out of place (y = y * 2 rather than y.mul_(2)), or on a clone()")


class Node:
    """One recorded call of a Function: the output tensors' grad_fn.

    `edges[i]` says where the gradient of positional input i goes: a leaf
    Tensor (accumulate into .grad), a (node, output_index) pair, or None."""

    # site: where the call was made (user frames), set only under anomaly detection;
    # hooks: {output_nr: {handle id: hook}}, the register_hook hooks of its outputs, or None;
    # pre_hooks, post_hooks: the node's own hooks (register_prehook, register_hook), or None
    __slots__ = ("function", "ctx", "edges", "outputs", "device", "site", "hooks", "pre_hooks",
                 "post_hooks", "__weakref__")

    def __new__(cls, function, ctx, *args):
        # each node's class is named as PyTorch names the node of that operation (MulBackward0,
        # ViewBackward0; a user's Function F: FBackward), so type(y.grad_fn).__name__ reads alike
        if cls is not Node:
            return object.__new__(cls)
        kind = _node_types_of.get(function)
        if kind is None or "node_name" in ctx.__dict__:
            kind = _node_type_of_call(function, ctx, kind)
        elif kind.__class__ is not type:  # the name is a function of the call: names.py's entry
            name = kind(ctx)
            kind = _node_types.get(name) or node_type(name)
        return object.__new__(kind)

    def __init__(self, function, ctx, edges, outputs, device):
        self.function, self.ctx, self.edges = function, ctx, edges
        # (shape, dtype) of each output, to fill in missing gradients; for a user's Function
        # (shape, dtype, device), or None for an output that is not a Tensor
        self.outputs = outputs
        self.device = device
        self.hooks = self.pre_hooks = self.post_hooks = None

    def name(self):
        return type(self).__name__

    def register_prehook(self, hook):
        """As torch's Node.register_prehook: hook(grad_outputs) runs before this node's
        backward, with a tuple of the gradients of its outputs (None where none came); a
        tuple it returns replaces them. Returns a handle whose remove() unregisters it."""
        if not callable(hook):
            raise TypeError(f"register_prehook: hook must be callable; got {type(hook).__name__}")
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return HookHandle(self.pre_hooks, hook)

    def register_hook(self, hook):
        """As torch's Node.register_hook: hook(grad_inputs, grad_outputs) runs after this
        node's backward, with the gradients it computed for its inputs and those it was
        given for its outputs (tuples, None where there is none); a tuple it returns replaces
        grad_inputs."""
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable; got {type(hook).__name__}")
        if self.post_hooks is None:
            self.post_hooks = {}
        return HookHandle(self.post_hooks, hook)

    @property
    def next_functions(self):
        """As PyTorch's: one (node, output index) pair per input: the node that made it, a
        leaf's AccumulateGrad, or (None, 0) for an input that needs no gradient."""
        return tuple((None, 0) if e is None else e if isinstance(e, tuple) else (_accumulator(e), 0)
                     for e in self.edges)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


_node_types = {}


def node_type(name):
    """The Node subclass called `name` (made once)."""
    kind = _node_types.get(name)
    if kind is None:
        kind = _node_types[name] = type(name, (Node,), {"__slots__": (), "__module__": __name__})
    return kind


# Function -> the class of its nodes where their name does not depend on the call (most
# Functions), else names.py's function of the call giving it: recording a node then costs
# a lookup or two
_node_types_of = {}


def node_name(function, ctx):
    """The name of the node that records a call of `function`: what its forward set as
    ctx.node_name, else minifw.autograd.names' entry for the Function, else (a user's
    Function) its class name with "Backward" appended, as PyTorch names them."""
    name = ctx.__dict__.get("node_name")
    if name is not None:
        return name
    if not _is_minifw_module(function.__module__ or ""):
        return f"{function.__name__}Backward"
    return names.of(function, ctx)


def _node_type_of_call(function, ctx, known):
    """node_type(node_name(function, ctx)); `known` is _node_types_of's entry for `function`
    (None: not yet looked at), which this fills in."""
    kind = node_type(node_name(function, ctx))
    if known is None and "node_name" not in ctx.__dict__:
        fixed = not _is_minifw_module(function.__module__ or "") or names.fixed(function)
        _node_types_of[function] = kind if fixed else names.NAMES[function.__name__]
    return kind


def rename(outputs, name, *inputs):
    """Names the node that made `outputs` (a Tensor or a sequence of them) `name`: for an
    operation built on a Function that serves several (t() and permute() both permute).
    A node that made one of `inputs` (an output that is an input, as squeeze() of a tensor
    with no size-1 dim) keeps its name."""
    for t in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        node = getattr(t, "grad_fn", None)  # None where no graph is recorded: the common case
        if isinstance(node, Node) and type(node).__name__ != name and \
                not any(node is getattr(i, "grad_fn", None) for i in inputs):
            node.__class__ = node_type(name)
    return outputs


class AccumulateGrad:
    """Where a leaf's gradient goes, as PyTorch's graph shows it: the node next_functions
    names for a leaf that requires grad (one per leaf). `variable` is the leaf; it has no
    inputs. minifw's backward adds into the leaf's .grad itself: this node is for reading
    the graph."""

    __slots__ = ("_variable", "__weakref__")
    next_functions = ()

    def __init__(self, variable, on_release=None):
        self._variable = weakref.ref(variable, on_release)  # the node must not keep its leaf alive

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


# id(leaf) -> its AccumulateGrad while the leaf lives, kept out of the tensor (which pickles and
# copies without it). Not a WeakKeyDictionary: its lookups compare keys with ==, which is
# elementwise for tensors.
_accumulators = {}


def _accumulator(leaf):
    key = id(leaf)
    node = _accumulators.get(key)
    if node is None or node.variable is not leaf:  # none yet, or a dead leaf's with this id
        node = _accumulators[key] = AccumulateGrad(leaf, functools.partial(_release_accumulator, key))
    return node


def _release_accumulator(key, ref):
    """The leaf behind `ref` died: forget its node (not a newer leaf's that took its id)."""
    node = _accumulators.get(key)
    if node is not None and node._variable is ref:
        del _accumulators[key]


def _is_minifw_module(module):
    return module == "minifw" or module.startswith("minifw.")


class Function:
    """Base of every differentiable operation; subclasses define forward and backward.

    minifw's own Functions (those defined in the minifw package) compute on arrays, as the
    module's docstring says. A Function defined anywhere else works as PyTorch's
    torch.autograd.Function: forward gets Tensors and returns Tensors, backward gets and
    returns Tensors (see _apply_on_tensors). A class may set `_on_arrays = True` itself to
    take minifw's array convention wherever it is defined."""

    _on_arrays = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_on_arrays" not in cls.__dict__ and Function in cls.__bases__:
            # a Function derived from another (a user's subclass of minifw's Exp, say) keeps
            # its base's convention, which its inherited forward and backward follow
            cls._on_arrays = _is_minifw_module(cls.__module__ or "")
        # PyTorch's other style: forward(*args) without ctx, and setup_context(ctx, inputs, output)
        cls._setup_context = cls.setup_context is not Function.setup_context

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        if _profiler is not None and _profiler.records(cls):
            return _profiler.record(cls, args, kwargs)  # times this call (calling apply again)
        if not cls._on_arrays:
            return _apply_on_tensors(cls, args, kwargs)
        ctx = Context()
        # under no_grad nothing needs a gradient: forward may save less
        needs = [False] * len(args)
        if _state.enabled:
            for i, a in enumerate(args):
                if isinstance(a, Tensor):
                    needs[i] = a._requires_grad or a.grad_fn is not None
                    if a._history != a._version_counter.history:
                        _check_history(cls.__name__, a)
        needs = ctx.needs_input_grad = tuple(needs)
        dev = common_device(cls.__name__, args)
        if dev is devices.CPU:  # no 0-d CPU tensor joins another device's operation
            arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        else:
            arrays = [_data_on(a, dev) if isinstance(a, Tensor) else a for a in args]
        site = _user_frames() if _anomaly_enabled else None
        out = cls.forward(ctx, *arrays, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        dev = ctx.__dict__.get("output_device", dev)  # set by a Function that moves data (ToDevice)
        outs = [on_device(o, dev) for o in outs]
        if site is not None and _anomaly_check_nan and not _state.inside:
            bad = _first_nonfinite(outs)
            if bad is not None:
                raise _forward_anomaly(cls, *bad, site, args)
        node = None
        if True in needs:
            edges = tuple(_edge(a) if n else None for a, n in zip(args, needs))
            node = Node(cls, ctx, edges, tuple((o.shape, o.dtype) for o in outs), dev)
            if site is not None:
                node.site = site
            tensors = tuple(Tensor._make(o, node, i) if o.dtype.kind == "f" else Tensor._make(o)
                            for i, o in enumerate(outs))
        else:
            tensors = tuple([Tensor._make(o) for o in outs])
        _share_storage(args, tensors)
        if node is not None and ctx._saved:
            ctx._saved_versions = _saved_versions(node, ctx._saved, args, tensors)
            ctx._saved_sources = _saved_sources(ctx._saved, arrays, outs)
        return tensors if isinstance(out, tuple) else tensors[0]


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: marks a user Function's backward as not
    itself differentiable. Under create_graph=True it then runs unrecorded, and its results
    refuse to be differentiated (as PyTorch's do)."""
    fn._once_differentiable = True
    return fn


def _bound(cls, args, kwargs):
    """A user Function's arguments as forward's signature binds them, defaults included, as
    PyTorch binds them: every positional parameter (also one passed by keyword) is an input,
    in order, which may get a gradient; keyword-only ones stay keywords."""
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        sig = inspect.signature(cls.forward)
        if not cls._setup_context:  # forward(ctx, ...): ctx is not an argument of apply
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        cls._forward_signature = sig
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{cls.__name__}.apply: {e}") from None
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[name] = value
        else:
            positional.append(value)
    return tuple(positional), keywords


def _apply_on_tensors(cls, args, kwargs):
    """Function.apply for a Function defined outside minifw, with PyTorch's semantics.

    forward runs under no_grad on detached views of the Tensor arguments (sharing their
    memory and version counters), other arguments as they are; what it returns (a Tensor,
    or a tuple of Tensors and other values) is wrapped into new output tensors recorded
    as one node, as for minifw's Functions. An output that is an input returned as it is
    becomes a view of it; one marked dirty is the input tensor itself, now with this node
    as its grad_fn. Its backward is called through _user_backward."""
    args, kwargs = _bound(cls, args, kwargs)
    ctx = FunctionCtx()
    record = is_grad_enabled()
    needs = tuple(record and isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx.needs_input_grad = needs
    if record:
        for a in args:
            if isinstance(a, Tensor) and a._history != a._version_counter.history:
                _check_history(cls.__name__, a)
    site = _user_frames() if _anomaly_enabled else None
    views = tuple(Tensor._make(a._data, version_counter=a._version_counter)
                  if isinstance(a, Tensor) else a for a in args)
    with _Inside():
        if cls._setup_context:
            out = cls.forward(*views, **kwargs)
            cls.setup_context(ctx, views, out)
        else:
            out = cls.forward(ctx, *views, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    dirty, non_differentiable = ctx._dirty, ctx._non_differentiable
    ctx._dirty = ctx._non_differentiable = ()  # they hold forward's tensors: keep nothing alive

    dirty_inputs = {}  # output index -> index of the input it is
    for d in dirty:
        k = next((k for k, v in enumerate(views) if v is d), None)
        if k is None:
            warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not "
                          "an input, there is no need to pass it to mark_dirty().", stacklevel=3)
            continue
        i = next((i for i, o in enumerate(outs) if o is d), None)
        if i is None:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must all "
                               "be outputs of the Function.")
        dirty_inputs[i] = k

    if site is not None and _anomaly_check_nan and not _state.inside:
        bad = _first_nonfinite([o._data if isinstance(o, Tensor) else None for o in outs])
        if bad is not None:
            raise _forward_anomaly(cls, *bad, site, args)

    if any(needs):
        edges = tuple(_edge(a) if n else None for a, n in zip(args, needs))
        metas = tuple((o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in outs)
        first = next((m for m in metas if m is not None), None)
        node = Node(cls, ctx, edges, metas, devices.CPU if first is None else first[2])
        if site is not None:
            node.site = site
        ctx._input_meta = tuple((a.shape, a.dtype, a.device) if isinstance(a, Tensor) else None
                                for a in args)
    else:
        node = None
    results, made, seen = [], [], [v._data for v in views if isinstance(v, Tensor)]
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        differentiable = (node is not None and o.dtype.kind == "f"
                          and not any(o is n for n in non_differentiable))
        k = dirty_inputs.get(i)
        if k is not None:  # the input itself, changed in place: now the output of this node
            t = args[k]
            if record:
                t._inplace_records()  # raises for a leaf (or a view of one) that requires grad
            counter = t._version_counter
            counter.version += 1  # as PyTorch's mark_dirty
            if differentiable:
                t.grad_fn, t._output_nr = node, i
                counter.record(t._data)
                t._history = counter.history
            results.append(t)
            continue
        data = o._data
        if any(data is s for s in seen):  # an input (or an earlier output) returned as it is
            data = data.view()
        seen.append(data)
        t = Tensor._make(data, node, i) if differentiable else Tensor._make(data)
        results.append(t)
        made.append(t)
    _share_storage(args, made)
    if node is not None and ctx._saved:
        ctx._saved_versions = _saved_versions(node, ctx._saved, args, made)
        ctx._saved_sources = _saved_sources(
            ctx._saved, [a._data if isinstance(a, Tensor) else None for a in args],
            [r._data if isinstance(r, Tensor) and r.grad_fn is node else None for r in results])
    return tuple(results) if isinstance(out, tuple) else results[0]


def sum_to(g, shape):
    """g summed down to `shape`, which broadcasts to g.shape (as PyTorch's sum_to): the
    adjoint of broadcasting `shape` up to g.shape. g is an array, or (in a backward under
    create_graph=True) a Tensor, summed by recorded operations."""
    if g.shape == shape:
        return g
    if isinstance(g, Tensor):
        return g.sum_to_size(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


def _broadcasts_to(shape, target):
    if len(shape) > len(target):
        return False
    return all(n == 1 or n == m for n, m in zip(shape[::-1], target[::-1]))


def _user_backward(node, slots, graph=False):
    """Call the backward of a user's Function (see _apply_on_tensors) with Tensors: the
    gradients of its outputs (zeros, or None without materialized gradients, where none
    came; None for outputs that are not Tensors), and turn what it returns into one array
    (or None) per input, as the walk expects, with PyTorch's checks and conversions: a
    gradient of a shape the input broadcasts to is summed down, one of another dtype cast.
    With `graph` (create_graph=True) the slots are Tensors, backward runs recorded, with
    ctx.saved_tensors in the graph (_saved_graph), and it gives Tensors back."""
    ctx = node.ctx
    grads = []
    for g, meta in zip(slots, node.outputs):
        if meta is None:
            grads.append(None)
        elif g is None:
            grads.append(Tensor._make(devices.zeros(meta[0], meta[1], meta[2]))
                         if ctx._materialize_grads else None)
        else:
            grads.append(g if graph else Tensor._make(on_device(g, meta[2])))
    result = node.function.backward(_GraphContext(node) if graph else ctx, *grads)
    del grads
    name = node.name()
    if isinstance(result, list):
        result = tuple(result)
    elif not isinstance(result, tuple):
        result = (result,)
    n = len(node.edges)
    if len(result) > n and all(g is None for g in result[n:]):
        result = result[:n]
    if len(result) != n:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                           f"{n}, got {len(result)})")
    out = []
    for k, g in enumerate(result):
        if g is None:
            out.append(None)
            continue
        meta = ctx._input_meta[k]
        if meta is None:
            raise RuntimeError(f"function {name} returned a gradient different than None at position "
                               f"{k + 1}, but the corresponding forward input was not a Variable")
        if not isinstance(g, Tensor):
            raise RuntimeError(f"function {name} returned an invalid gradient at index {k}: expected "
                               f"Variable or None (got {type(g).__name__})")
        if node.edges[k] is None:  # the input needs no gradient
            out.append(None)
            continue
        shape, dtype, dev = meta
        data = g._data
        where = devices.of(data)
        if where != dev:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - expected "
                               f"device {dev} but got {where}")
        if data.shape != shape:
            if not _broadcasts_to(shape, data.shape):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - got "
                                   f"{list(data.shape)} but expected shape compatible with {list(shape)}")
            if graph:
                g = g.sum_to_size(shape)
            data = sum_to(data, shape)
        if data.dtype != dtype:
            if graph:
                g = g.to(dtype)
            data = data.astype(dtype)
        out.append(g if graph else data)
    return tuple(out)


# ---- create_graph=True: backward recorded, for gradients of gradients ---------------------

def _saved_graph(node):
    """The arrays node's Function saved, as Tensors in the graph (create_graph=True): an
    input's array continues that input's history (the leaf itself, or an output of the node
    that made it), an output's array is that output of this node, and anything else (a
    mask, a statistic, a number) is a constant. A Function whose derivative depends on such
    a derived array, other than through the inputs and outputs it saved, must not define
    backward_graph from it."""
    ctx = node.ctx
    saved = Context.saved_tensors.fget(ctx)  # raises if freed or modified in place
    sources = ctx._saved_sources
    result = []
    for j, s in enumerate(saved):
        if not devices.is_array(s):  # None, or a number saved beside the arrays
            result.append(s)
            continue
        k = sources[j] if j < len(sources) else None
        if k is None:
            result.append(Tensor._make(s))
        elif k < 0:
            result.append(Tensor._make(s, node, -1 - k))
        else:
            edge = node.edges[k]
            if edge is None:  # an input that needs no gradient
                result.append(Tensor._make(s))
            elif edge.__class__ is tuple:
                result.append(Tensor._make(s, edge[0], edge[1]))
            else:
                result.append(edge)  # a leaf: its gradient goes into its .grad
    return tuple(result)


class _NotTwiceDifferentiable(Function):
    """Stands behind the gradients of a Function without backward_graph under
    create_graph=True: their values are right, and differentiating them is an error."""

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            f"{ctx.name} is not differentiable twice in minifw: its gradient was computed with "
            f"create_graph=True, but this Function's backward runs on arrays, not recorded, so "
            f"the gradient of that gradient is unknown. docs/autograd.md lists the operations "
            f"with second derivatives")


class _GraphContext:
    """The ctx a backward gets under create_graph=True: the node's own ctx, whose attributes
    it reads, but with saved_tensors in the graph (_saved_graph) instead of arrays."""

    def __init__(self, node):
        self.__dict__["_ctx"] = node.ctx
        self.__dict__["saved_tensors"] = _saved_graph(node)

    def __getattr__(self, name):
        return getattr(self.__dict__["_ctx"], name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_ctx"], name, value)


def has_second_derivatives(node):
    """Whether the recorded call `node` has a backward_graph: its Function defines one, and
    (for a family of functions such as Pointwise) `graph_supports(ctx)` says this call's
    member has one."""
    function = node.function
    if getattr(function, "backward_graph", None) is None:
        return False
    supports = getattr(function, "graph_supports", None)
    return supports is None or supports(node.ctx)


def _graph_backward(node, slots):
    """A node's backward under create_graph=True, recorded: the Tensors of the gradients of
    its inputs (None where there is none). minifw's Functions that define
    `backward_graph(ctx, *grad_outputs)` compute them with Tensor operations, from
    ctx.saved_tensors as Tensors in the graph (_GraphContext); one whose backward uses only
    operations arrays and Tensors share sets `backward_graph = backward`. A user's Function
    runs its backward on Tensors, recorded. Any other Function's gradients are computed on
    arrays and put behind a _NotTwiceDifferentiable node."""
    function = node.function
    if not function._on_arrays:
        if not getattr(function.backward, "_once_differentiable", False):
            return _user_backward(node, slots, graph=True)
        with _Inside():
            arrays = _user_backward(node, [None if g is None else g._data for g in slots])
        return _behind_stand_in(node, arrays, slots)
    grads = [Tensor._make(devices.zeros(shape, dtype, node.device))
             if g is None and dtype.kind == "f" else g for g, (shape, dtype) in zip(slots, node.outputs)]
    if has_second_derivatives(node):
        return _joined_to_inputs(node, function.backward_graph(_GraphContext(node), *grads))
    with _Inside():
        arrays = function.backward(node.ctx, *[None if g is None else g._data for g in grads])
    return _behind_stand_in(node, arrays, grads)


class _ConstantInInputs(Function):
    """Stands behind a gradient that a backward_graph gave outside the graph (a ReLU's
    ones * mask, say): it still belongs to the node's inputs, with a zero derivative, as the
    gradient PyTorch's recorded backward gives does (differentiating it gives zeros, not an
    error)."""

    @staticmethod
    def backward(ctx, *grads):
        return tuple(None if meta is None else devices.zeros(*meta) for meta in ctx.input_meta)

    @staticmethod
    def backward_graph(ctx, *grads):
        return tuple(None if meta is None else Tensor._make(devices.zeros(*meta))
                     for meta in ctx.input_meta)


def _input_meta(edge):
    """(shape, dtype, device) of the tensor an edge leads from, or None for no edge."""
    if edge is None:
        return None
    if edge.__class__ is tuple:
        parent, i = edge
        return parent.outputs[i][0], parent.outputs[i][1], parent.device
    return edge.shape, edge.dtype, edge.device


def _joined_to_inputs(node, results):
    """A backward_graph's results, those outside the graph put behind a _ConstantInInputs
    node joined to `node`'s inputs."""
    single = not isinstance(results, tuple)
    values = (results,) if single else results
    loose = [k for k, r in enumerate(values) if isinstance(r, Tensor) and not r.requires_grad]
    if not loose:
        return results
    ctx = Context()
    ctx.input_meta = tuple(_input_meta(e) for e in node.edges)
    stand_in = Node(_ConstantInInputs, ctx, node.edges,
                    tuple((values[k].shape, values[k].dtype) for k in loose), node.device)
    values = list(values)
    for j, k in enumerate(loose):
        values[k] = Tensor._make(values[k]._data, stand_in, j)
    return values[0] if single else tuple(values)


def _behind_stand_in(node, arrays, grads):
    """The gradient arrays a node's backward computed unrecorded, as Tensors whose grad_fn
    is a _NotTwiceDifferentiable node joined to the node's inputs and to `grads`."""
    single = not isinstance(arrays, tuple)
    arrays = (arrays,) if single else arrays
    values = [a for a in arrays if a is not None]
    ctx = Context()
    ctx.name = node.name()
    edges = node.edges + tuple(_edge(g) for g in grads if g is not None and g.requires_grad)
    stand_in = Node(_NotTwiceDifferentiable, ctx, edges, tuple((v.shape, v.dtype) for v in values),
                    node.device)
    results, i = [], 0
    for a in arrays:
        if a is None:
            results.append(None)
        else:
            results.append(Tensor._make(on_device(a, node.device), stand_in, i))
            i += 1
    return results[0] if single else tuple(results)


def recomputed_gradients(forward, inputs, grads):
    """A backward_graph for a Function whose forward can be written with operations that
    have second derivatives: forward(*inputs) recomputed as recorded Tensor operations (the
    inputs being ctx.saved_tensors in the graph), and its gradients with respect to the
    inputs, weighted by grads, taken with create_graph=True. None for an input that needs
    no gradient."""
    wanted = [t for t in inputs if t is not None and t.requires_grad]
    results = iter(grad(forward(*inputs), wanted, grads, create_graph=True, allow_unused=True)
                   if wanted else ())
    return tuple(next(results) if t is not None and t.requires_grad else None for t in inputs)


def _accumulate_leaf_graph(t, g):
    """create_graph=True: t.grad becomes a recorded copy of g, or .grad + g out of place, as
    in PyTorch, so that the gradient can itself be differentiated."""
    if g.shape != t.shape:
        raise RuntimeError(f"backward: gradient of shape {g.shape} for a leaf of shape {t.shape}")
    if g.dtype != t.dtype:
        g = g.to(t.dtype)
    t._grad = g.clone() if t._grad is None else t._grad + g


def storage(array):
    """What owns `array`'s memory, for identity comparisons: on the host the array that owns
    it (itself, or the last array in its chain of bases; the chain may pass through an object
    that is no array, as NumPy's as_strided views' does); a CuPy array's allocation (its
    as_strided views have no base)."""
    if not isinstance(array, np.ndarray):
        return array.data.mem
    base = array.base
    while base is not None:
        if devices.is_array(base):
            array = base
        base = getattr(base, "base", None)
    return array


def _share_storage(inputs, outputs):
    """An output that is a view of an input's memory shares the input's version counter
    and history, and has the input's base (or the input itself) as its _base."""
    candidates = None
    for t in outputs:
        if t._data.base is None and isinstance(t._data, np.ndarray):  # memory of its own: the
            continue  # common case (a CuPy view made by as_strided has no base either)
        if candidates is None:
            candidates = [(storage(a._data), a) for a in inputs
                          if isinstance(a, Tensor) and devices.is_array(a._data)]
        memory = storage(t._data)
        for owner, a in candidates:
            if owner is memory:
                t._version_counter, t._history = a._version_counter, a._history
                t._base = a if a._base is None else a._base
                break


def _check_history(fn, t):
    """t shares memory where autograd recorded in-place operations since t's history was set:
    fine where they wrote none of t's elements, an error where they did."""
    counter = t._version_counter
    if counter.written_since(t._history, t._data):
        raise RuntimeError(
            f"{fn}: a tensor used here shares memory with another (its base, a view of it, or "
            f"detach()) that an in-place operation recorded by autograd has changed since this "
            f"tensor's history was set, so its history no longer explains its values. PyTorch "
            f"replays views onto their base's history; minifw does not: take views after "
            f"in-place operations, assign through the base (base[index] = value), or use "
            f"out-of-place operations")
    t._history = counter.history  # its elements were not written: its history still holds


def _saved_versions(node, saved, inputs, outputs):
    """(counter, version, description) of each input or output tensor whose memory one of
    the arrays a Function saved is (or is a view of): what saved_tensors checks. The node
    that made the tensor is kept by a weak reference (`node`'s own context holds these)."""
    tensors = [(t, weakref.ref(t.grad_fn) if t.grad_fn is not None else None, t._output_nr)
               for t in inputs if isinstance(t, Tensor)]
    tensors += [(t, weakref.ref(node), i) for i, t in enumerate(outputs)]
    owners = [storage(t._data) if devices.is_array(t._data) else None for t, _, _ in tensors]
    records = []
    for s in saved:
        if not devices.is_array(s):
            continue
        memory = storage(s)
        for (t, producer, output_nr), owner in zip(tensors, owners):
            counter = t._version_counter
            if owner is memory and not any(r[0] is counter for r in records):
                records.append((counter, counter.version,
                                (t.dtype, devices.of(t._data), t.shape, producer, output_nr)))
    return tuple(records)


def _saved_sources(saved, inputs, outputs):
    """Where each saved array came from, for create_graph=True (see _saved_graph): -1 - i
    when it is output i's array, k when it is input k's, None otherwise. Outputs first: an
    array written in place is an input's memory that now holds the output."""
    sources = []
    for s in saved:
        found = None
        if s is not None:
            for i, o in enumerate(outputs):
                if o is s:
                    found = -1 - i
                    break
            else:
                for k, a in enumerate(inputs):
                    if a is s:
                        found = k
                        break
        sources.append(found)
    return tuple(sources)


def saved_after_write(node, counter):
    """`node` wrote the memory that `counter` counts in place (its result is that memory) and
    saved it: what it saved there is current at the counter's new version, which the
    in-place operation has just stepped."""
    ctx = node.ctx
    ctx._saved_versions = tuple((c, counter.version, what) if c is counter else (c, v, what)
                                for c, v, what in ctx._saved_versions)


def keep_saved_from(node, array, counter):
    """Before an in-place operation overwrites `array` (a tensor's memory, counted by
    `counter`), `node` (which it has just recorded) gets copies of what it saved from there."""
    ctx = node.ctx
    if not ctx._saved:
        return
    memory = storage(array)
    ctx._saved = tuple(s.copy() if devices.is_array(s) and storage(s) is memory else s
                       for s in ctx._saved)
    ctx._saved_versions = tuple(r for r in ctx._saved_versions if r[0] is not counter)


def common_device(fn, tensors):
    """The device an operation named `fn` on `tensors` (Tensors; anything else is skipped)
    runs on. They must share one; a 0-d CPU tensor may join another device, as in PyTorch."""
    found = cpu_scalar = None
    for t in tensors:
        if not isinstance(t, Tensor):
            continue
        data = t._data
        if type(data) is np.ndarray:  # the common case: a CPU array
            if data.ndim == 0:
                cpu_scalar = devices.CPU
                continue
            dev = devices.CPU
        else:
            dev = devices.of(data)
        if found is None:
            found = dev
        elif dev is not found and dev != found:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                               f"two devices, {found} and {dev} (in {fn}); move them to one device "
                               f"with .to(device)")
    return found or cpu_scalar or devices.CPU


def _data_on(t, dev):
    """A Tensor's array for an operation on `dev`: a 0-d CPU tensor joining another device
    is handed over as a NumPy scalar, which every device's array library takes as a number
    (CuPy refuses NumPy arrays)."""
    data = t._data
    if data.ndim == 0 and dev is not devices.CPU and type(data) is np.ndarray:
        return data[()]
    return data


def on_device(array, dev):
    """`array` (an array or a NumPy scalar) as an array on `dev`: itself when it is there
    already, else a copy there (see "Devices" above)."""
    if type(array) is np.ndarray and dev is devices.CPU:  # the common case, on every op's path
        return array
    if not devices.is_array(array):
        array = np.asanyarray(array)
    where = devices.of(array)
    return array if where is dev or where == dev else devices.to_device(array, dev)


def _edge(t):
    return t if t.grad_fn is None else (t.grad_fn, t._output_nr)


def _topological_order(roots, check_freed=True):
    """Every node reachable from `roots`, each after all the nodes it takes inputs from.
    With check_freed, a node whose saved arrays a backward freed is an error (the caller
    checks the nodes it will run otherwise)."""
    order, visited = [], set()
    stack = [(node, False) for node in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        if check_freed and node.ctx._saved is None:
            raise RuntimeError(_FREED)
        stack.append((node, True))
        for edge in node.edges:
            if isinstance(edge, tuple) and edge[0] not in visited:
                stack.append((edge[0], False))
    return order


def _accumulate_leaf(t, g, owned=False):
    """Add g into t.grad. The first gradient is copied, since g may alias other arrays,
    unless `owned`: g is a new array that nothing else holds (a Function's result, checked
    by the caller), which then becomes t.grad itself, as PyTorch takes over such a
    gradient. A copy of AlexNet's fc6 gradient is 151 MB of fresh memory per step."""
    g = on_device(g, t.device)
    if g.shape != t.shape:
        raise RuntimeError(f"backward: gradient of shape {g.shape} for a leaf of shape {t.shape}")
    if t._grad is None:  # (the slot itself: g's shape was checked above, its dtype is t's)
        if owned and g.dtype == t.dtype and g.flags.c_contiguous and devices.is_writeable(g):
            t._grad = Tensor._make(g)
        else:
            t._grad = Tensor._make(g.astype(t.dtype, order="C", copy=True))
    else:
        t._grad._data += g


# ---- hooks on tensors, retain_grad ----------------------------------------------------------
#
# Where they are kept, so that nothing outlives the tensors: register_hook on a non-leaf puts
# the hook on its grad_fn (Node.hooks, by output number), as PyTorch does, so it runs even
# after the tensor object is gone; on a leaf, into the dict of the tensor's
# _post_accumulate_grad_hooks slot, under the key _TENSOR_HOOKS (that dict's other entries are
# register_post_accumulate_grad_hook's): the tensor holds its hooks, and a hook that refers
# to its own tensor makes a cycle the garbage collector frees. retain_grad keeps a weak
# reference per tensor (_retained); backward finds the retained tensors' current grad_fn.

class HookHandle:
    """What Tensor.register_hook and register_post_accumulate_grad_hook return: remove()
    unregisters the hook; `with handle:` removes it at the end of the block."""
    _next_id = 0

    def __init__(self, hooks, hook):
        HookHandle._next_id += 1
        self.id, self._hooks = HookHandle._next_id, hooks
        hooks[self.id] = hook

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


class _TensorHooksKey:
    def __repr__(self):
        return "<register_hook hooks>"


_TENSOR_HOOKS = _TensorHooksKey()
_retained = {}  # id(tensor) -> weak reference to a non-leaf tensor whose .grad backward fills


def register_hook(tensor, hook):
    """Tensor.register_hook(hook): hook(grad) runs each time the gradient with respect to
    `tensor` is computed, with that gradient as a Tensor, and may return a Tensor of the same
    shape, dtype and device to replace it (or None). On a leaf it runs once per backward with
    the whole gradient, before it is added into .grad (or returned by grad()); on a non-leaf,
    before the gradient flows on into the tensor's grad_fn. Hooks run in the order they were
    registered. Returns a handle whose remove() unregisters the hook."""
    if not callable(hook):
        raise TypeError(f"register_hook: hook must be callable; got {type(hook).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = tensor.grad_fn
    if node is None:
        slot = tensor._post_accumulate_grad_hooks
        if slot is None:
            slot = tensor._post_accumulate_grad_hooks = {}
        hooks = slot.get(_TENSOR_HOOKS)
        if hooks is None:
            hooks = slot[_TENSOR_HOOKS] = {}
    else:
        if node.hooks is None:
            node.hooks = {}
        hooks = node.hooks.setdefault(tensor._output_nr, {})
    return HookHandle(hooks, hook)


def retain_grad(tensor):
    """Tensor.retain_grad(): a non-leaf tensor's .grad gets its gradient in every backward
    that computes one (added to what it holds, as PyTorch); on a leaf, nothing to do."""
    if not tensor.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if tensor.grad_fn is None:
        return
    key = id(tensor)
    ref = _retained.get(key)
    if ref is not None and ref() is tensor:
        return

    def forget(ref, key=key):
        if _retained.get(key) is ref:
            del _retained[key]

    _retained[key] = weakref.ref(tensor, forget)


def retains_grad(tensor):
    """Tensor.retains_grad: whether retain_grad() was called on this non-leaf tensor."""
    ref = _retained.get(id(tensor))
    return ref is not None and ref() is tensor and tensor.grad_fn is not None


def _retained_by_node():
    """{node: [(output number, tensor)]} for the live retained tensors."""
    found = {}
    for ref in list(_retained.values()):
        t = ref()
        if t is not None and t.grad_fn is not None:
            found.setdefault(t.grad_fn, []).append((t._output_nr, t))
    return found


def _call_hooks(hooks, g):
    """Run register_hook hooks on the gradient g; the gradient they leave. g is an array,
    or with create_graph=True a Tensor (which they get and may replace as it is)."""
    graph = isinstance(g, Tensor)
    for hook in list(hooks.values()):
        result = hook(g if graph else Tensor._make(g))
        if result is None:
            continue
        name = getattr(hook, "__name__", repr(hook))
        if not isinstance(result, Tensor):
            raise TypeError(f"expected Tensor, but hook {name!r} returned {type(result).__name__!r}")
        if graph:
            if (result.shape, result.dtype, result.device) != (g.shape, g.dtype, g.device):
                _check_hook_result(name, result._data, g._data)
            g = result
            continue
        new = result._data
        _check_hook_result(name, new, g)
        g = new
    return g


def _check_hook_result(name, new, g):
    if new.shape != g.shape:
        raise RuntimeError(f"hook {name!r} has changed the size of value (was {tuple(g.shape)}, "
                           f"got {tuple(new.shape)})")
    if new.dtype != g.dtype:
        raise RuntimeError(f"hook {name!r} has changed the type of value (was {g.dtype}, got "
                           f"{new.dtype})")
    if devices.of(new) != devices.of(g):
        raise RuntimeError(f"hook {name!r} has changed the device of value (was {devices.of(g)}, "
                           f"got {devices.of(new)})")


def _run_node_hooks(node, hooks, grads, grad_outputs, graph):
    """A node's prehooks (hook(grads), grad_outputs empty) or hooks (hook(grads,
    grad_outputs)) on its gradients, arrays (Tensors under create_graph=True): each hook gets
    them as a tuple of Tensors (None where there is none) and may return a tuple to replace
    grads, checked as torch checks it. The gradients they leave, as the walk holds them."""
    def tensors(values):
        return tuple(None if g is None else g if graph or isinstance(g, Tensor) else Tensor._make(g)
                     for g in values)

    current, given = tensors(grads), tensors(grad_outputs)
    kind = "hook" if grad_outputs else "prehook"
    for hook in list(hooks.values()):
        result = hook(current, given) if grad_outputs else hook(current)
        if result is None:
            continue
        name = getattr(hook, "__name__", repr(hook))
        if not isinstance(result, (tuple, list)) or len(result) != len(current):
            raise RuntimeError(f"{node.name()} {kind} {name!r} returned {type(result).__name__} "
                               f"{result!r:.60}; expected a tuple of {len(current)} gradients "
                               f"(Tensors or None)")
        for k, (new, old) in enumerate(zip(result, current)):
            if new is not None and not isinstance(new, Tensor):
                raise TypeError(f"{node.name()} {kind} {name!r}: gradient {k} is a "
                                f"{type(new).__name__}, expected a Tensor or None")
            if new is not None and old is not None:
                _check_hook_result(name, new._data, old._data)
        current = tuple(result)
    return [None if t is None else t if graph else t._data for t in current]


def _retain(t, g):
    """retain_grad's accumulation: out of place, as PyTorch's (with create_graph=True, g is
    a Tensor, kept with its history)."""
    if isinstance(g, Tensor):
        t.grad = g if t.grad is None else t.grad + g
    else:
        t.grad = Tensor._make(g.copy() if t.grad is None else t.grad._data + g)


def _added(a, b):
    """The sum of two gradients of one tensor: an array (NumPy turns the sum of two 0-d
    arrays into a scalar), or a Tensor under create_graph=True."""
    total = a + b
    return np.asarray(total) if isinstance(total, np.generic) else total


class _Leaf:
    """A leaf whose gradients backward sums before they go on: one with hooks, or one of the
    tensors asked for (backward(inputs=), grad()). `pending`: its gradient edges still to
    visit; after the last, finish()."""

    __slots__ = ("tensor", "pending", "grad", "owned", "indices")

    def __init__(self, tensor):
        self.tensor, self.pending, self.grad, self.owned, self.indices = tensor, 0, None, False, []

    def add(self, g, owned, captured):
        if g is not None:
            t = self.tensor
            if not isinstance(g, Tensor):
                g = on_device(g, t.device)
            if self.grad is None:
                self.grad, self.owned = g, owned
            else:
                self.grad, self.owned = _added(self.grad, g), True
        self.pending -= 1
        if self.pending == 0:
            self.finish(captured)

    def finish(self, captured):
        g, t = self.grad, self.tensor
        self.grad = None
        if g is None:  # no gradient reached it
            return
        owned, graph = self.owned, isinstance(g, Tensor)
        if g.dtype != t.dtype:
            g, owned = (g.to(t.dtype) if graph else g.astype(t.dtype)), True
        slot = t._post_accumulate_grad_hooks
        hooks = slot.get(_TENSOR_HOOKS) if slot else None
        if hooks:
            g, owned = _call_hooks(hooks, g), False
        if captured is not None:  # grad(): returned, .grad untouched
            g = g if owned or graph else g.copy()
            for k in self.indices:
                captured[k] = g
            return
        if graph:
            _accumulate_leaf_graph(t, g)
        else:
            _accumulate_leaf(t, g, owned=owned)
        if slot:
            for key, hook in list(slot.items()):
                if key is not _TENSOR_HOOKS:
                    hook(t)


class _Inside:
    """What a user's forward, and the backward walk (with the user's backwards and hooks),
    run in: no graph is recorded (but with create_graph=True, `record`) and, for anomaly
    detection, the operations they run are not checked one by one: a user's Function is
    checked as one, by what its forward and its backward return (an intermediate inf it
    masks later is no anomaly)."""

    def __init__(self, record=False):
        self.record = record

    def __enter__(self):
        self.prev = is_grad_enabled(), _state.inside
        _state.enabled, _state.inside = self.record, True

    def __exit__(self, *exc):
        _state.enabled, _state.inside = self.prev
        return False


def _node_backward(node, slots, graph):
    """(what node's backward returns, the gradients it was given) for the gradients `slots`
    of its outputs: recorded (graph), on arrays (minifw's Functions; an output nobody used
    gets zeros, integer outputs (indices) never a gradient), or on Tensors (a user's
    Function)."""
    if graph:
        if _anomaly_enabled:
            return _run_backward_checked(node, slots, _graph_backward), slots
        return _graph_backward(node, slots), slots
    if node.function._on_arrays:
        grads = [devices.zeros(shape, dtype, node.device) if g is None and dtype.kind == "f"
                 else g for g, (shape, dtype) in zip(slots, node.outputs)]
        if _anomaly_enabled:
            return _run_backward_checked(node, grads), grads
        return node.function.backward(node.ctx, *grads), grads
    if _anomaly_enabled:
        return _run_backward_checked(node, slots, _user_backward), slots
    return _user_backward(node, slots), slots


def _execute(roots, retain_graph, inputs=None, capture=False, graph=False):
    """The backward walk (see the module's docstring). `roots`: [(tensor, gradient array)].
    Without `inputs`, every leaf reached gets its gradient added into .grad. With `inputs`
    (tensors, leaves or not), only the nodes leading to them run; the leaves among them get
    their gradient added into .grad (non-leaves: by retain_grad, which the caller has set) or,
    with `capture`, nothing is added: the gradient of each input is returned, in a list (None
    for one no gradient reached). With `graph` (create_graph=True) the gradients are Tensors
    and each node's backward is recorded (_graph_backward); the roots' gradients are Tensors."""
    buffers = {}  # node -> list with the gradient of each of its outputs
    leaf_roots = []
    for t, g in roots:
        if t.grad_fn is None:
            leaf_roots.append((t, g))
        else:
            slots = buffers.setdefault(t.grad_fn, [None] * len(t.grad_fn.outputs))
            i = t._output_nr
            slots[i] = g if slots[i] is None else _added(slots[i], g)
    order = _topological_order(list(buffers), check_freed=inputs is None)

    leaves = {}  # id(leaf) -> _Leaf, for the leaves whose gradients are summed first
    captured = [None] * len(inputs) if capture else None
    runs = captures = None
    if inputs is not None:
        captures = {}  # node -> [(output number, index in inputs)]
        for k, t in enumerate(inputs):
            if t.grad_fn is None:
                leaves.setdefault(id(t), _Leaf(t)).indices.append(k)
            else:
                captures.setdefault(t.grad_fn, []).append((t._output_nr, k))
        runs = set()  # the nodes on a path to an input: the ones whose backward is called
        for node in order:
            for e in node.edges:
                if e is None:
                    continue
                if e.__class__ is tuple:
                    if e[0] in runs or e[0] in captures:
                        break
                elif id(e) in leaves:
                    break
            else:
                continue
            runs.add(node)
            if node.ctx._saved is None:
                raise RuntimeError(_FREED)
    for e in [e for node in order for e in node.edges] + [t for t, _ in leaf_roots]:
        if e is not None and e.__class__ is not tuple:
            entry = leaves.get(id(e))
            if entry is None:
                if inputs is not None or not e._post_accumulate_grad_hooks:
                    continue
                entry = leaves[id(e)] = _Leaf(e)
            entry.pending += 1
    retained = _retained_by_node() if _retained else None

    with _Inside(record=graph):
        for t, g in leaf_roots:
            entry = leaves.get(id(t))
            if entry is not None:
                entry.add(g, False, captured)
            elif inputs is None:
                if graph:
                    _accumulate_leaf_graph(t, g)
                else:
                    _accumulate_leaf(t, g)
        for node in reversed(order):
            slots = buffers.pop(node, None)
            if slots is None:
                if leaves:
                    for edge in node.edges:
                        if edge is not None and edge.__class__ is not tuple:
                            entry = leaves.get(id(edge))
                            if entry is not None:
                                entry.add(None, False, captured)
                continue
            if node.hooks is not None:
                for i, hooks in node.hooks.items():
                    if hooks and slots[i] is not None:
                        slots[i] = _call_hooks(hooks, slots[i])
            if retained is not None:
                for i, t in retained.get(node, ()):
                    if slots[i] is not None:
                        _retain(t, slots[i])
            if captures:
                for i, k in captures.get(node, ()):
                    if slots[i] is not None and capture:
                        captured[k] = slots[i] if graph else slots[i].copy()
            if runs is not None and node not in runs:
                continue
            if node.pre_hooks:
                slots = _run_node_hooks(node, node.pre_hooks, slots, (), graph)
            profiler = _profiler
            if profiler is not None:
                event = profiler.begin(node.name(), slots)
                try:
                    in_grads, grads = _node_backward(node, slots, graph)
                except BaseException:
                    profiler.end(event, None)  # closed, so later events are not nested in it
                    raise
                profiler.end(event, in_grads)
            else:
                in_grads, grads = _node_backward(node, slots, graph)
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(node.edges):
                raise RuntimeError(f"{node.name()} returned {len(in_grads)} gradients for "
                                   f"{len(node.edges)} inputs")
            if node.post_hooks:
                in_grads = tuple(_run_node_hooks(node, node.post_hooks, in_grads, slots, graph))
            for k in range(len(in_grads)):
                edge, g = node.edges[k], in_grads[k]
                if edge is None:
                    continue
                if edge.__class__ is tuple:
                    if g is None:
                        continue
                    parent, i = edge
                    if runs is not None and parent not in runs and parent not in captures:
                        continue
                    if not graph:
                        g = on_device(g, parent.device)
                    parent_slots = buffers.setdefault(parent, [None] * len(parent.outputs))
                    parent_slots[i] = g if parent_slots[i] is None else _added(parent_slots[i], g)
                    continue
                entry = leaves.get(id(edge)) if leaves else None
                if entry is None and inputs is not None:
                    continue  # a leaf not asked for
                owned = False
                if g is not None and not retain_graph and not graph:
                    others = in_grads[:k] + in_grads[k + 1:]
                    owned = (_owned(g, others + tuple(grads))
                             or (node.function._on_arrays and _passed_on(g, others, grads)))
                if entry is not None:
                    entry.add(g, owned, captured)
                elif g is not None:
                    if graph:
                        _accumulate_leaf_graph(edge, g)
                    else:
                        _accumulate_leaf(edge, g, owned=owned)
            if not retain_graph and node.ctx._saved:
                node.ctx._saved = None  # frees what forward saved
                node.ctx._saved_versions = ()
    return captured


def _references_of_an_unshared_result():
    """What sys.getrefcount reports, in this interpreter, for an array held only by a
    tuple and one local name (as backward holds a Function's result)."""
    results = (np.empty(1),)
    g = results[0]
    return sys.getrefcount(g)


def _references_of_a_views_owner():
    """What sys.getrefcount reports for the owner of a view that nothing but the view holds."""
    view = np.empty(4).reshape(2, 2)
    owner = view.base
    return sys.getrefcount(owner)


def _references_of_a_passed_on_gradient():
    """What sys.getrefcount reports for a gradient that a node was given and returned as it
    is, held only by the walk: the node's slot list, the list its backward was called with,
    the results tuple and one local name."""
    slots = [np.empty(1)]
    grads = [slots[0]]
    in_grads = (grads[0],)
    g = in_grads[0]
    return sys.getrefcount(g)


_UNSHARED, _OWNER_OF_ONE_VIEW = _references_of_an_unshared_result(), _references_of_a_views_owner()
_PASSED_ON = _references_of_a_passed_on_gradient()


def _passed_on(g, others, grads):
    """Whether g, returned by a Function on arrays as it was given (Clone's backward, an
    identity's), can be handed over as _owned's results are: it is one of the node's incoming
    gradients `grads` and none of its other results `others`, owns its memory, and nothing but
    the walk holds it (not the caller's root gradient, not a hook, not another node's slot).
    The bench's in-place ReLU, on a copy of its input, copied AlexNet relu1's 18.6 MB gradient
    without this."""
    return (any(x is g for x in grads) and not any(o is g for o in others)
            and devices.is_array(g) and devices.owns_memory(g)
            and sys.getrefcount(g) - 1 <= _PASSED_ON)  # - 1: this call's argument


def _owned(g, others):
    """Whether the array g, a Function's result that backward holds in its results tuple
    and as `g`, can be handed over: nothing else references it (not the Function's saved
    state, not the caller), it is none of `others` (the node's other results and the
    gradients it was given), and it owns its memory or is a whole-array view (a reshape,
    or a device's array type over host memory) of an array that nothing but g holds: a
    new array returned in another shape."""
    if not (devices.is_array(g) and sys.getrefcount(g) - 1 <= _UNSHARED  # - 1: this call's argument
            and not any(o is g for o in others)):
        return False
    owner = g.base
    if owner is None or devices.owns_memory(g):
        return devices.owns_memory(g)
    return (isinstance(g, type(owner)) and devices.owns_memory(owner)
            and owner.nbytes == g.nbytes and g.flags.c_contiguous
            and sys.getrefcount(owner) <= _OWNER_OF_ONE_VIEW)


# ---- backward and grad ------------------------------------------------------------------------

def _as_tuple(fn, name, value):
    if isinstance(value, Tensor):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be a Tensor or a sequence of Tensors; got "
                        f"{type(value).__name__}") from None


def _root_gradients(fn, tensors, grads, graph=False):
    """[(tensor, gradient array)] for the tensors backward or grad starts from: each given
    gradient checked and converted, ones for a scalar without one. With `graph`
    (create_graph=True) the gradients are Tensors, a given one kept with its history."""
    if len(grads) != len(tensors):
        raise RuntimeError(f"{fn}: got {len(tensors)} tensors and {len(grads)} gradients")
    roots = []
    for k, (t, g) in enumerate(zip(tensors, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: expected Tensors to differentiate, got {type(t).__name__} at "
                            f"index {k}")
        if not t.requires_grad:
            raise RuntimeError(f"{fn}: element {k} of tensors does not require grad and does not have "
                               f"a grad_fn (no input of the computation had requires_grad=True)")
        if g is None:
            if t.numel() != 1:
                what = "backward(gradient)" if fn == "backward" else "grad_outputs"
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got an "
                                   f"output of shape {t.shape}: pass {what} with that shape")
            g = np.ones_like(t._data)
        else:
            if isinstance(g, Tensor) and g.device != t.device:
                raise RuntimeError(f"{fn}: the gradient is on device {g.device}, but the output "
                                   f"is on {t.device}; move it with gradient.to({str(t.device)!r})")
            g = g._data if isinstance(g, Tensor) else on_device(g, t.device)
            if g.shape != t.shape:
                if fn == "backward":
                    raise RuntimeError(f"backward: gradient has shape {g.shape}, but the output has "
                                       f"shape {t.shape}")
                raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of {g.shape} and "
                                   f"output[{k}] has a shape of {t.shape}.")
            if graph and isinstance(grads[k], Tensor):
                g = grads[k] if grads[k].dtype == t.dtype else grads[k].to(t.dtype)
                roots.append((t, g))
                continue
            g = g.astype(t.dtype, copy=False)
        roots.append((t, Tensor._make(g) if graph else g))
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """torch.autograd.backward: add d(sum_i <tensors[i], grad_tensors[i]>)/d(leaf) into the
    .grad of every leaf reached (a scalar tensor needs no gradient: 1). With `inputs` (a
    tensor or a sequence of them, leaves or not), only those get it: a non-leaf one is then
    retained (retain_grad), as PyTorch does, and its .grad gets it. Saved arrays are freed
    on the way unless retain_graph=True (which defaults to create_graph). With
    create_graph=True the walk is recorded: each .grad is a Tensor with a history of its
    own, which can be differentiated again (see _graph_backward)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both "
                               "passed to backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    create_graph = bool(create_graph)
    retain_graph = create_graph if retain_graph is None else bool(retain_graph)
    tensors = _as_tuple("backward", "tensors", tensors)
    grad_tensors = ([None] * len(tensors) if grad_tensors is None
                    else _as_tuple("backward", "grad_tensors", grad_tensors))
    if inputs is not None:
        inputs = _as_tuple("backward", "inputs", inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for k, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"backward: inputs must be Tensors; got {type(t).__name__} at "
                                f"index {k}")
            if not t.requires_grad:
                raise RuntimeError(f"backward: can't retain_grad on Tensor that has "
                                   f"requires_grad=False (inputs[{k}]): only tensors that "
                                   f"require grad can be given as inputs")
    roots = _root_gradients("backward", tensors, grad_tensors, create_graph)
    if inputs is not None:
        for t in inputs:
            retain_grad(t)
    _execute(roots, retain_graph, inputs, graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of sum_i <outputs[i], grad_outputs[i]> with respect
    to each of `inputs` (leaves or not), as a tuple of Tensors; no tensor's .grad changes
    (except those of retain_grad() tensors, as in PyTorch). An input no gradient reaches is
    an error unless allow_unused=True (then None, or zeros with materialize_grads=True).
    is_grads_batched=True: each grad_outputs tensor has a leading batch dimension, and the
    result is the gradients for each of its entries, stacked (computed one entry at a time).
    Saved arrays are freed unless retain_graph=True (which defaults to create_graph). With
    create_graph=True the gradients are Tensors with a history, which can be differentiated
    again."""
    create_graph = bool(create_graph)
    retain_graph = create_graph if retain_graph is None else bool(retain_graph)
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    allow_unused = materialize_grads if allow_unused is None else bool(allow_unused)
    outputs = _as_tuple("grad", "outputs", outputs)
    inputs = _as_tuple("grad", "inputs", inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for k, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors; got {type(t).__name__} at index {k}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grad_outputs = ([None] * len(outputs) if grad_outputs is None
                    else _as_tuple("grad", "grad_outputs", grad_outputs))
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, allow_unused,
                             materialize_grads, create_graph)
    captured = _execute(_root_gradients("grad", outputs, grad_outputs, create_graph), retain_graph,
                        inputs, capture=True, graph=create_graph)
    return _grad_results(inputs, captured, allow_unused, materialize_grads)


def _grad_results(inputs, captured, allow_unused, materialize_grads):
    results = []
    for k, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors appears to not have been used "
                                   f"in the graph. Set allow_unused=True if this is the desired "
                                   f"behavior. (It is inputs[{k}].)")
            results.append(Tensor._make(devices.zeros(t.shape, t.dtype, t.device))
                           if materialize_grads else None)
        else:
            results.append(g if isinstance(g, Tensor) else Tensor._make(g))
    return tuple(results)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, allow_unused, materialize_grads,
                  graph=False):
    """grad(is_grads_batched=True): one walk per entry of the batch dimension, stacked (with
    create_graph=True, by a recorded stack)."""
    sizes = {g.shape[0] if isinstance(g, Tensor) and g.ndim else None for g in grad_outputs}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("grad: is_grads_batched=True needs grad_outputs: a Tensor per output, each "
                           "with the same leading (batch) dimension")
    n = sizes.pop()
    per_entry = []
    for b in range(n):
        roots = _root_gradients("grad", outputs, [g[b] for g in grad_outputs], graph)
        per_entry.append(_execute(roots, retain_graph or b < n - 1, inputs, capture=True,
                                  graph=graph))
    stacked = []
    for k, t in enumerate(inputs):
        gs = [entry[k] for entry in per_entry]
        if n and all(g is None for g in gs) and not materialize_grads:
            stacked.append(None)
            continue
        if graph:
            zeros = devices.zeros(t.shape, t.dtype, t.device)
            stacked.append(stack([Tensor._make(zeros) if g is None else g for g in gs]))
            continue
        s = devices.zeros((n,) + t.shape, t.dtype, t.device)
        for b, g in enumerate(gs):
            if g is not None:
                s[b] = g
        stacked.append(s)
    return _grad_results(inputs, stacked, allow_unused, materialize_grads)


# ---- gradcheck and gradgradcheck, as torch.autograd's -------------------------------------------

class GradcheckError(RuntimeError):
    """What gradcheck raises when an analytical Jacobian differs from the numerical one."""


def _differentiable_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.kind == "f"]


def _numerical_jacobians(func, inputs, checked, n_outputs, eps):
    """[output][input] Jacobians (output elements x input elements) by central differences,
    each element of each checked input perturbed in place and put back."""
    jacobians = [[None] * len(checked) for _ in range(n_outputs)]
    with no_grad():
        for k, i in enumerate(checked):
            data = inputs[i]._data
            flat = data.reshape(-1)  # a view: the input's own memory
            columns = []
            for j in range(flat.size):
                old = flat[j].item()
                flat[j] = old + eps
                up = [np.asarray(devices.to_device(o._data, devices.CPU), np.float64).reshape(-1)
                      for o in _differentiable_outputs(func(*inputs))]
                flat[j] = old - eps
                down = [np.asarray(devices.to_device(o._data, devices.CPU), np.float64).reshape(-1)
                        for o in _differentiable_outputs(func(*inputs))]
                flat[j] = old
                columns.append([(u - d) / (2 * eps) for u, d in zip(up, down)])
            for m in range(n_outputs):
                size = columns[0][m].size if columns else 0
                jacobians[m][k] = (np.stack([c[m] for c in columns], axis=1) if columns
                                   else np.zeros((size, 0)))
    return jacobians


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """torch.autograd.gradcheck: whether the Jacobian of func(*inputs) that backward computes
    (one walk per output element) matches central differences, |a - n| <= atol + rtol |n|
    elementwise, for every input Tensor that requires grad and every floating point output.
    Raises GradcheckError naming the output and input (or returns False with
    raise_exception=False). Inputs should be float64, as PyTorch warns. The checks of
    forward-mode AD and of batched gradients are not supported; the other switches are
    accepted and change nothing."""
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_forward_ad, check_batched_grad and "
                                  "check_batched_forward_grad are not supported (minifw has no "
                                  "forward-mode AD or vmap)")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none "
                         "of the them have requires_grad=True.")
    for i in checked:
        if inputs[i].dtype != np.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          f"This check will likely fail if all the inputs are not of double "
                          f"precision floating point.", stacklevel=2)
    outputs = _differentiable_outputs(func(*inputs))
    numerical = _numerical_jacobians(func, inputs, checked, len(outputs), eps)
    for m, out in enumerate(outputs):
        n = out.numel()
        analytical = [np.zeros((n, inputs[i].numel())) for i in checked]
        if out.requires_grad:
            for r in range(n):
                basis = np.zeros(n, out.dtype)
                basis[r] = 1
                rows = grad([out], [inputs[i] for i in checked],
                            [Tensor._make(on_device(basis.reshape(out.shape), out.device))],
                            retain_graph=True, allow_unused=True)
                for k, g in enumerate(rows):
                    if g is not None:
                        analytical[k][r] = np.asarray(devices.to_device(g._data, devices.CPU)).reshape(-1)
        for k, i in enumerate(checked):
            a, num = analytical[k], numerical[m][k]
            if not np.all(np.abs(a - num) <= atol + rtol * np.abs(num)):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {m} with respect to input {i},\n"
                                     f"numerical:{num!r}\nanalytical:{a!r}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """torch.autograd.gradgradcheck: gradcheck of the function (inputs, grad_outputs) -> the
    gradients of func with respect to its inputs that require grad (create_graph=True), so
    the second derivatives in the inputs and in the gradients fed in are checked. Without
    grad_outputs, random ones (float64, requires_grad) are drawn."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        with no_grad():
            outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = [Tensor._make(on_device(rng.standard_normal(o.shape).astype(o.dtype), o.device))
                        for o in outputs]
        for g in grad_outputs:
            g.requires_grad_(True)
    grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    n = len(inputs)

    def first_derivatives(*args):
        xs, gs = args[:n], args[n:]
        with enable_grad():
            outputs = _differentiable_outputs(func(*xs))
            grads = grad(outputs, [xs[i] for i in checked], gs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """torch.autograd.Variable, kept by PyTorch for scripts written before tensors and variables
    were one type. `Variable(t, requires_grad=False)`: a new leaf tensor on t's data
    (t.detach() with requires_grad set), as in PyTorch; `Variable()` is an empty tensor. Every
    Tensor is an instance of Variable. `volatile` has no effect (use `with minifw.no_grad():`)
    and warns."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("Variable: volatile was removed and has no effect; use `with minifw.no_grad():` "
                          "instead", UserWarning, stacklevel=2)
        if data is None:
            data = Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
        if not isinstance(requires_grad, bool):
            raise TypeError(f"Variable: requires_grad must be a bool, got {type(requires_grad).__name__}")
        return data.detach().requires_grad_(requires_grad)
