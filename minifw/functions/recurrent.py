"""Recurrent layers: the Function over the current engine's fused RNN primitives
(rnn_forward, rnn_backward_data, rnn_backward_weights), and the flat weight buffer
those primitives read, as a differentiable function of the named parameters."""
import threading
import weakref

import numpy as np

from .. import caches, devices
from ..autograd import Function, recomputed_gradients
from ..engines import current_engine
from .elementwise import Where
from .shape import Cat, Stack


class SpareReserves:
    """One spare training reserve per (elements, dtype, device), reused step after step.

    A reserve runs to tens of MiB (80 MiB for the char-LSTM), past the size up to which
    the C allocator recycles freed memory, so a new one every step is fresh pages for
    the operating system to fault in and zero: 17 ms of a 102 ms forward at (T 35,
    N 20, H 650, 2 layers) on a Zen 3. A training forward takes the spare (or a new
    array) and hands the engine a view of it; when the graph frees what forward saved
    (after backward, or when the graph is dropped), the view dies and the array becomes
    the spare again. Arrays of the CPU and the emulator only: CuPy pools its own
    memory. Registered as minifw.caches' "rnn.reserves"; spares beyond
    `max_cached_bytes` (1 GiB by default) are not kept."""

    DEFAULT_MAX_CACHED_BYTES = 1 << 30

    def __init__(self):
        self._spares = {}
        self._lock = threading.Lock()
        self._max_cached = self.DEFAULT_MAX_CACHED_BYTES

    @property
    def max_cached_bytes(self):
        return self._max_cached

    @max_cached_bytes.setter
    def max_cached_bytes(self, value):
        value = caches.check_size_limit("rnn reserves", "max_cached_bytes", value)
        with self._lock:  # as the other byte caches: lowering the limit drops spares over it
            self._max_cached = value
            for key in sorted(self._spares, key=lambda k: self._spares[k].nbytes, reverse=True):
                if self.current_bytes <= value:
                    break
                del self._spares[key]

    def take(self, desc, t, n, dev):
        size = desc.reserve_size(t, n)
        key = (size, np.dtype(desc.dtype).str, str(dev))
        with self._lock:
            base = self._spares.pop(key, None)
        if base is None:
            base = devices.empty(size, desc.dtype, dev, recycle=False)  # kept here
            if not isinstance(base, np.ndarray):
                return base
        view = base[...]
        weakref.finalize(view, self._give_back, key, base)
        return view

    def _give_back(self, key, base):
        with self._lock:
            if key not in self._spares and self.current_bytes + base.nbytes <= self._max_cached:
                self._spares[key] = base

    @property
    def current_bytes(self):
        return sum(a.nbytes for a in self._spares.values())

    def stats(self):
        with self._lock:
            return {"entries": len(self._spares), "current_bytes": self.current_bytes,
                    "max_cached_bytes": self._max_cached}

    def clear(self):
        with self._lock:
            self._spares.clear()


spare_reserves = caches.register("rnn.reserves", SpareReserves())


def _contiguous(a):
    """a as a C-contiguous array on its device (np.ascontiguousarray would return a CPU array)."""
    return a if a is None or a.flags.c_contiguous else a.copy(order="C")


class RecurrentNetwork(Function):
    """(y, h_n) or, for LSTM, (y, h_n, c_n) from x (T, N, I), h0, c0 (or None for
    zeros) and the flat weights of `desc`; `lengths` (per batch entry, or None)
    is not differentiable."""

    @staticmethod
    def forward(ctx, x, h0, c0, weights, *, desc, lengths=None):
        engine = ctx.engine = current_engine()
        given = (x, h0, c0)  # saved too: a contiguous copy would be a constant to create_graph=True
        x, h0, c0 = (_contiguous(a) for a in (x, h0, c0))
        training = any(ctx.needs_input_grad)  # under no_grad (or nothing to learn) keep no reserve
        spare = spare_reserves.take(desc, x.shape[0], x.shape[1], devices.of(x)) if training else None
        y, h_n, c_n, reserve = engine.rnn_forward(desc, x, h0, c0, weights, training,
                                                  lengths=lengths, reserve=spare)
        if spare is not None and reserve is not spare:
            raise RuntimeError("RecurrentNetwork: the engine returned another array than the reserve it was given")
        ctx.save_for_backward(x, h0, c0, weights, reserve, *given)
        ctx.desc, ctx.lengths = desc, lengths
        return (y, h_n) if c_n is None else (y, h_n, c_n)

    @staticmethod
    def backward(ctx, dy, dh_n, dc_n=None):
        x, h0, c0, weights, reserve = ctx.saved_tensors[:5]
        need_x, need_h0, need_c0, need_w = ctx.needs_input_grad
        engine, desc, lengths = ctx.engine, ctx.desc, ctx.lengths
        dy, dh_n, dc_n = (_contiguous(a) for a in (dy, dh_n, dc_n))
        # backward_data stores the gate gradients backward_weights reads, so it always runs first
        dx, dh0, dc0 = engine.rnn_backward_data(desc, x, weights, reserve, h0, c0, dy, dh_n, dc_n, lengths=lengths)
        dweights = None
        if need_w:
            dweights = engine.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(weights), lengths=lengths)
        return dx if need_x else None, dh0 if need_h0 else None, dc0 if need_c0 else None, dweights

    @staticmethod
    def backward_graph(ctx, dy, dh_n, dc_n=None):
        # the network again, step by step in recorded operations, then differentiated
        x, h0, c0 = ctx.saved_tensors[5:]
        weights = ctx.saved_tensors[3]
        desc, lengths = ctx.desc, ctx.lengths
        grads = (dy, dh_n) if desc.mode != "lstm" else (dy, dh_n, dc_n)
        return recomputed_gradients(lambda *inputs: rnn_in_operations(desc, *inputs, lengths=lengths),
                                    (x, h0, c0, weights), grads)


