"""Identity, Linear and Bilinear."""
import math

from .. import functional as F
from .. import init
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments, as PyTorch's, so it
    can stand in for any layer (model.fc = nn.Identity())."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b; weight (out_features, in_features), initialized as in PyTorch."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory("Linear", dtype, device)
        self.in_features = _positive_int("Linear", "in_features", in_features)
        self.out_features = _positive_int("Linear", "out_features", out_features)
        self.weight = _empty_parameter((out_features, in_features), dtype, dev)
        if bias:
            self.bias = _empty_parameter((out_features,), dtype, dev)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T A x2 + b (F.bilinear); weight (out_features, in1_features, in2_features) and
    bias initialized U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as in PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        fn = "Bilinear"
        dtype, dev = _factory(fn, dtype, device)
        self.in1_features = _positive_int(fn, "in1_features", in1_features)
        self.in2_features = _positive_int(fn, "in2_features", in2_features)
        self.out_features = _positive_int(fn, "out_features", out_features)
        self.weight = _empty_parameter((out_features, in1_features, in2_features), dtype, dev)
        if bias:
            self.bias = _empty_parameter((out_features,), dtype, dev)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last size of its first input; it becomes a Linear then."""

    cls_to_become = Linear
    _lazy_input_desc = "an at least 1-D"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        dtype, dev = _factory("LazyLinear", dtype, device)
        self.in_features = 0
        self.out_features = _positive_int("LazyLinear", "out_features", out_features)
        self.weight = UninitializedParameter(device=dev, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=dev, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._lazy_setup()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_features = self._input_size(input, lambda ndim: -1 if ndim >= 1 else None)
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()

    def _sizes_from_parameters(self):
        self.in_features = self.weight.shape[1]
