"""2-D convolution: the Function over the current engine's conv2d primitives."""
from ..autograd import Function
from ..engines import current_engine


class Convolution2D(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, **geometry):
        engine = ctx.engine = current_engine()
        ctx.save_for_backward(x, weight)
        ctx.geometry = geometry
        return engine.conv2d_forward(x, weight, bias, **geometry)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        engine, geometry = ctx.engine, ctx.geometry
        dx = engine.conv2d_backward_data(dy, weight, x.shape, **geometry) if need_x else None
        dw = engine.conv2d_backward_filter(x, dy, weight.shape, **geometry) if need_w else None
        db = engine.conv2d_backward_bias(dy) if need_b else None
        return dx, dw, db
