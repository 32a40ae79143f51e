"""More of the torch namespace: the layers' functional forms as torch has them beside
torch.nn.functional (torch.conv2d, torch.dropout(input, p, train), torch.embedding(weight,
indices), ...), random draws from tensors of parameters, window functions, dtype promotion
rules, integration and a few switches, so that scripts written against `torch.*` run.

minifw/__init__.py imports every name of __all__. The layers' forms load minifw.nn.functional
when first called, so that importing minifw never loads its upper layers.
"""
import importlib
import math
import numbers

import numpy as np

from . import autograd, backends, devices
from . import random as _random
from .checks import check_bool, check_int, check_real
from .functions.zero_gradient import with_zero_gradient
from .tensor import (Tensor, _dtype_arg, _result_dtype, bool_, empty, float32, float64,
                     from_numpy, get_default_dtype, int32, int64, set_default_dtype, tensor)


def _F():
    return importlib.import_module("minifw.nn.functional")


def _tensor_arg(fn, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    return t


# ---- the layers' functional forms, with the signatures the torch namespace gives them ----

def _alias(name, doc):
    def function(*args, **kwargs):
        return getattr(_F(), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


_SAME_AS_F = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "avg_pool1d", "adaptive_avg_pool1d", "bilinear", "celu",
              "selu", "prelu", "hardshrink", "cosine_similarity", "pixel_shuffle",
              "pixel_unshuffle", "channel_shuffle", "pairwise_distance", "pdist", "rms_norm")
for _name in _SAME_AS_F:
    globals()[_name] = _alias(_name, f"minifw.nn.functional.{_name}, under the torch namespace.")


def _pool_with_indices(name):
    def function(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return getattr(_F(), name)(input, kernel_size, stride if stride != () else None, padding,
                                   dilation, ceil_mode, return_indices=True)
    function.__name__ = function.__qualname__ = name + "_with_indices"
    function.__doc__ = (f"(output, indices) of minifw.nn.functional.{name}; an empty `stride` "
                        f"means the kernel size, as torch's.")
    return function


def _pool(name):
    def function(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return getattr(_F(), name)(input, kernel_size, stride if stride != () else None, padding,
                                   dilation, ceil_mode)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"minifw.nn.functional.{name}; an empty `stride` (torch's default) "
                        f"means the kernel size.")
    return function


max_pool1d, max_pool2d, max_pool3d = (_pool(f"max_pool{k}d") for k in (1, 2, 3))
max_pool1d_with_indices = _pool_with_indices("max_pool1d")


def adaptive_max_pool1d(input, output_size):
    """(output, indices), as torch.adaptive_max_pool1d (the functional form returns the
    output alone unless asked)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def _check_train(fn, train):
    return check_bool(fn, "train", train)


def dropout(input, p, train):
    """torch.dropout(input, p, train): nn.functional.dropout with `train` required."""
    return _F().dropout(input, p, _check_train("dropout", train))


def dropout_(input, p, train):
    return _F().dropout(input, p, _check_train("dropout_", train), inplace=True)


def feature_dropout(input, p, train):
    """Whole channels (input[n, c]) zeroed with probability p, the rest scaled by 1/(1-p)."""
    return _F().dropout2d(input, p, _check_train("feature_dropout", train))


def feature_dropout_(input, p, train):
    return _F().dropout2d(input, p, _check_train("feature_dropout_", train), inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, _check_train("alpha_dropout", train))


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, _check_train("alpha_dropout_", train), inplace=True)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, _check_train("feature_alpha_dropout", train))


def feature_alpha_dropout_(input, p, train):
    return _F().feature_alpha_dropout(input, p, _check_train("feature_alpha_dropout_", train),
                                      inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """torch.batch_norm's argument order (weight and bias before the running statistics);
    `cudnn_enabled` is accepted and has no effect."""
    check_bool("batch_norm", "cudnn_enabled", cudnn_enabled)
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """torch.instance_norm's argument order; `cudnn_enabled` has no effect."""
    check_bool("instance_norm", "cudnn_enabled", cudnn_enabled)
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    check_bool("layer_norm", "cudnn_enable", cudnn_enable)
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    check_bool("group_norm", "cudnn_enabled", cudnn_enabled)
    return _F().group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices): the rows of `weight` at `indices` (note the order:
    the functional form takes the indices first). padding_idx -1 means none, as torch's."""
    padding_idx = check_int("embedding", "padding_idx", padding_idx)
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def threshold(input, threshold, value):
    return _F().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _F().threshold(input, threshold, value, inplace=True)


def relu_(input):
    return _tensor_arg("relu_", "input", input).relu_()


def selu_(input):
    return _F().selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return _F().celu(input, alpha, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training, inplace=True)


# The losses' torch-namespace forms take the reduction as an int (0 none, 1 mean, 2 sum),
# as torch's do; the names are accepted too.
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(fn, reduction):
    if isinstance(reduction, str):
        return reduction
    if isinstance(reduction, (bool, np.bool_)) or reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 0 (none), 1 (mean) or 2 (sum), or one of "
                         f"'none', 'mean', 'sum'; got {reduction!r}")
    return _REDUCTIONS[reduction]


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return _F().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction),
        pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction("cosine_embedding_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _F().hinge_embedding_loss(input, target, margin,
                                     reduction=_reduction("hinge_embedding_loss", reduction))


