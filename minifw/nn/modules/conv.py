"""Convolution layers: Conv1d, Conv2d and Conv3d share _ConvNd, ConvTranspose1d, 2d and 3d
share _ConvTransposeNd (the checks, parameters and initialization of n spatial dims); each
layer's forward calls its own nn.functional form."""
import inspect
import math

from ...checks import check_ints
from .. import functional as F
from .. import init
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int


def _ints_text(n):
    return "an int or a pair of ints" if n == 2 else f"an int or a tuple of {n} ints"


def _kernel_size(cls, kernel_size, n):
    sizes = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * n
    if len(sizes) != n:
        raise ValueError(f"{cls}: kernel_size must be {_ints_text(n)}, got {kernel_size!r}")
    return tuple(_positive_int(cls, "kernel_size", k) for k in sizes)


class _ConvNd(Module):
    """The layer state of an n-D convolution: weight (out, in // groups, *kernel_size) and bias
    initialized as in PyTorch (kaiming_uniform_ with a = sqrt(5); bias U(-1/sqrt(fan_in), ..))."""

    def __init__(self, cls, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, device, dtype, weight_channels):
        super().__init__()
        dtype, dev = _factory(cls, dtype, device)
        lazy = isinstance(self, LazyModuleMixin)  # in_channels comes with the first input
        self.in_channels = 0 if lazy else _positive_int(cls, "in_channels", in_channels)
        self.out_channels = _positive_int(cls, "out_channels", out_channels)
        self.groups = _positive_int(cls, "groups", groups)
        if (not lazy and in_channels % groups) or out_channels % groups:
            raise ValueError(f"{cls}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        self.kernel_size = _kernel_size(cls, kernel_size, n)
        self.stride = check_ints(cls, "stride", stride, n, minimum=1)
        self.dilation = check_ints(cls, "dilation", dilation, n, minimum=1)
        if isinstance(padding, str):  # as PyTorch, checked when built
            if padding not in ("valid", "same"):
                raise ValueError(f"{cls}: invalid padding string {padding!r}, should be one of "
                                 f"'valid', 'same' (or give {_ints_text(n)})")
            if padding == "same" and self.stride != (1,) * n:
                raise ValueError(f"{cls}: padding='same' is not supported for strided "
                                 f"convolutions; got stride={self.stride}")
            self.padding = padding
        else:
            self.padding = check_ints(cls, "padding", padding, n, minimum=0)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{cls}: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             f"'circular'; got {padding_mode!r}")
        self.padding_mode = padding_mode
        if lazy:
            self.weight = UninitializedParameter(device=dev, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=dev, dtype=dtype)
            else:
                self.register_parameter("bias", None)
            return
        self.weight = _empty_parameter(weight_channels + self.kernel_size, dtype, dev)
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

    def _padded(self, input):
        """(input, padding) for the functional form: a padding_mode other than 'zeros' pads the
        input itself (for 'same', an odd total's extra on the right, as the zeros mode does)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        pads = []
        for d in reversed(range(len(self.kernel_size))):  # F.pad takes the last dim first
            if isinstance(self.padding, str):
                total = self.dilation[d] * (self.kernel_size[d] - 1) if self.padding == "same" else 0
                pads += [total // 2, total - total // 2]
            else:
                pads += [self.padding[d]] * 2
        return F.pad(input, tuple(pads), mode=self.padding_mode), 0

    def extra_repr(self):
        n = len(self.kernel_size)
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if getattr(self, "output_padding", (0,) * n) != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L); weight (out, in // groups, k)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__("Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, device, dtype,
                         (out_channels, in_channels // groups))

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv1d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W); weight (out, in // groups, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__("Conv2d", 2, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, device, dtype,
                         (out_channels, in_channels // groups))

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)



class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W); weight (out, in // groups, kd, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__("Conv3d", 3, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, device, dtype,
                         (out_channels, in_channels // groups))

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)

class _ConvTransposeNd(_ConvNd):
    """The layer state of an n-D transposed convolution: the input gradient of a convolution
    from out_channels to in_channels, used to upsample. weight (in, out // groups, *kernel_size)
    and bias are initialized as in PyTorch (kaiming_uniform_ with a = sqrt(5), whose fan_in is
    out // groups * the kernel's size here). forward(input, output_size=None): output_size picks
    one of the stride's possible output sizes, instead of output_padding."""

    def __init__(self, cls, n, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, groups, bias, dilation, padding_mode, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'{cls}: only "zeros" padding mode is supported, got '
                             f'padding_mode={padding_mode!r}')
        if isinstance(padding, str):
            raise ValueError(f"{cls}: padding must be {_ints_text(n)}, got {padding!r} "
                             f"('same' and 'valid' are Conv{n}d's)")
        # checked before the parameters are made, as every other argument
        output_padding = check_ints(cls, "output_padding", output_padding, n, minimum=0)
        super().__init__(cls, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype,
                         (in_channels, out_channels // groups))
        self.output_padding = output_padding

    def _output_padding(self, input, output_size):
        """output_padding, or the one that gives output_size (the spatial sizes, or with the
        leading (N, C) or (C,) dims of input), which must lie within the stride's range."""
        if output_size is None:
            return self.output_padding
        n = len(self.kernel_size)
        output_size = list(output_size)
        leading = input.ndim - n
        if len(output_size) == leading + n:
            output_size = output_size[leading:]
        if len(output_size) != n:
            raise ValueError(f"{type(self).__name__}: for {input.ndim}D input, output_size must "
                             f"have {n} or {leading + n} elements (got {len(output_size)})")
        smallest = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        largest = [smallest[d] + self.stride[d] - 1 for d in range(n)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(f"{type(self).__name__}: requested an output size of {output_size}, "
                             f"but valid sizes range from {smallest} to {largest} (for an input "
                             f"of {tuple(input.shape[leading:])})")
        return tuple(size - lo for size, lo in zip(output_size, smallest))


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L); weight (in, out // groups, k)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__("ConvTranspose1d", 1, in_channels, out_channels, kernel_size, stride,
                         padding, output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W); weight
    (in, out // groups, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__("ConvTranspose2d", 2, in_channels, out_channels, kernel_size, stride,
                         padding, output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight
    (in, out // groups, kd, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__("ConvTranspose3d", 3, in_channels, out_channels, kernel_size, stride,
                         padding, output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  output_padding, self.groups, self.dilation)


# ---- lazy forms: in_channels from the first input ----------------------------------------------

class _LazyConvMixin(LazyModuleMixin):
    """in_channels is the channel size of the first input ((N, C, *spatial) or (C, *spatial));
    the weight is then materialized and initialized as the ordinary layer's."""

    _transposed = False

    @property
    def _lazy_input_desc(self):
        n = len(self.kernel_size)
        return f"a {n + 1}-D or {n + 2}-D"

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        n = len(self.kernel_size)
        channels = self._input_size(input, lambda ndim: {n + 1: 0, n + 2: 1}.get(ndim))
        if channels % self.groups:
            raise ValueError(f"{type(self).__name__}: the input's {channels} channels must be "
                             f"divisible by groups ({self.groups})")
        self.in_channels = channels
        self.weight.materialize(self._weight_shape())
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _weight_shape(self):
        if self._transposed:
            return (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        return (self.out_channels, self.in_channels // self.groups) + self.kernel_size

    def _sizes_from_parameters(self):
        w = self.weight.shape
        self.in_channels = w[0] if self._transposed else w[1] * self.groups


def _lazy_conv(base, transposed):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, **kwargs):
        base.__init__(self, 0, out_channels, kernel_size, stride, padding, *rest, **kwargs)
        self._lazy_setup()

    params = list(inspect.signature(base.__init__).parameters.values())
    __init__.__signature__ = inspect.Signature([params[0]] + params[2:])
    return type(f"Lazy{base.__name__}", (_LazyConvMixin, base), dict(
        __init__=__init__, cls_to_become=base, _transposed=transposed, __module__=__name__,
        __doc__=f"{base.__name__} whose in_channels is the channel size of its first input "
                f"(a lazy layer: it becomes a {base.__name__} then)."))


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)
