"""Batch normalization layers."""
import numpy as np

from ...autograd import no_grad
from ...tensor import Tensor, int64, tensor
from .. import functional as F
from .. import init
from .lazy import LazyModuleMixin, UninitializedBuffer, UninitializedParameter
from .module import Module
from .utils import _factory, _ones_and_zeros, _positive_int


def register_running_stats(module, num_features, dtype, dev, track):
    """The buffers running_mean (zeros), running_var (ones) and num_batches_tracked, or None
    for each without tracking (batch norm's and instance norm's, PyTorch's names)."""
    values = ((np.zeros(num_features, dtype), None), (np.ones(num_features, dtype), None),
              (0, int64))
    for name, (value, kind) in zip(("running_mean", "running_var", "num_batches_tracked"), values):
        module.register_buffer(name, tensor(value, dtype=kind, device=dev) if track else None)


def _load_running_stats(module, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
    """Module._load_from_state_dict for a norm with running stats, as PyTorch's (whose norms'
    state dicts are at version 2): a state dict from before version 2, or without metadata
    (a plain dict), may lack num_batches_tracked, which then keeps the module's own value
    rather than being a missing key."""
    version = local_metadata.get("version", None)
    if (version is None or version < 2) and module.track_running_stats:
        key = prefix + "num_batches_tracked"
        if key not in state_dict and module.num_batches_tracked is not None:
            state_dict[key] = module.num_batches_tracked.detach().clone()
    Module._load_from_state_dict(module, state_dict, prefix, local_metadata, strict,
                                 missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(Module):
    _input_dims = ()
    _input_desc = ""
    _version = 2
    _load_from_state_dict = _load_running_stats

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


class _LazyNormBase(LazyModuleMixin):
    """A batch or instance norm whose num_features is the channel size of its first input:
    weight, bias, running_mean and running_var start uninitialized (num_batches_tracked is
    a real 0), as PyTorch's lazy norms; affine and track_running_stats default to True for
    every one of them, the instance norms' too, as in PyTorch."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        Module.__init__(self)
        dtype, dev = _factory(type(self).__name__, dtype, device)
        self.num_features = 0
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        for name, made in (("weight", affine), ("bias", affine and bias)):  # bias=False: no bias
            self.register_parameter(name, UninitializedParameter(device=dev, dtype=dtype)
                                    if made else None)
        for name in ("running_mean", "running_var"):
            self.register_buffer(name, UninitializedBuffer(device=dev, dtype=dtype)
                                 if track_running_stats else None)
        self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=dev)
                             if track_running_stats else None)
        self._lazy_setup()

    @property
    def _lazy_input_desc(self):
        return "a " + " or ".join(f"{d}-D" for d in self.cls_to_become._input_dims)

    def _channel_dim(self, ndim):
        return 1 if ndim in self.cls_to_become._input_dims else None

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            # nothing to materialize (affine=False and track_running_stats=False): num_features
            # is still inferred, where PyTorch's stays 0
            if self.weight is None and self.running_mean is None:
                self.num_features = self._input_size(input, self._channel_dim)
            return
        self.num_features = self._input_size(input, self._channel_dim)
        for t in (self.weight, self.bias, self.running_mean, self.running_var):
            if t is not None:
                t.materialize((self.num_features,))
        self.reset_parameters()

    def _sizes_from_parameters(self):
        for t in (self.weight, self.running_mean):
            if t is not None:
                self.num_features = t.shape[0]


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """BatchNorm1d whose num_features is the channel size (dim 1) of its first input."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """BatchNorm2d whose num_features is the channel size (dim 1) of its first input."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """BatchNorm3d whose num_features is the channel size (dim 1) of its first input."""
    cls_to_become = BatchNorm3d


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of (N, C, *) inputs whose statistics, in PyTorch, are taken over the
    batches of every process of the group. minifw normalizes over the batch of its own process:
    exactly SyncBatchNorm's result when one process trains (no process group, or a group of
    one); in training with a group of more than one process it refuses to run rather than use
    per-process statistics silently (BatchNorm2d under DistributedDataParallel does that
    knowingly). Evaluation uses the running statistics, as every batch norm."""

    _input_dims = range(2, 65)
    _input_desc = "at least 2D"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def forward(self, input):
        from ... import distributed
        if self.training and distributed.is_initialized() and distributed.get_world_size() > 1:
            raise RuntimeError(f"SyncBatchNorm: minifw cannot share batch statistics across the "
                               f"{distributed.get_world_size()} processes of the group; use "
                               f"BatchNorm (per-process statistics) or train in one process")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm1d/2d/3d (at any depth) replaced by a SyncBatchNorm holding
        the same parameters, buffers and hyper-parameters (as PyTorch's)."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls.__new__(cls)
            Module.__init__(converted)
            for name in ("num_features", "eps", "momentum", "affine", "track_running_stats"):
                object.__setattr__(converted, name, getattr(module, name))
            for name, p in module._parameters.items():
                converted.register_parameter(name, p)
            for name, b in module._buffers.items():
                converted.register_buffer(name, b, name not in module._non_persistent)
            converted.process_group = process_group
            converted.training = module.training
        for name, child in module._modules.items():
            converted.add_module(name, None if child is None
                                 else cls.convert_sync_batchnorm(child, process_group))
        return converted
