"""Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_.

Both work on the gradients' arrays in place, outside the autograd graph."""
import math
import numbers

import numpy as np

from ... import checks, devices
from ...autograd import no_grad
from ...tensor import Tensor, tensor


def _grads(fn, parameters):
    """The .grad of every parameter that has one (parameters: a Tensor or an iterable of them)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{fn}: parameters must be a Tensor or an iterable of Tensors; element {i} "
                            f"is a {type(p).__name__}")
    return [p.grad for p in params if p.grad is not None]


def _norm_order(fn, norm_type):
    if isinstance(norm_type, str):  # PyTorch accepts 'inf' as well as float('inf')
        try:
            norm_type = float(norm_type)
        except ValueError:
            raise ValueError(f"{fn}: norm_type must be a number or 'inf', got {norm_type!r}") from None
    return checks.check_real(fn, "norm_type", norm_type, finite=False)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of `parameters` in place so that their total `norm_type`-norm
    (the norm of all gradients concatenated into one vector) is at most `max_norm`.

    They are multiplied by min(1, max_norm / (total_norm + 1e-6)), as in PyTorch. Returns
    the total norm before clipping, as a 0-d Tensor. `foreach` is accepted for PyTorch
    compatibility; minifw has one implementation."""
    fn = "clip_grad_norm_"
    max_norm = checks.check_real(fn, "max_norm", max_norm, finite=False)
    norm_type = _norm_order(fn, norm_type)
    checks.check_bool(fn, "error_if_nonfinite", error_if_nonfinite)
    grads = _grads(fn, parameters)
    if not grads:
        return tensor(0.0)
    dtype = np.result_type(*(g.dtype for g in grads))
    # The norm of the per-gradient norms is the norm of the concatenation for every order p.
    # Each device's norms are gathered there and read back once (one wait for a GPU).
    by_device = {}
    for g in grads:
        by_device.setdefault(g.device, []).append(g._data)
    partial = []
    for dev, arrays in by_device.items():
        xp = devices.array_module(dev)
        norms = xp.stack([xp.linalg.norm(a.reshape(-1), norm_type).astype(dtype) if a.size
                          else xp.zeros((), dtype) for a in arrays])
        partial.append(devices.to_device(xp.linalg.norm(norms, norm_type), devices.CPU))
    total = dtype.type(np.linalg.norm(np.array(partial, dtype=dtype), norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"{fn}: the total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite ({total}), so it cannot be clipped. To disable this error and "
                           f"scale the gradients by the non-finite norm anyway, set "
                           f"`error_if_nonfinite=False`")
    coef = min(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    if np.isnan(total):
        coef = total  # as PyTorch: a NaN norm makes every gradient NaN rather than passing unclipped
    with no_grad():
        for g in grads:
            g.mul_(float(coef))
    return tensor(total, dtype=dtype, device=grads[0].device)  # as PyTorch: on the grads' device


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of `parameters` in place to [-clip_value, clip_value]."""
    fn = "clip_grad_value_"
    if isinstance(clip_value, Tensor):
        clip_value = clip_value.item()
    if not isinstance(clip_value, numbers.Real) or isinstance(clip_value, bool):
        raise TypeError(f"{fn}: clip_value must be a real number, got {type(clip_value).__name__} "
                        f"{clip_value!r}")
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(fn, parameters):
            g.copy_(g.clamp(-clip_value, clip_value))
