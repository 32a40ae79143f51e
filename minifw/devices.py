"""The device boundary: everything that differs between devices lives here.

    dev = minifw.device("cpu")               # a checked device, as torch.device
    xp = array_module(dev)                   # numpy on "cpu"
    y = empty((4, 3), np.float32, dev)       # allocation on that device
    k = kernel("pool", "forward", np.float32, dev)   # the native entry point
    k = kernel_for("pool", "forward", x)             # the same, for x's dtype and device
    buf = workspace(dev).get(nbytes)         # scratch space, reused across calls

Devices:

- "cpu": NumPy arrays and the native CPU kernels.
- "cudasim": minifw's CUDA kernels (native/cuda) compiled for the CPU emulator
  (native/cuda/cudasim), on arrays in host memory of type CudaSimArray, a NumPy
  array subclass that says where it lives: NumPy does the glue arithmetic and
  its results stay CudaSimArrays, while every primitive with a CUDA kernel runs
  that kernel's launcher and kernel code. A family without one yet raises a
  TypeError naming it. Slow by design: it is for testing and stepping through
  the kernels on small shapes.
- "cuda": CuPy arrays (cupy.ndarray) on an NVIDIA GPU and minifw's own CUDA
  kernels compiled by nvcc, launched on CuPy's current stream; CuPy does the glue
  arithmetic. minifw runs on one GPU per process, CuPy's current device
  ("cuda" is "cuda:<its index>"); pick another with CUDA_VISIBLE_DEVICES or
  cupy.cuda.Device(n).use() before placing tensors.

The native entry points of both CUDA devices read an array's data pointer, shape
and strides from its CUDA array interface (CuPy's __cuda_array_interface__; a
CudaSimArray's __cudasim_array_interface__), so the emulator runs the binding
code a GPU runs, instantiated for its own device.

The native kernels come from one registry keyed (family, direction, dtype,
device). Each binding file lists its entry points there (def_kernel in
native/registry.h), so a new primitive family adds keys, not code here.

The workspace is one allocator per device that every primitive asks for
scratch memory (convolution's lowered matrix now): a buffer per thread that
grows to the largest request and is kept, as frameworks over cuDNN keep
theirs, with a limit per request, a bound on what it keeps (max_cached_bytes),
statistics and clear().

Host memory: on glibc, importing minifw fixes malloc's mmap and trim thresholds so
that a training step's freed arrays are reused by the next step instead of mapped
anew (host_malloc_settings(); MINIFW_MALLOC_TUNING=0 keeps glibc's defaults).
Arrays of 32 MiB and more, which malloc maps anew whatever its settings, come from
the blocks of freed arrays of their size (host_arrays, minifw.caches' "host.arrays").
"""
import math
import operator
import sys
import threading
import time
import weakref

import numpy as np

from . import _native, backends, caches

TYPES = ("cpu", "cudasim", "cuda")


class device:
    """A device: `type` ('cpu', 'cudasim' or 'cuda') and an optional `index`, as torch.device.

    minifw.device('cpu'), minifw.device('cuda:0') and minifw.device('cuda', 0) all work; a
    device compares equal to its name (device('cpu') == 'cpu'). Making one does not check
    that it can be used; placing a tensor on it does.
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string such as 'cpu' or a minifw.device, got "
                            f"{type.__class__.__name__} {type!r}")
        name, sep, number = type.partition(":")
        if sep:
            if index is not None:
                raise ValueError(f"device: give the index in the string or as index, not both; "
                                 f"got {type!r} and index={index!r}")
            if not number.isdigit():
                raise ValueError(f"device: the index in {type!r} must be a non-negative integer")
            index = int(number)
        if name not in TYPES:
            raise ValueError(f"device: type must be one of {', '.join(map(repr, TYPES))}; got {type!r}")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ValueError(f"device: index must be a non-negative int, got {index!r}")
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("minifw.device is immutable")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (TypeError, ValueError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (self.type, self.index)


CPU = device("cpu")
CUDASIM = device("cudasim")


def _cupy():
    """The CuPy module; ImportError when it is not installed."""
    import cupy
    return cupy


def unavailable_reason(type):
    """Why a device type cannot be used in this build and on this machine, or None if it can.
    For "cuda" the reasons are checked in order: the build, CuPy, a GPU."""
    if type == "cpu":
        return None
    if type == "cudasim":
        return None  # the emulator is built into every minifw
    if not _native.has_cuda:
        return ("this build of minifw has no CUDA kernels (it was built without a CUDA compiler, "
                "or with MINIFW_CUDA=OFF); use device 'cpu', or 'cudasim' to run the kernels on the "
                "CPU emulator")
    try:
        cupy = _cupy()
    except ImportError:
        return ("CuPy is not installed (pip install \"minifw[cuda12]\" or \"minifw[cuda13]\", to match "
                "the CUDA driver); use device 'cpu'")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return f"no GPU can be used ({e}); use device 'cpu'"
    if count == 0:
        return "no GPU was found; use device 'cpu'"
    return None


def _cuda_version(v):
    """CUDA's version number (12080) as text ("12.8")."""
    return f"{v // 1000}.{v % 1000 // 10}"


