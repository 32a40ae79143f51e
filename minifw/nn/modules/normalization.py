"""Normalization layers: local response, layer, group, RMS and instance normalization."""
import warnings

import numpy as np

from ...checks import check_real, check_size
from ...tensor import Tensor, tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .batchnorm import _BatchNorm, _LazyNormBase, register_running_stats
from .module import Module
from .utils import _factory, _ones_and_zeros, _positive_int


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        cls = "LocalResponseNorm"  # checked when built (PyTorch: at the first forward)
        check_size(cls, "size", size)
        for name, v in (("alpha", alpha), ("beta", beta), ("k", k)):
            check_real(cls, name, v)
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """Normalize over the last dims, which must be normalized_shape (an int is one dim), with
    a learnable weight and bias of that shape (elementwise_affine; bias=False drops the bias)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=None):
        super().__init__()
        cls = "LayerNorm"
        dtype, dev = _factory(cls, dtype, device)
        if not isinstance(normalized_shape, (tuple, list)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = F._normalized_shape(cls, normalized_shape)
        for s in self.normalized_shape:
            if s < 0:
                raise ValueError(f"{cls}: normalized_shape must have non-negative sizes, got "
                                 f"{self.normalized_shape}")
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _ones_and_zeros(self, self.normalized_shape, dtype, dev, elementwise_affine, bias)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"


class GroupNorm(Module):
    """Normalize (N, C, *) input over groups of C // num_groups channels, with a learnable
    per-channel weight and bias (affine; bias=False drops the bias)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__()
        cls = "GroupNorm"
        dtype, dev = _factory(cls, dtype, device)
        self.num_groups = _positive_int(cls, "num_groups", num_groups)
        self.num_channels = _positive_int(cls, "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"{cls}: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.eps, self.affine = eps, affine
        _ones_and_zeros(self, (num_channels,), dtype, dev, affine, bias)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, " \
               f"bias={self.bias is not None}"


class RMSNorm(Module):
    """Scale the last dims, which must be normalized_shape (an int is one dim), by the inverse
    of their root mean square, with a learnable weight of that shape (elementwise_affine);
    eps=None is the machine epsilon of the input's dtype."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        cls = "RMSNorm"
        dtype, dev = _factory(cls, dtype, device)
        if not isinstance(normalized_shape, (tuple, list)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = F._normalized_shape(cls, normalized_shape)
        if any(s < 0 for s in self.normalized_shape):
            raise ValueError(f"{cls}: normalized_shape must have non-negative sizes, got "
                             f"{self.normalized_shape}")
        if eps is not None:
            check_real(cls, "eps", eps, minimum=0.0)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(tensor(np.ones(self.normalized_shape, dtype), device=dev))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}"


class _InstanceNorm(Module):
    _input_dims = (2, 3)
    _input_desc = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        self.num_features = _positive_int(cls, "num_features", num_features)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _ones_and_zeros(self, (num_features,), dtype, dev, affine, bias)
        register_running_stats(self, num_features, dtype, dev, track_running_stats)

    reset_running_stats = _BatchNorm.reset_running_stats
    _version = _BatchNorm._version
    _load_from_state_dict = _BatchNorm._load_from_state_dict

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        cls = type(self).__name__
        if not isinstance(input, Tensor) or input.ndim not in self._input_dims:
            got = f"{input.ndim}-D" if isinstance(input, Tensor) else type(input).__name__
            raise ValueError(f"{cls}: expected {self._input_desc} input, got {got} input")
        unbatched = input.ndim == self._input_dims[0]
        channel_dim = 0 if unbatched else 1
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"{cls}: expected input's size at dim={channel_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[channel_dim]}.")
            warnings.warn(f"{cls}: input's size at dim={channel_dim} does not match num_features "
                          f"({self.num_features}): {input.shape[channel_dim]}; the norm works, "
                          f"as its statistics are per instance and affine=False.", stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
               f"affine={self.affine}, bias={self.bias is not None}, " \
               f"track_running_stats={self.track_running_stats}"


class InstanceNorm1d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, L) or (C, L) input over its length;
    learnable per-channel weight and bias with affine=True, running statistics (used in eval)
    with track_running_stats=True."""
    _input_dims = (2, 3)
    _input_desc = "2-D (C, L) or 3-D (N, C, L)"


class InstanceNorm2d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, H, W) or (C, H, W) input over its
    positions; affine and track_running_stats as InstanceNorm1d's."""
    _input_dims = (3, 4)
    _input_desc = "3-D (C, H, W) or 4-D (N, C, H, W)"


class InstanceNorm3d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, D, H, W) or (C, D, H, W) input over its
    positions; affine and track_running_stats as InstanceNorm1d's."""
    _input_dims = (4, 5)
    _input_desc = "4-D (C, D, H, W) or 5-D (N, C, D, H, W)"


class _LazyInstanceNorm(_LazyNormBase):
    def _channel_dim(self, ndim):
        dims = self.cls_to_become._input_dims  # (unbatched, batched)
        return {dims[0]: 0, dims[1]: 1}.get(ndim)


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """InstanceNorm1d whose num_features is the channel size of its first input."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """InstanceNorm2d whose num_features is the channel size of its first input."""
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """InstanceNorm3d whose num_features is the channel size of its first input."""
    cls_to_become = InstanceNorm3d


class CrossMapLRN2d(LocalResponseNorm):
    """Local response normalization across the channels of (N, C, H, W) input: the legacy name
    of LocalResponseNorm for 4-D input, computing LocalResponseNorm's formula (PyTorch's legacy
    kernel differs from it, docs/pytorch.md)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        if isinstance(input, Tensor) and input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4-D (N, C, H, W) input, got a "
                             f"{input.ndim}-D input of shape {tuple(input.shape)}")
        return super().forward(input)
