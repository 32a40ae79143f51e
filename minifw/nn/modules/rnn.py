"""Recurrent layers with PyTorch's signatures, parameter names and initialization:
LSTM, GRU, RNN over whole sequences and LSTMCell, GRUCell, RNNCell for one step.
Each forward is one RecurrentNetwork (the fused primitive, minifw.ops.rnn_forward,
through the current engine) per call, or one per layer when dropout applies
between layers. An LSTM with projections (proj_size > 0) is the exception: the primitive
has no projection, so its parameters are plain ones and forward composes the cell per step.

Flat weights. The primitive reads all weights from one 1-D buffer in
RNNDescriptor's layout (PyTorch's names and order). Each named Parameter
(weight_ih_l0, ...) is a Parameter of its own, as in PyTorch, so parameters(),
state_dict(), optimizers and clip_grad_norm_ see exactly PyTorch's tensors; but
its array is a view into the module's one flat buffer. In forward the flat
buffer enters the graph through PackedWeights, a Function of all the named
Parameters that returns that buffer itself (no copy) and whose backward splits
the flat weight gradient back into one view per Parameter, so autograd sees
ordinary leaves and each .grad is that Parameter's own array. Anything that
updates a Parameter in place (optimizers, load_state_dict, init) keeps it a
view; anything that gives it a new array (Module.to, assigning a new Parameter)
breaks the packing, and forward then concatenates (one copy, still correct)
until flatten_parameters() packs again (Module.to does so itself).
"""
import math
import numbers

import numpy as np

from ... import devices
from ...autograd import no_grad
from ...checks import MAX_SIZE
from ...functions.recurrent import PackedWeights, RecurrentNetwork
from ...ops.rnn import RNNDescriptor
from ...tensor import Tensor, cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _check_packed, packed_positions, pad_packed_sequence
from .module import Module
from .utils import _factory, _positive_int


class _FlatWeights(Module):
    """Named Parameters that are views into one flat buffer in `self._layout`'s order.
    Subclasses set `_layout` (an RNNDescriptor) and `_names` ({module name: layout name})."""

    def _register_flat_parameters(self, dtype, dev):
        """The named Parameters, in one flat buffer; sizes whose weights could never be
        allocated are refused with an error naming them (not NumPy's MemoryError)."""
        cls = type(self).__name__
        d = self._layout
        gh, h, dirs = d.gates * d.hidden_size, d.hidden_size, d.num_directions
        per_direction = gh * (h + (2 if d.bias else 0))  # weight_hh and the biases, per layer
        total = dirs * (d.num_layers * per_direction + gh * d.input_size
                        + (d.num_layers - 1) * gh * dirs * h)  # weight_ih: layer 0, the others
        sizes = f"input_size={self.input_size}, hidden_size={self.hidden_size}" + \
            (f", num_layers={self.num_layers}" if hasattr(self, "num_layers") else "")
        if total > MAX_SIZE:
            raise ValueError(f"{cls}: hidden_size={self.hidden_size} is too large: {sizes} need "
                             f"{total} weights, more than 2**58 (the largest size the native "
                             f"library indexes); reduce hidden_size")
        try:
            self._allocate_flat_parameters(d.weight_shapes(), dtype, dev)
        except MemoryError:
            nbytes = 2 * total * np.dtype(dtype).itemsize  # the parameters and the flat buffer
            raise MemoryError(f"{cls}: hidden_size={self.hidden_size} is too large: {sizes} need "
                              f"{total} weights ({nbytes} bytes with the packed copy), more than "
                              f"can be allocated; reduce hidden_size") from None

    def _allocate_flat_parameters(self, shapes, dtype, dev):
        for name, shape in shapes:
            self.register_parameter(self._module_name(name),
                                    Parameter(Tensor._make(devices.empty(shape, dtype, dev))))
        self._flat, self._views = None, []
        self.flatten_parameters()

    def _module_name(self, layout_name):
        return layout_name

    @property
    def _flat_weights_names(self):
        if self._layout is None:  # an LSTM with projections: plain parameters, no flat buffer
            return list(self._projected_names)
        return [self._module_name(name) for name, _ in self._layout.weight_shapes()]

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    def _is_packed(self):
        params = self._flat_weights
        return (self._flat is not None and len(params) == len(self._views)
                and all(p is not None and p._data is v for p, v in zip(params, self._views)))

    def flatten_parameters(self):
        """Pack the parameters into one contiguous flat buffer (their arrays become views
        of it); a no-op when they already are (and for an LSTM with projections, which has no buffer)."""
        if self._layout is None or self._is_packed():
            return
        params = self._flat_weights
        dtypes = {p.dtype for p in params}
        if len(dtypes) != 1:
            raise TypeError(f"{type(self).__name__}: all parameters must have one dtype to be packed, "
                            f"got {sorted(map(str, dtypes))}")
        first = params[0]._data
        flat = devices.empty((sum(p.numel() for p in params),), first.dtype, devices.of(first))
        views, offset = [], 0
        with no_grad():
            for p in params:
                view = flat[offset:offset + p.numel()].reshape(p.shape)
                view[...] = p._data
                p._data = view
                views.append(view)
                offset += p.numel()
        self._flat, self._views = flat, views

    def _apply_to_tensors(self, convert):
        super()._apply_to_tensors(convert)
        for m in self.modules():
            if isinstance(m, _FlatWeights):
                m.flatten_parameters()
        return self

    def _descriptor(self, dtype, layers=None, input_size=None):
        d = self._layout
        return RNNDescriptor(d.mode, d.input_size if input_size is None else input_size, d.hidden_size,
                             d.num_layers if layers is None else layers, d.bidirectional, d.bias, dtype)

    def _weights(self, layer=None):
        """The flat weights (of one layer, or of all) as a Tensor in the graph."""
        names = [n for n, _ in self._layout.weight_shapes()]
        chosen = [i for i, n in enumerate(names)
                  if layer is None or n.endswith((f"_l{layer}", f"_l{layer}_reverse"))]
        params = [self._flat_weights[i] for i in chosen]
        flat = None
        if self._is_packed() and layer is None:
            flat = self._flat
        elif self._is_packed():
            start = sum(self._views[i].size for i in range(chosen[0]))
            flat = self._flat[start:start + sum(p.numel() for p in params)]
        return PackedWeights.apply(*params, flat=flat)

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self._flat_weights:
            init.uniform_(p, -bound, bound)


