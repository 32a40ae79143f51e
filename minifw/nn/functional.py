"""Differentiable layers and losses with PyTorch's signatures and defaults.

Each wrapper checks its arguments, brings them to the layout the operation
takes and applies one Function from minifw.functions (which reaches its
primitive through the current engine: conv2d, pooling, activations, softmax,
cross_entropy, LRN, batch norm, dropout, and linear as GEMMs plus the bias
gradient, as in Caffe's inner-product layer). Operations with no primitive
(nll_loss, mse_loss and the other elementwise losses, gelu, silu, hardtanh, adaptive
pooling, channel dropout, embedding, pad) are array code in their Function.

Arguments that PyTorch accepts but the primitives cannot honour (dilated
pooling, sparse embedding gradients) raise a ValueError saying so rather than
being ignored.

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
from ..autograd import Function, no_grad, rename
from ..checks import (check_bool, check_choice, check_dim, check_float_dtype_ndim, check_int,
                      check_ints, check_no_zero_dims, check_pair, check_real, check_size,
                      check_tensor_dtype, is_int, MAX_SIZE)
from ..ops.conv import _cached_problem as _conv_problem
from ..ops.geometry import window_out_size
from ..ops.pooling import MAX_DILATION, first_empty_window, pool_problem as _pool_problem
from ..engines import current_engine
from ..functions.activation import (Activation, GaussianErrorLinearUnit, HardSigmoid, HardSwish,
                                    HardTanh, LogSigmoid, Mish, ScaledExponentialLinear, Shrink,
                                    SigmoidLinearUnit, SmoothRectifier, Threshold)
from ..functions.convolution import Convolution2D, TransposedConvolution2D
from ..functions.dropout import ChannelDropout, InvertedDropout
from ..functions.embedding import BagReduction, EmbeddingLookup
from ..functions.interpolation import Interpolation
from ..functions.linear import InnerProduct
from ..functions.normalization import (BatchNormalization, LayerNormalization,
                                       LocalResponseNormalization, LpNormalization, VectorCosine)
from ..functions.losses import (AbsoluteError, BinaryCrossEntropy, BinaryCrossEntropyWithLogits,
                                ConnectionistTemporalClassification, KullbackLeiblerDivergence,
                                SmoothAbsoluteError)
from ..functions.pooling import (AdaptiveAveragePooling2D, AdaptiveMaxPooling2D, AveragePooling2D,
                                 MaxPooling2D, adaptive_windows)
from ..functions.sampling import Folding, GridSampling, Unfolding
from ..functions.shape import Padding
from ..functions.softmax import NegativeLogLikelihood, SoftmaxCrossEntropy, SquaredError
from ..functions.softmax import softmax as softmax_along
from ..tensor import Tensor, cat, einsum, get_default_dtype, stack, where


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


def _transposed_channels(fn, input, weight, bias, groups, layout):
    """A transposed convolution's weight (C_in, C_out // groups, *kernel) against input's
    channels (the dim before the spatial ones), groups and bias; returns C_out."""
    c_in = weight.shape[0]
    if c_in % groups:
        raise ValueError(f"{fn}: weight.shape[0] (the input channels, {c_in}) must be divisible by "
                         f"groups={groups}; got weight of shape {tuple(weight.shape)}")
    if input.shape[1 - weight.ndim] != c_in:
        raise ValueError(f"{fn}: input must have {c_in} channels to match weight of shape "
                         f"{tuple(weight.shape)} {layout}; got input of shape {tuple(input.shape)}")
    c_out = weight.shape[1] * groups
    if bias is not None and bias.shape[0] != c_out:
        raise ValueError(f"{fn}: bias must have shape ({c_out},) to match weight of shape "
                         f"{tuple(weight.shape)} with groups={groups}; got {tuple(bias.shape)}")
    return c_out


def _per_dim(v):
    return v if isinstance(v, tuple) else (v,)


def _check_output_padding(fn, output_padding, stride, dilation):
    """output_padding < stride or < dilation in every dim (ints or tuples alike)."""
    if any(op >= s and op >= d for op, s, d in zip(_per_dim(output_padding), _per_dim(stride),
                                                     _per_dim(dilation))):
        raise ValueError(f"{fn}: output_padding must be smaller than either stride or dilation, "
                         f"got output_padding={output_padding}, stride={stride}, "
                         f"dilation={dilation}")


def _check_conv_channels(fn, input, weight, bias, groups):
    """A convolution's channels: bias matches the output channels (weight.shape[0]), which
    groups divides, and the input's channels (the dim before the spatial ones) are
    weight.shape[1] * groups."""
    k = weight.shape[0]
    if bias is not None and bias.shape[0] != k:
        raise ValueError(f"{fn}: bias must have shape ({k},) to match weight of shape "
                         f"{tuple(weight.shape)}, got {tuple(bias.shape)}")
    if k % groups:
        raise ValueError(f"{fn}: weight.shape[0] (the output channels, {k}) must be divisible by "
                         f"groups={groups}; got weight of shape {tuple(weight.shape)}")
    if input.shape[1 - weight.ndim] != weight.shape[1] * groups:
        raise ValueError(f"{fn}: input must have {weight.shape[1] * groups} channels to match "
                         f"weight of shape {tuple(weight.shape)} with groups={groups}; got input "
                         f"of shape {tuple(input.shape)}")


def _transposed_output_size(fn, input, weight, stride, padding, dilation, output_padding):
    """The output size of a transposed convolution per spatial dim, (size - 1) * stride -
    2 * padding + dilation * (k - 1) + output_padding + 1 (the arguments per dim, or ints for
    1-D), refused below 1 or beyond the native library's limits."""
    per = [_per_dim(v) for v in (stride, padding, dilation, output_padding)]
    out = tuple((size - 1) * s - 2 * p + d * (k - 1) + op + 1 for size, s, p, d, k, op in
                zip(input.shape[input.ndim - (weight.ndim - 2):], *per[:3], weight.shape[2:], per[3]))
    if min(out) < 1:
        what = f"length {out[0]}" if len(out) == 1 else f"size {out}"
        raise ValueError(f"{fn}: the output {what} would be < 1 for input of shape "
                         f"{tuple(input.shape)}, weight of shape {tuple(weight.shape)}, "
                         f"stride={stride}, padding={padding}, dilation={dilation} and "
                         f"output_padding={output_padding}; reduce padding")
    _check_transposed_sizes(fn, out, stride, dilation, output_padding)
    return out


def _check_transposed_sizes(fn, out, stride, dilation, output_padding):
    """The limits of the native library (dilation <= 2**30, each output dim <= 2**40), named
    by the arguments that ask for more."""
    if max(_per_dim(dilation)) > 2 ** 30:
        raise ValueError(f"{fn}: dilation must be <= 2**30 (the largest the native library takes), "
                         f"got {dilation}")
    if max(out) > 2 ** 40:
        raise ValueError(f"{fn}: stride={stride}, dilation={dilation} and output_padding="
                         f"{output_padding} ask for an output of size {out}, more than the 2**40 "
                         f"per dim the native library takes")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution ("deconvolution") of input (N, C_in, H, W) or (C_in, H, W)
    with weight (C_in, C_out // groups, kH, kW): the output has C_out channels and
    H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1 rows
    (likewise W_out); output_padding adds rows and columns on one side only."""
    fn = "conv_transpose2d"
    _tensor(fn, "input", input, ndim=(3, 4), ndim_desc="3-D (C_in, H, W) or 4-D (N, C_in, H, W)")
    _tensor(fn, "weight", weight, ndim=4, ndim_desc="4-D (C_in, C_out // groups, kH, kW)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (C_out,)")
    _same_dtype(fn, input, weight=weight, bias=bias)
    check_no_zero_dims(fn, "input", input)
    check_no_zero_dims(fn, "weight", weight)
    stride = check_pair(fn, "stride", stride, minimum=1)
    padding = check_pair(fn, "padding", padding, minimum=0)
    output_padding = check_pair(fn, "output_padding", output_padding, minimum=0)
    dilation = check_pair(fn, "dilation", dilation, minimum=1)
    groups = check_size(fn, "groups", groups)
    c_out = _transposed_channels(fn, input, weight, bias, groups, "(C_in, C_out // groups, kH, kW)")
    _check_output_padding(fn, output_padding, stride, dilation)
    if input.ndim == 3:
        return conv_transpose2d(input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                                groups, dilation).squeeze(0)
    out_hw = _transposed_output_size(fn, input, weight, stride, padding, dilation, output_padding)
    output_shape = (input.shape[0], c_out) + out_hw
    # The convolution it transposes: its checks (sizes the native library can index), naming fn.
    try:
        _conv_problem(fn, output_shape, tuple(weight.shape), stride, padding, dilation, groups,
                      input.dtype)
    except ValueError as e:
        raise ValueError(f"{fn}: stride={stride}, dilation={dilation} and output_padding="
                         f"{output_padding} give an output of {out_hw}, too large: {e}") from None
    return TransposedConvolution2D.apply(input, weight, bias, output_shape=output_shape,
                                         stride=stride, padding=padding, dilation=dilation,
                                         groups=groups)


# ---- pooling ------------------------------------------------------------------------------

def _divisor_override(fn, divisor_override):
    """divisor_override checked: None, or a non-zero int (the layers check it when built)."""
    if divisor_override is not None:
        divisor_override = check_int(fn, "divisor_override", divisor_override)
        if divisor_override == 0:
            raise ValueError(f"{fn}: divisor_override must be non-zero, got 0")
    return divisor_override


def _window_sums(pooled, args, sizes):
    """The sums of avg pooling's windows from their means with the padding counted
    (count_include_pad=True): each mean times its window's count, the window clipped to the
    padded input as PyTorch's divisor is."""
    stride = args["kernel_size"] if args["stride"] is None else args["stride"]
    counts = [np.minimum(np.arange(o) * s - p + k, size + p) - (np.arange(o) * s - p)
              for o, s, p, k, size in zip(pooled.shape[-2:], stride, args["padding"],
                                          args["kernel_size"], sizes)]
    return pooled * _constant(np.outer(*counts), pooled)


def _pool_layer_args(fn, kernel_size, stride, padding, ceil_mode, count_include_pad=True, dilation=1):
    """The pooling arguments' checks that need no input: the layers make them when built, so
    that MaxPool2d(0) fails there rather than at its first forward."""
    kernel_size = check_pair(fn, "kernel_size", kernel_size, minimum=1)
    if stride is not None:
        check_pair(fn, "stride", stride, minimum=1)
    padding = check_pair(fn, "padding", padding, minimum=0)
    check_pair(fn, "dilation", dilation, minimum=1, maximum=MAX_DILATION)
    for axis, k, p in (("height", kernel_size[0], padding[0]), ("width", kernel_size[1], padding[1])):
        if 2 * p > k:
            raise ValueError(f"{fn}: padding must be at most half the kernel size; got "
                             f"padding={padding} with kernel_size={kernel_size} ({axis})")
    check_bool(fn, "ceil_mode", ceil_mode)
    check_bool(fn, "count_include_pad", count_include_pad)


def _pool_input(fn, input, nonempty=True):
    _tensor(fn, "input", input, ndim=(3, 4), ndim_desc="3-D (C, H, W) or 4-D (N, C, H, W)")
    return check_no_zero_dims(fn, "input", input) if nonempty else input


def _pool_args(fn, input, kernel_size, stride, padding, mode, ceil_mode, count_include_pad, dilation=1):
    """The pooling arguments as the primitive takes them, checked here (with the problem's
    own checks: output size, sizes it can index) so that errors name `fn`. The dilation is
    one of max pooling's arguments only."""
    kernel_size = check_pair(fn, "kernel_size", kernel_size, minimum=1)
    stride = None if stride is None else check_pair(fn, "stride", stride, minimum=1)
    padding = check_pair(fn, "padding", padding, minimum=0)
    dilation = check_pair(fn, "dilation", dilation, minimum=1, maximum=MAX_DILATION)
    ceil_mode = check_bool(fn, "ceil_mode", ceil_mode)
    count_include_pad = check_bool(fn, "count_include_pad", count_include_pad)
    _pool_problem(fn, (1,) * (4 - input.ndim) + tuple(input.shape), kernel_size, stride, padding,
                  mode, ceil_mode, count_include_pad, input.dtype, dilation)
    args = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode)
    if mode == "max":
        args["dilation"] = dilation
    return args


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kernel_size windows, their taps dilation apart; stride defaults to
    kernel_size. With return_indices, also the int64 index h * W + w of each maximum in its
    input plane."""
    return _max_pool2d("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool2d(fn, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _pool_input(fn, input)
    args = _pool_args(fn, input, kernel_size, stride, padding, "max", ceil_mode, True, dilation)
    return_indices = check_bool(fn, "return_indices", return_indices)
    if input.ndim == 3:
        out = MaxPooling2D.apply(input.unsqueeze(0), return_indices=return_indices, **args)
        return (out[0].squeeze(0), out[1].squeeze(0)) if return_indices else out.squeeze(0)
    return MaxPooling2D.apply(input, return_indices=return_indices, **args)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kernel_size windows; stride defaults to kernel_size. With divisor_override,
    the window's sum divided by it instead."""
    fn = "avg_pool2d"
    _pool_input(fn, input)
    divisor_override = _divisor_override(fn, divisor_override)
    args = _pool_args(fn, input, kernel_size, stride, padding, "avg", ceil_mode, count_include_pad)
    args["count_include_pad"] = check_bool(fn, "count_include_pad", count_include_pad)
    if input.ndim == 3:
        return avg_pool2d(input.unsqueeze(0), kernel_size, stride, padding, ceil_mode,
                          count_include_pad, divisor_override).squeeze(0)
    if divisor_override is None:
        return AveragePooling2D.apply(input, **args)
    args["count_include_pad"] = True
    sums = _window_sums(AveragePooling2D.apply(input, **args), args, input.shape[-2:])
    return sums / _constant(divisor_override, sums)


def _adaptive_output_size(fn, output_size, input):
    """output_size (an int, or a pair whose entries may be None: keep that input size) as a
    pair of ints. With input None (a layer being built), only output_size itself is checked
    (None entries stay None)."""
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
    for size, keep in zip(sizes, (None, None) if input is None else input.shape[-2:]):
        if size is None:
            if keep is None:
                out.append(None)
                continue
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
    return _adaptive_max_pool2d("adaptive_max_pool2d", input, output_size, return_indices)


def _adaptive_max_pool2d(fn, input, output_size, return_indices=False):
    _adaptive_input(fn, input)
    size = _adaptive_output_size(fn, output_size, input)
    return_indices = check_bool(fn, "return_indices", return_indices)
    if input.ndim == 3:
        out = _adaptive_max_pool2d(fn, input.unsqueeze(0), size, return_indices)
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
    if not inplace:
        return Activation.apply(input, mode=mode, **params)
    _writable_input(fn, input)
    if not input._inplace_records(name=fn, arg="input") and input._data.flags.c_contiguous:
        # Nothing to record (no grad mode, or nothing requires grad): the primitive overwrites
        # the array itself; the version counter steps, so that a Function that saved this
        # memory earlier refuses its backward, as PyTorch's.
        current_engine().activation_forward(input._data, mode, inplace=True, **params)
        input._version_counter.version += 1
        return input
    # Recorded: the primitive writes y over input's array and the node saves that memory (as
    # PyTorch's relu_ saves its result), so nothing is copied and no second array is kept.
    return _in_place(fn, input, lambda: Activation.apply(
        input, mode=mode, inplace=input._data.flags.c_contiguous, **params))