def kl_div(input, target, reduction=1, *, log_target=False):
    """torch.kl_div: 'mean' (1) is the mean over every element, without the functional
    form's warning about 'batchmean'."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="reduction: 'mean' divides")
        return _F().kl_div(input, target, reduction=_reduction("kl_div", reduction),
                           log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction("margin_ranking_loss", reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=1):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction("triplet_margin_loss", reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _reduction("ctc_loss", reduction), zero_infinity)


# ---- creation ------------------------------------------------------------------------

def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialized tensor of input's shape, and its dtype and device unless given."""
    _tensor_arg("empty_like", "input", input)
    return empty(*input.shape, dtype=input.dtype if dtype is None else dtype,
                 device=input.device if device is None else device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialized tensor of `size`. minifw's tensors are contiguous arrays, so
    `stride` must be the contiguous strides of `size` (checked)."""
    size = tuple(size)
    expected, step = [], 1
    for s in reversed(size):
        expected.append(step)
        step *= max(s, 1)
    if tuple(stride) != tuple(reversed(expected)):
        raise ValueError(f"empty_strided: minifw's tensors are contiguous: stride must be "
                         f"{tuple(reversed(expected))} for size {size}, got {tuple(stride)}")
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None):
    """Integers in [low, high) of input's shape (randint_like(x, 10) is [0, 10)), with
    input's dtype and device unless given."""
    from .tensor import randint
    _tensor_arg("randint_like", "input", input)
    low, high = (0, low) if high is None else (low, high)
    if requires_grad:
        raise TypeError("randint_like: integer tensors cannot require grad")
    out = randint(low, high, input.shape, generator=generator,
                  dtype=input.dtype if dtype is None else dtype,
                  device=input.device if device is None else device)
    return out


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), as torch.logspace."""
    from .tensor import linspace
    base = check_real("logspace", "base", base)
    exponents = linspace(start, end, steps, dtype=float64)
    d = get_default_dtype() if dtype is None else _dtype_arg(dtype, "logspace")
    values = np.power(base, exponents.numpy())
    if d.kind in "iu":
        values = np.trunc(values)
    out = Tensor._make(devices.to_device(values.astype(d), devices.get(device, "logspace")))
    return out.requires_grad_(requires_grad) if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=None):
    """A 0-d tensor holding the number s, in the default float dtype unless given."""
    check_real("scalar_tensor", "s", s, finite=False)
    return tensor(s, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated torch.range: start to end *inclusive*, in the default float dtype. Warns,
    as PyTorch's; use arange."""
    import warnings
    warnings.warn("minifw.range is deprecated (it includes `end`, unlike Python's range): use "
                  "minifw.arange", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError("range: end is required")
    count = int(math.floor((end - start) / step)) + 1 if step else 0
    if step == 0 or count < 1 and start != end:
        raise ValueError(f"range: step must be nonzero and lead from start to end, got start "
                         f"{start}, end {end}, step {step}")
    d = get_default_dtype() if dtype is None else dtype
    values = start + step * np.arange(count, dtype=np.float64)
    return tensor(values, dtype=d, device=device, requires_grad=requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of `buffer` (an object with the buffer protocol), sharing
    its memory as torch.frombuffer."""
    d = _dtype_arg(dtype, "frombuffer")
    count = check_int("frombuffer", "count", count, minimum=-1)
    offset = check_int("frombuffer", "offset", offset, minimum=0)
    a = np.frombuffer(buffer, dtype=d, count=count, offset=offset)
    if not a.flags.writeable:
        import warnings
        warnings.warn("frombuffer: the buffer is read-only; the tensor shares it and must not be "
                      "written", UserWarning, stacklevel=2)
    out = Tensor._make(a)
    return out.requires_grad_(requires_grad) if requires_grad else out


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, without a copy where it already is one of that dtype and device
    (a Tensor itself, or a NumPy array of a minifw dtype on the CPU), as torch.as_tensor."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if dtype is not None or device is not None \
            else data
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(dtype) == data.dtype) \
            and (device is None or devices.device(device) == devices.CPU) and \
            data.dtype in (float32, float64, int64, int32, bool_):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """`obj` as a tensor, sharing memory where it can (a Tensor, or a NumPy array of a minifw
    dtype on the CPU) unless copy=True; copy=False refuses where a copy is needed."""
    out = as_tensor(obj, dtype=dtype, device=device)
    shares = isinstance(obj, (Tensor, np.ndarray)) and (
        out is obj or (isinstance(obj, np.ndarray) and np.shares_memory(out._data, obj)))
    if copy is False and not shares:
        raise ValueError(f"asarray: copy=False, but {type(obj).__name__} of dtype "
                         f"{getattr(obj, 'dtype', None)} needs a copy to become a tensor")
    if copy is True and shares:
        out = out.clone().detach() if isinstance(obj, Tensor) else Tensor._make(out._data.copy())
    if requires_grad:
        out = out.requires_grad_(True) if out.is_leaf else out.detach().requires_grad_(True)
    return out


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of another library's array (anything with __dlpack__: a
    PyTorch tensor, a NumPy or CuPy array), as torch.from_dlpack: on the CPU for host memory,
    on "cuda" for a GPU's (through CuPy). copy=True copies; device= moves after."""
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: ext_tensor must have a __dlpack__ method (a tensor or array "
                        f"of another library), got {type(ext_tensor).__name__}")
    kind = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") else 1
    if int(kind) in (2, 3):  # kDLCUDA, kDLCUDAHost: a GPU's memory, through CuPy
        array = devices.array_module(devices.get("cuda", "from_dlpack")).from_dlpack(ext_tensor)
    else:
        array = np.from_dlpack(ext_tensor, copy=copy) if copy is not None else \
            np.from_dlpack(ext_tensor)
    if array.dtype not in (float32, float64, int64, int32, bool_):
        raise TypeError(f"from_dlpack: minifw's tensors are float32, float64, int64, int32 or "
                        f"bool; got {array.dtype} (convert it in its library first)")
    out = Tensor._make(array)
    return out if device is None else out.to(device)


def to_dlpack(tensor):
    """The DLPack capsule of a tensor (tensor.__dlpack__()), for libraries that take one."""
    return _tensor_arg("to_dlpack", "tensor", tensor).__dlpack__()


# ---- window functions (as torch.signal's classic windows) ------------------------------

def _window(fn, window_length, periodic, dtype, device, requires_grad, make):
    n = check_int(fn, "window_length", window_length, minimum=0)
    periodic = check_bool(fn, "periodic", periodic)
    d = get_default_dtype() if dtype is None else _dtype_arg(dtype, fn)
    if d.kind != "f":
        raise TypeError(f"{fn}: dtype must be a float dtype, got {d}")
    if n <= 1:
        values = np.ones(n)
    else:
        m = n + 1 if periodic else n  # a periodic window is the symmetric one of n + 1, cut
        values = make(np.arange(m, dtype=np.float64), m)[:n]
    out = Tensor._make(devices.to_device(values.astype(d), devices.get(device, fn)))
    return out.requires_grad_(requires_grad) if requires_grad else out


def _cosine_sum(*coefficients):
    def make(k, m):
        phase = 2 * math.pi * k / (m - 1)
        return sum(((-1) ** j) * c * np.cos(j * phase) for j, c in enumerate(coefficients))
    return make


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
                layout=None):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False, layout=None):
    alpha = check_real("hamming_window", "alpha", alpha)
    beta = check_real("hamming_window", "beta", beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None):
    def make(k, m):
        return 1 - np.abs(2 * k / (m - 1) - 1)
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, make)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False, layout=None):
    beta = check_real("kaiser_window", "beta", beta, minimum=0)

    def make(k, m):
        ratio = 2 * k / (m - 1) - 1
        return np.i0(beta * np.sqrt(np.clip(1 - ratio * ratio, 0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, make)


# ---- random draws from tensors of parameters -----------------------------------------

def _host(t):
    return devices.to_device(t._data, devices.CPU) if isinstance(t, Tensor) else np.asarray(t)


def _float_parameter(fn, name, value):
    if isinstance(value, Tensor):
        if value.dtype.kind != "f":
            raise TypeError(f"{fn}: {name} must be a float tensor, got dtype {value.dtype}")
        return value
    return check_real(fn, name, value)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, out=None):
    """Normal samples: mean and std may be tensors (broadcast together; the result has their
    shape, dtype and device) or numbers, with `size` then required. The samples carry zero
    gradients to mean and std, as PyTorch's."""
    if out is not None:
        raise ValueError("normal: out must be None (minifw returns a new tensor)")
    mean = _float_parameter("normal", "mean", mean)
    std = _float_parameter("normal", "std", std)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if isinstance(std, Tensor) and bool((std < 0).any()) or \
            not isinstance(std, Tensor) and std < 0:
        raise ValueError(f"normal: std must be >= 0, got "
                         f"{std if not isinstance(std, Tensor) else 'negative entries'}")
    rng = _random._numpy_rng(generator)
    if not tensors:
        if size is None:
            raise TypeError("normal: with a number for both mean and std, size is required")
        from .tensor import randn
        z = randn(*tuple(size), generator=generator, dtype=dtype, device=device)
        result = z * std + mean
        return result.requires_grad_(requires_grad) if requires_grad else result
    if size is not None:
        raise TypeError("normal: size is given only when mean and std are both numbers")
    if dtype is not None or device is not None or requires_grad:
        raise TypeError("normal: dtype, device and requires_grad come from the tensor mean or std")
    autograd.common_device("normal", tensors)
    d = _result_dtype(*tensors)
    m, s = np.broadcast_arrays(_host(mean), _host(std))
    sample = (m + s * rng.standard_normal(m.shape)).astype(d)
    return with_zero_gradient(devices.to_device(sample, tensors[0].device), *tensors)


def poisson(input, generator=None):
    """Poisson counts with the rates in `input` (>= 0), as floats of input's dtype; zero
    gradient to the rates, as PyTorch's."""
    _tensor_arg("poisson", "input", input)
    if input.dtype.kind != "f":
        raise TypeError(f"poisson: input must be a float tensor, got dtype {input.dtype}")
    rates = _host(input)
    if not (rates >= 0).all():
        raise ValueError("poisson: every rate in input must be >= 0 (and not NaN)")
    sample = _random._numpy_rng(generator).poisson(rates).astype(input.dtype)
    return with_zero_gradient(devices.to_device(sample, input.device), input)


def binomial(count, prob, generator=None):
    """Binomial counts of `count` trials with success probability `prob` (tensors of one
    float dtype, broadcast), as floats; zero gradients, as PyTorch's."""
    for name, t in (("count", count), ("prob", prob)):
        _tensor_arg("binomial", name, t)
        if t.dtype.kind != "f":
            raise TypeError(f"binomial: {name} must be a float tensor, got dtype {t.dtype}")
    if count.dtype != prob.dtype:
        raise TypeError(f"binomial: count and prob must have one dtype, got {count.dtype} and "
                        f"{prob.dtype}")
    autograd.common_device("binomial", [count, prob])
    n, p = np.broadcast_arrays(_host(count), _host(prob))
    if not ((n >= 0).all() and (n == np.floor(n)).all()):
        raise ValueError("binomial: count must hold non-negative whole numbers")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("binomial: prob must be in [0, 1]")
    sample = _random._numpy_rng(generator).binomial(n.astype(np.int64), p).astype(count.dtype)
    return with_zero_gradient(devices.to_device(sample, count.device), count, prob)


# ---- dtypes ----------------------------------------------------------------------------

_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}


