"""A CuPy stand-in for testing minifw's "cuda" code paths on machines without a GPU.

minifw's "cuda" device keeps its arrays as CuPy arrays: CuPy does the glue arithmetic between
minifw's own CUDA kernels, which read each array's device pointer from its
``__cuda_array_interface__``. CuPy cannot run without a GPU, so the test suite installs this
module as ``cupy`` (``fakecupy.install(monkeypatch)``). Its arrays keep their data in host
memory (a NumPy array inside), so the pointer their CUDA array interface gives is a host
address, which minifw's CUDA kernels built for the CPU emulator ("cudasim") can read and write.

The point is fidelity: what CuPy refuses, this module refuses the same way, so that code which
would break on a GPU breaks in the tests. Modelled on CuPy 14 (cupy/_core/core.pyx,
_kernel.pyx, _scalar.pyx, _dtype.pyx, _routines_indexing.pyx, flags.pyx; cupy/cuda/stream.pyx,
device.pyx, memory.pyx; cupy_backends/cuda/api/runtime.pyx and stream.pyx), with its default
configuration (no CUPY_CUDA_PER_THREAD_DEFAULT_STREAM, no CUPY_EXPERIMENTAL_SLICE_COPY, no UMP):

- ``ndarray`` is not a ``numpy.ndarray``; ``np.asarray(a)`` raises CuPy's TypeError, and so does
  NumPy code that reaches ``__array__`` (``np.array([a, b])``, assigning into a NumPy array).
- Ufuncs and operators take device arrays, Python scalars and NumPy scalars; a
  ``numpy.ndarray`` operand (0-d included) raises ``TypeError: Unsupported type <class
  'numpy.ndarray'>``, except in comparisons, where a 0-d NumPy array counts as its scalar;
  lists are refused too. NumPy ufuncs and functions called on device arrays dispatch here
  (NEP 13/18) and return device arrays; NumPy functions CuPy lacks raise TypeError.
- Reductions and integer indexing return 0-d device arrays, never NumPy scalars; integer-array
  indices wrap around instead of raising; ``a[basic] = host_array`` with a non-0-d NumPy array
  raises ValueError (CuPy fills), while advanced-index assignment and ``put`` copy host data in.
- Only the dtypes ``?bhilqBHILQefdFD`` exist (ValueError "Unsupported dtype ..." otherwise);
  ``flags`` has only c_contiguous, f_contiguous and owndata; there is no ``__index__``,
  ``ctypes``, ``__array_interface__`` or buffer protocol; ``ascontiguousarray`` takes device
  arrays only; ``array(x, copy=False)`` raises when a device array would need a copy (host data
  is copied in regardless); ``int()``/``float()``/``bool()`` go through ``get()``, so they
  take what the installed NumPy takes (0-d only, with NumPy 2.4).
- ``__cuda_array_interface__`` is CuPy's version 3 dictionary; its ``stream`` is the current
  stream's handle, or 1 (cudaStreamLegacy) on the null stream.
- The memory pool counts live buffers rounded up to 512 bytes, keeps freed blocks for reuse
  by allocations of the same rounded size (CuPy also splits larger free blocks) until
  ``free_all_blocks()``, and honours ``set_limit`` (OutOfMemoryError).
- ``cuda``: one device (0), ``Device(1)`` use raises ``CUDARuntimeError: cudaErrorInvalidDevice:
  invalid device ordinal``; streams, events and ``get_elapsed_time`` as in CuPy. The device's
  properties are an H100's (sm_90); ``deviceGetAttribute`` knows compute capability and SM count.

What it leaves out: asynchrony (every operation completes before it returns, so
synchronization has nothing to wait for), real device memory, custom kernels
(ElementwiseKernel, RawKernel, fuse), cupyx, FFT, DLPack, ``flat``, sparse matrices,
multiple devices and per-thread default streams. Arithmetic is NumPy's (NumPy 2 promotion
rules); CuPy-specific results, such as float-to-int casts of out-of-range values, and random
numbers (NumPy's generators, not cuRAND's) differ. Module functions refuse NumPy arrays
everywhere, even the few CuPy functions that would quietly compute on the host (cupy.sum calls
its argument's own sum method).
"""

import ctypes
import sys
import threading
import time
import types
import warnings
import weakref

import numpy as _np

__version__ = "14.2.0"

# ---------------------------------------------------------------------------------------------
# dtypes and scalars
# ---------------------------------------------------------------------------------------------
_TYPE_CHARS = "?bhilqBHILQefdFD"  # every dtype CuPy supports (cupy/_core/_dtype.pyx)
_SCALAR_TYPES = frozenset({int, float, bool, complex} | {_np.dtype(c).type for c in _TYPE_CHARS})

for _name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128", "intp", "uintp", "byte",
              "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "longlong", "ulonglong",
              "half", "single", "double", "csingle", "cdouble", "number", "integer",
              "signedinteger", "unsignedinteger", "inexact", "floating", "complexfloating",
              "generic", "dtype", "finfo", "iinfo", "inf", "nan", "pi", "e", "euler_gamma"):
    globals()[_name] = getattr(_np, _name)
newaxis = None


def _dtype(t):
    """numpy.dtype(t) if CuPy supports it, else CuPy's ValueError."""
    dt = _np.dtype(t)
    if dt.char not in _TYPE_CHARS or dt.byteorder == ">":
        raise ValueError(f"Unsupported dtype {dt}")
    return dt


# ---------------------------------------------------------------------------------------------
# CUDA runtime: one emulated device
# ---------------------------------------------------------------------------------------------
_ERRORS = {1: ("cudaErrorInvalidValue", "invalid argument"),
           2: ("cudaErrorMemoryAllocation", "out of memory"),
           101: ("cudaErrorInvalidDevice", "invalid device ordinal"),
           400: ("cudaErrorInvalidResourceHandle", "invalid resource handle")}
_TOTAL_MEMORY = 80 * 2**30
_PROPERTIES = {
    "name": b"Emulated GPU (fakecupy)", "totalGlobalMem": _TOTAL_MEMORY,
    "sharedMemPerBlock": 48 * 1024, "sharedMemPerBlockOptin": 227 * 1024,
    "sharedMemPerMultiprocessor": 228 * 1024, "regsPerBlock": 65536, "warpSize": 32,
    "maxThreadsPerBlock": 1024, "maxThreadsDim": (1024, 1024, 64),
    "maxGridSize": (2**31 - 1, 65535, 65535), "clockRate": 1980000, "totalConstMem": 65536,
    "major": 9, "minor": 0, "multiProcessorCount": 132, "maxThreadsPerMultiProcessor": 2048,
    "l2CacheSize": 50 * 2**20, "memoryBusWidth": 5120, "integrated": 0, "concurrentKernels": 1,
    "ECCEnabled": 1, "pciBusID": 0, "pciDeviceID": 0, "pciDomainID": 0,
}
_ATTRIBUTES = {16: "multiProcessorCount", 75: "major", 76: "minor"}  # cudaDevAttr* values


