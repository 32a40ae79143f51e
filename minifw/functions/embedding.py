"""Embedding lookup: rows of a weight matrix picked by integer indices."""
import numpy as np

from .. import backends, devices
from ..autograd import Function


class EmbeddingLookup(Function):
    @staticmethod
    def forward(ctx, weight, *, indices, padding_idx=None, scale_grad_by_freq=False):
        ctx.save_for_backward(indices)
        ctx.args = weight.shape, padding_idx, scale_grad_by_freq
        return weight[indices]

    @staticmethod
    def backward(ctx, g):
        indices, = ctx.saved_tensors
        shape, padding_idx, scale_grad_by_freq = ctx.args
        g = g.reshape(-1, shape[1])
        flat = indices.reshape(-1)
        if scale_grad_by_freq:
            counts = np.bincount(flat, minlength=shape[0])
            g = g / counts[flat][:, None].astype(g.dtype)
        dw = devices.zeros(shape, g.dtype, devices.of(g))
        if devices.of(dw).type == "cuda":  # CuPy's add.at adds with atomicAdd: order varies
            backends.alert_not_deterministic("EmbeddingLookup.backward on 'cuda'")
        np.add.at(dw, flat, g)  # a row picked k times gets k contributions
        if padding_idx is not None:
            dw[padding_idx] = 0
        return dw
