"""Softmax, log-softmax and cross-entropy over the class axis.

    y = softmax_forward(x)                # x (N, classes): over the last axis
    y = softmax_forward(x, log=True)      # x (N, C, H, W): over C at every (n, h, w)
    dx = softmax_backward(dy, y)          # from the forward output
    loss, log_probs = cross_entropy_forward(logits, target, label_smoothing=0.1)
    dlogits = cross_entropy_backward(1.0, log_probs, target, label_smoothing=0.1)

Every softmax subtracts the maximum over the class axis first, so inputs of
any finite size (e.g. +-1e4) give no overflow. Cross-entropy follows
PyTorch's F.cross_entropy with class-index targets: ignore_index,
label_smoothing and the mean/sum/none reductions mean exactly what they mean
there (the mean divides by the number of non-ignored targets; over none it is
nan).
"""
import numpy as np

from .. import devices
from ..checks import (check_bool, check_choice, check_float_array, check_int, check_like, check_real,
                      check_same_device, contiguous)

REDUCTIONS = ("mean", "sum", "none")
NDIM_DESC = "2-D (N, classes) or 4-D (N, C, H, W)"


def _layout(shape):
    """(outer, C, inner) of a 2-D (N, C) or 4-D (N, C, H, W) array."""
    n, c = shape[0], shape[1]
    inner = shape[2] * shape[3] if len(shape) == 4 else 1
    return n, c, inner


def softmax_forward(x, *, log=False):
    """softmax(x) (or log_softmax(x) with log=True) over axis 1."""
    fn = "softmax_forward"
    x = check_float_array(fn, "x", x, ndim=(2, 4), ndim_desc=NDIM_DESC)
    log = check_bool(fn, "log", log)
    check_classes(fn, "x", x)
    y = np.empty_like(x)
    devices.kernel_for("softmax", "forward", x)(*_layout(x.shape), x, y, log)
    return y


def softmax_backward(dy, y, *, log=False):
    """dx from dy and the forward output y (softmax, or log-softmax with log=True)."""
    fn = "softmax_backward"
    y = check_float_array(fn, "y", y, ndim=(2, 4), ndim_desc=NDIM_DESC)
    dy = check_like(fn, "dy", dy, y, "y")
    log = check_bool(fn, "log", log)
    check_classes(fn, "y", y)
    dx = np.empty_like(y)
    devices.kernel_for("softmax", "backward", y)(*_layout(y.shape), dy, y, dx, log)
    return dx


def check_classes(fn, name, a):
    if a.shape[1] < 1:
        raise ValueError(f"{fn}: {name} must have at least one class along axis 1, got shape "
                         f"{tuple(a.shape)}")


def check_cross_entropy_args(fn, scores_name, scores, target, ignore_index, label_smoothing, reduction):
    """Checks shared by both directions; returns (target as C-contiguous int64,
    ignore_index, label_smoothing)."""
    check_classes(fn, scores_name, scores)
    ignore_index = check_int(fn, "ignore_index", ignore_index)  # int64, as the kernels take it
    label_smoothing = check_real(fn, "label_smoothing", label_smoothing, minimum=0.0, maximum=1.0)
    check_choice(fn, "reduction", reduction, REDUCTIONS)
    if not devices.is_array(target):
        raise TypeError(f"{fn}: target must be an array of class indices, got {type(target).__name__}")
    if not np.issubdtype(target.dtype, np.integer):
        raise TypeError(f"{fn}: target must hold integer class indices (int64), got dtype {target.dtype}")
    check_same_device(fn, **{scores_name: scores, "target": target})
    want = (scores.shape[0],) + tuple(scores.shape[2:])
    if target.shape != want:
        raise ValueError(f"{fn}: target must have shape {want} to match {scores_name} of shape "
                         f"{tuple(scores.shape)}, got {tuple(target.shape)}")
    if target.dtype == np.uint64 and target.size and target.max() >= 2 ** 63:
        raise ValueError(f"{fn}: target values must be class indices in [0, {scores.shape[1]}) or "
                         f"ignore_index ({ignore_index}); got {target.max()}")
    target = contiguous(target.astype(np.int64, copy=False))
    c = scores.shape[1]
    bad = (target != ignore_index) & ((target < 0) | (target >= c))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{fn}: target values must be class indices in [0, {c}) or ignore_index "
                         f"({ignore_index}); got {int(target[where])} at index {where}")
    return target, ignore_index, label_smoothing


