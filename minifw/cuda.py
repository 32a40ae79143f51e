"""minifw.cuda, the parts of torch.cuda that training scripts call.

    if minifw.cuda.is_available(): model.cuda()

Device "cuda" is CuPy's current GPU: minifw uses one GPU per process (choose it with
CUDA_VISIBLE_DEVICES or cupy.cuda.Device(n).use()). Random numbers for every device come from
minifw's CPU generators (minifw.manual_seed), so manual_seed here seeds nothing more.
"""
import sys

from . import _cuda_amp as amp, devices

# `from minifw.cuda.amp import autocast, GradScaler` (torch.cuda.amp is a module)
sys.modules[__name__ + ".amp"] = amp


def is_available():
    """Whether tensors can be placed on "cuda": the CUDA kernels compiled in, CuPy installed
    and a GPU present (minifw.devices.unavailable_reason('cuda') says which is missing)."""
    return devices.unavailable_reason("cuda") is None


def device_count():
    """1 where "cuda" can be used (CuPy's current GPU), else 0."""
    return 1 if is_available() else 0


def current_device():
    """The index of the GPU "cuda" is; RuntimeError saying why where there is none."""
    return devices.get("cuda", "current_device").index


def get_device_name(device=None):
    """The GPU's name, as torch.cuda.get_device_name."""
    _check_device(device, "get_device_name")
    return devices.gpu_info()["name"]


def get_device_capability(device=None):
    """(major, minor) compute capability of the GPU."""
    _check_device(device, "get_device_capability")
    major, minor = devices.gpu_info()["compute_capability"].split(".")
    return int(major), int(minor)


def synchronize(device=None):
    """Waits for the work queued on the GPU (CuPy's current stream)."""
    devices.synchronize(_check_device(device, "synchronize"))


def memory_allocated(device=None):
    """Bytes of GPU memory held by arrays now (CuPy's memory pool)."""
    _check_device(device, "memory_allocated")
    return devices._cupy().get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes of GPU memory CuPy's pool holds, in use or cached for reuse."""
    _check_device(device, "memory_reserved")
    return devices._cupy().get_default_memory_pool().total_bytes()


def max_memory_allocated(device=None):
    """The most bytes of GPU memory held by arrays at once since the program began (counting
    starts when a thread first places a tensor on "cuda") or since reset_peak_memory_stats()."""
    _check_device(device, "max_memory_allocated")
    counter = devices.count_cuda_memory()
    return max(counter.peak, counter.pool.used_bytes())


def max_memory_reserved(device=None):
    """The most bytes CuPy's pool held (in use or cached) since the program began or since
    reset_peak_memory_stats(): sampled whenever max_memory_allocated grows, and now."""
    _check_device(device, "max_memory_reserved")
    counter = devices.count_cuda_memory()
    return max(counter.reserved_peak, counter.pool.total_bytes())


def reset_peak_memory_stats(device=None):
    """Starts max_memory_allocated and max_memory_reserved again from what is held now."""
    _check_device(device, "reset_peak_memory_stats")
    devices.count_cuda_memory().reset_peak()


def reset_max_memory_allocated(device=None):
    """torch.cuda's older name: resets the peaks as reset_peak_memory_stats does."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """torch.cuda's older name: resets the peaks as reset_peak_memory_stats does."""
    reset_peak_memory_stats(device)


