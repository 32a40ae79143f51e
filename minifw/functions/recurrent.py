"""Recurrent layers: the Function over the current engine's fused RNN primitives
(rnn_forward, rnn_backward_data, rnn_backward_weights), and the flat weight buffer
those primitives read, as a differentiable function of the named parameters."""
import threading
import weakref

import numpy as np

from .. import caches, devices
from ..autograd import Function
from ..engines import current_engine


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
            base = devices.empty(size, desc.dtype, dev)
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
        x, h0, c0 = (_contiguous(a) for a in (x, h0, c0))
        training = any(ctx.needs_input_grad)  # under no_grad (or nothing to learn) keep no reserve
        spare = spare_reserves.take(desc, x.shape[0], x.shape[1], devices.of(x)) if training else None
        y, h_n, c_n, reserve = engine.rnn_forward(desc, x, h0, c0, weights, training,
                                                  lengths=lengths, reserve=spare)
        if spare is not None and reserve is not spare:
            raise RuntimeError("RecurrentNetwork: the engine returned another array than the reserve it was given")
        ctx.save_for_backward(x, h0, c0, weights, reserve)
        ctx.desc, ctx.lengths = desc, lengths
        return (y, h_n) if c_n is None else (y, h_n, c_n)

    @staticmethod
    def backward(ctx, dy, dh_n, dc_n=None):
        x, h0, c0, weights, reserve = ctx.saved_tensors
        need_x, need_h0, need_c0, need_w = ctx.needs_input_grad
        engine, desc, lengths = ctx.engine, ctx.desc, ctx.lengths
        dy, dh_n, dc_n = (_contiguous(a) for a in (dy, dh_n, dc_n))
        # backward_data stores the gate gradients backward_weights reads, so it always runs first
        dx, dh0, dc0 = engine.rnn_backward_data(desc, x, weights, reserve, h0, c0, dy, dh_n, dc_n, lengths=lengths)
        dweights = None
        if need_w:
            dweights = engine.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(weights), lengths=lengths)
        return dx if need_x else None, dh0 if need_h0 else None, dc0 if need_c0 else None, dweights


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
