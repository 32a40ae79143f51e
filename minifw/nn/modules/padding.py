"""Padding layers over nn.functional.pad: zero, constant, reflection, replication and circular
padding of the last dim (the 1d layers), the last two (2d) or the last three (3d). padding is one int
for every side or a tuple (left, right[, top, bottom]), kept as the full tuple."""
from ...checks import check_real, is_int
from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _PadNd(Module):
    _sides = 2          # entries of the padding tuple: 2 per padded dim
    _mode = "constant"
    _input_dims = ()    # the ranks the non-constant modes take: unbatched and batched
    _input_desc = ""

    def __init__(self, padding):
        super().__init__()
        cls = type(self).__name__
        if is_int(padding):
            padding = (int(padding),) * self._sides
        elif not (isinstance(padding, (tuple, list)) and len(padding) == self._sides
                  and all(is_int(p) for p in padding)):
            raise TypeError(f"{cls}: padding must be an int or a tuple of {self._sides} ints, got "
                            f"{padding!r}")
        self.padding = tuple(int(p) for p in padding)

    def forward(self, input):
        if self._input_dims and isinstance(input, Tensor) and input.ndim not in self._input_dims:
            raise ValueError(f"{type(self).__name__}: expected {self._input_desc} input, got a "
                             f"{input.ndim}-D tensor of shape {tuple(input.shape)}")
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        check_real(type(self).__name__, "value", value, finite=False)
        self.value = value

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _OneD:
    _sides, _input_dims, _input_desc = 2, (2, 3), "2-D (C, W) or 3-D (N, C, W)"


class _TwoD:
    _sides, _input_dims, _input_desc = 4, (3, 4), "3-D (C, H, W) or 4-D (N, C, H, W)"


class ConstantPad1d(_OneD, _ConstantPadNd):
    """Pad the last dim with value."""
    _input_dims = ()  # constant padding takes any rank, as PyTorch's


class ConstantPad2d(_TwoD, _ConstantPadNd):
    """Pad the last two dims with value."""
    _input_dims = ()


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_OneD, _PadNd):
    """Pad the last dim with its mirror image, the edge element not repeated."""
    _mode = "reflect"


class ReflectionPad2d(_TwoD, _PadNd):
    """Pad the last two dims with their mirror images, the edge not repeated."""
    _mode = "reflect"


class ReplicationPad1d(_OneD, _PadNd):
    """Pad the last dim with copies of its edge elements."""
    _mode = "replicate"


class ReplicationPad2d(_TwoD, _PadNd):
    """Pad the last two dims with copies of their edges."""
    _mode = "replicate"


class CircularPad1d(_OneD, _PadNd):
    """Pad the last dim with its other end (wrapping around)."""
    _mode = "circular"


class CircularPad2d(_TwoD, _PadNd):
    """Pad the last two dims with their other ends (wrapping around)."""
    _mode = "circular"


class _ThreeD:
    _sides, _input_dims, _input_desc = 6, (4, 5), "4-D (C, D, H, W) or 5-D (N, C, D, H, W)"


class ConstantPad3d(_ThreeD, _ConstantPadNd):
    """Pad the last three dims with value."""
    _input_dims = ()


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad3d(_ThreeD, _PadNd):
    """Pad the last three dims with their mirror images, the edge not repeated."""
    _mode = "reflect"


class ReplicationPad3d(_ThreeD, _PadNd):
    """Pad the last three dims with copies of their edges."""
    _mode = "replicate"


class CircularPad3d(_ThreeD, _PadNd):
    """Pad the last three dims with their other ends (wrapping around)."""
    _mode = "circular"
