"""Layers, containers and losses, with PyTorch's constructor arguments, defaults and
initializations. Each forward is one call into minifw.nn.functional."""
import collections
import math
import numbers

import numpy as np

from ..autograd import no_grad
from .. import devices
from ..checks import check_tensor_dtype
from ..tensor import Tensor, float32, int64, tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _positive_int(cls, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__} {v!r}")
    if v < 1:
        raise ValueError(f"{cls}: {name} must be >= 1, got {v}")
    return int(v)


def _factory(cls, dtype, device):
    """(dtype, device) of a layer's parameters and buffers: PyTorch's factory arguments."""
    dev = devices.get(device, cls)
    dtype = float32 if dtype is None else check_tensor_dtype(dtype, cls)
    if dtype.kind != "f":
        raise TypeError(f"{cls}: dtype must be float32 or float64, got {dtype}")
    return dtype, dev


def _empty_parameter(shape, dtype, dev):
    return Parameter(Tensor._make(devices.empty(shape, dtype, dev)))


# ---- containers -----------------------------------------------------------------------------

class Sequential(Module):
    """Modules applied one after another: Sequential(a, b, c)(x) == c(b(a(x))).
    Also Sequential(OrderedDict([("name", module), ...]))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, index):
        modules = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(collections.OrderedDict(modules[index]))
        return modules[_list_index("Sequential", index, len(modules))][1]

    def __setitem__(self, index, module):
        name = list(self._modules)[_list_index("Sequential", index, len(self))]
        self.add_module(name, module)

    def __delitem__(self, index):
        del self._modules[list(self._modules)[_list_index("Sequential", index, len(self))]]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


def _list_index(cls, index, n):
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{cls} indices must be ints or slices, got {type(index).__name__}")
    if not -n <= index < n:
        raise IndexError(f"{cls}: index {index} is out of range for {n} modules")
    return index % n


class ModuleList(Module):
    """A list of modules whose parameters the parent module sees."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(modules[index])
        return modules[_list_index("ModuleList", index, len(modules))]

    def __setitem__(self, index, module):
        index = _list_index("ModuleList", index, len(self))
        self.add_module(str(index), module)

    def __delitem__(self, index):
        modules = list(self._modules.values())
        del modules[_list_index("ModuleList", index, len(modules))]
        self._modules.clear()
        self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self.extend(modules)

    def forward(self, *args):
        raise NotImplementedError("ModuleList has no forward(); iterate over it in your own forward")


# ---- convolution, pooling, linear -----------------------------------------------------------

class Conv2d(Module):
    """2-D convolution over (N, C, H, W); weight (out, in // groups, kh, kw) and bias are
    initialized as in PyTorch (kaiming_uniform_ with a = sqrt(5); bias U(-1/sqrt(fan_in), ..))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        cls = "Conv2d"
        dtype, dev = _factory(cls, dtype, device)
        self.in_channels = _positive_int(cls, "in_channels", in_channels)
        self.out_channels = _positive_int(cls, "out_channels", out_channels)
        self.groups = _positive_int(cls, "groups", groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{cls}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        self.kernel_size = tuple(_positive_int(cls, "kernel_size", k) for k in _pair(kernel_size))
        self.stride = _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation = _pair(dilation)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{cls}: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             f"'circular'; got {padding_mode!r}")
        if padding_mode != "zeros" and isinstance(padding, str):
            raise ValueError(f"{cls}: padding={padding!r} only works with padding_mode='zeros'")
        self.padding_mode = padding_mode
        self.weight = _empty_parameter((out_channels, in_channels // groups) + self.kernel_size, dtype,
                                       dev)
        if bias:
            self.bias = _empty_parameter((out_channels,), dtype, dev)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if self.padding_mode != "zeros":
            ph, pw = self.padding
            input = F.pad(input, (pw, pw, ph, ph), mode=self.padding_mode)
            return F.conv2d(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding if isinstance(self.padding, tuple) else repr(self.padding)}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Linear(Module):
    """y = x W^T + b; weight (out_features, in_features), initialized as in PyTorch."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory("Linear", dtype, device)
        self.in_features = _positive_int("Linear", "in_features", in_features)
        self.out_features = _positive_int("Linear", "out_features", out_features)
        self.weight = _empty_parameter((out_features, in_features), dtype, dev)
        if bias:
            self.bias = _empty_parameter((out_features,), dtype, dev)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode
        F._no_pool_dilation("MaxPool2d", dilation)

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, " \
               f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override
        F._no_divisor_override("AvgPool2d", divisor_override)

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


# ---- activations ----------------------------------------------------------------------------

class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


# ---- normalization, dropout --------------------------------------------------------------------

class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _BatchNorm(Module):
    _input_dims = ()
    _input_desc = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        self.num_features = _positive_int(cls, "num_features", num_features)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(tensor(np.ones(num_features, dtype), device=dev))
            self.bias = Parameter(tensor(np.zeros(num_features, dtype), device=dev))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", tensor(np.zeros(num_features, dtype), device=dev))
            self.register_buffer("running_var", tensor(np.ones(num_features, dtype), device=dev))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=dev))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        if not isinstance(input, Tensor) or input.ndim not in self._input_dims:
            got = f"{input.ndim}D" if isinstance(input, Tensor) else type(input).__name__
            raise ValueError(f"{type(self).__name__}: expected {self._input_desc} input (got {got} "
                             f"input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._data += 1
            if self.momentum is None:  # a cumulative average over every batch so far
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
               f"affine={self.affine}, track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C."""
    _input_dims = (2, 3)
    _input_desc = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, per channel C."""
    _input_dims = (4,)
    _input_desc = "4D"


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        F._probability("Dropout", p)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# ---- shapes, embedding ------------------------------------------------------------------------

class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Embedding(Module):
    """A lookup table of num_embeddings vectors of size embedding_dim, initialized N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory("Embedding", dtype, device)
        self.num_embeddings = _positive_int("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _positive_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            padding_idx = F._padding_index("Embedding", padding_idx, num_embeddings)
        if sparse:
            raise ValueError("Embedding: sparse gradients are not supported; sparse must be False")
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty_parameter((num_embeddings, embedding_dim), dtype, dev)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape {(num_embeddings, embedding_dim)}, "
                                 f"got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


# ---- losses ------------------------------------------------------------------------------------

class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = F._reduction(type(self).__name__, reduction, size_average, reduce)


class CrossEntropyLoss(_Loss):
    """log_softmax + nll_loss over logits (N, C) and int64 class targets (N,)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)