def _check_input(fn, input, input_size, dtype, ndims, shape_desc):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a minifw.Tensor or a PackedSequence, got {type(input).__name__}")
    if input.ndim not in ndims:
        raise ValueError(f"{fn}: input must be {' or '.join(f'{n}-D' for n in ndims)} {shape_desc}, got a "
                         f"{input.ndim}-D tensor of shape {tuple(input.shape)}")
    if input.shape[-1] != input_size:
        raise ValueError(f"{fn}: input.size(-1) must be equal to input_size. Expected {input_size}, got "
                         f"{input.shape[-1]} (input of shape {tuple(input.shape)})")
    if input.dtype != dtype:
        raise TypeError(f"{fn}: input has dtype {input.dtype} but the parameters have dtype {dtype}; "
                        f"convert one of them (e.g. module.to(input.dtype))")


def _check_state(fn, name, h, shape, shape_desc, dtype):
    if not isinstance(h, Tensor):
        raise TypeError(f"{fn}: {name} must be a minifw.Tensor, got {type(h).__name__}")
    if tuple(h.shape) != tuple(shape):
        raise ValueError(f"{fn}: {name} must have shape {tuple(shape)} {shape_desc}, got {tuple(h.shape)}")
    if h.dtype != dtype:
        raise TypeError(f"{fn}: {name} has dtype {h.dtype} but the parameters have dtype {dtype}")
    return h


