"""Embedding lookup: rows of a weight matrix picked by integer indices."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..ops import tensor_ops
from .elementwise import constant
from .shape import IndexScatter


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
            dw = tensor_ops.embedding_backward(flat, g, shape[0])  # native, in pick order
        else:
            dw = devices.zeros(shape, g.dtype, devices.of(g))
            devices.ufunc_at(np.add, dw, flat, g)  # a row picked k times gets k contributions
        if padding_idx is not None:
            dw[padding_idx] = 0
        return dw

    @staticmethod
    def backward_graph(ctx, g):
        indices = ctx.saved_tensors[0]._data
        shape, padding_idx, scale_grad_by_freq = ctx.args
        g = g.reshape(-1, shape[1])
        flat = indices.reshape(-1)
        if scale_grad_by_freq:
            counts = np.bincount(flat, minlength=shape[0])
            g = g / constant(counts[flat][:, None].astype(g.dtype))
        if padding_idx is not None:  # the padding row gets nothing: its picks count for zero
            g = g * constant((flat != padding_idx)[:, None].astype(g.dtype))
        return IndexScatter.apply(g, shape=shape, index=flat)


def _host(a):
    """A device array's values as a plain NumPy array (no copy on the CPU devices)."""
    return np.asarray(devices.to_device(a, devices.CPU))


class BagReduction(Function):
    """EmbeddingBag: each bag's looked-up rows of weight (times per_sample_weights, if given)
    reduced to one row by sum, mean or max. `indices` (host int64) holds the looked-up rows
    of every bag in order and `bags` the bag of each (non-decreasing); an empty bag gives a
    row of zeros, as in PyTorch. The rows are gathered on the weight's device; the per-bag
    reductions and the scatter of the weight's gradient run on the host (np.add.reduceat,
    and sums in index order), so the results are the same on every device and every run."""

    @staticmethod
    def forward(ctx, weight, per_sample_weights, *, indices, bags, n_bags, mode,
                scale_grad_by_freq=False):
        dev = devices.of(weight)
        rows = weight[devices.to_device(indices, dev)]
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[:, None]
        rows = _host(rows)
        out = np.zeros((n_bags, weight.shape[1]), weight.dtype)
        counts = np.bincount(bags, minlength=n_bags)
        first = None
        if bags.size:
            starts = np.flatnonzero(np.concatenate(([True], bags[1:] != bags[:-1])))
            filled = bags[starts]  # the bags holding at least one row
            if mode == "max":
                out[filled] = np.maximum.reduceat(rows, starts, axis=0)
                first = _first_maxima(rows, out, bags, starts)
            else:
                out[filled] = np.add.reduceat(rows, starts, axis=0)
                if mode == "mean":
                    out /= np.maximum(counts, 1).astype(out.dtype)[:, None]
        ctx.save_for_backward(weight if per_sample_weights is not None else None, per_sample_weights)
        ctx.args = indices, bags, counts, mode, first, tuple(weight.shape), scale_grad_by_freq
        return devices.to_device(out, dev)

    @staticmethod
    def backward(ctx, g):
        weight, per_sample_weights = ctx.saved_tensors
        indices, bags, counts, mode, first, shape, scale_grad_by_freq = ctx.args
        dev = devices.of(g)
        g = _host(g)
        if mode == "max":
            dw = np.zeros(shape, g.dtype)
            if first is not None:
                # each bag's maximum in column j came from row first[b, j] of the bags' rows
                b, j = np.nonzero(first >= 0)
                np.add.at(dw.reshape(-1), indices[first[b, j]] * shape[1] + j, g[b, j])
            return devices.to_device(dw, dev), None
        grows = g[bags]
        if mode == "mean":
            grows = grows / counts[bags].astype(g.dtype)[:, None]
        dpsw = None
        if per_sample_weights is not None:
            if ctx.needs_input_grad[1]:
                rows = _host(weight[devices.to_device(indices, dev)])
                dpsw = devices.to_device((grows * rows).sum(axis=1), dev)
            grows = grows * _host(per_sample_weights)[:, None]
        if scale_grad_by_freq and indices.size:
            grows = grows / np.bincount(indices, minlength=shape[0])[indices].astype(g.dtype)[:, None]
        return devices.to_device(tensor_ops.embedding_backward(indices, grows, shape[0]), dev), dpsw


def _first_maxima(rows, best, bags, starts):
    """(n_bags, d) int64: the position in `rows` of the first row of each bag holding the
    bag's maximum in each column (a NaN counts as the maximum, as maximum.reduceat
    propagates it), -1 for an empty bag."""
    at_max = (rows == best[bags]) | (np.isnan(rows) & np.isnan(best[bags]))
    k = rows.shape[0]
    first = np.full(best.shape, -1, np.int64)
    first[bags[starts]] = np.minimum.reduceat(np.where(at_max, np.arange(k)[:, None], k), starts, axis=0)
    return first
