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

Backward runs on arrays, with no graph recorded: gradients of gradients are
not supported. Arrays are allocated through minifw.devices, on the device of
the arrays they join.

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
import linecache
import os
import threading
import warnings

import sys

import numpy as np

from . import devices

Tensor = None  # minifw.Tensor, set by minifw.tensor when it defines the class (see there)

_state = threading.local()  # grad mode is per thread, as in PyTorch


def is_grad_enabled():
    return getattr(_state, "enabled", True)


class _GradMode(contextlib.ContextDecorator):
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
    """

    def __init__(self, mode):
        super().__init__(mode)
        self.prev = is_grad_enabled()
        _state.enabled = self.mode

    def __enter__(self):
        return self


def no_grad():
    """Context manager (or decorator) in which no graph is recorded."""
    return _GradMode(False)


class inference_mode(contextlib.ContextDecorator):
    """As torch.inference_mode(mode=True), a context manager or decorator: with mode True no
    graph is recorded in the block, as under no_grad(); with False nothing changes. PyTorch
    also marks the tensors made inside as inference tensors, which autograd later refuses;
    minifw's are ordinary tensors."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _recreate_cm(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self.prev = is_grad_enabled()
        if self.mode:
            _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


def enable_grad():
    return _GradMode(True)


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


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
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


def _run_backward_checked(node, grads):
    """node's backward under anomaly detection: an error inside it is reported with the
    forward call that made the node (as a warning, as PyTorch does, then re-raised), and
    with check_nan a nan or inf in what it returns is an error."""
    site = getattr(node, "site", None)
    try:
        in_grads = node.function.backward(node.ctx, *grads)
    except Exception:
        if site is not None:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                          f"the error (most recent call last):\n{_format_frames(site)}", stacklevel=3)
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
          "when you call .backward(). Specify retain_graph=True if you need to backward through "
          "the graph a second time or if you need to access saved tensors after calling backward.")


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


def _modified_in_place(what, now, expected):
    dtype, dev, shape, producer, output_nr = what
    made = "" if producer is None else f", which is output {output_nr} of {producer.__name__}Backward"
    return (f"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{Tensor._type_name(dtype, dev)} [{', '.join(map(str, shape))}]]{made}, "
            f"is at version {now}; expected version {expected} instead. Hint: the in-place "
            f"operation changed a tensor that an earlier operation saved for its gradient; do it "
            f"out of place (y = y * 2 rather than y.mul_(2)), or on a clone()")


class Node:
    """One recorded call of a Function: the output tensors' grad_fn.

    `edges[i]` says where the gradient of positional input i goes: a leaf
    Tensor (accumulate into .grad), a (node, output_index) pair, or None."""

    # site: where the call was made (user frames), set only under anomaly detection
    __slots__ = ("function", "ctx", "edges", "outputs", "device", "site", "__weakref__")

    def __init__(self, function, ctx, edges, outputs, device):
        self.function, self.ctx, self.edges = function, ctx, edges
        self.outputs = outputs  # (shape, dtype) of each output, to fill in missing gradients
        self.device = device

    def name(self):
        return f"{self.function.__name__}Backward"

    @property
    def next_functions(self):
        return tuple(e[0] if isinstance(e, tuple) else e for e in self.edges)

    def __repr__(self):
        return f"<{self.name()}>"


class Function:
    """Base of every differentiable operation; subclasses define forward and backward."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = Context()
        record = is_grad_enabled()  # under no_grad nothing needs a gradient: forward may save less
        ctx.needs_input_grad = tuple(record and isinstance(a, Tensor) and a.requires_grad
                                     for a in args)
        if record:
            for a in args:
                if isinstance(a, Tensor) and a._history != a._version_counter.history:
                    _check_history(cls.__name__, a)
        dev = common_device(cls.__name__, args)
        arrays = [_data_on(a, dev) if isinstance(a, Tensor) else a for a in args]
        site = _user_frames() if _anomaly_enabled else None
        out = cls.forward(ctx, *arrays, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        dev = ctx.__dict__.get("output_device", dev)  # set by a Function that moves data (ToDevice)
        outs = [on_device(o, dev) for o in outs]
        if site is not None and _anomaly_check_nan:
            bad = _first_nonfinite(outs)
            if bad is not None:
                raise _forward_anomaly(cls, *bad, site, args)
        node = None
        if any(ctx.needs_input_grad):
            edges = tuple(_edge(a) if needs else None for a, needs in zip(args, ctx.needs_input_grad))
            node = Node(cls, ctx, edges, tuple((o.shape, o.dtype) for o in outs), dev)
            if site is not None:
                node.site = site
            tensors = tuple(Tensor._make(o, node, i) if o.dtype.kind == "f" else Tensor._make(o)
                            for i, o in enumerate(outs))
        else:
            tensors = tuple(Tensor._make(o) for o in outs)
        _share_storage(args, tensors)
        if node is not None and ctx._saved:
            ctx._saved_versions = _saved_versions(cls, ctx._saved, args, tensors)
        return tensors if isinstance(out, tuple) else tensors[0]


def storage(array):
    """The array that owns `array`'s memory (itself, or the end of its chain of bases)."""
    base = array.base
    while base is not None and devices.is_array(base):
        array, base = base, base.base
    return array


def _share_storage(inputs, outputs):
    """An output that is a view of an input's memory shares the input's version counter
    and history, and has the input's base (or the input itself) as its _base."""
    candidates = None
    for t in outputs:
        if t._data.base is None:  # memory of its own: the common case
            continue
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


