"""Differentiable layers and losses with PyTorch's signatures and defaults.

Each wrapper checks its arguments, brings them to the layout the operation
takes and applies one Function from minifw.functions (which reaches its
primitive through the current engine: conv2d, pooling, activations, softmax,
cross_entropy, LRN, batch norm, dropout, and linear as GEMMs plus the bias
gradient, as in Caffe's inner-product layer). Operations with no primitive
(nll_loss, mse_loss and the other elementwise losses, gelu, silu, hardtanh, adaptive
pooling, channel dropout, embedding, pad) are array code in their Function.

Arguments that PyTorch accepts but the primitives cannot honour (dilated
pooling, avg_pool2d's divisor_override, sparse embedding gradients) raise a
ValueError saying so rather than being ignored.

Every argument is checked here, before any Function runs, with the vocabulary of
minifw.checks, so that an error names the function called (max_pool2d, not the
pooling primitive beneath it) and the argument as PyTorch names it. Ints must be
ints (not bools or floats), flags must be bools, and float parameters must be
finite and representable in the input's dtype. PyTorch refuses a value that
overflows the dtype in some functions (elu's alpha, leaky_relu's slope,
hardtanh's bounds, pad's value) and silently gives inf or NaN in others
(local_response_norm, batch_norm's eps): here every one is refused (ValueError).
pad's value may be +-inf (a common fill before a max), as in PyTorch.
"""
import math
import warnings

import numpy as np

from .. import devices
from .. import random as _random
from ..autograd import is_grad_enabled, no_grad
from ..checks import (check_bool, check_choice, check_dim, check_float_dtype_ndim, check_int,
                      check_no_zero_dims, check_pair, check_real, check_size, check_tensor_dtype,
                      is_int)
from ..ops.conv import _cached_problem as _conv_problem
from ..ops.pooling import pool_problem as _pool_problem
from ..engines import current_engine
from ..functions.activation import (Activation, GaussianErrorLinearUnit, HardTanh,
                                    SigmoidLinearUnit)
from ..functions.convolution import Convolution2D
from ..functions.dropout import ChannelDropout, InvertedDropout
from ..functions.embedding import EmbeddingLookup
from ..functions.linear import InnerProduct
from ..functions.normalization import BatchNormalization, LocalResponseNormalization
from ..functions.losses import (AbsoluteError, BinaryCrossEntropy, BinaryCrossEntropyWithLogits,
                                KullbackLeiblerDivergence, SmoothAbsoluteError)
from ..functions.pooling import (AdaptiveAveragePooling2D, AdaptiveMaxPooling2D, AveragePooling2D,
                                 MaxPooling2D)
from ..functions.shape import Padding
from ..functions.softmax import NegativeLogLikelihood, SoftmaxCrossEntropy, SquaredError
from ..functions.softmax import softmax as softmax_along
from ..tensor import Tensor


# ---- argument checks ------------------------------------------------------------------

def _tensor(fn, name, t, *, ndim=None, ndim_desc=None):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a minifw.Tensor, got {type(t).__name__}")
    return check_float_dtype_ndim(fn, name, t, ndim=ndim, ndim_desc=ndim_desc, what="tensor")


def _same_dtype(fn, x, **others):
    for name, t in others.items():
        if t is not None and t.dtype != x.dtype:
            raise TypeError(f"{fn}: {name} has dtype {t.dtype} but input has dtype {x.dtype}; "
                            f"convert one of them (e.g. model.to(input.dtype))")


def _same_device(fn, x, x_name="input", **others):
    """Tensors that reach a Function as keyword arguments (targets, running statistics, indices)
    must be on x's device; Function.apply checks only the positional ones. Anything not a
    Tensor is left to that argument's own check."""
    for name, t in others.items():
        if isinstance(t, Tensor) and t.device != x.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                               f"two devices, {x.device} and {t.device} ({fn}: {name} is on "
                               f"{t.device}, {x_name} on {x.device}); move it with "
                               f"{name}.to({str(x.device)!r})")


def _target(fn, target, shape_desc, expected_shape):
    if not isinstance(target, Tensor):
        raise TypeError(f"{fn}: target must be a minifw.Tensor, got {type(target).__name__}")
    if target.dtype.kind == "f":
        raise TypeError(f"{fn}: target must hold int64 class indices; class-probability "
                        f"(float) targets are not supported, got dtype {target.dtype}")
    if target.dtype.kind not in "iu":
        raise TypeError(f"{fn}: target must have dtype int64, got {target.dtype}")
    if tuple(target.shape) != tuple(expected_shape):
        raise ValueError(f"{fn}: target must have shape {shape_desc} = {tuple(expected_shape)} "
                         f"to match the input; got {tuple(target.shape)}")
    return target.long()


def _reduction(fn, reduction, size_average=None, reduce=None):
    """PyTorch's deprecated size_average/reduce flags, when given, decide the reduction
    (reduction, which they override, must still be one of the choices)."""
    for name, flag in (("size_average", size_average), ("reduce", reduce)):
        if flag is not None:
            check_bool(fn, name, flag)
    check_choice(fn, "reduction", reduction, ("none", "mean", "sum", "batchmean")
                 if fn == "kl_div" else ("none", "mean", "sum"))
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    return check_choice(fn, "reduction", reduction, ("none", "mean", "sum"))


