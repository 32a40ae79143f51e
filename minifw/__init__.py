"""minifw: a small deep-learning framework over a native library of fast primitives.

The layers above Tensor (minifw.nn, optim, data, models, training) load when first
used, as attributes (minifw.nn) or by import (import minifw.nn as nn), so that
importing a lower layer (import minifw.tensor) never loads a higher one.
"""
import importlib as _importlib
import os as _os
import platform as _platform

from . import _native
from . import backends, devices
from . import ops
from .backends import get_num_threads, set_num_threads
from .devices import device
from .engines import engine, get_engine, set_engine
# The framework over the primitives.
from .tensor import (Tensor, arange, bool_, cat, empty, float32, float64, from_numpy, full,
                     full_like, int64, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                     randperm, stack, tensor, where, zeros, zeros_like)
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .random import Generator, get_rng_state, manual_seed, set_rng_state
from . import autograd, random
from .serialization import load, save

__version__ = "0.1.0"

_UPPER_LAYERS = ("nn", "optim", "data", "models", "training")


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
    "cuda" runs on (devices.gpu_info(); None without one), as a dict."""
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
        "gemm": {k: blocking[k] for k in ("name", "mr", "nr", "kc", "mc", "nc")},
        "backends": backends_compiled,
        "cuda_kernels": ({"cuda": _native.cuda_version, "architectures": _native.cuda_architectures}
                         if _native.has_cuda else None),
        "gpu": devices.gpu_info(),
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


# Functional forms of Tensor methods, as in the torch namespace.
def matmul(a, b):
    return a @ b


def exp(t):
    return t.exp()


def log(t):
    return t.log()


def sqrt(t):
    return t.sqrt()


def abs(t):
    return t.abs()


def pow(t, exponent):
    return t ** exponent


def relu(t):
    return t.relu()


def sigmoid(t):
    return t.sigmoid()


def tanh(t):
    return t.tanh()


def clamp(t, min=None, max=None):
    return t.clamp(min, max)


def sum(t, dim=None, keepdim=False):
    return t.sum(dim, keepdim)


def mean(t, dim=None, keepdim=False):
    return t.mean(dim, keepdim)


def max(t, dim=None, keepdim=False):
    return t.max(dim, keepdim)


def min(t, dim=None, keepdim=False):
    return t.min(dim, keepdim)


def argmax(t, dim=None, keepdim=False):
    return t.argmax(dim, keepdim)


def reshape(t, shape):
    return t.reshape(shape)


def flatten(t, start_dim=0, end_dim=-1):
    return t.flatten(start_dim, end_dim)


def permute(t, dims):
    return t.permute(dims)


def transpose(t, dim0, dim1):
    return t.transpose(dim0, dim1)


def unsqueeze(t, dim):
    return t.unsqueeze(dim)


def squeeze(t, dim=None):
    return t.squeeze(dim)
