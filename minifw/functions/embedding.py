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
        if type(g) is np.ndarray:
            dw = _rows_summed_by_index(g, flat, shape)
        else:
            dw = devices.zeros(shape, g.dtype, devices.of(g))
            if devices.of(dw).type == "cuda":  # CuPy's add.at adds with atomicAdd: order varies
                backends.alert_not_deterministic("EmbeddingLookup.backward on 'cuda'")
            np.add.at(dw, flat, g)  # a row picked k times gets k contributions
        if padding_idx is not None:
            dw[padding_idx] = 0
        return dw


def _rows_summed_by_index(g, flat, shape):
    """dw with dw[i] = the sum of the rows of g whose index in `flat` is i, each index's rows
    added in the order they occur, as np.add.at adds them: one stable sort of the indices,
    then np.add.reduceat over the runs of equal ones. np.add.at's per-row loop took 2.2 ms
    for a char-LSTM's 2048 x 128 gradient, this 0.35 ms."""
    dw = np.zeros(shape, g.dtype)
    if flat.size == 0:
        return dw
    order = np.argsort(flat, kind="stable")
    picked = flat[order]
    starts = np.flatnonzero(np.concatenate(([True], picked[1:] != picked[:-1])))
    dw[picked[starts]] = np.add.reduceat(g[order], starts, axis=0)
    return dw
