"""Recurrent layers fused over the whole sequence (cuDNN's RNN primitive), with
PyTorch's formulas and weight layout (torch.nn.LSTM, GRU, RNN):

    lstm      i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (W_ih x + b_ih + W_hh h + b_hh), in that row order
              c' = f * c + i * g;  h' = o * tanh(c')
    gru       r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z})
              n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h' = (1 - z) * n + z * h
    rnn_tanh  h' = tanh(W_ih x + b_ih + W_hh h + b_hh)   (rnn_relu: relu)

Layer l > 0 reads the previous layer's output (both directions concatenated,
forward first); the reverse direction runs t = T-1 .. 0 and writes its half of
y at the same t. Time-major x (T, N, I).

Variable lengths (`lengths=`, N ints in [1, T], any order), as PyTorch's packed
sequences: sequence n takes no step at t >= lengths[n], where its output is 0
in both directions and dy is ignored (dx there is 0); the forward direction's
h_n/c_n are the state after step lengths[n] - 1, and the reverse direction
starts there from h0 and ends after step 0. Pass the same lengths to all three
calls.

    desc = RNNDescriptor("lstm", input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    w = np.zeros(desc.weight_count(), np.float32); desc.views(w)["weight_ih_l0"][...] = ...
    y, h_n, c_n, reserve = rnn_forward(desc, x, h0, c0, w, lengths=[5, 2, 7])
    y, h_n, c_n, _ = rnn_forward(desc, x, h0, c0, w, training=False)   # inference: no reserve
    rnn_forward(desc, x, h0, c0, w, reserve=reserve)   # training into a reserve kept from step to step
    dx, dh0, dc0 = rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, dc_n, lengths=[5, 2, 7])
    rnn_backward_weights(desc, x, reserve, h0, dw, lengths=[5, 2, 7])   # dw += ..., the layout of w

Flat weights: one 1-D buffer holding, for each layer l and each direction
(suffix "" then "_reverse"), in this order and with PyTorch's names:

    weight_ih_l{l}{sfx} (G*H, I_l), weight_hh_l{l}{sfx} (G*H, H),
    and with bias: bias_ih_l{l}{sfx} (G*H,), bias_hh_l{l}{sfx} (G*H,)

each row-major and packed one after the other (G: 4 lstm, 3 gru, 1 rnn; I_0 =
input_size, I_l = D*H for l > 0). `desc.weight_shapes()` lists them and
`desc.views(flat)` gives named views into such a buffer.

The reserve (`desc.reserve_size(T, N)` elements) is what the forward keeps for
the backward: per layer its output (T, N, D*H), and per layer and direction the
activated gates (T, N, G*H), the gate gradients that rnn_backward_data stores
for rnn_backward_weights (T, N, G*H), GRU's recurrent-side gate gradients
(T, N, G*H) and W_hn h + b_hn (T, N, H), LSTM's cell states (T, N, H) (past a sequence's end: zero gates, the kept cell
state). So
rnn_backward_weights must follow rnn_backward_data on the same reserve.

Inference (`training=False`) allocates no reserve: the forward computes the
input projections a block of steps at a time and keeps only that block's gates
and the output of the layer that feeds the next one, in scratch memory from the
device's workspace allocator (minifw.devices.workspace), `desc.workspace_size(T,
N, training, device=...)` elements of desc's dtype. Training and inference
compute the same values the same way, so their outputs are equal to the bit.

Devices: the functions run on the device of their arrays (all on one: "cpu",
or "cudasim" for the CUDA kernels on the emulator), with the same reserve
layout and sizes on each. The CUDA kernels' data backward also takes scratch
from the workspace allocator (with more than one layer, the gradient reaching a
lower layer's output): `desc.workspace_size(T, N, direction="backward_data",
device=...)`, 0 on the CPU.
"""
import math

import numpy as np

