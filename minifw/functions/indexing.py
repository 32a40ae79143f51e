"""Indexing along a dim with integer index tensors: gather, scatter (and scatter_add),
index_select, index_fill, index_add, scatter_reduce, and assignment into a tensor (x[index] = value) as autograd
records it. Index arrays arrive on the data's device (Tensor methods check that); the
position arrays made here on the host are moved there before a scatter."""
import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import masked, unbroadcast
from .shape import Index, IndexScatter


def along(index, dim):
    """The advanced index that picks, for every position of `index` (an integer array on the
    data's device), the element that `index` names along `dim` and the same position along
    every other dim: a[along(index, dim)] is torch.gather(a, dim, index)."""
    dev = devices.of(index)
    items = []
    for d, n in enumerate(index.shape):
        if d == dim:
            items.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            items.append(devices.to_device(np.arange(n).reshape(shape), dev))
    return tuple(items)


def _leading(index, dim):
    """The index that selects `index` (a 1-D integer array) along `dim`."""
    return (slice(None),) * dim + (index,)


def _picking(name, where, doc):
    """A Function that takes a[where(index, dim)]; its backward adds g back at those places
    (an element picked twice gets both gradients)."""
    def forward(ctx, a, index, *, dim):
        ctx.save_for_backward(index)
        ctx.args = a.shape, dim
        return a[where(index, dim)]

    def backward(ctx, g):
        index, = ctx.saved_tensors
        shape, dim = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        devices.ufunc_at(np.add, dx, where(index, dim), g)
        return dx, None

    def backward_graph(ctx, g):
        index, = ctx.saved_tensors
        shape, dim = ctx.args
        return IndexScatter.apply(g, shape=shape, index=where(index._data, dim)), None

    return type(name, (Function,), {"__doc__": doc, "__module__": __name__, "forward": staticmethod(forward),
                                    "backward": staticmethod(backward),
                                    "backward_graph": staticmethod(backward_graph)})


Gather = _picking("Gather", along, "a's elements at index along dim (torch.gather).")
IndexSelect = _picking("IndexSelect", _leading, "a's slices along dim that index names (torch.index_select).")


class Scatter(Function):
    """a with src's values (src cut to index's shape) or one value written at the places
    along(index, dim) names; accumulate=True adds them instead (scatter_add). In place
    (into a's own array) for scatter_ and scatter_add_."""

    @staticmethod
    def forward(ctx, a, index, src, *, dim, accumulate=False, inplace=False):
        where = along(index, dim)
        out = a if inplace else a.copy()
        values = src[tuple(slice(0, n) for n in index.shape)] if np.ndim(src) else src
        if accumulate:
            devices.ufunc_at(np.add, out, where, values)
        else:
            out[where] = values  # of repeated places one value wins, as PyTorch leaves it open
        ctx.save_for_backward(index)
        ctx.args = dim, np.shape(src), accumulate
        return out

    @staticmethod
    def backward(ctx, g):
        index, = ctx.saved_tensors
        dim, src_shape, accumulate = ctx.args
        where = along(index, dim)
        ga = gsrc = None
        if ctx.needs_input_grad[0]:
            ga = g if accumulate else g.copy()
            if not accumulate:
                ga[where] = 0  # overwritten values had no say in the result
        if ctx.needs_input_grad[2]:
            gsrc = devices.zeros(src_shape, g.dtype, devices.of(g))
            gsrc[tuple(slice(0, n) for n in index.shape)] = g[where]
        return ga, None, gsrc

    @staticmethod
    def backward_graph(ctx, g):
        index = ctx.saved_tensors[0]._data
        dim, src_shape, accumulate = ctx.args
        where = along(index, dim)
        ga = gsrc = None
        if ctx.needs_input_grad[0]:
            ga = g if accumulate else masked(~_places(g, where), g)
        if ctx.needs_input_grad[2]:
            gsrc = IndexScatter.apply(Index.apply(g, index=where), shape=src_shape,
                                      index=tuple(slice(0, n) for n in index.shape))
        return ga, None, gsrc


