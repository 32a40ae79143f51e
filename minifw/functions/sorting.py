"""Sorting along a dim: sort and topk (values, and the indices they came from) and the
order argsort returns."""
import numpy as np

from .. import devices
from ..autograd import Function
from .indexing import along
from .shape import IndexScatter


def sort_order(a, dim, descending=False):
    """The indices that sort `a` along `dim`, stably (equal elements keep their order). NaN
    comes last in ascending order and first in descending order: PyTorch ranks NaN above
    every number."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    # descending = ascending of a decreasing key: -x for floats, ~x (= -x - 1, no overflow
    # at the smallest int) for ints, logical not for bools
    floats = a.dtype.kind == "f"
    order = np.argsort(-a if floats else ~a, axis=dim, kind="stable")
    if floats and bool(np.isnan(a).any()):
        # -NaN is NaN, which sorts last: move the NaNs to the front, keeping their order
        is_number = ~np.isnan(np.take_along_axis(a, order, axis=dim))
        order = np.take_along_axis(order, np.argsort(is_number, axis=dim, kind="stable"), axis=dim)
    return order


class Sort(Function):
    """(values, indices) of `a` sorted along `dim`; with k, the first k only (topk)."""

    @staticmethod
    def forward(ctx, a, *, dim, descending=False, k=None):
        order = sort_order(a, dim, descending)
        if k is not None:
            order = order[(slice(None),) * dim + (slice(0, k),)]
        order = order.astype(np.int64, copy=False)
        ctx.save_for_backward(order)
        ctx.args = a.shape, dim
        return np.take_along_axis(a, order, axis=dim), order

    @staticmethod
    def backward(ctx, g, g_indices):
        order, = ctx.saved_tensors
        shape, dim = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        dx[along(order, dim)] = g  # each element lands in one place: no accumulation
        return dx

    @staticmethod
    def backward_graph(ctx, g, g_indices):
        order, = ctx.saved_tensors
        shape, dim = ctx.args
        return IndexScatter.apply(g, shape=shape, index=along(order._data, dim))
