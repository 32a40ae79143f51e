"""Pairwise distances between two sets of row vectors (torch.cdist), from the differences
of every pair: exact where the ||a||^2 - 2ab + ||b||^2 expansion would cancel, at the cost
of a (..., P, R, M) intermediate."""
import math

import numpy as np

from ..autograd import Function
from .elementwise import constant, masked, unbroadcast


def _norms(diff, p):
    """The p-norm of `diff` along its last axis (p = 0 counts the non-zero elements)."""
    a = np.abs(diff)
    if p == 0:
        return np.sum(diff != 0, axis=-1).astype(diff.dtype)
    if p == 1:
        return np.sum(a, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(diff * diff, axis=-1))
    if math.isinf(p):
        return np.max(a, axis=-1) if a.shape[-1] else np.sum(a, axis=-1)  # no elements: 0
    return np.sum(a ** p, axis=-1) ** (1.0 / p)


def _derivative(diff, dist, p):
    """d dist / d diff, as PyTorch's cdist backward defines it: zero where the distance is
    zero, and for p < 1 also where an element of the difference is."""
    d = dist[..., None]
    if p == 0:
        return np.zeros_like(diff)
    if p == 1:
        return np.sign(diff)
    if math.isinf(p):  # every element at the maximum gets all of it, as PyTorch's
        return np.sign(diff) * (np.abs(diff) == d)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2:
            out = diff / d
        else:
            out = np.sign(diff) * np.abs(diff) ** (p - 1) / d ** (p - 1)
            if p < 1:
                out = np.where(diff == 0, 0, out)
    return np.where(d == 0, 0, out).astype(diff.dtype, copy=False)


class PairwiseDistance(Function):
    """out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, the batch dims broadcast."""

    @staticmethod
    def forward(ctx, x1, x2, *, p):
        diff = x1[..., :, None, :] - x2[..., None, :, :]
        out = _norms(diff, p)
        ctx.save_for_backward(diff, out, x1, x2)  # x1, x2: for second derivatives only
        ctx.args = p, x1.shape, x2.shape
        return out

    @staticmethod
    def backward(ctx, g):
        diff, dist = ctx.saved_tensors[:2]
        p, shape1, shape2 = ctx.args
        step = g[..., None] * _derivative(diff, dist, p)
        g1 = unbroadcast(np.sum(step, axis=-2), shape1) if ctx.needs_input_grad[0] else None
        g2 = unbroadcast(-np.sum(step, axis=-3), shape2) if ctx.needs_input_grad[1] else None
        return g1, g2

    @staticmethod
    def graph_supports(ctx):
        p = ctx.args[0]
        return p in (0.0, 1.0, 2.0) or math.isinf(p)

    @staticmethod
    def backward_graph(ctx, g):
        # p = 0, 1, inf: the derivative is piecewise constant; p = 2: diff / dist, both
        # recomputed from x1 and x2 (dist masked to 1 where it is 0, where the gradient is 0)
        diff, dist, x1, x2 = ctx.saved_tensors
        p, shape1, shape2 = ctx.args
        if p == 2.0:
            nonzero = dist._data[..., None] != 0
            d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
            length = masked(nonzero, (d * d).sum(-1, keepdim=True)) + constant((~nonzero).astype(d.dtype))
            step = masked(nonzero, g.unsqueeze(-1) * d / length.sqrt())
        else:
            step = g.unsqueeze(-1) * constant(_derivative(diff._data, dist._data, p))
        g1 = unbroadcast(step.sum(-2), shape1) if ctx.needs_input_grad[0] else None
        g2 = unbroadcast(-step.sum(-3), shape2) if ctx.needs_input_grad[1] else None
        return g1, g2
