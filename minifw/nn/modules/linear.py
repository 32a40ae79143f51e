"""Identity, Linear and Bilinear."""
import math

from .. import functional as F
from .. import init
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