def gpu_info():
    """What "cuda" runs on, as a dict: the GPU's name, compute capability and memory, the
    CuPy, CUDA runtime and driver versions; None where "cuda" is not available."""
    if unavailable_reason("cuda") is not None:
        return None
    cupy = _cupy()
    runtime = cupy.cuda.runtime
    index = runtime.getDevice()
    props = runtime.getDeviceProperties(index)
    name = props["name"]
    return {"index": index, "name": name.decode() if isinstance(name, bytes) else str(name),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "memory_bytes": int(props["totalGlobalMem"]), "cupy": cupy.__version__,
            "cuda_runtime": _cuda_version(runtime.runtimeGetVersion()),
            "cuda_driver": _cuda_version(runtime.driverGetVersion())}


def current_cuda_index():
    """The index of CuPy's current GPU, the one minifw's "cuda" device is."""
    return _cupy().cuda.runtime.getDevice()


_cuda_devices = {}


def _cuda(index):
    d = _cuda_devices.get(index)
    if d is None:
        d = _cuda_devices.setdefault(index, device("cuda", index))
    return d


def get(dev, fn="tensor"):
    """`dev` (None, a name or a device) as an available device; None means 'cpu'.
    An unavailable device raises RuntimeError saying why. "cuda" (no index) is
    CuPy's current GPU, "cuda:<index>"."""
    if dev is None:
        return CPU
    try:
        d = dev if isinstance(dev, device) else device(dev)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{fn}: {e}") from None
    if d.type == "cpu":
        return CPU
    reason = unavailable_reason(d.type)
    if reason is not None:
        raise RuntimeError(f"{fn}: device {str(d)!r} is not available: {reason}")
    if d.type == "cudasim":
        if d.index not in (None, 0):
            raise RuntimeError(f"{fn}: device {str(d)!r} is not available: the emulator is one device, "
                               f"'cudasim' (or 'cudasim:0')")
        return CUDASIM
    current = current_cuda_index()
    if getattr(_counting, "cupy", None) is not sys.modules.get("cupy"):
        count_cuda_memory()
    if d.index not in (None, current):
        raise RuntimeError(f"{fn}: device {str(d)!r} is not available: minifw runs on CuPy's current "
                           f"GPU, 'cuda:{current}'; choose the GPU before placing tensors "
                           f"(CUDA_VISIBLE_DEVICES, or cupy.cuda.Device({d.index}).use())")
    return _cuda(current)


class CudaSimArray(np.ndarray):
    """An array of device "cudasim": host memory standing for a GPU's.

    A plain NumPy subclass; NumPy keeps the type through arithmetic, slicing and
    empty_like, so results stay on the device. Make one with devices.empty /
    zeros / to_device (or Tensor.to("cudasim")), not directly."""

    def __repr__(self):
        return super().__repr__().replace("CudaSimArray(", "cudasim_array(", 1)

    @property
    def __cudasim_array_interface__(self):
        """What the native CUDA entry points read of a "cudasim" array: the CUDA array
        interface (data pointer, shape, strides, type), under a name of the emulator's
        own so that no CUDA library takes this host memory for a GPU's. NumPy's array
        interface has the same fields, but an empty array has no data pointer (0), as
        CuPy's empty arrays have none."""
        interface = self.__array_interface__
        if self.size == 0:
            interface = {**interface, "data": (0, interface["data"][1])}
        return interface


def _cupy_ndarray():
    """cupy.ndarray if CuPy has been imported (no array can be one otherwise), else None."""
    cupy = sys.modules.get("cupy")
    return None if cupy is None else cupy.ndarray


