"""Parameter initialization, as torch.nn.init. Every function fills the tensor in
place (without recording a graph) and returns it. Random values are drawn on the host
from minifw's global generator (minifw.manual_seed), or from `generator`, in float64,
and copied into the tensor on its device: the same seed gives the same values on every
device."""
import math
import numbers
import warnings

import numpy as np

from .. import devices
from ..autograd import no_grad
from ..checks import check_real
from ..functions.special import erfinv
from ..random import _numpy_rng
from ..tensor import Tensor


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activations' variance steady through `nonlinearity`."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, (bool, np.bool_)):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = in_features (x kernel area), fan_out = out_features (x kernel area)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dims, got shape "
                         f"{tuple(tensor.shape)}")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    with no_grad():
        devices.assign(tensor._data, Ellipsis, values)
    return tensor


def _tensor_arg(fn, tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: tensor must be a minifw.Tensor, got {type(tensor).__name__}")
    return tensor


def _float_tensor(fn, tensor):
    """The random initializers fill floating point tensors only, as PyTorch's (rounding random
    draws into an integer tensor would silently give mostly zeros)."""
    _tensor_arg(fn, tensor)
    if tensor.dtype.kind != "f":
        raise TypeError(f"{fn}: tensor must be floating point (float32 or float64) to hold random "
                        f"values, got dtype {tensor.dtype}")
    return tensor


def _range(fn, a, b, a_name="a", b_name="b"):
    a, b = check_real(fn, a_name, a), check_real(fn, b_name, b)
    if a > b:
        raise ValueError(f"{fn}: expects {a_name} <= {b_name} (the range [{a_name}, {b_name}) to "
                         f"draw from), but found {a_name}={a} > {b_name}={b}")
    return a, b


def _std(fn, std, positive=False):
    std = check_real(fn, "std", std)
    if std < 0 or (positive and std == 0):
        raise ValueError(f"{fn}: expects std {'>' if positive else '>='} 0.0 (a standard "
                         f"deviation), but found std={std}")
    return std


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """U(a, b): uniform draws in [a, b)."""
    fn = "uniform_"
    _float_tensor(fn, tensor)
    a, b = _range(fn, a, b)
    return _fill(tensor, _numpy_rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """N(mean, std^2)."""
    fn = "normal_"
    _float_tensor(fn, tensor)
    mean, std = check_real(fn, "mean", mean), _std(fn, std)
    return _fill(tensor, _numpy_rng(generator).normal(mean, std, tensor.shape))


def constant_(tensor, val):
    return _fill(_tensor_arg("constant_", tensor), val)


def zeros_(tensor):
    return _fill(_tensor_arg("zeros_", tensor), 0)


def ones_(tensor):
    return _fill(_tensor_arg("ones_", tensor), 1)


def eye_(tensor):
    """The identity matrix (ones on the diagonal of a 2-D tensor, rectangular ones too)."""
    _tensor_arg("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only tensors with 2 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    return _fill(tensor, np.eye(*tensor.shape))


def _normal_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


# trunc_normal_ draws normals and redraws those outside [a, b] where at least this share of
# the normal lies inside (each value then takes under 4 draws on average)
_REDRAW_FROM = 0.25


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) restricted to [a, b] (a and b are values, not numbers of stds); it warns,
    as PyTorch's, when mean lies more than 2 std outside [a, b]. Where at least a quarter of
    the normal lies in [a, b] (the usual case: [-2, 2] std holds 95%), normal draws with those
    outside redrawn until all are in; else PyTorch's way: uniform draws between the normal CDF
    at a and at b, mapped through the inverse CDF (sqrt(2) erfinv(2u - 1)) and clamped to
    [a, b], exact in the tails but about 70 times slower (ConvNeXt-T's initialization took
    20 s that way)."""
    fn = "trunc_normal_"
    _float_tensor(fn, tensor)
    mean, std = check_real(fn, "mean", mean), _std(fn, std, positive=True)
    a, b = _range(fn, a, b)
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", UserWarning, stacklevel=2)
    lo, hi = _normal_cdf((a - mean) / std), _normal_cdf((b - mean) / std)
    rng = _numpy_rng(generator)
    if hi - lo >= _REDRAW_FROM:
        values = rng.normal(mean, std, tensor.shape)
        outside = np.flatnonzero((values < a) | (values > b))
        flat = values.reshape(-1)
        while outside.size:
            flat[outside] = rng.normal(mean, std, outside.size)
            outside = outside[(flat[outside] < a) | (flat[outside] > b)]
        return _fill(tensor, values)
    u = rng.uniform(2 * lo - 1, 2 * hi - 1, tensor.shape)
    values = np.clip(erfinv(u) * (std * math.sqrt(2.0)) + mean, a, b)
    return _fill(tensor, values)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix times gain (Saxe et al., 2013), the tensor seen as
    (shape[0], the rest): Q of the QR decomposition of a standard normal matrix, each column
    signed by R's diagonal so that Q is uniformly distributed (Haar)."""
    _float_tensor("orthogonal_", tensor)
    gain = check_real("orthogonal_", "gain", gain)
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _numpy_rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    _float_tensor("xavier_uniform_", tensor)
    gain = check_real("xavier_uniform_", "gain", gain)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    _float_tensor("xavier_normal_", tensor)
    gain = check_real("xavier_normal_", "gain", gain)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _empty_warning(tensor):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b), b = gain * sqrt(3 / fan) (He et al., 2015)."""
    _float_tensor("kaiming_uniform_", tensor)
    if _empty_warning(tensor):
        return tensor
    fan = _fan(tensor, mode)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan) (He et al., 2015)."""
    _float_tensor("kaiming_normal_", tensor)
    if _empty_warning(tensor):
        return tensor
    fan = _fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def dirac_(tensor, groups=1):
    """The Dirac delta for a 3-, 4- or 5-D convolution weight (out, in, *kernel): each of
    the `groups` blocks of output channels copies its input channels through the kernel's
    centre, so the convolution is the identity on as many channels as both sides have."""
    fn = "dirac_"
    _tensor_arg(fn, tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"{fn}: only tensors with 3, 4, or 5 dimensions are supported, got "
                         f"shape {tuple(tensor.shape)}")
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{fn}: groups must be a positive integer, got {groups!r}")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError(f"{fn}: dim 0 must be divisible by groups; got {sizes[0]} output "
                         f"channels and groups={groups}")
    per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(k // 2 for k in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor drawn from N(0, std^2) with a fraction `sparsity` of each column's
    entries (ceil(sparsity * rows), at random rows) set to zero (Martens, 2010)."""
    fn = "sparse_"
    _float_tensor(fn, tensor)
    if tensor.ndim != 2:
        raise ValueError(f"{fn}: only tensors with 2 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    sparsity = check_real(fn, "sparsity", sparsity, minimum=0.0, maximum=1.0)
    std = _std(fn, std)
    rows, cols = tensor.shape
    rng = _numpy_rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    zeros_per_column = int(math.ceil(sparsity * rows))
    for c in range(cols):
        values[rng.permutation(rows)[:zeros_per_column], c] = 0.0
    return _fill(tensor, values)


def _deprecated(initializer):
    old, new = initializer.__name__[:-1], initializer.__name__

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                      FutureWarning, stacklevel=2)
        return initializer(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated name of {new} (a FutureWarning, as PyTorch's)."
    return deprecated


# PyTorch's old names, without the trailing underscore
uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
