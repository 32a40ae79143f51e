"""Batch normalization: spatial (per channel over N, H, W of an NCHW input)
or per activation (per column of an (N, C) input), as PyTorch's batch_norm.

    y, save_mean, save_invstd = batch_norm_forward_training(x, weight, bias, running_mean, running_var)
    y = batch_norm_forward_inference(x, weight, bias, running_mean, running_var)
    dx, dweight, dbias = batch_norm_backward(dy, x, weight, save_mean, save_invstd)

Training normalizes with the batch mean and biased variance and returns the
mean and 1 / sqrt(var + eps) for the backward; running_mean and running_var,
when given, are updated in place: running = (1 - momentum) * running +
momentum * batch statistic, with the unbiased variance for running_var.
weight / bias may be None (scale 1 / shift 0). The statistics are
accumulated in double.
"""
import numpy as np

from .. import devices
from ..checks import check_channel_vector, check_float_array, check_like, check_real, check_same_device

_NDIM_DESC = "2-D (N, C) or 4-D (N, C, H, W)"


def _layout(shape):
    n, c = shape[0], shape[1]
    return n, c, (shape[2] * shape[3] if len(shape) == 4 else 1)


def check_batch_norm_input(fn, x):
    x = check_float_array(fn, "x", x, ndim=(2, 4), ndim_desc=_NDIM_DESC)
    if x.shape[1] < 1:
        raise ValueError(f"{fn}: x must have at least one channel, got shape {tuple(x.shape)}")
    return x


def check_optional_channel_vector(fn, name, v, x, *, writable=False):
    return None if v is None else check_channel_vector(fn, name, v, x.shape[1], x.dtype, writable=writable)


def check_batch_norm_training_args(x, weight, bias, running_mean, running_var, momentum, eps,
                                   fn="batch_norm_forward_training"):
    """The arguments of batch_norm_forward_training, checked for both engines."""
    x = check_batch_norm_input(fn, x)
    outer, _, inner = _layout(x.shape)
    if outer * inner <= 1:
        raise ValueError(f"{fn}: x must have more than one value per channel in training (the variance of "
                         f"one value is undefined); got x of shape {tuple(x.shape)}")
    weight = check_optional_channel_vector(fn, "weight", weight, x)
    bias = check_optional_channel_vector(fn, "bias", bias, x)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var must both be arrays or both be None; got "
                         f"running_mean={'None' if running_mean is None else 'an array'}, running_var="
                         f"{'None' if running_var is None else 'an array'}")
    running_mean = check_optional_channel_vector(fn, "running_mean", running_mean, x, writable=True)
    running_var = check_optional_channel_vector(fn, "running_var", running_var, x, writable=True)
    momentum = check_real(fn, "momentum", momentum, minimum=0.0, maximum=1.0)
    eps = check_real(fn, "eps", eps, minimum=0.0, dtype=x.dtype)
    check_same_device(fn, x=x, weight=weight, bias=bias, running_mean=running_mean, running_var=running_var)
    return x, weight, bias, running_mean, running_var, momentum, eps


def batch_norm_forward_training(x, weight, bias, running_mean, running_var, *, momentum=0.1, eps=1e-5):
    """(y, save_mean, save_invstd); updates running_mean / running_var in place when given."""
    x, weight, bias, running_mean, running_var, momentum, eps = check_batch_norm_training_args(
        x, weight, bias, running_mean, running_var, momentum, eps)
    outer, c, inner = _layout(x.shape)
    y = np.empty_like(x)
    save_mean = devices.empty(c, x.dtype, devices.of(x))
    save_invstd = devices.empty(c, x.dtype, devices.of(x))
    kernel = devices.kernel_for("batch_norm", "forward_training", x)
    kernel(outer, c, inner, x, weight, bias, running_mean, running_var, momentum, eps, y,
           save_mean, save_invstd)
    return y, save_mean, save_invstd


def check_batch_norm_inference_args(x, weight, bias, running_mean, running_var, eps,
                                    fn="batch_norm_forward_inference"):
    """The arguments of batch_norm_forward_inference, checked for both engines."""
    x = check_batch_norm_input(fn, x)
    weight = check_optional_channel_vector(fn, "weight", weight, x)
    bias = check_optional_channel_vector(fn, "bias", bias, x)
    for name, v in (("running_mean", running_mean), ("running_var", running_var)):
        if v is None:
            raise ValueError(f"{fn}: {name} is required for inference, got None")
    running_mean = check_channel_vector(fn, "running_mean", running_mean, x.shape[1], x.dtype)
    running_var = check_channel_vector(fn, "running_var", running_var, x.shape[1], x.dtype)
    check_same_device(fn, x=x, weight=weight, bias=bias, running_mean=running_mean, running_var=running_var)
    return x, weight, bias, running_mean, running_var, check_real(fn, "eps", eps, minimum=0.0,
                                                                  dtype=x.dtype)


def batch_norm_forward_inference(x, weight, bias, running_mean, running_var, *, eps=1e-5):
    """y = (x - running_mean) / sqrt(running_var + eps) * weight + bias."""
    x, weight, bias, running_mean, running_var, eps = check_batch_norm_inference_args(
        x, weight, bias, running_mean, running_var, eps)
    y = np.empty_like(x)
    kernel = devices.kernel_for("batch_norm", "forward_inference", x)
    kernel(*_layout(x.shape), x, weight, bias, running_mean, running_var, eps, y)
    return y


def check_batch_norm_backward_args(dy, x, weight, save_mean, save_invstd, fn="batch_norm_backward"):
    """The arguments of batch_norm_backward, checked for both engines."""
    x = check_batch_norm_input(fn, x)
    dy = check_like(fn, "dy", dy, x, "x")
    weight = check_optional_channel_vector(fn, "weight", weight, x)
    save_mean = check_channel_vector(fn, "save_mean", save_mean, x.shape[1], x.dtype)
    save_invstd = check_channel_vector(fn, "save_invstd", save_invstd, x.shape[1], x.dtype)
    check_same_device(fn, x=x, weight=weight, save_mean=save_mean, save_invstd=save_invstd)
    return dy, x, weight, save_mean, save_invstd


def batch_norm_backward(dy, x, weight, save_mean, save_invstd):
    """(dx, dweight, dbias) of the training-mode forward; dweight and dbias are
    returned even when weight is None (the gradients an affine layer would get)."""
    dy, x, weight, save_mean, save_invstd = check_batch_norm_backward_args(dy, x, weight, save_mean,
                                                                           save_invstd)
    c = x.shape[1]
    dx = np.empty_like(x)
    dweight = devices.empty(c, x.dtype, devices.of(x))
    dbias = devices.empty(c, x.dtype, devices.of(x))
    kernel = devices.kernel_for("batch_norm", "backward", x)
    kernel(*_layout(x.shape), dy, x, weight, save_mean, save_invstd, dx, dweight, dbias)
    return dx, dweight, dbias
