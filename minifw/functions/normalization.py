"""Normalization: local response normalization (AlexNet) and batch normalization."""
import numpy as np

from ..autograd import Function
from ..engines import current_engine


class LocalResponseNormalization(Function):
    @staticmethod
    def forward(ctx, x, **args):
        engine = ctx.engine = current_engine()
        y, scale = engine.lrn_forward(x, **args)
        ctx.save_for_backward(x, y, scale)
        ctx.args = args
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, scale = ctx.saved_tensors
        return ctx.engine.lrn_backward(dy, x, y, scale, **ctx.args)


class BatchNormalization(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean=None, running_var=None, training=True,
                momentum=0.1, eps=1e-5):
        engine = ctx.engine = current_engine()
        if training:
            y, save_mean, save_invstd = engine.batch_norm_forward_training(
                x, weight, bias, running_mean, running_var, momentum=momentum, eps=eps)
        else:
            y = engine.batch_norm_forward_inference(x, weight, bias, running_mean, running_var,
                                                    eps=eps)
            # in evaluation the statistics are constants: x -> (x - mean) * invstd is affine
            save_mean = running_mean.astype(x.dtype, copy=True)
            save_invstd = (1.0 / np.sqrt(running_var.astype(x.dtype) + eps)).astype(x.dtype)
        ctx.save_for_backward(x, weight, save_mean, save_invstd)
        ctx.training = training
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, invstd = ctx.saved_tensors
        if ctx.training:
            dx, dweight, dbias = ctx.engine.batch_norm_backward(dy, x, weight, mean, invstd)
        else:
            # no primitive for the affine evaluation-mode gradient: it is three NumPy lines
            axes = (0, 2, 3)
            per_channel = (slice(None), None, None)
            xhat = (x - mean[per_channel]) * invstd[per_channel]
            scale = invstd if weight is None else invstd * weight
            dx = dy * scale[per_channel]
            dweight, dbias = (dy * xhat).sum(axes), dy.sum(axes)
        need_x, need_w, need_b = ctx.needs_input_grad
        return dx if need_x else None, dweight if need_w else None, dbias if need_b else None
