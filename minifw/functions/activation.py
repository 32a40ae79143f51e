"""Pointwise activations (relu, leaky_relu, elu, sigmoid, tanh) over the activation primitive."""
from ..autograd import Function
from ..engines import current_engine


class Activation(Function):
    @staticmethod
    def forward(ctx, x, *, mode, negative_slope=0.01, alpha=1.0):
        engine = ctx.engine = current_engine()
        y = engine.activation_forward(x, mode, negative_slope=negative_slope, alpha=alpha)
        # the backward works from y; only a negative slope/alpha needs x to tell the branch
        needs_x = (mode == "leaky_relu" and negative_slope < 0) or (mode == "elu" and alpha < 0)
        ctx.save_for_backward(y, x if needs_x else None)
        ctx.args = mode, negative_slope, alpha
        return y

    @staticmethod
    def backward(ctx, dy):
        y, x = ctx.saved_tensors
        mode, negative_slope, alpha = ctx.args
        return ctx.engine.activation_backward(dy, y, mode, x=x, negative_slope=negative_slope,
                                              alpha=alpha)
