"""Elementwise losses with no primitive, as array code: binary cross-entropy (of
probabilities, and of logits), L1, smooth L1, Huber and Kullback-Leibler divergence.

Each computes one loss per element (input and target broadcast, as PyTorch's do) and reduces
them: 'none' keeps them, 'sum' adds them, 'mean' divides the sum by their number and, for
kl_div, 'batchmean' by the size of the first dim. Backward spreads the reduced gradient back
over the elements (`_spread`) and multiplies by each element's derivative. Gradients reach
input and target; weights (weight, pos_weight) are constants, as nn.functional passes them.
"""
import numpy as np

from ..autograd import Function
from .elementwise import unbroadcast


def _reduce(losses, reduction, batch=None):
    if reduction == "none":
        return losses
    with np.errstate(invalid="ignore", divide="ignore"):  # no elements: nan, as PyTorch
        if reduction == "sum":
            total = losses.sum()
        elif reduction == "batchmean":
            total = losses.sum() / batch
        else:
            total = losses.mean()
    return total.astype(losses.dtype, copy=False)


def _spread(g, reduction, count, batch=None):
    """d(reduced loss)/d(each element's loss) times the incoming gradient g."""
    if reduction == "none" or reduction == "sum":
        return g
    divisor = batch if reduction == "batchmean" else count
    return g * (1.0 / divisor) if divisor else g * float("nan")


def _softplus(x):
    """log(1 + exp(x)) without overflow."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


class BinaryCrossEntropy(Function):
    """-w [t log x + (1 - t) log(1 - x)] of probabilities x, each log clamped at -100 as in
    PyTorch (so x = 0 or 1 gives a finite loss). The input gradient is PyTorch's
    w (x - t) / max(x (1 - x), 1e-12); the target's, w (log(1 - x) - log x), clamped alike."""

    @staticmethod
    def forward(ctx, x, t, *, weight=None, reduction="mean"):
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(x), -100.0)
            log_1mx = np.maximum(np.log1p(-x), -100.0)
        losses = -(t * log_x + (1.0 - t) * log_1mx)
        if weight is not None:
            losses = losses * weight
        ctx.save_for_backward(x, t, weight, log_x, log_1mx)
        ctx.reduction = reduction
        return _reduce(losses, reduction)

    @staticmethod
    def backward(ctx, g):
        x, t, weight, log_x, log_1mx = ctx.saved_tensors
        g = _spread(g, ctx.reduction, x.size)
        if weight is not None:
            g = g * weight
        dx = g * (x - t) / np.maximum(x * (1.0 - x), 1e-12) if ctx.needs_input_grad[0] else None
        dt = g * (log_1mx - log_x) if ctx.needs_input_grad[1] else None
        return dx, dt


