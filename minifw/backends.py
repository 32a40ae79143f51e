"""Global switches for how primitives run, in the spirit of torch.backends: threads,
the instruction set, whether convolutions autotune, and whether float32 products
on the CUDA devices may use TF32 tensor cores.

``minifw.backends.benchmark = True`` makes the first call of each convolution
problem time every supported algorithm and cache the fastest (like
``torch.backends.cudnn.benchmark``; ``minifw.backends.cudnn.benchmark`` is the same
switch, for scripts written for PyTorch).

``minifw.use_deterministic_algorithms(True)`` (as ``torch.use_deterministic_algorithms``)
makes every primitive bit-reproducible from run to run and across thread counts:
algorithm choices stop depending on timings (``algo="auto"`` takes the heuristic's
choice even with ``benchmark`` set), the CPU GEMM stops splitting a sum over its
threads, and the scatter-adds that CuPy would run with atomics on "cuda" run in index
order in host memory instead. (Every operation has a deterministic implementation, so
none raises, and ``warn_only=True`` changes nothing.)
``minifw.backends.cudnn.deterministic = True`` makes convolutions reproducible the same
way, without the scatter-adds. docs/determinism.md lists what is deterministic and what the
mode changes.

``minifw.backends.cuda.matmul.allow_tf32 = True`` lets float32 GEMMs on the CUDA
devices ("cuda", and "cudasim", which runs the same kernels) use TF32 tensor
cores: inputs rounded to 10 mantissa bits, products summed in float32, so
results are off by about 1e-3 relative instead of 1e-7. It covers ops.gemm and
what runs on it (Linear, the GEMMs inside the recurrent layers); Tensor.matmul
uses the array library's matmul (CuPy's own settings on "cuda").
``minifw.backends.cudnn.allow_tf32 = True`` does the same for convolutions (every
algorithm and direction). Both are False by default, so float32 results on a GPU
match the CPU's unless asked; PyTorch's ``torch.backends.cudnn.allow_tf32``
defaults to True. float64 and the CPU kernels never use TF32.
"""
import os as _os
import sys
import types
import warnings

from . import _native

benchmark = False
_deterministic = False            # use_deterministic_algorithms(mode)
_deterministic_warn_only = False  # its warn_only
_cudnn_deterministic = False      # cudnn.deterministic


def _check_bool(what, value):
    """The switches take True or False only (1, "yes" or None would be read as truth values)."""
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a bool (True or False), got {type(value).__name__} {value!r}")
    return value