from .. import devices
from ..checks import (check_array, check_bool, check_choice, check_dtype_arg, check_float_array,
                      check_float_dtype_ndim, check_same_device, check_size, dtype_name)

MODES = ("lstm", "gru", "rnn_tanh", "rnn_relu")
_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


class RNNDescriptor:
    """The problem: mode, sizes, layers, directions, biases, dtype. A cheap value object."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bidirectional=False, bias=True,
                 dtype=np.float32):
        fn = "RNNDescriptor"
        self.mode = check_choice(fn, "mode", mode, MODES)
        # sizes the native library indexes: each in [1, 2**58] (checks.MAX_SIZE)
        self.input_size = check_size(fn, "input_size", input_size)
        self.hidden_size = check_size(fn, "hidden_size", hidden_size)
        self.num_layers = check_size(fn, "num_layers", num_layers)
        self.bidirectional = check_bool(fn, "bidirectional", bidirectional)
        self.bias = check_bool(fn, "bias", bias)
        self.dtype = check_dtype_arg(fn, "dtype", dtype)

    @property
    def gates(self):
        return _GATES[self.mode]

    @property
    def num_directions(self):
        return 2 if self.bidirectional else 1

    def __repr__(self):
        return (f"RNNDescriptor({self.mode!r}, input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}, bidirectional={self.bidirectional}, bias={self.bias}, "
                f"dtype={dtype_name(self.dtype)})")

    def _key(self):
        return (self.mode, self.input_size, self.hidden_size, self.num_layers, self.bidirectional, self.bias,
                self.dtype)

    def __eq__(self, other):
        return isinstance(other, RNNDescriptor) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def weight_shapes(self):
        """[(name, shape)] in the flat buffer's order, PyTorch's names."""
        gh, h, d = self.gates * self.hidden_size, self.hidden_size, self.num_directions
        out = []
        for layer in range(self.num_layers):
            i = self.input_size if layer == 0 else d * h
            for sfx in ("", "_reverse")[:d]:
                out += [(f"weight_ih_l{layer}{sfx}", (gh, i)), (f"weight_hh_l{layer}{sfx}", (gh, h))]
                if self.bias:
                    out += [(f"bias_ih_l{layer}{sfx}", (gh,)), (f"bias_hh_l{layer}{sfx}", (gh,))]
        return out

    def weight_count(self):
        """Elements of the flat weight buffer: an exact Python int (math.prod: np.prod would
        wrap around int64 for large sizes and could give 0)."""
        return sum(math.prod(shape) for _, shape in self.weight_shapes())

    def views(self, flat):
        """{name: view of `flat`} for a 1-D buffer of weight_count() elements."""
        flat = _check_weights("RNNDescriptor.views", "flat", flat, self, contiguous=False)
        out, off = {}, 0
        for name, shape in self.weight_shapes():
            size = math.prod(shape)
            out[name] = flat[off:off + size].reshape(shape)
            off += size
        return out

    def reserve_size(self, T, N):
        """Elements (of the descriptor's dtype) of the reserve that rnn_forward(...,
        training=True) allocates for a (T, N) batch and returns for the backward:
        every step's gates and states. Inference allocates none."""
        T = check_size("RNNDescriptor.reserve_size", "T", T, minimum=0)
        N = check_size("RNNDescriptor.reserve_size", "N", N, minimum=0)
        h, gh, d, steps = self.hidden_size, self.gates * self.hidden_size, self.num_directions, T * N
        per_direction = 2 * steps * gh
        if self.mode == "gru":
            per_direction += steps * gh + steps * h
        if self.mode == "lstm":
            per_direction += steps * h
        return self.num_layers * (steps * d * h + d * per_direction)

    def workspace_size(self, T, N, training=True, *, direction="forward", device="cpu"):
        """Elements (of the descriptor's dtype) of scratch memory that rnn_forward (or, with
        direction="backward_data", rnn_backward_data) takes from the workspace allocator of
        `device` (minifw.devices.workspace) for a (T, N) batch, used only during the call.
        The forward: training needs one step's recurrent product (the reserve holds the
        rest); inference (training=False) also the gates of a block of steps and, with more
        than one layer, one layer's output (T, N, D*H): together far less than the reserve,
        and with one layer independent of T; the same on every device. The data backward
        (`training` does not apply): none on the CPU; on the CUDA kernels, with more than
        one layer, the gradient reaching a lower layer's output (T, N, D*H)."""
        fn = "RNNDescriptor.workspace_size"
        T = check_size(fn, "T", T, minimum=0)
        N = check_size(fn, "N", N, minimum=0)
        training = check_bool(fn, "training", training)
        check_choice(fn, "direction", direction, ("forward", "backward_data"))
        dev = devices.get(device, fn)
        return devices.kernel("rnn", "workspace", self.dtype, dev)(*self._sizes(T, N), direction, training)

    def _sizes(self, T, N):
        """The problem as the native kernels take it."""
        return (self.mode, self.input_size, self.hidden_size, self.num_layers, self.num_directions, self.bias,
                T, N)