class BinaryCrossEntropyWithLogits(Function):
    """Binary cross-entropy of sigmoid(x), in PyTorch's stable form
    (1 - t) x + l * softplus(-x), l = 1 + (pos_weight - 1) t, times weight; softplus never
    exponentiates a positive number. d/dx = w (l sigmoid(x) - pos_weight t);
    d/dt = w ((pos_weight - 1) softplus(-x) - x)."""

    @staticmethod
    def forward(ctx, x, t, *, weight=None, pos_weight=None, reduction="mean"):
        softplus_neg = _softplus(-x)
        if pos_weight is None:
            losses = (1.0 - t) * x + softplus_neg
        else:
            losses = (1.0 - t) * x + ((pos_weight - 1.0) * t + 1.0) * softplus_neg
        if weight is not None:
            losses = losses * weight
        ctx.save_for_backward(x, t, weight, pos_weight, softplus_neg)
        ctx.reduction = reduction
        return _reduce(losses.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        x, t, weight, pos_weight, softplus_neg = ctx.saved_tensors
        g = _spread(g, ctx.reduction, x.size)
        if weight is not None:
            g = g * weight
        dx = dt = None
        if ctx.needs_input_grad[0]:
            s = _sigmoid(x)
            dx = g * (s - t) if pos_weight is None else \
                g * (((pos_weight - 1.0) * t + 1.0) * s - pos_weight * t)
        if ctx.needs_input_grad[1]:
            dt = -g * x if pos_weight is None else g * ((pos_weight - 1.0) * softplus_neg - x)
        return dx, dt


class AbsoluteError(Function):
    """|x - t| (l1_loss); the gradient is sign(x - t), 0 where they are equal."""

    @staticmethod
    def forward(ctx, x, t, *, reduction="mean"):
        d = x - t
        ctx.save_for_backward(d)
        ctx.shapes, ctx.reduction = (x.shape, t.shape), reduction
        return _reduce(np.abs(d), reduction)

    @staticmethod
    def backward(ctx, g):
        d, = ctx.saved_tensors
        grad = _spread(g, ctx.reduction, d.size) * np.sign(d)
        return unbroadcast(grad, ctx.shapes[0]), unbroadcast(-grad, ctx.shapes[1])


class SmoothAbsoluteError(Function):
    """smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = x - t;
    beta = 0 is the L1 loss); with huber=True, huber_loss with delta = beta: 0.5 d^2 where
    |d| < delta, delta (|d| - 0.5 delta) elsewhere (delta times smooth L1)."""

    @staticmethod
    def forward(ctx, x, t, *, beta, huber=False, reduction="mean"):
        d = x - t
        ad = np.abs(d)
        if huber:
            losses = np.where(ad < beta, 0.5 * d * d, beta * (ad - 0.5 * beta))
        elif beta == 0.0:
            losses = ad
        else:
            losses = np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
        ctx.save_for_backward(d)
        ctx.args = beta, huber, (x.shape, t.shape), reduction
        return _reduce(losses.astype(d.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        d, = ctx.saved_tensors
        beta, huber, shapes, reduction = ctx.args
        if huber:  # the slope is d inside, +-delta outside
            slope = np.where(np.abs(d) < beta, d, beta * np.sign(d))
        elif beta == 0.0:
            slope = np.sign(d)
        else:
            slope = np.where(np.abs(d) < beta, d / beta, np.sign(d))
        grad = (_spread(g, reduction, d.size) * slope).astype(d.dtype, copy=False)
        return unbroadcast(grad, shapes[0]), unbroadcast(-grad, shapes[1])


class KullbackLeiblerDivergence(Function):
    """Pointwise KL divergence of log-probabilities x from target t: t (log t - x), with
    0 log 0 = 0 (PyTorch's xlogy(t, t) - t x); with log_target, t holds log-probabilities:
    exp(t) (t - x). d/dx = -t (-exp(t)); d/dt = log t + 1 - x (exp(t) (t - x + 1)), which is
    nan at t = 0, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, t, *, log_target=False, reduction="mean"):
        batch = x.shape[0] if x.ndim else 1
        with np.errstate(divide="ignore", invalid="ignore"):
            if log_target:
                p = np.exp(t)
                losses = p * (t - x)
                log_t = None
            else:
                p = t
                log_t = np.log(t)
                losses = np.where(t == 0, 0.0, t * log_t) - t * x
        ctx.save_for_backward(x, t, p, log_t)
        ctx.args = log_target, reduction, batch
        return _reduce(losses.astype(x.dtype, copy=False), reduction, batch)

    @staticmethod
    def backward(ctx, g):
        x, t, p, log_t = ctx.saved_tensors
        log_target, reduction, batch = ctx.args
        full = np.broadcast_shapes(x.shape, t.shape)
        g = _spread(g, reduction, int(np.prod(full)), batch)
        dx = dt = None
        if ctx.needs_input_grad[0]:
            dx = _sum_to(-g * p, full, x.shape)
        if ctx.needs_input_grad[1]:
            with np.errstate(invalid="ignore"):
                local = p * (t - x + 1.0) if log_target else log_t + 1.0 - x
            dt = _sum_to(g * local, full, t.shape)
        return dx, dt


def _sum_to(grad, full, shape):
    """grad, broadcast to the elements' shape `full`, summed down to an input's `shape`."""
    if grad.shape != full:
        grad = np.broadcast_to(grad, full)
        if shape == full:
            return grad.copy()  # an array of its own, not a read-only broadcast view
    return unbroadcast(grad, shape)
