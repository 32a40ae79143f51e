"""Normalization layers: local response, layer and group normalization."""
import numpy as np

from ...checks import check_real, check_size
from ...tensor import tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _factory, _positive_int


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


def _ones_and_zeros(module, shape, dtype, dev, affine, bias):
    """weight (ones) and bias (zeros) of `shape` when affine, else None, as PyTorch's norms."""
    if affine:
        module.weight = Parameter(tensor(np.ones(shape, dtype), device=dev))
        if bias:
            module.bias = Parameter(tensor(np.zeros(shape, dtype), device=dev))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


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
