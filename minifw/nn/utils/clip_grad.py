"""Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (and its two
halves get_total_norm and clip_grads_with_norm_).

Both work on the gradients' arrays in place, outside the autograd graph."""
import math
import numbers
import warnings

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
    grads = [p.grad for p in params if p.grad is not None]
    _check_floating(fn, "gradients", grads)
    return grads


def _check_floating(fn, what, tensors):
    """A norm of integer values would be truncated to an integer: refused, as PyTorch does."""
    for i, t in enumerate(tensors):
        if not t.is_floating_point():
            raise TypeError(f"{fn}: the {what} must be floating-point tensors; element {i} has "
                            f"dtype {t.dtype}")


def _number(fn, name, value):
    """A one-element Tensor given for a number (as PyTorch's arithmetic takes it) -> its value."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{fn}: {name} must be a number or a one-element Tensor; got a "
                             f"Tensor of shape {tuple(value.shape)}")
        return value.item()
    return value


def _norm_order(fn, norm_type):
    norm_type = _number(fn, "norm_type", norm_type)
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
    max_norm = checks.check_real(fn, "max_norm", _number(fn, "max_norm", max_norm), finite=False)
    norm_type = _norm_order(fn, norm_type)
    checks.check_bool(fn, "error_if_nonfinite", error_if_nonfinite)
    grads = _grads(fn, parameters)
    if not grads:
        return tensor(0.0)
    total = _total_norm(fn, grads, norm_type, error_if_nonfinite)
    _scale_by(grads, max_norm, total.item())
    return total


def _total_norm(fn, tensors, norm_type, error_if_nonfinite):
    """The norm of all `tensors` concatenated into one vector, a 0-d Tensor on their device."""
    dtype = np.result_type(*(g.dtype for g in tensors))
    # As PyTorch's: the norm of the per-tensor norms (the norm of the concatenation for every
    # order p but 0, for which it counts the tensors that have a nonzero element). Each
    # device's norms are gathered there and read back once (one wait for a GPU); the devices'
    # norms then combine as their p-norm, or for p = 0 as their sum (a count of tensors).
    by_device = {}
    for g in tensors:
        by_device.setdefault(g.device, []).append(g._data)
    partial = []
    for dev, arrays in by_device.items():
        xp = devices.array_module(dev)
        norms = xp.stack([xp.linalg.norm(a.reshape(-1), norm_type).astype(dtype) if a.size
                          else xp.zeros((), dtype) for a in arrays])
        partial.append(devices.to_device(xp.linalg.norm(norms, norm_type), devices.CPU))
    partial = np.array(partial, dtype=dtype)
    total = dtype.type(partial.sum() if norm_type == 0 else np.linalg.norm(partial, norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"{fn}: the total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite ({total}), so it cannot be clipped. To disable this error and "
                           f"scale the gradients by the non-finite norm anyway, set "
                           f"`error_if_nonfinite=False`")
    return tensor(total, dtype=dtype, device=tensors[0].device)  # as PyTorch: on the grads' device


def _scale_by(grads, max_norm, total):
    """Multiply grads by min(1, max_norm / (total + 1e-6)) in place."""
    dtype = np.result_type(*(g.dtype for g in grads))
    total = dtype.type(total)
    coef = min(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    if np.isnan(total):
        coef = total  # as PyTorch: a NaN norm makes every gradient NaN rather than passing unclipped
    with no_grad():
        for g in grads:
            g.mul_(float(coef))


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The `norm_type`-norm of `tensors` (a Tensor or an iterable of them: usually the
    gradients) concatenated into one vector, as a 0-d Tensor; 0 for no tensors. As PyTorch's,
    it is the norm of the per-tensor norms, so for norm_type=0 it counts the tensors that have
    a nonzero element. The first half of clip_grad_norm_ (clip_grads_with_norm_ is the second)."""
    fn = "get_total_norm"
    norm_type = _norm_order(fn, norm_type)
    checks.check_bool(fn, "error_if_nonfinite", error_if_nonfinite)
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: tensors must be a Tensor or an iterable of Tensors; element "
                            f"{i} is a {type(t).__name__}")
    if not tensors:
        return tensor(0.0)
    _check_floating(fn, "tensors", tensors)
    return _total_norm(fn, tensors, norm_type, error_if_nonfinite)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of `parameters` in place by min(1, max_norm / (total_norm +
    1e-6)), with a total norm computed beforehand (get_total_norm); returns None."""
    fn = "clip_grads_with_norm_"
    max_norm = checks.check_real(fn, "max_norm", _number(fn, "max_norm", max_norm), finite=False)
    if isinstance(total_norm, Tensor):
        if total_norm.numel() != 1:
            raise ValueError(f"{fn}: total_norm must be a single number (a 0-d Tensor); got "
                             f"shape {tuple(total_norm.shape)}")
        total_norm = total_norm.item()
    total_norm = checks.check_real(fn, "total_norm", total_norm, finite=False)
    grads = _grads(fn, parameters)
    if grads:
        _scale_by(grads, max_norm, total_norm)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated name of clip_grad_norm_ (a FutureWarning, as PyTorch's)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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
