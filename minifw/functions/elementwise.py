"""Elementwise arithmetic and functions (NumPy broadcasting), casts and copies (to another
device too), where."""
import numpy as np

from .. import devices
from ..autograd import Function


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`: the adjoint of NumPy broadcasting `shape` up to grad.shape."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


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
        inside = np.ones_like(a, dtype=bool)  # as in PyTorch: the bounds themselves pass gradient
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
        return a.copy(order="C")

    @staticmethod
    def backward(ctx, g):
        return g


class ToDevice(Function):
    """A copy on another device (Tensor.to(device)); the gradient goes back the same way."""

    @staticmethod
    def forward(ctx, a, *, device):
        ctx.source = devices.of(a)
        ctx.output_device = device  # the one Function whose result leaves its input's device
        return devices.to_device(a, device)

    @staticmethod
    def backward(ctx, g):
        return devices.to_device(g, ctx.source)


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
