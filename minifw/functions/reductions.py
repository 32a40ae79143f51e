"""Reductions: sum, mean, product, max/min, median and k-th value over all elements or along
dims; cumulative sums, products, max/min and log-sum-exp."""
import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import constant
from .indexing import along
from .shape import IndexScatter, Stack
from .sorting import sort_order


def _expand_reduced(g, in_shape, axes, keepdim):
    """Broadcast the gradient of a reduction over `axes` back to the input shape."""
    if not keepdim and axes is not None:
        g = np.expand_dims(g, axes)
    return devices.broadcast_to(g, in_shape)


def _expand_reduced_graph(g, in_shape, axes, keepdim):
    """_expand_reduced on a Tensor, recorded (create_graph=True)."""
    if not keepdim and axes is not None:
        kept = list(in_shape)
        for axis in (axes if isinstance(axes, tuple) else (axes,)):
            kept[axis] = 1
        g = g.reshape(kept)
    return g.expand(*in_shape)


class Sum(Function):
    @staticmethod
    def forward(ctx, a, *, axes=None, keepdim=False):
        ctx.args = a.shape, axes, keepdim
        return np.sum(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        return _expand_reduced(g, *ctx.args)

    @staticmethod
    def backward_graph(ctx, g):
        return _expand_reduced_graph(g, *ctx.args)


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

    @staticmethod
    def backward_graph(ctx, g):
        return _expand_reduced_graph(g / ctx.count, *ctx.args)


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

    @staticmethod
    def backward_graph(ctx, g):
        # the same products of the other elements, from running products built one step at a
        # time in recorded multiplications (n steps each way along the axis)
        a, = ctx.saved_tensors
        axis, keepdim = ctx.args
        x = a.movedim(axis, -1)
        n = x.shape[-1]
        left, right = [None] * n, [None] * n
        for k in range(1, n):
            left[k] = x[..., 0] if k == 1 else left[k - 1] * x[..., k - 1]
            j = n - 1 - k
            right[j] = x[..., n - 1] if k == 1 else right[j + 1] * x[..., j + 1]
        ones = constant(np.ones(x.shape[:-1], x.dtype)) if n == 1 else None
        terms = [ones if n == 1 else right[0] if k == 0 else left[k] if k == n - 1
                 else left[k] * right[k] for k in range(n)]
        others = Stack.apply(*terms, dim=x.ndim - 1).movedim(-1, axis)
        return _expand_reduced_graph(g, a.shape, (axis,), keepdim) * others


class Amax(Function):
    """max (or min) over all elements or over axes; ties share the gradient evenly."""

    @staticmethod
    def forward(ctx, a, *, axes=None, keepdim=False, smallest=False):
        out = (np.amin if smallest else np.amax)(a, axis=axes, keepdims=keepdim)
        ctx.save_for_backward(a, out)
        ctx.args = a.shape, axes, keepdim
        ctx.smallest = smallest  # names the node (min or max)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        hit = a == _expand_reduced(out, *ctx.args)
        count = np.sum(hit, axis=ctx.args[1], keepdims=True).astype(g.dtype)
        return _expand_reduced(g, *ctx.args) * hit / count

    @staticmethod
    def backward_graph(ctx, g):
        # which elements tie: piecewise constant (out of a whole reduction is a NumPy scalar)
        a, out = (getattr(t, "_data", t) for t in ctx.saved_tensors)
        hit = a == _expand_reduced(out, *ctx.args)
        share = hit / np.sum(hit, axis=ctx.args[1], keepdims=True).astype(g.dtype)
        return _expand_reduced_graph(g, *ctx.args) * constant(share.astype(g.dtype, copy=False))


class _SelectedGradient:
    """The gradient of (values, indices) that pick one element per row along a dim (max(dim),
    median(dim), kthvalue): g at the picked places, zero elsewhere. The Functions save the
    kept-dim indices and ctx.args = (input shape, dim, keepdim), as _selected does."""

    @staticmethod
    def backward(ctx, g, g_indices):
        idx, = ctx.saved_tensors
        return _to_selected(g, idx, *ctx.args)

    @staticmethod
    def backward_graph(ctx, g, g_indices):
        idx, = ctx.saved_tensors
        return _to_selected_graph(g, idx._data, *ctx.args)


class MaxDim(_SelectedGradient, Function):
    """(values, indices) of the max (or min) along one dim, as torch.max(x, dim)."""

    @staticmethod
    def forward(ctx, a, *, dim, keepdim=False, smallest=False):
        ctx.smallest = smallest  # names the node (min or max)
        idx = (np.argmin if smallest else np.argmax)(a, axis=dim, keepdims=True)
        return _selected(ctx, a, idx.astype(np.int64, copy=False), dim, keepdim)


def _to_selected_graph(g, idx, shape, dim, keepdim):
    """_to_selected on a Tensor, recorded (create_graph=True)."""
    return IndexScatter.apply(g if keepdim else g.unsqueeze(dim), shape=shape, index=along(idx, dim))


def _to_selected(g, idx, shape, dim, keepdim):
    """The gradient of values picked one per row along `dim` (max(dim), median(dim)): g at
    the picked places (idx, kept dims), zero elsewhere."""
    if not keepdim:
        g = np.expand_dims(g, dim)
    dx = devices.zeros(shape, g.dtype, devices.of(g))
    dx[along(idx, dim)] = g  # one index per row: an assignment, no accumulation
    return dx


def median_index(a, dim, ignore_nan=False):
    """The index along `dim` (kept, size 1) of each row's lower median, as PyTorch's: the
    ((n - 1) // 2)-th in a stable sort, NaN sorting last; a row with a NaN gives its first
    NaN, unless ignore_nan (nanmedian), which takes the median of the other elements (an
    all-NaN row: its first element)."""
    order = sort_order(a, dim)
    n = a.shape[dim]
    if a.dtype.kind == "f":
        nans = np.sum(np.isnan(a), axis=dim, keepdims=True)
        k = np.maximum(n - nans - 1, 0) // 2 if ignore_nan else \
            np.where(nans > 0, n - nans, (n - 1) // 2)
    else:
        k = devices.zeros(order.shape[:dim] + (1,) + order.shape[dim + 1:], np.int64, devices.of(a))
        k += (n - 1) // 2
    return np.take_along_axis(order, k.astype(np.int64, copy=False), axis=dim).astype(np.int64)


class MedianDim(_SelectedGradient, Function):
    """(values, indices) of the lower median along one dim, as torch.median(x, dim) (or
    nanmedian); the gradient goes to the element picked."""

    @staticmethod
    def forward(ctx, a, *, dim, keepdim=False, ignore_nan=False):
        idx = median_index(a, dim, ignore_nan)
        return _selected(ctx, a, idx, dim, keepdim)


class Median(Function):
    """The lower median of all elements (torch.median(x), or nanmedian); as PyTorch's, its
    gradient is shared evenly by every element equal to it (every NaN, when it is NaN)."""

    @staticmethod
    def forward(ctx, a, *, ignore_nan=False):
        flat = a.reshape(-1)
        out = flat[median_index(flat, 0, ignore_nan)].reshape(())
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        hit = np.isnan(a) if bool(np.isnan(out)) else a == out
        return g * hit / np.sum(hit).astype(g.dtype)

    @staticmethod
    def backward_graph(ctx, g):
        a, out = (getattr(t, "_data", t) for t in ctx.saved_tensors)  # which elements: constant
        hit = np.isnan(a) if bool(np.isnan(out)) else a == out
        return g * constant((hit / np.sum(hit)).astype(g.dtype))


class CumulativeSum(Function):
    """Running sums along one dim; the gradient is the running sum from the other end."""

    @staticmethod
    def forward(ctx, a, *, dim):
        ctx.dim = dim
        return np.cumsum(a, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return np.flip(np.cumsum(np.flip(g, ctx.dim), axis=ctx.dim), ctx.dim)

    @staticmethod
    def backward_graph(ctx, g):
        return g.flip((ctx.dim,)).cumsum(ctx.dim).flip((ctx.dim,))


def _reverse_cumsum(g, dim):
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)


class CumulativeProduct(Function):
    """Running products along one dim. The gradient of element k is the sum over j >= k of
    g_j times the product of x_0..x_j without x_k: out_j / x_k before a row's first zero, a
    running product that skips that zero at it, and zero after it (no division by zero)."""

    @staticmethod
    def forward(ctx, a, *, dim):
        out = np.cumprod(a, axis=dim)
        ctx.save_for_backward(a, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        dim = ctx.dim
        zeros_so_far = np.cumsum(a == 0, axis=dim)
        before = zeros_so_far == 0
        first_zero = (a == 0) & (zeros_so_far == 1)
        one = a.dtype.type(1)
        skipping = np.cumprod(np.where(first_zero, one, a), axis=dim)
        with np.errstate(divide="ignore", invalid="ignore"):
            early = _reverse_cumsum(g * out, dim) / np.where(before, a, one)
        at_zero = _reverse_cumsum(g * skipping, dim)
        zero = a.dtype.type(0)
        return np.where(before, early, zero) + np.where(first_zero, at_zero, zero)


class CumulativeExtreme(Function):
    """(values, indices) of the running max (or min) along one dim, as torch.cummax: an
    element equal to the running extreme takes its index (the last of ties), and NaN, once
    met, stays. Computed on the host (ufunc accumulation); the gradient goes to the element
    each value came from."""

    @staticmethod
    def forward(ctx, a, *, dim, smallest=False):
        ctx.smallest = smallest  # names the node (cummin or cummax)
        dev = devices.of(a)
        x = devices.to_device(a, devices.CPU)
        values = (np.minimum if smallest else np.maximum).accumulate(x, axis=dim)
        hit = (x == values) | (np.isnan(x) if x.dtype.kind == "f" else False)
        position = np.arange(x.shape[dim]).reshape((-1,) + (1,) * (x.ndim - dim - 1))
        indices = np.maximum.accumulate(np.where(hit, position, 0), axis=dim).astype(np.int64)
        indices = devices.to_device(indices, dev)
        ctx.save_for_backward(indices)
        ctx.args = a.shape, dim
        return devices.to_device(values, dev), indices

    @staticmethod
    def backward(ctx, g, g_indices):
        indices, = ctx.saved_tensors
        shape, dim = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        devices.ufunc_at(np.add, dx, along(indices, dim), g)  # an element may stay the extreme for many steps
        return dx

    @staticmethod
    def backward_graph(ctx, g, g_indices):
        shape, dim = ctx.args
        return IndexScatter.apply(g, shape=shape, index=along(ctx.saved_tensors[0]._data, dim))


class LogCumulativeSumExp(Function):
    """log(cumsum(exp(x))) along one dim, accumulated pairwise with logaddexp (on the host) so
    that no element under- or overflows. The gradient, sum over j >= k of g_j exp(x_k - out_j),
    is taken in log space too, for the positive and the negative parts of g."""

    @staticmethod
    def forward(ctx, a, *, dim):
        dev = devices.of(a)
        out = devices.to_device(np.logaddexp.accumulate(devices.to_device(a, devices.CPU), axis=dim),
                                dev)
        ctx.save_for_backward(a, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        dim, dev = ctx.dim, devices.of(g)
        x, y, gh = (devices.to_device(v, devices.CPU) for v in (a, out, g))

        def part(weights):
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.log(weights) - y
                reverse = np.flip(np.logaddexp.accumulate(np.flip(logs, dim), axis=dim), dim)
                return np.exp(reverse + x)
        zero = gh.dtype.type(0)
        return devices.to_device(part(np.maximum(gh, zero)) - part(np.maximum(-gh, zero)), dev)


def _selected(ctx, a, idx, dim, keepdim):
    """(values, indices) of the elements idx (keepdim-shaped) picks along dim, saved for
    _to_selected's backward."""
    values = np.take_along_axis(a, idx, axis=dim)
    ctx.save_for_backward(idx)
    ctx.args = a.shape, dim, keepdim
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx


class KthValue(_SelectedGradient, Function):
    """(values, indices) of the k-th smallest element along one dim (k from 1), a stable sort
    deciding between ties; the gradient goes to the element picked."""

    @staticmethod
    def forward(ctx, a, *, k, dim, keepdim=False):
        order = sort_order(a, dim)
        idx = order[(slice(None),) * dim + (slice(k - 1, k),)].astype(np.int64)
        return _selected(ctx, a, idx, dim, keepdim)
