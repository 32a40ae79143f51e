"""Convolution layers."""
import math

from .. import functional as F
from .. import init
from .module import Module
from .utils import _empty_parameter, _factory, _pair, _positive_int


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