class _Tf32Switch:
    """One TF32 switch: ``allow_tf32``, a bool held by the native library, which the
    CUDA launchers read at every call."""

    __slots__ = ("_kind", "_name")
    _settings = ("allow_tf32",)

    def __init__(self, kind, name):
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_name", name)

    @property
    def allow_tf32(self):
        return _native.get_tf32(self._kind)

    @allow_tf32.setter
    def allow_tf32(self, value):
        _check_bool(f"{self._name}.allow_tf32", value)
        _native.set_tf32(self._kind, value)

    def __setattr__(self, name, value):
        if name != "allow_tf32":  # a misspelt switch would otherwise do nothing, silently
            *others, last = self._settings
            raise AttributeError(f"{self._name} has no setting {name!r}; it has "
                                 f"{', '.join(others) + ' and ' if others else ''}{last}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<{self._name}: allow_tf32={self.allow_tf32}>"


class _CudaBackend:
    """``minifw.backends.cuda``: as ``torch.backends.cuda``, its ``matmul`` switch."""

    __slots__ = ()
    matmul = _Tf32Switch("matmul", "minifw.backends.cuda.matmul")

    def __setattr__(self, name, value):
        raise AttributeError(f"minifw.backends.cuda has no setting {name!r}; set "
                             f"minifw.backends.cuda.matmul.allow_tf32")

    @staticmethod
    def is_built():
        """Whether minifw's CUDA kernels were compiled into this build."""
        return bool(_native.has_cuda)

    def __repr__(self):
        return f"<minifw.backends.cuda: matmul.allow_tf32={self.matmul.allow_tf32}>"


class _CudnnBackend(_Tf32Switch):
    """``minifw.backends.cudnn``, named as ``torch.backends.cudnn`` so that scripts setting it
    run: ``allow_tf32`` (convolutions on TF32 tensor cores), ``benchmark``, the same switch
    as ``minifw.backends.benchmark`` (autotuning, on every device), and ``deterministic``
    (convolutions reproducible: see ``use_deterministic_algorithms``). minifw calls no cuDNN:
    these steer minifw's own convolution kernels."""

    __slots__ = ()
    _settings = ("allow_tf32", "benchmark", "deterministic", "enabled")

    @staticmethod
    def is_available():
        """False: minifw has no cuDNN underneath (its own kernels answer to these switches)."""
        return False

    @staticmethod
    def version():
        """None, as torch.backends.cudnn.version() where cuDNN is not available."""
        return None

    @property
    def enabled(self):
        """Accepted (a bool) for PyTorch's scripts, with no effect: minifw never calls cuDNN."""
        return _cudnn_enabled

    @enabled.setter
    def enabled(self, value):
        global _cudnn_enabled
        _cudnn_enabled = _check_bool("minifw.backends.cudnn.enabled", value)

    @property
    def deterministic(self):
        return _cudnn_deterministic

    @deterministic.setter
    def deterministic(self, value):
        global _cudnn_deterministic
        _check_bool("minifw.backends.cudnn.deterministic", value)
        _cudnn_deterministic = value
        _sync_native()

    @property
    def benchmark(self):
        return benchmark

    @benchmark.setter
    def benchmark(self, value):
        global benchmark
        _check_bool("minifw.backends.cudnn.benchmark", value)
        benchmark = value

    def __setattr__(self, name, value):
        if name in ("benchmark", "deterministic", "enabled"):
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def __repr__(self):
        return (f"<minifw.backends.cudnn: allow_tf32={self.allow_tf32}, benchmark={self.benchmark}, "
                f"deterministic={self.deterministic}>")


class _AbsentBackend(types.ModuleType):
    """A backend minifw does not have (torch.backends.mps, mkldnn): is_available() and
    is_built() say so, for scripts that choose their device by asking."""

    def is_available(self):
        return False

    def is_built(self):
        return False


class _OpenMPBackend(types.ModuleType):
    def is_available(self):
        """True: minifw's CPU kernels run their threads on OpenMP."""
        return True


_cudnn_enabled = True
cuda = _CudaBackend()
cudnn = _CudnnBackend("conv", "minifw.backends.cudnn")
mps = _AbsentBackend("minifw.backends.mps")
mkldnn = _AbsentBackend("minifw.backends.mkldnn")
openmp = _OpenMPBackend("minifw.backends.openmp")
# `import minifw.backends.cudnn as cudnn`, as scripts import torch's
for _name in ("cuda", "cudnn", "mps", "mkldnn", "openmp"):
    sys.modules[f"{__name__}.{_name}"] = globals()[_name]
del _name


def use_deterministic_algorithms(mode, *, warn_only=False):
    """As ``torch.use_deterministic_algorithms``: with mode=True every primitive gives the
    same bits from run to run and for any thread count (minifw.set_num_threads), on every
    device. Algorithm choices no longer depend on timings (``algo="auto"`` takes the
    heuristic's choice even under ``benchmark = True``), the CPU GEMM no longer splits a
    sum over threads, and scatter-adds on "cuda" run in index order in host memory
    (CuPy's kernel adds with atomics). Every operation has a deterministic implementation,
    so none raises; warn_only is accepted and remembered
    (is_deterministic_algorithms_warn_only_enabled) for PyTorch's signature.
    docs/determinism.md says what is deterministic where."""
    global _deterministic, _deterministic_warn_only
    _check_bool("use_deterministic_algorithms: mode", mode)
    _check_bool("use_deterministic_algorithms: warn_only", warn_only)
    _deterministic, _deterministic_warn_only = mode, warn_only
    _sync_native()


def are_deterministic_algorithms_enabled():
    """Whether use_deterministic_algorithms(True) is in effect."""
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """Whether use_deterministic_algorithms(True, warn_only=True) is in effect."""
    return _deterministic_warn_only


def deterministic_choice():
    """Whether algorithm choices must not depend on timings: the deterministic mode or
    cudnn.deterministic (read by minifw.ops when it picks a convolution algorithm)."""
    return _deterministic or _cudnn_deterministic


def _sync_native():
    # One native flag serves both switches: the CPU GEMM that convolutions use is the
    # one every other primitive uses.
    _native.set_deterministic(_deterministic or _cudnn_deterministic)


def max_num_threads():
    """The largest n that set_num_threads takes: max(256, 4 * the CPU count), and never
    more than OpenMP's own limit (OMP_THREAD_LIMIT)."""
    return _native.max_num_threads()


def set_num_threads(n):
    """Number of threads the native CPU kernels (OpenMP) and the "cudasim" emulator use;
    minifw.set_num_threads.

    n must be an int in [1, max_num_threads()], where the limit is max(256, 4 * the CPU
    count) and at most OpenMP's thread limit (OMP_THREAD_LIMIT): more threads than that
    gain nothing, and a count beyond what the system can start made OpenMP abort or crash
    the process. Anything else raises TypeError (not an int) or ValueError (out of range).

    The "cudasim" emulator runs a launch's blocks on min(n, its own limit) worker threads:
    each keeps a fiber stack per GPU thread of a block, and so many memory mappings that
    the system's vm.max_map_count allows about max_map_count / 4096 workers (15 by
    default; minifw._native.cudasim_max_workers()).

    The starting count comes from OMP_NUM_THREADS as OpenMP reads it (else the CPU count).
    A value above the limit is lowered to the limit at import, with a RuntimeWarning
    saying so, rather than stopping the program: the variable is often set for a whole
    machine or job, not for minifw.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    limit = max_num_threads()
    if n > limit:
        raise ValueError(f"set_num_threads: n must be in [1, {limit}] (max(256, 4 x the CPU count), "
                         f"at most OMP_THREAD_LIMIT), got {n}")
    _native.set_num_threads(n)


def get_num_threads():
    """The number of threads the native kernels use (see set_num_threads)."""
    return _native.get_num_threads()


def _warn_if_capped_at_start():
    # The native library lowered a too-large OpenMP starting count (OMP_NUM_THREADS) to
    # the limit as it loaded; say so once, here.
    requested = getattr(_native, "requested_num_threads_at_start", 0)
    limit = max_num_threads()
    if requested > limit:
        warnings.warn(f"OMP_NUM_THREADS={_os.environ.get('OMP_NUM_THREADS', '')!r} asks for {requested} "
                      f"threads, more than minifw's limit of {limit} (max(256, 4 x the CPU count), at "
                      f"most OMP_THREAD_LIMIT); minifw uses {limit}. Set OMP_NUM_THREADS or call "
                      f"minifw.set_num_threads with a count in [1, {limit}].", RuntimeWarning, stacklevel=2)


_warn_if_capped_at_start()


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