def _check_desc(fn, desc):
    if not isinstance(desc, RNNDescriptor):
        raise TypeError(f"{fn}: desc must be an RNNDescriptor, got {type(desc).__name__}")
    return desc


def _check_weights(fn, name, w, desc, contiguous=True):
    w = check_float_array(fn, name, w, ndim=1, ndim_desc="1-D (the flat weights)", dtype=desc.dtype) \
        if contiguous else _check_flat_view(fn, name, w, desc)
    if w.size != desc.weight_count():
        raise ValueError(f"{fn}: {name} must have {desc.weight_count()} elements for {desc!r}, got {w.size}")
    return w


def _check_flat_view(fn, name, w, desc):
    check_array(fn, name, w)
    return check_float_dtype_ndim(fn, name, w, ndim=1, ndim_desc="1-D (the flat weights)", dtype=desc.dtype)


def _check_x(fn, desc, x):
    x = check_float_array(fn, "x", x, ndim=3, ndim_desc="3-D (T, N, input_size)", dtype=desc.dtype)
    if x.shape[2] != desc.input_size:
        raise ValueError(f"{fn}: x must have input_size {desc.input_size} in its last dimension, got shape "
                         f"{tuple(x.shape)}")
    return x


def _check_state(fn, name, a, desc, n, *, optional=False, dev=devices.CPU):
    """h0/c0-like: (L*D, N, H), desc's dtype. None means zeros (on dev) when optional."""
    shape = (desc.num_layers * desc.num_directions, n, desc.hidden_size)
    if a is None:
        if optional:
            return devices.zeros(shape, desc.dtype, dev)
        raise TypeError(f"{fn}: {name} must be an array of shape {shape}, got None")
    a = check_float_array(fn, name, a, ndim=3, ndim_desc="3-D (num_layers * num_directions, N, hidden_size)",
                          dtype=desc.dtype)
    if a.shape != shape:
        raise ValueError(f"{fn}: {name} must have shape {shape} (num_layers * num_directions, N, hidden_size), "
                         f"got {tuple(a.shape)}")
    return a


def _cell(fn, name, a, desc, n, *, optional=False, dev=devices.CPU):
    """LSTM's cell-state argument, checked; for other modes it must be None and
    the kernel gets an empty array."""
    if desc.mode == "lstm":
        return _check_state(fn, name, a, desc, n, optional=optional, dev=dev)
    if a is not None:
        raise ValueError(f"{fn}: {name} is LSTM's cell state and must be None for mode {desc.mode!r}")
    return devices.empty(0, desc.dtype, dev)