class CUDARuntimeError(RuntimeError):
    """CuPy's error for a failed CUDA runtime call: 'cudaErrorName: description'."""

    def __init__(self, status):
        self.status = status
        name, msg = _ERRORS.get(status, (f"cudaError{status}", "unknown error"))
        super().__init__(f"{name}: {msg}")

    def __reduce__(self):
        return type(self), (self.status,)


class _ThreadState(threading.local):
    def __init__(self):
        self.device = 0
        self.stream = None      # None: the null stream (CuPy's Stream.null)
        self.stack = [None]


_tls = _ThreadState()


def _check_device(device):
    if not 0 <= device < 1:
        raise CUDARuntimeError(101)
    return device


def _handle(owner):
    """A unique, non-null address to serve as a stream or event handle (kept by `owner`)."""
    owner._handle_buf = ctypes.create_string_buffer(8)
    return ctypes.addressof(owner._handle_buf)


def _runtime_module():
    rt = types.ModuleType("cupy.cuda.runtime", "CUDA runtime API of the emulated device.")
    rt.CUDARuntimeError = CUDARuntimeError
    rt.is_hip = False
    rt.streamLegacy, rt.streamPerThread = 1, 2
    rt.errorInvalidValue, rt.errorMemoryAllocation = 1, 2
    rt.errorInvalidResourceHandle, rt.cudaErrorInvalidDevice = 400, 101
    rt.getDeviceCount = lambda: 1
    rt.getDevice = lambda: _tls.device
    rt.runtimeGetVersion = rt.driverGetVersion = lambda: 12080

    def setDevice(device):
        _tls.device = _check_device(device)

    def getDeviceProperties(device):
        _check_device(device)
        return dict(_PROPERTIES)

    def deviceGetAttribute(attrib, device):
        _check_device(device)
        if attrib not in _ATTRIBUTES:
            raise CUDARuntimeError(1)
        return _PROPERTIES[_ATTRIBUTES[attrib]]

    def deviceSynchronize():
        _check_device(_tls.device)  # every operation has already completed

    def memGetInfo():
        return _TOTAL_MEMORY - _pool.total_bytes(), _TOTAL_MEMORY

    for f in (setDevice, getDeviceProperties, deviceGetAttribute, deviceSynchronize, memGetInfo):
        setattr(rt, f.__name__, f)
    return rt


runtime = _runtime_module()


class Device:
    """A CUDA device; only device 0 exists. A context manager that makes it current."""

    def __init__(self, device=None):
        self.id = _tls.device if device is None else int(device)
        self._stack = []

    def use(self):
        runtime.setDevice(self.id)

    def __enter__(self):
        self._stack.append(_tls.device)
        if self.id != _tls.device:
            self.use()
        return self

    def __exit__(self, *exc):
        runtime.setDevice(self._stack.pop())

    def synchronize(self):
        with self:
            runtime.deviceSynchronize()

    @property
    def compute_capability(self):
        return "%d%d" % (runtime.deviceGetAttribute(75, self.id),
                         runtime.deviceGetAttribute(76, self.id))

    @property
    def mem_info(self):
        _check_device(self.id)
        return runtime.memGetInfo()

    def __int__(self):
        return self.id

    def __eq__(self, other):
        return isinstance(other, Device) and self.id == other.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class Stream:
    """A CUDA stream: `ptr` is its handle (0 for Stream.null, 2 for Stream.ptds). Work never
    waits in it here, so synchronize() returns at once and done is always True."""
    null = None
    ptds = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null:
            self.ptr, self.device_id = 0, -1
        elif ptds:
            self.ptr, self.device_id = 2, -1
        else:
            self.ptr, self.device_id = _handle(self), _tls.device
        self.is_non_blocking = bool(non_blocking and not null and not ptds)
        self.priority = 0 if priority is None else priority

    def _check_device(self):
        if self.device_id not in (-1, _tls.device):
            raise RuntimeError(f"The device that the stream is created on ({self.device_id})"
                               f" does not match with the current device ({_tls.device})")

    def __enter__(self):
        self._check_device()
        _tls.stack.append(self)
        _tls.stream = self
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        _tls.stream = _tls.stack[-1]

    def use(self):
        self._check_device()
        _tls.stream = self
        return self

    done = property(lambda self: True)

    def synchronize(self):
        pass  # every operation completed when it was issued

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        pass  # the event's work has completed

    def __eq__(self, other):
        return isinstance(other, Stream) and self.ptr == other.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<{type(self).__name__} {self.ptr} (device {self.device_id})>"


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


def get_current_stream(device_id=-1):
    return Stream.null if _tls.stream is None else _tls.stream


class Event:
    """A CUDA event; record() takes the host time (time.perf_counter), since work completes
    when it is issued."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr = _handle(self)
        self._timing = not disable_timing
        self._time = None

    def record(self, stream=None):
        self._time = time.perf_counter()

    def synchronize(self):
        pass  # the recorded work has completed

    done = property(lambda self: True)


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events (cudaEventElapsedTime's errors otherwise)."""
    if not (start_event._timing and end_event._timing):
        raise CUDARuntimeError(400)
    if start_event._time is None or end_event._time is None:
        raise CUDARuntimeError(400)
    return (end_event._time - start_event._time) * 1000.0


# ---------------------------------------------------------------------------------------------
# memory: buffers in host memory, counted by a pool as CuPy's counts device memory
# ---------------------------------------------------------------------------------------------
_UNIT = 512  # CuPy rounds every allocation up to 512 bytes


class OutOfMemoryError(MemoryError):
    def __init__(self, size, total, limit=0):
        msg = f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes"
        super().__init__(msg + (f", limit set to: {limit:,} bytes)." if limit else ")."))


class MemoryPool:
    """Counts device memory as CuPy's pool does: used_bytes() is the rounded size of live
    buffers; a freed buffer becomes a free block that an allocation of the same rounded size
    reuses, until free_all_blocks()."""

    def __init__(self):
        self._lock = threading.Lock()
        self._used = 0
        self._free = {}  # rounded size -> number of free blocks
        self._limit = 0

    def _take(self, size, ptr=0):
        with self._lock:
            if self._free.get(size):
                self._free[size] -= 1
            else:
                if self._limit and self._used + self.free_bytes() + size > self._limit:
                    self._free.clear()
                    if self._used + size > self._limit:
                        raise OutOfMemoryError(size, self._used, self._limit)
            self._used += size
        _call_hooks("malloc_postprocess", device_id=0, size=size, mem_size=size, mem_ptr=ptr,
                    pmem_id=hex(id(self)))

    def _give_back(self, size, ptr=0):
        with self._lock:
            self._used -= size
            self._free[size] = self._free.get(size, 0) + 1
        _call_hooks("free_postprocess", device_id=0, mem_size=size, mem_ptr=ptr, pmem_id=hex(id(self)))

    def malloc(self, size):
        return MemoryPointer(_Memory(_np.empty(size, _np.uint8), self), 0)

    def used_bytes(self):
        return self._used

    def free_bytes(self):
        return sum(size * n for size, n in self._free.items())

    def total_bytes(self):
        return self._used + self.free_bytes()

    def n_free_blocks(self):
        return sum(self._free.values())

    def free_all_blocks(self, stream=None):
        with self._lock:
            self._free.clear()

    def set_limit(self, size=None, fraction=None):
        if size is not None and fraction is not None:
            raise ValueError("size and fraction cannot be specified at the same time")
        self._limit = int(_TOTAL_MEMORY * fraction) if fraction is not None else int(size or 0)

    def get_limit(self):
        return self._limit


