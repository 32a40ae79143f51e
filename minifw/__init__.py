"""minifw: a small deep-learning framework over a native library of fast primitives.

The layers above Tensor (minifw.nn, optim, data, models, training, utils, vision, func,
special, testing, profiler) load when first used, as attributes (minifw.nn) or by import
(import minifw.nn as nn), so that importing a lower layer (import minifw.tensor) never loads a
higher one.
"""
import importlib as _importlib
import os as _os
import platform as _platform

import numpy as _numpy

from . import _native
from . import backends, devices
from . import ops
from .backends import (are_deterministic_algorithms_enabled, get_num_threads,
                       is_deterministic_algorithms_warn_only_enabled, set_num_threads,
                       use_deterministic_algorithms)
from .devices import device
from .engines import engine, get_engine, set_engine
# The framework over the primitives.
from .tensor import (Tensor, arange, bool_, cat, empty, float32, float64, from_numpy, full,
                     full_like, get_default_dtype, int32, int64, ones, ones_like, rand, rand_like,
                     randint, randn, randn_like, randperm, set_default_dtype, stack, tensor, where,
                     zeros, zeros_like)
from .autograd import (enable_grad, inference_mode, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                       is_grad_enabled, no_grad, set_grad_enabled)
from .random import Generator, get_rng_state, manual_seed, set_rng_state
from . import accelerator, autograd, caches, cuda, random
from .autograd import functional as _autograd_functional  # noqa: F401 (minifw.autograd.functional)
from .autograd import function as _autograd_function, grad_mode as _autograd_grad_mode  # noqa: F401
from .autograd.variable import Variable as _Variable  # noqa: F401 (minifw.autograd.variable)
from .serialization import load, save

concat = concatenate = cat
from .tensor import eye, linspace  # noqa: E402
from .tensor import (BoolTensor, DoubleTensor, FloatTensor, IntTensor, LongTensor,  # noqa: E402
                     Size, cdist, einsum, meshgrid)
from .random import initial_seed, seed  # noqa: E402
from .amp import autocast  # noqa: E402
from . import amp  # noqa: E402
from . import distributions  # noqa: E402
from . import linalg  # noqa: E402
from .linalg import det, logdet, matrix_power, pinverse, slogdet  # noqa: E402
from .linalg import inv as inverse  # noqa: E402

__version__ = "0.1.0"

_UPPER_LAYERS = ("nn", "optim", "data", "models", "training", "utils", "vision", "testing",
                 "profiler", "special", "func")