def _check_lengths(fn, lengths, t, n, dev):
    """None, or N integers in [1, T] as a contiguous int64 array on dev (the kernels
    read them there); the kernel gets an empty array for None."""
    if lengths is None:
        return devices.empty(0, np.int64, dev)
    arr = devices.to_device(lengths, devices.CPU) if devices.is_array(lengths) else np.asarray(lengths)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):  # [] is float64
        raise TypeError(f"{fn}: lengths must be integers (one sequence length per batch entry), got dtype "
                        f"{arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{fn}: lengths must hold N={n} values (one per batch entry), got shape {arr.shape}")
    bad = np.flatnonzero((arr < 1) | (arr > t))
    if bad.size:
        raise ValueError(f"{fn}: lengths must each be in [1, T={t}], got {arr[bad[0]]} at index {bad[0]}")
    return devices.to_device(np.ascontiguousarray(arr, np.int64), dev)  # checked on the host, then moved


def _sizes(desc, x):
    return desc._sizes(x.shape[0], x.shape[1])


def rnn_forward(desc, x, h0, c0, weights, training=True, lengths=None, *, reserve=None):
    """(y (T, N, D*H), h_n (L*D, N, H), c_n (LSTM) or None, reserve (training) or None).
    h0 (and c0) may be None for zeros; lengths None (all T) or N sequence lengths.
    `reserve`: training only, an array of desc.reserve_size(T, N) elements to fill and
    return instead of a new one (as cuDNN's caller passes its reserve space): a caller
    that trains step after step reuses one, as nn.LSTM/GRU/RNN do."""
    fn = "rnn_forward"
    _check_desc(fn, desc)
    x = _check_x(fn, desc, x)
    t, n = x.shape[:2]
    dev = devices.of(x)
    h0 = _check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    c0 = _cell(fn, "c0", c0, desc, n, optional=True, dev=dev)
    weights = _check_weights(fn, "weights", weights, desc)
    check_same_device(fn, x=x, h0=h0, c0=c0, weights=weights)
    training = check_bool(fn, "training", training)
    lengths = _check_lengths(fn, lengths, t, n, dev)
    y = devices.empty((t, n, desc.num_directions * desc.hidden_size), desc.dtype, dev)
    h_n = devices.empty(h0.shape, desc.dtype, dev)
    c_n = devices.empty(c0.shape, desc.dtype, dev)
    # Only training keeps every step's gates and states; inference's one block of gates and one
    # layer output are scratch.
    reserve = _reserve_out(fn, desc, reserve, training, t, n, dev, dict(x=x, h0=h0, c0=c0, weights=weights))
    check_same_device(fn, x=x, reserve=reserve)
    scratch = devices.workspace(dev).get(desc.workspace_size(t, n, training, device=dev)
                                         * np.dtype(desc.dtype).itemsize)
    devices.kernel_for("rnn", "forward", x)(*_sizes(desc, x), training, x, h0, c0, weights, y, h_n, c_n, reserve,
                                            scratch, lengths)
    return y, h_n, (c_n if desc.mode == "lstm" else None), (reserve if training else None)


def _reserve_out(fn, desc, reserve, training, t, n, dev, inputs):
    """The forward's reserve: a new array, or the caller's `reserve` once checked (none of
    `inputs`, {name: array}, may share its memory)."""
    if reserve is None:
        return devices.empty(desc.reserve_size(t, n) if training else 0, desc.dtype, dev)
    if not training:
        raise ValueError(f"{fn}: reserve is filled by a training forward only; got one with training=False")
    if devices.is_array(reserve) and not reserve.flags.c_contiguous:
        raise ValueError(f"{fn}: reserve must be C-contiguous")
    reserve = _check_reserve(fn, desc, reserve, t, n)
    for name, a in inputs.items():
        if isinstance(a, np.ndarray) and isinstance(reserve, np.ndarray) and np.may_share_memory(reserve, a):
            raise ValueError(f"{fn}: reserve must not share memory with {name}")
    return reserve


