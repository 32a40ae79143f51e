"""Pooling layers. Each checks its arguments when built, as far as they can be checked
without an input (PyTorch checks them at the first forward): MaxPool2d(0) fails here."""
from ...checks import check_bool, check_ints
from .. import functional as F
from ..functional import (_adaptive_output_3d, _adaptive_size, _pool1d_layer_args,
                          _pool3d_layer_args)
from .module import Module


class MaxPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode
        _pool1d_layer_args("MaxPool1d", kernel_size, stride, padding, dilation, ceil_mode)
        check_bool("MaxPool1d", "return_indices", return_indices)

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, " \
               f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode
        F._pool_layer_args("MaxPool2d", kernel_size, stride, padding, ceil_mode, dilation=dilation)
        check_bool("MaxPool2d", "return_indices", return_indices)

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, " \
               f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool1d(Module):
    """Mean pooling along L; kernel_size, stride and padding are kept as 1-tuples (PyTorch's
    attributes and repr)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        k, s, p, _ = _pool1d_layer_args("AvgPool1d", kernel_size, stride, padding, 1, ceil_mode,
                                     count_include_pad)
        self.kernel_size, self.stride, self.padding = (k,), (s,), (p,)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override
        F._divisor_override("AvgPool2d", divisor_override)
        F._pool_layer_args("AvgPool2d", kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Mean pooling along L to a fixed output_size (an int), whatever the input's length."""

    def __init__(self, output_size):
        super().__init__()
        _adaptive_size("AdaptiveAvgPool1d", output_size)
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(Module):
    """Max pooling along L to a fixed output size, as AdaptiveAvgPool1d."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        _adaptive_size("AdaptiveMaxPool1d", output_size)
        check_bool("AdaptiveMaxPool1d", "return_indices", return_indices)
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """Mean pooling to a fixed output size (an int, or (out_h, out_w) with None for "as the
    input"), whatever the input's H and W: AlexNet's AdaptiveAvgPool2d((6, 6))."""

    def __init__(self, output_size):
        super().__init__()
        F._adaptive_output_size("AdaptiveAvgPool2d", output_size, None)
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size, as AdaptiveAvgPool2d."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        F._adaptive_output_size("AdaptiveMaxPool2d", output_size, None)
        check_bool("AdaptiveMaxPool2d", "return_indices", return_indices)
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode
        _pool3d_layer_args("MaxPool3d", kernel_size, stride, padding, dilation, ceil_mode)
        check_bool("MaxPool3d", "return_indices", return_indices)

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, " \
               f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override
        F._divisor_override("AvgPool3d", divisor_override)
        _pool3d_layer_args("AvgPool3d", kernel_size, stride, padding, 1, ceil_mode, count_include_pad)

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """Mean pooling to a fixed output size (an int, or (out_d, out_h, out_w) with None for "as
    the input"), whatever the input's D, H and W."""

    def __init__(self, output_size):
        super().__init__()
        _adaptive_output_3d("AdaptiveAvgPool3d", output_size, None)
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """Max pooling to a fixed output size, as AdaptiveAvgPool3d."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        _adaptive_output_3d("AdaptiveMaxPool3d", output_size, None)
        check_bool("AdaptiveMaxPool3d", "return_indices", return_indices)
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


# ---- unpooling, power-average and fractional max pooling ----------------------------------------

class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        cls, n = type(self).__name__, self._n
        self.kernel_size = check_ints(cls, "kernel_size", kernel_size, n, minimum=1)
        self.stride = self.kernel_size if stride is None else check_ints(cls, "stride", stride, n,
                                                                        minimum=1)
        self.padding = check_ints(cls, "padding", padding, n, minimum=0)

    def forward(self, input, indices, output_size=None):
        unpool = getattr(F, f"max_unpool{self._n}d")
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d (F.max_unpool1d): forward(input, indices,
    output_size=None)."""
    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d (F.max_unpool2d)."""
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d (F.max_unpool3d)."""
    _n = 3


class _LPPoolNd(Module):
    _n = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        cls = type(self).__name__
        if F._real(cls, "norm_type", norm_type) == 0:
            raise ValueError(f"{cls}: norm_type must not be 0, got 0")
        check_ints(cls, "kernel_size", kernel_size, self._n, minimum=1)
        if stride is not None:
            check_ints(cls, "stride", stride, self._n, minimum=1)
        check_bool(cls, "ceil_mode", ceil_mode)
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, f"lp_pool{self._n}d")(input, float(self.norm_type), self.kernel_size,
                                               self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, " \
               f"stride={self.stride}, ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    """Power-average pooling along L (F.lp_pool1d)."""
    _n = 1


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (H, W) (F.lp_pool2d)."""
    _n = 2


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (D, H, W) (F.lp_pool3d)."""
    _n = 3


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        cls, n = type(self).__name__, self._n
        self.kernel_size = check_ints(cls, "kernel_size", kernel_size, n, minimum=1)
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{cls}: give exactly one of output_size and output_ratio, got "
                             f"output_size={output_size!r} and output_ratio={output_ratio!r}")
        self.output_size = None if output_size is None else check_ints(
            cls, "output_size", output_size, n, minimum=1)
        self.output_ratio = None
        if output_ratio is not None:
            ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) \
                else (output_ratio,) * n
            if len(ratios) != n or not all(0 < F._real(cls, "output_ratio", r) < 1 for r in ratios):
                raise ValueError(f"{cls}: output_ratio must be a number or {n} numbers in (0, 1), "
                                 f"got {output_ratio!r}")
            self.output_ratio = ratios
        self.return_indices = check_bool(cls, "return_indices", return_indices)
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input):
        pool = getattr(F, f"fractional_max_pool{self._n}d")
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (H, W) (F.fractional_max_pool2d): output_size or
    output_ratio; random window starts from minifw's generator on every call."""
    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (D, H, W) (F.fractional_max_pool3d)."""
    _n = 3