def _real(fn, name, v, input=None, **bounds):
    """A finite real number; with `input`, representable in its dtype (a float parameter
    that overflows float32 would give inf or NaN)."""
    dtype = input.dtype if input is not None and input.dtype.kind == "f" else None
    return check_real(fn, name, v, dtype=dtype, **bounds)


def _ignore_index(fn, ignore_index):
    """An int that fits int64, as PyTorch's (never a bool, a float, a string or None)."""
    return check_int(fn, "ignore_index", ignore_index)


# ---- convolution --------------------------------------------------------------------------

def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of input (N, C, H, W) or (C, H, W) with
    weight (K, C // groups, R, S); padding may also be 'valid' or 'same'."""
    fn = "conv2d"
    _tensor(fn, "input", input, ndim=(3, 4), ndim_desc="3-D (C, H, W) or 4-D (N, C, H, W)")
    _tensor(fn, "weight", weight, ndim=4, ndim_desc="4-D (K, C // groups, R, S)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (K,)")
    _same_dtype(fn, input, weight=weight, bias=bias)
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise ValueError(f"{fn}: bias must have shape ({weight.shape[0]},) to match weight of shape "
                         f"{tuple(weight.shape)}, got {tuple(bias.shape)}")
    check_no_zero_dims(fn, "input", input)
    check_no_zero_dims(fn, "weight", weight)
    stride = check_pair(fn, "stride", stride, minimum=1)
    dilation = check_pair(fn, "dilation", dilation, minimum=1)
    groups = check_size(fn, "groups", groups)
    if not isinstance(padding, str):
        padding = check_pair(fn, "padding", padding, minimum=0)
    if input.shape[-3] != weight.shape[1] * groups:
        raise ValueError(f"{fn}: input must have {weight.shape[1] * groups} channels to match "
                         f"weight of shape {tuple(weight.shape)} with groups={groups}; got input "
                         f"of shape {tuple(input.shape)}")
    if input.ndim == 3:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    if isinstance(padding, str):
        padding, input = _string_padding(fn, input, weight, padding, stride, dilation)
        padding = check_pair(fn, "padding", padding, minimum=0)
    # The problem's own checks (output size, sizes the native library can index), naming conv2d.
    _conv_problem(fn, tuple(input.shape), tuple(weight.shape), stride, padding, dilation, groups,
                  input.dtype)
    return Convolution2D.apply(input, weight, bias, stride=stride, padding=padding,
                               dilation=dilation, groups=groups)


def _string_padding(fn, input, weight, padding, stride, dilation):
    """'valid' is no padding; 'same' keeps H and W (stride 1), padding the odd extra on the
    bottom/right as PyTorch does."""
    if padding == "valid":
        return 0, input
    if padding != "same":
        raise ValueError(f"{fn}: padding must be an int, a pair of ints, 'valid' or 'same'; "
                         f"got {padding!r}")
    if stride != (1, 1):
        raise ValueError(f"{fn}: padding='same' needs stride 1, got stride={stride!r}")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    if all(t % 2 == 0 for t in totals):
        return tuple(t // 2 for t in totals), input
    th, tw = totals
    input = pad(input, (tw // 2, tw - tw // 2, th // 2, th - th // 2))
    return 0, input


# ---- pooling ------------------------------------------------------------------------------

def _no_pool_dilation(fn, dilation):
    """Refuse what the pooling primitive cannot do (the layer refuses it when built)."""
    if check_pair(fn, "dilation", dilation, minimum=1) != (1, 1):
        raise ValueError(f"{fn}: the pooling primitive has no dilation; dilation must be 1, "
                         f"got {dilation!r}")


def _no_divisor_override(fn, divisor_override):
    if divisor_override is not None:
        raise ValueError(f"{fn}: the pooling primitive has no divisor_override; it must be None, "
                         f"got {divisor_override!r}")


def _pool_input(fn, input, nonempty=True):
    _tensor(fn, "input", input, ndim=(3, 4), ndim_desc="3-D (C, H, W) or 4-D (N, C, H, W)")
    return check_no_zero_dims(fn, "input", input) if nonempty else input


def _pool_args(fn, input, kernel_size, stride, padding, mode, ceil_mode, count_include_pad):
    """The pooling arguments as the primitive takes them, checked here (with the problem's
    own checks: output size, sizes it can index) so that errors name `fn`."""
    kernel_size = check_pair(fn, "kernel_size", kernel_size, minimum=1)
    stride = None if stride is None else check_pair(fn, "stride", stride, minimum=1)
    padding = check_pair(fn, "padding", padding, minimum=0)
    ceil_mode = check_bool(fn, "ceil_mode", ceil_mode)
    count_include_pad = check_bool(fn, "count_include_pad", count_include_pad)
    _pool_problem(fn, (1,) * (4 - input.ndim) + tuple(input.shape), kernel_size, stride, padding,
                  mode, ceil_mode, count_include_pad, input.dtype)
    return dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kernel_size windows; stride defaults to kernel_size. With
    return_indices, also the int64 index h * W + w of each maximum in its input plane."""
    fn = "max_pool2d"
    _pool_input(fn, input)
    _no_pool_dilation(fn, dilation)
    args = _pool_args(fn, input, kernel_size, stride, padding, "max", ceil_mode, True)
    return_indices = check_bool(fn, "return_indices", return_indices)
    if input.ndim == 3:
        out = MaxPooling2D.apply(input.unsqueeze(0), return_indices=return_indices, **args)
        return (out[0].squeeze(0), out[1].squeeze(0)) if return_indices else out.squeeze(0)
    return MaxPooling2D.apply(input, return_indices=return_indices, **args)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kernel_size windows; stride defaults to kernel_size."""
    fn = "avg_pool2d"
    _pool_input(fn, input)
    _no_divisor_override(fn, divisor_override)
    args = _pool_args(fn, input, kernel_size, stride, padding, "avg", ceil_mode, count_include_pad)
    args["count_include_pad"] = check_bool(fn, "count_include_pad", count_include_pad)
    if input.ndim == 3:
        return AveragePooling2D.apply(input.unsqueeze(0), **args).squeeze(0)
    return AveragePooling2D.apply(input, **args)


def _adaptive_output_size(fn, output_size, input):
    """output_size (an int, or a pair whose entries may be None: keep that input size) as a
    pair of ints."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise ValueError(f"{fn}: output_size must be an int or a pair (out_h, out_w), got "
                             f"{output_size!r}")
        sizes = tuple(output_size)
    elif is_int(output_size) or output_size is None:
        sizes = (output_size, output_size)
    else:
        raise TypeError(f"{fn}: output_size must be an int or a pair (out_h, out_w) of ints or "
                        f"None, got {type(output_size).__name__} {output_size!r}")
    out = []
    for size, keep in zip(sizes, input.shape[-2:]):
        if size is None:
            size = keep
        if not is_int(size):
            raise TypeError(f"{fn}: output_size entries must be ints or None, got {output_size!r}")
        if size < 1:
            raise ValueError(f"{fn}: output_size entries must be positive ints or None, got "
                             f"{output_size!r}")
        if size > 2 ** 58:
            raise ValueError(f"{fn}: output_size entries must be at most 2**58, got {output_size!r}")
        out.append(int(size))
    return tuple(out)


def _too_large(fn, name, value, shape, dtype):
    """The MemoryError of a valid request for an output larger than can be allocated, naming
    the argument that asked for it (NumPy's own names only the array it failed to make)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    return MemoryError(f"{fn}: {name}={value!r} asks for an output of shape {tuple(shape)} "
                       f"({nbytes} bytes), more than can be allocated")


def _adaptive_input(fn, input):
    _pool_input(fn, input, nonempty=False)  # a batch of 0 is pooled (to an empty batch)
    if 0 in input.shape[-3:]:
        raise ValueError(f"{fn}: input must have non-zero sizes in its (C, H, W) dims; got "
                         f"shape {tuple(input.shape)}")


def adaptive_avg_pool2d(input, output_size):
    """Mean over output_size windows that tile the input's H and W as evenly as they can:
    window i spans [floor(i * H / out_h), ceil((i + 1) * H / out_h)), likewise along W.
    output_size: an int or (out_h, out_w); None keeps that input size."""
    fn = "adaptive_avg_pool2d"
    _adaptive_input(fn, input)
    size = _adaptive_output_size(fn, output_size, input)
    if input.ndim == 3:
        return adaptive_avg_pool2d(input.unsqueeze(0), size).squeeze(0)
    try:
        return AdaptiveAveragePooling2D.apply(input, output_size=size)
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, input.shape[:-2] + size, input.dtype) from None


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over the windows of adaptive_avg_pool2d; with return_indices, also the int64
    index h * W + w of each maximum in its input plane (as max_pool2d's)."""
    fn = "adaptive_max_pool2d"
    _adaptive_input(fn, input)
    size = _adaptive_output_size(fn, output_size, input)
    return_indices = check_bool(fn, "return_indices", return_indices)
    if input.ndim == 3:
        out = adaptive_max_pool2d(input.unsqueeze(0), size, return_indices)
        return (out[0].squeeze(0), out[1].squeeze(0)) if return_indices else out.squeeze(0)
    try:
        return AdaptiveMaxPooling2D.apply(input, output_size=size, return_indices=return_indices)
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, input.shape[:-2] + size, input.dtype) from None


# ---- activations ----------------------------------------------------------------------------

def _activation(fn, input, mode, inplace=False, **params):
    _tensor(fn, "input", input)
    inplace = check_bool(fn, "inplace", inplace)
    for name, v in params.items():
        params[name] = _real(fn, name, v, input)
    if inplace and not (is_grad_enabled() and input.requires_grad) and devices.is_writeable(input._data) \
            and input._data.flags.c_contiguous:
        # In place only where no graph is recorded: autograd keeps no version counters, so
        # overwriting an array an earlier Function saved would go unnoticed.
        current_engine().activation_forward(input._data, mode, inplace=True, **params)
        return input
    return Activation.apply(input, mode=mode, **params)


def relu(input, inplace=False):
    return _activation("relu", input, "relu", inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _activation("leaky_relu", input, "leaky_relu", inplace, negative_slope=negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return _activation("elu", input, "elu", inplace, alpha=alpha)


def sigmoid(input):
    return _activation("sigmoid", input, "sigmoid")


def tanh(input):
    return _activation("tanh", input, "tanh")


def _in_place(input, out):
    """Write out into input where PyTorch's inplace=True would: only where no graph is
    recorded (see _activation)."""
    if not (is_grad_enabled() and input.requires_grad) and devices.is_writeable(input._data):
        input._data[...] = out._data
        return input
    return out


def gelu(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF (computed with erf); approximate='tanh' uses
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    fn = "gelu"
    _tensor(fn, "input", input)
    check_choice(fn, "approximate", approximate, ("none", "tanh"))
    return GaussianErrorLinearUnit.apply(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (also called swish)."""
    _tensor("silu", "input", input)
    inplace = check_bool("silu", "inplace", inplace)
    out = SigmoidLinearUnit.apply(input)
    return _in_place(input, out) if inplace else out


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clipped to [min_val, max_val]; the gradient passes strictly between them."""
    fn = "hardtanh"
    _tensor(fn, "input", input)
    min_val, max_val = _real(fn, "min_val", min_val, input), _real(fn, "max_val", max_val, input)
    inplace = check_bool(fn, "inplace", inplace)
    if max_val < min_val:
        raise ValueError(f"{fn}: max_val cannot be less than min_val, got min_val={min_val} and "
                         f"max_val={max_val}")
    out = HardTanh.apply(input, min_val=min_val, max_val=max_val)
    return _in_place(input, out) if inplace else out


def relu6(input, inplace=False):
    """min(max(0, x), 6): hardtanh(input, 0, 6)."""
    _tensor("relu6", "input", input)
    return hardtanh(input, 0.0, 6.0, check_bool("relu6", "inplace", inplace))


# ---- softmax -----------------------------------------------------------------------------

def _softmax(fn, input, dim, dtype, log, stacklevel):
    _tensor(fn, "input", input)
    if dtype is not None:
        input = input.to(check_tensor_dtype(dtype, fn))
    if dim is None:  # PyTorch's legacy choice when dim is omitted, and its warning
        dim = 0 if input.ndim in (0, 1, 3) else 1
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call "
                      f"to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return softmax_along(input, check_dim(fn, dim, max(input.ndim, 1)), log=log)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax("softmax", input, dim, dtype, False, _stacklevel)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax("log_softmax", input, dim, dtype, True, _stacklevel)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input, dim)."""
    _tensor("softmin", "input", input)
    return _softmax("softmin", -input, dim, dtype, False, _stacklevel)


# ---- losses ------------------------------------------------------------------------------

def _class_layout(fn, input, target):
    """Bring input (C,), (N, C) or (N, C, d1, ..., dk) and its target to the primitive's
    (N, C) / (N, C, H, W) layouts; returns them and the shape of a per-element loss."""
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must have a class dim: (C,), (N, C) or (N, C, d1, ...); "
                         f"got a 0-d tensor")
    if input.ndim == 1:
        target = _target(fn, target, "()", ())
        return input.reshape(1, -1), target.reshape(1), ()
    n, c, rest = input.shape[0], input.shape[1], input.shape[2:]
    target = _target(fn, target, "(N, d1, ...)" if rest else "(N,)", (n,) + rest)
    if input.ndim in (2, 4):
        return input, target, target.shape
    spatial = int(np.prod(rest))
    return input.reshape(n, c, spatial, 1), target.reshape(n, spatial, 1), target.shape


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim followed by nll_loss, in one primitive.
    input: logits (N, C), (C,) or (N, C, d1, ...); target: int64 class indices;
    weight: optional per-class weights (C,)."""
    fn = "cross_entropy"
    _tensor(fn, "input", input)
    reduction = _reduction(fn, reduction, size_average, reduce)
    ignore_index = _ignore_index(fn, ignore_index)
    label_smoothing = _real(fn, "label_smoothing", label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {label_smoothing}")
    logits, target2, loss_shape = _class_layout(fn, input, target)
    _same_device(fn, input, target=target, weight=weight)
    _class_targets(fn, target2._data, logits.shape[1], ignore_index)
    if weight is None:
        loss = SoftmaxCrossEntropy.apply(logits, target=target2._data, ignore_index=ignore_index,
                                  label_smoothing=label_smoothing, reduction=reduction)
    else:
        _class_weight(fn, weight, input, logits.shape[1])
        loss = _weighted_cross_entropy(logits, target2, weight, ignore_index, reduction,
                                       label_smoothing)
    return loss.reshape(loss_shape) if reduction == "none" else loss


def _class_targets(fn, t, c, ignore_index):
    """Every target a class index in [0, c) or ignore_index (checked here, so that the
    error names `fn` rather than the primitive)."""
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise ValueError(f"{fn}: target values must be class indices in [0, {c}) or ignore_index "
                         f"({ignore_index}); got {int(t[bad].flat[0])}")


def _class_weight(fn, weight, input, c):
    _tensor(fn, "weight", weight, ndim=1)
    if weight.shape[0] != c:
        raise ValueError(f"{fn}: weight must have shape ({c},), one per class; got "
                         f"{tuple(weight.shape)}")
    _same_dtype(fn, input, weight=weight)


def _weighted_cross_entropy(logits, target, weight, ignore_index, reduction, label_smoothing):
    """The fused primitive has no class weights: log_softmax (a primitive), the weighted
    nll_loss, and PyTorch's weighted smoothing term eps / C * sum_c w_c * -log p_c for
    each kept target, which the mean divides by the same sum of w[target] as nll_loss."""
    log_probs = log_softmax(logits, 1)
    loss = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return loss
    c = logits.shape[1]
    keep = target._data != ignore_index
    w = weight.detach().reshape((1, c) + (1,) * (logits.ndim - 2))
    smooth = -(log_probs * w).sum(1) * Tensor._make(keep.astype(logits.dtype))
    if reduction == "mean":
        smooth = smooth.sum() / float(weight._data[target._data[keep]].sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1.0 - label_smoothing) * loss + (label_smoothing / c) * smooth


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    fn = "nll_loss"
    _tensor(fn, "input", input)
    reduction = _reduction(fn, reduction, size_average, reduce)
    ignore_index = _ignore_index(fn, ignore_index)
    log_probs, target2, loss_shape = _class_layout(fn, input, target)
    _same_device(fn, input, target=target, weight=weight)
    c = log_probs.shape[1]
    t = target2._data
    _class_targets(fn, t, c, ignore_index)
    if weight is not None:
        _class_weight(fn, weight, input, c)
    loss = NegativeLogLikelihood.apply(log_probs, target=t, weight=None if weight is None else weight._data,
                         ignore_index=ignore_index, reduction=reduction)
    return loss.reshape(loss_shape) if reduction == "none" else loss


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum, or elementwise) squared difference; shapes broadcast."""
    fn = "mse_loss"
    _tensor(fn, "input", input)
    _tensor(fn, "target", target)
    _same_dtype(fn, input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _regression_shapes(fn, input, target)
    return SquaredError.apply(input, target, reduction=reduction)


def _regression_shapes(fn, input, target):
    """Regression losses broadcast input against target, warning as PyTorch does when their
    shapes differ (a (N,) target against an (N, 1) output is a classic silent bug)."""
    try:
        np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise ValueError(f"{fn}: input of shape {tuple(input.shape)} and target of shape "
                         f"{tuple(target.shape)} do not broadcast") from None
    if input.shape != target.shape:
        warnings.warn(f"{fn}: Using a target size ({tuple(target.shape)}) that is different to "
                      f"the input size ({tuple(input.shape)}). This will likely lead to incorrect "
                      f"results due to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=3)


def _pair_of_tensors(fn, input, target):
    _tensor(fn, "input", input)
    _tensor(fn, "target", target)
    _same_dtype(fn, input, target=target)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum, or elementwise) absolute difference; shapes broadcast."""
    fn = "l1_loss"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _regression_shapes(fn, input, target)
    return AbsoluteError.apply(input, target, reduction=reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, for d = input - target (the L1
    loss when beta = 0); shapes broadcast."""
    fn = "smooth_l1_loss"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    beta = _real(fn, "beta", beta, input)
    if beta < 0:
        raise ValueError(f"{fn}: beta must be >= 0 (smooth_l1_loss does not support negative "
                         f"values for beta), got {beta}")
    _regression_shapes(fn, input, target)
    return SmoothAbsoluteError.apply(input, target, beta=beta, reduction=reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target;
    shapes broadcast. Equals delta * smooth_l1_loss(input, target, beta=delta)."""
    fn = "huber_loss"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction)
    delta = _real(fn, "delta", delta, input)
    if delta <= 0:
        raise ValueError(f"{fn}: delta must be > 0, got {delta}")
    _regression_shapes(fn, input, target)
    return SmoothAbsoluteError.apply(input, target, beta=delta, huber=True, reduction=reduction)


def _same_shape(fn, input, target):
    if input.shape != target.shape:
        raise ValueError(f"{fn}: target must have the same shape as input, {tuple(input.shape)}; "
                         f"got {tuple(target.shape)}")


def _loss_weight(fn, name, weight, input):
    """A constant weight tensor that broadcasts to input's shape (its data, or None)."""
    if weight is None:
        return None
    _tensor(fn, name, weight)
    _same_dtype(fn, input, **{name: weight})
    _same_device(fn, input, **{name: weight})
    try:
        fits = np.broadcast_shapes(weight.shape, input.shape) == tuple(input.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{fn}: {name} of shape {tuple(weight.shape)} must broadcast to the "
                         f"input's shape {tuple(input.shape)}")
    return weight._data


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-weight * (target log(input) + (1 - target) log(1 - input)) of probabilities input
    (each log clamped at -100, as PyTorch); target has input's shape; weight broadcasts to it."""
    fn = "binary_cross_entropy"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _same_shape(fn, input, target)
    w = _loss_weight(fn, "weight", weight, input)
    x = input._data
    if x.size and not bool(((x >= 0) & (x <= 1)).all()):
        raise RuntimeError(f"{fn}: all elements of input should be between 0 and 1 (probabilities; "
                           f"for logits use binary_cross_entropy_with_logits)")
    return BinaryCrossEntropy.apply(input, target, weight=w, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) in a numerically stable form, with
    pos_weight (broadcast along the last dims, e.g. one per class) weighting the positive
    term: -[pos_weight t log s + (1 - t) log(1 - s)], s = sigmoid(input)."""
    fn = "binary_cross_entropy_with_logits"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _same_shape(fn, input, target)
    w = _loss_weight(fn, "weight", weight, input)
    pw = _loss_weight(fn, "pos_weight", pos_weight, input)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight=w, pos_weight=pw,
                                              reduction=reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise Kullback-Leibler divergence target * (log(target) - input) of log-probabilities
    input (target probabilities, or log-probabilities with log_target); shapes broadcast.

    reduction='batchmean' (the sum over the batch divided by its size) is the KL divergence
    of the math; 'mean' divides by the number of elements instead (batch size times the
    number of classes), as PyTorch's does, which warns about it, and so does this."""
    fn = "kl_div"
    _pair_of_tensors(fn, input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(fn, reduction, size_average, reduce)
    check_choice(fn, "reduction", reduction, ("none", "mean", "sum", "batchmean"))
    log_target = check_bool(fn, "log_target", log_target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size. 'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition. 'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    try:
        np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise ValueError(f"{fn}: input of shape {tuple(input.shape)} and target of shape "
                         f"{tuple(target.shape)} do not broadcast") from None
    return KullbackLeiblerDivergence.apply(input, target, log_target=log_target,
                                           reduction=reduction)


# ---- normalization -------------------------------------------------------------------------

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalize each element by its neighbours across `size` channels (AlexNet's LRN)."""
    fn = "local_response_norm"
    _tensor(fn, "input", input)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must be 3-D or more (N, C, ...); got a {input.ndim}-D "
                         f"tensor of shape {tuple(input.shape)}")
    size = check_size(fn, "size", size)
    alpha, beta, k = (_real(fn, "alpha", alpha, input), _real(fn, "beta", beta, input),
                      _real(fn, "k", k, input))
    shape = input.shape
    if shape[1] < 1:
        raise ValueError(f"{fn}: input must have at least one channel, got shape {tuple(shape)}")
    x4 = input if input.ndim == 4 else input.reshape(shape[0], shape[1], -1, 1)
    y = LocalResponseNormalization.apply(x4, size=size, alpha=alpha, beta=beta, k=k)
    return y if input.ndim == 4 else y.reshape(shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalize each channel of input (N, C), (N, C, L) or (N, C, H, W). In training the
    batch statistics are used and running_mean/running_var (when given) updated in place."""
    fn = "batch_norm"
    _tensor(fn, "input", input, ndim=(2, 3, 4), ndim_desc="2-D (N, C), 3-D (N, C, L) or 4-D "
            "(N, C, H, W)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None:
            _tensor(fn, name, t, ndim=1)
            if t.shape[0] != c:
                raise ValueError(f"{fn}: {name} must have shape ({c},), one value per channel of "
                                 f"input {tuple(input.shape)}; got {tuple(t.shape)}")
    _same_dtype(fn, input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    _same_device(fn, input, running_mean=running_mean, running_var=running_var, weight=weight,
                 bias=bias)
    training = check_bool(fn, "training", training)
    if training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and not devices.is_writeable(t._data):
                raise ValueError(f"{fn}: {name} is updated in place in training, so it must be "
                                 f"writable; got a read-only tensor (an expanded view?)")
    momentum = _real(fn, "momentum", momentum, minimum=0.0, maximum=1.0)
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    if c < 1:
        raise ValueError(f"{fn}: input must have at least one channel, got shape "
                         f"{tuple(input.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: give both running_mean and running_var, or neither")
    if not training and running_mean is None:
        raise ValueError(f"{fn}: evaluation (training=False) needs running_mean and running_var")
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(f"{fn}: expected more than 1 value per channel when training, got "
                             f"input of shape {tuple(input.shape)}")
    shape = input.shape
    x4 = input.reshape(shape + (1,) * (4 - input.ndim))
    # The primitive updates C-contiguous statistics in place: a strided view (a slice of a
    # larger tensor) is updated through a contiguous copy, written back after.
    stats = [None if t is None else t._data if t._data.flags.c_contiguous else t._data.copy()
             for t in (running_mean, running_var)]
    y = BatchNormalization.apply(x4, weight, bias, running_mean=stats[0], running_var=stats[1],
                                 training=training, momentum=momentum, eps=eps)
    for t, updated in zip((running_mean, running_var), stats):
        if training and t is not None and updated is not t._data:
            t._data[...] = updated
    return y.reshape(shape)


# ---- dropout -------------------------------------------------------------------------------

def _probability(fn, p):
    """p as a float in [0, 1] (nn.Dropout checks its p with this when built)."""
    p = _real(fn, "p", p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: p must be a probability in [0, 1], got {p}")
    return p


def _dropout_flags(fn, training, inplace):
    return check_bool(fn, "training", training), check_bool(fn, "inplace", inplace)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p), in training.
    The mask's seed comes from minifw's global generator (minifw.manual_seed)."""
    fn = "dropout"
    _tensor(fn, "input", input)
    p = _probability(fn, p)
    training, inplace = _dropout_flags(fn, training, inplace)
    if not training or p == 0.0:
        return input
    out = InvertedDropout.apply(input, p=p, seed=_random.default_generator.random_seed())
    if inplace and not (is_grad_enabled() and input.requires_grad):
        input._data[...] = out._data
        return input
    return out


def _channel_dropout(fn, input, p, training, inplace, unbatched=False):
    p = _probability(fn, p)
    training, inplace = _dropout_flags(fn, training, inplace)
    if not training or p == 0.0:
        return input
    seed = _random.default_generator.random_seed()
    if unbatched:  # (C, ...): one sample
        out = ChannelDropout.apply(input.unsqueeze(0), p=p, seed=seed).squeeze(0)
    else:
        out = ChannelDropout.apply(input, p=p, seed=seed)
    return _in_place(input, out) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or unbatched (C, L) input with probability p, scaling
    the kept ones by 1 / (1 - p), in training."""
    fn = "dropout1d"
    _tensor(fn, "input", input, ndim=(2, 3), ndim_desc="2-D (C, L) or 3-D (N, C, L)")
    return _channel_dropout(fn, input, p, training, inplace, unbatched=input.ndim == 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (feature maps input[n, c]) of (N, C, H, W) input with probability
    p, scaling the kept ones by 1 / (1 - p), in training (Tompson et al., 2015: neighbouring
    pixels are correlated, so dropping single ones barely regularizes).

    As PyTorch's, a 3-D input is taken as (N, C, L), with PyTorch's warning, and inputs of
    other ranks (2-D and up) drop input[n, c] slices with a warning too."""
    fn = "dropout2d"
    _tensor(fn, "input", input)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", UserWarning, stacklevel=2)
    elif input.ndim != 4:
        if input.ndim < 2:
            raise ValueError(f"{fn}: input must have a channel dim, (N, C, H, W); got a "
                             f"{input.ndim}-D tensor of shape {tuple(input.shape)}")
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension "
                      f"(i.e. 3D or 4D inputs).", UserWarning, stacklevel=2)
    return _channel_dropout(fn, input, p, training, inplace)


# ---- linear, embedding ---------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input (*, in_features) @ weight (out_features, in_features)^T + bias (out_features,)."""
    fn = "linear"
    _tensor(fn, "input", input)
    _tensor(fn, "weight", weight, ndim=2, ndim_desc="2-D (out_features, in_features)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (out_features,)")
        if bias.shape[0] != weight.shape[0]:
            raise ValueError(f"{fn}: bias must have shape ({weight.shape[0]},) to match weight "
                             f"{tuple(weight.shape)}; got {tuple(bias.shape)}")
    _same_dtype(fn, input, weight=weight, bias=bias)
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"{fn}: input's last dim must be in_features = {weight.shape[1]} to match "
                         f"weight {tuple(weight.shape)}; got input of shape {tuple(input.shape)}")
    lead = input.shape[:-1]
    y = InnerProduct.apply(input.reshape(-1, weight.shape[1]), weight, bias)
    return y if len(lead) == 1 else y.reshape(lead + (weight.shape[0],))


def _padding_index(fn, padding_idx, n):
    """padding_idx in [-n, n) as an index in [0, n) (nn.Embedding checks it when built)."""
    padding_idx = check_int(fn, "padding_idx", padding_idx)
    if not -n <= padding_idx < n:
        raise ValueError(f"{fn}: padding_idx must be in [-{n}, {n - 1}], got {padding_idx}")
    return padding_idx % n


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of weight (num_embeddings, embedding_dim) picked by int64 indices of any shape."""
    fn = "embedding"
    _tensor(fn, "weight", weight, ndim=2, ndim_desc="2-D (num_embeddings, embedding_dim)")
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(f"{fn}: input must be an int64 tensor of indices, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if check_bool(fn, "sparse", sparse):
        raise ValueError(f"{fn}: sparse gradients are not supported; sparse must be False")
    scale_grad_by_freq = check_bool(fn, "scale_grad_by_freq", scale_grad_by_freq)
    norm_type = _real(fn, "norm_type", norm_type, weight)
    if max_norm is not None:
        max_norm = _real(fn, "max_norm", max_norm, weight, minimum=0.0)
    _same_device(fn, weight, "weight", input=input)
    n = weight.shape[0]
    idx = input._data.astype(np.int64, copy=False)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)].flat[0]
        raise IndexError(f"{fn}: input holds index {bad}, which is out of range for {n} embeddings "
                         f"(the rows of weight)")
    idx = idx % n  # negative indices count from the end, as in NumPy
    if padding_idx is not None:
        padding_idx = _padding_index(fn, padding_idx, n)
    if max_norm is not None:
        with no_grad():  # PyTorch renormalizes the looked-up rows of weight in place
            rows = np.unique(idx)
            norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
            too_long = norms > max_norm
            weight._data[rows[too_long]] *= (max_norm / (norms[too_long] + 1e-7))[:, None]
    return EmbeddingLookup.apply(weight, indices=idx, padding_idx=padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq)


# ---- shapes --------------------------------------------------------------------------------

def flatten(input, start_dim=0, end_dim=-1):
    """input with dims start_dim..end_dim merged into one; a 0-d input becomes 1-D. A
    zero-size input flattens too: (0, 3, 8, 8) from dim 1 is (0, 192), as in PyTorch."""
    fn = "flatten"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a minifw.Tensor, got {type(input).__name__}")
    start_dim, end_dim = check_int(fn, "start_dim", start_dim), check_int(fn, "end_dim", end_dim)
    ndim = max(input.ndim, 1)
    s, e = check_dim(fn, start_dim, ndim, "start_dim"), check_dim(fn, end_dim, ndim, "end_dim")
    if s > e:
        raise ValueError(f"{fn}: start_dim ({start_dim}) must not come after end_dim ({end_dim})")
    if input.ndim == 0:
        return input.reshape(1)
    shape = tuple(input.shape)
    return input.reshape(shape[:s] + (int(np.prod(shape[s:e + 1], dtype=np.int64)),) + shape[e + 1:])


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...), last dim first.
    mode: 'constant' (with value, default 0), 'reflect', 'replicate' or 'circular'."""
    fn = "pad"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a minifw.Tensor, got {type(input).__name__}")
    if not isinstance(pad, (tuple, list)) or len(pad) % 2:
        raise ValueError(f"{fn}: pad must be a tuple of an even number of ints, got {pad!r}")
    for p in pad:
        if not is_int(p):
            raise TypeError(f"{fn}: pad must be a tuple of an even number of ints, got {pad!r} "
                            f"(an element of type {type(p).__name__})")
        if abs(p) > 2 ** 58:
            raise ValueError(f"{fn}: pad entries must be in [-2**58, 2**58], got {pad!r}")
    if len(pad) // 2 > input.ndim:
        raise ValueError(f"{fn}: pad {tuple(pad)} pads {len(pad) // 2} dims but input has only "
                         f"{input.ndim}")
    check_choice(fn, "mode", mode, ("constant", "reflect", "replicate", "circular"))
    if value is not None:
        # +-inf is a fill PyTorch takes (e.g. before a max); a finite value must fit the dtype.
        value = check_real(fn, "value", value, finite=False,
                           dtype=input.dtype if input.dtype.kind == "f" else None)
        if input.dtype.kind != "f" and not (math.isfinite(value) and value == int(value)):
            raise ValueError(f"{fn}: value must be a whole number for input of dtype "
                             f"{input.dtype}, got {value!r}")
        if input.dtype.kind in "iu" and not (np.iinfo(input.dtype).min <= value <= np.iinfo(input.dtype).max):
            raise ValueError(f"{fn}: value must fit input's dtype {input.dtype}, got {value!r}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"{fn}: value only applies to mode='constant', got value={value!r} with "
                         f"mode={mode!r}")
    try:  # a pad of 2**31 is a valid request, for more memory than there may be
        sources = []
        for i in range(len(pad) // 2):
            axis = input.ndim - 1 - i
            left, right = int(pad[2 * i]), int(pad[2 * i + 1])
            n = input.shape[axis]
            if n + left + right <= 0:
                raise ValueError(f"{fn}: pad {tuple(pad)} leaves dim {axis} (size {n}) empty")
            if n == 0 and mode != "constant":
                raise ValueError(f"{fn}: mode={mode!r} needs a non-empty dim to copy from; dim {axis} "
                                 f"has size 0 (only mode='constant' pads it)")
            positions = np.arange(-left, n + right)
            if mode == "constant":
                src = np.where((positions >= 0) & (positions < n), positions, -1)
            elif mode == "replicate":
                src = np.clip(positions, 0, n - 1)
            elif mode == "circular":
                if max(left, right) > n:
                    raise ValueError(f"{fn}: circular padding of dim {axis} needs pad <= its size {n}")
                src = positions % n
            else:  # reflect: mirror without repeating the edge element
                if max(left, right) >= n:
                    raise ValueError(f"{fn}: reflect padding of dim {axis} needs pad < its size {n}, "
                                     f"got {(left, right)}")
                period = 2 * (n - 1)
                src = np.abs((positions + period) % period if period else positions * 0)
                src = np.where(src >= n, period - src, src)
            sources.append((axis, src.astype(np.int64)))
        if input.dtype.kind != "f" and input.requires_grad:
            raise TypeError(f"{fn}: input must be floating point to carry a gradient")
        return Padding.apply(input, sources=sources, value=0.0 if value is None else value)
    except MemoryError:
        out_shape = list(input.shape)
        for i in range(len(pad) // 2):
            out_shape[input.ndim - 1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
        raise _too_large(fn, "pad", pad, out_shape, input.dtype) from None
