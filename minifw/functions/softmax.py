"""Softmax and log-softmax along a dim, and the losses over class scores: softmax
cross-entropy (one primitive), negative log-likelihood and squared error."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..engines import current_engine
from .elementwise import constant, masked, unbroadcast


def _classes(shape, like):
    """0 .. C-1 along the class axis 1 of `shape`, on the device of the array `like`."""
    xp = devices.array_module(devices.of(like))
    return xp.arange(shape[1]).reshape((1, -1) + (1,) * (len(shape) - 2))


class SoftmaxAlongDim(Function):
    """softmax (or log_softmax) along one dim. The primitive works along the last axis of a
    2-D array or the channel axis of a 4-D one; other layouts are moved into the first."""

    @staticmethod
    def forward(ctx, x, *, dim, log):
        engine = ctx.engine = current_engine()
        ctx.log = log  # names the node
        if x.size == 0:  # nothing to normalize (and reshape(-1, 0) would be ambiguous)
            ctx.args = None
            return x.copy()
        direct = (x.ndim == 2 and dim == 1) or (x.ndim == 4 and dim == 1)
        if direct:
            y = engine.softmax_forward(x, log=log)
        else:
            moved = np.moveaxis(x, dim, -1)
            y2 = engine.softmax_forward(moved.reshape(-1, x.shape[dim]), log=log)
            y = np.moveaxis(y2.reshape(moved.shape), -1, dim)
        ctx.save_for_backward(y)
        ctx.args = dim, log, direct
        return y

    @staticmethod
    def backward(ctx, dy):
        if ctx.args is None:
            return dy.copy()
        y, = ctx.saved_tensors
        dim, log, direct = ctx.args
        if direct:
            return ctx.engine.softmax_backward(dy, y, log=log)
        moved_y = np.moveaxis(y, dim, -1)
        n = y.shape[dim]
        dx2 = ctx.engine.softmax_backward(np.moveaxis(dy, dim, -1).reshape(-1, n),
                                          moved_y.reshape(-1, n), log=log)
        return np.moveaxis(dx2.reshape(moved_y.shape), -1, dim)

    @staticmethod
    def backward_graph(ctx, dy):
        if ctx.args is None:
            return dy
        y, = ctx.saved_tensors  # this node's output: differentiated again through it
        dim, log, _ = ctx.args
        if log:  # dx = dy - softmax(x) sum(dy)
            return dy - y.exp() * dy.sum(dim, keepdim=True)
        return y * (dy - (dy * y).sum(dim, keepdim=True))


def softmax(x, dim, log=False):
    """softmax (log_softmax with log=True) of tensor x along the non-negative axis dim;
    a 0-d x is treated as one element."""
    if x.ndim == 0:
        return SoftmaxAlongDim.apply(x.reshape(1, 1), dim=1, log=log).reshape(())
    return SoftmaxAlongDim.apply(x, dim=dim, log=log)


class SoftmaxCrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, *, target, **args):
        engine = ctx.engine = current_engine()
        loss, log_probs = engine.cross_entropy_forward(logits, target, **args)
        # logits (a reference, no copy) only for second derivatives: log_probs is a constant
        # in the graph, and the softmax must be recomputed from the logits' history
        ctx.save_for_backward(log_probs, target, logits)
        ctx.args = args
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        log_probs, target, _ = ctx.saved_tensors
        return ctx.engine.cross_entropy_backward(grad_loss, log_probs, target, **ctx.args)

    @staticmethod
    def backward_graph(ctx, grad_loss):
        # the primitive's gradient, grad * (softmax(z) - (1 - eps) onehot(t) - eps / C) at
        # the kept positions and exactly 0 at the ignored ones, in recorded operations
        _, target, logits = ctx.saved_tensors
        target = target._data
        ignore_index = ctx.args.get("ignore_index", -100)
        eps = ctx.args.get("label_smoothing", 0.0)
        reduction = ctx.args.get("reduction", "mean")
        dtype = logits.dtype
        kept = target != ignore_index
        grad = grad_loss
        if reduction == "mean":
            count = int(kept.sum())
            grad = grad * (1.0 / count) if count else grad * 0.0
        onehot = _classes(logits.shape, target) == np.where(kept, target, 0)[:, None]
        smoothed = ((1.0 - eps) * onehot + eps / logits.shape[1]).astype(dtype)
        device = devices.of(logits._data)
        per_position = (grad * constant(devices.to_device(kept.astype(dtype), device))).unsqueeze(1)
        dlogits = per_position * (logits.log_softmax(1).exp()
                                  - constant(devices.to_device(smoothed, device)))
        return masked(np.broadcast_to(kept[:, None], logits.shape), dlogits)


class NegativeLogLikelihood(Function):
    """Negative log-likelihood of log-probabilities (N, C, ...) at int64 targets (N, ...)."""

    @staticmethod
    def forward(ctx, log_probs, *, target, weight=None, ignore_index=-100, reduction="mean"):
        valid = target != ignore_index
        safe = np.where(valid, target, 0)
        picked = np.take_along_axis(log_probs, safe[:, None], axis=1)[:, 0]
        if weight is None:
            weight = devices.array_module(devices.of(log_probs)).ones(log_probs.shape[1], log_probs.dtype)
        w = weight[safe] * valid
        losses = -picked * w
        if reduction == "none":
            scale, out = None, losses
        elif reduction == "sum":
            scale, out = 1.0, losses.sum()
        else:
            scale = 1.0 / w.sum()  # PyTorch: a weighted mean (nan when every target is ignored)
            out = losses.sum() * scale
        ctx.save_for_backward(safe, w)
        ctx.args = log_probs.shape, log_probs.dtype, scale
        return out.astype(log_probs.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        safe, w = ctx.saved_tensors
        shape, dtype, scale = ctx.args
        per_element = (-w * (g if scale is None else g * scale)).astype(dtype)
        # each position's gradient at its target class, exact zeros elsewhere
        classes = devices.array_module(devices.of(safe)).arange(shape[1]).reshape((1, -1) + (1,) * (len(shape) - 2))
        return np.where(classes == safe[:, None], per_element[:, None], dtype.type(0))

    @staticmethod
    def backward_graph(ctx, g):
        # linear in g, constant in the log-probabilities: only the gradient fed in has history
        safe, w = (t._data for t in ctx.saved_tensors)
        shape, dtype, scale = ctx.args
        factor = (-w if scale is None else -w * scale).astype(dtype)
        per_element = (g * constant(factor)).unsqueeze(1)
        return masked(_classes(shape, safe) == safe[:, None], per_element)


class SquaredError(Function):
    @staticmethod
    def forward(ctx, input, target, *, reduction="mean"):
        diff = input - target
        ctx.save_for_backward(diff, input, target)  # input, target: for second derivatives
        ctx.args = np.shape(input), np.shape(target), reduction
        squared = diff * diff
        if reduction == "none":
            return squared
        return (squared.sum() if reduction == "sum" else squared.mean()).astype(diff.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        diff = ctx.saved_tensors[0]
        shape_in, shape_t, reduction = ctx.args
        scale = 2.0 / diff.size if reduction == "mean" else 2.0
        d = (g * scale * diff).astype(diff.dtype)
        return unbroadcast(d, shape_in), unbroadcast(-d, shape_t)

    @staticmethod
    def backward_graph(ctx, g):
        diff, input, target = ctx.saved_tensors  # diff is a constant: recomputed from the inputs
        shape_in, shape_t, reduction = ctx.args
        scale = 2.0 / diff._data.size if reduction == "mean" else 2.0
        d = g * scale * (input - target)
        return unbroadcast(d, shape_in), unbroadcast(-d, shape_t)
