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
- "cuda" is named here so that asking for it says why it cannot be used yet.

The native kernels come from one registry keyed (family, direction, dtype,
device). Each binding file lists its entry points there (def_kernel in
native/registry.h), so a new primitive family adds keys, not code here.

The workspace is one allocator per device that every primitive asks for
scratch memory (convolution's lowered matrix now): a buffer per thread that
grows to the largest request and is kept, as frameworks over cuDNN keep
theirs, with an optional size limit, statistics and clear().
"""
import threading

import numpy as np

from . import _native

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
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install cupy-cuda12x); use device 'cpu'"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return f"no GPU can be used ({e}); use device 'cpu'"
    if count == 0:
        return "no GPU was found; use device 'cpu'"
    return ("the CUDA kernels are compiled in, but tensors on 'cuda' (CuPy arrays) are not part of "
            "this version yet; use 'cudasim' to run the same kernels on the CPU emulator")


def get(dev, fn="tensor"):
    """`dev` (None, a name or a device) as an available device; None means 'cpu'.
    An unavailable device raises RuntimeError saying why."""
    if dev is None:
        return CPU
    try:
        d = dev if isinstance(dev, device) else device(dev)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{fn}: {e}") from None
    reason = unavailable_reason(d.type)
    if reason is not None:
        raise RuntimeError(f"{fn}: device {str(d)!r} is not available: {reason}")
    if d.type == "cudasim" and d.index not in (None, 0):
        raise RuntimeError(f"{fn}: device {str(d)!r} is not available: the emulator is one device, "
                           f"'cudasim' (or 'cudasim:0')")
    return CPU if d.type == "cpu" else CUDASIM if d.type == "cudasim" else d


class CudaSimArray(np.ndarray):
    """An array of device "cudasim": host memory standing for a GPU's.

    A plain NumPy subclass; NumPy keeps the type through arithmetic, slicing and
    empty_like, so results stay on the device. Make one with devices.empty /
    zeros / to_device (or Tensor.to("cudasim")), not directly."""

    def __repr__(self):
        return super().__repr__().replace("CudaSimArray(", "cudasim_array(", 1)


def of(array):
    """The device an array (or a NumPy scalar) lives on."""
    if type(array) is np.ndarray:
        return CPU
    if isinstance(array, CudaSimArray):
        return CUDASIM
    if isinstance(array, (np.ndarray, np.generic)):
        return CPU
    raise TypeError(f"expected an array of a minifw device (numpy.ndarray), got "
                    f"{type(array).__name__}")


def is_array(a):
    """True for an array of any available device."""
    return isinstance(a, np.ndarray)


def array_module(dev):
    """The array library of a device: numpy for 'cpu' and 'cudasim'."""
    return np


def _placed(array, dev):
    return array.view(CudaSimArray) if dev.type == "cudasim" else array


def empty(shape, dtype, dev=CPU):
    return _placed(np.empty(shape, dtype=dtype), dev)


def zeros(shape, dtype, dev=CPU):
    return _placed(np.zeros(shape, dtype=dtype), dev)


def to_device(array, dev):
    """`array` on device `dev`: the same array when it is there already, else a copy
    (memory of its own, as a transfer to or from a GPU makes)."""
    if of(array) == dev:
        return array
    return _placed(np.array(array, subok=False, copy=True), dev)


# ---- native kernels -------------------------------------------------------------------

_kernels = {(family, direction, np.dtype(dtype), dev_type): fn
            for (family, direction, dtype, dev_type), fn in _native.kernels.items()}


def kernel(family, direction, dtype, dev=CPU):
    """The native entry point of primitive `family` ('conv', 'pool', ...) in `direction`
    ('forward', 'backward', ...) for `dtype` on `dev`."""
    try:
        return _kernels[family, direction, dtype, dev.type]
    except KeyError:
        pass
    known = sorted({k[:2] for k in _kernels})
    if (family, direction) not in known:
        raise KeyError(f"no native kernel {family!r} {direction!r}; known: "
                       f"{', '.join(f'{f}/{d}' if d else f for f, d in known)}") from None
    raise TypeError(f"native kernel {family!r} {direction!r} has no {np.dtype(dtype).name} variant "
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

_NO_BYTES = np.empty(0, np.uint8)


class Workspace:
    """Scratch memory of one device for the primitives (e.g. convolution's lowered matrix).

    get(nbytes) returns a byte buffer of at least nbytes, one per thread, grown to the
    largest request and then kept, so repeated calls pay neither allocation nor first
    touch. `limit` (bytes, None for no limit) bounds one request: auto-chosen convolution
    algorithms keep under it, and an explicit request over it raises MemoryError.
    `current_bytes` is what the buffers hold now, `peak_bytes` the most they have held
    since the last clear() or reset_peak().
    """

    def __init__(self, dev):
        self.device = dev
        self._limit = None
        self._buffers = {}  # thread ident -> buffer
        self._lock = threading.Lock()
        self._peak = 0

    @property
    def limit(self):
        return self._limit

    @limit.setter
    def limit(self, nbytes):
        if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, int)
                                   or nbytes < 0):
            raise ValueError(f"Workspace.limit: expected None or an int >= 0 (bytes), got {nbytes!r}")
        self._limit = nbytes

    def fits(self, nbytes):
        return self._limit is None or nbytes <= self._limit

    def get(self, nbytes):
        if not self.fits(nbytes):
            raise MemoryError(f"workspace: {nbytes:,} bytes requested on {self.device}, over the "
                              f"limit of {self._limit:,} bytes (minifw.devices.workspace"
                              f"({str(self.device)!r}).limit)")
        if nbytes == 0:
            return _NO_BYTES  # nothing to hold: not counted
        ident = threading.get_ident()
        buf = self._buffers.get(ident)
        if buf is None or buf.size < nbytes:
            with self._lock:  # release the smaller buffer before allocating the larger one
                self._buffers.pop(ident, None)
            buf = None
            buf = empty(nbytes, np.uint8, self.device)
            with self._lock:
                self._buffers[ident] = buf
                self._peak = max(self._peak, self.current_bytes)
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
                "limit_bytes": self._limit}

    def __repr__(self):
        return (f"Workspace(device='{self.device}', current_bytes={self.current_bytes}, "
                f"peak_bytes={self.peak_bytes}, limit={self._limit})")


_workspaces = {}


def workspace(dev=CPU):
    """The workspace allocator of a device."""
    dev = get(dev, "workspace")
    ws = _workspaces.get(dev)
    if ws is None:
        ws = _workspaces.setdefault(dev, Workspace(dev))
    return ws
