"""minifw: a small deep-learning framework over a native library of fast primitives."""
import os as _os
import platform as _platform

from . import _native
from . import backends
from . import ops

__version__ = "0.1.0"

_env_isa = _os.environ.get("MINIFW_ISA", "")
if _env_isa and _env_isa not in ("avx512", "avx2", "generic"):
    raise ValueError(f"MINIFW_ISA must be one of 'avx512', 'avx2', 'generic'; got {_env_isa!r}")


def set_num_threads(n):
    """Number of threads the native CPU kernels use (OpenMP)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    _native.set_num_threads(n)


def get_num_threads():
    return _native.get_num_threads()


def info():
    """Versions, the ISA in use, threads and compiled backends, as a dict."""
    import numpy

    backends_compiled = ["cpu"] + (["cuda"] if _native.has_cuda else [])
    return {
        "minifw": __version__,
        "python": _platform.python_version(),
        "numpy": numpy.__version__,
        "cpu": _cpu_model(),
        "isa": backends.get_isa(),
        "supported_isas": backends.supported_isas(),
        "num_threads": get_num_threads(),
        "backends": backends_compiled,
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
