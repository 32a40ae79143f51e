"""Batch normalization layers."""
import numpy as np

from ...autograd import no_grad
from ...tensor import Tensor, int64, tensor
from .. import functional as F
from .. import init
from .module import Module
from .utils import _factory, _ones_and_zeros, _positive_int


def register_running_stats(module, num_features, dtype, dev, track):
    """The buffers running_mean (zeros), running_var (ones) and num_batches_tracked, or None
    for each without tracking (batch norm's and instance norm's, PyTorch's names)."""
    values = ((np.zeros(num_features, dtype), None), (np.ones(num_features, dtype), None),
              (0, int64))
    for name, (value, kind) in zip(("running_mean", "running_var", "num_batches_tracked"), values):
        module.register_buffer(name, tensor(value, dtype=kind, device=dev) if track else None)


class _BatchNorm(Module):
    _input_dims = ()
    _input_desc = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        self.num_features = _positive_int(cls, "num_features", num_features)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _ones_and_zeros(self, (num_features,), dtype, dev, affine, bias)  # bias=False: no bias
        register_running_stats(self, num_features, dtype, dev, track_running_stats)

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
            if self.bias is not None:
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
               f"affine={self.affine}, bias={self.bias is not None}, " \
               f"track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, per channel C."""
    _input_dims = (2, 3)
    _input_desc = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs, per channel C."""
    _input_dims = (4,)
    _input_desc = "4D"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs, per channel C."""
    _input_dims = (5,)
    _input_desc = "5D"