def memory_stats(device=None):
    """torch.cuda.memory_stats's counters that CuPy's pool can tell, as a dict:
    "allocated_bytes.all.{current,peak,allocated,freed}" (bytes held by arrays: now, at most,
    handed out and given back since counting began), "allocation.all.{current,allocated,freed}"
    (buffers), "active_bytes.all.{current,peak}" (the same as allocated: the pool reuses a
    buffer once its array is gone), "reserved_bytes.all.{current,peak}" (the pool's memory,
    cached blocks included) and "inactive_split_bytes.all.current" (cached, unused)."""
    _check_device(device, "memory_stats")
    counter = devices.count_cuda_memory()
    used, total = counter.pool.used_bytes(), counter.pool.total_bytes()  # never asked under the counter's lock
    with counter.lock:
        peak, reserved_peak = max(counter.peak, used), max(counter.reserved_peak, total)
        stats = {"allocated_bytes.all.current": used, "allocated_bytes.all.peak": peak,
                 "allocated_bytes.all.allocated": counter.allocated, "allocated_bytes.all.freed": counter.freed,
                 "allocation.all.current": len(counter.held), "allocation.all.allocated": counter.allocations,
                 "allocation.all.freed": counter.frees, "active_bytes.all.current": used,
                 "active_bytes.all.peak": peak, "reserved_bytes.all.current": total,
                 "reserved_bytes.all.peak": reserved_peak, "inactive_split_bytes.all.current": total - used}
    return dict(sorted(stats.items()))


def memory_summary(device=None, abbreviated=False):
    """memory_stats() as a table to print: current, peak, handed out and given back."""
    _check_device(device, "memory_summary")
    stats = memory_stats(device)

    def size(n):
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(n) < 1024 or unit == "GiB":
                return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
            n /= 1024

    rows = [("Allocated memory", "allocated_bytes", size), ("Active memory", "active_bytes", size),
            ("Reserved memory", "reserved_bytes", size), ("Allocations", "allocation", str)]
    lines = [f"minifw CUDA memory summary, device {current_device()}",
             f"{'':<18}{'current':>14}{'peak':>14}{'handed out':>14}{'given back':>14}"]
    for title, key, fmt in rows:
        cells = [stats.get(f"{key}.all.{what}") for what in ("current", "peak", "allocated", "freed")]
        lines.append(f"{title:<18}" + "".join(f"{'-' if c is None else fmt(c):>14}" for c in cells))
    return "\n".join(lines) + "\n"


def mem_get_info(device=None):
    """(free, total) bytes of the GPU's memory, as cudaMemGetInfo reports them."""
    _check_device(device, "mem_get_info")
    free, total = devices._cupy().cuda.runtime.memGetInfo()
    return int(free), int(total)


class _CudaDeviceProperties:
    """What torch.cuda.get_device_properties tells of a GPU: name, major, minor,
    total_memory, multi_processor_count, L2_cache_size, warp_size, is_integrated."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.total_memory = int(props["totalGlobalMem"])
        self.multi_processor_count = int(props["multiProcessorCount"])
        self.L2_cache_size = int(props.get("l2CacheSize", 0))
        self.warp_size = int(props.get("warpSize", 32))
        self.is_integrated = int(props.get("integrated", 0))
        self.max_threads_per_multi_processor = int(props.get("maxThreadsPerMultiProcessor", 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count}, L2_cache_size={self.L2_cache_size // 2 ** 20}MB)")


def get_device_properties(device=None):
    """The GPU's properties (name, major, minor, total_memory, multi_processor_count, ...)."""
    dev = _check_device(device, "get_device_properties")
    return _CudaDeviceProperties(devices._cupy().cuda.runtime.getDeviceProperties(dev.index))