def of(array):
    """The device an array (or a NumPy scalar) lives on."""
    if type(array) is np.ndarray:
        return CPU
    if isinstance(array, CudaSimArray):
        return CUDASIM
    if isinstance(array, (np.ndarray, np.generic)):
        return CPU
    cupy_ndarray = _cupy_ndarray()
    if cupy_ndarray is not None and isinstance(array, cupy_ndarray):
        return _cuda(array.device.id)
    raise TypeError(f"expected an array of a minifw device (numpy.ndarray, or cupy.ndarray on 'cuda'), "
                    f"got {type(array).__name__}")


def is_array(a):
    """True for an array of any available device."""
    if isinstance(a, np.ndarray):
        return True
    cupy_ndarray = _cupy_ndarray()
    return cupy_ndarray is not None and isinstance(a, cupy_ndarray)


def is_writeable(a):
    """Whether a kernel may write `a` (CuPy arrays have no read-only flag: always)."""
    return a.flags.writeable if isinstance(a, np.ndarray) else True


def array_module(dev):
    """The array library of a device: numpy for 'cpu' and 'cudasim', cupy for 'cuda'."""
    return _cupy() if dev.type == "cuda" else np


def _placed(array, dev):
    return array.view(CudaSimArray) if dev.type == "cudasim" else array


def empty(shape, dtype, dev=CPU, *, recycle=True):
    """An uninitialised array on `dev`. On the host, one of at least 32 MiB comes from the
    host array cache (HostArrays, below) unless recycle=False (a cache's own buffers)."""
    if dev.type == "cuda":
        return _cupy().empty(shape, dtype=dtype)
    array = host_arrays.empty(shape, dtype) if recycle else None
    return _placed(np.empty(shape, dtype=dtype) if array is None else array, dev)


def zeros(shape, dtype, dev=CPU):
    if dev.type == "cuda":
        return _cupy().zeros(shape, dtype=dtype)
    return _placed(np.zeros(shape, dtype=dtype), dev)


def asarray(data, dtype=None, dev=CPU):
    """`data` (an array of any device, a list, a number) as an array on `dev`, copied only
    where it must be (moved to another device, or converted to `dtype`)."""
    if is_array(data):
        data = to_device(data, dev)
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    if dev.type == "cuda":
        return _cupy().asarray(np.asarray(data, dtype=dtype))
    return _placed(np.asarray(data, dtype=dtype), dev)


def to_device(array, dev):
    """`array` on device `dev`: the same array when it is there already, else a copy
    (memory of its own, as a transfer to or from a GPU makes)."""
    src = of(array)
    if src == dev or src.type == dev.type == "cuda":  # one GPU: "cuda" and "cuda:<index>" are it
        return array
    if src.type == "cuda":
        array = array.get()  # to the host
        return array if dev.type == "cpu" else _placed(array, dev)
    if dev.type == "cuda":
        return _cupy().array(np.asarray(array).view(np.ndarray), copy=True)
    return _placed(np.array(array, subok=False, copy=True), dev)


def assign(dst, index, value):
    """dst[index] = value, where `value` (an array, or a number) may live on another device:
    it is copied to dst's first, as PyTorch's copy_ copies across devices."""
    if is_array(value) and of(value) != of(dst):
        value = to_device(value, of(dst))
    dst[index] = value


def broadcast_to(a, shape):
    """numpy.broadcast_to, a view on a's device: a "cudasim" array stays one (NumPy's
    subok), a CuPy array goes to cupy.broadcast_to (which has no subok)."""
    if isinstance(a, np.ndarray):
        return np.broadcast_to(a, shape, subok=True)
    return np.broadcast_to(a, shape)


# The ufuncs and dtypes for which CuPy has a scatter kernel (atomics: no int64 addition)
_CUPY_AT = {"add": frozenset({"float16", "float32", "float64", "int32", "uint32", "uint64"}),
            "maximum": frozenset({"float32", "float64", "int32", "uint32", "uint64"}),
            "minimum": frozenset({"float32", "float64", "int32", "uint32", "uint64"})}


def index_on(index, dev):
    """`index` (an index as NumPy's indexing takes it) with its arrays on `dev`: a scatter
    on a GPU takes indices in its memory, NumPy's on the host."""
    def move(i):
        return to_device(i, dev) if is_array(i) else i
    return tuple(map(move, index)) if isinstance(index, tuple) else move(index)


