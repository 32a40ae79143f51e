"""Losses with no primitive, as array code: binary cross-entropy (of probabilities, and of
logits), L1, smooth L1, Huber and Kullback-Leibler divergence, elementwise; and CTC.

Each computes one loss per element (input and target broadcast, as PyTorch's do) and reduces
them: 'none' keeps them, 'sum' adds them, 'mean' divides the sum by their number and, for
kl_div, 'batchmean' by the size of the first dim. Backward spreads the reduced gradient back
over the elements (`_spread`) and multiplies by each element's derivative. Gradients reach
input and target; weights (weight, pos_weight) are constants, as nn.functional passes them.
"""
import numpy as np

from .. import devices
from ..autograd import Function
from .activation import LogSigmoid
from .elementwise import Where, constant, masked, unbroadcast


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

    @staticmethod
    def backward_graph(ctx, g):
        # backward's formula, the clamped logs recomputed from x (the clamps are constant
        # where they bind: there the logs' gradient is zero)
        x, t, weight, log_x, log_1mx = ctx.saved_tensors
        g = _spread(g, ctx.reduction, x._data.size)
        if weight is not None:
            g = g * weight
        dx = dt = None
        if ctx.needs_input_grad[0]:
            dx = g * (x - t) / (x * (1.0 - x)).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore"):
                dt = g * (Where.apply((-x).log1p(), -100.0, condition=log_1mx._data > -100.0)
                          - Where.apply(x.log(), -100.0, condition=log_x._data > -100.0))
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

    @staticmethod
    def backward_graph(ctx, g):
        x, t, weight, pos_weight, _ = ctx.saved_tensors
        g = _spread(g, ctx.reduction, x._data.size)
        if weight is not None:
            g = g * weight
        dx = dt = None
        if ctx.needs_input_grad[0]:
            s = x.sigmoid()
            dx = g * (s - t) if pos_weight is None else \
                g * (((pos_weight - 1.0) * t + 1.0) * s - pos_weight * t)
        if ctx.needs_input_grad[1]:
            if pos_weight is None:
                dt = -g * x
            else:  # softplus(-x) = -logsigmoid(x), finite for every x
                dt = g * ((pos_weight - 1.0) * -LogSigmoid.apply(x) - x)
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

    @staticmethod
    def backward_graph(ctx, g):
        d, = ctx.saved_tensors  # sign(x - t) is piecewise constant
        grad = _spread(g, ctx.reduction, d._data.size) * constant(np.sign(d._data))
        return unbroadcast(grad, ctx.shapes[0]), unbroadcast(-grad, ctx.shapes[1])