def cross_entropy_forward(logits, target, *, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """(loss, log_probs). logits: (N, C) or (N, C, H, W); target: int64 class
    indices of shape (N,) or (N, H, W). loss is a 0-d array for "mean" and
    "sum", of target's shape for "none"; log_probs = log_softmax(logits) is
    what the backward needs."""
    fn = "cross_entropy_forward"
    logits = check_float_array(fn, "logits", logits, ndim=(2, 4), ndim_desc=NDIM_DESC)
    target, ignore_index, eps = check_cross_entropy_args(fn, "logits", logits, target, ignore_index,
                                               label_smoothing, reduction)
    log_probs = np.empty_like(logits)
    losses = devices.empty(target.shape, logits.dtype, devices.of(logits))
    kernel = devices.kernel_for("cross_entropy", "forward", logits)
    total, count = kernel(*_layout(logits.shape), logits, target,
                          ignore_index, eps, log_probs, losses)
    if reduction == "none":
        return losses, log_probs
    dev = devices.of(logits)  # the 0-d loss stays on the logits' device
    if reduction == "sum":
        return devices.to_device(np.array(total, dtype=logits.dtype), dev), log_probs
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.float64(total) / np.float64(count)  # 0 / 0 = nan, as PyTorch
    return devices.to_device(np.array(mean, dtype=logits.dtype), dev), log_probs


def check_cross_entropy_backward_args(grad_loss, log_probs, target, ignore_index, label_smoothing,
                                      reduction, fn="cross_entropy_backward"):
    """(log_probs, target as int64, ignore_index, label_smoothing, grad): grad is an array of
    target's shape for reduction "none", else a float. Checked so for both engines."""
    log_probs = check_float_array(fn, "log_probs", log_probs, ndim=(2, 4), ndim_desc=NDIM_DESC)
    target, ignore_index, eps = check_cross_entropy_args(fn, "log_probs", log_probs, target,
                                                         ignore_index, label_smoothing, reduction)
    if reduction == "none":
        grad = check_float_array(fn, "grad_loss", grad_loss, dtype=log_probs.dtype)
        check_same_device(fn, log_probs=log_probs, grad_loss=grad)
        if grad.shape != target.shape:
            raise ValueError(f"{fn}: grad_loss must have target's shape {tuple(target.shape)} for "
                             f"reduction='none', got {tuple(grad.shape)}")
        return log_probs, target, ignore_index, eps, grad
    if devices.is_array(grad_loss):
        if grad_loss.size != 1:
            raise ValueError(f"{fn}: grad_loss must be a scalar for reduction={reduction!r}, got an "
                             f"array of shape {tuple(grad_loss.shape)}")
        grad_loss = grad_loss.reshape(()).item()
    return log_probs, target, ignore_index, eps, check_real(fn, "grad_loss", grad_loss, finite=False,
                                                            dtype=log_probs.dtype)


def cross_entropy_backward(grad_loss, log_probs, target, *, ignore_index=-100, label_smoothing=0.0,
                           reduction="mean"):
    """dlogits from the gradient of the loss (a scalar for "mean"/"sum", an
    array of target's shape for "none") and the forward's log_probs."""
    log_probs, target, ignore_index, eps, grad = check_cross_entropy_backward_args(
        grad_loss, log_probs, target, ignore_index, label_smoothing, reduction)
    grad, scalar = (grad, 0.0) if reduction == "none" else (None, grad)
    dlogits = np.empty_like(log_probs)
    kernel = devices.kernel_for("cross_entropy", "backward", log_probs)
    kernel(*_layout(log_probs.shape), log_probs, target, ignore_index,
           eps, grad, scalar, reduction == "mean", dlogits)
    return dlogits