def ufunc_at(ufunc, a, index, values):
    """ufunc.at(a, index, values) on a's device: every element of `a` that `index` picks
    (an index as NumPy's indexing takes it, its arrays on a's device) combined in place
    with its value, an element picked k times k times. On "cuda", CuPy's scatter kernel
    where CuPy has one for the ufunc and dtype (add, maximum, minimum), else through host
    memory. CuPy's kernel adds with atomics, so float additions land in an order that
    varies from run to run: under minifw.use_deterministic_algorithms(True) those go
    through host memory too, where NumPy adds in index order (the CPU's bits)."""
    if isinstance(a, np.ndarray):
        ufunc.at(a, index, values)
        return
    order_varies = ufunc is np.add and a.dtype.kind == "f"
    if a.dtype.name in _CUPY_AT.get(ufunc.__name__, ()) and not (
            order_varies and backends.are_deterministic_algorithms_enabled()):
        getattr(_cupy(), ufunc.__name__).at(a, index, values)
        return
    host = to_device(a, CPU)
    ufunc.at(host, index_on(index, CPU), to_device(values, CPU) if is_array(values) else values)
    a[...] = to_device(host, of(a))


def time_ms(run, dev):
    """Milliseconds that run() takes on `dev`: on "cuda", CUDA events recorded on CuPy's
    current stream around the work it queues (as cudnnFind times algorithms); elsewhere,
    where every call has finished when it returns, the host's clock."""
    if dev.type == "cuda":
        cuda = _cupy().cuda
        start, end = cuda.Event(), cuda.Event()
        start.record()
        run()
        end.record()
        end.synchronize()
        return cuda.get_elapsed_time(start, end)
    t0 = time.perf_counter()
    run()
    return 1e3 * (time.perf_counter() - t0)


class peak_memory:
    """`with devices.peak_memory(dev) as meter:` ... `meter.bytes`: the most bytes of array
    memory allocated inside the block and held at once. On "cpu" and "cudasim", what
    tracemalloc traced (NumPy reports its arrays to it, beside the far smaller Python
    objects); on "cuda", the GPU memory CuPy's pool handed to arrays (rounded as the pool
    rounds), counted by a memory hook on this thread."""

    def __init__(self, dev):
        self.device, self.bytes = dev, 0

    def __enter__(self):
        if self.device.type == "cuda":
            self._hook = _pool_peak_hook()
            self._hook.__enter__()
            return self
        import tracemalloc
        self._was_tracing = tracemalloc.is_tracing()
        if self._was_tracing:  # someone else's tracing goes on: measure from its current count
            self._start = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
        else:
            self._start = 0
            tracemalloc.start()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self._hook.__exit__(*exc)
            self.bytes = self._hook.peak
            return False
        import tracemalloc
        self.bytes = max(tracemalloc.get_traced_memory()[1] - self._start, 0)
        if not self._was_tracing:
            tracemalloc.stop()
        return False


def _pool_peak_hook():
    """A CuPy memory hook that keeps the most bytes held at once by buffers the pool handed
    out while it was registered (buffers from before are not counted when they are freed)."""
    class PoolPeak(_cupy().cuda.MemoryHook):
        name = "minifw_peak_memory"

        def __init__(self):
            self.held, self.current, self.peak = {}, 0, 0

        def malloc_postprocess(self, **kwargs):
            self.held[kwargs["mem_ptr"]] = kwargs["mem_size"]
            self.current += kwargs["mem_size"]
            self.peak = max(self.peak, self.current)

        def free_postprocess(self, **kwargs):
            self.current -= self.held.pop(kwargs["mem_ptr"], 0)

    return PoolPeak()


_counting = threading.local()  # .cupy: the CuPy module whose hooks count this thread's arrays
_counter_lock = threading.Lock()
_memory_counter = None


def count_cuda_memory():
    """The process's counter of "cuda" array memory (what minifw.cuda.max_memory_allocated and
    memory_stats read), registered on this thread as a CuPy memory hook, once per thread: CuPy
    calls a hook for the arrays of the threads it is registered on. minifw registers it on
    each thread that places tensors on "cuda" (devices.get), so counting starts there."""
    global _memory_counter
    cupy = _cupy()
    with _counter_lock:
        if _memory_counter is None or _memory_counter.cupy is not cupy:
            _memory_counter = _memory_counter_hook(cupy)
        counter = _memory_counter
    if getattr(_counting, "cupy", None) is not cupy:
        try:
            counter.__enter__()
        except RuntimeError:  # a hook of its name is registered on this thread already
            pass
        _counting.cupy = cupy
    return counter