_pool = MemoryPool()

_hooks = threading.local()  # as CuPy's: memory hooks are registered per thread


def _call_hooks(method, **kwargs):
    for hook in list(getattr(_hooks, "active", {}).values()):
        getattr(hook, method)(**kwargs)


class MemoryHook:
    """CuPy's memory hook: registered by `with hook:` on this thread, its malloc_postprocess
    and free_postprocess are called (with device_id, mem_size, mem_ptr, pmem_id; malloc also
    size) when an array's buffer is taken from the pool and given back. The alloc_* points
    (memory from the device itself) never come: the emulated pool has no device below it."""

    name = None

    def __enter__(self):
        active = _hooks.__dict__.setdefault("active", {})
        if self.name in active:
            raise RuntimeError(f"memory hook '{self.name}' already exists")
        active[self.name] = self
        return self

    def __exit__(self, *exc):
        del _hooks.active[self.name]

    def alloc_preprocess(self, **kwargs):
        pass

    def alloc_postprocess(self, **kwargs):
        pass

    def malloc_preprocess(self, **kwargs):
        pass

    def malloc_postprocess(self, **kwargs):
        pass

    def free_preprocess(self, **kwargs):
        pass

    def free_postprocess(self, **kwargs):
        pass


def get_default_memory_pool():
    return _pool


class _Memory:
    """One device buffer: `buf` is the NumPy array that owns the host memory standing for it."""
    __slots__ = ("buf", "ptr", "size", "device_id", "owner", "__weakref__")

    def __init__(self, buf, pool=None, owner=None):
        self.buf, self.owner, self.device_id = buf, owner, 0
        self.size = buf.nbytes
        self.ptr = buf.__array_interface__["data"][0] if buf.nbytes else 0
        if pool is not None and buf.nbytes:
            rounded = -(-buf.nbytes // _UNIT) * _UNIT
            pool._take(rounded, self.ptr)
            weakref.finalize(self, pool._give_back, rounded, self.ptr)

    device = property(lambda self: Device(self.device_id))


def UnownedMemory(ptr, size, owner, device_id=-1):
    """Memory at `ptr` that something else owns (it is kept alive with the memory)."""
    buf = (_np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr)) if size
           else _np.empty(0, _np.uint8))
    return _Memory(buf, None, owner)


class MemoryPointer:
    """A pointer into a buffer: `ptr` is the address, `mem` the buffer."""

    def __init__(self, mem, offset):
        self.mem, self.ptr = mem, mem.ptr + offset
        self.device_id = mem.device_id

    device = property(lambda self: Device(self.device_id))

    def __int__(self):
        return self.ptr

    def __add__(self, offset):
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + offset)

    def copy_from_host(self, mem, size, stream=None):
        ctypes.memmove(self.ptr, int(mem), size)

    def copy_to_host(self, mem, size, stream=None):
        ctypes.memmove(int(mem), self.ptr, size)

    def copy_from_device(self, src, size, stream=None):
        ctypes.memmove(self.ptr, src.ptr, size)

    def memset(self, value, size, stream=None):
        ctypes.memset(self.ptr, value, size)

    copy_from_host_async, copy_to_host_async = copy_from_host, copy_to_host
    copy_from_device_async, memset_async = copy_from_device, memset


def alloc(size):
    return _pool.malloc(size)


