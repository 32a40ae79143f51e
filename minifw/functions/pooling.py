"""2-D max and average pooling over the current engine's pooling primitive."""
from ..autograd import Function
from ..engines import current_engine


class MaxPooling2D(Function):
    @staticmethod
    def forward(ctx, x, *, return_indices, **args):
        engine = ctx.engine = current_engine()
        if not (return_indices or ctx.needs_input_grad[0]):  # inference: no index array at all
            return engine.pool2d_forward(x, mode="max", **args)
        y, indices = engine.pool2d_forward(x, mode="max", return_indices=True, **args)
        ctx.save_for_backward(indices)
        ctx.x_shape, ctx.args = x.shape, args
        return (y, indices) if return_indices else y

    @staticmethod
    def backward(ctx, dy, *_):  # (the indices output, when returned, has no gradient)
        indices, = ctx.saved_tensors
        return ctx.engine.pool2d_backward(dy, ctx.x_shape, mode="max", indices=indices, **ctx.args)


class AveragePooling2D(Function):
    @staticmethod
    def forward(ctx, x, **args):
        engine = ctx.engine = current_engine()
        ctx.x_shape, ctx.args = x.shape, args
        return engine.pool2d_forward(x, mode="avg", **args)

    @staticmethod
    def backward(ctx, dy):
        return ctx.engine.pool2d_backward(dy, ctx.x_shape, mode="avg", **ctx.args)
