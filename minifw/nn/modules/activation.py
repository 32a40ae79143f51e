"""Activation layers."""
import warnings

from .. import functional as F
from .. import init as _init
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class GELU(Module):
    """x * Phi(x), Phi the standard normal CDF; approximate='tanh' for the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """input clipped to [min_val, max_val] (min_value / max_value: PyTorch's deprecated
    names for them)."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if max_val <= min_val:
            raise ValueError(f"{type(self).__name__}: max_val must be greater than min_val, got "
                             f"min_val={min_val} and max_val={max_val}")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """softmax along dim. dim=None picks PyTorch's legacy dim (0 for 0-, 1- and 3-D input,
    else 1) with its deprecation warning: give dim explicitly."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along dim, computed as one stable operation; dim=None as Softmax's."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along dim; dim=None as Softmax's."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels at each position of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input of 3 or 4 dims, (C, H, W) or "
                             f"(N, C, H, W); got a {input.ndim}-D tensor of shape "
                             f"{tuple(input.shape)}")
        return F.softmax(input, -3, _stacklevel=5)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear (x) where beta * x > threshold."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """max(0, x) + a * min(0, x) with a learnable slope a: one for every channel
    (num_parameters=1) or one per channel, dim 1 of the input (num_parameters=C); each starts
    at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory("PReLU", dtype, device)
        self.num_parameters = _positive_int("PReLU", "num_parameters", num_parameters)
        self.init = init
        self.weight = _empty_parameter((num_parameters,), dtype, dev)
        self.reset_parameters()

    def reset_parameters(self):
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _InplaceActivation(Module):
    """A pointwise activation, F.<_function>, with PyTorch's inplace flag (extra_repr shows it
    only when set)."""
    _function = ""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._function)(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6."""
    _function = "hardswish"

    def extra_repr(self):  # as PyTorch's, which never shows inplace here
        return ""


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6."""
    _function = "hardsigmoid"

    def extra_repr(self):  # as PyTorch's, which never shows inplace here
        return ""


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""
    _function = "mish"


class SELU(_InplaceActivation):
    """scale * elu(x, alpha), with the self-normalizing constants."""
    _function = "selu"


class CELU(Module):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return F.tanhshrink(input)


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x moved lambd towards 0 where |x| > lambd, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Threshold(Module):
    """value where x <= threshold, else x."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU (F.rrelu): random slopes in U(lower, upper) in training, their mean
    in evaluation."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        if F._real("RReLU", "lower", lower) > F._real("RReLU", "upper", upper):
            raise ValueError(f"RReLU: lower must be at most upper, got lower={lower} and "
                             f"upper={upper}")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


def __getattr__(name):
    # torch.nn.modules.activation holds MultiheadAttention; minifw's lives in .attention (which
    # imports this module), so it is found here when asked for
    if name == "MultiheadAttention":
        from .attention import MultiheadAttention
        return MultiheadAttention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
