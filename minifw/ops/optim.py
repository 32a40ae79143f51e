"""Fused optimizer updates: one pass over a parameter instead of one per operation.

    sgd_step(p, grad, momentum_buffer, lr=0.01, momentum=0.9, dampening=0.0,
             weight_decay=5e-4, nesterov=False, maximize=False, first_step=False)

updates p and momentum_buffer in place with PyTorch's SGD formulas
(torch.optim.SGD):

    g' = (-grad if maximize else grad) + weight_decay * p
    buf = g'                                     (first_step)
    buf = momentum * buf + (1 - dampening) * g'  (later steps)
    d = g' + momentum * buf if nesterov else buf
    p = p - lr * d

With momentum == 0, d = g' and momentum_buffer is neither read nor written (it
may be None). grad is only read, so it may be read-only, and one that is not
C-contiguous is copied; p and momentum_buffer are written in place, so each must
be a writable, C-contiguous array of p's dtype and shape, and none of the three
may share memory with another.
"""
import numpy as np

from .. import devices
from ..checks import check_array, check_bool, check_float_array, check_like, check_real, check_same_device


def _check_updated_in_place(fn, name, a, dtype=None):
    check_array(fn, name, a)
    if not a.flags.c_contiguous or not devices.is_writeable(a):
        raise ValueError(f"{fn}: {name} is updated in place, so it must be a writable, C-contiguous array")
    return check_float_array(fn, name, a, dtype=dtype)


def check_sgd_step_args(p, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov,
                        maximize, first_step):
    """sgd_step's arguments, checked (shared with the caffe engine): the arrays as given
    (grad made C-contiguous) and the hyperparameters as Python numbers and bools."""
    fn = "sgd_step"
    p = _check_updated_in_place(fn, "p", p)
    grad = check_like(fn, "grad", grad, p, "p")
    lr = check_real(fn, "lr", lr, dtype=p.dtype)
    momentum = check_real(fn, "momentum", momentum, dtype=p.dtype)
    dampening = check_real(fn, "dampening", dampening, dtype=p.dtype)
    weight_decay = check_real(fn, "weight_decay", weight_decay, dtype=p.dtype)
    nesterov = check_bool(fn, "nesterov", nesterov)
    maximize = check_bool(fn, "maximize", maximize)
    first_step = check_bool(fn, "first_step", first_step)
    operands = [("p", p), ("grad", grad)]
    if momentum_buffer is not None:
        momentum_buffer = _check_updated_in_place(fn, "momentum_buffer", momentum_buffer, dtype=p.dtype)
        if momentum_buffer.shape != p.shape:
            raise ValueError(f"{fn}: momentum_buffer must have the shape of p {tuple(p.shape)}, got "
                             f"{tuple(momentum_buffer.shape)}")
        operands.append(("momentum_buffer", momentum_buffer))
        check_same_device(fn, p=p, momentum_buffer=momentum_buffer)
    elif momentum != 0:
        raise ValueError(f"{fn}: momentum_buffer must be an array of p's shape when momentum != 0 "
                         f"(momentum={momentum!r}), got None")
    for i, (name, a) in enumerate(operands):
        for other, b in operands[i + 1:]:
            if np.may_share_memory(a, b):
                raise ValueError(f"{fn}: {name} and {other} must not share memory")
    return (p, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, maximize,
            first_step)


def sgd_step(p, grad, momentum_buffer, *, lr, momentum, dampening, weight_decay, nesterov, maximize,
             first_step):
    """One SGD step on p (and momentum_buffer), in place; returns None."""
    args = check_sgd_step_args(p, grad, momentum_buffer, lr, momentum, dampening, weight_decay,
                               nesterov, maximize, first_step)
    devices.kernel_for("sgd", "step", args[0])(*args)
