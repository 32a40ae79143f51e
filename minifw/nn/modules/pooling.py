"""Pooling layers. Each checks its arguments when built, as far as they can be checked
without an input (PyTorch checks them at the first forward): MaxPool2d(0) fails here."""
from ...checks import check_bool
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
        F._no_pool_dilation("MaxPool2d", dilation)
        F._pool_layer_args("MaxPool2d", kernel_size, stride, padding, ceil_mode)
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
        k, s, p = _pool1d_layer_args("AvgPool1d", kernel_size, stride, padding, 1, ceil_mode,
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
        F._no_divisor_override("AvgPool2d", divisor_override)
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