# ---------------------------------------------------------------------------------------------
# ndarray
# ---------------------------------------------------------------------------------------------
class Flags:
    """CuPy's flags: c_contiguous, f_contiguous and owndata, read-only; nothing else."""
    __slots__ = ("_c", "_f", "_own")

    def __init__(self, c_contiguous, f_contiguous, owndata):
        self._c, self._f, self._own = bool(c_contiguous), bool(f_contiguous), bool(owndata)

    c_contiguous = property(lambda self: self._c)
    f_contiguous = property(lambda self: self._f)
    owndata = property(lambda self: self._own)
    fnc = property(lambda self: self._f and not self._c)
    forc = property(lambda self: self._f or self._c)

    def __getitem__(self, name):
        keys = {"C_CONTIGUOUS": self._c, "F_CONTIGUOUS": self._f, "OWNDATA": self._own}
        if name not in keys:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return keys[name]

    def __repr__(self):
        return "\n".join(f"  {k} : {self[k]}" for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA"))


def _unwrap(x, parents):
    """Device arrays to their host arrays (noted in `parents`), inside lists and tuples too;
    a NumPy array is refused as CuPy refuses it."""
    if isinstance(x, ndarray):
        parents.append(x)
        return x._a
    if isinstance(x, _np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if type(x) in (list, tuple):
        return type(x)(_unwrap(i, parents) for i in x)
    return x


def _wrap(r, parents=()):
    """NumPy results as device arrays: a view of a parent's buffer shares it, a NumPy scalar
    becomes a 0-d array, anything else becomes a new buffer."""
    if type(r) in (list, tuple):
        return type(r)(_wrap(x, parents) for x in r)
    if isinstance(r, _np.generic):
        r = _np.asarray(r)
    if not isinstance(r, _np.ndarray):
        return r
    for p in parents:
        if r is p._a:
            return p
    _dtype(r.dtype)
    for p in parents:
        b = r
        while isinstance(b, _np.ndarray):
            if b is p._mem.buf:
                return ndarray._of(r, p._mem, p._base if p._base is not None else p)
            b = b.base
    if r.base is not None:
        r = r.copy(order="K")
    return ndarray._of(r, _Memory(r, _pool), None)


def _should_use_rop(x, y):
    try:
        y_ufunc = y.__array_ufunc__
    except AttributeError:
        return getattr(x, "__array_priority__", 0) < getattr(y, "__array_priority__", 0)
    return y_ufunc is None


def _binop(name, reflected=False):
    def op(self, other):
        if isinstance(other, ndarray):
            return _ufunc(name)(other, self) if reflected else _ufunc(name)(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        f = getattr(_np, name)  # through NumPy, so NumPy's errors come out for odd operands
        return f(other, self) if reflected else f(self, other)
    return op


def _inplace(name):
    def op(self, other):
        return _ufunc(name)(self, other, out=self)
    return op


def _compare(name, op):
    def cmp(self, other):
        if isinstance(other, ndarray):
            return _ufunc(name)(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        if isinstance(other, _np.ndarray) and other.ndim == 0:
            other = other.item()
        if op in ("eq", "ne") and (other is None or type(other).__eq__ is object.__eq__):
            return (zeros if op == "eq" else ones)(self.shape, dtype=_np.bool_)
        return getattr(_np, name)(self, other)
    return cmp


class ndarray:
    """A device array: a NumPy array in host memory standing for GPU memory (see module doc)."""
    __slots__ = ("_a", "_mem", "_base", "__weakref__")
    __array_priority__ = 100

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        dt = _dtype(dtype)
        if order not in ("C", "F", "c", "f", None):
            raise ValueError(f"order not understood. order={order}")
        if memptr is None:
            if strides is not None:
                raise ValueError("memptr is required if strides is given.")
            a = _np.empty(shape, dt, order or "C")
            self._a, self._mem, self._base = a, _Memory(a, _pool), None
            return
        flat = memptr.mem.buf.ravel(order="K").view(_np.uint8)
        self._a = _np.ndarray(shape, dt, buffer=flat, offset=memptr.ptr - memptr.mem.ptr,
                              strides=strides, order=order or "C")
        self._mem, self._base = memptr.mem, None

    @classmethod
    def _of(cls, a, mem, base):
        self = cls.__new__(cls)
        if not a.flags.writeable:  # NumPy's diagonal() and broadcast_to() views; CuPy's are not
            try:
                a.flags.writeable = True
            except ValueError:
                pass
        self._a, self._mem, self._base = a, mem, base
        return self

    # -- attributes ---------------------------------------------------------------------------
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    base = property(lambda self: self._base)
    device = property(lambda self: Device(0))

    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, newshape):
        try:
            self._a = self._a.reshape(newshape, copy=False)
        except ValueError:
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.") from None

    @property
    def flags(self):
        f = self._a.flags
        return Flags(f.c_contiguous, f.f_contiguous, self._base is None)

    @property
    def data(self):
        if self._mem.size == 0:
            return MemoryPointer(self._mem, 0)
        return MemoryPointer(self._mem, self._a.__array_interface__["data"][0] - self._mem.ptr)

    @property
    def __cuda_array_interface__(self):
        stream = get_current_stream().ptr or runtime.streamLegacy  # CAI v3 forbids 0
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr,
                "stream": stream, "version": 3,
                "strides": None if self._a.flags.c_contiguous else self.strides,
                "data": (self.data.ptr if self.size > 0 else 0, False)}

    T = property(lambda self: self if self.ndim < 2 else _wrap(self._a.T, (self,)))
    real = property(lambda self: _wrap(self._a.real, (self,)))
    imag = property(lambda self: _wrap(self._a.imag, (self,)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    # -- host transfers and conversion ------------------------------------------------------
    def get(self, stream=None, order="C", out=None, blocking=True):
        """A NumPy copy of the array (into `out` if given)."""
        if out is not None:
            if not isinstance(out, _np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
            if out.dtype != self.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self.dtype} array")
            if out.shape != self.shape:
                raise ValueError(f"Shape mismatch. Expected shape: {self.shape}, "
                                 f"actual shape: {out.shape}")
            if not (out.flags.c_contiguous or out.flags.f_contiguous):
                raise RuntimeError("`out` cannot be specified when copying to non-contiguous "
                                   "ndarray")
            _np.copyto(out, self._a)
            return out
        if self.size == 0:
            return _np.ndarray(self.shape, dtype=self.dtype)
        order = order.upper()
        if order == "A":
            order = "F" if self._a.flags.f_contiguous else "C"
        if order not in ("C", "F"):
            raise ValueError(f"unsupported order: {order}")
        return _np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        """Copy a NumPy array of the same dtype and shape into this array."""
        if not isinstance(arr, _np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if arr.dtype != self.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if arr.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self._a.flags.c_contiguous or self._a.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        self._a[...] = arr

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __int__(self):
        return int(self.get())

    def __float__(self):
        return float(self.get())

    def __complex__(self):
        return complex(self.get())

    def __bool__(self):
        if self.size == 0:
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, but "
                          "in future this will result in an error. Use `array.size > 0` to "
                          "check that an array is not empty.", DeprecationWarning, stacklevel=2)
            return False
        if self.size == 1:
            return bool(self.get())
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __format__(self, spec):
        return format(self.get(), spec)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return array, (self.get(),)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- copies, casts, views -----------------------------------------------------------------
    def _astype(self, dtype, order="K", copy=True):
        dt = _dtype(dtype)
        order = (order or "K").upper()
        f = self._a.flags
        if dt == self.dtype and not copy and (
                order == "K" or (order == "A" and (f.c_contiguous or f.f_contiguous))
                or (order == "C" and f.c_contiguous) or (order == "F" and f.f_contiguous)):
            return self
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return _wrap(self._a.astype(dt, order=order, copy=True))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        return self._astype(dtype, order, True if copy else None)

    def copy(self, order="C"):
        return _wrap(self._a.copy(order=order))

    def view(self, dtype=None, type=None):
        if dtype is ndarray:
            dtype = None
        if type is not None and type is not ndarray:
            raise ValueError("Type must be a sub-type of ndarray type")
        r = self._a.view() if dtype is None else self._a.view(_dtype(dtype))
        return _wrap(r, (self,))

    def fill(self, value):
        self._a[...] = self._scalar(value)

    def _scalar(self, value):
        """A fill value as CuPy's fill() takes it: a scalar or a 0-d array, nothing else."""
        if isinstance(value, ndarray):
            if value.shape != ():
                raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
            return value._a
        if isinstance(value, _np.ndarray):
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            return value.astype(self.dtype).item()
        if type(value) not in _SCALAR_TYPES:
            raise TypeError(f"Unsupported type {type(value)}")
        return value

    def reshape(self, *shape, order="C"):
        return _wrap(self._a.reshape(*shape, order=order), (self,))

    def transpose(self, *axes):
        return _wrap(self._a.transpose(*axes), (self,))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _wrap(self._a.diagonal(offset, axis1, axis2), (self,))  # writable, as in CuPy

    def sort(self, axis=-1, kind=None):
        if kind not in (None, "stable"):
            raise ValueError("kind can only be None or 'stable'")
        self._a.sort(axis=axis, kind="stable")

    def argsort(self, axis=-1, kind=None):
        if kind not in (None, "stable"):
            raise ValueError("kind can only be None or 'stable'")
        return _wrap(self._a.argsort(axis=axis, kind="stable"))

    def argmax(self, axis=None, out=None, dtype=None, keepdims=False):
        r = _wrap(_np.argmax(self._a, axis, None, keepdims=keepdims))
        return _finish(r if dtype is None else r.astype(dtype), out)

    def argmin(self, axis=None, out=None, dtype=None, keepdims=False):
        r = _wrap(_np.argmin(self._a, axis, None, keepdims=keepdims))
        return _finish(r if dtype is None else r.astype(dtype), out)

    def ptp(self, axis=None, out=None, keepdims=False):
        return _finish(_wrap(_np.ptp(self._a, axis, keepdims=keepdims)), out)

    def compress(self, condition, axis=None, out=None):
        cond = condition._a if isinstance(condition, ndarray) else _np.asarray(condition)
        return _finish(_wrap(self._a.compress(cond, axis)), out)

    def dot(self, b, out=None):
        if not isinstance(b, ndarray):
            raise TypeError(f"Argument 'b' has incorrect type (expected cupy.ndarray, got "
                            f"{type(b).__name__})")
        return _wrap(_np.dot(self._a, b._a, _unwrap(out, [])), (out,) if out is not None else ())

    def take(self, indices, axis=None, out=None):
        """Out-of-bounds indices wrap around, as in CuPy; host indices are copied in."""
        idx = indices._a if isinstance(indices, ndarray) else _np.asarray(indices)
        r = self._a.take(idx, axis=axis, out=_unwrap(out, []), mode="wrap")
        return _wrap(r, (out,) if out is not None else ())

    def put(self, indices, values, mode="wrap"):
        """CuPy's put: host indices and values are copied in; mode defaults to 'wrap'."""
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError("clipmode not understood")
        idx = indices._a if isinstance(indices, ndarray) else _np.asarray(indices)
        vals = values._a if isinstance(values, ndarray) else _np.asarray(values, self.dtype)
        self._a.put(idx, vals, mode=mode)

    def repeat(self, repeats, axis=None):
        if isinstance(repeats, ndarray):
            raise ValueError("cupy.ndarray cannot be specified as `repeats` argument.")
        return _wrap(self._a.repeat(repeats, axis))

    def nonzero(self):
        return _wrap(self._a.nonzero())

    # -- indexing -----------------------------------------------------------------------------
    def _index(self, key):
        """The index as NumPy takes it, with CuPy's rules: host lists and arrays allowed,
        integer arrays wrap around, and an Ellipsis appended so that basic indexing gives
        views (0-d for integers, as CuPy's does)."""
        items = list(key) if type(key) is tuple else [key]
        out = []
        for s in items:
            if s is None or s is Ellipsis or isinstance(s, slice):
                pass
            elif isinstance(s, ndarray):
                s = s._a
            elif isinstance(s, (list, tuple)):
                s = _np.asarray(s)
                if s.size == 0:
                    s = s.astype(_np.int32)  # an empty list selects nothing; it is no mask
            elif isinstance(s, (bool, _np.bool_, _np.ndarray)):
                s = _np.asarray(s)
            elif not _np.isscalar(s):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                 "(`None`) and integer or boolean arrays are valid indices")
            if isinstance(s, _np.ndarray) and s.dtype.kind not in "biu":
                raise IndexError("arrays used as indices must be of integer or boolean type. "
                                 f"(actual: {s.dtype.type})")
            out.append(s)
        if not any(s is Ellipsis for s in out):
            out.append(Ellipsis)
        used = sum(0 if s is None or s is Ellipsis else
                   s.ndim if isinstance(s, _np.ndarray) and s.dtype.kind == "b" else 1
                   for s in out)
        axis = 0
        for i, s in enumerate(out):
            if s is Ellipsis:
                axis += max(self.ndim - used, 0)
            elif isinstance(s, _np.ndarray) and s.dtype.kind == "b":
                axis += s.ndim
            elif s is not None:
                if isinstance(s, _np.ndarray) and axis < self.ndim and self.shape[axis]:
                    out[i] = s % self.shape[axis]
                axis += 1
        return tuple(out), any(isinstance(s, _np.ndarray) for s in out)

    def __getitem__(self, key):
        idx, _ = self._index(key)
        return _wrap(self._a[idx], (self,))

    def __setitem__(self, key, value):
        idx, advanced = self._index(key)
        if isinstance(value, ndarray):
            v = value._a
        elif advanced:
            v = array(value, dtype=self.dtype)._a  # CuPy copies the host value to the device
        else:
            v = self._scalar(value)  # CuPy fills the selection with a scalar
        self._a[idx] = v

    # -- NumPy interoperability (NEP 13 and 18) -----------------------------------------------
    def __array_ufunc__(self, uf, method, *inputs, **kwargs):
        outs = kwargs.get("out", ())
        if "out" in kwargs:
            if len(outs) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            kwargs["out"] = outs[0]
        if method not in ("__call__", "outer", "at", "reduce", "accumulate", "reduceat"):
            return NotImplemented
        if uf.__name__ not in _UFUNC_NAMES:
            return NotImplemented
        # every input, at's indices too: a tuple of indices (NumPy's form for several axes)
        # is neither array nor scalar, so NumPy's ufunc.at on a tuple is refused, as CuPy's is
        for x in inputs + tuple(outs):
            if not (isinstance(x, (ndarray, _np.ndarray)) or type(x) in _SCALAR_TYPES):
                return NotImplemented
        if uf.__name__ in ("greater", "greater_equal", "less", "less_equal", "equal",
                           "not_equal"):
            inputs = tuple(x.item() if isinstance(x, _np.ndarray) and x.ndim == 0 else x
                           for x in inputs)
        return getattr(_ufunc(uf.__name__), method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = _function_for(func)
        if impl is None or not all(issubclass(t, (ndarray, _np.ndarray)) for t in types):
            return NotImplemented
        return impl(*args, **kwargs)

    # -- operators ----------------------------------------------------------------------------
    __add__, __radd__, __iadd__ = _binop("add"), _binop("add", True), _inplace("add")
    __sub__, __rsub__, __isub__ = (_binop("subtract"), _binop("subtract", True),
                                   _inplace("subtract"))
    __mul__, __rmul__, __imul__ = (_binop("multiply"), _binop("multiply", True),
                                   _inplace("multiply"))
    __truediv__, __rtruediv__, __itruediv__ = (_binop("true_divide"),
                                               _binop("true_divide", True),
                                               _inplace("true_divide"))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binop("floor_divide"),
                                                  _binop("floor_divide", True),
                                                  _inplace("floor_divide"))
    __mod__, __rmod__, __imod__ = (_binop("remainder"), _binop("remainder", True),
                                   _inplace("remainder"))
    __pow__, __rpow__, __ipow__ = _binop("power"), _binop("power", True), _inplace("power")
    __matmul__, __rmatmul__ = _binop("matmul"), _binop("matmul", True)
    __divmod__, __rdivmod__ = _binop("divmod"), _binop("divmod", True)
    __lshift__, __rlshift__, __ilshift__ = (_binop("left_shift"), _binop("left_shift", True),
                                            _inplace("left_shift"))
    __rshift__, __rrshift__, __irshift__ = (_binop("right_shift"), _binop("right_shift", True),
                                            _inplace("right_shift"))
    __and__, __rand__, __iand__ = (_binop("bitwise_and"), _binop("bitwise_and", True),
                                   _inplace("bitwise_and"))
    __or__, __ror__, __ior__ = (_binop("bitwise_or"), _binop("bitwise_or", True),
                                _inplace("bitwise_or"))
    __xor__, __rxor__, __ixor__ = (_binop("bitwise_xor"), _binop("bitwise_xor", True),
                                   _inplace("bitwise_xor"))
    __lt__, __le__ = _compare("less", "lt"), _compare("less_equal", "le")
    __gt__, __ge__ = _compare("greater", "gt"), _compare("greater_equal", "ge")
    __eq__, __ne__ = _compare("equal", "eq"), _compare("not_equal", "ne")
    __hash__ = None

    def __neg__(self):
        return _ufunc("negative")(self)

    def __pos__(self):
        if self.dtype == _np.bool_:
            warnings.warn("Applying '+' to a non-numerical array is ill-defined. Returning a "
                          "copy, but in the future this will error.", DeprecationWarning,
                          stacklevel=2)
            return self.copy()
        return _ufunc("positive")(self)

    def __abs__(self):
        return _ufunc("absolute")(self)

    def __invert__(self):
        return _ufunc("invert")(self)


ndarray.__module__ = "cupy"


def _finish(r, out):
    if out is None:
        return r
    out[...] = r
    return out


def _method(name):
    def method(self, *args, **kwargs):
        parents = [self]
        a = _unwrap(args, parents)
        k = {key: _unwrap(v, parents) for key, v in kwargs.items()}
        return _wrap(getattr(self._a, name)(*a, **k), parents)
    method.__name__ = method.__qualname__ = name
    return method


# Methods of cupy.ndarray that do what NumPy's do (arguments refused as CuPy refuses them).
for _name in ("all", "any", "argpartition", "clip", "conj", "conjugate", "cumprod",
              "cumsum", "flatten", "max", "mean", "min", "partition", "prod", "ravel", "round",
              "searchsorted", "squeeze", "std", "sum", "swapaxes", "tobytes", "tofile", "trace",
              "var"):
    setattr(ndarray, _name, _method(_name))


# ---------------------------------------------------------------------------------------------
# ufuncs and module functions
# ---------------------------------------------------------------------------------------------
_UFUNC_NAMES = frozenset("""
    add subtract multiply divide true_divide floor_divide negative positive power float_power
    remainder mod fmod divmod absolute fabs rint sign heaviside conj conjugate exp exp2 log log2
    log10 expm1 log1p sqrt square cbrt reciprocal gcd lcm sin cos tan arcsin arccos arctan
    arctan2 hypot sinh cosh tanh arcsinh arccosh arctanh deg2rad rad2deg degrees radians
    bitwise_and bitwise_or bitwise_xor invert bitwise_not left_shift right_shift greater
    greater_equal less less_equal not_equal equal logical_and logical_or logical_xor logical_not
    maximum minimum fmax fmin isfinite isinf isnan signbit copysign nextafter spacing modf ldexp
    frexp floor ceil trunc matmul logaddexp logaddexp2""".split())

_FUNCTION_NAMES = frozenset("""
    diag diagflat tri tril triu vander meshgrid logspace shape ndim size reshape ravel moveaxis
    rollaxis swapaxes transpose atleast_1d atleast_2d atleast_3d broadcast_to broadcast_arrays
    expand_dims squeeze concatenate stack vstack hstack dstack column_stack split array_split
    hsplit vsplit dsplit tile repeat append resize unique trim_zeros flip fliplr flipud roll rot90
    pad sum prod nansum nanprod cumsum cumprod nancumsum nancumprod diff gradient ediff1d cross
    convolve clip around round fix real imag angle sinc unwrap nan_to_num interp all any allclose
    isclose array_equal array_equiv isscalar iscomplex isreal iscomplexobj isrealobj isin sort
    argsort lexsort partition argpartition argmax argmin nanargmax nanargmin argwhere nonzero
    flatnonzero where searchsorted extract count_nonzero amax amin max min nanmax nanmin ptp
    percentile quantile median nanmedian average mean nanmean std nanstd var nanvar corrcoef cov
    correlate histogram bincount digitize dot vdot inner outer tensordot einsum kron trace
    take_along_axis putmask place choose compress diagonal select indices ix_ ravel_multi_index
    unravel_index fill_diagonal diag_indices diag_indices_from tril_indices tril_indices_from
    triu_indices triu_indices_from result_type can_cast promote_types min_scalar_type
    common_type issubdtype copyto shares_memory may_share_memory""".split())

_LINALG_NAMES = ("norm", "det", "slogdet", "inv", "pinv", "solve", "lstsq", "svd", "qr",
                 "cholesky", "eigh", "eigvalsh", "matrix_power", "matrix_rank", "tensorinv",
                 "tensorsolve")


def _operand(x, parents):
    if isinstance(x, ndarray):
        parents.append(x)
        return x._a
    if type(x) not in _SCALAR_TYPES:
        raise TypeError(f"Unsupported type {type(x)}")
    return x


def _host_ok(x, parents):
    return x._a if isinstance(x, ndarray) else _np.asarray(x)


def _index(x, parents):
    """An index as CuPy's indexing takes it: device arrays, slices, ints, None, Ellipsis."""
    if isinstance(x, tuple):
        return tuple(_index(i, parents) for i in x)
    return x._a if isinstance(x, ndarray) else x


_AT_DTYPES = {"add": ("int32", "float16", "float32", "float64", "uint32", "uint64"),
              "maximum": ("int32", "float32", "float64", "uint32", "uint64"),
              "minimum": ("int32", "float32", "float64", "uint32", "uint64")}


class ufunc:
    """A CuPy ufunc: device arrays, Python scalars and NumPy scalars only."""

    def __init__(self, f):
        self._f, self.__name__ = f, f.__name__
        self.nin, self.nout, self.nargs = f.nin, f.nout, f.nargs

    def _apply(self, method, args, kwargs, converters=None):
        parents = []
        conv = converters or [_operand] * len(args)
        ins = [c(x, parents) for c, x in zip(conv, args)]
        out = kwargs.pop("out", None)
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
            for o in outs:
                if not isinstance(o, ndarray):
                    raise TypeError(f"Unsupported type {type(o)}")
            kwargs["out"] = tuple(o._a for o in outs)
        if isinstance(kwargs.get("where"), (ndarray, _np.ndarray)):
            kwargs["where"] = _operand(kwargs["where"], parents)
        if kwargs.get("dtype") is not None:
            _dtype(kwargs["dtype"])
        r = getattr(self._f, method)(*ins, **kwargs)
        if out is not None:
            return outs[0] if len(outs) == 1 else outs
        return _wrap(r, parents)

    def __call__(self, *args, **kwargs):
        return self._apply("__call__", args, kwargs)

    def reduce(self, a, *args, **kwargs):
        return self._apply("reduce", (a,) + args, kwargs, [_operand] + [_keep] * len(args))

    def accumulate(self, a, *args, **kwargs):
        return self._apply("accumulate", (a,) + args, kwargs, [_operand] + [_keep] * len(args))

    def reduceat(self, a, indices, *args, **kwargs):
        return self._apply("reduceat", (a, indices) + args, kwargs,
                           [_operand, _host_ok] + [_keep] * len(args))

    def outer(self, a, b, **kwargs):
        return self._apply("outer", (a, b), kwargs)

    def at(self, a, indices, b=None):
        """CuPy's scatter kernels: add, maximum and minimum only, of the dtypes CuPy's
        atomics take (no int64 addition, no float16 maximum)."""
        dtypes = _AT_DTYPES.get(self.__name__)
        if dtypes is None:
            raise NotImplementedError(f"`cupy_{self.__name__}.at` is not supported yet")
        if isinstance(a, ndarray) and a.dtype.name not in dtypes:
            raise TypeError(f"cupy.{self.__name__}.at only supports {', '.join(dtypes)} as data type")
        args = (a, indices) if b is None else (a, indices, b)
        self._apply("at", args, {}, [_operand, _index, _operand])

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"


def _keep(x, parents):
    return x


def _forward(f, name):
    def function(*args, **kwargs):
        if "subok" in kwargs:  # NumPy's subok is no parameter of CuPy's functions
            raise TypeError(f"{name}() got an unexpected keyword argument 'subok'")
        if kwargs.get("dtype") is not None:
            _dtype(kwargs["dtype"])
        parents = []
        a = _unwrap(args, parents)
        k = {key: _unwrap(v, parents) for key, v in kwargs.items()}
        return _wrap(f(*a, **k), parents)
    function.__name__ = function.__qualname__ = name
    function.__module__ = "cupy"
    function.__doc__ = f"numpy.{name} on device arrays; NumPy arrays are refused."
    return function


_cache = {}


def _ufunc(name):
    f = _cache.get(name)
    if f is None:
        f = _cache[name] = ufunc(getattr(_np, name))
    return f


def __getattr__(name):
    """CuPy's ufuncs and array functions that behave as NumPy's, made on first use."""
    if name in _cache:
        return _cache[name]
    if name == "bool":
        return _np.bool_
    if name in _UFUNC_NAMES and isinstance(getattr(_np, name, None), _np.ufunc):
        return _ufunc(name)
    if name in _FUNCTION_NAMES and callable(getattr(_np, name, None)):
        f = _cache[name] = _forward(getattr(_np, name), name)
        return f
    raise AttributeError(f"module 'cupy' has no attribute {name!r}")


def _function_for(func):
    """This module's implementation of a NumPy function, or None where CuPy has none."""
    module, name = getattr(func, "__module__", None), getattr(func, "__name__", "")
    if module == "numpy":
        if name in _EXPLICIT:
            return _EXPLICIT[name]
        try:
            return __getattr__(name)
        except AttributeError:
            return None
    if module == "numpy.linalg":
        return getattr(linalg, name, None)
    return None


# -- creation -------------------------------------------------------------------------------
def empty(shape, dtype=float, order="C"):
    return ndarray(shape, dtype, order=order)


def zeros(shape, dtype=float, order="C"):
    a = ndarray(shape, dtype, order=order)
    a._a.fill(0)
    return a


def ones(shape, dtype=float, order="C"):
    a = ndarray(shape, dtype, order=order)
    a._a.fill(1)
    return a


def full(shape, fill_value, dtype=None, order="C"):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, ndarray) else _np.array(fill_value).dtype
    a = ndarray(shape, dtype, order=order)
    a.fill(fill_value)
    return a


def _like(a, dtype, order, subok, shape):
    if subok is not None:
        raise TypeError("subok is not supported yet")
    proto = a._a if isinstance(a, ndarray) else _np.empty(a.shape, a.dtype)
    return _wrap(_np.empty_like(proto, dtype=_dtype(dtype or proto.dtype), order=order,
                                shape=shape))


def empty_like(prototype, dtype=None, order="K", subok=None, shape=None):
    return _like(prototype, dtype, order, subok, shape)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None):
    r = _like(a, dtype, order, subok, shape)
    r._a.fill(0)
    return r


def ones_like(a, dtype=None, order="K", subok=None, shape=None):
    r = _like(a, dtype, order, subok, shape)
    r._a.fill(1)
    return r


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None):
    r = _like(a, dtype, order, subok, shape)
    r.fill(fill_value)
    return r