def _split_hx(fn, hx, lstm):
    """hx -> (h0, c0); LSTM's is a tuple (h_0, c_0), the others' one tensor."""
    if hx is None:
        return None, None
    if lstm:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise TypeError(f"{fn}: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
        for name, h in zip(("h_0", "c_0"), hx):
            if h is None:
                raise TypeError(f"{fn}: hx must be a tuple (h_0, c_0) of two Tensors, got {name} None")
        return hx[0], hx[1]
    if isinstance(hx, (tuple, list)):
        raise TypeError(f"{fn}: hx must be a Tensor (h_0), got a {type(hx).__name__}")
    return hx, None


def _packed_data(y, sequence):
    """The rows of a padded (T, B, *) output in `sequence`'s packed order."""
    batch_sizes = sequence.batch_sizes.numpy()
    order = (np.arange(batch_sizes[0]) if sequence.sorted_indices is None
             else sequence.sorted_indices.cpu().numpy())
    return y[packed_positions(batch_sizes, order)]


_MODES = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


class RNNBase(_FlatWeights):
    """The multi-layer recurrent layers; mode 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(f"{cls}: dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed, got {dropout!r}")
        if not isinstance(proj_size, numbers.Integral) or isinstance(proj_size, (bool, np.bool_)):
            raise TypeError(f"{cls}: proj_size must be an int, got {type(proj_size).__name__} {proj_size!r}")
        if proj_size < 0:
            raise ValueError(f"{cls}: proj_size must be >= 0 (0: no projection), got {proj_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{cls}: proj_size applies only to LSTM, got proj_size={proj_size} for mode {mode!r}")
        self.mode = mode
        self.input_size = _positive_int(cls, "input_size", input_size)
        self.hidden_size = _positive_int(cls, "hidden_size", hidden_size)
        self.num_layers = _positive_int(cls, "num_layers", num_layers)
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bool(bidirectional), int(proj_size)
        if self.proj_size:
            if self.proj_size >= self.hidden_size:
                raise ValueError(f"{cls}: proj_size must be smaller than hidden_size, got proj_size="
                                 f"{self.proj_size} with hidden_size={self.hidden_size}")
            self._register_projected_parameters(dtype, dev)
        else:
            self._layout = RNNDescriptor(_MODES[mode], self.input_size, self.hidden_size, self.num_layers,
                                         self.bidirectional, self.bias, dtype)
            self._register_flat_parameters(dtype, dev)
        self.reset_parameters()

    def _register_projected_parameters(self, dtype, dev):
        """An LSTM with projections: the fused primitive has no projection, so its parameters are
        plain ones (PyTorch's names, shapes and order) and forward composes the cell per step."""
        d = 2 if self.bidirectional else 1
        h, p = self.hidden_size, self.proj_size
        names = []
        for layer in range(self.num_layers):
            in_size = self.input_size if layer == 0 else p * d
            for sfx in ("", "_reverse")[:d]:
                shapes = [(f"weight_ih_l{layer}{sfx}", (4 * h, in_size)), (f"weight_hh_l{layer}{sfx}", (4 * h, p))]
                if self.bias:
                    shapes += [(f"bias_ih_l{layer}{sfx}", (4 * h,)), (f"bias_hh_l{layer}{sfx}", (4 * h,))]
                shapes.append((f"weight_hr_l{layer}{sfx}", (p, h)))
                for name, shape in shapes:
                    self.register_parameter(name, Parameter(Tensor._make(devices.empty(shape, dtype, dev))))
                    names.append(name)
        self._layout, self._projected_names, self._flat, self._views = None, tuple(names), None, []

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if getattr(self, "proj_size", 0):
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def forward(self, input, hx=None):
        if self.proj_size:
            return self._forward_projected(input, hx)
        fn = type(self).__name__
        lstm = self.mode == "LSTM"
        dtype = self._flat_weights[0].dtype
        x, lengths, packed, batched = self._time_major(fn, input, dtype)
        d = 2 if self.bidirectional else 1
        shape = (self.num_layers * d, x.shape[1], self.hidden_size)
        h0, c0 = _split_hx(fn, hx, lstm)
        names = ("hx[0] (h_0)", "hx[1] (c_0)") if lstm else ("hx", None)
        states = []
        for name, h in ((names[0], h0), (names[1], c0)):
            if h is not None:
                want = shape if batched else (shape[0], shape[2])
                desc = "(num_layers * num_directions, batch, hidden_size)" if batched else \
                    "(num_layers * num_directions, hidden_size) for an unbatched input"
                h = _check_state(fn, name, h, want, desc, dtype)
                h = h if batched else h.unsqueeze(1)
            states.append(h)
        h0, c0 = states

        if self.dropout > 0 and self.training and self.num_layers > 1:
            y, h_n, c_n = self._run_layer_by_layer(x, h0, c0, dtype, lengths)
        else:
            out = RecurrentNetwork.apply(x, h0, c0, self._weights(), desc=self._descriptor(dtype),
                                         lengths=lengths)
            y, h_n, c_n = out if lstm else (*out, None)

        if packed:
            y = PackedSequence(_packed_data(y, input), input.batch_sizes, input.sorted_indices,
                               input.unsorted_indices)
        elif not batched:
            y, h_n, c_n = y.squeeze(1), h_n.squeeze(1), (None if c_n is None else c_n.squeeze(1))
        elif self.batch_first:
            y = y.transpose(0, 1)
        return y, ((h_n, c_n) if lstm else h_n)

    def _time_major(self, fn, input, dtype):
        """(x, lengths, packed, batched): the input checked and as a (T, B, I) tensor, with the
        lengths of a packed one (an int64 array, in the original batch order; else None)."""
        if isinstance(input, PackedSequence):
            _check_packed(fn, *input)  # a hand-built one, named as this layer's input
            x, lengths = pad_packed_sequence(input)  # (T, B, I) in the original batch order
            _check_input(fn, x, self.input_size, dtype, (3,), "")
            return x, lengths.numpy(), True, True
        layout = "(N, L, H_in)" if self.batch_first else "(L, N, H_in)"
        _check_input(fn, input, self.input_size, dtype, (2, 3), f"({layout} or unbatched (L, H_in))")
        batched = input.ndim == 3
        x = input.transpose(0, 1) if batched and self.batch_first else input
        return (x if batched else x.unsqueeze(1)), None, False, batched

    def _forward_projected(self, input, hx):
        """LSTM with projections, composed step by step: h_t = weight_hr (o_t * tanh(c_t)).
        A packed input runs padded, each sequence's state frozen past its length."""
        fn = type(self).__name__
        dtype = self.weight_ih_l0.dtype
        x, lengths, packed, batched = self._time_major(fn, input, dtype)
        d = 2 if self.bidirectional else 1
        T, B = x.shape[0], x.shape[1]
        h0, c0 = _split_hx(fn, hx, True)
        states = []
        for name, h, size in (("hx[0] (h_0)", h0, self.proj_size), ("hx[1] (c_0)", c0, self.hidden_size)):
            if h is None:
                h = x.new_zeros((self.num_layers * d, B, size))
            else:
                want = (self.num_layers * d, B, size) if batched else (self.num_layers * d, size)
                what = "proj_size" if size == self.proj_size else "hidden_size"
                desc = (f"(num_layers * num_directions, batch, {what})" if batched else
                        f"(num_layers * num_directions, {what}) for an unbatched input")
                h = _check_state(fn, name, h, want, desc, dtype)
                h = h if batched else h.unsqueeze(1)
            states.append(h)
        h0, c0 = states
        mask = None
        if lengths is not None:
            live = np.arange(T)[:, None] < lengths[None, :]
            mask = Tensor._make(devices.asarray(live[:, :, None].astype(dtype), dev=devices.of(x._data)))
        layer_in, h_list, c_list = x, [], []
        for layer in range(self.num_layers):
            outs = []
            for k in range(d):
                sfx = "_reverse" if k else ""
                w_ih, w_hh, w_hr = (getattr(self, f"weight_{n}_l{layer}{sfx}") for n in ("ih", "hh", "hr"))
                b_ih = getattr(self, f"bias_ih_l{layer}{sfx}") if self.bias else None
                b_hh = getattr(self, f"bias_hh_l{layer}{sfx}") if self.bias else None
                h, c = h0[layer * d + k], c0[layer * d + k]
                xi = F.linear(layer_in, w_ih, b_ih)  # (T, B, 4 * hidden_size), all steps at once
                ys = [None] * T
                for t in (range(T - 1, -1, -1) if k else range(T)):
                    i, f, g, o = (xi[t] + F.linear(h, w_hh, b_hh)).chunk(4, -1)
                    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
                    h_new = F.linear(o.sigmoid() * c_new.tanh(), w_hr)
                    if mask is None:
                        h, c = h_new, c_new
                        ys[t] = h
                    else:
                        m = mask[t]
                        h, c = h_new * m + h * (1 - m), c_new * m + c * (1 - m)
                        ys[t] = h_new * m
                outs.append(stack(ys))
                h_list.append(h)
                c_list.append(c)
            layer_in = outs[0] if d == 1 else cat(outs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        y, h_n, c_n = layer_in, stack(h_list), stack(c_list)
        if packed:
            y = PackedSequence(_packed_data(y, input), input.batch_sizes, input.sorted_indices,
                               input.unsorted_indices)
        elif not batched:
            y, h_n, c_n = y.squeeze(1), h_n.squeeze(1), c_n.squeeze(1)
        elif self.batch_first:
            y = y.transpose(0, 1)
        return y, (h_n, c_n)

    def _run_layer_by_layer(self, x, h0, c0, dtype, lengths):
        """Dropout between layers: each layer its own primitive call, dropout on its output."""
        d = 2 if self.bidirectional else 1
        h_list, c_list = [], []
        for layer in range(self.num_layers):
            mine = slice(layer * d, (layer + 1) * d)
            desc = self._descriptor(dtype, layers=1, input_size=x.shape[2])
            out = RecurrentNetwork.apply(x, None if h0 is None else h0[mine], None if c0 is None else c0[mine],
                                         self._weights(layer), desc=desc, lengths=lengths)
            x, h_n = out[0], out[1]
            h_list.append(h_n)
            if len(out) == 3:
                c_list.append(out[2])
            if layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, cat(h_list), (cat(c_list) if c_list else None)


class LSTM(RNNBase):
    """torch.nn.LSTM: forward(input, (h_0, c_0)=None) -> output, (h_n, c_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """torch.nn.GRU: forward(input, h_0=None) -> output, h_n."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class RNN(RNNBase):
    """torch.nn.RNN (Elman): h' = tanh or relu(W_ih x + b_ih + W_hh h + b_hh)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# ---- one step ------------------------------------------------------------------------------------

class RNNCellBase(_FlatWeights):
    """One step of a recurrent layer: the primitive with T = 1 and one layer; PyTorch's
    parameter names weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, mode, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        self.input_size = _positive_int(cls, "input_size", input_size)
        self.hidden_size = _positive_int(cls, "hidden_size", hidden_size)
        self.bias = bool(bias)
        self._layout = RNNDescriptor(mode, self.input_size, self.hidden_size, 1, False, self.bias, dtype)
        self._register_flat_parameters(dtype, dev)
        self.reset_parameters()

    def _module_name(self, layout_name):
        return layout_name[:-len("_l0")]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"  # unquoted, as PyTorch's
        return s

    def forward(self, input, hx=None):
        fn = type(self).__name__
        lstm = self._layout.mode == "lstm"
        dtype = self._flat_weights[0].dtype
        _check_input(fn, input, self.input_size, dtype, (1, 2), "((N, input_size) or unbatched (input_size,))")
        batched = input.ndim == 2
        x = (input if batched else input.unsqueeze(0)).unsqueeze(0)  # (1, N, I)
        h0, c0 = _split_hx(fn, hx, lstm)
        states = []
        for name, h in (("hx[0] (h_0)" if lstm else "hx", h0), ("hx[1] (c_0)", c0)):
            if h is not None:
                want = (x.shape[1], self.hidden_size) if batched else (self.hidden_size,)
                h = _check_state(fn, name, h, want, "(batch, hidden_size)" if batched else "(hidden_size,)",
                                 dtype)
                h = (h if batched else h.unsqueeze(0)).unsqueeze(0)
            states.append(h)
        out = RecurrentNetwork.apply(x, *states, self._weights(), desc=self._descriptor(dtype))
        h_n = out[1][0] if batched else out[1][0, 0]
        if not lstm:
            return h_n
        return h_n, (out[2][0] if batched else out[2][0, 0])


class LSTMCell(RNNCellBase):
    """torch.nn.LSTMCell: forward(input, (h_0, c_0)=None) -> (h_1, c_1)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("lstm", input_size, hidden_size, bias, device, dtype)


class GRUCell(RNNCellBase):
    """torch.nn.GRUCell: forward(input, h_0=None) -> h_1."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("gru", input_size, hidden_size, bias, device, dtype)


class RNNCell(RNNCellBase):
    """torch.nn.RNNCell: h_1 = tanh or relu(W_ih x + b_ih + W_hh h_0 + b_hh)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(f"rnn_{nonlinearity}", input_size, hidden_size, bias, device, dtype)
