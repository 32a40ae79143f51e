"""Recurrent layers: the Function over the current engine's fused RNN primitives
(rnn_forward, rnn_backward_data, rnn_backward_weights), and the flat weight buffer
those primitives read, as a differentiable function of the named parameters."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..engines import current_engine


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
        y, h_n, c_n, reserve = engine.rnn_forward(desc, x, h0, c0, weights, training,
                                                  lengths=lengths)
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
