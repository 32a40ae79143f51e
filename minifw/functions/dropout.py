"""Inverted dropout: zero with probability p, scale the rest by 1 / (1 - p)."""
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