def __getattr__(name):
    if name in _UPPER_LAYERS:
        module = _importlib.import_module(f".{name}", __name__)  # binds minifw.<name> too
        return module
    raise AttributeError(f"module 'minifw' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_UPPER_LAYERS))

_env_isa = _os.environ.get("MINIFW_ISA", "")
if _env_isa and _env_isa not in ("avx512", "avx2", "generic"):
    raise ValueError(f"MINIFW_ISA must be one of 'avx512', 'avx2', 'generic'; got {_env_isa!r}")


def info():
    """Versions, the ISA in use, threads, the per-core cache sizes the CPU reports (bytes, 0
    if unknown) and the float32 GEMM's register and cache blocks derived from them, and the
    devices the build can run ("cudasim" always; "cuda" when the CUDA kernels were compiled
    in, with the CUDA version and GPU architectures they were built for), and the GPU that
    "cuda" runs on (devices.gpu_info(); None without one), and the glibc malloc thresholds
    minifw set (devices.host_malloc_settings()), as a dict."""
    import numpy

    backends_compiled = ["cpu", "cudasim"] + (["cuda"] if _native.has_cuda else [])
    blocking = _native.gemm_blocking("float32")
    return {
        "minifw": __version__,
        "python": _platform.python_version(),
        "numpy": numpy.__version__,
        "cpu": _cpu_model(),
        "isa": backends.get_isa(),
        "supported_isas": backends.supported_isas(),
        "num_threads": get_num_threads(),
        "caches": {"l1d": blocking["l1d_bytes"], "l2": blocking["l2_bytes"]},
        "gemm": {k: blocking[k] for k in ("name", "mr", "nr", "kc", "kc_whole", "mc", "nc")},
        "backends": backends_compiled,
        "cuda_kernels": ({"cuda": _native.cuda_version, "architectures": _native.cuda_architectures}
                         if _native.has_cuda else None),
        "gpu": devices.gpu_info(),
        "host_malloc": devices.host_malloc_settings(),
    }


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or "unknown"


# Functional forms of Tensor methods, as in the torch namespace. (They shadow builtins
# here, as torch's do: nothing in this module may call the builtin max, min, sum, abs, pow,
# round, all, any, float, int or bool.)
def matmul(a, b):
    return a @ b


def add(input, other, *args, alpha=1):
    if isinstance(input, Tensor):
        return input.add(other, *args, alpha=alpha)
    return (other if alpha == 1 else other * alpha).__radd__(input)


def sub(input, other, *args, alpha=1):
    if isinstance(input, Tensor):
        return input.sub(other, *args, alpha=alpha)
    return (other if alpha == 1 else other * alpha).__rsub__(input)


def mul(input, other):
    return input * other


def div(input, other, *, rounding_mode=None):
    if not isinstance(input, Tensor):
        input = tensor(input, device=other.device if isinstance(other, Tensor) else None)
    return input.div(other, rounding_mode=rounding_mode)


def true_divide(input, other):
    return input / other


subtract, multiply, divide = sub, mul, div


def floor_divide(input, other):
    return input // other


def remainder(input, other):
    return input % other


def bitwise_and(input, other):
    return input & other


def bitwise_or(input, other):
    return input | other


def bitwise_xor(input, other):
    return input ^ other


def bitwise_not(input):
    return ~input


def logical_and(input, other):
    return input.logical_and(other)


def logical_or(input, other):
    return input.logical_or(other)


def logical_xor(input, other):
    return input.logical_xor(other)


def logical_not(input):
    return input.logical_not()


def maximum(input, other):
    return input.maximum(other)


def minimum(input, other):
    return input.minimum(other)


def isnan(input):
    return input.isnan()


def isinf(input):
    return input.isinf()


def isfinite(input):
    return input.isfinite()


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return input.prod(dim, keepdim, dtype=dtype)


def roll(input, shifts, dims=None):
    return input.roll(shifts, dims)


def diag(input, diagonal=0):
    return input.diag(diagonal)


def trace(input):
    return input.trace()


def masked_select(input, mask):
    return input.masked_select(mask)


def square(input):
    return input.square()


def flip(input, dims):
    return input.flip(dims)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if out is not None:
        raise ValueError("norm: out must be None (minifw returns a new tensor)")
    return input.norm(p, dim, keepdim, dtype)


def logsumexp(input, dim, keepdim=False):
    return input.logsumexp(dim, keepdim)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return input.unique(sorted, return_inverse, return_counts, dim)


def bincount(input, weights=None, minlength=0):
    return input.bincount(weights, minlength)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    return input.multinomial(num_samples, replacement, generator=generator)


def finfo(type=None):
    """Machine limits of a float dtype (eps, max, min, tiny, ...): numpy.finfo's, for the
    default dtype when none is given."""
    import numpy
    return numpy.finfo(get_default_dtype() if type is None else type)


def iinfo(type):
    """Machine limits of an integer dtype (max, min, bits): numpy.iinfo's."""
    import numpy
    return numpy.iinfo(type)


_matmul_precision = "highest"


def set_float32_matmul_precision(precision):
    """Accepted for PyTorch's scripts: "highest", "high" or "medium". minifw's float32
    products always run in full float32 (TF32 on a GPU only via the allow_tf32 switches)."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: precision must be 'highest', 'high' or "
                         f"'medium', got {precision!r}")
    _matmul_precision = precision


def get_float32_matmul_precision():
    return _matmul_precision


def mm(input, mat2):
    """The product of two matrices (2-D tensors only, as torch.mm)."""
    for name, t in (("input", input), ("mat2", mat2)):
        if not isinstance(t, Tensor) or t.ndim != 2:
            raise ValueError(f"mm: {name} must be a 2-D tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    return input @ mat2


def bmm(input, mat2):
    """Batched matrix products of two 3-D tensors with the same batch size, as torch.bmm."""
    for name, t in (("input", input), ("mat2", mat2)):
        if not isinstance(t, Tensor) or t.ndim != 3:
            raise ValueError(f"bmm: {name} must be a 3-D tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if input.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm: batch sizes differ: input {input.shape}, mat2 {mat2.shape}")
    return autograd.rename(input @ mat2, "BmmBackward0", input, mat2)


def neg(t):
    return -t


negative = neg


def exp(t):
    return t.exp()


def log(t):
    return t.log()


def sqrt(t):
    return t.sqrt()


def abs(t):
    return t.abs()


absolute = abs


def pow(t, exponent):
    return t ** exponent


def sin(t):
    return t.sin()


def cos(t):
    return t.cos()


def tan(t):
    return t.tan()


def atan(t):
    return t.atan()


arctan = atan


def exp2(t):
    return t.exp2()


def log1p(t):
    return t.log1p()


def expm1(t):
    return t.expm1()


def rsqrt(t):
    return t.rsqrt()


def sign(t):
    return t.sign()


def floor(t):
    return t.floor()


def ceil(t):
    return t.ceil()


def trunc(t):
    return t.trunc()


def round(t, *, decimals=0):
    return t.round(decimals)


def relu(t):
    return t.relu()


def sigmoid(t):
    return t.sigmoid()


def tanh(t):
    return t.tanh()


def softmax(t, dim, dtype=None):
    return t.softmax(dim, dtype)


def log_softmax(t, dim, dtype=None):
    return t.log_softmax(dim, dtype)


def clamp(t, min=None, max=None):
    return t.clamp(min, max)


clip = clamp


def clamp_min(t, min):
    return t.clamp_min(min)


def clamp_max(t, max):
    return t.clamp_max(max)


def tril(t, diagonal=0):
    return t.tril(diagonal)


def triu(t, diagonal=0):
    return t.triu(diagonal)


def masked_fill(t, mask, value):
    return t.masked_fill(mask, value)


def clone(t):
    return t.clone()


# comparisons
def eq(input, other):
    return input.eq(other)


def ne(input, other):
    return input.ne(other)


def lt(input, other):
    return input.lt(other)


def le(input, other):
    return input.le(other)


def gt(input, other):
    return input.gt(other)


def ge(input, other):
    return input.ge(other)


not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def equal(input, other):
    return input.equal(other)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return input.isclose(other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return input.allclose(other, rtol, atol, equal_nan)


# reductions, scans, sorting
def sum(t, dim=None, keepdim=False, *, dtype=None):
    return t.sum(dim, keepdim, dtype=dtype)


def mean(t, dim=None, keepdim=False, *, dtype=None):
    return t.mean(dim, keepdim, dtype=dtype)


def var(t, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return t.var(dim, unbiased, keepdim, correction=correction)


def std(t, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return t.std(dim, unbiased, keepdim, correction=correction)


def max(t, dim=None, keepdim=False):
    """The largest element; (values, indices) along dim; or, given a tensor as the second
    argument, the elementwise maximum (torch.max(a, b))."""
    return t.max(dim, keepdim)


def min(t, dim=None, keepdim=False):
    return t.min(dim, keepdim)


def amax(t, dim=None, keepdim=False):
    return t.amax(dim, keepdim)


def amin(t, dim=None, keepdim=False):
    return t.amin(dim, keepdim)


def median(input, dim=None, keepdim=False):
    """The lower median of all elements, or (values, indices) along dim, as torch.median."""
    return input.median(dim, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    return input.nanmedian(dim, keepdim)


def argmax(t, dim=None, keepdim=False):
    return t.argmax(dim, keepdim)


def argmin(t, dim=None, keepdim=False):
    return t.argmin(dim, keepdim)


def all(t, dim=None, keepdim=False):
    return t.all(dim, keepdim)


def any(t, dim=None, keepdim=False):
    return t.any(dim, keepdim)


def cumsum(t, dim, *, dtype=None):
    return t.cumsum(dim, dtype=dtype)


def sort(t, dim=-1, descending=False, stable=False):
    return t.sort(dim, descending, stable)


def argsort(t, dim=-1, descending=False, stable=False):
    return t.argsort(dim, descending, stable)


def topk(t, k, dim=-1, largest=True, sorted=True):
    return t.topk(k, dim, largest, sorted)


# indexing
def gather(t, dim, index, *, sparse_grad=False):
    return t.gather(dim, index, sparse_grad=sparse_grad)


def scatter(t, dim, index, src=None, *, value=None, reduce=None):
    return t.scatter(dim, index, src, value=value, reduce=reduce)


def scatter_add(t, dim, index, src):
    return t.scatter_add(dim, index, src)


def index_select(t, dim, index):
    return t.index_select(dim, index)


def index_fill(t, dim, index, value):
    return t.index_fill(dim, index, value)


def index_add(input, dim, index, source, *, alpha=1):
    return input.index_add(dim, index, source, alpha=alpha)


def addcmul(input, tensor1, tensor2, *args, value=1):
    return input.addcmul(tensor1, tensor2, *args, value=value)


def addcdiv(input, tensor1, tensor2, *args, value=1):
    return input.addcdiv(tensor1, tensor2, *args, value=value)


def lerp(input, end, weight):
    return input.lerp(end, weight)


def nonzero(t, *, as_tuple=False):
    return t.nonzero(as_tuple=as_tuple)


def narrow(t, dim, start, length):
    return t.narrow(dim, start, length)


def select(t, dim, index):
    return t.select(dim, index)


# shapes
def reshape(t, shape):
    return t.reshape(shape)


def flatten(t, start_dim=0, end_dim=-1):
    return t.flatten(start_dim, end_dim)


def unflatten(input, dim, sizes):
    return input.unflatten(dim, sizes)


def permute(t, dims):
    return t.permute(dims)


def transpose(t, dim0, dim1):
    return t.transpose(dim0, dim1)


def unsqueeze(t, dim):
    return t.unsqueeze(dim)


def squeeze(t, dim=None):
    return t.squeeze(dim)


def chunk(t, chunks, dim=0):
    return t.chunk(chunks, dim)


def split(t, split_size_or_sections, dim=0):
    return t.split(split_size_or_sections, dim)


def unbind(t, dim=0):
    return t.unbind(dim)


# about tensors
def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(t):
    return t.is_floating_point()


def numel(t):
    return t.numel()


# The half-precision names exist so that scripts naming them (autocast(dtype=float16,
# enabled=False)) run; tensors refuse them (minifw computes in float32 and float64).
float16 = half = _numpy.dtype("float16")


class _NamedDtype:
    """A dtype NumPy lacks, as a name only: tensors refuse it as they refuse float16."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"minifw.{self.name}"


bfloat16 = _NamedDtype("bfloat16")

# dtype names as in torch: minifw.float is float32, minifw.long int64, ... (they shadow the
# builtins only inside this module's namespace, as torch's do)
float = float32
double = float64
long = int64
int = int32
bool = bool_


# ---- more of the torch namespace: pointwise functions, products, shapes, reductions ----
from .tensor import (block_diag, broadcast_shapes, broadcast_tensors, bucketize,  # noqa: E402
                     cartesian_prod, column_stack, combinations, dstack, hstack, isin,
                     row_stack, searchsorted, std_mean, tensordot, tril_indices, triu_indices,
                     var_mean, vstack)
from .tensor import atleast_1d, atleast_2d, atleast_3d  # noqa: E402


def _method_form(name, doc=None):
    """minifw.<name>(input, ...) = input.<name>(...), as the torch namespace's functional form."""
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc or f"input.{name}(...): see Tensor.{name}."
    return function


for _name in ("log2", "log10", "reciprocal", "erf", "erfc", "erfinv", "sinh", "cosh", "asin", "acos",
              "asinh", "acosh", "atanh", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "logit",
              "frac", "nan_to_num", "sgn", "deg2rad", "rad2deg", "sinc", "signbit", "isneginf",
              "isposinf", "lgamma", "digamma", "heaviside", "gcd", "lcm", "positive",
              "outer", "ger", "dot", "vdot", "inner", "kron", "cross", "addmm", "addmv", "addbmm",
              "baddbmm", "movedim", "moveaxis", "swapaxes", "swapdims", "diagonal", "diag_embed",
              "tile", "rot90", "ravel", "flipud", "fliplr", "broadcast_to", "tensor_split",
              "hsplit", "vsplit", "dsplit", "split_with_sizes", "take", "take_along_dim",
              "index_copy", "masked_scatter", "argwhere", "cumprod", "cummax", "cummin",
              "logcumsumexp", "kthvalue", "mode", "nansum", "nanmean",
              "quantile", "nanquantile", "count_nonzero", "aminmax", "diff", "histc",
              "scatter_reduce"):
    globals()[_name] = _method_form(_name)
# the in-place forms the torch namespace has too (torch.log2_(x) is x.log2_())
for _name in ("log2", "log10", "reciprocal", "erf", "erfc", "sinh", "cosh", "asin", "acos", "asinh",
              "acosh", "atanh", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "logit", "frac",
              "nan_to_num", "xlogy", "deg2rad", "rad2deg", "sinc", "gcd", "lcm", "addmv"):
    globals()[_name + "_"] = _method_form(_name + "_")
del _name


def _first_tensor(fn, input, other):
    """The tensor whose method computes fn(input, other), where input may be a number."""
    if isinstance(input, Tensor):
        return input
    if isinstance(other, Tensor):
        return tensor(input, device=other.device)
    raise TypeError(f"{fn}: input or other must be a Tensor, got {type(input).__name__} and "
                    f"{type(other).__name__}")


def atan2(input, other):
    return _first_tensor("atan2", input, other).atan2(other)


arctan2 = atan2


def hypot(input, other):
    return _first_tensor("hypot", input, other).hypot(other)


def fmod(input, other):
    return _first_tensor("fmod", input, other).fmod(other)


def xlogy(input, other):
    """input * log(other), 0 where input is 0; either may be a number."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other._float_binary(input, "xlogy", reverse=True)
    return _first_tensor("xlogy", input, other).xlogy(other)


def logaddexp(input, other):
    return _first_tensor("logaddexp", input, other).logaddexp(other)


def copysign(input, other):
    return _first_tensor("copysign", input, other).copysign(other)


def float_power(input, exponent):
    return _first_tensor("float_power", input, exponent).float_power(exponent)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) of input repeated `repeats` times; with a tensor of
    counts alone, the indices 0, 1, ... each repeated its count of times."""
    if repeats is None:
        counts = input
        return arange(counts.numel(), device=counts.device).repeat_interleave(
            counts, output_size=output_size)
    return input.repeat_interleave(repeats, dim, output_size=output_size)


# the functional forms of more Tensor methods (torch.fmax(a, b) is a.fmax(b))
for _name in ("mv", "addr", "adjoint", "fmax", "fmin", "logaddexp2", "igamma", "igammac", "ldexp",
              "frexp", "nextafter", "i0", "msort", "dist", "diagflat", "renorm", "select_scatter",
              "slice_scatter", "diagonal_scatter", "index_put", "put", "index_reduce",
              "unique_consecutive", "cov", "corrcoef", "histogram", "bernoulli", "fix",
              "bitwise_left_shift", "bitwise_right_shift", "matrix_exp", "qr", "svd", "cholesky",
              "cholesky_solve", "cholesky_inverse", "triangular_solve", "t", "detach", "mvlgamma",
              "get_device"):
    globals()[_name] = _method_form(_name)
for _name in ("abs", "ceil", "floor", "round", "trunc", "fix", "exp", "exp2", "expm1", "log",
              "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "atan", "arctan",
              "neg", "negative", "clamp", "clamp_min", "clamp_max", "clip", "square", "i0",
              "ldexp", "detach", "fill", "zero", "index_put"):
    globals()[_name + "_"] = _method_form(_name + "_")
del _name


def lu(A, pivot=True, get_infos=False):
    """(LU, pivots) of A (with get_infos, also the infos), as the older torch.lu."""
    return linalg._lu_method(A, pivot, get_infos)


def lu_solve(b, LU_data, LU_pivots):
    """X with A X = b from lu's factors, as the older torch.lu_solve."""
    return linalg.lu_solve(LU_data, LU_pivots, b)


lu_unpack = linalg.lu_unpack


def polygamma(n, input):
    """The n-th derivative of digamma at input (torch.polygamma's order: n first)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma: input must be a Tensor, got {type(input).__name__}")
    return input.polygamma(n)


def fill(input, value):
    """A tensor of input's shape, dtype and device filled with value (out of place). Recorded
    as PyTorch's where input or a tensor value requires grad: zero gradient to input, the
    sum of the result's to value."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fill: input must be a Tensor, got {type(input).__name__}")
    out = full_like(input, value.item() if isinstance(value, Tensor) else value)
    if is_grad_enabled() and (input.requires_grad or (isinstance(value, Tensor) and value.requires_grad)):
        if isinstance(value, Tensor) and value.dtype.kind == "f" and input.dtype.kind == "f":
            out = value.to(input.dtype).expand(input.shape)
        return where(ones_like(input, dtype=bool_), out, input)
    return out


# ---- the layers' forms, draws, windows, dtype rules and switches of the torch namespace ----
from ._namespace import *  # noqa: E402,F401,F403
from ._namespace import range_ as range  # noqa: E402,F401 (deprecated, as torch.range)