def set_device(device):
    """Accepted for the GPU minifw runs on (CuPy's current one) and, as in PyTorch, for a
    negative index (nothing to do); another GPU is refused, saying how to choose it."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    _check_device(device, "set_device")


class device:
    """`with minifw.cuda.device(0):` for the GPU minifw runs on (CuPy's current one); another
    GPU is refused, saying how to choose it. None or a negative index change nothing."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        set_device(-1 if self.idx is None else self.idx)
        return self

    def __exit__(self, *exc):
        return False


def is_bf16_supported(including_emulation=True):
    """False: minifw has no bfloat16 (see docs/pytorch.md)."""
    return False


def init():
    """Checks that "cuda" can be used (RuntimeError saying why not), as torch.cuda.init."""
    devices.get("cuda", "init")


def is_initialized():
    """Whether a tensor has been placed on "cuda" (or "cuda" looked up) in this process."""
    return bool(devices._cuda_devices)


class Event:
    """torch.cuda.Event over a CuPy event: record() on a stream (the current one by default),
    wait(), query(), synchronize(), elapsed_time(end) in milliseconds (enable_timing=True)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        devices.get("cuda", "Event")
        self.enable_timing = bool(enable_timing)
        self._event = devices._cupy().cuda.Event(block=bool(blocking), disable_timing=not enable_timing,
                                                 interprocess=bool(interprocess))

    def record(self, stream=None):
        self._event.record(_cupy_stream(stream, "Event.record"))

    def wait(self, stream=None):
        _cupy_stream(stream, "Event.wait").wait_event(self._event)

    def query(self):
        return bool(self._event.done)

    def synchronize(self):
        self._event.synchronize()

    def elapsed_time(self, end_event):
        if not isinstance(end_event, Event):
            raise TypeError(f"Event.elapsed_time: expected end_event to be a minifw.cuda.Event, "
                            f"got {type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Event.elapsed_time: both events must be created with enable_timing=True")
        return float(devices._cupy().cuda.get_elapsed_time(self._event, end_event._event))

    @property
    def cuda_event(self):
        return self._event.ptr

    def __repr__(self):
        return f"<minifw.cuda.Event {self._event.ptr:#x}>"


class Stream:
    """torch.cuda.Stream over a CuPy stream. minifw's kernels run on CuPy's current stream, so
    `with minifw.cuda.stream(s):` puts them on `s`."""

    def __init__(self, device=None, priority=0, *, _cupy_stream=None):
        _check_device(device, "Stream")
        if _cupy_stream is None:
            _cupy_stream = devices._cupy().cuda.Stream(non_blocking=False, priority=int(priority))
        self._stream = _cupy_stream

    @property
    def cuda_stream(self):
        return self._stream.ptr

    @property
    def device(self):
        return devices.get("cuda", "Stream.device")

    def query(self):
        return bool(self._stream.done)

    def synchronize(self):
        self._stream.synchronize()

    def wait_event(self, event):
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return f"<minifw.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


def _cupy_stream(stream, fn):
    if stream is None:
        return devices._cupy().cuda.get_current_stream()
    if not isinstance(stream, Stream):
        raise TypeError(f"{fn}: expected stream to be a minifw.cuda.Stream or None, got {type(stream).__name__}")
    return stream._stream


def current_stream(device=None):
    """The stream minifw's kernels run on now (CuPy's current stream)."""
    _check_device(device, "current_stream")
    return Stream(_cupy_stream=devices._cupy().cuda.get_current_stream())


def default_stream(device=None):
    """The GPU's null stream."""
    _check_device(device, "default_stream")
    return Stream(_cupy_stream=devices._cupy().cuda.Stream.null)


class stream:
    """`with minifw.cuda.stream(s):` runs the kernels launched inside on `s` (None: no change)."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream: expected a minifw.cuda.Stream or None, got {type(stream).__name__}")
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._stream.__exit__(*exc)
        return False


def set_stream(stream):
    """Makes `stream` the current one (CuPy's Stream.use())."""
    _cupy_stream(stream, "set_stream").use()


# torch.cuda.OutOfMemoryError: minifw raises MemoryError for any allocation that fails, on the GPU
# (CuPy's OutOfMemoryError is one) or the host, most of them with a message naming the function
# and the size, so `except minifw.cuda.OutOfMemoryError` catches them all
OutOfMemoryError = MemoryError


def empty_cache():
    """Returns the memory CuPy's pool caches (not held by arrays) to the GPU."""
    if is_available():
        devices._cupy().get_default_memory_pool().free_all_blocks()


def manual_seed(seed):
    """Accepted for torch.cuda.manual_seed's callers: minifw draws every device's random
    numbers from its CPU generators, which minifw.manual_seed seeds."""
    int(seed)


manual_seed_all = manual_seed


def _check_device(device, fn):
    if device is None:
        return devices.get("cuda", fn)
    name = f"cuda:{device}" if isinstance(device, int) else device
    dev = devices.get(name, fn)
    if dev.type != "cuda":
        raise ValueError(f"{fn}: expected a cuda device, got {str(dev)!r}")
    return dev