def result_type(tensor1, tensor2):
    """The dtype an arithmetic operation of the two (tensors or numbers) gives, by
    PyTorch's promotion rules."""
    for name, v in (("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(v, (Tensor, numbers.Number, np.bool_)):
            raise TypeError(f"result_type: {name} must be a Tensor or a number, got "
                            f"{type(v).__name__}")
    return _result_dtype(tensor1, tensor2)


def promote_types(type1, type2):
    """The smallest of minifw's dtypes both convert to without losing their category."""
    a, b = _dtype_arg(type1, "promote_types"), _dtype_arg(type2, "promote_types")
    if _CATEGORY[a.kind] != _CATEGORY[b.kind]:
        return a if _CATEGORY[a.kind] > _CATEGORY[b.kind] else b
    return np.promote_types(a, b)


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow from_ to become `to` in an in-place operation:
    never to a lower category (float to integer, integer to bool)."""
    a, b = _dtype_arg(from_, "can_cast"), _dtype_arg(to, "can_cast")
    return _CATEGORY[a.kind] <= _CATEGORY[b.kind]


def is_complex(input):
    _tensor_arg("is_complex", "input", input)
    return False  # minifw has no complex dtypes


def is_signed(input):
    return _tensor_arg("is_signed", "input", input).dtype != bool_


def is_nonzero(input):
    """The truth of a one-element tensor; other sizes raise, as PyTorch's."""
    _tensor_arg("is_nonzero", "input", input)
    if input.numel() != 1:
        raise ValueError(f"is_nonzero: input must have one element, got {input.numel()}")
    return bool(input.item() != 0)


def is_same_size(input, other):
    return _tensor_arg("is_same_size", "input", input).shape == \
        _tensor_arg("is_same_size", "other", other).shape


def is_inference(input):
    _tensor_arg("is_inference", "input", input)
    return False  # inference_mode records nothing but makes ordinary tensors


def is_inference_mode_enabled():
    """True inside minifw.inference_mode() (which acts as no_grad)."""
    return autograd.is_inference_mode_enabled()


def typename(obj):
    """'minifw.FloatTensor' and the like for a tensor, the type's name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + "." + type(obj).__qualname__ \
        if type(obj).__module__ != "builtins" else type(obj).__qualname__


def set_default_tensor_type(t):
    """Deprecated torch.set_default_tensor_type: 'minifw.FloatTensor' (or 'torch.FloatTensor')
    makes float32 the default float dtype, 'minifw.DoubleTensor' float64."""
    import warnings
    warnings.warn("set_default_tensor_type is deprecated: use minifw.set_default_dtype",
                  UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    kind = name.rsplit(".", 1)[-1]
    if kind not in ("FloatTensor", "DoubleTensor") or ".cuda." in name:
        raise TypeError(f"set_default_tensor_type: only float CPU tensor types "
                        f"('minifw.FloatTensor', 'minifw.DoubleTensor'), got {name!r}")
    set_default_dtype(float32 if kind == "FloatTensor" else float64)


# ---- complex-number functions, on real tensors ------------------------------------------

def angle(input):
    """The argument of real numbers: 0 for x >= 0, pi for x < 0, NaN for NaN, in a float
    dtype; zero gradient, as PyTorch's for real inputs."""
    _tensor_arg("angle", "input", input)
    d = input.dtype if input.dtype.kind == "f" else get_default_dtype()
    x = devices.to_device(input._data, devices.CPU)
    result = np.where(x != x, np.nan, np.where(x < 0, math.pi, 0.0)).astype(d)
    return with_zero_gradient(devices.to_device(result, input.device), input)


def conj(input):
    """The complex conjugate: a real tensor itself."""
    return _tensor_arg("conj", "input", input)


def real(input):
    """The real part: a real tensor itself."""
    return _tensor_arg("real", "input", input)


def imag(input):
    _tensor_arg("imag", "input", input)
    raise TypeError("imag: minifw has no complex dtypes, so real tensors have no imaginary part")


conj_physical = resolve_conj = resolve_neg = conj


def is_conj(input):
    _tensor_arg("is_conj", "input", input)
    return False


is_neg = is_conj


# ---- products, integration, differences ------------------------------------------------

def isreal(input):
    """True everywhere a real tensor has no imaginary part: everywhere, in minifw."""
    from .tensor import ones
    return ones(*_tensor_arg("isreal", "input", input).shape, dtype=bool_, device=input.device)


# the complex-number methods of real tensors, as torch.Tensor's
for _name, _function in (("angle", angle), ("conj", conj), ("conj_physical", conj),
                         ("resolve_conj", conj), ("resolve_neg", conj), ("isreal", isreal)):
    setattr(Tensor, _name, _function)
Tensor.real = property(conj, doc="The real part: a real tensor itself.")
Tensor.imag = property(imag, doc="Refused: real tensors have no imaginary part.")


def matrix_rank(input, tol=None, symmetric=False):
    """The older torch.matrix_rank: linalg.matrix_rank (tol an absolute tolerance)."""
    from .linalg import matrix_rank as _matrix_rank
    return _matrix_rank(input, atol=tol, hermitian=check_bool("matrix_rank", "symmetric", symmetric))


def constant_pad_nd(input, pad, value=0):
    """nn.functional.pad in 'constant' mode, as aten's constant_pad_nd."""
    return _F().pad(input, pad, "constant", value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten's convolution: conv1d/2d/3d, or their transposes with transposed=True, by the
    input's rank."""
    k = _tensor_arg("convolution", "weight", weight).ndim - 2
    if k not in (1, 2, 3):
        raise ValueError(f"convolution: weight must be 3-D, 4-D or 5-D, got shape {weight.shape}")
    if check_bool("convolution", "transposed", transposed):
        return getattr(_F(), f"conv_transpose{k}d")(input, weight, bias, stride, padding,
                                                    output_padding, groups, dilation)
    return getattr(_F(), f"conv{k}d")(input, weight, bias, stride, padding, dilation, groups)


def unsafe_chunk(input, chunks, dim=0):
    return _tensor_arg("unsafe_chunk", "input", input).chunk(chunks, dim)


def unsafe_split(input, split_size_or_sections, dim=0):
    return _tensor_arg("unsafe_split", "input", input).split(split_size_or_sections, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _tensor_arg("unsafe_split_with_sizes", "input", input).split_with_sizes(split_sizes, dim)


Tensor.unsafe_chunk, Tensor.unsafe_split = unsafe_chunk, unsafe_split
Tensor.unsafe_split_with_sizes = unsafe_split_with_sizes


def chain_matmul(*matrices):
    """The product of 2-D tensors, in the order that needs the fewest multiplications
    (linalg.multi_dot)."""
    from .linalg import multi_dot
    if len(matrices) == 1:
        return _tensor_arg("chain_matmul", "matrices[0]", matrices[0])
    return multi_dot(list(matrices))


def _integration_args(fn, y, x, dx, dim):
    _tensor_arg(fn, "y", y)
    if x is not None and dx is not None:
        raise TypeError(f"{fn}: give x or dx, not both")
    if y.ndim == 0:
        raise ValueError(f"{fn}: y must have at least one dimension")
    dim = check_int(fn, "dim", dim, minimum=-y.ndim, maximum=y.ndim - 1) % y.ndim
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"{fn}: x must be a Tensor, got {type(x).__name__}")
    return dim


def _pairs(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)


def _spacings(fn, y, x, dx, dim):
    """The widths between consecutive samples along dim: diff(x) (x 1-D, or broadcast to
    y), or dx (a number), 1 by default."""
    if x is None:
        return 1.0 if dx is None else check_real(fn, "dx", dx)
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise ValueError(f"{fn}: x has {x.shape[0]} samples, y has {y.shape[dim]} along "
                             f"dim {dim}")
        widths = x[1:] - x[:-1]
        return widths.reshape((-1,) + (1,) * (y.ndim - 1 - dim))
    upper, lower = _pairs(x, dim if x.ndim == y.ndim else dim - (y.ndim - x.ndim))
    return upper - lower


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along dim: sum of (y[i] + y[i+1]) / 2 times the spacing."""
    dim = _integration_args("trapezoid", y, x, dx, dim)
    if y.shape[dim] == 0:
        return y.sum(dim)
    upper, lower = _pairs(y, dim)
    return ((upper + lower) * _spacings("trapezoid", y, x, dx, dim)).sum(dim) / 2


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along dim (one fewer element than y there)."""
    dim = _integration_args("cumulative_trapezoid", y, x, dx, dim)
    if y.shape[dim] == 0:
        return y
    upper, lower = _pairs(y, dim)
    return ((upper + lower) * _spacings("cumulative_trapezoid", y, x, dx, dim) / 2).cumsum(dim)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x**(N-1), ..., x**0 (or increasing)."""
    _tensor_arg("vander", "x", x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {x.shape}")
    n = x.shape[0] if N is None else check_int("vander", "N", N, minimum=0)
    if n == 0:
        return x.reshape(-1, 1)[:, :0]
    columns = [x.unsqueeze(1) ** k for k in range(n)]
    from .tensor import cat
    out = cat(columns, 1)
    return out if increasing else out.flip(1)


def unravel_index(indices, shape):
    """The coordinates of flat `indices` in an array of `shape`, as a tuple of tensors."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(check_int("unravel_index", "shape", s, minimum=0) for s in shape)
    if isinstance(indices, Tensor):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"unravel_index: indices must be an integer tensor, got {indices.dtype}")
        flat, dev = _host(indices), indices.device
    else:
        flat, dev = np.asarray(check_int("unravel_index", "indices", indices)), devices.CPU
    size = math.prod(shape)
    if flat.size and ((flat < -size).any() or (flat >= size).any()):
        raise IndexError(f"unravel_index: indices must be in [-{size}, {size}) for shape {shape}")
    coords = np.unravel_index(np.where(flat < 0, flat + size, flat), shape)
    return tuple(Tensor._make(devices.to_device(np.asarray(c, dtype=np.int64), dev))
                 for c in coords)


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    _tensor_arg("rsub", "input", input)
    return (input * -alpha) + other if alpha != 1 else other - input


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of input's derivative along each dim (or those of `dim`) by central
    differences inside and one-sided ones of order `edge_order` at the ends, as torch.gradient
    (and NumPy's): a tuple of tensors. `spacing` is a number, a list of numbers (one per dim)
    or a list of 1-D coordinate tensors."""
    _tensor_arg("gradient", "input", input)
    edge_order = check_int("gradient", "edge_order", edge_order, minimum=1, maximum=2)
    dims = tuple(range(input.ndim)) if dim is None else \
        ((dim,) if isinstance(dim, numbers.Integral) else tuple(dim))
    dims = tuple(check_int("gradient", "dim", d, minimum=-input.ndim, maximum=input.ndim - 1)
                 % input.ndim for d in dims)
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise ValueError(f"gradient: spacing has {len(spacing)} entries for {len(dims)} dims")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    x = input if input.dtype.kind == "f" else input.to(get_default_dtype())
    return tuple(_gradient_along(x, d, h, edge_order) for d, h in zip(dims, spacings))


def _gradient_along(y, dim, h, edge_order):
    n = y.shape[dim]
    if n < edge_order + 1:
        raise ValueError(f"gradient: dim {dim} has {n} samples; edge_order {edge_order} needs at "
                         f"least {edge_order + 1}")

    def at(start, length):
        return y.narrow(dim, start, length)
    from .tensor import cat
    if isinstance(h, Tensor):  # coordinates: non-uniform spacing, second order inside
        if h.ndim != 1 or h.shape[0] != n:
            raise ValueError(f"gradient: coordinates along dim {dim} must be 1-D of length {n}")
        shape = (-1,) + (1,) * (y.ndim - 1 - dim)
        d = (h[1:] - h[:-1]).to(y.dtype)
        d1, d2 = d[:-1].reshape(shape), d[1:].reshape(shape)
        inner = (at(2, n - 2) * d1 * d1 - at(0, n - 2) * d2 * d2 + at(1, n - 2) * (d2 * d2 - d1 * d1)) \
            / (d1 * d2 * (d1 + d2))
        first, last = d[:1].reshape(shape), d[-1:].reshape(shape)
        if edge_order == 1:
            head = (at(1, 1) - at(0, 1)) / first
            tail = (at(n - 1, 1) - at(n - 2, 1)) / last
        else:
            a1, a2 = d[0:1].reshape(shape), d[1:2].reshape(shape)
            head = (-(2 * a1 + a2) / (a1 * (a1 + a2)) * at(0, 1) + (a1 + a2) / (a1 * a2) * at(1, 1)
                    - a1 / (a2 * (a1 + a2)) * at(2, 1))
            b1, b2 = d[-2:-1].reshape(shape), d[-1:].reshape(shape)
            tail = (b2 / (b1 * (b1 + b2)) * at(n - 3, 1) - (b1 + b2) / (b1 * b2) * at(n - 2, 1)
                    + (2 * b2 + b1) / (b2 * (b1 + b2)) * at(n - 1, 1))
        return cat([head, inner, tail], dim)
    h = check_real("gradient", "spacing", h.item() if isinstance(h, Tensor) else h)
    inner = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
    if edge_order == 1:
        head = (at(1, 1) - at(0, 1)) / h
        tail = (at(n - 1, 1) - at(n - 2, 1)) / h
    else:
        head = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
        tail = (0.5 * at(n - 3, 1) - 2 * at(n - 2, 1) + 1.5 * at(n - 1, 1)) / h
    return cat([head, inner, tail], dim)


# ---- linear algebra under its older torch names -----------------------------------------

def nuclear_norm(input, dim=None, keepdim=False):
    from .linalg import matrix_norm
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    from .linalg import vector_norm
    return vector_norm(input, 2, dim, keepdim)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of A - M (M the mean to remove, or none): the q largest singular triples.
    minifw computes them from the full SVD, which is exact (PyTorch's randomized method
    approximates them)."""
    from .linalg import svd
    _tensor_arg("svd_lowrank", "A", A)
    q = check_int("svd_lowrank", "q", 6 if q is None else q, minimum=1)
    check_int("svd_lowrank", "niter", niter, minimum=0)
    x = A if M is None else A - M
    u, s, vh = svd(x, full_matrices=False)
    q = min(q, s.shape[-1])
    return u[..., :q], s[..., :q], vh.mT[..., :q]


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A's rows (centered unless center=False)."""
    _tensor_arg("pca_lowrank", "A", A)
    q = min(6, A.shape[-1], A.shape[-2]) if q is None else q
    if check_bool("pca_lowrank", "center", center):
        return svd_lowrank(A, q, niter, A.mean(-2, keepdim=True))
    return svd_lowrank(A, q, niter)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """minifw.func.vmap, under the torch namespace (torch.vmap)."""
    return importlib.import_module("minifw.func").vmap(func, in_dims, out_dims, randomness,
                                                        chunk_size=chunk_size)


# ---- switches --------------------------------------------------------------------------

_PRINT_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
                   "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
                   "full": dict(precision=4, threshold=None, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """How tensors print, as torch.set_printoptions: `profile` ('default', 'short', 'full')
    sets every option first, the others override it; threshold = the element count above
    which the middle is elided (inf: never); sci_mode True/False forces or forbids
    scientific notation, None chooses it as PyTorch does (by the values' magnitudes)."""
    from .tensor import _PRINT_OPTIONS
    options = dict(_PRINT_OPTIONS)
    if profile is not None:
        if profile not in _PRINT_PROFILES:
            raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', got "
                             f"{profile!r}")
        options.update(_PRINT_PROFILES[profile], sci_mode=None)
        if options["threshold"] is None:
            options["threshold"] = _sys_maxsize()
    if precision is not None:
        options["precision"] = check_int("set_printoptions", "precision", precision, minimum=0)
    if threshold is not None:
        threshold = check_real("set_printoptions", "threshold", threshold, minimum=0, finite=False)
        options["threshold"] = _sys_maxsize() if math.isinf(threshold) else int(threshold)
    if edgeitems is not None:
        options["edgeitems"] = check_int("set_printoptions", "edgeitems", edgeitems, minimum=1)
    if linewidth is not None:
        options["linewidth"] = check_int("set_printoptions", "linewidth", linewidth, minimum=1)
    if sci_mode is not None or profile is not None:
        options["sci_mode"] = None if sci_mode is None else check_bool(
            "set_printoptions", "sci_mode", sci_mode)
    _PRINT_OPTIONS.update(options)


def _sys_maxsize():
    import sys
    return sys.maxsize


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Accepted so that scripts run: minifw has no graph compiler, so the model or function
    comes back unchanged (and as a decorator, with or without arguments)."""
    if model is None:
        return lambda m: m
    if not callable(model):
        raise TypeError(f"compile: model must be a Module or a function, got {type(model).__name__}")
    return model


_interop_threads = 1


def get_num_interop_threads():
    """The threads between operations: minifw runs operations one after the other (1)."""
    return _interop_threads


def set_num_interop_threads(n):
    """Accepted (n >= 1) and remembered; minifw runs operations one at a time."""
    global _interop_threads
    _interop_threads = check_int("set_num_interop_threads", "n", n, minimum=1)


def set_flush_denormal(mode):
    """Whether denormal floats could be flushed to zero: minifw does not change the CPU's
    floating-point mode, so False (what PyTorch returns where it is unsupported)."""
    check_bool("set_flush_denormal", "mode", mode)
    return False


_warn_always = False


def set_warn_always(b):
    """Whether minifw's warnings repeat every time (Python's 'always' filter for them; False
    puts back 'default', once per place)."""
    import warnings
    global _warn_always
    _warn_always = check_bool("set_warn_always", "b", b)
    # a later filter for the same modules overrides the earlier one: 'always' repeats every
    # warning, 'default' shows each once per place again
    warnings.filterwarnings("always" if _warn_always else "default", module=r"minifw(\.|$)")


def is_warn_always_enabled():
    return _warn_always


def set_deterministic_debug_mode(debug_mode):
    """0/'default' (off), 1/'warn' (warn-only deterministic algorithms), 2/'error'
    (deterministic algorithms), as torch's: use_deterministic_algorithms underneath."""
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise ValueError(f"set_deterministic_debug_mode: debug_mode must be 'default', 'warn' "
                             f"or 'error' (or 0, 1, 2), got {debug_mode!r}")
        debug_mode = modes[debug_mode]
    debug_mode = check_int("set_deterministic_debug_mode", "debug_mode", debug_mode, minimum=0,
                           maximum=2)
    backends.use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not backends.are_deterministic_algorithms_enabled():
        return 0
    return 1 if backends.is_deterministic_algorithms_warn_only_enabled() else 2


_default_device = "cpu"


def get_default_device():
    """The device creation functions use without device=: always the CPU in minifw."""
    return devices.get(_default_device)


def set_default_device(device):
    """Only the CPU (or None) is accepted: minifw's creation functions make CPU tensors
    unless given device=; move models and data with .to(device)."""
    if device is not None and devices.get(device, "set_default_device") != devices.CPU:
        raise ValueError(f"set_default_device: minifw creates tensors on the CPU unless given "
                         f"device=; got {device!r} (move tensors and models with .to(device))")


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in (
    "importlib", "math", "numbers", "np", "autograd", "backends", "devices", "check_bool",
    "check_int", "check_real", "with_zero_gradient", "Tensor", "bool_", "empty", "float32",
    "float64", "from_numpy", "get_default_dtype", "int32", "int64", "set_default_dtype", "tensor",
    "range_")]
del _name