def _memory_counter_hook(cupy):
    """A CuPy memory hook counting the bytes the pool hands to arrays: `current` (held now),
    `peak` (the most held at once since the last reset), the bytes and buffers handed out and
    given back, and `reserved_peak` (the most the pool held, sampled whenever `peak` grows).
    Buffers handed out before it counted make up `untracked`, which their release lowers."""
    pool = cupy.get_default_memory_pool()

    class MemoryCounter(cupy.cuda.MemoryHook):
        name = "minifw_memory_stats"

        def __init__(self):
            self.cupy, self.pool, self.lock, self.held = cupy, pool, threading.Lock(), {}
            self.current = self.allocations = self.frees = self.allocated = self.freed = 0
            self.untracked = pool.used_bytes()
            self.peak, self.reserved_peak = self.untracked, pool.total_bytes()

        def malloc_postprocess(self, **kwargs):
            size = kwargs["mem_size"]
            with self.lock:
                self.held[kwargs["mem_ptr"]] = size
                self.current += size
                self.allocations += 1
                self.allocated += size
                grew = self.untracked + self.current > self.peak
                if grew:
                    self.peak = self.untracked + self.current
            if grew:  # the pool is asked outside this lock, which its own locks never wait for
                reserved = self.pool.total_bytes()
                with self.lock:
                    self.reserved_peak = max(self.reserved_peak, reserved)

        def free_postprocess(self, **kwargs):
            with self.lock:
                size = self.held.pop(kwargs["mem_ptr"], None)
                if size is None:  # handed out before counting began
                    self.untracked = max(self.untracked - kwargs["mem_size"], 0)
                    return
                self.current -= size
                self.frees += 1
                self.freed += size

        def reset_peak(self):
            used, total = self.pool.used_bytes(), self.pool.total_bytes()  # the pool's locks, then this one
            with self.lock:
                self.peak = max(used, self.untracked + self.current)
                self.reserved_peak = total

    return MemoryCounter()


def synchronize(dev):
    """Waits for the work queued on a device ('cuda': CuPy's current stream); a no-op elsewhere."""
    if dev.type == "cuda":
        _cupy().cuda.get_current_stream().synchronize()


# ---- native kernels -------------------------------------------------------------------

_kernels = {(family, direction, np.dtype(dtype), dev_type): fn
            for (family, direction, dtype, dev_type), fn in _native.kernels.items()}


def kernel(family, direction, dtype, dev=CPU):
    """The native entry point of primitive `family` ('conv', 'pool', ...) in `direction`
    ('forward', 'backward', ...) for `dtype` (anything np.dtype takes: np.float32, 'float32',
    np.dtype('float32')) on `dev` (a device or its name)."""
    try:
        return _kernels[family, direction, dtype, dev.type]  # the common case: np.dtype, device
    except (KeyError, TypeError, AttributeError):
        pass
    try:
        if dtype is None:  # np.dtype(None) would be float64
            raise TypeError
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"kernel: dtype must be a NumPy dtype such as np.float32 or 'float32', got "
                        f"{dtype!r}") from None
    if not isinstance(dev, device):
        dev = device(dev)
    found = _kernels.get((family, direction, dtype, dev.type))
    if found is not None:
        return found
    known = sorted({k[:2] for k in _kernels})
    if (family, direction) not in known:
        raise KeyError(f"no native kernel {family!r} {direction!r}; known: "
                       f"{', '.join(f'{f}/{d}' if d else f for f, d in known)}") from None
    raise TypeError(f"native kernel {family!r} {direction!r} has no {dtype.name} variant "
                    f"on device {str(dev)!r}") from None


def kernel_for(family, direction, array):
    """The native entry point of `family` in `direction` for the dtype and device of
    `array`: what a primitive calls on its input (kernel(...) with both looked up)."""
    if type(array) is np.ndarray:  # the common case, on the path of every primitive call
        k = _kernels.get((family, direction, array.dtype, "cpu"))
        if k is not None:
            return k
    return kernel(family, direction, array.dtype, of(array))


