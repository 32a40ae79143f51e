"""Reductions: sum, mean, product, max/min over all elements or along dims; cumulative sums."""
import numpy as np

from .. import devices
from ..autograd import Function
from .indexing import along


def _expand_reduced(g, in_shape, axes, keepdim):
    """Broadcast the gradient of a reduction over `axes` back to the input shape."""
    if not keepdim and axes is not None:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, in_shape, subok=True)  # subok: stay a CudaSimArray


class Sum(Function):
    @staticmethod
    def forward(ctx, a, *, axes=None, keepdim=False):
        ctx.args = a.shape, axes, keepdim
        return np.sum(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        return _expand_reduced(g, *ctx.args)


class Mean(Function):
    @staticmethod
    def forward(ctx, a, *, axes=None, keepdim=False):
        out = np.mean(a, axis=axes, keepdims=keepdim)
        ctx.args = a.shape, axes, keepdim
        ctx.count = a.size // out.size if out.size else 1  # elements averaged into each output
        return out

    @staticmethod
    def backward(ctx, g):
        return _expand_reduced(g / ctx.count, *ctx.args)


class Product(Function):
    """The product along one axis. Its gradient is the product of the other elements, from
    running products from both ends, so it is exact where elements are zero (no division)."""

    @staticmethod
    def forward(ctx, a, *, axis, keepdim=False):
        ctx.save_for_backward(a)
        ctx.args = axis, keepdim
        return np.prod(a, axis=axis, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        axis, keepdim = ctx.args
        x = np.moveaxis(a, axis, -1)
        ones = np.ones_like(x[..., :1])
        left = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
        right = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        others = np.moveaxis(left * right, -1, axis)
        return _expand_reduced(g, a.shape, (axis,), keepdim) * others


class Amax(Function):
    """max (or min) over all elements or over axes; ties share the gradient evenly."""

    @staticmethod
    def forward(ctx, a, *, axes=None, keepdim=False, smallest=False):
        out = (np.amin if smallest else np.amax)(a, axis=axes, keepdims=keepdim)
        ctx.save_for_backward(a, out)
        ctx.args = a.shape, axes, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        hit = a == _expand_reduced(out, *ctx.args)
        count = np.sum(hit, axis=ctx.args[1], keepdims=True).astype(g.dtype)
        return _expand_reduced(g, *ctx.args) * hit / count


class MaxDim(Function):
    """(values, indices) of the max (or min) along one dim, as torch.max(x, dim)."""

    @staticmethod
    def forward(ctx, a, *, dim, keepdim=False, smallest=False):
        idx = (np.argmin if smallest else np.argmax)(a, axis=dim, keepdims=True)
        values = np.take_along_axis(a, idx, axis=dim)
        ctx.save_for_backward(idx)
        ctx.args = a.shape, dim, keepdim
        if not keepdim:
            values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
        return values, idx.astype(np.int64)

    @staticmethod
    def backward(ctx, g, g_indices):
        idx, = ctx.saved_tensors
        shape, dim, keepdim = ctx.args
        if not keepdim:
            g = np.expand_dims(g, dim)
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        dx[along(idx, dim)] = g  # one index per row: an assignment, no accumulation
        return dx


class CumulativeSum(Function):
    """Running sums along one dim; the gradient is the running sum from the other end."""

    @staticmethod
    def forward(ctx, a, *, dim):
        ctx.dim = dim
        return np.cumsum(a, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return np.flip(np.cumsum(np.flip(g, ctx.dim), axis=ctx.dim), ctx.dim)