def _saved_versions(function, saved, inputs, outputs):
    """(counter, version, description) of each input or output tensor whose memory one of
    the arrays a Function saved is (or is a view of): what saved_tensors checks."""
    tensors = [(t, t.grad_fn.function if t.grad_fn is not None else None, t._output_nr)
               for t in inputs if isinstance(t, Tensor)]
    tensors += [(t, function, i) for i, t in enumerate(outputs)]
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


def _topological_order(roots):
    """Every node reachable from `roots`, each after all the nodes it takes inputs from."""
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
        if node.ctx._saved is None:
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
    if t.grad is None:
        if owned and g.dtype == t.dtype and g.flags.c_contiguous and devices.is_writeable(g):
            t.grad = Tensor._make(g)
        else:
            t.grad = Tensor._make(g.astype(t.dtype, order="C", copy=True))
    else:
        t.grad._data += g


class HookHandle:
    """What Tensor.register_post_accumulate_grad_hook returns: remove() unregisters the hook."""
    _next_id = 0

    def __init__(self, hooks, hook):
        HookHandle._next_id += 1
        self.id, self._hooks = HookHandle._next_id, hooks
        hooks[self.id] = hook

    def remove(self):
        self._hooks.pop(self.id, None)


def _leaves_with_hooks(order, roots):
    """For each leaf with post-accumulate-grad hooks: [leaf, how many of its gradient edges
    this backward will still visit, whether one of them carried a gradient]."""
    hooked = {}
    edges = [e for node in order for e in node.edges] + roots
    for e in edges:
        if isinstance(e, Tensor) and e._post_accumulate_grad_hooks:
            hooked.setdefault(id(e), [e, 0, False])[1] += 1
    return hooked


def _leaf_edge_done(hooked, t, got_gradient):
    """One gradient edge into the leaf t was visited: after the last, its hooks run, if any
    edge carried a gradient (as PyTorch runs them after AccumulateGrad)."""
    entry = hooked.get(id(t))
    if entry is None:
        return
    entry[1] -= 1
    entry[2] = entry[2] or got_gradient
    if entry[1] == 0 and entry[2]:
        for hook in list(t._post_accumulate_grad_hooks.values()):
            hook(t)


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


_UNSHARED, _OWNER_OF_ONE_VIEW = _references_of_an_unshared_result(), _references_of_a_views_owner()


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
    if owner is None:
        return bool(g.flags.owndata)
    return (isinstance(g, type(owner)) and owner.base is None and owner.flags.owndata
            and owner.nbytes == g.nbytes and g.flags.c_contiguous
            and sys.getrefcount(owner) <= _OWNER_OF_ONE_VIEW)


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Add d(sum_i <tensors[i], grad_tensors[i]>)/d(leaf) into every leaf's .grad."""
    tensors = list(tensors)
    grad_tensors = [None] * len(tensors) if grad_tensors is None else list(grad_tensors)
    buffers = {}  # node -> list with the gradient of each of its outputs
    leaf_roots = []
    for t, g in zip(tensors, grad_tensors):
        if not t.requires_grad:
            raise RuntimeError("backward: the tensor does not require grad and has no grad_fn "
                               "(no input of the computation had requires_grad=True)")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got an "
                                   f"output of shape {t.shape}: pass backward(gradient) with that shape")
            g = np.ones_like(t._data)
        else:
            if isinstance(g, Tensor) and g.device != t.device:
                raise RuntimeError(f"backward: the gradient is on device {g.device}, but the output "
                                   f"is on {t.device}; move it with gradient.to({str(t.device)!r})")
            g = g._data if isinstance(g, Tensor) else on_device(g, t.device)
            if g.shape != t.shape:
                raise RuntimeError(f"backward: gradient has shape {g.shape}, but the output has "
                                   f"shape {t.shape}")
            g = g.astype(t.dtype, copy=False)
        if t.grad_fn is None:
            _accumulate_leaf(t, g)
            leaf_roots.append(t)
        else:
            slots = buffers.setdefault(t.grad_fn, [None] * len(t.grad_fn.outputs))
            i = t._output_nr
            slots[i] = g if slots[i] is None else slots[i] + g

    order = _topological_order(list(buffers))
    hooked = _leaves_with_hooks(order, leaf_roots)
    with no_grad():
        for t in leaf_roots:
            _leaf_edge_done(hooked, t, True)
        for node in reversed(order):
            slots = buffers.pop(node, None)
            if slots is None:
                for edge in node.edges if hooked else ():
                    _leaf_edge_done(hooked, edge, False)
                continue
            # an output nobody used gets zeros; integer outputs (indices) never get a gradient
            grads = [devices.zeros(shape, dtype, node.device) if g is None and dtype.kind == "f"
                     else g for g, (shape, dtype) in zip(slots, node.outputs)]
            if _anomaly_enabled:
                in_grads = _run_backward_checked(node, grads)
            else:
                in_grads = node.function.backward(node.ctx, *grads)
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(node.edges):
                raise RuntimeError(f"{node.name()} returned {len(in_grads)} gradients for "
                                   f"{len(node.edges)} inputs")
            for k in range(len(in_grads)):
                edge, g = node.edges[k], in_grads[k]
                if edge is None:
                    continue
                if g is None:
                    _leaf_edge_done(hooked, edge, False)
                    continue
                if isinstance(edge, Tensor):
                    owned = not retain_graph and _owned(g, in_grads[:k] + in_grads[k + 1:] + tuple(grads))
                    _accumulate_leaf(edge, g, owned=owned)
                    _leaf_edge_done(hooked, edge, True)
                else:
                    parent, i = edge
                    g = on_device(g, parent.device)
                    slots = buffers.setdefault(parent, [None] * len(parent.outputs))
                    slots[i] = g if slots[i] is None else slots[i] + g
            if not retain_graph and node.ctx._saved:
                node.ctx._saved = None  # frees what forward saved
                node.ctx._saved_versions = ()