def kernels():
    """Every registered kernel key: (family, direction, dtype name, device type)."""
    return sorted((f, d, t.name, dv) for f, d, t, dv in _kernels)


# ---- workspace ------------------------------------------------------------------------


class Workspace:
    """Scratch memory of one device for the primitives (e.g. convolution's lowered matrix).

    get(nbytes) returns a byte buffer of at least nbytes, one per thread, grown to the
    largest request and then kept, so repeated calls pay neither allocation nor first
    touch. Two limits, both settable:

    - `limit` (bytes, None for no limit, the default) bounds one request: auto-chosen
      convolution algorithms keep under it, and an explicit request over it raises
      MemoryError.
    - `max_cached_bytes` (bytes, 1 GiB by default: AlexNet's largest lowered matrix at
      batch 64 is under half of it) bounds what the buffers of all threads keep between
      calls: a request that would take them over it gets a buffer of its own, freed when
      the primitive lets go of it. A thread's buffer goes when the thread has ended.

    `current_bytes` is what the buffers hold now, `peak_bytes` the most scratch memory out
    at once (kept buffers and one-off ones) since the last clear() or reset_peak().
    """

    DEFAULT_MAX_CACHED_BYTES = 1 << 30

    def __init__(self, dev):
        self.device = dev
        self._limit = None
        self._max_cached = self.DEFAULT_MAX_CACHED_BYTES
        self._buffers = {}  # thread ident -> buffer
        self._lock = threading.Lock()
        self._peak = 0
        self._no_bytes = None  # what a request of 0 bytes gets: an empty array on the device

    @property
    def limit(self):
        return self._limit

    @limit.setter
    def limit(self, nbytes):
        if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, int)
                                   or nbytes < 0):
            raise ValueError(f"Workspace.limit: expected None or an int >= 0 (bytes), got {nbytes!r}")
        self._limit = nbytes

    @property
    def max_cached_bytes(self):
        return self._max_cached

    @max_cached_bytes.setter
    def max_cached_bytes(self, nbytes):
        nbytes = caches.check_size_limit("Workspace", "max_cached_bytes", nbytes)
        with self._lock:
            self._max_cached = nbytes
            while self._buffers and self.current_bytes > nbytes:  # largest first
                del self._buffers[max(self._buffers, key=lambda i: self._buffers[i].size)]

    def fits(self, nbytes):
        return self._limit is None or nbytes <= self._limit

    def get(self, nbytes):
        if not self.fits(nbytes):
            raise MemoryError(f"workspace: {nbytes:,} bytes requested on {self.device}, over the "
                              f"limit of {self._limit:,} bytes (minifw.devices.workspace"
                              f"({str(self.device)!r}).limit)")
        if nbytes == 0:  # nothing to hold: not counted
            if self._no_bytes is None:
                self._no_bytes = empty(0, np.uint8, self.device)
            return self._no_bytes
        ident = threading.get_ident()
        buf = self._buffers.get(ident)
        if buf is None or buf.size < nbytes:
            with self._lock:  # release the smaller buffer (and those of ended threads) first
                self._buffers.pop(ident, None)
                alive = {t.ident for t in threading.enumerate()}
                for gone in [i for i in self._buffers if i not in alive]:
                    del self._buffers[gone]
            buf = None
            buf = empty(nbytes, np.uint8, self.device, recycle=False)  # kept here, not there
            with self._lock:
                held = self.current_bytes
                if held + nbytes <= self._max_cached:
                    self._buffers[ident] = buf
                    held += nbytes
                    self._peak = max(self._peak, held)
                else:  # a buffer of its own, not kept
                    self._peak = max(self._peak, held + nbytes)
        return buf

    @property
    def current_bytes(self):
        return sum(b.size for b in list(self._buffers.values()))

    @property
    def peak_bytes(self):
        return self._peak

    def reset_peak(self):
        with self._lock:
            self._peak = self.current_bytes

    def clear(self):
        """Free every thread's buffer (one in use by a running primitive lives until it returns)."""
        with self._lock:
            self._buffers.clear()
            self._peak = 0

    def stats(self):
        return {"current_bytes": self.current_bytes, "peak_bytes": self.peak_bytes,
                "limit_bytes": self._limit, "max_cached_bytes": self._max_cached}

    def __repr__(self):
        return (f"Workspace(device='{self.device}', current_bytes={self.current_bytes}, "
                f"peak_bytes={self.peak_bytes}, limit={self._limit}, "
                f"max_cached_bytes={self._max_cached})")