def _places(g, index):
    """A bool array of g's shape, True at the places `index` names (on g's device)."""
    written = devices.zeros(g.shape, bool, devices.of(g._data))
    written[index] = True
    return written


class IndexFill(Function):
    """a with every slice along `dim` that `index` names set to `value` (a number or a 0-d
    array); in place for index_fill_."""

    @staticmethod
    def forward(ctx, a, index, value, *, dim, inplace=False):
        out = a if inplace else a.copy()
        out[_leading(index, dim)] = value
        ctx.save_for_backward(index)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        index, = ctx.saved_tensors
        where = _leading(index, ctx.dim)
        ga = gvalue = None
        if ctx.needs_input_grad[0]:
            ga = g.copy()
            ga[where] = 0
        if ctx.needs_input_grad[2]:
            gvalue = g[where].sum()  # as PyTorch: the filled slices, as index_select picks them
        return ga, None, gvalue

    @staticmethod
    def backward_graph(ctx, g):
        where = _leading(ctx.saved_tensors[0]._data, ctx.dim)
        ga = masked(~_places(g, where), g) if ctx.needs_input_grad[0] else None
        gvalue = Index.apply(g, index=where).sum() if ctx.needs_input_grad[2] else None
        return ga, None, gvalue


class IndexAdd(Function):
    """a with alpha * src's slices added to the slices along `dim` that `index` names (an
    index named twice gets both), as torch.index_add; in place for index_add_."""

    @staticmethod
    def forward(ctx, a, index, src, *, dim, alpha=1, inplace=False):
        out = a if inplace else a.copy()
        devices.ufunc_at(np.add, out, _leading(index, dim), src if alpha == 1 else src * alpha)
        ctx.save_for_backward(index)
        ctx.args = dim, alpha
        return out

    @staticmethod
    def backward(ctx, g):
        index, = ctx.saved_tensors
        dim, alpha = ctx.args
        gsrc = None
        if ctx.needs_input_grad[2]:
            gsrc = np.take(g, index, axis=dim)
            gsrc = gsrc if alpha == 1 else gsrc * alpha
        return g if ctx.needs_input_grad[0] else None, None, gsrc

    @staticmethod
    def backward_graph(ctx, g):
        dim, alpha = ctx.args
        gsrc = None
        if ctx.needs_input_grad[2]:
            gsrc = Index.apply(g, index=_leading(ctx.saved_tensors[0]._data, dim))
            gsrc = gsrc if alpha == 1 else gsrc * alpha
        return g if ctx.needs_input_grad[0] else None, None, gsrc


class IndexPut(Function):
    """a[index] = value (broadcast), written into a's own array: Tensor.__setitem__ when
    autograd records it. `index` is NumPy's (ints, slices, arrays on a's device)."""

    @staticmethod
    def forward(ctx, a, value, *, index):
        a[index] = value
        ctx.args = index, np.shape(value)
        return a

    @staticmethod
    def backward(ctx, g):
        index, value_shape = ctx.args
        ga = gvalue = None
        if ctx.needs_input_grad[0]:
            ga = g.copy()
            ga[index] = 0
        if ctx.needs_input_grad[1]:
            picked = g[index]
            if picked.ndim < len(value_shape):  # NumPy lets a value carry extra leading 1s
                picked = picked.reshape((1,) * (len(value_shape) - picked.ndim) + picked.shape)
            gvalue = unbroadcast(picked, value_shape)
        return ga, gvalue

    @staticmethod
    def backward_graph(ctx, g):
        index, value_shape = ctx.args
        ga = gvalue = None
        if ctx.needs_input_grad[0]:
            ga = masked(~_places(g, index), g)
        if ctx.needs_input_grad[1]:
            picked = Index.apply(g, index=index)
            if picked.ndim < len(value_shape):
                picked = picked.reshape((1,) * (len(value_shape) - picked.ndim) + picked.shape)
            gvalue = unbroadcast(picked, value_shape)
        return ga, gvalue


_REDUCERS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
             "amin": np.minimum}