def relu(input, inplace=False):
    try:  # the float path is the common one: integer tensors are taken up where it refuses them
        return _activation("relu", input, "relu", inplace)
    except TypeError:
        if not _integer_tensor(input):
            raise
        return _integer_activation("relu", input, inplace, Tensor.relu)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _activation("leaky_relu", input, "leaky_relu", inplace, negative_slope=negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return _activation("elu", input, "elu", inplace, alpha=alpha)


def sigmoid(input):
    try:
        return _activation("sigmoid", input, "sigmoid")
    except TypeError:
        if not _integer_tensor(input, bool_too=True):
            raise
        return input.sigmoid()  # in the default float dtype, as torch.sigmoid


def tanh(input):
    try:
        return _activation("tanh", input, "tanh")
    except TypeError:
        if not _integer_tensor(input, bool_too=True):
            raise
        return input.tanh()


def _integer_tensor(input, bool_too=False):
    """Whether input is an integer (or, with bool_too, bool) tensor: the activations that
    PyTorch also computes for them refuse them first on their float path, then take them up."""
    return isinstance(input, Tensor) and input.dtype.kind in ("iub" if bool_too else "iu")


def _integer_activation(fn, input, inplace, compute):
    """An activation of an integer tensor, which keeps its dtype (no gradient to record):
    compute(input), written over input with inplace=True."""
    inplace = check_bool(fn, "inplace", inplace)
    out = compute(input)
    if not inplace:
        return out
    _writable_input(fn, input)
    return input.copy_(out)


def _writable_input(fn, input):
    """inplace=True writes input's memory: refuse memory that cannot take it (an expanded view,
    whose elements share memory, or a read-only array), as PyTorch does."""
    if not devices.is_writeable(input._data):
        raise RuntimeError(f"{fn}: inplace=True writes into input, but input is read-only (an "
                           f"expanded tensor, where more than one element refers to a single "
                           f"memory location, or a read-only array); clone() it first or pass "
                           f"inplace=False")


def _in_place(fn, input, compute):
    """inplace=True: input's memory becomes compute()'s result (a Function of input) through
    Tensor._apply_inplace, as Tensor.relu_: in grad mode with input requiring grad autograd
    records it (input's grad_fn becomes the Function's node, and a leaf that requires grad is
    refused, as PyTorch refuses it); its version counter steps. Returns input."""
    _writable_input(fn, input)
    return input._apply_inplace(fn, compute, arg="input")


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
    if inplace:
        return _in_place("silu", input, lambda: SigmoidLinearUnit.apply(input))
    return SigmoidLinearUnit.apply(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clipped to [min_val, max_val]; the gradient passes strictly between them."""
    return _hardtanh("hardtanh", input, min_val, max_val, inplace)


def _hardtanh(fn, input, min_val=-1.0, max_val=1.0, inplace=False):
    if _integer_tensor(input):
        return _integer_hardtanh(fn, input, min_val, max_val, inplace)
    _tensor(fn, "input", input)
    min_val, max_val = _real(fn, "min_val", min_val, input), _real(fn, "max_val", max_val, input)
    inplace = check_bool(fn, "inplace", inplace)
    if max_val < min_val:
        raise ValueError(f"{fn}: max_val cannot be less than min_val, got min_val={min_val} and "
                         f"max_val={max_val}")
    if (min_val, max_val) == (0.0, 6.0):  # relu6 (MobileNet's): the activation primitive
        return _activation(fn, input, "relu6", inplace)
    if inplace:
        return _in_place(fn, input, lambda: HardTanh.apply(input, min_val=min_val, max_val=max_val))
    return HardTanh.apply(input, min_val=min_val, max_val=max_val)


def _integer_hardtanh(fn, input, min_val, max_val, inplace):
    """hardtanh of an integer tensor: an integer result, the bounds truncated toward zero
    (-0.5 and 2.5 clip to [0, 2]), as PyTorch's."""
    bounds = []
    for name, v in (("min_val", min_val), ("max_val", max_val)):
        if isinstance(v, Tensor) and v.numel() == 1:
            v = v.item()
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(v):
            raise TypeError(f"{fn}: {name} must be a finite real number, got {type(v).__name__} {v!r}")
        bounds.append(math.trunc(v))
    if bounds[1] < bounds[0]:
        raise ValueError(f"{fn}: max_val cannot be less than min_val, got min_val={min_val} and "
                         f"max_val={max_val}")
    return _integer_activation(fn, input, inplace, lambda x: x.clamp(*bounds))


def relu6(input, inplace=False):
    """min(max(0, x), 6): hardtanh(input, 0, 6)."""
    if _integer_tensor(input):
        return _integer_hardtanh("relu6", input, 0, 6, inplace)
    _tensor("relu6", "input", input)
    return _hardtanh("relu6", input, 0.0, 6.0, check_bool("relu6", "inplace", inplace))


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta elementwise, a smooth ReLU; input itself where
    beta * x > threshold, for numerical stability."""
    fn = "softplus"
    _tensor(fn, "input", input)
    beta = _real(fn, "beta", beta, input)
    threshold = _real(fn, "threshold", threshold, input)
    return SmoothRectifier.apply(input, beta=beta, threshold=threshold)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), with one learnable slope (weight of 1 element) or one
    per channel (dim 1 of input; weight of C elements)."""
    fn = "prelu"
    _tensor(fn, "input", input)
    _tensor(fn, "weight", weight)
    _same_dtype(fn, input, weight=weight)
    if weight.ndim > 1:
        raise ValueError(f"{fn}: weight must be a 0-D or 1-D tensor (one slope, or one per "
                         f"channel); got a {weight.ndim}-D tensor of shape {tuple(weight.shape)}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise ValueError(f"{fn}: weight must have 1 element or one per channel of input (dim 1: "
                         f"{channels}); got weight of shape {tuple(weight.shape)} for input of "
                         f"shape {tuple(input.shape)}")
    if weight.numel() == 1:
        slope = weight.reshape(())
    else:
        slope = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    # x where x > 0, else slope * x: PyTorch's values and gradients exactly (slope at x = 0)
    return where(input > 0, input, input * slope)


# ---- softmax -----------------------------------------------------------------------------

def _softmax_dtype(fn, dtype):
    """softmax's dtype= (the dtype input is cast to first): a floating point dtype, or None."""
    if dtype is None:
        return None
    d = check_tensor_dtype(dtype, fn)
    if d.kind != "f":
        raise TypeError(f"{fn}: dtype must be a floating point dtype (float32 or float64), the "
                        f"dtype input is cast to before the operation; got {d.name}")
    return d


def _softmax(fn, input, dim, dtype, log, stacklevel):
    dtype = _softmax_dtype(fn, dtype)
    if dtype is not None:
        if not isinstance(input, Tensor):
            raise TypeError(f"{fn}: input must be a minifw.Tensor, got {type(input).__name__}")
        input = input.to(dtype)  # as PyTorch: an integer input may be cast to a float dtype
    _tensor(fn, "input", input)
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
    fn = "softmin"
    dtype = _softmax_dtype(fn, dtype)
    if dtype is not None and isinstance(input, Tensor):
        input = input.to(dtype)
    _tensor(fn, "input", input)
    return _softmax(fn, -input, dim, None, False, _stacklevel)


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
    input: logits (N, C), (C,) or (N, C, d1, ...); target: int64 class indices (N,),
    () or (N, d1, ...), or class probabilities of the input's shape (a float tensor);
    weight: optional per-class weights (C,)."""
    fn = "cross_entropy"
    _tensor(fn, "input", input)
    reduction = _reduction(fn, reduction, size_average, reduce)
    ignore_index = _ignore_index(fn, ignore_index)
    label_smoothing = _real(fn, "label_smoothing", label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if isinstance(target, Tensor) and input.ndim and target.shape == input.shape:
        return _cross_entropy_probabilities(fn, input, target, weight, ignore_index, reduction,
                                            label_smoothing)
    if isinstance(target, Tensor) and target.dtype.kind == "f" and input.ndim:
        indices = "()" if input.ndim == 1 else "(N, d1, ...)" if input.ndim > 2 else "(N,)"
        raise TypeError(f"{fn}: target must hold int64 class indices of shape {indices}, or class "
                        f"probabilities of the input's shape {tuple(input.shape)}; got a "
                        f"{target.dtype} target of shape {tuple(target.shape)}")
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


def _cross_entropy_probabilities(fn, input, target, weight, ignore_index, reduction,
                                 label_smoothing):
    """Cross-entropy against class probabilities (a target of the input's shape), PyTorch's
    formula: -sum_c w_c t_c log_softmax(input)_c per sample, with t smoothed to
    t (1 - label_smoothing) + label_smoothing / C; 'mean' divides the sum by the number of
    samples (never by the weights, unlike class-index targets). Gradients reach input, target
    and weight, as PyTorch's."""
    if target.dtype.kind != "f":
        raise TypeError(f"{fn}: a target of the input's shape {tuple(input.shape)} holds class "
                        f"probabilities, so it must be floating point; got dtype {target.dtype}")
    _same_dtype(fn, input, target=target)
    _same_device(fn, input, target=target, weight=weight)
    if ignore_index >= 0:
        raise ValueError(f"{fn}: ignore_index is not supported for class-probability (float) "
                         f"targets; it must be negative (the default is -100), got {ignore_index}")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    terms = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / c
    terms = terms * target
    if weight is not None:
        _class_weight(fn, weight, input, c)
        terms = terms * (weight if input.ndim == 1 else
                         weight.reshape((1, c) + (1,) * (input.ndim - 2)))
    if reduction == "none":
        return -terms.sum(class_dim)
    total = -terms.sum()
    if reduction == "sum":
        return total
    samples = input.numel() // c if c else 0
    return total / samples if samples else total * float("nan")


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


def _lengths(fn, name, lengths, count):
    """input_lengths / target_lengths: a tensor, sequence or (unbatched) int of count values
    >= 0, as a host int64 array."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.kind not in "iu":
            raise TypeError(f"{fn}: {name} must hold integers, got a {lengths.dtype} tensor")
        values = np.asarray(devices.to_device(lengths._data, devices.CPU)).astype(np.int64).reshape(-1)
    else:
        items = [lengths] if is_int(lengths) else list(lengths) if isinstance(lengths, (list, tuple)) else None
        if items is None or not all(is_int(v) for v in items):
            raise TypeError(f"{fn}: {name} must be a tensor or a sequence of ints, got {lengths!r}")
        values = np.asarray(items, dtype=np.int64)
    if values.size != count:
        raise ValueError(f"{fn}: {name} must hold {count} lengths (one per sample), got {values.size}")
    if values.size and values.min() < 0:
        raise ValueError(f"{fn}: {name} must be >= 0, got {values.tolist()}")
    return values


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss of log_probs (T, N, C) (log_softmax
    over C; (T, C) unbatched) against targets (N, S) padded, or 1-D holding every sample's
    target one after another, with per-sample input_lengths (<= T) and target_lengths.
    'mean' divides each sample's loss by its target length (at least 1), then averages
    over the batch. zero_infinity: an impossible alignment gives loss 0 and no gradient."""
    fn = "ctc_loss"
    _tensor(fn, "log_probs", log_probs, ndim=(2, 3), ndim_desc="3-D (T, N, C) or 2-D (T, C)")
    reduction = _reduction(fn, reduction)
    zero_infinity = check_bool(fn, "zero_infinity", zero_infinity)
    batched = log_probs.ndim == 3
    t_max, c = log_probs.shape[0], log_probs.shape[-1]
    n = log_probs.shape[1] if batched else 1
    blank = check_int(fn, "blank", blank)
    if not 0 <= blank < c:
        raise ValueError(f"{fn}: blank must be a class index in [0, {c - 1}], got {blank}")
    if not isinstance(targets, Tensor) or targets.dtype.kind not in "iu":
        raise TypeError(f"{fn}: targets must be an integer tensor, got "
                        f"{getattr(targets, 'dtype', type(targets).__name__)}")
    inputs = _lengths(fn, "input_lengths", input_lengths, n)
    lengths = _lengths(fn, "target_lengths", target_lengths, n)
    if inputs.size and inputs.max() > t_max:
        raise ValueError(f"{fn}: input_lengths must be <= the {t_max} frames of log_probs, got "
                         f"{inputs.tolist()}")
    labels = np.asarray(devices.to_device(targets._data, devices.CPU)).astype(np.int64)
    if batched and labels.ndim == 2:
        if labels.shape[0] != n:
            raise ValueError(f"{fn}: 2-D targets must have one row per sample ({n}), got shape "
                             f"{labels.shape}")
        if lengths.size and lengths.max() > labels.shape[1]:
            raise ValueError(f"{fn}: target_lengths must be <= the {labels.shape[1]} columns of "
                             f"targets, got {lengths.tolist()}")
        padded = labels
    elif labels.ndim == 1:
        if int(lengths.sum()) > labels.size if batched else lengths[0] > labels.size:
            raise ValueError(f"{fn}: targets holds {labels.size} labels, fewer than target_lengths "
                             f"add up to ({int(lengths.sum())})")
        padded = np.zeros((n, int(lengths.max()) if n else 0), np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if batched else np.zeros(1, np.int64)
        for i in range(n):
            padded[i, :lengths[i]] = labels[starts[i]:starts[i] + lengths[i]]
    else:
        raise ValueError(f"{fn}: targets must be 2-D (N, S) or 1-D (concatenated"
                         f"{'' if batched else ', or one unbatched sequence'}), got {labels.ndim}-D")
    within = np.arange(padded.shape[1])[None, :] < lengths[:, None]
    used = padded[within]
    if used.size and (used.min() < 0 or used.max() >= c or (used == blank).any()):
        bad = used[(used < 0) | (used >= c) | (used == blank)][0]
        raise ValueError(f"{fn}: targets must be class indices in [0, {c - 1}] other than blank "
                         f"({blank}), got {int(bad)}")
    padded = np.where(within, padded, blank)  # what lies past a target's length is not read
    lp = log_probs if batched else log_probs.unsqueeze(1)
    losses = ConnectionistTemporalClassification.apply(
        lp, targets=padded, input_lengths=inputs, target_lengths=lengths, blank=blank,
        zero_infinity=zero_infinity)
    if reduction == "mean":
        divisor = Tensor._make(devices.to_device(np.maximum(lengths, 1).astype(log_probs.dtype),
                                                 log_probs.device))
        return (losses / divisor).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.reshape(())


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


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum, or elementwise) squared difference; shapes broadcast. With weight (of
    input's shape), each squared difference times its weight; the mean is then their sum over
    the weights' sum."""
    fn = "mse_loss"
    _tensor(fn, "input", input)
    _tensor(fn, "target", target)
    _same_dtype(fn, input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _regression_shapes(fn, input, target)
    if weight is not None:
        return _weighted_loss(fn, SquaredError.apply(input, target, reduction="none"), weight,
                              input, reduction, by_weight=True)
    return SquaredError.apply(input, target, reduction=reduction)


def _weighted_loss(fn, losses, weight, input, reduction, by_weight):
    """PyTorch's weighted regression losses: the elementwise losses times weight (a tensor of
    input's shape, which may require grad), summed, or their mean: the sum over weight's sum
    (by_weight) or over the number of elements."""
    _tensor(fn, "weight", weight)
    _same_dtype(fn, input, weight=weight)
    _same_device(fn, input, weight=weight)
    if weight.shape != input.shape:
        raise ValueError(f"{fn}: weight must have input's shape {tuple(input.shape)}; got "
                         f"{tuple(weight.shape)}")
    weighted = losses * weight
    if reduction == "none":
        return weighted
    if reduction == "sum" or not by_weight:
        return weighted.sum() if reduction == "sum" else weighted.mean()
    return weighted.sum() / weight.sum()


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


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum, or elementwise) absolute difference; shapes broadcast. With weight (of
    input's shape), each difference times its weight; the mean is then their sum over the
    weights' sum."""
    fn = "l1_loss"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _regression_shapes(fn, input, target)
    if weight is not None:
        return _weighted_loss(fn, AbsoluteError.apply(input, target, reduction="none"), weight,
                              input, reduction, by_weight=True)
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


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target;
    shapes broadcast. Equals delta * smooth_l1_loss(input, target, beta=delta). With weight
    (of input's shape), each loss times its weight; the mean is still over the elements, as
    PyTorch's."""
    fn = "huber_loss"
    _pair_of_tensors(fn, input, target)
    reduction = _reduction(fn, reduction)
    delta = _real(fn, "delta", delta, input)
    if delta <= 0:
        raise ValueError(f"{fn}: delta must be > 0, got {delta}")
    _regression_shapes(fn, input, target)
    if weight is not None:
        losses = SmoothAbsoluteError.apply(input, target, beta=delta, huber=True, reduction="none")
        return _weighted_loss(fn, losses, weight, input, reduction, by_weight=False)
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
    """Normalize each channel of input (N, C), (N, C, L), (N, C, H, W) or (N, C, D, H, W). In
    training the batch statistics are used and running_mean/running_var (when given) updated
    in place."""
    fn = "batch_norm"
    _tensor(fn, "input", input, ndim=(2, 3, 4, 5), ndim_desc="2-D (N, C), 3-D (N, C, L), 4-D "
            "(N, C, H, W) or 5-D (N, C, D, H, W)")
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
    # (N, C, D, H, W) is normalized as (N, C, D * H, W): the same positions per channel
    x4 = input.reshape(shape + (1,) * (4 - input.ndim) if input.ndim <= 4 else
                       (shape[0], shape[1], shape[2] * shape[3], shape[4]))
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


def _normalized_shape(fn, normalized_shape):
    """normalized_shape as a tuple of ints (nn.LayerNorm also takes one int; layer_norm, as
    PyTorch's, a tuple or list only)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{fn}: normalized_shape must be a tuple or list of ints (the sizes of "
                        f"input's last dims), got {type(normalized_shape).__name__} "
                        f"{normalized_shape!r}")
    for s in normalized_shape:
        if not is_int(s):
            raise TypeError(f"{fn}: normalized_shape must be a tuple or list of ints, got "
                            f"{normalized_shape!r} (an element of type {type(s).__name__})")
    if not normalized_shape:
        raise ValueError(f"{fn}: normalized_shape must have at least one dim, got "
                         f"{tuple(normalized_shape)}")
    return tuple(int(s) for s in normalized_shape)


def _affine_parameter(fn, name, t, shape, input):
    if t is None:
        return
    _tensor(fn, name, t)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{fn}: {name} must have shape {tuple(shape)}, as {_affine_role(fn)}; "
                         f"got {name} of shape {tuple(t.shape)}")
    _same_dtype(fn, input, **{name: t})


def _affine_role(fn):
    return "normalized_shape" if fn == "layer_norm" else "one value per channel of input"


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize input over its last len(normalized_shape) dims, which must be
    normalized_shape: (x - mean) / sqrt(var + eps) with each sample's own mean and biased
    variance, then times weight and plus bias (both of shape normalized_shape), if given."""
    fn = "layer_norm"
    _tensor(fn, "input", input)
    shape = _normalized_shape(fn, normalized_shape)
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise ValueError(f"{fn}: given normalized_shape={shape}, expected input of shape "
                         f"(*, {', '.join(map(str, shape))}); got input of shape "
                         f"{tuple(input.shape)}")
    _affine_parameter(fn, "weight", weight, shape, input)
    _affine_parameter(fn, "bias", bias, shape, input)
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    return LayerNormalization.apply(input, weight, bias, dims=len(shape), eps=eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize input (N, C, *) over each of num_groups groups of C // num_groups channels
    (with all of their positions) per sample, as layer_norm does, then scale and shift each
    channel by weight and bias (C,), if given (Wu and He, 2018)."""
    fn = "group_norm"
    _tensor(fn, "input", input)
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have at least 2 dims (N, C, *); got a {input.ndim}-D "
                         f"tensor of shape {tuple(input.shape)}")
    num_groups = check_size(fn, "num_groups", num_groups)
    n, c = input.shape[:2]
    if c % num_groups:
        raise ValueError(f"{fn}: input's channels must be divisible by num_groups; got input of "
                         f"shape {tuple(input.shape)} ({c} channels) and num_groups={num_groups}")
    _affine_parameter(fn, "weight", weight, (c,), input)
    _affine_parameter(fn, "bias", bias, (c,), input)
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    per_group = (c // num_groups) * int(np.prod(input.shape[2:], dtype=np.int64))
    if n * per_group == 1:  # PyTorch's check: one value has no variance to normalize by
        raise ValueError(f"{fn}: expected more than 1 value per channel when training, got input "
                         f"of shape {tuple(input.shape)} with num_groups={num_groups}")
    groups = input.reshape(n, num_groups, per_group)
    y = LayerNormalization.apply(groups, None, None, dims=1, eps=eps).reshape(input.shape)
    channel = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(channel)
    if bias is not None:
        y = y + bias.reshape(channel)
    return y


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps), the norm taken along dim (each vector scaled to unit
    p-norm). p may be any real number or +-inf, as torch.linalg.vector_norm's ord."""
    fn = "normalize"
    _tensor(fn, "input", input)
    p = check_real(fn, "p", p, finite=False, dtype=input.dtype)
    if math.isnan(p):
        raise ValueError(f"{fn}: p must be a real number or +-inf, got nan")
    dim = check_dim(fn, check_int(fn, "dim", dim), max(input.ndim, 1))
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    if out is not None:
        raise ValueError(f"{fn}: out= is not supported; use the returned tensor (out must be None, "
                         f"got {type(out).__name__})")
    if input.ndim == 0:
        return LpNormalization.apply(input.reshape(1), p=p, dim=0, eps=eps).reshape(())
    return LpNormalization.apply(input, p=p, dim=dim, eps=eps)


# ---- distances and one-hot ------------------------------------------------------------------

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between x1 and x2 (broadcast together) along dim:
    sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)); dim is removed from the result."""
    fn = "cosine_similarity"
    _tensor(fn, "x1", x1)
    _tensor(fn, "x2", x2)
    _same_dtype(fn, x1, x2=x2)
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError(f"{fn}: x1 of shape {tuple(x1.shape)} and x2 of shape {tuple(x2.shape)} "
                         f"must broadcast to a common shape") from None
    dim = check_dim(fn, check_int(fn, "dim", dim), max(len(shape), 1))
    eps = _real(fn, "eps", eps, x1, minimum=0.0)
    if not shape:
        return VectorCosine.apply(x1.reshape(1), x2.reshape(1), dim=0, eps=eps)
    return VectorCosine.apply(x1, x2, dim=dim, eps=eps)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape (*, num_classes): 1 at each element's class index, 0 elsewhere.
    num_classes=-1 takes the largest index + 1."""
    fn = "one_hot"
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: tensor must be a minifw.Tensor of int64 class indices, got "
                        f"{type(tensor).__name__}")
    if tensor.dtype != np.int64:
        raise TypeError(f"{fn}: tensor must hold int64 class indices (PyTorch's LongTensor), got "
                        f"dtype {tensor.dtype}")
    num_classes = check_int(fn, "num_classes", num_classes, minimum=-1)
    idx = tensor._data
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        if low < 0:
            raise ValueError(f"{fn}: tensor's class values must be non-negative, got {low}")
        if num_classes != -1 and high >= num_classes:
            raise ValueError(f"{fn}: tensor's class values must be smaller than num_classes={num_classes}, "
                             f"got {high}")
    if num_classes == -1:
        if not idx.size:
            raise ValueError(f"{fn}: cannot infer the number of classes from an empty tensor; give "
                             f"num_classes")
        num_classes = high + 1
    try:
        classes = devices.to_device(np.arange(num_classes, dtype=np.int64), devices.of(idx))
        return Tensor._make((idx[..., None] == classes).astype(np.int64))
    except MemoryError:
        raise _too_large(fn, "num_classes", num_classes, tuple(idx.shape) + (num_classes,),
                         np.int64) from None


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
    seed = _random.default_generator.random_seed()
    if inplace:
        return _in_place(fn, input, lambda: InvertedDropout.apply(input, p=p, seed=seed))
    return InvertedDropout.apply(input, p=p, seed=seed)


def _channel_dropout(fn, input, p, training, inplace, unbatched=False):
    p = _probability(fn, p)
    training, inplace = _dropout_flags(fn, training, inplace)
    if not training or p == 0.0:
        return input
    seed = _random.default_generator.random_seed()

    def compute():
        if unbatched:  # (C, ...): one sample
            return ChannelDropout.apply(input.unsqueeze(0), p=p, seed=seed).squeeze(0)
        return ChannelDropout.apply(input, p=p, seed=seed)
    return _in_place(fn, input, compute) if inplace else compute()


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


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (volumes input[n, c]) of (N, C, D, H, W) or unbatched (C, D, H, W)
    input with probability p, scaling the kept ones by 1 / (1 - p), in training. As PyTorch's,
    inputs of other ranks are taken as unbatched (C, ...), with a warning."""
    fn = "dropout3d"
    _tensor(fn, "input", input)
    if input.ndim not in (4, 5):
        if input.ndim < 1:
            raise ValueError(f"{fn}: input must have a channel dim, (N, C, D, H, W); got a 0-D "
                             f"tensor")
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension "
                      f"(i.e. 4D or 5D inputs).", UserWarning, stacklevel=2)
    return _channel_dropout(fn, input, p, training, inplace, unbatched=input.ndim != 5)


# ---- linear, embedding ---------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input (*, in_features) @ weight^T + bias: weight (out_features, in_features) gives
    (*, out_features); a 1-D weight (in_features,) gives (*), the last dim summed away. bias
    is (out_features,), or any shape that broadcasts to the output's without changing it (a
    0-d one with a 1-D weight)."""
    fn = "linear"
    _tensor(fn, "input", input)
    _tensor(fn, "weight", weight)
    if weight.ndim not in (1, 2):
        raise ValueError(f"{fn}: weight must be 2-D (out_features, in_features) or 1-D "
                         f"(in_features,); got a {weight.ndim}-D tensor of shape {tuple(weight.shape)}")
    if bias is not None:
        _tensor(fn, "bias", bias)
    _same_dtype(fn, input, weight=weight, bias=bias)
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(f"{fn}: input's last dim must be in_features = {weight.shape[-1]} to match "
                         f"weight {tuple(weight.shape)}; got input of shape {tuple(input.shape)}")
    lead = input.shape[:-1]
    out_shape = lead + weight.shape[:-1]
    row_bias = bias is None or (weight.ndim == 2 and bias.shape == (weight.shape[0],))
    if not row_bias:  # (the common bias, a row, needs no broadcast check)
        try:
            fits = np.broadcast_shapes(bias.shape, out_shape) == out_shape
        except ValueError:
            fits = False
        if not fits or (weight.ndim == 1 and bias.ndim != 0):
            raise ValueError(
                f"{fn}: bias must have shape ({weight.shape[0]},), or a shape that broadcasts to "
                f"the output's {out_shape} without changing it; got {tuple(bias.shape)}"
                if weight.ndim == 2 else
                f"{fn}: with a 1-D weight {tuple(weight.shape)} the output {out_shape} has no "
                f"feature dim, so bias must be 0-d; got shape {tuple(bias.shape)}")
    if weight.ndim == 1:  # a dot product over the last dim (a MatMul names its node as PyTorch)
        y = input @ weight
        return y if bias is None else y + bias
    y = InnerProduct.apply(input.reshape(-1, weight.shape[1]), weight, bias if row_bias else None)
    if len(lead) != 1:
        # PyTorch folds the leading dims, or unsqueezes a 1-D input, and views the product back
        y = rename(y.reshape(out_shape), "ViewBackward0" if bias is not None else
                   "SqueezeBackward4" if not lead else "UnsafeViewBackward0", input, weight)
    return y if row_bias else y + bias


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]: input1 (*, in1),
    input2 (*, in2) with the same leading dims, weight (out, in1, in2), bias (out,)."""
    fn = "bilinear"
    _tensor(fn, "input1", input1)
    _tensor(fn, "input2", input2)
    _tensor(fn, "weight", weight, ndim=3, ndim_desc="3-D (out_features, in1_features, in2_features)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (out_features,)")
        if bias.shape[0] != weight.shape[0]:
            raise ValueError(f"{fn}: bias must have shape ({weight.shape[0]},) to match weight "
                             f"{tuple(weight.shape)}; got {tuple(bias.shape)}")
    _same_dtype(fn, input1, input2=input2, weight=weight, bias=bias)
    _same_device(fn, input1, "input1", input2=input2, weight=weight, bias=bias)
    if input1.ndim == 0 or input2.ndim == 0 or input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"{fn}: input1 and input2 must have the same leading (batch) dims and at least "
                         f"one dim; got {tuple(input1.shape)} and {tuple(input2.shape)}")
    for name, t, size in (("input1", input1, weight.shape[1]), ("input2", input2, weight.shape[2])):
        if t.shape[-1] != size:
            raise ValueError(f"{fn}: {name}'s last dim must be {size} to match weight "
                             f"{tuple(weight.shape)}; got {name} of shape {tuple(t.shape)}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


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
        if not devices.is_writeable(weight._data):
            raise ValueError(f"{fn}: max_norm renormalizes rows of weight in place, so weight must be "
                             f"writable; got a read-only tensor")
        with no_grad():  # PyTorch renormalizes the looked-up rows of weight in place
            rows = np.unique(idx)
            norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
            too_long = norms > max_norm
            weight._data[rows[too_long]] *= (max_norm / (norms[too_long] + 1e-7))[:, None]
    return EmbeddingLookup.apply(weight, indices=idx, padding_idx=padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq)



def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of rows of weight (num_embeddings, embedding_dim), without
    forming the looked-up rows as a tensor: input (B, N) holds B bags of N indices (offsets
    None), or a 1-D input holds every bag's indices one after another with offsets (1-D) the
    start of each bag (with include_last_offset, offsets ends with len(input)). Entries equal
    to padding_idx are left out of their bag (and of its count for 'mean'); an empty bag
    gives zeros. per_sample_weights (input's shape) scales each looked-up row (mode 'sum')."""
    fn = "embedding_bag"
    _tensor(fn, "weight", weight, ndim=2, ndim_desc="2-D (num_embeddings, embedding_dim)")
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(f"{fn}: input must be an int64 tensor of indices, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    check_choice(fn, "mode", mode, ("sum", "mean", "max"))
    if check_bool(fn, "sparse", sparse):
        raise ValueError(f"{fn}: sparse gradients are not supported; sparse must be False")
    scale_grad_by_freq = check_bool(fn, "scale_grad_by_freq", scale_grad_by_freq)
    include_last_offset = check_bool(fn, "include_last_offset", include_last_offset)
    norm_type = _real(fn, "norm_type", norm_type, weight)
    if scale_grad_by_freq and mode == "max":
        raise ValueError(f"{fn}: scale_grad_by_freq is not supported with mode='max'")
    _same_device(fn, weight, "weight", input=input)
    n = weight.shape[0]
    idx = np.asarray(devices.to_device(input._data, devices.CPU)).astype(np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{fn}: offsets must be None for a 2-D input (each row is a bag), got a "
                             f"{type(offsets).__name__}")
        n_bags, per_bag = idx.shape
        bags = np.repeat(np.arange(n_bags, dtype=np.int64), per_bag)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(f"{fn}: offsets is required for a 1-D input (the start of each bag)")
        if not isinstance(offsets, Tensor) or offsets.dtype.kind not in "iu" or offsets.ndim != 1:
            raise TypeError(f"{fn}: offsets must be a 1-D int64 tensor, got "
                            f"{type(offsets).__name__ if not isinstance(offsets, Tensor) else f'a {offsets.ndim}-D {offsets.dtype} tensor'}")
        starts = np.asarray(devices.to_device(offsets._data, devices.CPU)).astype(np.int64)
        if include_last_offset:
            if starts.size == 0:
                raise ValueError(f"{fn}: offsets must hold at least one value with "
                                 f"include_last_offset=True, got none")
            starts = starts[:-1]
        if starts.size == 0 and idx.size:
            raise ValueError(f"{fn}: offsets must hold at least one value (the start of the first "
                             f"bag) for a non-empty input, got none")
        if starts.size and starts[0] != 0:
            raise ValueError(f"{fn}: offsets[0] must be 0 (the first bag starts at the first "
                             f"index), got {int(starts[0])}")
        # (compared, not subtracted: a difference of extreme values would wrap around)
        if np.any(starts[1:] < starts[:-1]) or (starts.size and starts[-1] > idx.size):
            raise ValueError(f"{fn}: offsets must be non-decreasing and at most len(input) = "
                             f"{idx.size}, got {starts.tolist()}")
        n_bags = starts.size
        bags = np.repeat(np.arange(n_bags, dtype=np.int64), np.diff(np.append(starts, idx.size)))
    else:
        raise ValueError(f"{fn}: input must be 1-D (with offsets) or 2-D (bags, indices per bag), "
                         f"got {input.ndim}-D")
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)][0]
        raise IndexError(f"{fn}: input holds index {bad}, which is out of range for {n} embeddings "
                         f"(the rows of weight)")
    psw = None
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{fn}: per_sample_weights is only supported with mode='sum', got "
                             f"mode={mode!r}")
        _tensor(fn, "per_sample_weights", per_sample_weights)
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{fn}: per_sample_weights must have input's shape {tuple(input.shape)}, "
                             f"got {tuple(per_sample_weights.shape)}")
        if per_sample_weights.dtype != weight.dtype:
            raise TypeError(f"{fn}: per_sample_weights must have weight's dtype {weight.dtype}, got "
                            f"{per_sample_weights.dtype}")
        _same_device(fn, weight, "weight", per_sample_weights=per_sample_weights)
        psw = per_sample_weights.reshape(-1)
    if padding_idx is not None:
        padding_idx = _padding_index(fn, padding_idx, n)
        kept = idx != padding_idx
        idx, bags = idx[kept], bags[kept]
        if psw is not None:
            psw = psw[Tensor._make(devices.to_device(np.flatnonzero(kept), psw.device))]
    if max_norm is not None:
        max_norm = _real(fn, "max_norm", max_norm, weight, minimum=0.0)
        if not devices.is_writeable(weight._data):
            raise ValueError(f"{fn}: max_norm renormalizes rows of weight in place, so weight must be "
                             f"writable; got a read-only tensor")
        with no_grad():  # as embedding: the looked-up rows of weight are renormalized in place
            rows = np.unique(idx)
            at = devices.to_device(rows, weight.device)
            norms = np.asarray(devices.to_device(
                devices.array_module(weight.device).linalg.norm(weight._data[at], ord=norm_type, axis=1),
                devices.CPU))
            too_long = norms > max_norm
            scale = (max_norm / (norms[too_long] + 1e-7)).astype(weight.dtype)[:, None]
            weight._data[devices.to_device(rows[too_long], weight.device)] *= \
                devices.to_device(scale, weight.device)
    return BagReduction.apply(weight, psw, indices=idx, bags=bags, n_bags=n_bags, mode=mode,
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
            if n + left + right < 0:
                raise ValueError(f"{fn}: pad {tuple(pad)} crops dim {axis} (size {n}) by more than "
                                 f"its size: {n} {left:+d} {right:+d} = {n + left + right} elements")
            if n + left + right == 0 and mode in ("reflect", "replicate"):
                # (constant and circular padding may crop a dim to nothing, as PyTorch's do)
                raise ValueError(f"{fn}: mode={mode!r} with pad {tuple(pad)} leaves dim {axis} "
                                 f"(size {n}) empty")
            if n == 0 and mode != "constant":
                raise ValueError(f"{fn}: mode={mode!r} needs a non-empty dim to copy from; dim {axis} "
                                 f"has size 0 (only mode='constant' pads it)")
            positions = np.arange(-left, n + right)
            if mode == "constant":
                src = np.where((positions >= 0) & (positions < n), positions, -1)
            elif mode == "replicate":
                src = np.clip(positions, 0, n - 1)
            elif mode == "circular":
                # As PyTorch: a negative pad crops first; a positive one then wraps around
                # what is left (the m elements from `start`).
                if max(left, right) > n:
                    raise ValueError(f"{fn}: circular padding of dim {axis} needs pad <= its size "
                                     f"{n}, got {(left, right)}: a pad may wrap around the dim "
                                     f"at most once")
                start = max(-left, 0)
                m = n - start - max(-right, 0)
                if max(left, right) > m:
                    raise ValueError(f"{fn}: circular padding of dim {axis} (size {n}) with pad "
                                     f"{(left, right)}: the negative pad crops it to {m} "
                                     f"elements, and the positive pad must be <= that (it "
                                     f"wraps around what is left, at most once)")
                src = start + (np.arange(-max(left, 0), m + max(right, 0)) % m)
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


# ---- upsampling ----------------------------------------------------------------------------

_INTERPOLATE_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear",
                      "area")


def _nearest_sources(n_in, n_out, scale, exact):
    """The input index each of n_out outputs copies along one dim, as PyTorch's CPU kernels
    compute it: the scale (1 / scale_factor when one was given, else n_in / n_out) in float32,
    floor(i * scale) ('nearest') or floor((i + 0.5) * scale) ('nearest-exact'), at most n_in - 1.
    (So scale_factor=1.3 of 2 elements gives 2 outputs, both copies of the first, as PyTorch's.)"""
    scale = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    if exact:  # (i + 0.5) is a double in PyTorch's kernel; the product is rounded to float
        source = ((np.arange(n_out) + 0.5) * np.float64(scale)).astype(np.float32)
    else:
        source = np.arange(n_out, dtype=np.float32) * scale
    return np.minimum(np.floor(source).astype(np.int64), n_in - 1)


_MODE_RANKS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_RANK_MODES = {3: "linear", 4: "bilinear", 5: "trilinear"}
_MODE_SHAPES = {3: "3-D (N, C, L)", 4: "4-D (N, C, H, W)", 5: "5-D (N, C, D, H, W)"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of input (N, C, L), (N, C, H, W) or (N, C, D, H, W) to `size`
    or by `scale_factor` (an int/float or one per spatial dim). Modes: 'nearest' (PyTorch's
    default) and 'nearest-exact' copy the nearest input element; 'linear' (3-D), 'bilinear'
    (4-D), 'trilinear' (5-D) and 'bicubic' (4-D, Keys's A = -0.75) interpolate, with
    align_corners mapping the corner elements onto each other (default False); 'area' averages
    adaptive windows, as adaptive average pooling. Source coordinates are PyTorch's: with a
    scale_factor (and recompute_scale_factor not True), 1 / scale_factor is the step.
    antialias=True ('bilinear' and 'bicubic') widens the filter when shrinking, as PIL does."""
    return _interpolate("interpolate", input, size, scale_factor, mode, align_corners,
                        recompute_scale_factor, antialias)


def _interpolate(fn, input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                 antialias):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a minifw.Tensor, got {type(input).__name__}")
    check_choice(fn, "mode", mode, _INTERPOLATE_MODES)
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            check_bool(fn, "align_corners", align_corners)
            raise ValueError(f"{fn}: align_corners option can only be set with the interpolating "
                             f"modes: linear | bilinear | bicubic | trilinear; it must be None "
                             f"for mode={mode!r}")
    else:
        align_corners = False if align_corners is None else \
            check_bool(fn, "align_corners", align_corners)
    antialias = check_bool(fn, "antialias", antialias)
    if antialias:
        if mode not in ("bilinear", "bicubic") or input.ndim != 4:
            raise ValueError(f"{fn}: antialias applies to the modes bilinear and bicubic of a 4-D "
                             f"input only; it must be False for mode={mode!r} and a "
                             f"{input.ndim}-D input")
    if recompute_scale_factor is not None:
        recompute_scale_factor = check_bool(fn, "recompute_scale_factor", recompute_scale_factor)
    if input.ndim not in (3, 4, 5):
        raise ValueError(f"{fn}: input must be 3-D (N, C, L), 4-D (N, C, H, W) or 5-D "
                         f"(N, C, D, H, W); got a {input.ndim}-D tensor of shape "
                         f"{tuple(input.shape)}")
    if mode in _MODE_RANKS and input.ndim != _MODE_RANKS[mode]:
        raise ValueError(f"{fn}: mode={mode!r} needs a {_MODE_SHAPES[_MODE_RANKS[mode]]} input; "
                         f"got a {input.ndim}-D input of shape {tuple(input.shape)} (for it, use "
                         f"mode={_RANK_MODES[input.ndim]!r})")
    dims = input.ndim - 2
    spatial = tuple(input.shape[2:])
    if 0 in spatial:
        raise ValueError(f"{fn}: input must have non-zero spatial sizes, got shape "
                         f"{tuple(input.shape)}")
    if size is not None and scale_factor is not None:
        raise ValueError(f"{fn}: only one of size or scale_factor should be defined; got "
                         f"size={size!r} and scale_factor={scale_factor!r}")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"{fn}: recompute_scale_factor is not meaningful with an explicit "
                             f"size")
        sizes = check_ints(fn, "size", size, dims, minimum=1)
        scales = (None,) * dims
    elif scale_factor is not None:
        factors = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * dims
        if len(factors) != dims:
            raise ValueError(f"{fn}: scale_factor must be a number or {dims} numbers, one per "
                             f"spatial dim of input of shape {tuple(input.shape)}; got "
                             f"{scale_factor!r}")
        factors = tuple(check_real(fn, "scale_factor", f, minimum=0.0, min_open=True)
                        for f in factors)
        if any(n * f > MAX_SIZE for n, f in zip(spatial, factors)):
            raise ValueError(f"{fn}: scale_factor={scale_factor!r} asks for an output size above "
                             f"2**58 (the largest the native library indexes) for input of shape "
                             f"{tuple(input.shape)}")
        sizes = tuple(int(n * f) for n, f in zip(spatial, factors))  # floor, in double
        if min(sizes) < 1:
            raise ValueError(f"{fn}: scale_factor={scale_factor!r} gives an output of size "
                             f"{sizes} for input of shape {tuple(input.shape)}; every size must be "
                             f">= 1")
        # 'area' is adaptive pooling to the output size: PyTorch recomputes for it too
        scales = (None,) * dims if recompute_scale_factor or mode == "area" else factors
    else:
        raise ValueError(f"{fn}: either size or scale_factor should be defined")
    if mode not in ("nearest", "nearest-exact") and input.dtype not in (np.float32, np.float64):
        raise TypeError(f"{fn}: mode={mode!r} needs a float32 or float64 input, got "
                        f"{np.dtype(input.dtype).name}")
    try:
        if mode in ("nearest", "nearest-exact"):
            return _interpolate_nearest(input, spatial, sizes, scales, mode)
        return Interpolation.apply(input, mode=mode if mode in ("bicubic", "area") else "linear",
                                   sizes=sizes, align_corners=align_corners, scale_factors=scales,
                                   antialias=antialias)
    except MemoryError:
        name, value = ("size", size) if size is not None else ("scale_factor", scale_factor)
        raise _too_large(fn, name, value, input.shape[:2] + sizes, input.dtype) from None


def _interpolate_nearest(input, spatial, sizes, scales, mode):
    """Nearest-neighbour resizing as one index_select per dim (its gradient adds each output's
    gradient into the element it copied)."""
    out = input
    for axis, (n_in, n_out, scale) in enumerate(zip(spatial, sizes, scales), start=2):
        sources = _nearest_sources(n_in, n_out, scale, mode == "nearest-exact")
        if n_out == n_in and np.array_equal(sources, np.arange(n_in)):
            continue
        index = Tensor._make(devices.to_device(sources.astype(np.int64), devices.of(input._data)))
        out = out.index_select(axis, index)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated (as in PyTorch, which warns): interpolate with these arguments."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return _interpolate("upsample", input, size, scale_factor, mode, align_corners, None, False)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated (as in PyTorch, which warns): interpolate with mode 'nearest'."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _interpolate("upsample_nearest", input, size, scale_factor, "nearest", None, None,
                        False)


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated (as in PyTorch, which warns): interpolate with mode 'bilinear' and
    align_corners=True."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return _interpolate("upsample_bilinear", input, size, scale_factor, "bilinear", True, None,
                        False)


# ==== more activations, instance / RMS normalization, pixel shuffles and losses ===============
#
# Where a composition of Tensor operations gives PyTorch's values and gradients (kinks
# included) it is used; pointwise activations whose kink gradients or large-|x| values need
# care are Functions in minifw.functions.activation.

# Klambauer et al. (2017): the constants that make selu self-normalizing
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ---- activations ----------------------------------------------------------------------------

def _pointwise(fn, input, function, inplace=False, **params):
    """function.apply(input, **params); with inplace=True written over input (recorded by
    autograd as functional.py's other in-place activations)."""
    _tensor(fn, "input", input)
    if check_bool(fn, "inplace", inplace):
        return _in_place(fn, input, lambda: function.apply(input, **params))
    return function.apply(input, **params)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6; the gradient at -3 and 3 is the middle piece's, x / 3 + 1/2."""
    return _pointwise("hardswish", input, HardSwish, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6; the gradient is 1/6 strictly between -3 and 3, else zero."""
    return _pointwise("hardsigmoid", input, HardSigmoid, inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _pointwise("mish", input, Mish, inplace)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants alpha = 1.6733, scale = 1.0507."""
    return _pointwise("selu", input, ScaledExponentialLinear, inplace, alpha=_SELU_ALPHA,
                      scale=_SELU_SCALE, input_scale=1.0)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)); alpha must not be 0."""
    return _celu("celu", input, alpha, inplace)


def _celu(fn, input, alpha=1.0, inplace=False):
    _tensor(fn, "input", input)
    alpha = _real(fn, "alpha", alpha, input)
    if alpha == 0:
        raise ValueError(f"{fn}: alpha must not be 0 (x / alpha is taken), got {alpha}")
    return _pointwise(fn, input, ScaledExponentialLinear, inplace, alpha=alpha, scale=1.0,
                      input_scale=1.0 / alpha)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the first and second halves of input along dim (the gated
    linear unit of Dauphin et al., 2017)."""
    fn = "glu"
    _tensor(fn, "input", input)
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must have at least one dim to halve, got a 0-D tensor")
    d = check_dim(fn, check_int(fn, "dim", dim), input.ndim)
    n = input.shape[d]
    if n % 2:
        raise ValueError(f"{fn}: the halved dim must have an even size, but dim {dim} of input "
                         f"of shape {tuple(input.shape)} has size {n}")
    return input.narrow(d, 0, n // 2) * sigmoid(input.narrow(d, n // 2, n // 2))


def logsigmoid(input):
    """log(sigmoid(x)), finite for every x (log(sigmoid(-800)) is -800, not -inf)."""
    return _pointwise("logsigmoid", input, LogSigmoid)


def softsign(input):
    """x / (1 + |x|) (an integer tensor in the default float dtype)."""
    input = _integer_as_float(input)
    _tensor("softsign", "input", input)
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    """x - tanh(x) (an integer tensor in the default float dtype)."""
    input = _integer_as_float(input)
    _tensor("tanhshrink", "input", input)
    return input - tanh(input)


def _integer_as_float(input):
    return input.to(get_default_dtype()) if _integer_tensor(input) else input


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    fn = "hardshrink"
    _tensor(fn, "input", input)
    return Shrink.apply(input, lambd=_real(fn, "lambd", lambd, input), soft=False)


def softshrink(input, lambd=0.5):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0; lambd >= 0."""
    fn = "softshrink"
    _tensor(fn, "input", input)
    return Shrink.apply(input, lambd=_real(fn, "lambd", lambd, input, minimum=0.0), soft=True)


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x."""
    return _threshold("threshold", input, threshold, value, inplace)


def _threshold(fn, input, threshold, value, inplace=False):
    _tensor(fn, "input", input)
    threshold, value = _real(fn, "threshold", threshold, input), _real(fn, "value", value, input)
    return _pointwise(fn, input, Threshold, inplace, threshold=threshold, value=value)


# ---- normalization -----------------------------------------------------------------------------

def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2) + eps) over its last len(normalized_shape) dims, times weight
    (of shape normalized_shape) if given (Zhang and Sennrich, 2019); eps=None is the machine
    epsilon of input's dtype."""
    fn = "rms_norm"
    _tensor(fn, "input", input)
    shape = _normalized_shape(fn, normalized_shape)
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise ValueError(f"{fn}: given normalized_shape={shape}, expected input of shape "
                         f"(*, {', '.join(map(str, shape))}); got input of shape "
                         f"{tuple(input.shape)}")
    if weight is not None:
        _tensor(fn, "weight", weight)
        if tuple(weight.shape) != shape:
            raise ValueError(f"{fn}: weight must have shape normalized_shape = {shape}; got "
                             f"weight of shape {tuple(weight.shape)}")
        _same_dtype(fn, input, weight=weight)
    eps = float(np.finfo(input.dtype).eps) if eps is None else _real(fn, "eps", eps, input,
                                                                     minimum=0.0)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    y = input * ((input * input).mean(dim=dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


def _channel_vector(fn, name, t, c):
    if t is not None:
        _tensor(fn, name, t, ndim=1)
        if t.shape[0] != c:
            raise ValueError(f"{fn}: {name} must have shape ({c},), one value per channel of "
                             f"input; got {tuple(t.shape)}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample of input (N, C, *) over its own positions
    (Ulyanov et al., 2016), then scale and shift it by weight and bias (C,), if given. With
    use_input_stats=False the running statistics are used instead; with it and running
    statistics given, they are updated in place with the mean over the batch of each
    sample's statistics."""
    fn = "instance_norm"
    _tensor(fn, "input", input)
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have at least 2 dims (N, C, *); got a {input.ndim}-D "
                         f"tensor of shape {tuple(input.shape)}")
    n, c = input.shape[:2]
    if n == 0 or c == 0:
        raise ValueError(f"{fn}: input must have at least one sample and one channel, got shape "
                         f"{tuple(input.shape)}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _channel_vector(fn, name, t, c)
    _affine_parameter(fn, "weight", weight, (c,), input)
    _affine_parameter(fn, "bias", bias, (c,), input)
    _same_dtype(fn, input, running_mean=running_mean, running_var=running_var)
    _same_device(fn, input, running_mean=running_mean, running_var=running_var)
    use_input_stats = check_bool(fn, "use_input_stats", use_input_stats)
    momentum = _real(fn, "momentum", momentum, minimum=0.0, maximum=1.0)
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: give both running_mean and running_var, or neither")
    if not use_input_stats and running_mean is None:
        raise ValueError(f"{fn}: use_input_stats=False normalizes with running_mean and "
                         f"running_var, so both must be given")
    if use_input_stats:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and not devices.is_writeable(t._data):
                raise ValueError(f"{fn}: {name} is updated in place when use_input_stats=True, so "
                                 f"it must be writable; got a read-only tensor (an expanded view?)")
    spatial = int(np.prod(input.shape[2:], dtype=np.int64))
    if use_input_stats and spatial <= 1:
        raise ValueError(f"{fn}: expected more than 1 spatial element per channel when using "
                         f"input statistics, got input of shape {tuple(input.shape)}")
    # Each (sample, channel) pair is a channel of one batch-norm sample of N * C channels.
    stats = [None if t is None else t.detach().repeat(n) for t in (running_mean, running_var)]
    w, b = (None if t is None else t.repeat(n) for t in (weight, bias))
    y = batch_norm(input.reshape(1, n * c, spatial), stats[0], stats[1], w, b,
                   training=use_input_stats, momentum=momentum, eps=eps)
    if use_input_stats:
        for t, updated in zip((running_mean, running_var), stats):
            if t is not None:
                t._data[...] = updated.reshape(n, c).mean(0)._data
    return y.reshape(input.shape)


# ---- pixel and channel shuffles -------------------------------------------------------------------

def _image_input(fn, input):
    _tensor(fn, "input", input)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must have at least 3 dims (*, C, H, W); got a "
                         f"{input.ndim}-D tensor of shape {tuple(input.shape)}")
    return tuple(input.shape[:-3]), input.ndim - 3


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) to (*, C, H r, W r): each group of r^2 channels becomes an r x r block
    of pixels (Shi et al., 2016), r = upscale_factor."""
    fn = "pixel_shuffle"
    batch, k = _image_input(fn, input)
    r = check_size(fn, "upscale_factor", upscale_factor)
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise ValueError(f"{fn}: input's channels (dim -3) must be divisible by upscale_factor^2 "
                         f"= {r * r}; got input of shape {tuple(input.shape)} ({c} channels)")
    x = input.reshape(batch + (c // (r * r), r, r, h, w))
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(batch + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) to (*, C r^2, H, W), pixel_shuffle's inverse, r = downscale_factor."""
    fn = "pixel_unshuffle"
    batch, k = _image_input(fn, input)
    r = check_size(fn, "downscale_factor", downscale_factor)
    c, h, w = input.shape[-3:]
    if h % r or w % r:
        raise ValueError(f"{fn}: input's height and width must be divisible by downscale_factor "
                         f"= {r}; got input of shape {tuple(input.shape)}")
    x = input.reshape(batch + (c, h // r, r, w // r, r))
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(batch + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """(N, C, *) with its channels, seen as a groups x (C / groups) grid, transposed (Zhang et
    al., 2018, ShuffleNet)."""
    return _channel_shuffle("channel_shuffle", input, groups)


def _channel_shuffle(fn, input, groups):
    _tensor(fn, "input", input)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must have at least 3 dims (N, C, *); got a {input.ndim}-D "
                         f"tensor of shape {tuple(input.shape)}")
    g = check_size(fn, "groups", groups)
    n, c = input.shape[:2]
    if c % g:
        raise ValueError(f"{fn}: input's channels must be divisible by groups; got input of "
                         f"shape {tuple(input.shape)} ({c} channels) and groups={g}")
    rest = tuple(input.shape[2:])
    return input.reshape((n, g, c // g) + rest).transpose(1, 2).reshape(input.shape)


# ---- losses ------------------------------------------------------------------------------------

def _reduce(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _hinge(z):
    """max(z, 0) with PyTorch's clamp_min gradient: it passes at z = 0 itself."""
    return where(z < 0, 0.0, z)


def _inputs(fn, **tensors):
    """Float tensors of one dtype and device, named as the function's arguments."""
    (first_name, first), *rest = tensors.items()
    _tensor(fn, first_name, first)
    for name, t in rest:
        _tensor(fn, name, t)
    _same_dtype(fn, first, **dict(rest))
    _same_device(fn, first, first_name, **dict(rest))
    return first


def _broadcast(fn, **tensors):
    try:
        return np.broadcast_shapes(*(t.shape for t in tensors.values()))
    except ValueError:
        shapes = ", ".join(f"{name} of shape {tuple(t.shape)}" for name, t in tensors.items())
        raise ValueError(f"{fn}: {shapes} do not broadcast") from None


def _pairwise_distance(x1, x2, p, eps):
    return (x1 - x2 + eps).norm(p, dim=-1)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance ||x1 - x2 + eps||_p along the
    last dim (Schroff et al., 2015); swap uses min(d(a, n), d(p, n)) as the negative distance."""
    fn = "triplet_margin_loss"
    _inputs(fn, anchor=anchor, positive=positive, negative=negative)
    reduction = _reduction(fn, reduction, size_average, reduce)
    margin = _real(fn, "margin", margin, anchor)
    if margin <= 0:
        raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")
    p, eps = _real(fn, "p", p, anchor, minimum=0.0), _real(fn, "eps", eps, anchor)
    swap = check_bool(fn, "swap", swap)
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise ValueError(f"{fn}: anchor, positive and negative must all be 1-D (D) or 2-D (N, D); "
                         f"got anchor {dims[0]}-D, positive {dims[1]}-D and negative {dims[2]}-D")
    _broadcast(fn, anchor=anchor, positive=positive, negative=negative)
    d_ap = _pairwise_distance(anchor, positive, p, eps)
    d_an = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = d_an.minimum(_pairwise_distance(positive, negative, p, eps))
    return _reduce(_hinge(margin + d_ap - d_an), reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(-target (input1 - input2) + margin, 0): target 1 asks input1 to rank higher, -1
    input2."""
    fn = "margin_ranking_loss"
    _inputs(fn, input1=input1, input2=input2, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    margin = _real(fn, "margin", margin, input1)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(f"{fn}: input1, input2 and target must have the same number of dims; "
                         f"got shapes {tuple(input1.shape)}, {tuple(input2.shape)} and "
                         f"{tuple(target.shape)}")
    _broadcast(fn, input1=input1, input2=input2, target=target)
    return _reduce(_hinge(-target * (input1 - input2) + margin), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target is 1, max(cos - margin, 0) where it is -1 (and 0
    elsewhere), the cosine taken along dim 1 of (N, D) inputs or of a (D,) pair."""
    fn = "cosine_embedding_loss"
    _inputs(fn, input1=input1, input2=input2)
    reduction = _reduction(fn, reduction, size_average, reduce)
    margin = _real(fn, "margin", margin, input1)
    if not isinstance(target, Tensor):
        raise TypeError(f"{fn}: target must be a minifw.Tensor, got {type(target).__name__}")
    _same_device(fn, input1, "input1", target=target)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape:
        raise ValueError(f"{fn}: input1 and input2 must have the same shape, (N, D) or (D,); got "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    if target.ndim != input1.ndim - 1 or tuple(target.shape) != tuple(input1.shape[:-1]):
        raise ValueError(f"{fn}: target must have shape {tuple(input1.shape[:-1])} (one value per "
                         f"pair of rows); got {tuple(target.shape)}")
    dim = input1.ndim - 1
    tiny = 1e-12  # keeps a zero vector's cosine finite (0), as PyTorch's
    dot = (input1 * input2).sum(dim)
    cos = dot / (((input1 * input1).sum(dim) + tiny) * ((input2 * input2).sum(dim) + tiny)).sqrt()
    loss = where(target == 1, 1.0 - cos, 0.0) + where(target == -1, _hinge(cos - margin), 0.0)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08,
                     reduce=None, reduction="mean"):
    """The negative log-likelihood of target under a Poisson distribution of rate exp(input)
    (log_input) or input: exp(input) - target input, or input - target log(input + eps); full
    adds Stirling's approximation of log(target!) where target > 1."""
    fn = "poisson_nll_loss"
    _inputs(fn, input=input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    log_input, full = check_bool(fn, "log_input", log_input), check_bool(fn, "full", full)
    eps = _real(fn, "eps", eps, input)
    _broadcast(fn, input=input, target=target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = where(target > 1, target, 1.0)  # log of a target <= 1, masked anyway, stays finite
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction="mean"):
    """The negative log-likelihood of target under a normal distribution of mean input and
    variance var: (log(var) + (input - target)^2 / var) / 2, plus log(2 pi) / 2 when full.
    var has input's shape, or one dim fewer or one of size 1 (a variance shared along it), or
    is a number; it is clamped at eps for the value, while its gradient flows unclamped."""
    fn = "gaussian_nll_loss"
    _inputs(fn, input=input, target=target)
    full = check_bool(fn, "full", full)
    eps = _real(fn, "eps", eps, input, minimum=0.0)
    reduction = check_choice(fn, "reduction", reduction, ("none", "mean", "sum"))
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if _real(fn, "var", var) < 0:
            raise ValueError(f"{fn}: var must be non-negative, got {var}")
        var = input.detach().new_full(tuple(input.shape), float(var))
    else:
        _inputs(fn, input=input, var=var)
        if bool((var < 0).any()):
            raise ValueError(f"{fn}: var has negative entries; variances must be >= 0")
    if var.shape != input.shape:
        if tuple(var.shape) == tuple(input.shape[:-1]):
            var = var.unsqueeze(-1)
        elif not (var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape)
                                                 if i != v) == 1):
            raise ValueError(f"{fn}: var must have input's shape {tuple(input.shape)}, that shape "
                             f"without its last dim, or a 1 in place of one of its sizes; got "
                             f"var of shape {tuple(var.shape)}")
    _broadcast(fn, input=input, target=target, var=var)
    var = var + (var.clamp(min=eps) - var).detach()  # the clamped value, var's own gradient
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input)), the logistic loss of labels target in {-1, 1}."""
    fn = "soft_margin_loss"
    _inputs(fn, input=input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    _broadcast(fn, input=input, target=target)
    return _reduce(-logsigmoid(target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross-entropy of logits input (N, C) against 0/1 target, averaged over the C
    classes (each weighted by weight (C,), if given): one loss per sample, then reduced."""
    fn = "multilabel_soft_margin_loss"
    _inputs(fn, input=input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must have a class dim, (C,) or (N, C); got a 0-D tensor")
    _broadcast(fn, input=input, target=target)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        _inputs(fn, input=input, weight=weight)
        _broadcast(fn, input=input, weight=weight)
        loss = loss * weight
    c = input.shape[-1]
    return _reduce(loss.sum(input.ndim - 1) / c, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(margin - input, 0) where it is -1 (input a distance,
    target whether the pair is similar); a target of neither value contributes both terms."""
    fn = "hinge_embedding_loss"
    _tensor(fn, "input", input)
    if not isinstance(target, Tensor):
        raise TypeError(f"{fn}: target must be a minifw.Tensor, got {type(target).__name__}")
    _same_device(fn, input, target=target)
    reduction = _reduction(fn, reduction, size_average, reduce)
    margin = _real(fn, "margin", margin, input)
    _broadcast(fn, input=input, target=target)
    loss = where(target != 1, _hinge(margin - input), 0.0) + where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


# ==== 1-D convolution and pooling =================================================================
#
# Each views its input (N, C, L) as (N, C, 1, L) (and a weight (K, C, kL) as (K, C, 1, kL)) and
# applies the 2-D Function beneath, so the 1-D forms run on both engines and every device with
# the same primitives. The arguments are checked first, in 1-D terms and naming the 1-D
# function; the 2-D problem's own checks (sizes the native library can index) then run under
# the 1-D name too. A max-pooling index h * W + w of the (N, C, 1, L) view is w: the position
# along L, as PyTorch's 1-D indices.

def _single(fn, name, v, minimum):
    """An int or a 1-tuple of ints, each >= minimum, as one int."""
    return check_ints(fn, name, v, 1, minimum=minimum)[0]


def _input_1d(fn, input, channels="C", nonempty=True):
    _tensor(fn, "input", input, ndim=(2, 3),
            ndim_desc=f"2-D ({channels}, L) or 3-D (N, {channels}, L)")
    if nonempty:
        check_no_zero_dims(fn, "input", input)
    elif 0 in input.shape[-2:]:  # a batch of 0 is pooled (to an empty batch)
        raise ValueError(f"{fn}: input must have non-zero sizes in its ({channels}, L) dims; got "
                         f"shape {tuple(input.shape)}")
    return input


def _as_2d(input):
    """(N, C, L) or (C, L) as (N, C, 1, L), and the function that takes a result back."""
    if input.ndim == 2:
        return input.unsqueeze(0).unsqueeze(2), lambda y: y.squeeze(2).squeeze(0)
    return input.unsqueeze(2), lambda y: y.squeeze(2)


def _weight_and_bias(fn, input, weight, bias, weight_desc, bias_desc):
    _tensor(fn, "weight", weight, ndim=3, ndim_desc=f"3-D {weight_desc}")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc=f"1-D {bias_desc}")
    _same_dtype(fn, input, weight=weight, bias=bias)
    check_no_zero_dims(fn, "weight", weight)


# ---- convolution --------------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of input (N, C, L) or (C, L) with weight
    (K, C // groups, kL); padding may also be 'valid' or 'same'."""
    fn = "conv1d"
    _input_1d(fn, input)
    _weight_and_bias(fn, input, weight, bias, "(K, C // groups, kL)", "(K,)")
    stride = _single(fn, "stride", stride, 1)
    dilation = _single(fn, "dilation", dilation, 1)
    groups = check_size(fn, "groups", groups)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{fn}: padding must be an int, a 1-tuple of ints, 'valid' or 'same'; "
                             f"got {padding!r}")
        if padding == "same" and stride != 1:
            raise ValueError(f"{fn}: padding='same' needs stride 1, got stride={stride}")
    else:
        padding = _single(fn, "padding", padding, 0)
    k, kl = weight.shape[0], weight.shape[2]
    _check_conv_channels(fn, input, weight, bias, groups)
    x, back = _as_2d(input)
    w = weight.unsqueeze(2)
    if isinstance(padding, str):  # 'same' pads an odd total's extra column on the right
        padding, x = _string_padding(fn, x, w, padding, (1, 1), (1, dilation))
        padding = padding[1] if isinstance(padding, tuple) else padding
    span = dilation * (kl - 1) + 1
    if x.shape[-1] + 2 * padding < span:
        raise ValueError(f"{fn}: the output length would be < 1: the padded input length "
                         f"{x.shape[-1] + 2 * padding} is shorter than the dilated kernel {span} "
                         f"(input of shape {tuple(input.shape)}, weight of shape "
                         f"{tuple(weight.shape)}, padding={padding}, dilation={dilation})")
    geometry = dict(stride=(1, stride), padding=(0, padding), dilation=(1, dilation), groups=groups)
    # The 2-D problem's checks (sizes the native library can index), naming conv1d.
    _conv_problem(fn, tuple(x.shape), tuple(w.shape), geometry["stride"], geometry["padding"],
                  geometry["dilation"], groups, input.dtype)
    try:
        return back(Convolution2D.apply(x, w, bias, **geometry))
    except MemoryError:
        length = (x.shape[-1] + 2 * padding - span) // stride + 1
        raise _too_large(fn, "padding", padding, (x.shape[0], weight.shape[0], length),
                         input.dtype) from None


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution of input (N, C_in, L) or (C_in, L) with weight
    (C_in, C_out // groups, kL): the output has C_out channels and
    L_out = (L - 1) * stride - 2 * padding + dilation * (kL - 1) + output_padding + 1
    positions; output_padding adds them on the right only."""
    fn = "conv_transpose1d"
    _input_1d(fn, input, channels="C_in")
    _weight_and_bias(fn, input, weight, bias, "(C_in, C_out // groups, kL)", "(C_out,)")
    stride = _single(fn, "stride", stride, 1)
    padding = _single(fn, "padding", padding, 0)
    output_padding = _single(fn, "output_padding", output_padding, 0)
    dilation = _single(fn, "dilation", dilation, 1)
    groups = check_size(fn, "groups", groups)
    kl = weight.shape[2]
    c_out = _transposed_channels(fn, input, weight, bias, groups, "(C_in, C_out // groups, kL)")
    _check_output_padding(fn, output_padding, stride, dilation)
    length, = _transposed_output_size(fn, input, weight, stride, padding, dilation, output_padding)
    x, back = _as_2d(input)
    w = weight.unsqueeze(2)
    output_shape = (x.shape[0], c_out, 1, length)
    geometry = dict(stride=(1, stride), padding=(0, padding), dilation=(1, dilation), groups=groups)
    # The convolution it transposes: its checks (sizes the native library can index), naming fn.
    _conv_problem(fn, output_shape, tuple(w.shape), geometry["stride"], geometry["padding"],
                  geometry["dilation"], groups, input.dtype)
    try:
        return back(TransposedConvolution2D.apply(x, w, bias, output_shape=output_shape, **geometry))
    except MemoryError:
        raise MemoryError(f"{fn}: stride={stride}, dilation={dilation} and output_padding="
                          f"{output_padding} ask for an output of shape {output_shape[:2] + (length,)}, "
                          f"more than can be allocated") from None


# ---- pooling ------------------------------------------------------------------------------

def _pool1d_layer_args(fn, kernel_size, stride, padding, dilation, ceil_mode,
                       count_include_pad=True):
    """The checks that need no input (the layers make them when built), in 1-D terms;
    returns (kernel_size, stride, padding, dilation) as ints (stride None: kernel_size)."""
    k = _single(fn, "kernel_size", kernel_size, 1)
    s = k if stride is None else _single(fn, "stride", stride, 1)
    p = _single(fn, "padding", padding, 0)
    d = check_ints(fn, "dilation", dilation, 1, minimum=1, maximum=MAX_DILATION)[0]
    if 2 * p > k:
        raise ValueError(f"{fn}: padding must be at most half the kernel size; got "
                         f"padding={padding!r} with kernel_size={kernel_size!r}")
    _pool_layer_args(fn, (1, k), (1, s), (0, p), ceil_mode, count_include_pad, (1, d))
    return k, s, p, d


def _pool1d(fn, input, kernel_size, stride, padding, dilation, mode, ceil_mode,
            count_include_pad):
    """(the (N, C, 1, L) view, the function back to 1-D, the primitive's arguments)."""
    _input_1d(fn, input)
    k, s, p, d = _pool1d_layer_args(fn, kernel_size, stride, padding, dilation, ceil_mode,
                                    count_include_pad)
    if window_out_size(input.shape[-1], k, s, p, d, ceil_mode) < 1:
        dilated = "" if d == 1 else f" dilated to {d * (k - 1) + 1} by dilation={d}"
        raise ValueError(f"{fn}: the output length would be < 1: the padded input length "
                         f"{input.shape[-1] + 2 * p} is shorter than kernel_size={k}{dilated} (input of "
                         f"shape {tuple(input.shape)}, padding={p})")
    x, back = _as_2d(input)
    return x, back, _pool_args(fn, x, (1, k), (1, s), (0, p), mode, ceil_mode, count_include_pad, (1, d))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kernel_size windows along L; stride defaults to kernel_size. With
    return_indices, also the int64 position along L of each maximum."""
    return _max_pool1d("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool1d(fn, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, back, args = _pool1d(fn, input, kernel_size, stride, padding, dilation, "max", ceil_mode,
                            True)
    return_indices = check_bool(fn, "return_indices", return_indices)
    out = MaxPooling2D.apply(x, return_indices=return_indices, **args)
    return (back(out[0]), back(out[1])) if return_indices else back(out)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over kernel_size windows along L; stride defaults to kernel_size."""
    fn = "avg_pool1d"
    x, back, args = _pool1d(fn, input, kernel_size, stride, padding, 1, "avg", ceil_mode,
                            count_include_pad)
    return back(AveragePooling2D.apply(x, count_include_pad=count_include_pad, **args))


def _adaptive_size(fn, output_size):
    """output_size: an int or a 1-tuple of ints, as an int."""
    return check_ints(fn, "output_size", output_size, 1, minimum=1, maximum=MAX_SIZE)[0]


def adaptive_avg_pool1d(input, output_size):
    """Mean over output_size windows that tile L as evenly as they can: window i spans
    [floor(i * L / output_size), ceil((i + 1) * L / output_size))."""
    fn = "adaptive_avg_pool1d"
    _input_1d(fn, input, nonempty=False)
    size = _adaptive_size(fn, output_size)
    x, back = _as_2d(input)
    try:
        return back(AdaptiveAveragePooling2D.apply(x, output_size=(1, size)))
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, input.shape[:-1] + (size,),
                         input.dtype) from None


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over the windows of adaptive_avg_pool1d; with return_indices, also the int64
    position along L of each maximum."""
    return _adaptive_max_pool1d("adaptive_max_pool1d", input, output_size, return_indices)


def _adaptive_max_pool1d(fn, input, output_size, return_indices=False):
    _input_1d(fn, input, nonempty=False)
    size = _adaptive_size(fn, output_size)
    return_indices = check_bool(fn, "return_indices", return_indices)
    x, back = _as_2d(input)
    try:
        out = AdaptiveMaxPooling2D.apply(x, output_size=(1, size), return_indices=return_indices)
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, input.shape[:-1] + (size,),
                         input.dtype) from None
    return (back(out[0]), back(out[1])) if return_indices else back(out)


# ==== 3-D convolution and pooling =================================================================
#
# Built on the 2-D Functions, as the 1-D forms are, so the 3-D forms run on both engines and
# every device with the same primitives, and autograd differentiates them through the 2-D
# backward passes and the slicing, stacking and padding between. The depth dim is folded into
# the batch: a convolution is K_d conv2d calls, one per kernel depth offset kd, each over the
# strided depth slices of the (depth-padded) input that meet kd, summed; a pooling is one 2-D
# pooling of every depth slice (viewed as (N * C * D, 1, H, W), free for a contiguous input)
# followed by a max or mean over each depth window. Ties in a max go to the first maximum in
# (d, h, w) order, as PyTorch's CPU kernels: the 2-D primitive picks the first in (h, w), and
# the depth max the first depth. Errors name the 3-D function and the argument.

def _triple(fn, name, v, minimum):
    """An int or a tuple of 3 ints, each >= minimum, as a tuple of 3 ints."""
    return check_ints(fn, name, v, 3, minimum=minimum)


def _input_3d(fn, input, channels="C", nonempty=True):
    _tensor(fn, "input", input, ndim=(4, 5),
            ndim_desc=f"4-D ({channels}, D, H, W) or 5-D (N, {channels}, D, H, W)")
    if nonempty:
        check_no_zero_dims(fn, "input", input)
    elif 0 in input.shape[-4:]:  # a batch of 0 is pooled (to an empty batch)
        raise ValueError(f"{fn}: input must have non-zero sizes in its ({channels}, D, H, W) dims; "
                         f"got shape {tuple(input.shape)}")
    return input


def _constant(values, like):
    """A NumPy array as a Tensor of like's dtype on like's device (no gradient)."""
    return Tensor._make(devices.to_device(np.asarray(values, dtype=like.dtype), devices.of(like._data)))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of input (N, C, D, H, W) or (C, D, H, W) with
    weight (K, C // groups, kD, kH, kW); padding may also be 'valid' or 'same'."""
    fn = "conv3d"
    _input_3d(fn, input)
    _tensor(fn, "weight", weight, ndim=5, ndim_desc="5-D (K, C // groups, kD, kH, kW)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (K,)")
    _same_dtype(fn, input, weight=weight, bias=bias)
    check_no_zero_dims(fn, "weight", weight)
    stride = _triple(fn, "stride", stride, 1)
    dilation = _triple(fn, "dilation", dilation, 1)
    groups = check_size(fn, "groups", groups)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{fn}: padding must be an int, a tuple of 3 ints, 'valid' or 'same'; "
                             f"got {padding!r}")
        if padding == "same" and stride != (1, 1, 1):
            raise ValueError(f"{fn}: padding='same' needs stride 1, got stride={stride!r}")
        # 'same' pads an odd total's extra at the end of the dim, as PyTorch does
        totals = [d * (k - 1) if padding == "same" else 0 for d, k in zip(dilation, weight.shape[2:])]
        pads = tuple((t // 2, t - t // 2) for t in totals)
    else:
        pads = tuple((p, p) for p in _triple(fn, "padding", padding, 0))
    k = weight.shape[0]
    _check_conv_channels(fn, input, weight, bias, groups)
    if input.ndim == 4:
        return conv3d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    padded = tuple(size + lo + hi for size, (lo, hi) in zip(input.shape[2:], pads))
    spans = tuple(d * (kk - 1) + 1 for d, kk in zip(dilation, weight.shape[2:]))
    if any(p < s for p, s in zip(padded, spans)):
        raise ValueError(f"{fn}: the output size would be < 1: the padded input {padded} (D, H, W) "
                         f"is smaller than the dilated kernel {spans} (input of shape "
                         f"{tuple(input.shape)}, weight of shape {tuple(weight.shape)}, "
                         f"padding={padding!r}, dilation={dilation})")
    out_d = (padded[0] - spans[0]) // stride[0] + 1
    # Depth padding, and H and W padding that is not symmetric ('same' with an odd total), are
    # made by pad; symmetric H and W padding is conv2d's own.
    symmetric = all(lo == hi for lo, hi in pads[1:])
    hw_padding = (pads[1][0], pads[2][0]) if symmetric else (0, 0)
    widths = (0, 0, 0, 0) if symmetric else pads[2] + pads[1]
    n, c = input.shape[:2]
    h, w = padded[1] - 2 * hw_padding[0], padded[2] - 2 * hw_padding[1]
    geometry = dict(stride=stride[1:], padding=hw_padding, dilation=dilation[1:], groups=groups)
    # The 2-D problem's checks (sizes the native library can index), naming conv3d.
    _conv_problem(fn, (n * out_d, c, h, w), (k,) + tuple(weight.shape[1:2] + weight.shape[3:]),
                  geometry["stride"], geometry["padding"], geometry["dilation"], groups, input.dtype)
    try:
        x = input if not any(widths + pads[0]) else pad(input, widths + pads[0])
        x = x.permute(0, 2, 1, 3, 4)  # (N, D, C, H, W): depth slices fold into the batch
        y = None
        for kd in range(weight.shape[2]):
            start = kd * dilation[0]
            slices = x[:, start:start + (out_d - 1) * stride[0] + 1:stride[0]].reshape(n * out_d, c, h, w)
            part = Convolution2D.apply(slices, weight[:, :, kd], bias if kd == 0 else None, **geometry)
            y = part if y is None else y + part
    except MemoryError:
        out = tuple((p - sp) // st + 1 for p, sp, st in zip(padded, spans, stride))
        raise _too_large(fn, "padding", padding, (n, k) + out, input.dtype) from None
    return y.reshape((n, out_d) + tuple(y.shape[1:])).permute(0, 2, 1, 3, 4).contiguous()


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution of input (N, C_in, D, H, W) or (C_in, D, H, W) with weight
    (C_in, C_out // groups, kD, kH, kW): the output has C_out channels and
    D_out = (D - 1) * stride - 2 * padding + dilation * (kD - 1) + output_padding + 1
    (likewise H_out, W_out); output_padding adds them at the end of each dim only."""
    fn = "conv_transpose3d"
    _input_3d(fn, input, channels="C_in")
    _tensor(fn, "weight", weight, ndim=5, ndim_desc="5-D (C_in, C_out // groups, kD, kH, kW)")
    if bias is not None:
        _tensor(fn, "bias", bias, ndim=1, ndim_desc="1-D (C_out,)")
    _same_dtype(fn, input, weight=weight, bias=bias)
    check_no_zero_dims(fn, "weight", weight)
    stride = _triple(fn, "stride", stride, 1)
    padding = _triple(fn, "padding", padding, 0)
    output_padding = _triple(fn, "output_padding", output_padding, 0)
    dilation = _triple(fn, "dilation", dilation, 1)
    groups = check_size(fn, "groups", groups)
    c_out = _transposed_channels(fn, input, weight, bias, groups,
                                 "(C_in, C_out // groups, kD, kH, kW)")
    _check_output_padding(fn, output_padding, stride, dilation)
    if input.ndim == 4:
        return conv_transpose3d(input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                                groups, dilation).squeeze(0)
    out = _transposed_output_size(fn, input, weight, stride, padding, dilation, output_padding)
    n, c_in, d = input.shape[:3]
    # Each kernel depth offset kd: a conv_transpose2d of every input depth slice, whose result
    # for slice i lands on output depth i * stride + kd * dilation - padding. The slices are
    # spread stride apart (zeros between) and shifted by kd * dilation, then cropped by padding.
    hw = tuple((size - 1) * s - 2 * p + dd * (k - 1) + op + 1 for size, s, p, dd, k, op in
               zip(input.shape[3:], stride[1:], padding[1:], dilation[1:], weight.shape[3:],
                   output_padding[1:]))
    geometry = dict(stride=stride[1:], padding=padding[1:], dilation=dilation[1:], groups=groups)
    planes_shape = (n * d, c_out) + hw
    try:  # the convolution it transposes: its checks (sizes the native library can index)
        _conv_problem(fn, planes_shape, (c_in,) + tuple(weight.shape[1:2] + weight.shape[3:]),
                      geometry["stride"], geometry["padding"], geometry["dilation"], groups,
                      input.dtype)
    except ValueError as e:
        raise ValueError(f"{fn}: stride={stride}, dilation={dilation} and output_padding="
                         f"{output_padding} give an output of {out}, too large: {e}") from None
    x = input.permute(0, 2, 1, 3, 4).reshape((n * d, c_in) + tuple(input.shape[3:]))
    full = (d - 1) * stride[0] + dilation[0] * (weight.shape[2] - 1) + 1 + output_padding[0]
    y = None
    for kd in range(weight.shape[2]):
        part = TransposedConvolution2D.apply(x, weight[:, :, kd], None, output_shape=planes_shape,
                                             **geometry).reshape((n, d, 1) + planes_shape[1:])
        if stride[0] > 1:  # slice i at depth i * stride: stride - 1 zero slices after each
            gap = pad(part, (0, 0, 0, 0, 0, 0, 0, stride[0] - 1))
            part = gap.reshape((n, d * stride[0]) + planes_shape[1:])[:, :(d - 1) * stride[0] + 1]
        else:
            part = part.reshape((n, d) + planes_shape[1:])
        shift = kd * dilation[0]
        part = pad(part, (0, 0) * 3 + (shift, full - shift - part.shape[1]))
        y = part if y is None else y + part
    y = y[:, padding[0]:padding[0] + out[0]].permute(0, 2, 1, 3, 4)
    if bias is not None:
        y = y + bias.reshape(1, c_out, 1, 1, 1)
    return y.contiguous()


# ---- pooling ------------------------------------------------------------------------------

def _pool3d_layer_args(fn, kernel_size, stride, padding, dilation, ceil_mode,
                       count_include_pad=True):
    """The checks that need no input (the layers make them when built), in 3-D terms;
    returns (kernel_size, stride, padding, dilation) as triples (stride None: kernel_size)."""
    k = _triple(fn, "kernel_size", kernel_size, 1)
    s = k if stride is None else _triple(fn, "stride", stride, 1)
    p = _triple(fn, "padding", padding, 0)
    d = check_ints(fn, "dilation", dilation, 3, minimum=1, maximum=MAX_DILATION)
    for axis, kk, pp in zip(("depth", "height", "width"), k, p):
        if 2 * pp > kk:
            raise ValueError(f"{fn}: padding must be at most half the kernel size; got "
                             f"padding={padding!r} with kernel_size={kernel_size!r} ({axis})")
    check_bool(fn, "ceil_mode", ceil_mode)
    check_bool(fn, "count_include_pad", count_include_pad)
    return k, s, p, d


def _as_5d(input):
    """(N, C, D, H, W) or (C, D, H, W) as 5-D, and the function that takes a result back."""
    if input.ndim == 4:
        return input.unsqueeze(0), lambda y: y.squeeze(0)
    return input, lambda y: y


def _pool3d(fn, input, kernel_size, stride, padding, dilation, mode, ceil_mode, count_include_pad):
    """(the input as 5-D, the function back, the depth (k, s, p, dilation), the depth output
    size, the 2-D pooling's arguments for the (N * C * D, 1, H, W) planes)."""
    _input_3d(fn, input)
    k, s, p, dil = _pool3d_layer_args(fn, kernel_size, stride, padding, dilation, ceil_mode,
                                      count_include_pad)
    x, back = _as_5d(input)
    n, c, d, h, w = x.shape
    out_d = window_out_size(d, k[0], s[0], p[0], dil[0], ceil_mode)
    if out_d < 1:
        extent = dil[0] * (k[0] - 1) + 1
        dilated = "" if dil[0] == 1 else f" dilated to {extent} by dilation={dilation!r}"
        raise ValueError(f"{fn}: the output depth would be < 1: the padded input depth "
                         f"{d + 2 * p[0]} is shorter than kernel_size={k[0]}{dilated} (input of shape "
                         f"{tuple(input.shape)}, padding={padding!r})")
    empty = first_empty_window(d, s[0], p[0], dil[0], out_d)
    if empty is not None:
        raise ValueError(f"{fn}: output {empty} along the depth holds no input element: every tap of its "
                         f"window lands in the padding (input of shape {tuple(input.shape)}, "
                         f"kernel_size={kernel_size!r}, padding={padding!r}, dilation={dilation!r})")
    # The 2-D problem's own checks (H and W output sizes, sizes it can index), naming fn.
    _pool_problem(fn, (n * c * d, 1, h, w), k[1:], s[1:], p[1:], mode, ceil_mode,
                  count_include_pad, input.dtype, dil[1:])
    args = dict(kernel_size=k[1:], stride=s[1:], padding=p[1:], ceil_mode=ceil_mode)
    if mode == "max":
        args["dilation"] = dil[1:]
    return x, back, (k[0], s[0], p[0], dil[0]), out_d, args


def _planes(x):
    """(N, C, D, H, W) as (N * C * D, 1, H, W): every depth slice of every channel a plane."""
    return x.reshape((-1, 1) + tuple(x.shape[3:]))


def _volumes(y, x):
    """2-D pooled planes back to (N, C, D, H_out, W_out) for x (N, C, D, H, W)."""
    return y.reshape(tuple(x.shape[:3]) + tuple(y.shape[2:]))


def _depth_taps(depth, k, s, p, dilation, out_d):
    """(kept, table): the kernel depth offsets kd whose tap lands inside the input for some
    window (a huge kernel's others only ever read padding), and (len(kept), out_d) int64: the
    slice that tap reads in window j, j * s - p + kd * dilation, or where that lies in the
    padding, the window's first slice inside the input (one it holds, so that a max over the
    taps is the window's, and a tie, which goes to the first tap holding the maximum, still
    names the window's first maximum in depth order)."""
    lowest = max(0, -(-(p - (out_d - 1) * s) // dilation))  # O(depth) candidates, not O(k)
    kept = []
    for kd in range(lowest, min(k, -(-(depth + p) // dilation))):
        at = kd * dilation - p  # window j's tap at j * s + at: inside for some j < out_d?
        first_j = max(0, -(at // s))
        if first_j < out_d and first_j * s + at < depth:
            kept.append(kd)
    start = np.arange(out_d) * s - p
    first = np.where(start >= 0, start, start + (-start + dilation - 1) // dilation * dilation)
    taps = start + np.asarray(kept, dtype=np.int64)[:, None] * dilation
    return kept, np.where((taps >= 0) & (taps < depth), taps, first)


def _depth_windows(y, k, s, p, out_d, mode, dilation=1):
    """The tensors y[:, :, j * s - p + kd * dilation] (j < out_d) of y (N, C, D, ...), one per
    kernel depth offset kd that reaches the input (_depth_taps; the others would only add
    zeros to a sum or repeat a slice to a max), where a tap lies in the padding: zeros for a
    sum (which is never dilated), and for a max a slice its window holds (the edge slice
    when taps are adjacent), so that the max, and its gradient, are those of the window's
    real slices. Returns (tensors, the taps' depth table)."""
    kept, table = _depth_taps(y.shape[2], k, s, p, dilation, out_d)
    if dilation > 1:  # a gather of whole slices; pad and strided views below otherwise
        return [y.index_select(2, Tensor._make(devices.to_device(row, devices.of(y._data)))) for row in table], table
    before = max(p - kept[0], 0)  # (both pads are at most about the depth: kept taps reach the input)
    after = max((out_d - 1) * s - p + kept[-1] - (y.shape[2] - 1), 0)
    if before or after:
        y = pad(y, (0, 0, 0, 0, before, after), mode="replicate" if mode == "max" else "constant")
    starts = [kd - p + before for kd in kept]
    return [y[:, :, a:a + (out_d - 1) * s + 1:s] for a in starts], table


def _volume_index(which, slots, taps, plane):
    """The flat index d * H * W + h * W + w of each maximum: `which` is the slot (along
    slots' dim 0) holding it, slots the 2-D indices h * W + w, and taps (slots, out_d) the
    depth each slot of each window reads (_depth_taps)."""
    depth = Tensor._make(devices.to_device(taps.reshape((taps.shape[0], 1, 1, -1, 1, 1)), devices.of(which._data)))
    depth = depth.expand(taps.shape[:1] + tuple(which.shape)).gather(0, which.unsqueeze(0)).squeeze(0)
    return depth * plane + slots.gather(0, which.unsqueeze(0)).squeeze(0)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over kernel_size windows (kD, kH, kW); stride defaults to kernel_size. With
    return_indices, also the int64 index d * H * W + h * W + w of each maximum in its input
    volume."""
    return _max_pool3d("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool3d(fn, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, back, (k, s, p, dil), out_d, args = _pool3d(fn, input, kernel_size, stride, padding, dilation,
                                                   "max", ceil_mode, True)
    return_indices = check_bool(fn, "return_indices", return_indices)
    pooled = MaxPooling2D.apply(_planes(x), return_indices=return_indices, **args)
    if not return_indices:
        return back(stack(_depth_windows(_volumes(pooled, x), k, s, p, out_d, "max", dil)[0]).max(0)[0])
    values, indices = (_volumes(t, x) for t in pooled)
    windows, table = _depth_windows(values, k, s, p, out_d, "max", dil)
    y, which = stack(windows).max(0)
    slots = stack(_depth_windows(indices, k, s, p, out_d, "max", dil)[0])
    index = _volume_index(which, slots, table, x.shape[3] * x.shape[4])
    return back(y), back(index)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kernel_size windows (kD, kH, kW); stride defaults to kernel_size. With
    divisor_override, the window's sum divided by it instead."""
    return _avg_pool3d("avg_pool3d", input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _avg_pool3d(fn, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    divisor_override = _divisor_override(fn, divisor_override)
    x, back, (k, s, p, _), out_d, args = _pool3d(fn, input, kernel_size, stride, padding, 1, "avg",
                                                 ceil_mode, count_include_pad)
    d, h, w = x.shape[2:]
    start = np.arange(out_d) * s - p
    if divisor_override is None:
        # A window's divisor is the product of its depth, height and width counts (each with or
        # without the padding), so the mean is the depth mean of the 2-D means.
        pooled = AveragePooling2D.apply(_planes(x), count_include_pad=count_include_pad, **args)
        end = np.minimum(start + k, d + p)
        counts = end - start if count_include_pad else np.minimum(end, d) - np.maximum(start, 0)
    else:
        # Sums: the 2-D means with the padding counted, times their (padding-clipped) counts.
        pooled = _window_sums(AveragePooling2D.apply(_planes(x), count_include_pad=True, **args),
                              args, (h, w))
        counts = np.full(out_d, divisor_override)
    windows, _ = _depth_windows(_volumes(pooled, x), k, s, p, out_d, "avg")
    total = windows[0]
    for window in windows[1:]:
        total = total + window
    return back(total / _constant(counts[:, None, None], x))


def _adaptive_output_3d(fn, output_size, input):
    """output_size (an int, or a triple whose entries may be None: keep that input size) as a
    triple of ints; with input None (a layer being built), None entries stay None."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 3:
            raise ValueError(f"{fn}: output_size must be an int or a tuple (out_d, out_h, out_w), "
                             f"got {output_size!r}")
        sizes = tuple(output_size)
    elif is_int(output_size) or output_size is None:
        sizes = (output_size,) * 3
    else:
        raise TypeError(f"{fn}: output_size must be an int or a tuple (out_d, out_h, out_w) of "
                        f"ints or None, got {type(output_size).__name__} {output_size!r}")
    keep = (None,) * 3 if input is None else tuple(input.shape[-3:])
    out = []
    for size, kept in zip(sizes, keep):
        size = kept if size is None else size
        if size is None:
            out.append(None)
            continue
        if not is_int(size):
            raise TypeError(f"{fn}: output_size entries must be ints or None, got {output_size!r}")
        if not 1 <= size <= 2 ** 58:
            raise ValueError(f"{fn}: output_size entries must be positive ints (at most 2**58) or "
                             f"None, got {output_size!r}")
        out.append(int(size))
    return tuple(out)


def _adaptive_3d(fn, input, output_size):
    _input_3d(fn, input, nonempty=False)
    size = _adaptive_output_3d(fn, output_size, input)
    x, back = _as_5d(input)
    return x, back, size


def adaptive_avg_pool3d(input, output_size):
    """Mean over output_size windows that tile the input's D, H and W as evenly as they can:
    window i spans [floor(i * D / out_d), ceil((i + 1) * D / out_d)), likewise along H and W.
    output_size: an int or (out_d, out_h, out_w); None keeps that input size."""
    fn = "adaptive_avg_pool3d"
    x, back, size = _adaptive_3d(fn, input, output_size)
    try:
        starts, ends = adaptive_windows(x.shape[2], size[0])
        pooled = _volumes(AdaptiveAveragePooling2D.apply(_planes(x), output_size=size[1:]), x)
        # each depth window's mean of the 2-D means (every plane weighs the same)
        return back(stack([pooled[:, :, a:b].mean(2) for a, b in zip(starts, ends)], 2))
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, x.shape[:2] + size, input.dtype) from None


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over the windows of adaptive_avg_pool3d; with return_indices, also the int64
    index d * H * W + h * W + w of each maximum in its input volume (as max_pool3d's)."""
    return _adaptive_max_pool3d("adaptive_max_pool3d", input, output_size, return_indices)


def _adaptive_max_pool3d(fn, input, output_size, return_indices=False):
    x, back, size = _adaptive_3d(fn, input, output_size)
    return_indices = check_bool(fn, "return_indices", return_indices)
    try:
        starts, ends = adaptive_windows(x.shape[2], size[0])
        pooled = AdaptiveMaxPooling2D.apply(_planes(x), output_size=size[1:],
                                            return_indices=return_indices)
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, x.shape[:2] + size, input.dtype) from None
    if not return_indices:
        pooled = _volumes(pooled, x)
        return back(stack([pooled[:, :, a:b].max(2)[0] for a, b in zip(starts, ends)], 2))
    values, indices = (_volumes(t, x) for t in pooled)
    y, index = [], []
    for a, b in zip(starts, ends):
        v, which = values[:, :, a:b].max(2)
        y.append(v)
        index.append((which + int(a)) * (x.shape[3] * x.shape[4])
                     + indices[:, :, a:b].gather(2, which.unsqueeze(2)).squeeze(2))
    return back(stack(y, 2)), back(stack(index, 2))


# ==== attention ===================================================================================
#
# scaled_dot_product_attention and multi_head_attention_forward are compositions of
# differentiable Tensor operations (matmul, masked_fill, softmax, dropout, linear), so autograd
# gives their gradients and the engine in use runs the softmax, dropout and linear layers.
# Two mask conventions meet here, as in PyTorch: scaled_dot_product_attention's boolean
# attn_mask says which scores *take part* (True = attend), while multi_head_attention_forward's
# boolean attn_mask and key_padding_mask say which are *left out* (True = ignore). A float mask
# is added to the scores in both.

# ---- attention: argument checks ------------------------------------------------------------------------

def _same_float_dtype(fn, query, **others):
    for name, t in others.items():
        if t is not None and t.dtype != query.dtype:
            raise TypeError(f"{fn}: {name} must have the dtype of query ({query.dtype}), got "
                            f"{t.dtype}")


def _mask_tensor(fn, name, mask, query, any_float=False):
    """A bool mask, or a float one (to be added to the scores) of query's dtype or, with
    any_float, of either float dtype (cast to query's, as multi-head attention's masks)."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"{fn}: {name} must be a minifw.Tensor (bool, or float to be added to "
                        f"the attention scores) or None, got {type(mask).__name__}")
    if mask.dtype != np.bool_ and mask.dtype != query.dtype and not (
            any_float and mask.dtype.kind == "f"):
        raise TypeError(f"{fn}: {name} must have dtype bool or "
                        f"{'float' if any_float else 'the dtype of query'} ({query.dtype}), got "
                        f"{mask.dtype}")
    if mask.device != query.device:
        raise RuntimeError(f"{fn}: {name} is on {mask.device} but query is on {query.device}; "
                           f"move it with {name}.to({str(query.device)!r})")
    return mask if mask.dtype in (np.bool_, query.dtype) else mask.to(query.dtype)


def _dropout_p(fn, p):
    p = _real(fn, "dropout_p", p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: dropout_p must be a probability in [0, 1], got {p}")
    return p


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


# ---- the attention itself -------------------------------------------------------------------

def _attend(query, key, value, scores_bias, keep, scale, dropout_p, safe):
    """softmax(query key^T * scale + scores_bias, masked by keep) value, and the weights.
    scores_bias (float) and keep (bool, True = attend) broadcast against the scores or are
    None. With safe=True a row left with no score (all -inf) gets zero weights rather than
    NaN, as PyTorch's scaled_dot_product_attention; multi_head_attention_forward's weights
    path keeps the plain softmax, and so PyTorch's NaN there."""
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if scores_bias is not None:
        scores = scores + scores_bias
    if keep is not None:
        scores = scores.masked_fill(keep.logical_not(), -math.inf)
    empty = None
    if safe and (scores_bias is not None or keep is not None):
        empty = (scores.detach() == -math.inf).all(dim=-1, keepdim=True)
        if not bool(empty.any()):
            empty = None
    if empty is not None:  # a finite row keeps softmax and its gradient free of NaN
        scores = scores.masked_fill(empty, 0.0)
    weights = softmax(scores, dim=-1)
    if empty is not None:
        weights = weights.masked_fill(empty, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value), weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query key^T * scale + mask) value for query (..., L, E), key (..., S, E) and
    value (..., S, Ev), giving (..., L, Ev); the leading dims broadcast. attn_mask: bool (True =
    take part) or float (added), broadcasting to (..., L, S); is_causal: query i attends to keys
    0..i (the top-left triangle); scale defaults to 1 / sqrt(E). dropout_p drops attention
    weights whenever it is > 0 (pass 0.0 in evaluation). enable_gqa: key and value may have
    fewer heads (dim -3) than query, each shared by query.size(-3) // key.size(-3) of them."""
    fn = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        _tensor(fn, name, t)
        if t.ndim < 2:
            raise ValueError(f"{fn}: {name} must have at least 2 dims (..., sequence, features); "
                             f"got shape {_shape_text(t.shape)}")
    _same_float_dtype(fn, query, key=key, value=value)
    for name, t in (("key", key), ("value", value)):
        if t.device != query.device:
            raise RuntimeError(f"{fn}: {name} is on {t.device} but query is on {query.device}")
    dropout_p = _dropout_p(fn, dropout_p)
    is_causal = check_bool(fn, "is_causal", is_causal)
    enable_gqa = check_bool(fn, "enable_gqa", enable_gqa)
    e, (s, ev) = query.shape[-1], value.shape[-2:]
    if key.shape[-1] != e:
        raise ValueError(f"{fn}: key must have query's feature size E = {e} in its last dim; got "
                         f"key of shape {_shape_text(key.shape)} for query of shape "
                         f"{_shape_text(query.shape)}")
    if key.shape[-2] != s:
        raise ValueError(f"{fn}: key and value must have the same sequence length S (dim -2); "
                         f"got key {_shape_text(key.shape)} and value {_shape_text(value.shape)}")
    if enable_gqa:
        key, value = _share_heads(fn, query, key, value)
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(f"{fn}: the leading dims of query {_shape_text(query.shape)}, key "
                         f"{_shape_text(key.shape)} and value {_shape_text(value.shape)} must "
                         f"broadcast together (key and value with fewer heads than query need "
                         f"enable_gqa=True)") from None
    scores_shape = tuple(batch) + (query.shape[-2], s)
    scale = 1.0 / math.sqrt(e) if scale is None else _real(fn, "scale", scale, query)
    bias = keep = None
    if attn_mask is not None:
        if is_causal:
            raise ValueError(f"{fn}: give attn_mask or is_causal=True, not both (is_causal "
                             f"builds its own mask)")
        _mask_tensor(fn, "attn_mask", attn_mask, query)
        try:
            fits = np.broadcast_shapes(attn_mask.shape, scores_shape) == scores_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{fn}: attn_mask must broadcast to the scores' shape (..., L, S) = "
                             f"{_shape_text(scores_shape)}; got shape "
                             f"{_shape_text(attn_mask.shape)}")
        if attn_mask.dtype == np.bool_:
            keep = attn_mask
        else:
            bias = attn_mask
    elif is_causal:
        keep = query.new_ones((query.shape[-2], s), dtype=np.bool_).tril()
    return _attend(query, key, value, bias, keep, scale, dropout_p, safe=True)[0]


def _share_heads(fn, query, key, value):
    """Grouped-query attention: repeat each of key's and value's heads (dim -3) for the
    query.size(-3) // key.size(-3) query heads that share it."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim < 3:
            raise ValueError(f"{fn}: enable_gqa=True needs {name} with a heads dim (..., heads, "
                             f"sequence, features); got shape {_shape_text(t.shape)}")
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hk != hv or hq % hk:
        raise ValueError(f"{fn}: with enable_gqa=True key and value must have the same number of "
                         f"heads, dividing query's {hq}; got {hk} and {hv}")
    group = hq // hk
    if group == 1:
        return key, value
    return key.repeat_interleave(group, dim=-3), value.repeat_interleave(group, dim=-3)


# ---- multi-head attention -------------------------------------------------------------------

def _additive(mask, dtype):
    """A multi-head attention mask as scores to add: True (leave out) becomes -inf."""
    if mask.dtype == np.bool_:
        return mask.new_zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, -math.inf)
    return mask


def _check_projection(fn, name, t, shape, query, why=""):
    if t is None:
        raise ValueError(f"{fn}: {name} is required{why}, got None")
    _tensor(fn, name, t)
    _same_float_dtype(fn, query, **{name: t})
    if tuple(t.shape) != shape:
        raise ValueError(f"{fn}: {name} must have shape {_shape_text(shape)}, got "
                         f"{_shape_text(t.shape)}")


def _mha_layouts(fn, query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched: query (L, N, E) and key/value (S, N, *) or, unbatched,
    (L, E) and (S, *); each mask's rank must agree. Returns it and the masks, float ones in
    query's dtype."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _tensor(fn, name, t)
    if query.ndim not in (2, 3):
        raise ValueError(f"{fn}: query must be 3-D (L, N, E) or, unbatched, 2-D (L, E); got "
                         f"shape {_shape_text(query.shape)}")
    batched = query.ndim == 3
    for name, t in (("key", key), ("value", value)):
        if t.ndim != query.ndim:
            raise ValueError(f"{fn}: {name} must be {query.ndim}-D like query "
                             f"{_shape_text(query.shape)}; got shape {_shape_text(t.shape)}")
    _same_float_dtype(fn, query, key=key, value=value)
    if key_padding_mask is not None:
        key_padding_mask = _mask_tensor(fn, "key_padding_mask", key_padding_mask, query, True)
        want = 2 if batched else 1
        if key_padding_mask.ndim != want:
            raise ValueError(f"{fn}: key_padding_mask must be {want}-D "
                             f"{'(N, S)' if batched else '(S,)'} for "
                             f"{'batched' if batched else 'unbatched'} query of shape "
                             f"{_shape_text(query.shape)}; got shape "
                             f"{_shape_text(key_padding_mask.shape)}")
    if attn_mask is not None:
        attn_mask = _mask_tensor(fn, "attn_mask", attn_mask, query, True)
        if attn_mask.ndim not in (2, 3):
            raise ValueError(f"{fn}: attn_mask must be 2-D (L, S) or 3-D (N * num_heads, L, S); "
                             f"got shape {_shape_text(attn_mask.shape)}")
        if not batched and attn_mask.ndim == 3 and attn_mask.shape[0] != num_heads:
            raise ValueError(f"{fn}: a 3-D attn_mask for unbatched query must be (num_heads, L, "
                             f"S) with num_heads = {num_heads}; got shape "
                             f"{_shape_text(attn_mask.shape)}")
    return batched, key_padding_mask, attn_mask


def _append_zero_column(mask):
    """A key more for every query (bias_k, add_zero_attn): nothing added to its scores."""
    return None if mask is None else cat([mask, mask.new_zeros(tuple(mask.shape[:-1]) + (1,))],
                                         dim=-1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention (Vaswani et al., 2017) of query (L, N, E) over key (S, N, kdim) and
    value (S, N, vdim), or unbatched (L, E), (S, kdim), (S, vdim): project to num_heads heads,
    attend, join the heads and project out. Returns (output (L, N, E), weights or None): the
    weights are (N, L, S), or (N, num_heads, L, S) with average_attn_weights=False.
    key_padding_mask (N, S) and attn_mask (L, S) or (N * num_heads, L, S): bool (True = leave
    out) or float (added to the scores). is_causal is a hint that attn_mask is causal; the
    mask given is what is applied."""
    fn = "multi_head_attention_forward"
    batched, key_padding_mask, attn_mask = _mha_layouts(fn, query, key, value, key_padding_mask,
                                                        attn_mask, num_heads)
    for name, flag in (("add_zero_attn", add_zero_attn), ("training", training),
                       ("need_weights", need_weights), ("use_separate_proj_weight",
                                                        use_separate_proj_weight),
                       ("average_attn_weights", average_attn_weights), ("is_causal", is_causal)):
        check_bool(fn, name, flag)
    if is_causal and attn_mask is None:
        raise ValueError(f"{fn}: is_causal=True is a hint that attn_mask is the causal mask, so "
                         f"attn_mask must be given (e.g. nn.Transformer."
                         f"generate_square_subsequent_mask(L)); got attn_mask=None")
    dropout_p = _dropout_p(fn, dropout_p)
    num_heads = check_int(fn, "num_heads", num_heads, minimum=1)
    embed_dim_to_check = check_int(fn, "embed_dim_to_check", embed_dim_to_check, minimum=1)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    (tgt_len, bsz, embed_dim), src_len = query.shape, key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"{fn}: query's last dim must be embed_dim_to_check = "
                         f"{embed_dim_to_check}; got query of shape {_shape_text(query.shape)}")
    if embed_dim % num_heads:
        raise ValueError(f"{fn}: embed_dim ({embed_dim}) must be divisible by num_heads "
                         f"({num_heads})")
    head_dim = embed_dim // num_heads
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"{fn}: key and value must have the same (S, N); got key "
                             f"{_shape_text(key.shape)} and value {_shape_text(value.shape)}")
    elif key.shape != value.shape:
        raise ValueError(f"{fn}: key and value must have the same shape (with "
                         f"use_separate_proj_weight=False); got key {_shape_text(key.shape)} and "
                         f"value {_shape_text(value.shape)}")
    if key.shape[1] != bsz:
        raise ValueError(f"{fn}: key and value must have query's batch size {bsz}; got key of "
                         f"shape {_shape_text(key.shape)}")

    # the projections: three slices of in_proj_weight, or three separate weights
    if use_separate_proj_weight:
        _check_projection(fn, "q_proj_weight", q_proj_weight, (embed_dim, embed_dim), query,
                          " with use_separate_proj_weight=True")
        _check_projection(fn, "k_proj_weight", k_proj_weight, (embed_dim, key.shape[-1]), query,
                          " with use_separate_proj_weight=True")
        _check_projection(fn, "v_proj_weight", v_proj_weight, (embed_dim, value.shape[-1]), query,
                          " with use_separate_proj_weight=True")
        projections = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        _check_projection(fn, "in_proj_weight", in_proj_weight, (3 * embed_dim, embed_dim), query,
                          " with use_separate_proj_weight=False")
        for name, t in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if t is not None:  # not used here, but never taken blindly
                _tensor(fn, name, t)
        projections = in_proj_weight.chunk(3)
    biases = (None,) * 3
    if in_proj_bias is not None:
        _check_projection(fn, "in_proj_bias", in_proj_bias, (3 * embed_dim,), query)
        biases = in_proj_bias.chunk(3)
    _check_projection(fn, "out_proj_weight", out_proj_weight, (embed_dim, embed_dim), query)
    if out_proj_bias is not None:
        _check_projection(fn, "out_proj_bias", out_proj_bias, (embed_dim,), query)
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), projections, biases))
    for name, static in (("static_k", static_k), ("static_v", static_v)):
        if static is not None:
            _tensor(fn, name, static, ndim=3, ndim_desc="3-D (N * num_heads, S, head_dim)")
            _same_float_dtype(fn, query, **{name: static})
            if static.shape[0] != bsz * num_heads or static.shape[2] != head_dim:
                raise ValueError(f"{fn}: {name} must have shape (N * num_heads, S, head_dim) = "
                                 f"({bsz * num_heads}, S, {head_dim}); got "
                                 f"{_shape_text(static.shape)}")
    if static_k is not None:  # the keys the masks cover
        src_len = static_k.shape[1]

    # the masks, as scores to add: attn_mask (1 or N, 1 or heads, L, S), key_padding_mask
    # (N, 1, 1, S)
    if attn_mask is not None:
        want = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise ValueError(f"{fn}: attn_mask must have shape {_shape_text(want)} "
                             f"{'(L, S)' if attn_mask.ndim == 2 else '(N * num_heads, L, S)'}; "
                             f"got {_shape_text(attn_mask.shape)}")
        attn_mask = _additive(attn_mask, query.dtype)
        attn_mask = attn_mask.reshape((1, 1) + want if attn_mask.ndim == 2
                                      else (bsz, num_heads, tgt_len, src_len))
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ValueError(f"{fn}: key_padding_mask must have shape (N, S) = "
                             f"{_shape_text((bsz, src_len))}; got "
                             f"{_shape_text(key_padding_mask.shape)}")
        key_padding_mask = _additive(key_padding_mask, query.dtype).reshape(bsz, 1, 1, src_len)

    if bias_k is not None or bias_v is not None:
        if bias_k is None or bias_v is None:
            raise ValueError(f"{fn}: bias_k and bias_v must be given together")
        if static_k is not None or static_v is not None:
            raise ValueError(f"{fn}: bias_k and bias_v cannot be added to static_k / static_v")
        for name, t in (("bias_k", bias_k), ("bias_v", bias_v)):
            _check_projection(fn, name, t, (1, 1, embed_dim), query)
        k = cat([k, bias_k.expand(1, bsz, embed_dim)], dim=0)
        v = cat([v, bias_v.expand(1, bsz, embed_dim)], dim=0)
        attn_mask, key_padding_mask = map(_append_zero_column, (attn_mask, key_padding_mask))

    def heads(x):  # (S, N, E) -> (N, heads, S, head_dim)
        return x.reshape(x.shape[0], bsz, num_heads, head_dim).permute(1, 2, 0, 3)

    q, k, v = heads(q), heads(k), heads(v)
    if static_k is not None:
        k = static_k.reshape(bsz, num_heads, static_k.shape[1], head_dim)
    if static_v is not None:
        v = static_v.reshape(bsz, num_heads, static_v.shape[1], head_dim)
    if k.shape[2] != v.shape[2]:
        raise ValueError(f"{fn}: keys and values must be as many; got {k.shape[2]} and "
                         f"{v.shape[2]} (static_k / static_v)")
    if add_zero_attn:
        k = cat([k, k.new_zeros((bsz, num_heads, 1, head_dim))], dim=2)
        v = cat([v, v.new_zeros((bsz, num_heads, 1, head_dim))], dim=2)
        attn_mask, key_padding_mask = map(_append_zero_column, (attn_mask, key_padding_mask))

    if key_padding_mask is not None:
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    out, weights = _attend(q, k, v, attn_mask, None, 1.0 / math.sqrt(head_dim),
                           dropout_p if training else 0.0, safe=not need_weights)
    out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return (out if batched else out.squeeze(1)), None
    if average_attn_weights:
        weights = weights.mean(dim=1)
    return (out, weights) if batched else (out.squeeze(1), weights.squeeze(0))


# ==== spatial sampling and patches =================================================================
#
# affine_grid and grid_sample (the sampler of a spatial transformer network, Jaderberg et al.,
# 2015), unfold and fold (im2col and col2im in PyTorch's (N, C*kh*kw, L) layout). grid_sample,
# unfold and fold apply the Functions of minifw.functions.sampling; affine_grid is a matrix
# product of Tensors, so theta's gradient is autograd's.

_GRID_SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")


def _align_corners(fn, align_corners):
    """None (PyTorch's default, which warns there) is False, without a warning."""
    return False if align_corners is None else check_bool(fn, "align_corners", align_corners)


# ---- affine_grid, grid_sample ---------------------------------------------------------------

def _base_coordinates(n, align_corners, dtype):
    """n points spread over [-1, 1]: the corner pixels' centres with align_corners, else the
    centres of n equal cells (a single point sits at 0)."""
    if n == 1:
        return np.zeros(1, dtype)
    steps = np.linspace(-1.0, 1.0, n).astype(dtype)
    return steps if align_corners else steps * dtype.type(n - 1) / dtype.type(n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) of the affine maps theta (N, 2, 3) for an output of
    size (N, C, H, W): point (h, w) is theta[n] @ (x_w, y_h, 1), x and y the output pixels'
    normalized coordinates in [-1, 1] (see grid_sample for align_corners)."""
    fn = "affine_grid"
    _tensor(fn, "theta", theta)
    align_corners = _align_corners(fn, align_corners)
    if not isinstance(size, (tuple, list)) or len(size) != 4:
        raise ValueError(f"{fn}: size must be a sequence of 4 ints (N, C, H, W) (only 2-D "
                         f"affine grids are supported), got {size!r}")
    n, _, h, w = check_ints(fn, "size", tuple(size), 4, minimum=0)
    if min(h, w) < 1:
        raise ValueError(f"{fn}: size must have H and W >= 1, got {tuple(size)}")
    if tuple(theta.shape) != (n, 2, 3):
        raise ValueError(f"{fn}: theta must have shape (N, 2, 3) = {(n, 2, 3)} for size "
                         f"{tuple(size)}; got {tuple(theta.shape)}")
    dtype = np.dtype(theta.dtype)
    xs = _base_coordinates(w, align_corners, dtype)
    ys = _base_coordinates(h, align_corners, dtype)
    base = np.stack([np.broadcast_to(xs, (h, w)), np.broadcast_to(ys[:, None], (h, w)),
                     np.ones((h, w), dtype)], axis=-1).reshape(h * w, 3)
    base = Tensor._make(devices.to_device(base, devices.of(theta._data)))
    return (base @ theta.transpose(1, 2)).reshape(n, h, w, 2)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at the points of grid (N, Ho, Wo, 2): (N, C, Ho, Wo).
    grid[n, i, j] holds (x, y), -1 the left (top) and 1 the right (bottom) edge of the image,
    the corner pixels' outer edges, or their centres with align_corners=True (default False).
    mode: 'bilinear', 'nearest' or 'bicubic'; points outside read zeros ('zeros'), the
    nearest edge pixel ('border') or the image mirrored at its edges ('reflection')."""
    fn = "grid_sample"
    _tensor(fn, "input", input, ndim=4, ndim_desc="4-D (N, C, H, W) (5-D volumes are not "
                                                  "supported)")
    _tensor(fn, "grid", grid, ndim=4, ndim_desc="4-D (N, H_out, W_out, 2)")
    check_choice(fn, "mode", mode, _GRID_SAMPLE_MODES)
    check_choice(fn, "padding_mode", padding_mode, _PADDING_MODES)
    align_corners = _align_corners(fn, align_corners)
    _same_dtype(fn, input, grid=grid)
    _same_device(fn, input, grid=grid)
    if grid.shape[0] != input.shape[0] or grid.shape[3] != 2:
        raise ValueError(f"{fn}: grid must have shape (N, H_out, W_out, 2) with N = "
                         f"{input.shape[0]} (input's batch size); got {tuple(grid.shape)}")
    if min(input.shape[2:]) < 1:
        raise ValueError(f"{fn}: input must have H and W >= 1, got shape {tuple(input.shape)}")
    return GridSampling.apply(input, grid, mode=mode, padding_mode=padding_mode,
                              align_corners=align_corners)


# ---- unfold, fold ---------------------------------------------------------------------------

def _window_args(fn, kernel_size, dilation, padding, stride):
    return (check_pair(fn, "kernel_size", kernel_size, minimum=1),
            check_pair(fn, "dilation", dilation, minimum=1),
            check_pair(fn, "padding", padding, minimum=0),
            check_pair(fn, "stride", stride, minimum=1))


def _window_counts(fn, spatial, kernel_size, dilation, padding, stride):
    """The number of window positions along H and W; each must be at least 1."""
    counts = tuple((size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, d, p, s
                   in zip(spatial, kernel_size, dilation, padding, stride))
    if min(counts) < 1:
        raise ValueError(f"{fn}: kernel_size={kernel_size} with dilation={dilation} does not fit "
                         f"the spatial size {tuple(spatial)} padded by {padding}: it gives "
                         f"{counts} window positions, and each must be >= 1")
    padded = [size + 2 * p for size, p in zip(spatial, padding)]
    if math.prod(padded) * math.prod(kernel_size) > MAX_SIZE or math.prod(counts) > MAX_SIZE:
        raise ValueError(f"{fn}: padding={padding} (the padded size {tuple(padded)}) and "
                         f"kernel_size={kernel_size} give more values than the {MAX_SIZE} an array "
                         f"may hold here")
    return counts


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of input (N, C, H, W) or (C, H, W) as columns: (N, C*kh*kw, L),
    L the number of window positions, row c*kh*kw + i*kw + j holding kernel tap (i, j) of
    channel c (im2col)."""
    fn = "unfold"
    _tensor(fn, "input", input, ndim=(3, 4), ndim_desc="3-D (C, H, W) or 4-D (N, C, H, W)")
    args = _window_args(fn, kernel_size, dilation, padding, stride)
    _window_counts(fn, input.shape[-2:], *args)
    x = input if input.ndim == 4 else input.unsqueeze(0)
    cols = Unfolding.apply(x, kernel_size=args[0], dilation=args[1], padding=args[2],
                           stride=args[3])
    return cols if input.ndim == 4 else cols.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns (N, C*kh*kw, L) or (C*kh*kw, L) summed into an image (N, C, H, W) or (C, H, W),
    (H, W) = output_size: each value added where unfold with these arguments takes it from
    (col2im; overlapping windows add up)."""
    fn = "fold"
    _tensor(fn, "input", input, ndim=(2, 3), ndim_desc="2-D (C*kh*kw, L) or 3-D "
                                                       "(N, C*kh*kw, L)")
    output_size = check_pair(fn, "output_size", output_size, minimum=1)
    args = _window_args(fn, kernel_size, dilation, padding, stride)
    kh, kw = args[0]
    rows, length = input.shape[-2:]
    if rows % (kh * kw):
        raise ValueError(f"{fn}: input's dim {input.ndim - 2} must be divisible by kh*kw = "
                         f"{kh * kw} (kernel_size={args[0]}); got input of shape "
                         f"{tuple(input.shape)}")
    oh, ow = _window_counts(fn, output_size, *args)
    if length != oh * ow:
        raise ValueError(f"{fn}: input's last dim must be the number of windows L = {oh} * {ow} "
                         f"= {oh * ow} for output_size={output_size}, kernel_size={args[0]}, "
                         f"dilation={args[1]}, padding={args[2]}, stride={args[3]}; got input of "
                         f"shape {tuple(input.shape)}")
    cols = input if input.ndim == 3 else input.unsqueeze(0)
    image = Folding.apply(cols, output_size=output_size, kernel_size=args[0], dilation=args[1],
                          padding=args[2], stride=args[3])
    return image if input.ndim == 3 else image.squeeze(0)


# ==== more pooling: the with-indices forms, unpooling, power-average and fractional max =========
#
# Compositions of the pooling above and of differentiable Tensor operations (gather, scatter,
# max along a dim, pow), so autograd gives their gradients, second ones included.

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d's (output, indices), whatever return_indices says (as PyTorch's)."""
    fn = "max_pool1d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _max_pool1d(fn, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d's (output, indices), whatever return_indices says (as PyTorch's)."""
    fn = "max_pool2d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _max_pool2d(fn, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d's (output, indices), whatever return_indices says (as PyTorch's)."""
    fn = "max_pool3d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _max_pool3d(fn, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool1d's (output, indices), whatever return_indices says."""
    fn = "adaptive_max_pool1d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _adaptive_max_pool1d(fn, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d's (output, indices), whatever return_indices says."""
    fn = "adaptive_max_pool2d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _adaptive_max_pool2d(fn, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool3d's (output, indices), whatever return_indices says."""
    fn = "adaptive_max_pool3d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _adaptive_max_pool3d(fn, input, output_size, True)


_SPATIAL = {1: "(L)", 2: "(H, W)", 3: "(D, H, W)"}


def _spatial_input(fn, input, n, nonempty=True):
    """input (N, C, *spatial) or (C, *spatial) with n spatial dims, as (N, C, *spatial) and the
    function that takes a result back to input's batching."""
    desc = _SPATIAL[n][1:-1]
    _tensor(fn, "input", input, ndim=(n + 1, n + 2),
            ndim_desc=f"{n + 1}-D (C, {desc}) or {n + 2}-D (N, C, {desc})")
    if nonempty:
        check_no_zero_dims(fn, "input", input)
    if input.ndim == n + 1:
        return input.unsqueeze(0), lambda y: y.squeeze(0)
    return input, lambda y: y


def _index_tensor(fn, name, t, shape=None):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a minifw.Tensor of int64 indices, got "
                        f"{type(t).__name__}")
    if t.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold int64 indices, got dtype {t.dtype}")
    if shape is not None and tuple(t.shape) != tuple(shape):
        raise ValueError(f"{fn}: {name} must have the input's shape {tuple(shape)}, got "
                         f"{tuple(t.shape)}")
    return t.long()


def _unpool_size(fn, n, spatial, k, s, p, output_size):
    """The unpooled sizes: (in - 1) * stride - 2 * padding + kernel_size, or output_size (its
    last n entries), which must lie strictly within a stride of those."""
    default = tuple((i - 1) * ss - 2 * pp + kk for i, kk, ss, pp in zip(spatial, k, s, p))
    if output_size is None:
        sizes = default
    else:
        if not isinstance(output_size, (tuple, list)):
            raise TypeError(f"{fn}: output_size must be a tuple or list of ints, got "
                            f"{type(output_size).__name__} {output_size!r}")
        sizes = tuple(output_size)
        if len(sizes) in (n + 1, n + 2):
            sizes = sizes[-n:]
        if len(sizes) != n:
            raise ValueError(f"{fn}: output_size must have {n}, {n + 1} or {n + 2} entries, got "
                             f"{output_size!r}")
        for size in sizes:
            if not is_int(size):
                raise TypeError(f"{fn}: output_size entries must be ints, got {output_size!r}")
        sizes = tuple(int(v) for v in sizes)
        for size, d, ss in zip(sizes, default, s):
            if not d - ss < size < d + ss:
                raise ValueError(f"{fn}: output_size {sizes} is out of range for kernel_size={k}, "
                                 f"stride={s} and padding={p}: each size must lie strictly "
                                 f"between {tuple(a - b for a, b in zip(default, s))} and "
                                 f"{tuple(a + b for a, b in zip(default, s))}")
    if min(sizes) < 1:
        raise ValueError(f"{fn}: the unpooled size {sizes} must be positive (kernel_size, stride "
                         f"and padding give {default})")
    if math.prod(sizes) > MAX_SIZE:
        raise ValueError(f"{fn}: the unpooled size {sizes} is too large (kernel_size={k}, "
                         f"stride={s}, output_size={output_size!r})")
    return sizes


def _max_unpool(fn, n, input, indices, kernel_size, stride, padding, output_size):
    x, back = _spatial_input(fn, input, n, nonempty=False)
    indices = _index_tensor(fn, "indices", indices, input.shape)
    _same_device(fn, input, indices=indices)
    k = check_ints(fn, "kernel_size", kernel_size, n, minimum=1, maximum=MAX_SIZE)
    s = k if stride is None else check_ints(fn, "stride", stride, n, minimum=1, maximum=MAX_SIZE)
    p = check_ints(fn, "padding", padding, n, minimum=0, maximum=MAX_SIZE)
    sizes = _unpool_size(fn, n, x.shape[2:], k, s, p, output_size)
    batch, plane = tuple(x.shape[:2]), math.prod(sizes)
    index = indices.reshape(batch + (-1,))
    if index.numel() and (int(index.min().item()) < 0 or int(index.max().item()) >= plane):
        raise ValueError(f"{fn}: indices must lie in [0, {plane}) (positions in an unpooled plane "
                         f"of size {sizes}, from output_size={output_size!r}, kernel_size={k}, "
                         f"stride={s} and padding={p}); got values from {int(index.min().item())} "
                         f"to {int(index.max().item())}")
    try:
        zeros = Tensor._make(devices.zeros(batch + (plane,), x.dtype, x.device))
    except MemoryError:
        raise _too_large(fn, "output_size", output_size, batch + sizes, x.dtype) from None
    out = zeros.scatter(2, index, x.reshape(batch + (-1,)))
    return back(out.reshape(batch + sizes))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: zeros of the pooled-from length with each value of
    input put back at its index (as max_pool1d's return_indices gives them)."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: zeros of the pooled-from (H, W) with each value of
    input put back at its index h * W + w."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: zeros of the pooled-from (D, H, W) with each value of
    input put back at its index d * H * W + h * W + w."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(fn, n, input, norm_type, kernel_size, stride, ceil_mode):
    """(sum over each window of x^p)^(1/p): the window mean of x^p times the window's size,
    as PyTorch computes it (a negative mean, from odd p and negative inputs, gives 0)."""
    _tensor(fn, "input", input)
    norm_type = _real(fn, "norm_type", norm_type, input)
    if norm_type == 0:
        raise ValueError(f"{fn}: norm_type must not be 0 (1 / norm_type is taken), got 0")
    k = check_ints(fn, "kernel_size", kernel_size, n, minimum=1)
    check_bool(fn, "ceil_mode", ceil_mode)
    powered = input.pow(norm_type)
    if n == 1:
        x, back, args = _pool1d(fn, powered, k[0], stride, 0, 1, "avg", ceil_mode, True)
        out = back(AveragePooling2D.apply(x, count_include_pad=True, **args))
    elif n == 2:
        _pool_input(fn, input)
        args = _pool_args(fn, powered, k, stride, 0, "avg", ceil_mode, True)
        x = powered.unsqueeze(0) if input.ndim == 3 else powered
        out = AveragePooling2D.apply(x, count_include_pad=True, **args)
        out = out.squeeze(0) if input.ndim == 3 else out
    else:
        out = _avg_pool3d(fn, powered, k, stride, 0, ceil_mode, True, None)
    return (out.sign() * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling along L: (sum of x^p over each window)^(1/p), p = norm_type
    (p = 1: sum pooling; large p tends to max pooling)."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (H, W) windows: (sum of x^p over each window)^(1/p)."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (D, H, W) windows: (sum of x^p over each window)^(1/p)."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def _fractional_starts(samples, size, out, k, dtype):
    """The window starts of fractional max pooling along one dim (Graham, 2014), for each
    plane's sample u in [0, 1): floor((i + u) a) - floor(u a) with a = (size - k) / (out - 1),
    in the input's dtype as PyTorch's kernel computes them; the last window ends at the end."""
    starts = np.empty(samples.shape + (out,), np.int64)
    if out > 1:
        alpha = dtype.type(size - k) / dtype.type(out - 1)
        i = np.arange(out - 1, dtype=dtype)
        u = samples.astype(dtype)[..., None]
        starts[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    starts[..., -1] = size - k
    return starts


def _fractional_max_pool(fn, n, input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples):
    x, back = _spatial_input(fn, input, n)
    k = check_ints(fn, "kernel_size", kernel_size, n, minimum=1)
    return_indices = check_bool(fn, "return_indices", return_indices)
    spatial = tuple(x.shape[2:])
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn}: give output_size or output_ratio (both are None)")
    if output_ratio is not None:  # checked even when output_size, which wins, is given
        ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        if len(ratios) != n:
            raise ValueError(f"{fn}: output_ratio must be a number or {n} numbers, got "
                             f"{output_ratio!r}")
        ratios = [_real(fn, "output_ratio", r) for r in ratios]
        if not all(0 < r < 1 for r in ratios):
            raise ValueError(f"{fn}: output_ratio must lie in (0, 1), got {output_ratio!r}")
    if output_size is not None:
        out = check_ints(fn, "output_size", output_size, n, minimum=1)
    else:
        out = tuple(int(size * r) for size, r in zip(spatial, ratios))
        if min(out) < 1:
            raise ValueError(f"{fn}: output_ratio={output_ratio!r} gives an empty output for an "
                             f"input of size {spatial}")
    for size, o, kk in zip(spatial, out, k):
        if o + kk - 1 > size:
            raise ValueError(f"{fn}: output_size {out} with kernel_size {k} needs an input of at "
                             f"least output_size + kernel_size - 1 in each dim, got {spatial}")
    batch = tuple(x.shape[:2])
    if _random_samples is None:
        samples = _random.default_generator.numpy.random(batch + (n,))
    else:
        if not isinstance(_random_samples, Tensor):
            raise TypeError(f"{fn}: _random_samples must be a minifw.Tensor, got "
                            f"{type(_random_samples).__name__}")
        if _random_samples.dtype != input.dtype:
            raise TypeError(f"{fn}: _random_samples must have the input's dtype {input.dtype}, "
                            f"got {_random_samples.dtype}")
        if tuple(_random_samples.shape) != batch + (n,):
            raise ValueError(f"{fn}: _random_samples must have shape (N, C, {n}) = "
                             f"{batch + (n,)}, got {tuple(_random_samples.shape)}")
        samples = devices.to_device(_random_samples._data, devices.CPU)
        if not (np.all(samples >= 0) and np.all(samples < 1)):
            raise ValueError(f"{fn}: _random_samples must lie in [0, 1)")
    # PyTorch's sample order: 2-D (width, height), 3-D (depth, height, width)
    order = (1, 0) if n == 2 else tuple(range(n))
    starts = [_fractional_starts(samples[..., order[d]], spatial[d], out[d], k[d],
                                 np.dtype(input.dtype)) for d in range(n)]
    # flat[n, c, o_1..o_n, j]: the plane offsets of window (o_1..o_n)'s j-th element, row-major
    strides = [math.prod(spatial[d + 1:]) for d in range(n)]
    flat = np.zeros(batch + out + k, np.int64)
    for d in range(n):
        pos = starts[d].reshape(batch + tuple(out[d] if e == d else 1 for e in range(n)) + (1,) * n)
        pos = pos + np.arange(k[d]).reshape((1,) * (2 + n) + tuple(k[d] if e == d else 1
                                                                   for e in range(n)))
        flat = flat + pos * strides[d]
    flat = Tensor._make(devices.to_device(flat.reshape(batch + out + (-1,)), x.device))
    windows = x.reshape(batch + (-1,)).gather(2, flat.reshape(batch + (-1,)))
    y, which = windows.reshape(tuple(flat.shape)).max(-1)
    if not return_indices:
        return back(y)
    return back(y), back(flat.gather(-1, which.unsqueeze(-1)).squeeze(-1))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling (Graham, 2014): max over kernel_size windows whose starts step by
    a fractional amount, set by one random sample per plane (_random_samples (N, C, 2) in
    [0, 1), or drawn from minifw's generator), to output_size or input size * output_ratio."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool2d's (output, indices), whatever return_indices says."""
    fn = "fractional_max_pool2d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _fractional_max_pool(fn, 2, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over (D, H, W) (fractional_max_pool2d's, with _random_samples
    (N, C, 3))."""
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool3d's (output, indices), whatever return_indices says."""
    fn = "fractional_max_pool3d_with_indices"
    check_bool(fn, "return_indices", return_indices)
    return _fractional_max_pool(fn, 3, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


# ==== more activations, dropouts and shuffles ====================================================

def relu_(input):
    """relu written over input."""
    if _integer_tensor(input):
        return _integer_activation("relu_", input, True, Tensor.relu)
    return _activation("relu_", input, "relu", True)


def elu_(input, alpha=1.0):
    """elu written over input."""
    return _activation("elu_", input, "elu", True, alpha=alpha)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu written over input."""
    return _activation("leaky_relu_", input, "leaky_relu", True, negative_slope=negative_slope)


def celu_(input, alpha=1.0):
    """celu written over input."""
    return _celu("celu_", input, alpha, True)


def selu_(input):
    """selu written over input."""
    return _pointwise("selu_", input, ScaledExponentialLinear, True, alpha=_SELU_ALPHA,
                      scale=_SELU_SCALE, input_scale=1.0)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh written over input."""
    return _hardtanh("hardtanh_", input, min_val, max_val, True)


def threshold_(input, threshold, value):
    """threshold written over input."""
    return _threshold("threshold_", input, threshold, value, True)


def _rrelu(fn, input, lower, upper, training, inplace):
    _tensor(fn, "input", input)
    lower, upper = _real(fn, "lower", lower, input), _real(fn, "upper", upper, input)
    if lower > upper:
        raise ValueError(f"{fn}: lower must be at most upper, got lower={lower} and upper={upper}")
    training, inplace = check_bool(fn, "training", training), check_bool(fn, "inplace", inplace)
    if not training:  # the mean slope
        return _activation(fn, input, "leaky_relu", inplace, negative_slope=(lower + upper) / 2)

    def compute():
        # one slope U(lower, upper) per element from minifw's generator; x itself where x > 0
        slopes = _random.default_generator.numpy.uniform(lower, upper, tuple(input.shape))
        slopes = Tensor._make(devices.to_device(slopes.astype(input.dtype), input.device))
        return where(input > 0, input, input * slopes)

    return _in_place(fn, input, compute) if inplace else compute()


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al., 2015): in training, each negative element is scaled
    by its own slope drawn from U(lower, upper) (minifw's generator); otherwise by the mean
    slope (lower + upper) / 2."""
    return _rrelu("rrelu", input, lower, upper, training, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu written over input."""
    return _rrelu("rrelu_", input, lower, upper, training, True)


# SELU's negative saturation value -scale * alpha, which alpha dropout drops elements to
_ALPHA_PRIME = -_SELU_SCALE * _SELU_ALPHA


def _alpha_dropout(fn, input, p, training, inplace, feature):
    """Alpha dropout (Klambauer et al., 2017): dropped elements become SELU's saturation value
    alpha' and the result is a * (.) + b, a = ((1 - p)(1 + p alpha'^2))^(-1/2), b = -a alpha' p,
    which keeps a zero-mean, unit-variance input so. feature=True drops whole channels."""
    _tensor(fn, "input", input)
    p = _probability(fn, p)
    training, inplace = _dropout_flags(fn, training, inplace)
    if feature and input.ndim < 2:
        raise ValueError(f"{fn}: feature dropout needs at least 2 dims (N, C, *); got a "
                         f"{input.ndim}-D input")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _in_place(fn, input, lambda: input * 0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)

    def compute():
        keep = _random.default_generator.numpy.random(shape) >= p
        keep = Tensor._make(devices.to_device(keep.astype(input.dtype), input.device))
        a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
        b = -a * _ALPHA_PRIME * p
        return input * (keep * a) + (1 - keep) * (a * _ALPHA_PRIME) + b

    return _in_place(fn, input, compute) if inplace else compute()


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: each element is set to SELU's saturation value with
    probability p, then an affine map restores the mean and variance (only in training)."""
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels: one draw per (N, C) feature map."""
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)


def native_channel_shuffle(input, groups):
    """channel_shuffle (PyTorch's native kernel of the same operation)."""
    return _channel_shuffle("native_channel_shuffle", input, groups)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax (concrete) distribution (Jang et al., 2016; Maddison et
    al., 2016): softmax((logits + g) / tau) along dim, g standard Gumbel noise from minifw's
    generator. hard=True returns the one-hot of its argmax, with the soft sample's gradient
    (the straight-through estimator: y_hard - y_soft.detach() + y_soft)."""
    fn = "gumbel_softmax"
    _tensor(fn, "logits", logits)
    tau = _real(fn, "tau", tau, logits)
    if tau <= 0:
        raise ValueError(f"{fn}: tau must be positive, got {tau}")
    hard = check_bool(fn, "hard", hard)
    eps = _real(fn, "eps", eps, logits)
    if eps != 1e-10:
        warnings.warn("gumbel_softmax: eps is deprecated and has no effect", stacklevel=2)
    dim = check_dim(fn, check_int(fn, "dim", dim), max(logits.ndim, 1))
    if hard and logits.ndim and logits.shape[dim] == 0:
        raise IndexError(f"{fn}: hard=True takes the argmax along dim {dim}, which has size 0 in logits "
                         f"of shape {tuple(logits.shape)}")
    gumbels = -np.log(_random.default_generator.numpy.exponential(size=tuple(logits.shape)))
    gumbels = Tensor._make(devices.to_device(gumbels.astype(logits.dtype), logits.device))
    y_soft = softmax_along((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True) if logits.ndim else y_soft.argmax()
    y_hard = Tensor._make(devices.zeros(tuple(logits.shape), logits.dtype, logits.device))
    y_hard = y_hard.scatter(dim, index, 1.0) if logits.ndim else y_hard + 1.0
    return y_hard - y_soft.detach() + y_soft


# ==== more losses and distances ==================================================================

def _class_target_1d(fn, input, target, classes_dim_desc):
    """(input as (N, C), target as (N,) int64, back: a per-sample loss to input's batching)."""
    _tensor(fn, "input", input, ndim=(1, 2), ndim_desc=classes_dim_desc)
    check_no_zero_dims(fn, "input", input) if input.ndim == 1 else None
    x = input.unsqueeze(0) if input.ndim == 1 else input
    expected = (x.shape[0],) if input.ndim == 2 else ()
    target = _index_tensor(fn, "target", target)
    if tuple(target.shape) != expected:
        raise ValueError(f"{fn}: target must have shape {expected} for an input of shape "
                         f"{tuple(input.shape)}, got {tuple(target.shape)}")
    _same_device(fn, input, target=target)
    t = target.reshape(-1)
    c = x.shape[1]
    if t.numel() and (int(t.min().item()) < 0 or int(t.max().item()) >= c):
        raise ValueError(f"{fn}: target holds class indices that must lie in [0, {c}); got values "
                         f"from {int(t.min().item())} to {int(t.max().item())}")
    return x, t, (lambda loss: loss.squeeze(0)) if input.ndim == 1 else (lambda loss: loss)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: for each sample, the sum over classes j other than the target
    y of max(0, margin - x[y] + x[j])^p (p 1 or 2), times weight[y] if given, divided by the
    number of classes C. input (N, C) or (C,), target (N,) or ()."""
    fn = "multi_margin_loss"
    x, t, back = _class_target_1d(fn, input, target, "1-D (C) or 2-D (N, C)")
    p = check_int(fn, "p", p)
    if p not in (1, 2):
        raise ValueError(f"{fn}: p must be 1 or 2 (the only powers supported), got {p}")
    margin = _real(fn, "margin", margin, input)
    reduction = _reduction(fn, reduction, size_average, reduce)
    c = x.shape[1]
    if weight is not None:
        weight = Tensor._make(_loss_weight(fn, "weight", weight, input))  # a constant
        if tuple(weight.shape) != (c,):
            raise ValueError(f"{fn}: weight must have shape ({c},) (one per class), got "
                             f"{tuple(weight.shape)}")
    z = margin - x.gather(1, t.unsqueeze(1)) + x
    # no gradient at z == 0 itself, as PyTorch's kernel (z > 0 contributes)
    h = where(z > 0, z, 0.0)
    h = h * h if p == 2 else h
    if weight is not None:
        h = h * weight[t].unsqueeze(1)
    other = Tensor._make(devices.to_device(
        (np.arange(c)[None, :] != devices.to_device(t._data, devices.CPU)[:, None]).astype(
            input.dtype), input.device))
    return _reduce(back((h * other).sum(1) / c), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: for each sample, the sum over its target classes j and its
    other classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes C. target
    (the input's shape) lists each sample's target classes, ended by the first -1."""
    fn = "multilabel_margin_loss"
    _tensor(fn, "input", input, ndim=(1, 2), ndim_desc="1-D (C) or 2-D (N, C)")
    reduction = _reduction(fn, reduction, size_average, reduce)
    target = _index_tensor(fn, "target", target, input.shape)
    _same_device(fn, input, target=target)
    x = input.unsqueeze(0) if input.ndim == 1 else input
    n, c = x.shape
    labels = devices.to_device(target._data, devices.CPU).reshape(n, c)
    if labels.size and (labels.min() < -1 or labels.max() >= c):
        raise ValueError(f"{fn}: target must hold class indices in [0, {c}) or -1, got values from "
                         f"{labels.min()} to {labels.max()}")
    counts = np.zeros((n, c), np.int64)  # how often each class is listed (before the first -1)
    for row, listed in zip(counts, labels):
        for j in listed:
            if j < 0:
                break
            row[j] += 1
    other = counts == 0
    pair = (counts[:, :, None] * other[:, None, :]).astype(input.dtype)
    pair = Tensor._make(devices.to_device(pair, input.device))
    z = 1 - x.unsqueeze(2) + x.unsqueeze(1)  # z[n, j, i] = 1 - (x[j] - x[i])
    loss = (where(z > 0, z, 0.0) * pair).sum((1, 2)) / c
    return _reduce(loss.squeeze(0) if input.ndim == 1 else loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim (broadcasting x1 against x2)."""
    fn = "pairwise_distance"
    _inputs(fn, x1=x1, x2=x2)
    p = check_real(fn, "p", p, minimum=0.0, finite=False, dtype=x1.dtype)  # inf: the max |difference|
    if math.isnan(p):
        raise ValueError(f"{fn}: p must be a number >= 0 (inf allowed), got nan")
    eps = _real(fn, "eps", eps, x1)
    keepdim = check_bool(fn, "keepdim", keepdim)
    _broadcast(fn, x1=x1, x2=x2)
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    out = diff.norm(p, dim=-1, keepdim=keepdim)
    return out


def pdist(input, p=2):
    """The p-norm distances between the rows of input (N, M), for every pair i < j in row-major
    order: N (N - 1) / 2 values (the upper triangle of cdist(input, input))."""
    fn = "pdist"
    _tensor(fn, "input", input, ndim=2, ndim_desc="2-D (N, M)")
    p = check_real(fn, "p", p, minimum=0.0, finite=False, dtype=input.dtype)  # inf: the max |difference|
    if math.isnan(p):
        raise ValueError(f"{fn}: p must be a number >= 0 (inf allowed), got nan")
    i, j = np.triu_indices(input.shape[0], 1)  # (no pairs: an empty result, still in the graph)
    dev = input.device
    rows = input[Tensor._make(devices.to_device(i, dev))] - input[Tensor._make(devices.to_device(j, dev))]
    return rows.norm(p, dim=1)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance: max(d(a, p) - d(a, n) + margin, 0), d
    distance_function (pairwise_distance when None); swap uses min(d(a, n), d(p, n))."""
    fn = "triplet_margin_with_distance_loss"
    _inputs(fn, anchor=anchor, positive=positive, negative=negative)
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"{fn}: distance_function must be callable or None, got "
                        f"{type(distance_function).__name__}")
    margin = _real(fn, "margin", margin, anchor)
    if margin <= 0:
        raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")
    swap = check_bool(fn, "swap", swap)
    reduction = check_choice(fn, "reduction", reduction, ("none", "mean", "sum"))
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise ValueError(f"{fn}: anchor, positive and negative must have the same number of dims; "
                         f"got {dims[0]}-D, {dims[1]}-D and {dims[2]}-D")
    _broadcast(fn, anchor=anchor, positive=positive, negative=negative)
    distance = pairwise_distance if distance_function is None else distance_function
    pairs = {"d(anchor, positive)": (anchor, positive), "d(anchor, negative)": (anchor, negative)}
    if swap:
        pairs["d(positive, negative)"] = (positive, negative)
    d = {}
    for name, (x1, x2) in pairs.items():
        d[name] = distance(x1, x2)
        if not isinstance(d[name], Tensor):
            raise TypeError(f"{fn}: distance_function must return a minifw.Tensor, got "
                            f"{type(d[name]).__name__} for {name}")
    try:
        np.broadcast_shapes(*(v.shape for v in d.values()))
    except ValueError:
        shapes = ", ".join(f"{name} of shape {tuple(v.shape)}" for name, v in d.items())
        raise ValueError(f"{fn}: the distances distance_function returned do not broadcast: "
                         f"{shapes}") from None
    d_ap, d_an = d["d(anchor, positive)"], d["d(anchor, negative)"]
    if swap:
        d_an = d_an.minimum(d["d(positive, negative)"])
    return _reduce(_hinge(margin + d_ap - d_an), reduction)