_workspaces = {}


def workspace(dev=CPU):
    """The workspace allocator of a device."""
    dev = get(dev, "workspace")
    ws = _workspaces.get(dev)
    if ws is None:
        ws = _workspaces.setdefault(dev, Workspace(dev))
        caches.register(f"workspace:{dev}", ws)
    return ws


# ---- host memory: glibc malloc's thresholds --------------------------------------------
#
# A training step frees its activations and gradients and allocates them again the next
# step. glibc's malloc serves an allocation of at least its mmap threshold with a fresh
# mapping, and gives the heap's free top back to the kernel once it passes the trim
# threshold; both follow the largest block freed so far (up to 32 MiB). A step whose
# arrays are a few MiB then gets new pages every step, each zeroed by the kernel on first
# touch: LeNet's batch-64 step took 1,948 page faults and 8.9 ms, and 0 faults and 6.9 ms
# with the thresholds below (the same steps; a bigger array freed earlier, by another
# model or engine, could move glibc's own thresholds there too). So on glibc, importing
# minifw fixes them: blocks up to 32 MiB (glibc's own ceiling) come from the heap, and up
# to 512 MiB of freed heap stays mapped (with 128 MiB, the caffe engine's AlexNet b16
# iteration, which frees over a GiB, still took 10,500 page faults; with 512 MiB, 1,400).
# The whole process shares the setting (PyTorch's allocations too); MINIFW_MALLOC_TUNING=0
# in the environment keeps glibc's defaults.

MALLOC_MMAP_THRESHOLD = 32 << 20
MALLOC_TRIM_THRESHOLD = 512 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def _tune_malloc():
    """Set glibc's thresholds (see above), unless MINIFW_MALLOC_TUNING=0: the settings made,
    as a dict, or None (not glibc, or turned off)."""
    import os
    import platform

    setting = os.environ.get("MINIFW_MALLOC_TUNING", "1")
    if setting not in ("0", "1"):
        raise ValueError(f"MINIFW_MALLOC_TUNING must be '0' or '1', got {setting!r}")
    if setting == "0" or not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    done = {}
    for name, param, value in (("mmap_threshold", _M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD),
                               ("trim_threshold", _M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD)):
        if mallopt(param, value) == 1:
            done[name] = value
    return done or None


def host_malloc_settings():
    """The glibc malloc thresholds minifw set at import ({"mmap_threshold": bytes,
    "trim_threshold": bytes}), or None where it set none (another C library, or
    MINIFW_MALLOC_TUNING=0)."""
    return None if _malloc_settings is None else dict(_malloc_settings)


_malloc_settings = _tune_malloc()


# ---- host memory: arrays too large for malloc's heap -----------------------------------
#
# From 32 MiB, the most glibc's mmap threshold can be set to, every allocation is a fresh
# mapping whatever the settings above, and every page of it is zeroed by the kernel when
# first written. AlexNet's weight gradients are such arrays (fc6's is 151 MB) and come
# anew every step (zero_grad drops them): 246 MB of pages faulted and zeroed per batch-16
# step, 38 ms of system time, and fc6's weight gradient took 32.5 ms to compute into a new
# array against 13.1 ms into one already touched. So empty() hands out arrays of at least
# that size from blocks that a freed array of the same size (rounded up to 2 MiB) gave
# back, as PyTorch's CUDA allocator keeps GPU memory; CuPy pools its own.


_MAX_BLOCK = np.iinfo(np.intp).max // 2  # larger: left to NumPy, to refuse
_ALIGN = 64


class _Block:
    """The owner of a recycled array's memory: the array (and every view of it) refers to
    it through __array_interface__, so it lives exactly as long as the last of them, and
    its end gives the block back to the cache. The array starts on a 64-byte boundary
    (where the GEMM can write whole cache lines with non-temporal stores)."""

    __slots__ = ("__array_interface__", "block", "__weakref__")

    def __init__(self, block, shape, dtype):
        self.block = block
        address = block.__array_interface__["data"][0]
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "version": 3,
                                    "data": (address + (-address) % _ALIGN, False)}


def owns_memory(array):
    """Whether `array` is the owner of its memory: NumPy's own (flags.owndata), or the array
    over a block of the host array cache."""
    return bool(array.flags.owndata) or isinstance(array.base, _Block)