def _cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of one layer and direction in Tensor operations, PyTorch's formulas: (h', c')."""
    gi = x @ w_ih.transpose(0, 1) + (0.0 if b_ih is None else b_ih)
    gh = h @ w_hh.transpose(0, 1) + (0.0 if b_hh is None else b_hh)
    if mode == "lstm":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
    if mode == "gru":
        ir, iz, i_n = gi.chunk(3, 1)
        hr, hz, h_n = gh.chunk(3, 1)
        r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
        n = (i_n + r * h_n).tanh()
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (pre.tanh() if mode == "rnn_tanh" else pre.relu()), None


def rnn_in_operations(desc, x, h0, c0, weights, *, lengths=None):
    """(y, h_n) or (y, h_n, c_n) of the network `desc` describes, as the fused primitive
    computes them, by a loop over layers, directions and steps in Tensor operations (for
    second derivatives). With lengths, sequence n steps only at t < lengths[n]: elsewhere its
    state is kept and its output is 0."""
    from ..autograd import Tensor  # the class, set by minifw.tensor (no import upwards)
    T, N = x.shape[0], x.shape[1]
    H, D, lstm = desc.hidden_size, desc.num_directions, desc.mode == "lstm"
    dev = devices.of(x._data)

    def zeros(shape):
        return Tensor._make(devices.zeros(shape, x.dtype, dev))

    w, offset = {}, 0
    for name, shape in desc.weight_shapes():
        size = int(np.prod(shape))
        w[name] = weights[offset:offset + size].reshape(shape)
        offset += size
    live = None
    if lengths is not None:
        steps = np.asarray(devices.to_device(lengths, devices.CPU)).reshape(-1)
        live = [devices.to_device((t < steps)[:, None], dev) for t in range(T)]
    h_n, c_n, inp = [], [], x
    for layer in range(desc.num_layers):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:D]):
            k = layer * D + d
            h = zeros((N, H)) if h0 is None else h0[k]
            c = (zeros((N, H)) if c0 is None else c0[k]) if lstm else None
            args = [w.get(f"{n}_l{layer}{sfx}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            out = [None] * T
            for t in (range(T) if d == 0 else reversed(range(T))):
                h_new, c_new = _cell(desc.mode, inp[t], h, c, *args)
                if live is None:
                    h, c = h_new, c_new
                    out[t] = h
                else:
                    h = Where.apply(h_new, h, condition=live[t])
                    c = Where.apply(c_new, c, condition=live[t]) if lstm else None
                    out[t] = Where.apply(h, x.dtype.type(0), condition=live[t])
            outs.append(Stack.apply(*out, dim=0))
            h_n.append(h)
            c_n.append(c)
        inp = outs[0] if D == 1 else Cat.apply(*outs, dim=2)
    y, h_n = inp, Stack.apply(*h_n, dim=0)
    return (y, h_n, Stack.apply(*c_n, dim=0)) if lstm else (y, h_n)


class PackedWeights(Function):
    """The flat weight buffer, as a function of the parameters it is made of: `flat`
    itself when the parameters are its views (no copy; see nn.RNNBase), otherwise
    their concatenation. The gradient is split back into one view per parameter."""

    @staticmethod
    def forward(ctx, *params, flat=None):
        ctx.shapes = [p.shape for p in params]
        if flat is not None:
            return flat
        out = devices.empty(sum(p.size for p in params), params[0].dtype, devices.of(params[0]))
        return np.concatenate([p.reshape(-1) for p in params], out=out)  # into an array on their device

    @staticmethod
    def backward(ctx, dflat):
        grads, offset = [], 0
        for shape in ctx.shapes:
            size = int(np.prod(shape))
            grads.append(dflat[offset:offset + size].reshape(shape))
            offset += size
        return tuple(grads)

    backward_graph = backward  # slicing and reshape: the same on Tensors