class ScatterReduce(Function):
    """a with src's elements (src cut to index's shape) combined into the places along(index,
    dim) names by `reduce` ('sum', 'prod', 'mean', 'amax', 'amin'), a's own value taking part
    where include_self (else a place that gets any src element forgets a's), as
    torch.scatter_reduce. Computed on the host (ufunc.at); the
    gradients are PyTorch's: 'amax'/'amin' share g evenly between the contributions equal to
    the result, 'prod' gives each the product of the others (exact where some are zero).
    scatter_reduce_ writes the result back (Tensor._apply_inplace)."""

    @staticmethod
    def forward(ctx, a, index, src, *, dim, reduce, include_self=True):
        dev = devices.of(a)
        x, idx = devices.to_device(a, devices.CPU), devices.to_device(index, devices.CPU)
        values = devices.to_device(src, devices.CPU)[tuple(slice(0, n) for n in index.shape)]
        where = along(idx, dim)
        hit = np.zeros(x.shape, bool)
        hit[where] = True
        out = x.copy()
        if not include_self:  # the identity of the reduction where src arrives
            identity = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
            if identity is None:
                identity = -np.inf if reduce == "amax" else np.inf
                if x.dtype.kind != "f":
                    info = np.iinfo(x.dtype) if x.dtype.kind in "iu" else None
                    identity = (info.min if reduce == "amax" else info.max) if info else \
                        reduce == "amin"
            out[hit] = identity
        _REDUCERS[reduce].at(out, where, values)
        count = None
        if reduce == "mean":
            count = np.zeros(x.shape, np.int64) + (1 if include_self else 0)
            np.add.at(count, where, 1)
            count = np.maximum(count, 1)
            out = out / count if x.dtype.kind == "f" else out // count  # integers: floor, as PyTorch
            out = out.astype(x.dtype, copy=False)
        ctx.save_for_backward(a, index, src, devices.to_device(out, dev))
        ctx.args = dim, reduce, include_self, hit, count
        return devices.to_device(out, dev)

    @staticmethod
    def backward(ctx, g):
        a, index, src, out = ctx.saved_tensors
        dim, reduce, include_self, hit, count = ctx.args
        dev = devices.of(g)
        gh, x, y = (devices.to_device(v, devices.CPU) for v in (g, a, out))
        idx = devices.to_device(index, devices.CPU)
        values = devices.to_device(src, devices.CPU)[tuple(slice(0, n) for n in idx.shape)]
        where = along(idx, dim)
        self_takes_part = np.ones(x.shape, bool) if include_self else ~hit
        if reduce in ("sum", "mean"):
            per = gh / count if reduce == "mean" else gh
            ga, gsrc = per * self_takes_part, per[where]
        elif reduce in ("amax", "amin"):
            ties = (x == y) & self_takes_part
            n = ties.astype(gh.dtype)
            np.add.at(n, where, values == y[where])
            share = gh / np.maximum(n, 1)
            ga, gsrc = share * ties, share[where] * (values == y[where])
        else:  # prod: the product of the other contributions, from counts of zeros
            zero_count = ((x == 0) & self_takes_part).astype(np.int64)
            np.add.at(zero_count, where, values == 0)
            nonzero_product = np.where(self_takes_part & (x != 0), x, 1).astype(gh.dtype)
            np.multiply.at(nonzero_product, where, np.where(values == 0, 1, values))

            def others(v, zeros, product):
                with np.errstate(divide="ignore", invalid="ignore"):
                    return np.where(v == 0, np.where(zeros == 1, product, 0),
                                    np.where(zeros == 0, product / np.where(v == 0, 1, v), 0))
            ga = gh * others(x, zero_count, nonzero_product) * self_takes_part
            gsrc = gh[where] * others(values, zero_count[where], nonzero_product[where])
        grad_src = None
        if ctx.needs_input_grad[2]:
            full = np.zeros(np.shape(src), gh.dtype)
            full[tuple(slice(0, n) for n in idx.shape)] = gsrc
            grad_src = devices.to_device(full, dev)
        grad_a = devices.to_device(ga.astype(gh.dtype, copy=False), dev) if ctx.needs_input_grad[0] \
            else None
        return grad_a, None, grad_src