class HostArrays:
    """Freed host arrays of at least `min_bytes` (32 MiB) kept for the next empty() of their
    size, up to `max_cached_bytes` (1 GiB) in all: blocks sized in 2 MiB steps, the least
    recently freed given up first; a new block that cannot be allocated gives up every kept
    one and is tried again. Kept blocks are memory held: devices.peak_memory counts them.
    Such arrays are not NumPy's owners (flags.owndata is False, owns_memory() tells; NumPy
    will not resize them, nor make them writeable again once set read-only). Registered
    as minifw.caches' "host.arrays"; arrays of "cpu" and "cudasim" only."""

    DEFAULT_MIN_BYTES = MALLOC_MMAP_THRESHOLD
    DEFAULT_MAX_CACHED_BYTES = 1 << 30
    STEP = 2 << 20

    def __init__(self):
        self._free = {}  # block size -> blocks, least recently freed first
        self._order = []  # (block size) per freed block, least recently freed first
        self._lock = threading.RLock()  # a block can come back from a collection inside take()
        self._min = self.DEFAULT_MIN_BYTES
        self._max_cached = self.DEFAULT_MAX_CACHED_BYTES
        self.hits = self.misses = 0

    @property
    def min_bytes(self):
        return self._min

    @min_bytes.setter
    def min_bytes(self, nbytes):
        self._min = caches.check_size_limit("HostArrays", "min_bytes", nbytes)

    @property
    def max_cached_bytes(self):
        return self._max_cached

    @max_cached_bytes.setter
    def max_cached_bytes(self, nbytes):
        nbytes = caches.check_size_limit("HostArrays", "max_cached_bytes", nbytes)
        with self._lock:
            self._max_cached = nbytes
            self._trim(0)

    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array, recycled where it is large enough; else None
        (the caller allocates it as usual)."""
        sequence = isinstance(shape, (tuple, list))
        try:
            count = math.prod(shape) if sequence else operator.index(shape)
            if count * 64 < self._min:  # small in any numeric dtype: the common case, decided at once
                return None
            shape = tuple(map(operator.index, shape)) if sequence else (count,)
        except TypeError:
            return None  # NumPy's own error
        dtype = np.dtype(dtype)
        nbytes = dtype.itemsize * count
        if nbytes < max(self._min, 1) or nbytes > _MAX_BLOCK or min(shape, default=0) < 0 \
                or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
            return None  # NumPy's own (and its error for an impossible size)
        size = -(-nbytes // self.STEP) * self.STEP
        with self._lock:
            blocks = self._free.get(size)
            block = blocks.pop() if blocks else None
            if block is not None:  # the most recently freed of its size: its last entry goes
                del self._order[len(self._order) - 1 - self._order[::-1].index(size)]
                if not blocks:
                    del self._free[size]
                self.hits += 1
            else:
                self.misses += 1
        if block is None:
            try:
                block = np.empty(size + _ALIGN, np.uint8)
            except MemoryError:  # the kept blocks (of other sizes) go first, then once more
                self.clear()
                block = np.empty(size + _ALIGN, np.uint8)
        owner = _Block(block, shape, dtype)
        done = weakref.finalize(owner, self._give_back, block)
        done.atexit = False
        return np.asarray(owner)

    def _give_back(self, block):
        size = block.size - _ALIGN
        with self._lock:
            if size > self._max_cached:
                return
            self._trim(size)
            self._free.setdefault(size, []).append(block)
            self._order.append(size)

    def _trim(self, room):
        """Give up the least recently freed blocks until `room` more bytes fit."""
        while self._order and self.current_bytes + room > self._max_cached:
            size = self._order.pop(0)
            blocks = self._free[size]
            blocks.pop(0)
            if not blocks:
                del self._free[size]

    @property
    def current_bytes(self):
        with self._lock:
            return sum(size * len(blocks) for size, blocks in self._free.items())

    def stats(self):
        with self._lock:
            return {"entries": len(self._order), "current_bytes": self.current_bytes,
                    "max_cached_bytes": self._max_cached, "min_bytes": self._min,
                    "hits": self.hits, "misses": self.misses}

    def clear(self):
        with self._lock:
            self._free.clear()
            self._order.clear()


host_arrays = caches.register("host.arrays", HostArrays())
