"""Global switches for how primitives run, in the spirit of torch.backends: threads,
the instruction set, and whether convolutions autotune.

``minifw.backends.benchmark = True`` makes the first call of each convolution
problem time every supported algorithm and cache the fastest (like
``torch.backends.cudnn.benchmark``). Every CPU algorithm is deterministic:
its results do not depend on the thread count or on timing.
"""
from . import _native

benchmark = False


def set_num_threads(n):
    """Number of threads the native CPU kernels use (OpenMP); minifw.set_num_threads."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    _native.set_num_threads(n)


def get_num_threads():
    return _native.get_num_threads()


def get_isa():
    """The instruction set the CPU kernels use now: 'avx512', 'avx2' or 'generic'."""
    return _native.isa()


def supported_isas():
    """Every instruction set this CPU can run, lowest first."""
    return list(_native.supported_isas())


def set_isa(name):
    """Use the kernels for `name` ('avx512', 'avx2' or 'generic') from now on.

    The environment variable MINIFW_ISA sets the starting value at import.
    """
    allowed = supported_isas()
    if name not in ("avx512", "avx2", "generic"):
        raise ValueError(f"set_isa: name must be one of 'avx512', 'avx2', 'generic'; got {name!r}")
    if name not in allowed:
        raise ValueError(f"set_isa: this CPU supports {allowed}; got {name!r}")
    _native.set_isa(name)
