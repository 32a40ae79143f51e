"""Shape changes and indexing: reshape, permute, expand, index, cat, stack, pad."""
import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import unbroadcast


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, *, shape):
        ctx.shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


class Permute(Function):
    @staticmethod
    def forward(ctx, a, *, dims):
        ctx.dims = dims
        return np.transpose(a, dims)

    @staticmethod
    def backward(ctx, g):
        return np.transpose(g, tuple(int(d) for d in np.argsort(ctx.dims)))


class Expand(Function):
    @staticmethod
    def forward(ctx, a, *, shape):
        ctx.shape = a.shape
        return np.broadcast_to(a, shape, subok=True)  # a view, on a's device

    @staticmethod
    def backward(ctx, g):
        return unbroadcast(g, ctx.shape)


def _is_basic_index(index):
    """True when `index` only slices (ints, slices, None, Ellipsis): every element
    is picked at most once, so the backward can assign instead of scatter-add."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


def _index_on(index, dev):
    """`index` with its arrays on `dev`: a scatter on a GPU takes indices in its memory."""
    def move(i):
        return devices.to_device(i, dev) if devices.is_array(i) else i
    return tuple(map(move, index)) if isinstance(index, tuple) else move(index)


class Index(Function):
    @staticmethod
    def forward(ctx, a, *, index):
        ctx.args = a.shape, index
        return a[index]

    @staticmethod
    def backward(ctx, g):
        shape, index = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        if _is_basic_index(index):
            dx[index] = g
        else:
            np.add.at(dx, _index_on(index, devices.of(g)), g)  # an element may be picked several times
        return dx


class Cat(Function):
    @staticmethod
    def forward(ctx, *arrays, dim=0):
        ctx.dim = dim
        ctx.splits = np.cumsum([a.shape[dim] for a in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.split(g, ctx.splits, axis=ctx.dim))


class Stack(Function):
    @staticmethod
    def forward(ctx, *arrays, dim=0):
        ctx.dim = dim
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.moveaxis(g, ctx.dim, 0))


class Padding(Function):
    """Pad (or crop, with negative amounts) trailing dims. Each padded axis is a gather
    from the input axis: `sources[i]` is the input index feeding output i (-1: the fill value)."""

    @staticmethod
    def forward(ctx, x, *, sources, value=0.0):
        out = x
        sources = [(axis, devices.to_device(src, devices.of(x))) for axis, src in sources]
        for axis, src in sources:
            out = np.take(out, np.maximum(src, 0), axis=axis)
            if (src < 0).any():
                where = [slice(None)] * out.ndim
                where[axis] = src < 0
                out[tuple(where)] = value
        ctx.args = x.shape, sources
        return out

    @staticmethod
    def backward(ctx, g):
        shape, sources = ctx.args
        sizes = list(shape)
        intermediate = []  # the shape before each gather
        for axis, src in sources:
            intermediate.append(tuple(sizes))
            sizes[axis] = len(src)
        for (axis, src), before in reversed(list(zip(sources, intermediate))):
            keep = src >= 0
            dx = devices.zeros(before, g.dtype, devices.of(g))
            np.add.at(dx, (slice(None),) * axis + (src[keep],), np.compress(keep, g, axis=axis))
            g = dx
        return g