class SmoothAbsoluteError(Function):
    """smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = x - t;
    beta = 0 is the L1 loss); with huber=True, huber_loss with delta = beta: 0.5 d^2 where
    |d| < delta, delta (|d| - 0.5 delta) elsewhere (delta times smooth L1)."""

    @staticmethod
    def forward(ctx, x, t, *, beta, huber=False, reduction="mean"):
        ctx.huber = huber  # names the node
        d = x - t
        ad = np.abs(d)
        if huber:
            losses = np.where(ad < beta, 0.5 * d * d, beta * (ad - 0.5 * beta))
        elif beta == 0.0:
            losses = ad
        else:
            losses = np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
        ctx.save_for_backward(d, x, t)  # x, t: for second derivatives only
        ctx.args = beta, huber, (x.shape, t.shape), reduction
        return _reduce(losses.astype(d.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        d = ctx.saved_tensors[0]
        beta, huber, shapes, reduction = ctx.args
        if huber:  # the slope is d inside, +-delta outside
            slope = np.where(np.abs(d) < beta, d, beta * np.sign(d))
        elif beta == 0.0:
            slope = np.sign(d)
        else:
            slope = np.where(np.abs(d) < beta, d / beta, np.sign(d))
        grad = (_spread(g, reduction, d.size) * slope).astype(d.dtype, copy=False)
        return unbroadcast(grad, shapes[0]), unbroadcast(-grad, shapes[1])

    @staticmethod
    def backward_graph(ctx, g):
        # inside |d| < beta the slope is d (or d / beta), recomputed from x and t; outside
        # it is the constant +-beta (or +-1)
        d, x, t = ctx.saved_tensors
        beta, huber, shapes, reduction = ctx.args
        d = d._data
        inside, sign = np.abs(d) < beta, np.sign(d)
        if beta == 0.0:
            slope = constant(sign)
        else:
            diff = x - t
            slope = Where.apply(diff if huber else diff / beta,
                                constant(((beta if huber else 1.0) * sign).astype(d.dtype)),
                                condition=inside)
        grad = _spread(g, reduction, d.size) * slope
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

    @staticmethod
    def backward_graph(ctx, g):
        x, t, _, _ = ctx.saved_tensors  # p = exp(t) and log t recomputed from t
        log_target, reduction, batch = ctx.args
        full = np.broadcast_shapes(x.shape, t.shape)
        g = _spread(g, reduction, int(np.prod(full)), batch)
        p = t.exp() if log_target else t
        dx = dt = None
        if ctx.needs_input_grad[0]:
            dx = unbroadcast((-g * p).expand(*full), x.shape)
        if ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                local = p * (t - x + 1.0) if log_target else t.log() + 1.0 - x
            dt = unbroadcast((g * local).expand(*full), t.shape)
        return dx, dt


def _sum_to(grad, full, shape):
    """grad, broadcast to the elements' shape `full`, summed down to an input's `shape`."""
    if grad.shape != full:
        grad = np.broadcast_to(grad, full)
        if shape == full:
            return grad.copy()  # an array of its own, not a read-only broadcast view
    return unbroadcast(grad, shape)


class ConnectionistTemporalClassification(Function):
    """CTC (Graves et al., 2006): the negative log-likelihood of each target sequence under
    per-frame class log-probabilities, summed over every alignment (blanks between and
    around the labels, repeats merged), by the forward (alpha) recursion in log space over
    the blank-extended target; backward runs the beta recursion and gives
    d nll / d log_probs[t, n, c] = -(the posterior of class c at frame t), for frames before
    the sample's input length (zero after it). log_probs (T, N, C); targets (N, S) host
    int64, padded; lengths host int64. Output: (N,) losses."""

    @staticmethod
    def forward(ctx, log_probs, *, targets, input_lengths, target_lengths, blank, zero_infinity):
        ctx.device = devices.of(log_probs)
        lp = np.asarray(devices.to_device(log_probs, devices.CPU))
        t_max, n, _ = lp.shape
        ext, skip, last = _ctc_extended(targets, target_lengths, blank)
        alpha = _ctc_alpha(lp, ext, skip, last, input_lengths)
        rows = np.arange(n)
        end = alpha[input_lengths - 1, rows]  # (N, L) at each sample's last frame
        tail = np.where(last >= 1, end[rows, np.maximum(last - 1, 0)], -np.inf)
        with np.errstate(invalid="ignore"):
            nll = -np.logaddexp(end[rows, last], tail)
        nll[input_lengths == 0] = np.where(target_lengths[input_lengths == 0] == 0, 0.0, np.inf)
        if zero_infinity:
            nll = np.where(np.isinf(nll), 0.0, nll)
        ctx.args = lp, ext, skip, last, alpha, input_lengths, nll, zero_infinity
        return devices.to_device(nll.astype(lp.dtype), ctx.device)

    @staticmethod
    def backward(ctx, g):
        lp, ext, skip, last, alpha, input_lengths, nll, zero_infinity = ctx.args
        t_max, n, c = lp.shape
        beta = _ctc_beta(lp, ext, skip, last, input_lengths)
        rows = np.arange(n)
        at = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
        with np.errstate(invalid="ignore", over="ignore"):
            # the posterior of each (frame, extended position); -inf + inf (unreachable) -> 0
            post = np.exp(alpha + beta - at + nll[None, :, None])
        post = np.where(np.isfinite(post), post, 0.0)
        post[np.arange(t_max)[:, None] >= input_lengths[None, :]] = 0.0
        dense = ((np.arange(t_max)[:, None, None] * n + rows[None, :, None]) * c + ext[None]).reshape(-1)
        grad = -np.bincount(dense, weights=post.reshape(-1), minlength=t_max * n * c).reshape(t_max, n, c)
        # an impossible alignment (too few frames): no gradient with zero_infinity, else NaN
        grad[:, ~np.isfinite(nll)] = 0.0 if zero_infinity else np.nan
        grad *= np.asarray(devices.to_device(g, devices.CPU), dtype=np.float64)[None, :, None]
        return devices.to_device(grad.astype(lp.dtype), ctx.device)


def _ctc_extended(targets, target_lengths, blank):
    """The blank-extended targets (N, 2S+1): blank, l1, blank, l2, ..., blank; where a label
    may be reached from two positions back (it differs from the label before it); and each
    sample's last position 2 * target_length."""
    n, s = targets.shape
    ext = np.full((n, 2 * s + 1), blank, np.int64)
    ext[:, 1::2] = targets
    skip = np.zeros(ext.shape, bool)
    skip[:, 3::2] = targets[:, 1:] != targets[:, :-1]
    return ext, skip, 2 * target_lengths


def _shifted(a, k):
    """a moved k positions along the last axis (towards higher indices for k > 0), -inf in."""
    out = np.full_like(a, -np.inf)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _logsumexp3(a, b, c):
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe


def _ctc_alpha(lp, ext, skip, last, input_lengths):
    t_max, n, _ = lp.shape
    pos = np.arange(ext.shape[1])
    valid = pos[None, :] <= last[:, None]
    emit = np.take_along_axis(lp.astype(np.float64), np.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    alpha = np.full((t_max,) + ext.shape, -np.inf)
    if t_max == 0:
        return alpha
    alpha[0, :, 0] = emit[0, :, 0]
    alpha[0, :, 1] = np.where(last >= 1, emit[0, :, 1], -np.inf)
    alpha[0][~valid] = -np.inf
    for t in range(1, t_max):
        a = alpha[t - 1]
        step = _logsumexp3(a, _shifted(a, 1), np.where(skip, _shifted(a, 2), -np.inf)) + emit[t]
        alpha[t] = np.where(valid, step, -np.inf)
    return alpha


def _ctc_beta(lp, ext, skip, last, input_lengths):
    """beta[t, n, s]: log-probability of emitting the rest of the target from frame t on,
    given position s at frame t (frame t's emission included)."""
    t_max, n, _ = lp.shape
    pos = np.arange(ext.shape[1])
    valid = pos[None, :] <= last[:, None]
    emit = np.take_along_axis(lp.astype(np.float64), np.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    beta = np.full((t_max,) + ext.shape, -np.inf)
    skip_next = np.zeros_like(skip)
    skip_next[:, :-2] = skip[:, 2:]  # position s may jump to s + 2
    ends = (pos[None, :] == last[:, None]) | (pos[None, :] == last[:, None] - 1)
    for t in range(t_max - 1, -1, -1):
        start = ends & (t == input_lengths - 1)[:, None]
        if t + 1 < t_max:
            b = beta[t + 1]
            step = _logsumexp3(b, _shifted(b, -1), np.where(skip_next, _shifted(b, -2), -np.inf)) + emit[t]
            inside = (t < input_lengths - 1)[:, None] & valid
            beta[t] = np.where(inside, step, -np.inf)
        beta[t] = np.where(start, emit[t], beta[t])
    return beta