def arange(start, stop=None, step=1, dtype=None):
    return _wrap(_np.arange(start, stop, step, dtype=None if dtype is None else _dtype(dtype)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return _wrap(_np.linspace(start, stop, num, endpoint, retstep,
                              None if dtype is None else _dtype(dtype), axis))


def eye(N, M=None, k=0, dtype=float, order="C"):
    return _wrap(_np.eye(N, M, k, _dtype(dtype), order))


def identity(n, dtype=float):
    return _wrap(_np.identity(n, _dtype(dtype)))


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    """A device array from a device array (copy: True always, None if needed, False never),
    from nested sequences of equally shaped device arrays, or from host data (copied in)."""
    if subok:
        raise NotImplementedError
    order = order or "K"
    if isinstance(obj, ndarray):
        a = obj._astype(obj.dtype if dtype is None else dtype, order, copy)
        if ndmin > a.ndim:
            a = a.reshape((1,) * (ndmin - a.ndim) + a.shape)
        return a
    leaves = _leaves(obj) if type(obj) in (list, tuple) else []
    if leaves and all(isinstance(x, ndarray) for x in leaves) and \
            len({x.shape for x in leaves}) == 1:
        stacked = _np.stack([x._a for x in leaves]).reshape(_nested_shape(obj))
        r = _wrap(stacked.astype(stacked.dtype if dtype is None else _dtype(dtype), copy=False))
        return r.reshape((1,) * (ndmin - r.ndim) + r.shape) if ndmin > r.ndim else r
    if order.upper() in ("K", "A"):
        order = "F" if isinstance(obj, _np.ndarray) and obj.flags.fnc else "C"
    a_cpu = _np.array(obj, dtype=dtype, order=order, ndmin=ndmin)  # a new host buffer
    return _wrap(a_cpu.astype(_dtype(a_cpu.dtype.newbyteorder("<")), copy=False))


def _leaves(obj):
    if type(obj) in (list, tuple):
        return [leaf for x in obj for leaf in _leaves(x)]
    return [obj]


def _nested_shape(obj):
    if type(obj) in (list, tuple):
        return (len(obj),) + _nested_shape(obj[0])
    return obj.shape


def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
    return array(a, dtype, copy, order, blocking=blocking)


asanyarray = asarray


def ascontiguousarray(a, dtype=None):
    if not isinstance(a, ndarray):
        raise TypeError(f"Argument 'a' has incorrect type (expected cupy.ndarray, got "
                        f"{type(a).__name__})")
    r = a._astype(a.dtype if dtype is None else dtype, "C", None)
    return r.reshape(1) if r.ndim == 0 else r


def asfortranarray(a, dtype=None):
    if not isinstance(a, ndarray):
        raise TypeError(f"Argument 'a' has incorrect type (expected cupy.ndarray, got "
                        f"{type(a).__name__})")
    r = a._astype(a.dtype if dtype is None else dtype, "F", None)
    return r.reshape(1) if r.ndim == 0 else r


def copy(a, order="K"):
    return a.copy(order=order)


def take(a, indices, axis=None, out=None):
    return a.take(indices, axis, out)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A host copy: of a device array via get(), of anything else via numpy.asarray."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out, blocking=blocking)
    if out is None:
        return _np.asarray(a, order=order)
    out[...] = a
    return out


_EXPLICIT = {f.__name__: f for f in (
    empty, zeros, ones, full, empty_like, zeros_like, ones_like, full_like, arange, linspace, eye,
    identity, copy, take, ascontiguousarray, asfortranarray)}


def get_array_module(*args):
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else _np


def is_available():
    return True


# ---------------------------------------------------------------------------------------------
# submodules: cuda, linalg, random
# ---------------------------------------------------------------------------------------------
def _module(name, doc, **members):
    m = types.ModuleType(name, doc)
    m.__dict__.update(members)
    return m


_memory = _module("cupy.cuda.memory", "Device memory of the emulated device.",
                  MemoryPool=MemoryPool, MemoryPointer=MemoryPointer, Memory=_Memory,
                  UnownedMemory=UnownedMemory, OutOfMemoryError=OutOfMemoryError, alloc=alloc)
_stream = _module("cupy.cuda.stream", "CUDA streams and events.", Stream=Stream, Event=Event,
                  get_current_stream=get_current_stream, get_elapsed_time=get_elapsed_time)
_device = _module("cupy.cuda.device", "CUDA devices.", Device=Device,
                  get_device_id=runtime.getDevice)
cuda = _module("cupy.cuda", "The emulated CUDA device (one device, id 0).",
               runtime=runtime, memory=_memory, stream=_stream, device=_device, Device=Device,
               Stream=Stream, Event=Event, get_current_stream=get_current_stream,
               get_elapsed_time=get_elapsed_time, MemoryPool=MemoryPool,
               MemoryPointer=MemoryPointer, UnownedMemory=UnownedMemory, alloc=alloc,
               get_device_id=runtime.getDevice, is_available=is_available,
               OutOfMemoryError=OutOfMemoryError, MemoryHook=MemoryHook)


def _as_strided(x, shape=None, strides=None):
    """cupy.lib.stride_tricks.as_strided: a view of x's memory with these shape and strides."""
    if not isinstance(x, ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    view = _np.lib.stride_tricks.as_strided(x._a, shape, strides)
    return ndarray._of(view, x._mem, None)  # as CuPy's: made from a memory pointer, no base


lib = _module("cupy.lib", "Array tools.", stride_tricks=_module(
    "cupy.lib.stride_tricks", "Views with given strides.", as_strided=_as_strided))
linalg = _module("cupy.linalg", "numpy.linalg on device arrays.",
                 LinAlgError=_np.linalg.LinAlgError,
                 **{n: _forward(getattr(_np.linalg, n), n) for n in _LINALG_NAMES})


def _float_dtype(dtype):
    dt = _np.dtype(dtype)
    if dt.char not in "fd":
        raise TypeError("cupy.random only supports float32 and float64")
    return dt


class RandomState:
    """CuPy's RandomState interface; the numbers come from NumPy's generator (so they differ
    from cuRAND's) and are copied to the device."""

    def __init__(self, seed=None):
        self._rs = _np.random.RandomState(seed)

    def seed(self, seed=None):
        self._rs.seed(seed)

    def random_sample(self, size=None, dtype=float):
        return _wrap(_np.asarray(self._rs.random_sample(size), _float_dtype(dtype)))

    def rand(self, *size, dtype=float):
        return self.random_sample(size or None, dtype)

    def standard_normal(self, size=None, dtype=float):
        return _wrap(_np.asarray(self._rs.standard_normal(size), _float_dtype(dtype)))

    def randn(self, *size, dtype=float):
        return self.standard_normal(size or None, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        loc, scale = _unwrap(loc, []), _unwrap(scale, [])
        return _wrap(_np.asarray(self._rs.normal(loc, scale, size), _float_dtype(dtype)))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        low, high = _unwrap(low, []), _unwrap(high, [])
        return _wrap(_np.asarray(self._rs.uniform(low, high, size), _float_dtype(dtype)))

    def randint(self, low, high=None, size=None, dtype="l"):
        return _wrap(_np.asarray(self._rs.randint(low, high, size), _dtype(dtype)))

    def permutation(self, num):
        return _wrap(self._rs.permutation(num._a if isinstance(num, ndarray) else num))

    def shuffle(self, a):
        if not isinstance(a, ndarray):
            raise TypeError("The array must be cupy.ndarray")
        self._rs.shuffle(a._a)


class Generator:
    """numpy.random.Generator's interface for the methods CuPy's Generator has."""

    def __init__(self, seed=None):
        self._g = _np.random.default_rng(seed)

    def random(self, size=None, dtype=_np.float64):
        return _wrap(self._g.random(size, _float_dtype(dtype)))

    def standard_normal(self, size=None, dtype=_np.float64):
        return _wrap(self._g.standard_normal(size, _float_dtype(dtype)))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return _wrap(self._g.normal(_unwrap(loc, []), _unwrap(scale, []), size))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=_np.float64):
        r = self._g.uniform(_unwrap(low, []), _unwrap(high, []), size)
        return _wrap(_np.asarray(r, _float_dtype(dtype)))

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        return _wrap(self._g.integers(low, high, size, _dtype(dtype), endpoint))


_global_rs = RandomState()


def _global(method):
    def f(*args, **kwargs):
        return getattr(_global_rs, method)(*args, **kwargs)
    f.__name__ = method
    return f


random = _module("cupy.random", "Random numbers on the device (NumPy's generators).",
                 RandomState=RandomState, Generator=Generator, default_rng=Generator,
                 seed=_global("seed"), rand=_global("rand"), randn=_global("randn"),
                 random_sample=_global("random_sample"), random=_global("random_sample"),
                 standard_normal=_global("standard_normal"), normal=_global("normal"),
                 uniform=_global("uniform"), randint=_global("randint"),
                 permutation=_global("permutation"), shuffle=_global("shuffle"),
                 get_random_state=lambda: _global_rs)


def install(monkeypatch):
    """Make `import cupy` (and cupy.cuda, cupy.cuda.runtime, ...) give this module, for the
    test that `monkeypatch` belongs to. Returns the module."""
    this = sys.modules[__name__]
    for name, module in (("cupy", this), ("cupy.cuda", cuda), ("cupy.cuda.runtime", runtime),
                         ("cupy.cuda.memory", _memory), ("cupy.cuda.stream", _stream),
                         ("cupy.cuda.device", _device), ("cupy.linalg", linalg),
                         ("cupy.random", random)):
        monkeypatch.setitem(sys.modules, name, module)
    return this