def _check_reserve(fn, desc, reserve, t, n):
    if reserve is None:
        raise TypeError(f"{fn}: reserve must be the array rnn_forward(..., training=True) returned, got None")
    reserve = check_float_array(fn, "reserve", reserve, ndim=1, dtype=desc.dtype)
    if reserve.size != desc.reserve_size(t, n):
        raise ValueError(f"{fn}: reserve must have {desc.reserve_size(t, n)} elements for T={t}, N={n}, "
                         f"got {reserve.size}")
    if not devices.is_writeable(reserve):
        raise ValueError(f"{fn}: reserve must be writable (the gate gradients are stored in it)")
    return reserve


def rnn_backward_data(desc, x, weights, reserve, h0, c0, dy, dh_n, dc_n, lengths=None):
    """(dx, dh0, dc0 (LSTM) or None) from the forward's reserve; dh_n and dc_n may
    be None (zeros). Stores the gate gradients in the reserve for rnn_backward_weights."""
    fn = "rnn_backward_data"
    _check_desc(fn, desc)
    x = _check_x(fn, desc, x)
    t, n = x.shape[:2]
    weights = _check_weights(fn, "weights", weights, desc)
    if reserve is not None and devices.is_array(reserve) and not reserve.flags.c_contiguous:
        raise ValueError(f"{fn}: reserve must be C-contiguous (the gate gradients are stored in it)")
    reserve = _check_reserve(fn, desc, reserve, t, n)
    dev = devices.of(x)
    h0 = _check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    c0 = _cell(fn, "c0", c0, desc, n, optional=True, dev=dev)
    dy = check_float_array(fn, "dy", dy, ndim=3, dtype=desc.dtype)
    y_shape = (t, n, desc.num_directions * desc.hidden_size)
    if dy.shape != y_shape:
        raise ValueError(f"{fn}: dy must have y's shape {y_shape}, got {tuple(dy.shape)}")
    dh_n = _check_state(fn, "dh_n", dh_n, desc, n, optional=True, dev=dev)
    dc_n = _cell(fn, "dc_n", dc_n, desc, n, optional=True, dev=dev)
    check_same_device(fn, x=x, weights=weights, reserve=reserve, h0=h0, c0=c0, dy=dy, dh_n=dh_n, dc_n=dc_n)
    lengths = _check_lengths(fn, lengths, t, n, dev)
    dx, dh0, dc0 = np.empty_like(x), np.empty_like(h0), np.empty_like(c0)
    scratch = devices.workspace(dev).get(desc.workspace_size(t, n, direction="backward_data", device=dev)
                                         * np.dtype(desc.dtype).itemsize)
    devices.kernel_for("rnn", "backward_data", x)(*_sizes(desc, x), weights, reserve, h0, c0, dy, dh_n, dc_n,
                                                  dx, dh0, dc0, scratch, lengths)
    return dx, dh0, (dc0 if desc.mode == "lstm" else None)


def rnn_backward_weights(desc, x, reserve, h0, dweights, lengths=None):
    """dweights += the weight gradients (the flat layout), in place; after
    rnn_backward_data on the same reserve. Returns dweights."""
    fn = "rnn_backward_weights"
    _check_desc(fn, desc)
    x = _check_x(fn, desc, x)
    t, n = x.shape[:2]
    reserve = _check_reserve(fn, desc, reserve, t, n)
    dev = devices.of(x)
    h0 = _check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    check_array(fn, "dweights", dweights)
    if not dweights.flags.c_contiguous or not devices.is_writeable(dweights):
        raise ValueError(f"{fn}: dweights is updated in place and must be writable and C-contiguous")
    _check_weights(fn, "dweights", dweights, desc)
    check_same_device(fn, x=x, reserve=reserve, h0=h0, dweights=dweights)
    lengths = _check_lengths(fn, lengths, t, n, dev)
    devices.kernel_for("rnn", "backward_weights", x)(*_sizes(desc, x), x, reserve, h0, dweights, lengths)
    return dweights
