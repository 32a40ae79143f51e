"""Dropout. Inverted dropout (zero with probability p, scale the rest by 1 / (1 - p)) over
the dropout primitive; channel dropout (whole feature maps at once, nn.Dropout2d) as array
code, since its mask has one draw per (sample, channel)."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..engines import current_engine


class InvertedDropout(Function):
    @staticmethod
    def forward(ctx, x, *, p, seed):
        engine = ctx.engine = current_engine()
        y, mask = engine.dropout_forward(x, p, seed=seed)
        ctx.save_for_backward(mask)
        ctx.p = p
        return y

    @staticmethod
    def backward(ctx, dy):
        mask, = ctx.saved_tensors
        return ctx.engine.dropout_backward(dy, mask, ctx.p)

    @staticmethod
    def backward_graph(ctx, dy):  # the mask is drawn, not a function of x: a constant
        mask, = ctx.saved_tensors
        scale = 0.0 if ctx.p >= 1.0 else 1.0 / (1.0 - ctx.p)  # p = 1: zero, as dropout_backward
        return dy * (mask.to(dy.dtype) * scale)


class ChannelDropout(Function):
    """Zero each (sample, channel) slice x[n, c] of an (N, C, ...) array with probability p and
    scale the kept ones by 1 / (1 - p). The mask, one uniform draw per slice from a generator
    seeded with `seed`, is made on the host and copied to x's device: the same seed gives the
    same channels on every device."""

    @staticmethod
    def forward(ctx, x, *, p, seed):
        keep = np.random.Generator(np.random.PCG64(seed)).random(x.shape[:2]) >= p
        scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)  # p = 1 drops everything, as PyTorch
        mask = (keep * scale).astype(x.dtype).reshape(x.shape[:2] + (1,) * (x.ndim - 2))
        mask = devices.to_device(mask, devices.of(x))
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, dy):
        mask, = ctx.saved_tensors
        return dy * mask

    backward_graph = backward  # the mask (a constant) times dy, in Tensors as in arrays
