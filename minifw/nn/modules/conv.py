"""Convolution layers."""
import math

from ...checks import check_pair
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
        self.stride = check_pair(cls, "stride", stride, minimum=1)
        self.dilation = check_pair(cls, "dilation", dilation, minimum=1)
        if isinstance(padding, str):  # as PyTorch, checked when built
            if padding not in ("valid", "same"):
                raise ValueError(f"{cls}: invalid padding string {padding!r}, should be one of "
                                 f"'valid', 'same' (or give an int or a pair of ints)")
            if padding == "same" and self.stride != (1, 1):
                raise ValueError(f"{cls}: padding='same' is not supported for strided "
                                 f"convolutions; got stride={self.stride}")
            self.padding = padding
        else:
            self.padding = check_pair(cls, "padding", padding, minimum=0)
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


class ConvTranspose2d(Module):
    """2-D transposed convolution over (N, C_in, H, W): the input gradient of a Conv2d from
    out_channels to in_channels, used to upsample. weight (in, out // groups, kh, kw) and bias
    are initialized as in PyTorch (kaiming_uniform_ with a = sqrt(5), whose fan_in is
    out // groups * kh * kw here). forward(input, output_size=None): output_size picks one of
    the stride's possible output sizes, instead of output_padding."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        cls = "ConvTranspose2d"
        dtype, dev = _factory(cls, dtype, device)
        self.in_channels = _positive_int(cls, "in_channels", in_channels)
        self.out_channels = _positive_int(cls, "out_channels", out_channels)
        self.groups = _positive_int(cls, "groups", groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{cls}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise ValueError(f'{cls}: only "zeros" padding mode is supported, got '
                             f'padding_mode={padding_mode!r}')
        if isinstance(padding, str):
            raise ValueError(f"{cls}: padding must be an int or a pair of ints, got {padding!r} "
                             f"('same' and 'valid' are Conv2d's)")
        self.kernel_size = tuple(_positive_int(cls, "kernel_size", k) for k in _pair(kernel_size))
        self.stride = check_pair(cls, "stride", stride, minimum=1)
        self.padding = check_pair(cls, "padding", padding, minimum=0)
        self.output_padding = check_pair(cls, "output_padding", output_padding, minimum=0)
        self.dilation = check_pair(cls, "dilation", dilation, minimum=1)
        self.padding_mode = padding_mode
        self.weight = _empty_parameter((in_channels, out_channels // groups) + self.kernel_size,
                                       dtype, dev)
        if bias:
            self.bias = _empty_parameter((out_channels,), dtype, dev)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    reset_parameters = Conv2d.reset_parameters

    def _output_padding(self, input, output_size):
        """output_padding, or the one that gives output_size ((H, W), or with the leading
        (N, C) or (C,) dims of input), which must lie within the stride's range."""
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)
        leading = input.ndim - 2
        if len(output_size) == leading + 2:
            output_size = output_size[leading:]
        if len(output_size) != 2:
            raise ValueError(f"ConvTranspose2d: for {input.ndim}D input, output_size must have 2 "
                             f"or {leading + 2} elements (got {len(output_size)})")
        smallest = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(2)]
        largest = [smallest[d] + self.stride[d] - 1 for d in range(2)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(f"ConvTranspose2d: requested an output size of {output_size}, but "
                             f"valid sizes range from {smallest} to {largest} (for an input of "
                             f"{tuple(input.shape[leading:])})")
        return tuple(size - lo for size, lo in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0, 0):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
