"""More of PyTorch's nn.functional: the activations hardswish, hardsigmoid, mish, selu, celu,
glu, logsigmoid, softsign, tanhshrink, hardshrink, softshrink and threshold; rms_norm and
instance_norm; pixel_shuffle, pixel_unshuffle and channel_shuffle; and the losses
triplet_margin_loss, margin_ranking_loss, cosine_embedding_loss, poisson_nll_loss,
gaussian_nll_loss, soft_margin_loss, multilabel_soft_margin_loss and hinge_embedding_loss.

minifw.nn.functional re-exports every public name here. Where a composition of Tensor
operations gives PyTorch's values and gradients (kinks included) it is used; pointwise
activations whose kink gradients or large-|x| values need care are Functions in
minifw.functions.activation. Arguments are checked with functional.py's helpers, so errors
read as the rest of nn.functional's.
"""
import math

import numpy as np

from .. import devices
from ..checks import check_bool, check_choice, check_dim, check_int, check_size
from ..functions.activation import (HardSigmoid, HardSwish, LogSigmoid, Mish,
                                    ScaledExponentialLinear, Shrink, Threshold)
from ..tensor import Tensor, where
from .functional import (_affine_parameter, _in_place, _normalized_shape, _real, _reduction,
                         _same_device, _same_dtype, _tensor, batch_norm, sigmoid, tanh)

__all__ = ["hardswish", "hardsigmoid", "mish", "selu", "celu", "glu", "logsigmoid", "softsign",
           "tanhshrink", "hardshrink", "softshrink", "threshold", "rms_norm", "instance_norm",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "triplet_margin_loss",
           "margin_ranking_loss", "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "hinge_embedding_loss"]

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
    fn = "celu"
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
    """x / (1 + |x|)."""
    _tensor("softsign", "input", input)
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    """x - tanh(x)."""
    _tensor("tanhshrink", "input", input)
    return input - tanh(input)


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
    fn = "threshold"
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
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _channel_vector(fn, name, t, c)
    _affine_parameter(fn, "weight", weight, (c,), input)
    _affine_parameter(fn, "bias", bias, (c,), input)
    _same_dtype(fn, input, running_mean=running_mean, running_var=running_var)
    _same_device(fn, input, running_mean=running_mean, running_var=running_var)
    use_input_stats = check_bool(fn, "use_input_stats", use_input_stats)
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
    fn = "channel_shuffle"
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
