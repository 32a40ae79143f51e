"""The differentiable Tensor operations that have no native primitive:
elementwise arithmetic (with NumPy broadcasting), matmul, reductions, shape
changes, indexing, cat/stack. Each is a Function with forward and backward
side by side, on NumPy arrays. (Operations with a primitive, such as conv2d or
relu, are in minifw.nn.functional and go through minifw.ops.)
"""
import numpy as np

from .autograd import Function


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`: the adjoint of NumPy broadcasting `shape` up to grad.shape."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


# ---- elementwise arithmetic -------------------------------------------------------

class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = np.shape(a), np.shape(b)
        return np.add(a, b)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return unbroadcast(g, sa), unbroadcast(g, sb)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = np.shape(a), np.shape(b)
        return np.subtract(a, b)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return unbroadcast(g, sa), unbroadcast(-g, sb)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = unbroadcast(g * b, np.shape(a)) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(g * a, np.shape(b)) if ctx.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.true_divide(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = unbroadcast(g / b, np.shape(a)) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(-g * a / (b * b), np.shape(b)) if ctx.needs_input_grad[1] else None
        return ga, gb


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return np.negative(a)

    @staticmethod
    def backward(ctx, g):
        return -g


class Pow(Function):
    """a ** b, either operand a tensor (the other may be a number)."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        ga = gb = None
        with np.errstate(divide="ignore", invalid="ignore"):
            # as PyTorch: d(a**0)/da = 0 even at a = 0, and d(0**b)/db = 0 for b >= 0
            if ctx.needs_input_grad[0]:
                ga = unbroadcast(np.where(b == 0, 0.0, g * b * np.power(a, b - 1)), np.shape(a))
            if ctx.needs_input_grad[1]:
                gb = unbroadcast(np.where((a == 0) & (b >= 0), 0.0, g * out * np.log(a)), np.shape(b))
        return ga, gb


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g / a


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g / (2 * out)


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * np.sign(a)


class Clamp(Function):
    @staticmethod
    def forward(ctx, a, *, min=None, max=None):
        ctx.save_for_backward(a)
        ctx.bounds = min, max
        return np.clip(a, min, max)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        lo, hi = ctx.bounds
        inside = np.ones(a.shape, dtype=bool)  # as in PyTorch: the bounds themselves pass gradient
        if lo is not None:
            inside &= a >= lo
        if hi is not None:
            inside &= a <= hi
        return g * inside


class Cast(Function):
    @staticmethod
    def forward(ctx, a, *, dtype):
        ctx.dtype = a.dtype
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype)


class Clone(Function):
    @staticmethod
    def forward(ctx, a):
        return np.array(a, order="C")

    @staticmethod
    def backward(ctx, g):
        return g


# ---- matmul ---------------------------------------------------------------------

class MatMul(Function):
    """NumPy matmul semantics: 1-D operands are promoted and the added axis removed,
    leading (batch) axes broadcast."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        if a.ndim == 1 and b.ndim == 1:
            return g * b, g * a
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        if a.ndim == 1:
            g = np.expand_dims(g, -2)
        if b.ndim == 1:
            g = np.expand_dims(g, -1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = unbroadcast(np.matmul(g, np.swapaxes(b2, -1, -2)), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = unbroadcast(np.matmul(np.swapaxes(a2, -1, -2), g), b2.shape).reshape(b.shape)
        return ga, gb


# ---- reductions -----------------------------------------------------------------

def _expand_reduced(g, in_shape, axes, keepdim):
    """Broadcast the gradient of a reduction over `axes` back to the input shape."""
    if not keepdim and axes is not None:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, in_shape)


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
        dx = np.zeros(shape, dtype=g.dtype)
        np.put_along_axis(dx, idx, g, axis=dim)
        return dx


# ---- shapes -------------------------------------------------------------------

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
        return np.transpose(g, np.argsort(ctx.dims))


class Expand(Function):
    @staticmethod
    def forward(ctx, a, *, shape):
        ctx.shape = a.shape
        return np.broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, g):
        return unbroadcast(g, ctx.shape)


def _is_basic_index(index):
    """True when `index` only slices (ints, slices, None, Ellipsis): every element
    is picked at most once, so the backward can assign instead of scatter-add."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


class Index(Function):
    @staticmethod
    def forward(ctx, a, *, index):
        ctx.args = a.shape, index
        return a[index]

    @staticmethod
    def backward(ctx, g):
        shape, index = ctx.args
        dx = np.zeros(shape, dtype=g.dtype)
        if _is_basic_index(index):
            dx[index] = g
        else:
            np.add.at(dx, index, g)  # an index may pick one element several times
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


class Where(Function):
    @staticmethod
    def forward(ctx, a, b, *, condition):
        ctx.save_for_backward(condition)
        ctx.shapes = np.shape(a), np.shape(b)
        return np.where(condition, a, b)

    @staticmethod
    def backward(ctx, g):
        condition, = ctx.saved_tensors
        sa, sb = ctx.shapes
        return unbroadcast(np.where(condition, g, 0), sa), unbroadcast(np.where(condition, 0, g), sb)
