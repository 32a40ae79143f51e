"""minifw.Tensor: one NumPy array plus what autograd needs (requires_grad, grad, grad_fn).

Dtypes are float32 and float64 (the default for Python floats is float32, or
what minifw.set_default_dtype chose), int64 (the default for Python ints),
int32 and bool (results of comparisons). Binary operations promote as PyTorch
does: a tensor keeps its dtype against Python numbers of its kind, an integer
tensor meets a float number as the default float dtype, int32 meets int64 as
int64, float32 meets float64 as float64, and an integer tensor meets a float
tensor as that float dtype. int32 is a storage dtype: the native primitives
take float32/float64 data and int64 indices, and say so when given int32.

In-place methods (add_, mul_, masked_fill_, x[i] = v, ...) follow PyTorch's
rules for autograd: they are refused on a leaf that requires grad (outside
no_grad), recorded on other tensors, and counted by a version counter that a
later backward checks (see minifw.autograd, "In-place operations").

A tensor's device is where its array lives (minifw.devices): "cpu" (a NumPy
array), "cuda" (a CuPy array on the GPU) or "cudasim" (a NumPy array standing for
a GPU's, where minifw's CUDA kernels run on the CPU emulator). Tensors are made
on a device (device=...) or moved there (Tensor.to); an operation's tensors
must share one, and its results stay there, as in PyTorch.

Every differentiable method applies a Function from minifw.functions; see
minifw.autograd for the graph walk.
"""
import builtins
import collections
import itertools
import math
import numbers
import operator
import warnings
import weakref

import numpy as np

from . import autograd as _autograd
from . import devices
from . import random as _random
from .checks import TENSOR_DTYPE_NAMES as _DTYPE_NAMES
from .checks import TENSOR_DTYPES as _DTYPES
from .checks import check_dim as _dim
from .checks import check_bool as _bool
from .checks import check_choice as _choice
from .checks import check_dims as _dims
from .checks import check_int as _int
from .checks import check_real as _real
from .checks import is_int as _is_int
from .checks import check_sizes as _shape_args
from .checks import check_tensor_dtype as _dtype_arg
from .functions import activation as _activation
from .functions import distance as _distance
from .functions import einsum as _einsum
from .functions import elementwise as _elementwise
from .functions import indexing as _indexing
from .functions import linear as _linear
from .functions import normalization as _normalization
from .functions import reductions as _reductions
from .functions import shape as _shape
from .functions import softmax as _softmax
from .functions import sorting as _sorting
from .functions import zero_gradient as _zero_gradient

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
bool_ = np.dtype(np.bool_)

MaxResult = collections.namedtuple("MaxResult", "values indices")
SortResult = collections.namedtuple("SortResult", "values indices")
TopKResult = collections.namedtuple("TopKResult", "values indices")
MedianResult = collections.namedtuple("MedianResult", "values indices")
CumulativeResult = collections.namedtuple("CumulativeResult", "values indices")
KthValueResult = collections.namedtuple("KthValueResult", "values indices")
ModeResult = collections.namedtuple("ModeResult", "values indices")
AminmaxResult = collections.namedtuple("AminmaxResult", "min max")

# Tensor.type() names, as PyTorch's 'torch.FloatTensor' ('torch.cuda.FloatTensor' on a GPU)
_TYPE_NAMES = {float32: "FloatTensor", float64: "DoubleTensor", int64: "LongTensor",
               int32: "IntTensor", bool_: "BoolTensor"}
_TYPE_DTYPES = {name: dtype for dtype, name in _TYPE_NAMES.items()}

_default_dtype = float32  # of Python floats and of float creation functions


def get_default_dtype():
    """The dtype Python floats and the float creation functions (zeros, randn, ...) get when
    none is given: float32 unless set_default_dtype changed it, as in PyTorch."""
    return _default_dtype


def set_default_dtype(d):
    """Make float32 or float64 the default float dtype (torch.set_default_dtype). Layers of
    minifw.nn create their parameters in float32 regardless; convert them with .double()."""
    global _default_dtype
    dtype = _dtype_arg(d, "set_default_dtype")
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating point dtypes (float32, float64) can be "
                        f"the default; got {dtype}")
    _default_dtype = dtype


def _natural_dtype(a):
    """The minifw dtype an array of NumPy dtype a.dtype becomes when no dtype is given."""
    kind = a.dtype.kind
    if a.dtype in _DTYPES:
        return a.dtype
    if kind == "f":
        return float32
    if kind in "iu":
        return int64
    raise TypeError(f"tensor: cannot make a tensor from data of dtype {a.dtype} (supported: "
                    f"{_DTYPE_NAMES})")


def _infer_shape(fn, shape, old_shape):
    """`shape` with its one -1 (if any) replaced so the element count stays that of old_shape."""
    n, known = math.prod(old_shape), math.prod(s for s in shape if s != -1)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    ok = len(unknown) <= 1 and all(s >= -1 for s in shape)
    if ok and unknown:
        ok = known != 0 and n % known == 0  # with known == 0, -1 could be anything
        target = shape[:unknown[0]] + (n // known if ok else -1,) + shape[unknown[0] + 1:]
    else:
        ok, target = ok and known == n, shape
    if not ok:
        raise ValueError(f"{fn}: shape {shape} is invalid for a tensor of shape {old_shape} "
                         f"({n} elements)")
    return target


def _cuda_device(fn, device):
    """The device that .cuda(device) asks for ("cuda", "cuda:<index>"), if it can be used;
    else the RuntimeError of minifw.devices saying why not."""
    name = "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device
    if devices.device(name).type != "cuda":
        raise ValueError(f"{fn}: expected a cuda device, got {str(name)!r}")
    return devices.get(name, fn)


def _scalar(number, dtype):
    """A Python number as a NumPy scalar of `dtype`: an operand every device's array library
    (NumPy, CuPy) takes as a number of that dtype."""
    return np.asarray(number, dtype=dtype)[()]


class Size(tuple):
    """PyTorch's torch.Size: a tuple of sizes with numel(). Tensor.shape and size() stay
    plain tuples (equal to a Size of the same sizes): wrapping every shape read costs a
    measurable 1.5% on workloads of small operations. The legacy constructors take a Size
    as sizes (Tensor(minifw.Size([2, 3])) is a 2 x 3 tensor), as PyTorch's do."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        if not isinstance(sizes, (tuple, list, range)):
            raise TypeError(f"Size: expected a sequence of ints, got {type(sizes).__name__}")
        sizes = tuple(sizes)
        for s in sizes:
            if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
                raise TypeError(f"Size: sizes must be ints, got {type(s).__name__} {s!r} in "
                                f"{sizes!r}")
        return super().__new__(cls, (int(s) for s in sizes))

    def numel(self):
        """The number of elements a tensor of these sizes holds (1 for no sizes)."""
        return math.prod(self)

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if isinstance(index, slice) else got

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + other)

    def __repr__(self):
        return f"minifw.Size({list(self)})"


def _check_size(fn, size):
    if any(s < 0 for s in size):
        raise ValueError(f"{fn}: sizes must be >= 0, got {size}")
    return size


def _category(dtype):
    return {"b": 0, "i": 1, "u": 1, "f": 2}[dtype.kind]


def _scalar_first(fn, name, first, rest):
    """The operands of PyTorch's deprecated overloads that put a number first (x.add_(alpha,
    other), x.addcmul_(value, tensor1, tensor2)), with a warning: (the tensors, the number);
    one tensor alone, not in a tuple."""
    tensors = ", ".join(f"Tensor {n}" for n in (["other"] if len(rest) == 1 else ["tensor1", "tensor2"]))
    if not isinstance(first, (numbers.Number, np.bool_)) or len(rest) > 2 or \
            not all(isinstance(t, Tensor) for t in rest):
        raise TypeError(f"{fn}: takes ({tensors.replace('Tensor ', '')}, *, {name}=1), or the "
                        f"deprecated ({name}, {tensors.replace('Tensor ', '')}) with {name} a number")
    warnings.warn(f"{fn}({name}, {tensors.replace('Tensor ', '')}) with the number first is deprecated; "
                  f"write {fn}({tensors.replace('Tensor ', '')}, {name}={name})", UserWarning, stacklevel=3)
    return (rest[0] if len(rest) == 1 else tuple(rest)), first


def _promote(a, b):
    """PyTorch's promotion of two dtypes (None: nothing yet): the higher category wins,
    within one the wider (int64 with float32 is float32, not NumPy's float64)."""
    if a is None or b is None:
        return b if a is None else a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    return a if a.itemsize >= b.itemsize else b


def _combine(higher, lower):
    """PyTorch's combination of a higher participant class's dtype with a lower one's: the
    lower class counts only where its category (bool < integer < float) is above."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return _promote(higher, lower)
    return higher


def _result_dtype(*operands):
    """PyTorch's type promotion: operands fall in three classes, tensors with dimensions,
    0-d tensors and Python numbers (a float counts as the default dtype, an int as int64);
    a lower class changes the dtype only when it brings a higher category (bool < integer <
    float), so torch.ones(2) * torch.tensor(2.0, dtype=float64) stays float32."""
    dims = zero = numbers_ = None
    for o in operands:
        if isinstance(o, Tensor):
            if o.ndim:
                dims = _promote(dims, o.dtype)
            else:
                zero = _promote(zero, o.dtype)
        else:
            numbers_ = _promote(numbers_, bool_ if isinstance(o, (bool, np.bool_)) else int64
                                if isinstance(o, numbers.Integral) else _default_dtype)
    return _combine(dims, _combine(zero, numbers_))


def _check_integer_range(fn, a, dtype):
    """Every value of the host array `a` must be representable in the integer `dtype` (NumPy's
    cast would wrap 2**64 - 1 to -1, or make garbage of inf), as PyTorch refuses."""
    info = np.iinfo(dtype)
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise OverflowError(f"{fn}: value {a[~np.isfinite(a)].flat[0]} cannot be converted to "
                            f"{dtype} without overflow")
    low, high = a.min(), a.max()
    if (low < info.min) if a.dtype.kind != "u" else False:
        raise OverflowError(f"{fn}: value {low} cannot be converted to {dtype} without overflow")
    # a float's comparison with info.max (2**63 - 1) rounds it to 2**63: compare with that
    if (high >= -float(info.min)) if a.dtype.kind == "f" else (high > info.max):
        raise OverflowError(f"{fn}: value {high} cannot be converted to {dtype} without overflow")


def _trunc_divide(a, b):
    """a / b rounded toward zero (div's rounding_mode="trunc"); exact for integers."""
    if a.dtype.kind == "f":
        return np.trunc(np.true_divide(a, b))
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a))  # floor went one below toward zero


def _same_device(fn, t, *others):
    """Every Tensor among `others` must be on t's device (no 0-d CPU exception: these are
    index and mask tensors, which PyTorch wants where the data is)."""
    for o in others:
        if isinstance(o, Tensor) and o.device != t.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {t.device} and {o.device} (in {fn}); move "
                               f"them to one device with .to(device)")


def _index_tensor(fn, name, index, t):
    """`index` must be an integer Tensor on t's device; returns it."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor of int64 indices, got "
                        f"{type(index).__name__}")
    if index.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold integers (int64), got dtype {index.dtype}")
    _same_device(fn, t, index)
    return index


def _check_index_values(fn, index, size, dim):
    """Every value of the integer tensor `index` must be in [0, size): NumPy would wrap
    negative ones and CuPy any, where PyTorch raises."""
    if index.numel():
        low, high = int(index._data.min()), int(index._data.max())
        if low < 0 or high >= size:
            raise IndexError(f"{fn}: index {low if low < 0 else high} is out of bounds for "
                             f"dimension {dim} with size {size}")


class Tensor:
    """An n-dimensional array with reverse-mode automatic differentiation.

    Make one with minifw.tensor / zeros / ones / randn / ...; as PyTorch's legacy
    constructor, `Tensor(data)` is `minifw.tensor(data)` in the default float dtype (unless
    dtype= says otherwise) and `Tensor(2, 3)` a (2, 3) tensor of that dtype (zeros here).
    """

    # _version_counter, _history, _base: what in-place operations need (minifw.autograd,
    # "In-place operations"): the counter shared with the tensors sharing this memory, the
    # count of recorded in-place operations on that memory this tensor's history includes,
    # and the tensor this one is a view of (None if it is not a view).
    __slots__ = ("_data", "_grad", "grad_fn", "_output_nr", "_requires_grad", "_version_counter",
                 "_history", "_base", "_post_accumulate_grad_hooks", "__weakref__")
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operator
    __hash__ = object.__hash__  # __eq__ is elementwise

    def __init__(self, *args, dtype=None, device=None, requires_grad=False):
        dtype = _default_dtype if dtype is None else dtype
        if len(args) == 1 and isinstance(args[0], Size):  # Tensor(minifw.Size([2, 3])): sizes
            args = tuple(args[0])
        if all(isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_))
               for a in args):  # Tensor(), Tensor(2, 3): a size
            t = zeros(*(args or (0,)), dtype=dtype, device=device, requires_grad=requires_grad)
        elif len(args) == 1:
            if isinstance(args[0], (numbers.Number, np.bool_)):
                raise TypeError(f"Tensor: data must be a sequence (got {type(args[0]).__name__}); "
                                f"minifw.tensor makes a 0-d tensor of a number")
            t = tensor(args[0], dtype=dtype, device=device, requires_grad=requires_grad)
        else:
            raise TypeError(f"Tensor: expected data (one argument) or sizes (ints), got {args!r}")
        self._set(t._data, None, 0, t._requires_grad)

    def _set(self, data, grad_fn, output_nr, requires_grad):
        self._data, self._grad, self.grad_fn = data, None, grad_fn
        self._output_nr, self._requires_grad = output_nr, requires_grad
        self._version_counter, self._history, self._base = _autograd.VersionCounter(), 0, None
        self._post_accumulate_grad_hooks = None

    @classmethod
    def _make(cls, data, grad_fn=None, output_nr=0, version_counter=None):
        """Wrap an array produced inside minifw (no checks, no copy); with `version_counter`,
        one that shares another tensor's memory (detach)."""
        t = object.__new__(Tensor)
        t._set(data, grad_fn, output_nr, False)
        if version_counter is not None:
            t._version_counter, t._history = version_counter, version_counter.history
        return t

    # ---- what it is -----------------------------------------------------------------
    @property
    def data(self):
        """A tensor sharing this one's storage, detached from the graph, as in PyTorch:
        changes through it (p.data.add_(1)) change this tensor and are neither recorded nor
        counted by its version counter (detach() is the tracked way)."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        """Replace the storage with `value`'s (shape and dtype may change, as in PyTorch)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data: expected a Tensor, got {type(value).__name__} (wrap an "
                            f"array with minifw.from_numpy)")
        value = value._data
        if value.dtype not in _DTYPES:
            raise TypeError(f"Tensor.data: dtype must be one of {_DTYPE_NAMES}; got {value.dtype}")
        if self._requires_grad and value.dtype.kind != "f":
            raise RuntimeError(f"Tensor.data: a tensor that requires grad must hold floating point "
                               f"data; got {value.dtype}")
        self._data, self._base = value, None

    @property
    def grad(self):
        """The gradient backward accumulated into this tensor (None before the first)."""
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: {value.shape}, "
                                   f"the tensor's is {self.shape}")
            if value.dtype != self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: {value.dtype}, "
                                   f"the tensor's is {self.dtype}")
            if value.device != self.device:
                raise RuntimeError(f"assigned grad has data located on a different device: "
                                   f"{value.device}, the tensor is on {self.device}")
        self._grad = value

    shape = property(lambda self: self._data.shape)
    ndim = property(lambda self: self._data.ndim)
    dtype = property(lambda self: self._data.dtype)
    device = property(lambda self: devices.of(self._data))
    is_leaf = property(lambda self: self.grad_fn is None)
    is_cuda = property(lambda self: self.device.type == "cuda")
    mT = property(lambda self: self.transpose(-2, -1))

    def is_contiguous(self, memory_format=None):
        """Whether the elements lie in row-major order without gaps (a transpose or a strided
        slice is not), as PyTorch's (memory_format is accepted, contiguous_format only)."""
        return bool(self._data.flags.c_contiguous)

    @property
    def requires_grad(self):
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if requires_grad is not True and requires_grad is not False:
            requires_grad = _bool("requires_grad_", "requires_grad", requires_grad)
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("requires_grad_: you can only change requires_grad of leaf "
                                   "tensors; use detach() to get a tensor that does not require grad")
            return self
        if requires_grad and self.dtype.kind != "f":
            raise RuntimeError(f"requires_grad_: only tensors of floating point dtype can require "
                               f"gradients; this one is {self.dtype}")
        self._requires_grad = bool(requires_grad)
        return self

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs once per backward after this leaf's .grad holds all of that
        backward's gradient (as PyTorch's; DistributedDataParallel starts its all-reduce from
        it). Returns a handle whose remove() unregisters the hook."""
        if self.grad_fn is not None:
            raise RuntimeError("register_post_accumulate_grad_hook: post accumulate grad hooks cannot "
                               "be registered on non-leaf tensors")
        if not callable(hook):
            raise TypeError(f"register_post_accumulate_grad_hook: hook must be callable; got "
                            f"{type(hook).__name__}")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        return _autograd.HookHandle(self._post_accumulate_grad_hooks, hook)

    def register_hook(self, hook):
        """hook(grad) runs each time the gradient with respect to this tensor is computed; it
        may return a Tensor that replaces the gradient (or None). On a leaf it runs before the
        gradient is added into .grad. Returns a handle whose remove() unregisters it."""
        return _autograd.register_hook(self, hook)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in its .grad during backward (leaves always do)."""
        _autograd.retain_grad(self)

    retains_grad = property(lambda self: _autograd.retains_grad(self))

    @property
    def _version(self):
        """How many in-place operations have changed this tensor's memory (PyTorch's t._version)."""
        return self._version_counter.version

    def size(self, dim=None):
        if dim is None:
            return self.shape
        if self.ndim == 0:
            raise IndexError(f"size: dimension specified as {dim} but tensor has no dimensions")
        return self.shape[_dim("size", dim, self.ndim)]

    def dim(self):
        return self.ndim

    ndimension = dim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def element_size(self):
        """Bytes per element (4 for float32)."""
        return int(self._data.itemsize)

    def is_floating_point(self):
        return self.dtype.kind == "f"

    @staticmethod
    def _type_name(dtype, device):
        """'minifw.FloatTensor', or 'minifw.cuda.FloatTensor' on device "cuda" ('cudasim' alike):
        PyTorch's names with minifw for torch."""
        prefix = "minifw." if device.type == "cpu" else f"minifw.{device.type}."
        return prefix + _TYPE_NAMES[dtype]

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """With no dtype, the type's name ('minifw.FloatTensor', 'minifw.cuda.LongTensor'); else
        this tensor cast to `dtype` (a dtype or such a name: 'minifw.cuda.FloatTensor' also
        moves it to "cuda"; 'torch.' names are accepted too), itself when nothing changes.
        The only keyword besides these is the older name of non_blocking, 'async'."""
        unknown = sorted(set(kwargs) - {"async"})
        if unknown:
            raise TypeError(f"type: unexpected keyword argument {unknown[0]!r} (it takes dtype, "
                            f"non_blocking and the older name of non_blocking, 'async')")
        if dtype is None:
            return Tensor._type_name(self.dtype, self.device)
        if isinstance(dtype, _TypedTensor):  # t.type(minifw.LongTensor): a CPU tensor of its dtype
            return self.to("cpu", dtype.dtype)
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            module, _, name = dtype.rpartition(".")
            parts = module.split(".")
            if (parts[0] not in ("minifw", "torch") or len(parts) > 2 or name not in _TYPE_DTYPES
                    or (len(parts) == 2 and parts[1] not in devices.TYPES)):
                raise TypeError(f"type: unknown tensor type {dtype!r}; expected one of "
                                f"{', '.join(_TYPE_DTYPES)} after 'minifw.' (or 'minifw.cuda.')")
            return self.to(parts[1] if len(parts) == 2 else "cpu", _TYPE_DTYPES[name])
        return self.to(_dtype_arg(dtype, "type"))

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, element):
        """`element in t`: whether some element of t equals it (a number or a tensor,
        broadcast), as PyTorch's."""
        if not isinstance(element, (Tensor, numbers.Number, np.bool_)):
            raise TypeError(f"Tensor.__contains__ only supports a Tensor or a number, got "
                            f"{type(element).__name__}")
        return bool((self == element).any())

    # ---- conversions ---------------------------------------------------------------
    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item: only a tensor with one element can be converted to a Python "
                             f"number; this one has {self.numel()} (shape {self.shape})")
        return self._data.reshape(()).item()

    def _host_only(self, fn):
        """Refuse to hand out the array of a tensor that is not on the CPU, as PyTorch refuses
        for a CUDA tensor (a "cudasim" array is in host memory, but stands for a GPU's)."""
        if type(self._data) is not np.ndarray:
            raise TypeError(f"{fn}: can't convert a tensor on device {str(self.device)!r} to "
                            f"numpy; use tensor.cpu() to copy it to host memory first")

    def numpy(self):
        """The underlying array (shared, not copied) of a CPU tensor."""
        if self.requires_grad:
            raise RuntimeError("numpy: can't call numpy() on a tensor that requires grad; use "
                               "tensor.detach().numpy() instead")
        self._host_only("numpy")
        return self._data

    def tolist(self):
        return self._data.tolist()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack capsule of this tensor's memory (shared), for another library's
        from_dlpack (torch.from_dlpack, numpy.from_dlpack, cupy.from_dlpack)."""
        if self.requires_grad:
            raise RuntimeError("__dlpack__: can't export a tensor that requires grad; use "
                               "tensor.detach()")
        self._dlpack_exportable("__dlpack__")
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        self._dlpack_exportable("__dlpack_device__")
        return self._data.__dlpack_device__()

    def _dlpack_exportable(self, fn):
        """CPU arrays and CuPy's GPU arrays export through DLPack; a "cudasim" array (host
        memory standing for a GPU's) does not."""
        if type(self._data) is not np.ndarray and self.device.type != "cuda":
            raise TypeError(f"{fn}: a tensor on device {str(self.device)!r} has no DLPack "
                            f"device; copy it to the CPU with tensor.cpu() first")

    def __array__(self, dtype=None, copy=None):
        self._host_only("numpy.asarray")
        a = self._data if dtype is None else self._data.astype(dtype)
        return np.array(a, copy=True) if copy else a

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor with {self.numel()} elements is ambiguous")
        return bool(self.item())

    def __format__(self, spec):
        """A 0-d tensor formats as its number (f"{loss:.4f}"), as in PyTorch; others only
        without a format spec."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError("only an integer tensor with one element can be used as an index")
        return int(self.item())

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
        """to(device), to(dtype), to(device, dtype) or to(other_tensor) (its dtype and device).
        A move to another device is a copy there that autograd records, as in PyTorch;
        non_blocking is accepted for PyTorch's signature (copies here are synchronous)."""
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, devices.device) or (isinstance(a, str) and
                                                  a.partition(":")[0] in devices.TYPES):
                device = a
            else:
                dtype = a
        target = self.device if device is None else devices.get(device, "to")
        out = self
        if target != self.device:
            out = _elementwise.ToDevice.apply(self, device=target)
        if dtype is not None and _dtype_arg(dtype, "to") != out.dtype:
            return out._cast(_dtype_arg(dtype, "to"))
        return out.clone() if copy and out is self else out

    def cpu(self):
        """This tensor on the CPU: itself if it is there, else a copy."""
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        """This tensor on device "cuda" (or "cuda:<device>"), as in PyTorch: a CuPy array on
        the GPU. Without one (or without CuPy, or a build without the CUDA kernels) the error
        says why; "cudasim" runs the same CUDA kernels on the CPU emulator."""
        return self.to(_cuda_device("cuda", device))

    def _cast(self, dtype):
        if dtype == self.dtype:
            return self
        if self.requires_grad and dtype.kind == "f":
            return _elementwise.Cast.apply(self, dtype=dtype)
        return Tensor._make(self._data.astype(dtype))

    def float(self):
        return self._cast(float32)

    def double(self):
        return self._cast(float64)

    def long(self):
        return self._cast(int64)

    def int(self):
        return self._cast(int32)

    def bool(self):
        return self._cast(bool_)

    def type_as(self, other):
        return self._cast(other.dtype)

    # new_*: this tensor's dtype and device unless given, as in PyTorch
    def _like(self, dtype, device):
        return (self.dtype if dtype is None else dtype), (self.device if device is None else device)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        dtype, device = self._like(dtype, device)
        return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        dtype, device = self._like(dtype, device)
        return ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        dtype, device = self._like(dtype, device)
        return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        dtype, device = self._like(dtype, device)
        return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A copy of `data` as a new leaf, in this tensor's dtype and device unless given."""
        dtype, device = self._like(dtype, device)
        return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)

    # ---- autograd ------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Add d(self)/d(leaf) (times `gradient` for non-scalars) into every leaf's .grad, or
        with `inputs` only into those tensors' .grad. Saved arrays are freed on the way unless
        retain_graph=True (which defaults to create_graph); with create_graph=True the
        gradients are recorded, and can be differentiated again."""
        _autograd.backward([self], [gradient], retain_graph=retain_graph, create_graph=create_graph,
                           inputs=inputs)

    def detach(self):
        """The same data, cut off from the graph; it shares this tensor's version counter, so
        an in-place change through it is seen by the graph, as in PyTorch."""
        return Tensor._make(self._data, version_counter=self._version_counter)

    def detach_(self):
        self.grad_fn, self._requires_grad = None, False
        return self

    def clone(self):
        return _elementwise.Clone.apply(self)

    def contiguous(self):
        return self if self._data.flags.c_contiguous else self.clone()

    # ---- arithmetic ----------------------------------------------------------------
    def _binary(self, other, function, reverse=False, true_div=False):
        if isinstance(other, np.ndarray):
            other = tensor(other)
        if isinstance(other, Tensor):
            # the common case first: one dtype on both sides promotes to itself
            dtype = self.dtype if other.dtype == self.dtype else _result_dtype(self, other)
        elif type(other) is float and self.dtype.kind == "f":
            dtype = self.dtype  # a Python float never widens a float tensor
        elif not isinstance(other, (numbers.Number, np.bool_)):
            return NotImplemented
        else:
            dtype = _result_dtype(self, other)
        if true_div and dtype.kind != "f":
            dtype = _default_dtype
        elif dtype.kind == "b" and function is _elementwise.Pow:
            raise TypeError("pow: not implemented for bool tensors (both operands bool); "
                            "convert one to an integer or float dtype")
        a = self._cast(dtype)
        b = other._cast(dtype) if isinstance(other, Tensor) else _scalar(other, dtype)
        return function.apply(b, a) if reverse else function.apply(a, b)

    def __add__(self, other):
        return self._binary(other, _elementwise.Add)

    def __radd__(self, other):
        return self._binary(other, _elementwise.Add, reverse=True)

    def __sub__(self, other):
        return self._binary(other, _elementwise.Sub)

    def __rsub__(self, other):
        return _autograd.rename(self._binary(other, _elementwise.Sub, reverse=True), "RsubBackward1",
                                self)

    def __mul__(self, other):
        return self._binary(other, _elementwise.Mul)

    def __rmul__(self, other):
        return self._binary(other, _elementwise.Mul, reverse=True)

    def __truediv__(self, other):
        return self._binary(other, _elementwise.Div, true_div=True)

    def __rtruediv__(self, other):
        return self._binary(other, _elementwise.Div, reverse=True, true_div=True)

    def __pow__(self, other):
        return self._binary(other, _elementwise.Pow)

    def __rpow__(self, other):
        return self._binary(other, _elementwise.Pow, reverse=True)

    def __neg__(self):
        return _elementwise.Neg.apply(self)

    def __pos__(self):
        return self

    def __matmul__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        if self.ndim == 0 or other.ndim == 0:
            raise ValueError(f"matmul: both operands need at least 1 dimension; got shapes "
                             f"{self.shape} and {other.shape}")
        k_a, k_b = self.shape[-1], other.shape[0 if other.ndim == 1 else -2]
        if k_a != k_b:
            raise ValueError(f"matmul: shapes {self.shape} and {other.shape} cannot be multiplied "
                             f"({k_a} != {k_b})")
        dtype = _result_dtype(self, other)
        return _linear.MatMul.apply(self._cast(dtype), other._cast(dtype))

    def __rmatmul__(self, other):
        if isinstance(other, Tensor):  # called directly: other @ self, as PyTorch's
            return other.__matmul__(self)
        return tensor(other).__matmul__(self) if isinstance(other, np.ndarray) else NotImplemented

    def add(self, other, *args, alpha=1):
        if args:  # the deprecated add(alpha, other)
            other, alpha = _scalar_first("add", "alpha", other, args)
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other, *args, alpha=1):
        if args:
            other, alpha = _scalar_first("sub", "alpha", other, args)
        return self - (other if alpha == 1 else other * alpha)

    mul = multiply = __mul__
    true_divide = __truediv__
    subtract = sub
    matmul = __matmul__

    def div(self, other, *, rounding_mode=None):
        """self / other; rounding_mode "trunc" rounds the quotient toward zero, "floor" down
        (floor_divide), both keeping integer operands integer, as torch.div."""
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode != "trunc":
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor'; got "
                             f"{rounding_mode!r}")
        return self._integral_or_float(other, "div", _trunc_divide)

    divide = div

    # ---- floor division, remainder, bitwise and logical operators ----------------------
    def _operands(self, other, fn, reverse=False):
        """(a, b, dtype, device): the two operands' arrays (or a number as a NumPy scalar) of
        their promoted dtype on their device, in the operator's order; None when `other` is
        not an operand (the operator then returns NotImplemented)."""
        if isinstance(other, np.ndarray):
            other = tensor(other)
        if not isinstance(other, (Tensor, numbers.Number, np.bool_)):
            return None
        dtype = _result_dtype(self, other)
        dev = _autograd.common_device(fn, (self, other))
        a = _autograd._data_on(self._cast(dtype), dev)
        b = _autograd._data_on(other._cast(dtype), dev) if isinstance(other, Tensor) else \
            _scalar(other, dtype)
        return (b, a, dtype, dev) if reverse else (a, b, dtype, dev)

    def _integral_or_float(self, other, fn, compute, reverse=False):
        """compute(a, b) on the promoted operands, not differentiable; an integer division by
        zero raises ZeroDivisionError (NumPy would give 0 and a warning)."""
        got = self._operands(other, fn, reverse)
        if got is None:
            return NotImplemented
        a, b, dtype, dev = got
        if dtype.kind == "b":
            raise TypeError(f"{fn}: not implemented for bool tensors; convert them with .long() "
                            f"or .float() first")
        if dtype.kind != "f" and not bool(np.all(b != 0)):
            raise ZeroDivisionError(f"{fn}: integer division by zero")
        with np.errstate(divide="ignore", invalid="ignore"):  # floats: inf and nan, as PyTorch
            return Tensor._make(_autograd.on_device(compute(a, b), dev))

    def __floordiv__(self, other):
        return self._integral_or_float(other, "floor_divide", np.floor_divide)

    def __rfloordiv__(self, other):
        return self._integral_or_float(other, "floor_divide", np.floor_divide, reverse=True)

    floor_divide = __floordiv__

    def _remainder(self, other, reverse=False):
        got = self._operands(other, "remainder", reverse)
        if got is None:
            return NotImplemented
        if got[2].kind != "f":
            return self._integral_or_float(other, "remainder", np.remainder, reverse)
        a, b = (self, other) if not reverse else (other, self)
        a, b = (x._cast(got[2]) if isinstance(x, Tensor) else _scalar(x, got[2]) for x in (a, b))
        return _elementwise.Remainder.apply(a, b)

    def __mod__(self, other):
        """The remainder with the divisor's sign (Python's %, torch.remainder); differentiable
        for floats."""
        return self._remainder(other)

    def __rmod__(self, other):
        return self._remainder(other, reverse=True)

    remainder = __mod__

    def _bitwise(self, other, fn, ufunc, reverse=False):
        for t in (self, other):
            if isinstance(t, Tensor) and t.dtype.kind not in "biu":
                raise TypeError(f"{fn}: only integer and bool tensors are supported, got {t.dtype}")
        if not isinstance(other, (Tensor, numbers.Integral, np.bool_, np.integer, np.ndarray)):
            return NotImplemented
        got = self._operands(other, fn, reverse)
        a, b, _, dev = got
        return Tensor._make(_autograd.on_device(ufunc(a, b), dev))

    def __and__(self, other):
        return self._bitwise(other, "bitwise_and", np.bitwise_and)

    def __rand__(self, other):
        return self._bitwise(other, "bitwise_and", np.bitwise_and, reverse=True)

    def __or__(self, other):
        return self._bitwise(other, "bitwise_or", np.bitwise_or)

    def __ror__(self, other):
        return self._bitwise(other, "bitwise_or", np.bitwise_or, reverse=True)

    def __xor__(self, other):
        return self._bitwise(other, "bitwise_xor", np.bitwise_xor)

    def __rxor__(self, other):
        return self._bitwise(other, "bitwise_xor", np.bitwise_xor, reverse=True)

    def __invert__(self):
        if self.dtype.kind not in "biu":
            raise TypeError(f"bitwise_not: ~ is only implemented on integer and bool tensors, got "
                            f"{self.dtype}")
        return Tensor._make(_autograd.on_device(np.invert(self._data), self.device))

    bitwise_and, bitwise_or, bitwise_xor, bitwise_not = __and__, __or__, __xor__, __invert__

    def _logical_pair(self, other, fn, ufunc):
        dev = _autograd.common_device(fn, (self, other))
        b = _autograd._data_on(other, dev) if isinstance(other, Tensor) else other
        return Tensor._make(_autograd.on_device(ufunc(_autograd._data_on(self, dev), b), dev))

    def logical_and(self, other):
        return self._logical_pair(other, "logical_and", np.logical_and)

    def logical_or(self, other):
        return self._logical_pair(other, "logical_or", np.logical_or)

    def logical_xor(self, other):
        return self._logical_pair(other, "logical_xor", np.logical_xor)

    def logical_not(self):
        return Tensor._make(_autograd.on_device(np.logical_not(self._data), self.device))

    def maximum(self, other):
        """The larger of the two elementwise (broadcast); at ties each gets half the gradient."""
        return self._pairwise(other, "maximum", smallest=False)

    def minimum(self, other):
        return self._pairwise(other, "minimum", smallest=True)

    def _pairwise(self, other, fn, smallest):
        if not isinstance(other, Tensor):
            raise TypeError(f"{fn}: other must be a Tensor, got {type(other).__name__}")
        dtype = _result_dtype(self, other)
        return _elementwise.Maximum.apply(self._cast(dtype), other._cast(dtype), smallest=smallest)

    def neg(self):
        return -self

    negative = neg

    def pow(self, exponent):
        return self ** exponent

    # ---- comparisons -----------------------------------------------------------------
    def _compare(self, other, op):
        dev = _autograd.common_device(op.__name__, (self, other))
        other = _autograd._data_on(other, dev) if isinstance(other, Tensor) else other
        return Tensor._make(_autograd.on_device(op(_autograd._data_on(self, dev), other), dev))

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

    def equal(self, other):
        """True when `other` has this shape and these values (a Python bool)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"equal: other must be a Tensor, got {type(other).__name__}")
        _autograd.common_device("equal", (self, other))
        return self.shape == other.shape and bool((self == other).all())

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|self - other| <= atol + rtol * |other| elementwise (bool tensor), as torch.isclose."""
        dev = _autograd.common_device("isclose", (self, other))
        other = _autograd._data_on(other, dev) if isinstance(other, Tensor) else other
        return Tensor._make(_autograd.on_device(np.isclose(
            _autograd._data_on(self, dev), other, rtol=rtol, atol=atol, equal_nan=equal_nan), dev))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def all(self, dim=None, keepdim=False):
        return self._logical("all", np.all, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return self._logical("any", np.any, dim, keepdim)

    def _logical(self, name, reduce, dim, keepdim):
        axes = None if self.ndim == 0 else _dims(name, dim, self.ndim)
        return Tensor._make(_autograd.on_device(reduce(self._data, axis=axes, keepdims=keepdim),
                                                self.device))

    # ---- in place ----------------------------------------------------------------------
    def _inplace_records(self, *operands, name=None, arg="the tensor"):
        """Whether autograd records an in-place operation on this tensor (with `operands`):
        in grad mode, when it or an operand requires grad. Raises where PyTorch refuses one
        (PyTorch's sentence, after `name`, the operation, when given, and naming `arg`)."""
        if not _autograd.is_grad_enabled():
            return False
        where = "" if name is None else f"{name}: "
        if self._requires_grad and self.grad_fn is None:
            raise RuntimeError(f"{where}a leaf Variable that requires grad is being used in an in-place "
                               f"operation. ({arg} is a leaf that requires grad: change a clone, or "
                               f"change it inside minifw.no_grad())")
        base = self._base
        if base is not None and base._requires_grad and base.grad_fn is None:
            raise RuntimeError(f"{where}a view of a leaf Variable that requires grad is being used in an "
                               f"in-place operation. ({arg} is a view of a leaf that requires grad)")
        return self.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in operands)

    def _apply_inplace(self, name, compute, *operands, written=None, arg="the tensor"):
        """An in-place operation: compute() makes the new values as a Tensor (through Functions,
        so autograd records it when it should), out of place or in this tensor's own array;
        they are written into this tensor's memory, the version counter steps, and a recorded
        operation's node becomes this tensor's grad_fn (autograd, "In-place operations").
        `written`: the part of this tensor's array it changes, when not all of it; `arg`: what
        an error calls this tensor."""
        records = self._inplace_records(*operands, name=name, arg=arg)
        dev = _autograd.common_device(name, (self,) + operands)
        if dev != self.device:  # a 0-d CPU tensor can join another device's operands, not take them
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                               f"two devices, {self.device} and {dev} (in {name}); move them to one "
                               f"device with .to(device)")
        result = compute()
        if _category(result.dtype) > _category(self.dtype):
            raise TypeError(f"{name}: result type {result.dtype} can't be cast to this tensor's "
                            f"dtype {self.dtype}")
        if result.shape != self.shape:
            raise ValueError(f"{name}: the result of shape {result.shape} does not fit this "
                             f"tensor's shape {self.shape}")
        result = result._cast(self.dtype)  # an operand of a wider dtype of the same kind
        counter = self._version_counter
        if result._data is not self._data:
            if records and result.grad_fn is not None:
                # the operands were promoted before the operation, so the node that may have
                # saved this memory is the last one
                _autograd.keep_saved_from(result.grad_fn, self._data, counter)
            devices.assign(self._data, Ellipsis, result._data)
        if records:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
            counter.record(self._data if written is None else written)
            self._history = counter.history
        counter.version += 1
        if records and result._data is self._data and result.grad_fn is not None:
            # the Function wrote this memory itself and saved it as written: current as of now
            _autograd.saved_after_write(result.grad_fn, counter)
        return self

    def _operand(self, name, other):
        if isinstance(other, np.ndarray):
            other = tensor(other)
        if not isinstance(other, (Tensor, numbers.Number, np.bool_)):
            raise TypeError(f"{name}: expected a Tensor or a number, got {type(other).__name__}")
        return other

    def add_(self, other, *args, alpha=1):
        if args:  # the deprecated add_(alpha, other), as in p.data.add_(-lr, p.grad)
            other, alpha = _scalar_first("add_", "alpha", other, args)
        other = self._operand("add_", other)
        return self._apply_inplace("add_", lambda: self.add(other, alpha=alpha), other)

    def sub_(self, other, *args, alpha=1):
        if args:
            other, alpha = _scalar_first("sub_", "alpha", other, args)
        other = self._operand("sub_", other)
        return self._apply_inplace("sub_", lambda: self.sub(other, alpha=alpha), other)

    def mul_(self, other):
        other = self._operand("mul_", other)
        return self._apply_inplace("mul_", lambda: self * other, other)

    def div_(self, other):
        other = self._operand("div_", other)
        return self._apply_inplace("div_", lambda: self / other, other)

    def pow_(self, exponent):
        exponent = self._operand("pow_", exponent)
        return self._apply_inplace("pow_", lambda: self ** exponent, exponent)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
    __ipow__ = pow_

    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        """Every element set to `value` (a number or a 0-d tensor, whose gradient is the sum)."""
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise ValueError(f"fill_: value must be a number or a 0-d tensor, got a tensor of "
                                 f"shape {value.shape}")
            value = value.to(self.device)._cast(self.dtype)
        elif not isinstance(value, (numbers.Number, np.bool_)):
            raise TypeError(f"fill_: value must be a number or a 0-d tensor, got "
                            f"{type(value).__name__}")
        else:
            value = _scalar(value, self.dtype)
        return self._apply_inplace("fill_", lambda: _elementwise.Overwrite.apply(self, value), value)

    def copy_(self, src, non_blocking=False):
        """Copies src's values (broadcast to this shape, cast to this dtype) into this tensor,
        from any device; recorded by autograd, the gradient flows back to src."""
        if isinstance(src, Tensor):
            src = src.to(self.device)
            if src.dtype.kind == "f" and self.dtype.kind == "f":
                src = src._cast(self.dtype)
            shape = src.shape
        else:
            src = src if devices.is_array(src) else np.asarray(src)
            shape = src.shape
        try:
            fits = np.broadcast_shapes(shape, self.shape) == self.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"copy_: a source of shape {shape} does not broadcast to {self.shape}")
        return self._apply_inplace("copy_", lambda: _elementwise.Overwrite.apply(self, src), src)

    def _fill_random(self, name, draw):
        values = draw(self.shape)  # on the host, from minifw's generators
        return self._apply_inplace(name, lambda: _elementwise.Overwrite.apply(self, values))

    def uniform_(self, a=0.0, b=1.0, generator=None):
        rng = _random._numpy_rng(generator)
        return self._fill_random("uniform_", lambda shape: rng.uniform(a, b, shape))

    def normal_(self, mean=0.0, std=1.0, generator=None):
        rng = _random._numpy_rng(generator)
        return self._fill_random("normal_", lambda shape: rng.normal(mean, std, shape))

    def clamp_(self, min=None, max=None):
        return self._apply_inplace("clamp_", lambda: self.clamp(min, max))

    clip_ = clamp_

    def clamp_min_(self, min):
        return self._apply_inplace("clamp_min_", lambda: self.clamp(min=min))

    def clamp_max_(self, max):
        return self._apply_inplace("clamp_max_", lambda: self.clamp(max=max))

    def masked_fill_(self, mask, value):
        return self._apply_inplace("masked_fill_", lambda: self.masked_fill(mask, value), mask, value)

    def index_fill_(self, dim, index, value):
        return self._apply_inplace("index_fill_", lambda: self._index_fill(
            "index_fill_", dim, index, value, inplace=True), index, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return self._apply_inplace("scatter_", lambda: self._scatter(
            "scatter_", dim, index, src, value, reduce, inplace=True), index,
            value if src is None else src)

    def scatter_add_(self, dim, index, src):
        return self._apply_inplace("scatter_add_", lambda: self._scatter(
            "scatter_add_", dim, index, src, None, "add", inplace=True), index, src)

    def index_add_(self, dim, index, source, *, alpha=1):
        return self._apply_inplace("index_add_", lambda: self._index_add(
            "index_add_", dim, index, source, alpha, inplace=True), index, source)

    def addcmul_(self, tensor1, tensor2, *args, value=1):
        if args:  # the deprecated addcmul_(value, tensor1, tensor2)
            (tensor1, tensor2), value = _scalar_first("addcmul_", "value", tensor1, (tensor2,) + args)
        return self._apply_inplace("addcmul_", lambda: self._addc(
            "addcmul_", tensor1, tensor2, value, divide=False), tensor1, tensor2)

    def addcdiv_(self, tensor1, tensor2, *args, value=1):
        if args:
            (tensor1, tensor2), value = _scalar_first("addcdiv_", "value", tensor1, (tensor2,) + args)
        return self._apply_inplace("addcdiv_", lambda: self._addc(
            "addcdiv_", tensor1, tensor2, value, divide=True), tensor1, tensor2)

    def lerp_(self, end, weight):
        return self._apply_inplace("lerp_", lambda: self._lerp("lerp_", end, weight), end, weight)

    def fill_diagonal_(self, fill_value, wrap=False):
        """The main diagonal (the elements whose indices are all equal; every dim of a tensor
        of more than 2 dims must have one size) set to fill_value, in place. With wrap, a
        tall matrix's diagonal restarts every columns + 1 rows, as numpy.fill_diagonal."""
        fn = "fill_diagonal_"
        if self.ndim < 2:
            raise ValueError(f"{fn}: the tensor must have at least 2 dimensions, got a "
                             f"{self.ndim}-D tensor of shape {self.shape}")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise ValueError(f"{fn}: all dimensions of a tensor of more than 2 dimensions must "
                             f"have the same size, got shape {self.shape}")
        if isinstance(fill_value, Tensor) and fill_value.numel() == 1:
            fill_value = fill_value.item()  # PyTorch takes a Scalar: the number, no gradient
        if not isinstance(fill_value, (numbers.Number, np.bool_)):
            raise TypeError(f"{fn}: fill_value must be a number, got {type(fill_value).__name__}")
        rows, cols = self.shape[:2]
        if _bool(fn, "wrap", wrap) and self.ndim == 2 and rows > cols + 1:
            index = np.divmod(np.arange(0, rows * cols, cols + 1), cols)
        else:
            index = (np.arange(min(self.shape)),) * self.ndim
        where = tuple(devices.to_device(i, self.device) for i in index)
        value = _scalar(fill_value, self.dtype)
        return self._apply_inplace(fn, lambda: _indexing.IndexPut.apply(self, value, index=where))

    def addcmul(self, tensor1, tensor2, *args, value=1):
        """self + value * tensor1 * tensor2 (broadcast), as torch.addcmul."""
        if args:
            (tensor1, tensor2), value = _scalar_first("addcmul", "value", tensor1, (tensor2,) + args)
        return self._addc("addcmul", tensor1, tensor2, value, divide=False)

    def addcdiv(self, tensor1, tensor2, *args, value=1):
        """self + value * tensor1 / tensor2 (broadcast), as torch.addcdiv; integer tensor1
        and tensor2 are refused, as PyTorch refuses them."""
        if args:
            (tensor1, tensor2), value = _scalar_first("addcdiv", "value", tensor1, (tensor2,) + args)
        return self._addc("addcdiv", tensor1, tensor2, value, divide=True)

    def _addc(self, fn, tensor1, tensor2, value, divide):
        for name, t in (("tensor1", tensor1), ("tensor2", tensor2)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
        if divide and tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
            raise TypeError(f"{fn}: integer division is not supported (tensor1 {tensor1.dtype}, "
                            f"tensor2 {tensor2.dtype}); convert them to a floating point dtype")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Number):
            raise TypeError(f"{fn}: value must be a number, got {type(value).__name__} {value!r}")
        if _result_dtype(self, tensor1, tensor2).kind != "f" and \
                not isinstance(value, numbers.Integral):
            raise TypeError(f"{fn}: value must be an int for integer tensors, got {value!r}")
        product = tensor1 / tensor2 if divide else tensor1 * tensor2
        return self + (product if value == 1 else product * value)

    def lerp(self, end, weight):
        """self + weight * (end - self) (broadcast), as torch.lerp: weight a number or a
        tensor of this dtype; computed from the nearer end, as PyTorch does, so that
        weight 1 gives `end` exactly."""
        return self._lerp("lerp", end, weight)

    def _lerp(self, fn, end, weight):
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: input must be a floating point tensor, got {self.dtype}")
        if not isinstance(end, Tensor) or end.dtype != self.dtype:
            raise TypeError(f"{fn}: end must be a tensor of the input's dtype {self.dtype}, got "
                            f"{getattr(end, 'dtype', type(end).__name__)}")
        if isinstance(weight, Tensor):
            if weight.ndim == 0 and weight.dtype.kind == "f":
                weight = weight._cast(self.dtype)  # a 0-d weight acts as a number, as PyTorch's
            if weight.dtype != self.dtype:
                raise TypeError(f"{fn}: weight must be a number or a tensor of the input's dtype "
                                f"{self.dtype}, got dtype {weight.dtype}")
            diff = end - self
            near_start = weight.detach().abs() < 0.5
            return where(near_start, self + weight * diff, end - diff * (1 - weight))
        if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real):
            raise TypeError(f"{fn}: weight must be a number or a tensor, got "
                            f"{type(weight).__name__}")
        diff = end - self
        return self + diff * weight if builtins.abs(weight) < 0.5 else end - diff * (1 - weight)

    # ---- elementwise functions -----------------------------------------------------
    def _float_input(self, name):
        return self if self.dtype.kind == "f" else self._cast(_default_dtype)

    def exp(self):
        return _elementwise.Exp.apply(self._float_input("exp"))

    def log(self):
        return _elementwise.Log.apply(self._float_input("log"))

    def sqrt(self):
        return _elementwise.Sqrt.apply(self._float_input("sqrt"))

    def abs(self):
        return _elementwise.Abs.apply(self)

    __abs__ = absolute = abs

    def _pointwise(self, name, *args):
        return _elementwise.Pointwise.apply(self._float_input(name), name=name, args=args)

    def sin(self):
        return self._pointwise("sin")

    def cos(self):
        return self._pointwise("cos")

    def tan(self):
        return self._pointwise("tan")

    def atan(self):
        return self._pointwise("atan")

    arctan = atan

    def exp2(self):
        return self._pointwise("exp2")

    def log1p(self):
        return self._pointwise("log1p")

    def expm1(self):
        return self._pointwise("expm1")

    def rsqrt(self):
        return self._pointwise("rsqrt")

    def _rounding(self, name, *args):
        # an integer (or bool) tensor is already whole: a copy, of its dtype, as in PyTorch
        if self.dtype.kind != "f":
            return self.clone()
        return _elementwise.Pointwise.apply(self, name=name, args=args)

    def sign(self):
        return self._rounding("sign") if self.dtype.kind in "fb" else \
            Tensor._make(_autograd.on_device(np.sign(self._data), self.device))

    def floor(self):
        return self._rounding("floor")

    def ceil(self):
        return self._rounding("ceil")

    def trunc(self):
        return self._rounding("trunc")

    def round(self, decimals=0):
        """Round half to even (as PyTorch and NumPy), to `decimals` decimal places."""
        return self._rounding("round", _int("round", "decimals", decimals))

    def clamp(self, min=None, max=None):
        """Every element limited to [min, max]: numbers (no gradient flows at the bounds
        themselves) or tensors (broadcast; maximum then minimum, each tie sharing the
        gradient), as PyTorch's; the result has the dtype this tensor and the bounds promote to."""
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given")
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            out = self
            for name, b, smallest in (("min", min, False), ("max", max, True)):
                if b is not None:
                    b = b if isinstance(b, Tensor) else tensor(b, device=self.device)
                    out = out._pairwise(b, "clamp", smallest)
            return out
        bounds = []
        for name, b in (("min", min), ("max", max)):
            if b is not None and not isinstance(b, (numbers.Number, np.bool_)):
                raise TypeError(f"clamp: {name} must be a number or a tensor, got "
                                f"{type(b).__name__}")
            bounds.append(b)
        dtype = _result_dtype(self, *(b for b in bounds if b is not None))
        low, high = (None if b is None else _scalar(b, dtype) for b in bounds)
        return _elementwise.Clamp.apply(self._cast(dtype), min=low, max=high)

    clip = clamp

    def clamp_min(self, min):
        return self.clamp(min=min)

    def clamp_max(self, max):
        return self.clamp(max=max)

    def relu(self):
        if self.dtype.kind in "iu":  # as PyTorch: an integer tensor stays integer
            return Tensor._make(_autograd.on_device(np.maximum(self._data, self.dtype.type(0)),
                                                    self.device))
        return _activation.Activation.apply(self._float_input("relu"), mode="relu")

    def sigmoid(self):
        return _activation.Activation.apply(self._float_input("sigmoid"), mode="sigmoid")

    def tanh(self):
        return _activation.Activation.apply(self._float_input("tanh"), mode="tanh")

    def softmax(self, dim, dtype=None):
        """dtype= casts the input first (e.g. float64 for precision), as torch.softmax."""
        x = self if dtype is None else self._cast(_dtype_arg(dtype, "softmax"))
        return _softmax.softmax(x._float_input("softmax"), _dim("softmax", dim, max(self.ndim, 1)))

    def log_softmax(self, dim, dtype=None):
        x = self if dtype is None else self._cast(_dtype_arg(dtype, "log_softmax"))
        return _softmax.softmax(x._float_input("log_softmax"),
                                _dim("log_softmax", dim, max(self.ndim, 1)), log=True)

    def tril(self, diagonal=0):
        return self._triangle("tril", diagonal, upper=False)

    def triu(self, diagonal=0):
        return self._triangle("triu", diagonal, upper=True)

    def _triangle(self, name, diagonal, upper):
        if self.ndim < 2:
            raise ValueError(f"{name}: input must have at least 2 dimensions, got a {self.ndim}-D "
                             f"tensor of shape {self.shape}")
        return _elementwise.Triangle.apply(self, diagonal=_int(name, "diagonal", diagonal),
                                           upper=upper)

    def masked_fill(self, mask, value):
        """This tensor with `value` (a number or a 0-d tensor, cast to this dtype) where the
        bool tensor `mask` (broadcast) is True."""
        if not isinstance(mask, Tensor) or mask.dtype != bool_:
            raise TypeError(f"masked_fill: mask must be a bool tensor, got "
                            f"{getattr(mask, 'dtype', type(mask).__name__)}")
        _same_device("masked_fill", self, mask)
        value = self._fill_value("masked_fill", value)
        return _autograd.rename(_elementwise.Where.apply(value, self, condition=mask._data),
                                "MaskedFillBackward0", self)

    def _fill_value(self, fn, value):
        """A fill value (a number, or a 0-d tensor) as an operand of this tensor's dtype."""
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise ValueError(f"{fn}: value must be a number or a 0-d tensor, got a tensor of "
                                 f"shape {value.shape}")
            return value._cast(self.dtype)
        if not isinstance(value, (numbers.Number, np.bool_)):
            raise TypeError(f"{fn}: value must be a number or a 0-d tensor, got "
                            f"{type(value).__name__}")
        return _scalar(value, self.dtype)

    def where(self, condition, other):
        """This tensor where `condition` is True, else `other` (torch.where(condition, self, other))."""
        return where(condition, self, other)

    def cumsum(self, dim, *, dtype=None):
        """Running sums along `dim`; integer and bool tensors sum as int64 (unless dtype)."""
        if dtype is not None:
            x = self._cast(_dtype_arg(dtype, "cumsum"))
        else:
            x = self if self.dtype.kind == "f" else self._cast(int64)
        if x.ndim == 0:
            return x.reshape(1).cumsum(0).reshape(())
        return _reductions.CumulativeSum.apply(x, dim=_dim("cumsum", dim, x.ndim))

    def isnan(self):
        return self._classify(np.isnan, False)

    def isinf(self):
        return self._classify(np.isinf, False)

    def isfinite(self):
        return self._classify(np.isfinite, True)

    def _classify(self, test, integers):
        """A bool tensor of test(element); integer and bool elements are all finite numbers."""
        if self.dtype.kind != "f":
            return full(self.shape, integers, dtype=bool_, device=self.device)
        return Tensor._make(_autograd.on_device(test(self._data), self.device))

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        """The product of all elements, or along one `dim`; integer and bool tensors multiply
        as int64 (unless dtype), as torch.prod."""
        if dtype is not None:
            x = self._cast(_dtype_arg(dtype, "prod"))
        else:
            x = self if self.dtype.kind == "f" else self._cast(int64)
        if dim is None or self.ndim == 0:  # everything: the product of the flattened tensor
            if dim is not None:
                _dim("prod", dim, 0)
            out = _autograd.rename(x.reshape(-1).prod(0), "ProdBackward0", x)
            return out.reshape((1,) * self.ndim) if keepdim and dim is None else out
        axis = _dim("prod", dim, self.ndim)
        if x.dtype.kind != "f":  # no gradient: NumPy's product of the integers
            return Tensor._make(_autograd.on_device(np.prod(x._data, axis=axis, keepdims=keepdim),
                                                    self.device))
        return _reductions.Product.apply(x, axis=axis, keepdim=bool(keepdim))

    def roll(self, shifts, dims=None):
        """The elements shifted cyclically by `shifts` along `dims` (without dims: over the
        flattened tensor, keeping its shape), as torch.roll."""
        many = isinstance(shifts, (tuple, list))
        shifts = tuple(_int("roll", "shifts", v) for v in shifts) if many else \
            _int("roll", "shifts", shifts)
        if dims is None:
            if many and len(shifts) != 1:
                raise ValueError(f"roll: without dims, shifts must be one int, got {shifts}")
            flat = self.reshape(-1)
            return _shape.Roll.apply(flat, shifts=shifts[0] if many else shifts,
                                     axes=0).reshape(self.shape)
        axes = _dims("roll", dims, self.ndim)
        if len(axes) != (len(shifts) if many else 1):
            raise ValueError(f"roll: shifts and dims must have the same length, got {shifts} and "
                             f"{dims}")
        return _shape.Roll.apply(self, shifts=shifts if many else (shifts,), axes=axes)

    def diag(self, diagonal=0):
        """A 1-D tensor as the `diagonal` of a square matrix, or a matrix's `diagonal` as a
        1-D tensor, as torch.diag."""
        if self.ndim not in (1, 2):
            raise ValueError(f"diag: input must be 1-D or 2-D, got shape {self.shape}")
        return _shape.Diagonal.apply(self, offset=_int("diag", "diagonal", diagonal))

    def trace(self):
        """The sum of a matrix's main diagonal."""
        if self.ndim != 2:
            raise ValueError(f"trace: input must be a matrix (2-D), got shape {self.shape}")
        return self.diag().sum()

    def masked_select(self, mask):
        """The elements where the bool `mask` (broadcast with this tensor) is True, as a 1-D
        tensor, as torch.masked_select."""
        if not isinstance(mask, Tensor) or mask.dtype != bool_:
            raise TypeError(f"masked_select: mask must be a bool tensor, got "
                            f"{getattr(mask, 'dtype', type(mask).__name__)}")
        try:
            shape = np.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            raise ValueError(f"masked_select: mask of shape {mask.shape} does not broadcast with "
                             f"the input's {self.shape}") from None
        x = self if self.shape == shape else self.expand(*shape)
        return x[mask if mask.shape == shape else mask.expand(*shape)]

    def square(self):
        x = self._cast(int64) if self.dtype == bool_ else self  # as PyTorch: bools square as int64
        return _autograd.rename(x * x, "PowBackward0", x)

    def flip(self, *dims):
        """The elements in reverse order along `dims` (a copy), as torch.flip."""
        if not dims:
            raise TypeError("flip: dims must be given (an int or a tuple of ints), as in PyTorch")
        dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        if self.ndim == 0:
            return self.clone()
        return _shape.Flip.apply(self, dims=_dims("flip", dims, self.ndim))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The vector p-norm over `dim` (all elements by default): p 2 or "fro", 1, inf, -inf,
        0 (the count of non-zeros) or any other number, with PyTorch's gradient (zero where
        the norm is zero); p "nuc" is the nuclear norm of the matrices spanned by the two
        dims `dim` (by default a 2-D tensor's), as torch.norm. `dtype` (float32 or float64)
        casts the input first, as in minifw.linalg's norms."""
        if self.dtype.kind != "f":
            raise TypeError(f"norm: input must be a floating point tensor, got {self.dtype}")
        if dtype is not None:
            dtype = _dtype_arg(dtype, "norm")
            if dtype.kind != "f":
                raise TypeError(f"norm: dtype must be float32 or float64, got {dtype}")
            return self._cast(dtype).norm(p, dim, keepdim)
        if isinstance(p, str) and p == "nuc":  # minifw.linalg, which imports this module, sets it
            return self._nuclear_norm(tuple(range(self.ndim)) if dim is None else dim, keepdim)
        if p == "fro":
            p = 2.0
        if not isinstance(p, numbers.Real) or isinstance(p, bool):
            raise ValueError(f"norm: p must be a number or 'fro', got {p!r}")
        return _normalization.VectorNorm.apply(self, p=float(p), axes=self._axes("norm", dim),
                                               keepdim=bool(keepdim))

    def logsumexp(self, dim, keepdim=False):
        """log(sum(exp(x))) over `dim`, computed without overflow, as torch.logsumexp (an
        integer or bool input in the default float dtype, as PyTorch's)."""
        if self.dtype.kind != "f":
            return self._cast(_default_dtype).logsumexp(dim, keepdim)
        axes = self._axes("logsumexp", dim)
        if self.numel() == 0:  # an empty sum: log(0) = -inf, as PyTorch
            shift = zeros((), dtype=self.dtype, device=self.device)
        else:
            shift = self.detach().amax(axes, keepdim=True)
            shift = shift.masked_fill(shift.isinf(), 0.0)  # all -inf (or an inf) stays as it is
        with np.errstate(divide="ignore"):  # log(0) of an all -inf row is -inf
            out = (self - shift).exp().sum(axes, keepdim=True).log() + shift
        return out if keepdim else out.reshape(tuple(n for i, n in enumerate(self.shape)
                                                     if axes is not None and i not in axes))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct values in ascending order (with the inverse indices and counts on
        request), as torch.unique; with dim, the distinct slices along dim in lexicographic
        order, the inverse then giving each slice's place among them."""
        data = devices.to_device(self._data, devices.CPU)
        if dim is None:
            values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True)
            inverse = inverse.reshape(self.shape)
        else:
            if self.ndim == 0:
                raise IndexError(f"unique: a 0-d tensor has no dimension {dim}")
            d = _dim("unique", dim, self.ndim)
            if data.size == 0 and data.shape[d] != 0:
                raise ValueError(f"unique: the slices along dim {dim} of a tensor of shape "
                                 f"{self.shape} are empty, so they cannot be told apart")
            values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=d)
            inverse = inverse.reshape(-1)
            values = np.ascontiguousarray(values)
        out = [Tensor._make(_autograd.on_device(values, self.device))]
        if return_inverse:
            out.append(Tensor._make(_autograd.on_device(inverse.astype(np.int64), self.device)))
        if return_counts:
            out.append(Tensor._make(_autograd.on_device(counts.astype(np.int64), self.device)))
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self, weights=None, minlength=0):
        """How often each value 0, 1, ... occurs in this 1-D tensor of non-negative integers
        (summing `weights` instead of ones when given), as torch.bincount."""
        if self.ndim != 1 or self.dtype.kind not in "iu":
            raise ValueError(f"bincount: input must be a 1-D integer tensor, got shape {self.shape} "
                             f"and dtype {self.dtype}")
        a = devices.to_device(self._data, devices.CPU)
        if a.size and int(a.min()) < 0:
            raise ValueError(f"bincount: input must be non-negative, got {int(a.min())}")
        minlength = _int("bincount", "minlength", minlength, minimum=0)
        w = None
        if weights is not None:
            if not isinstance(weights, Tensor) or weights.shape != self.shape:
                raise ValueError(f"bincount: weights must be a tensor of the input's shape "
                                 f"{self.shape}, got {getattr(weights, 'shape', weights)!r}")
            w = devices.to_device(weights._data, devices.CPU)
        out = np.bincount(a, weights=w, minlength=minlength)
        dtype = int64 if w is None else weights.dtype if weights.dtype.kind == "f" else float64
        return Tensor._make(_autograd.on_device(out.astype(dtype, copy=False), self.device))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from each row's categories with probabilities proportional to its
        (non-negative) weights, as torch.multinomial: 1-D weights give num_samples indices,
        2-D weights num_samples per row. Without replacement no category is drawn twice."""
        fn = "multinomial"
        if self.ndim not in (1, 2) or self.dtype.kind != "f":
            raise ValueError(f"{fn}: input must be a 1-D or 2-D floating point tensor, got shape "
                             f"{self.shape} and dtype {self.dtype}")
        n = _int(fn, "num_samples", num_samples, minimum=1)
        w = devices.to_device(self._data, devices.CPU).astype(np.float64).reshape(-1, self.shape[-1])
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError(f"{fn}: probabilities must be finite and non-negative")
        if (w.sum(axis=1) <= 0).any():
            raise ValueError(f"{fn}: each row of probabilities must have a positive sum")
        if not replacement and n > self.shape[-1]:
            raise ValueError(f"{fn}: cannot draw {n} samples without replacement from "
                             f"{self.shape[-1]} categories")
        if not replacement and n > int((w > 0).sum(axis=1).min()):
            raise ValueError(f"{fn}: a row has fewer non-zero probabilities than num_samples "
                             f"({n}) without replacement")
        rng = _random._numpy_rng(generator)
        u = rng.random((w.shape[0], n if replacement else w.shape[1]))
        if replacement:  # inverse transform sampling on each row's running sums
            cdf = np.cumsum(w, axis=1)
            cdf /= cdf[:, -1:]
            idx = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
            idx = np.minimum(idx, w.shape[1] - 1)
        else:  # the n largest of u ** (1 / w) (Efraimidis and Spirakis), as log(u) / w
            with np.errstate(divide="ignore"):
                keys = np.where(w > 0, np.log(u) / w, -np.inf)
            idx = np.argsort(-keys, axis=1, kind="stable")[:, :n]
        idx = idx.astype(np.int64).reshape(self.shape[:-1] + (n,))
        return Tensor._make(devices.to_device(idx, self.device))

    # ---- reductions ----------------------------------------------------------------
    def _axes(self, fn, dim):
        """The axes a reduction over `dim` covers: None for all (dim None or (), as PyTorch;
        a 0-d tensor's dim 0 or -1 is all of it)."""
        if isinstance(dim, (tuple, list)) and not dim:
            return None
        axes = _dims(fn, dim, self.ndim)
        return None if self.ndim == 0 else axes

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        """The sum over `dim` (all by default); integer and bool tensors sum as int64, and
        dtype= casts the input first, as torch.sum."""
        if dtype is not None:
            dtype = _dtype_arg(dtype, "sum")
            x = self._cast(dtype)
        else:
            x = self if self.dtype.kind == "f" else self._cast(int64)
        out = _reductions.Sum.apply(x, axes=self._axes("sum", dim), keepdim=keepdim)
        return out if dtype is None or out.dtype == dtype else out._cast(dtype)  # NumPy widens ints

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        x = self if dtype is None else self._cast(_dtype_arg(dtype, "mean"))
        if x.dtype.kind != "f":
            raise TypeError(f"mean: dtype must be a floating point dtype, got {x.dtype}"
                            if dtype is not None else
                            f"mean: input must be a floating point tensor, got {x.dtype}; convert "
                            f"it with .float() or give dtype=")
        return _reductions.Mean.apply(x, axes=self._axes("mean", dim), keepdim=keepdim)

    def _correction(self, fn, dim, unbiased, correction):
        """(dim, correction) from PyTorch's two signatures: var(dim, unbiased, keepdim) and
        var(dim, *, correction, keepdim); var(False) is unbiased=False over everything."""
        if isinstance(dim, (bool, np.bool_)):
            if unbiased is not None:
                raise TypeError(f"{fn}: unbiased given twice (as dim={dim} and unbiased={unbiased})")
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(f"{fn}: give unbiased or correction, not both")
        if unbiased is not None:
            return dim, 1 if unbiased else 0
        return dim, 1 if correction is None else correction

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """Variance with Bessel's correction by default (correction=1, or unbiased=True), as
        torch.var; var(dim, False) and unbiased=False divide by the count."""
        dim, correction = self._correction("var", dim, unbiased, correction)
        return _autograd.rename(self._sum_of_squares("var", dim, keepdim, correction), "VarBackward0",
                                self)

    def _check_float(self, fn):
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: input must be a floating point tensor, got {self.dtype}; "
                            f"convert it with .float() first")

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The square root of var (same arguments); its gradient is 0 where it is 0, as
        PyTorch's."""
        dim, correction = self._correction("std", dim, unbiased, correction)
        return _elementwise.Pointwise.apply(self._sum_of_squares("std", dim, keepdim, correction),
                                            name="sqrt_of_squares")

    def _sum_of_squares(self, fn, dim, keepdim, correction):
        """The sum of squared deviations from the mean over `dim`, over (count - correction)."""
        self._check_float(fn)
        axes = self._axes(fn, dim)
        mean = self.mean(axes, keepdim=True)
        count = self.numel() if axes is None else int(np.prod([self.shape[a] for a in axes]))
        return ((self - mean) ** 2).sum(axes, keepdim) / max(count - correction, 0)

    def _extreme(self, name, dim, keepdim, smallest):
        if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
            if keepdim:
                raise TypeError(f"{name}: keepdim does not apply to the elementwise {name}(input, "
                                f"other)")
            return self._pairwise(dim, name, smallest)
        if dim is not None and not self.ndim:  # a 0-d tensor's dim 0 (or -1): itself, index 0
            _dim(name, dim, 0)
            return MaxResult(*self.reshape(1)._extreme(name, 0, False, smallest))
        if dim is not None:
            size = self.shape[_dim(name, dim, self.ndim)]
            if size == 0:
                raise IndexError(f"{name}: expected reduction dim {dim} to have non-zero size")
        elif self.numel() == 0:
            raise ValueError(f"{name}: the tensor is empty")
        if dim is None:
            return _reductions.Amax.apply(self, smallest=smallest)
        values, indices = _reductions.MaxDim.apply(self, dim=_dim(name, dim, self.ndim), keepdim=keepdim,
                                           smallest=smallest)
        return MaxResult(values, indices)

    def max(self, dim=None, keepdim=False):
        """The largest element, or (values, indices) along `dim` as torch.max."""
        return self._extreme("max", dim, keepdim, False)

    def min(self, dim=None, keepdim=False):
        return self._extreme("min", dim, keepdim, True)

    def amax(self, dim=None, keepdim=False):
        return _reductions.Amax.apply(self, axes=self._nonempty_axes("amax", dim), keepdim=keepdim)

    def amin(self, dim=None, keepdim=False):
        return _reductions.Amax.apply(self, axes=self._nonempty_axes("amin", dim), keepdim=keepdim,
                                      smallest=True)

    def median(self, dim=None, keepdim=False):
        """The lower median of all elements (NaN if there is one), or (values, indices) of
        the lower medians along `dim`, as torch.median."""
        return self._median("median", dim, keepdim, ignore_nan=False)

    def nanmedian(self, dim=None, keepdim=False):
        """median ignoring NaN (NaN only where every element is), as torch.nanmedian."""
        return self._median("nanmedian", dim, keepdim, ignore_nan=True)

    def _median(self, name, dim, keepdim, ignore_nan):
        if self.dtype == bool_:
            raise TypeError(f"{name}: not implemented for bool tensors; convert with .long()")
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}: keepdim applies only with dim")
            if self.numel() == 0:
                if self.dtype.kind != "f":
                    raise ValueError(f"{name}: the tensor is empty")
                return self.sum() * float("nan")  # as PyTorch: NaN
            return _reductions.Median.apply(self, ignore_nan=ignore_nan)
        if not self.ndim:  # a 0-d tensor's dim 0 (or -1): itself, index 0
            _dim(name, dim, 0)
            return MedianResult(*self.reshape(1)._median(name, 0, False, ignore_nan))
        d = _dim(name, dim, self.ndim)
        if self.shape[d] == 0:
            raise IndexError(f"{name}: expected reduction dim {dim} to have non-zero size")
        values, indices = _reductions.MedianDim.apply(self, dim=d, keepdim=_bool(name, "keepdim",
                                                                                keepdim),
                                                      ignore_nan=ignore_nan)
        return MedianResult(values, indices)

    def _nonempty_axes(self, fn, dim):
        """The axes of a reduction that has no identity (max, min): none of them may be empty."""
        axes = self._axes(fn, dim)
        for a in range(self.ndim) if axes is None else axes:
            if self.shape[a] == 0:
                raise IndexError(f"{fn}: expected reduction dim {a} to have non-zero size")
        return axes

    def _arg(self, name, fn, dim, keepdim):
        if dim is not None and not self.ndim:
            _dim(name, dim, 0)
            return zeros((), dtype=int64, device=self.device)
        if dim is not None:
            if self.shape[_dim(name, dim, self.ndim)] == 0:
                raise IndexError(f"{name}: expected reduction dim {dim} to have non-zero size")
        elif self.numel() == 0:
            raise ValueError(f"{name}: the tensor is empty")
        if dim is None:
            out = _autograd.on_device(fn(self._data.reshape(-1)), self.device)
            return Tensor._make(out.reshape((1,) * self.ndim if keepdim else ()).astype(np.int64))
        return Tensor._make(_autograd.on_device(fn(self._data, axis=_dim(name, dim, self.ndim),
                                                   keepdims=keepdim), self.device).astype(np.int64))

    def argmax(self, dim=None, keepdim=False):
        return self._arg("argmax", np.argmax, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return self._arg("argmin", np.argmin, dim, keepdim)

    # ---- sorting -------------------------------------------------------------------
    def sort(self, dim=-1, descending=False, stable=False):
        """(values, indices) sorted along `dim`. Always stable (equal elements keep their
        order), so stable=True changes nothing; NaN sorts above every number, as in PyTorch."""
        if self.ndim == 0:
            return SortResult(self.clone(), zeros((), dtype=int64, device=self.device))
        values, indices = _sorting.Sort.apply(self, dim=_dim("sort", dim, self.ndim),
                                              descending=bool(descending))
        return SortResult(values, indices)

    def argsort(self, dim=-1, descending=False, stable=False):
        """The indices that sort this tensor along `dim` (stably, as sort)."""
        if self.ndim == 0:
            return zeros((), dtype=int64, device=self.device)
        order = _sorting.sort_order(self._data, _dim("argsort", dim, self.ndim), bool(descending))
        return Tensor._make(_autograd.on_device(order, self.device).astype(np.int64, copy=False))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (smallest with largest=False) elements along
        `dim`, the largest (smallest) first, also with sorted=False, where PyTorch leaves the
        order open."""
        size = self.shape[_dim("topk", dim, self.ndim)] if self.ndim else 1
        k = _int("topk", "k", k)
        if not 0 <= k <= size:
            raise ValueError(f"topk: k ({k}) is out of range for a dimension of size {size}")
        if self.ndim == 0:
            values, indices = self.reshape(1).topk(k, 0, largest)
            shape = () if k else (0,)
            return TopKResult(values.reshape(shape), indices.reshape(shape))
        values, indices = _sorting.Sort.apply(self, dim=_dim("topk", dim, self.ndim),
                                              descending=bool(largest), k=k)
        return TopKResult(values, indices)

    # ---- shapes --------------------------------------------------------------------
    def reshape(self, *shape):
        target = _infer_shape("reshape", _shape_args("reshape", shape), self.shape)
        return self if target == self.shape else _shape.Reshape.apply(self, shape=target)

    def view(self, *shape, dtype=None):
        """The same elements in `shape`, sharing this tensor's memory; as PyTorch's, refused
        where the memory layout cannot be read in that shape without a copy (reshape copies).
        view(dtype) reads the same bytes as another dtype (see _view_as_dtype)."""
        if dtype is not None:
            if shape:
                raise TypeError("view: takes a shape or a dtype, not both")
            return self._view_as_dtype(dtype)
        try:
            target = _infer_shape("view", _shape_args("view", shape), self.shape)
        except TypeError:
            if len(shape) == 1 and isinstance(shape[0], (np.dtype, type, str)):
                return self._view_as_dtype(shape[0])
            raise
        if target != self.shape and self._data.size and \
                not np.may_share_memory(self._data.reshape(target), self._data):
            raise RuntimeError(f"view size is not compatible with input tensor's size and stride "
                               f"(at least one dimension spans across two contiguous subspaces): "
                               f"shape {self.shape} as {target}; use .reshape(...) instead")
        return self.reshape(target)

    def _view_as_dtype(self, dtype):
        """The same memory read as `dtype`, as PyTorch's view(dtype): where the element sizes
        differ, the last dimension (contiguous, not of a 0-d tensor) shrinks or grows by their
        ratio. Not differentiable: the result does not require grad; writes through it show
        in this tensor and step the version counter they share."""
        fn = "view"
        d = _dtype_arg(dtype, fn)
        if d == self.dtype:
            return self.view(self.shape)
        if d.itemsize != self.dtype.itemsize:
            if self.ndim == 0:
                raise ValueError(f"{fn}: a 0-d tensor cannot be viewed as a dtype of another "
                                 f"element size ({self.dtype} as {d})")
            last = self.shape[-1] * self.dtype.itemsize
            if self.shape[-1] != 1 and self._data.strides[-1] != self.dtype.itemsize:
                raise ValueError(f"{fn}: viewing {self.dtype} as {d} (another element size) needs "
                                 f"a contiguous last dimension; call contiguous() first")
            if last % d.itemsize:
                raise ValueError(f"{fn}: the last dimension ({self.shape[-1]} x {self.dtype} = "
                                 f"{last} bytes) is not a whole number of {d} elements "
                                 f"({d.itemsize} bytes)")
        return Tensor._make(self._data.view(d), version_counter=self._version_counter)

    def view_as(self, other):
        return self.view(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dim("flatten", start_dim, self.ndim), _dim("flatten", end_dim, self.ndim)
        if s > e:
            raise ValueError(f"flatten: start_dim ({start_dim}) must not come after end_dim ({end_dim})")
        # the merged size itself, not -1: a zero-size tensor's -1 would be ambiguous
        return self.reshape(self.shape[:s] + (math.prod(self.shape[s:e + 1]),) + self.shape[e + 1:])

    def unflatten(self, dim, sizes):
        """Dim `dim` split into dims of `sizes` (one of them may be -1), as torch.unflatten."""
        fn = "unflatten"
        if self.ndim == 0:
            raise IndexError(f"{fn}: a 0-d tensor has no dimension {dim} to unflatten")
        d = _dim(fn, dim, self.ndim)
        if not isinstance(sizes, (tuple, list)):
            raise TypeError(f"{fn}: sizes must be a tuple or list of ints, got "
                            f"{type(sizes).__name__}")
        sizes = tuple(_int(fn, "sizes", s, minimum=-1) for s in sizes)
        if not sizes:
            raise ValueError(f"{fn}: sizes must be non-empty")
        try:
            target = _infer_shape(fn, sizes, (self.shape[d],))
        except ValueError:
            raise ValueError(f"{fn}: sizes {sizes} don't multiply up to the size of dim {dim} "
                             f"({self.shape[d]}) of the input of shape {self.shape}") from None
        return self.reshape(self.shape[:d] + tuple(target) + self.shape[d + 1:])

    def permute(self, *dims):
        dims = _shape_args("permute", dims)
        if len(dims) != self.ndim:
            raise ValueError(f"permute: got {len(dims)} dims {dims} for a {self.ndim}-D tensor")
        return _shape.Permute.apply(self, dims=_dims("permute", dims, self.ndim))

    def transpose(self, dim0, dim1):
        order = list(range(self.ndim))
        a, b = _dim("transpose", dim0, self.ndim), _dim("transpose", dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return _autograd.rename(_shape.Permute.apply(self, dims=tuple(order)), "TransposeBackward0",
                                self)

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self if self.ndim < 2 else _autograd.rename(self.transpose(0, 1), "TBackward0", self)

    T = property(lambda self: self.permute(*reversed(range(self.ndim))))

    def unsqueeze(self, dim):
        d = _dim("unsqueeze", dim, self.ndim + 1)
        return _autograd.rename(self.reshape(self.shape[:d] + (1,) + self.shape[d:]),
                                "UnsqueezeBackward0", self)

    def squeeze(self, dim=None, *dims):
        if dims:  # squeeze(0, 1): several dims as separate arguments, as PyTorch takes them
            dim = (dim,) + dims
        axes = _dims("squeeze", dim, self.ndim)
        if axes is None:
            axes = range(self.ndim)
        keep = [n for i, n in enumerate(self.shape) if not (i in axes and n == 1)]
        # PyTorch's node: SqueezeBackward0 for every dim, 1 for one, 2 for several
        return _autograd.rename(self.reshape(tuple(keep)), "SqueezeBackward0" if dim is None else
                                "SqueezeBackward2" if isinstance(dim, (tuple, list)) else
                                "SqueezeBackward1", self)

    def expand(self, *sizes):
        sizes = _shape_args("expand", sizes)
        if len(sizes) < self.ndim:
            raise ValueError(f"expand: the number of sizes ({len(sizes)}) must be >= the number of "
                             f"dimensions ({self.ndim})")
        lead = len(sizes) - self.ndim
        shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
        try:
            fits = np.broadcast_shapes(self.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"expand: cannot expand shape {self.shape} to {sizes}")
        return _shape.Expand.apply(self, shape=shape)

    def expand_as(self, other):
        return self.expand(*other.shape)

    def repeat(self, *sizes):
        """This tensor tiled sizes[i] times along dim i (leading dims of size 1 added when
        there are more sizes than dims), as torch.Tensor.repeat."""
        sizes = _check_size("repeat", _shape_args("repeat", sizes))
        if len(sizes) < self.ndim:
            raise ValueError(f"repeat: the number of sizes ({len(sizes)}) must be >= the number "
                             f"of dimensions ({self.ndim})")
        return _shape.Repeat.apply(self, reps=sizes)

    def narrow(self, dim, start, length):
        """The `length` elements along `dim` from `start` on (a view)."""
        if self.ndim == 0:
            raise ValueError("narrow: cannot be applied to a 0-d tensor")
        d = _dim("narrow", dim, self.ndim)
        size = self.shape[d]
        start, length = operator.index(start), _int("narrow", "length", length, minimum=0)
        if not -size <= start <= size:
            raise IndexError(f"narrow: start ({start}) is out of range for dimension {dim} of "
                             f"size {size} (expected to be in [{-size}, {size}])")
        if start < 0:
            start += size
        if start + length > size:
            raise ValueError(f"narrow: start ({start}) + length ({length}) exceeds dimension "
                             f"size ({size})")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def select(self, dim, index):
        """The slice at `index` along `dim`, that dim removed (a view)."""
        if self.ndim == 0:
            raise IndexError("select: cannot be applied to a 0-d tensor")
        d = _dim("select", dim, self.ndim)
        i, size = operator.index(index), self.shape[d]
        if not -size <= i < size:
            raise IndexError(f"select: index {i} is out of range for dimension {dim} of size {size}")
        return self[(slice(None),) * d + (i,)]

    def split(self, split_size_or_sections, dim=0):
        """Views of consecutive pieces along `dim`: of split_size elements each (the last
        may be smaller), or of the sizes in a list, which must add up to the dim's size."""
        if self.ndim == 0:
            raise ValueError("split: cannot be applied to a 0-d tensor")
        d = _dim("split", dim, self.ndim)
        size = self.shape[d]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes = [_int("split", "split_sizes", s, minimum=0) for s in split_size_or_sections]
            if sum(sizes) != size:
                raise ValueError(f"split: split_sizes {list(sizes)} must add up to the size of "
                                 f"dimension {dim}, {size}")
        else:
            step = _int("split", "split_size", split_size_or_sections, minimum=0)
            if step == 0 and size != 0:
                raise ValueError(f"split: split_size can be 0 only for a dimension of size 0, "
                                 f"got size {size}")
            sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
        return _shape.Split.apply(self, sizes=tuple(sizes), dim=d)

    def chunk(self, chunks, dim=0):
        """At most `chunks` views along `dim`, each of ceil(size / chunks) elements but the
        last, which may be smaller; fewer when the size does not allow `chunks` of them."""
        chunks = _int("chunk", "chunks", chunks, minimum=1)
        if self.ndim == 0:
            raise ValueError("chunk: cannot be applied to a 0-d tensor")
        size = self.shape[_dim("chunk", dim, self.ndim)]
        if size == 0:
            return self.split([0] * chunks, dim)
        return self.split(-(-size // chunks), dim)

    def unbind(self, dim=0):
        """The slices along `dim`, that dim removed (views)."""
        if self.ndim == 0:
            raise ValueError("unbind: cannot be applied to a 0-d tensor")
        d = _dim("unbind", dim, self.ndim)
        return tuple(_autograd.rename(piece.squeeze(d), "UnbindBackward0", self)
                     for piece in self.split(1, d)) if self.shape[d] else ()

    # ---- indexing along a dim -------------------------------------------------------
    def _gather_checks(self, fn, dim, index):
        """dim as an axis; index an integer tensor of this ndim, no larger than this tensor
        along the other dims, its values valid along dim."""
        d = _dim(fn, dim, self.ndim)
        _index_tensor(fn, "index", index, self)
        if index.ndim != self.ndim:
            raise ValueError(f"{fn}: index must have as many dimensions as the input "
                             f"({self.ndim}), got a {index.ndim}-D index of shape {index.shape}")
        if any(i > n for k, (i, n) in enumerate(zip(index.shape, self.shape)) if k != d):
            raise ValueError(f"{fn}: index of shape {index.shape} is larger than the input "
                             f"{self.shape} along a dimension other than {dim}")
        _check_index_values(fn, index, self.shape[d], dim)
        return d

    def gather(self, dim, index, *, sparse_grad=False):
        """out[i][j][k] = self[index[i][j][k]][j][k] for dim 0 (and so on), as torch.gather."""
        if sparse_grad:
            raise NotImplementedError("gather: sparse_grad=True is not supported (minifw has no "
                                      "sparse tensors); the gradient is dense")
        if self.ndim == 0:
            return self.reshape(1).gather(0, index.reshape(1)).reshape(index.shape)
        d = self._gather_checks("gather", dim, index)
        return _indexing.Gather.apply(self, index, dim=d)

    def _scatter(self, fn, dim, index, src, value, reduce, inplace=False):
        if reduce not in (None, "add", "multiply"):
            raise ValueError(f"{fn}: reduce must be None, 'add' or 'multiply', got {reduce!r}")
        if (src is None) == (value is None):
            raise TypeError(f"{fn}: give one of src (a tensor or a number) and value")
        src = value if src is None else src
        if self.ndim == 0:
            raise ValueError(f"{fn}: cannot be applied to a 0-d tensor")
        d = self._gather_checks(fn, dim, index)
        if isinstance(src, Tensor):
            _same_device(fn, self, src)
            if src.dtype != self.dtype:
                raise TypeError(f"{fn}: src must have this tensor's dtype {self.dtype}, got "
                                f"{src.dtype}")
            if src.ndim != index.ndim or any(i > n for i, n in zip(index.shape, src.shape)):
                raise ValueError(f"{fn}: src of shape {src.shape} must have index's number of "
                                 f"dimensions and be at least as large ({index.shape})")
        else:
            src = self._fill_value(fn, src)
        if reduce == "multiply":  # each place times every src value sent to it
            if isinstance(src, Tensor):
                src = src[tuple(slice(0, n) for n in index.shape)]
            else:
                src = full(index.shape, src, dtype=self.dtype, device=self.device)
            return self._scatter_reduce(fn, d, index, src, "prod", True)
        return _indexing.Scatter.apply(self, index, src, dim=d, accumulate=reduce == "add",
                                       inplace=inplace)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy of this tensor with src's values written at the places index names along
        dim (self[index[i][j]][j] = src[i][j] for dim 0); src may be a number. reduce 'add'
        or 'multiply' combines them with what is there instead."""
        return self._scatter("scatter", dim, index, src, value, reduce)

    def scatter_add(self, dim, index, src):
        return self._scatter("scatter_add", dim, index, src, None, "add")

    def index_select(self, dim, index):
        """The slices along `dim` that the 1-D integer tensor `index` names, in its order."""
        if self.ndim == 0:
            return self.reshape(1).index_select(0, index).reshape(index.shape)
        d = _dim("index_select", dim, self.ndim)
        index = self._vector_index("index_select", index, d, dim)
        return _indexing.IndexSelect.apply(self, index, dim=d)

    def _vector_index(self, fn, index, d, dim):
        _index_tensor(fn, "index", index, self)
        if index.ndim > 1:
            raise ValueError(f"{fn}: index must be 1-D, got a {index.ndim}-D index of shape "
                             f"{index.shape}")
        _check_index_values(fn, index, self.shape[d], dim)
        return index.reshape(-1)

    def _index_fill(self, fn, dim, index, value, inplace=False):
        if self.ndim == 0:
            raise ValueError(f"{fn}: cannot be applied to a 0-d tensor")
        d = _dim(fn, dim, self.ndim)
        index = self._vector_index(fn, index, d, dim)
        value = self._fill_value(fn, value)
        return _indexing.IndexFill.apply(self, index, value, dim=d, inplace=inplace)

    def index_fill(self, dim, index, value):
        """A copy with the slices along `dim` that `index` names set to `value`."""
        return self._index_fill("index_fill", dim, index, value)

    def index_add(self, dim, index, source, *, alpha=1):
        """A copy with alpha * source's slices along `dim` added to the slices `index` names
        (self[index[i]] += alpha * source[i] for dim 0; an index named twice gets both)."""
        return self._index_add("index_add", dim, index, source, alpha)

    def _index_add(self, fn, dim, index, source, alpha, inplace=False):
        if self.ndim == 0:
            raise ValueError(f"{fn}: cannot be applied to a 0-d tensor")
        d = _dim(fn, dim, self.ndim)
        index = self._vector_index(fn, index, d, dim)
        if not isinstance(source, Tensor):
            raise TypeError(f"{fn}: source must be a Tensor, got {type(source).__name__}")
        _same_device(fn, self, source)
        if source.dtype != self.dtype:
            raise TypeError(f"{fn}: source must have this tensor's dtype {self.dtype}, got "
                            f"{source.dtype}")
        expected = self.shape[:d] + (index.numel(),) + self.shape[d + 1:]
        if source.shape != expected:
            raise ValueError(f"{fn}: source must have shape {expected} (the input's {self.shape} "
                             f"with {index.numel()} slices along dim {dim}), got {source.shape}")
        if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Number) or \
                (self.dtype.kind != "f" and not isinstance(alpha, numbers.Integral)):
            raise TypeError(f"{fn}: alpha must be a number (an int for a tensor of dtype "
                            f"{self.dtype}), got {type(alpha).__name__} {alpha!r}")
        return _indexing.IndexAdd.apply(self, index, source, dim=d, alpha=alpha, inplace=inplace)

    def nonzero(self, *, as_tuple=False):
        """The indices of the non-zero elements: an (n, ndim) int64 tensor, or with as_tuple
        one 1-D tensor per dim, in row-major order."""
        data = self._data.reshape(1) if self.ndim == 0 else self._data
        found = [Tensor._make(_autograd.on_device(i, self.device).astype(np.int64, copy=False))
                 for i in np.nonzero(data)]
        if as_tuple:
            return tuple(found)
        if self.ndim == 0:
            return zeros(found[0].numel(), 0, dtype=int64, device=self.device)
        return stack(found, dim=1)

    # ---- indexing ------------------------------------------------------------------
    def _index(self, index):
        """`index` as NumPy's index of self._data, with PyTorch's meaning: a 0-d integer
        tensor is an int (a select, so the result is a view); a short list holding a list,
        tensor, slice, None or Ellipsis is a tuple (x[[[0, 1], [1, 0]]] is x[[0, 1], [1, 0]]);
        ints do not separate index arrays (_shape.torch_order)."""
        if isinstance(index, list) and len(index) < 32 and any(
                isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) or i is None or i is Ellipsis
                for i in index):
            warnings.warn("an index list holding lists, slices, None or ... is taken as a tuple of "
                          "indices (one per dimension), as PyTorch still does, but that reading is "
                          "deprecated: write x[tuple(seq)] for it, x[tensor(seq)] for one index array",
                          UserWarning, stacklevel=3)
            index = tuple(index)
        items = index if isinstance(index, tuple) else (index,)
        out, basic = [], True
        for i in items:
            if type(i) is slice or type(i) is int or i is None or i is Ellipsis:
                out.append(i)
                continue
            basic = False
            if isinstance(i, Tensor):
                if i.dtype.kind not in "bi":
                    raise IndexError(f"tensors used as indices must be int64 or bool, got {i.dtype}")
                if i.device != self.device and i.device != devices.CPU:  # as PyTorch
                    raise IndexError(f"indices should be either on cpu or on the same device as "
                                     f"the indexed tensor ({self.device}); got indices on "
                                     f"{i.device}")
                i = int(i._data) if i.ndim == 0 and i.dtype.kind == "i" else i._data
            out.append(i)
        if not isinstance(index, tuple):
            return out[0]
        return tuple(out) if basic else _shape.torch_order(tuple(out), self.shape)

    def __getitem__(self, index):
        index = self._index(index)
        try:
            return _shape.Index.apply(self, index=index)
        except IndexError as e:
            raise IndexError(f"index {index!r} is invalid for a tensor of shape {self.shape}: {e}") from None

    def __setitem__(self, index, value):
        """self[index] = value, an in-place operation (recorded by autograd when self or value
        requires grad; value may live on another device, as PyTorch copies it across)."""
        index = self._index(index)
        if isinstance(value, (list, tuple)):
            value = tensor(value, dtype=self.dtype, device=self.device)
        if not self._inplace_records(value):
            devices.assign(self._data, index, value._data if isinstance(value, Tensor) else value)
            self._version_counter.version += 1
            return
        if isinstance(value, Tensor):
            value = value.to(self.device)
            value = value._cast(self.dtype) if value.dtype.kind == self.dtype.kind == "f" else value
        elif isinstance(value, (numbers.Number, np.bool_)):
            value = _scalar(value, self.dtype)
        else:
            value = tensor(value, dtype=self.dtype, device=self.device)  # an array
        where = devices.index_on(index, self.device)
        # a basic index writes a view's elements; an advanced one is taken as writing them all
        written = _shape.basic_view(self._data, where) if _shape._is_basic_index(where) else None
        counter = self._version_counter
        if written is not None and self._history != counter.history and \
                counter.written_only_within(self._history, written):
            # y[i] += v: Python changed the view y[i] in place, now assigns it back; what was
            # written since y's history was set is overwritten here, so that history still
            # explains every element IndexPut keeps
            self._history = counter.history
        self._apply_inplace("__setitem__", lambda: _indexing.IndexPut.apply(self, value, index=where),
                            value, written=written)

    # ---- more pointwise functions ----------------------------------------------------
    def log2(self):
        return self._pointwise("log2")

    def log10(self):
        return self._pointwise("log10")

    def reciprocal(self):
        return self._pointwise("reciprocal")

    def erf(self):
        return self._pointwise("erf")

    def erfc(self):
        return self._pointwise("erfc")

    def erfinv(self):
        """The inverse of erf: +-inf at +-1, nan outside [-1, 1]."""
        return self._pointwise("erfinv")

    def sinh(self):
        return self._pointwise("sinh")

    def cosh(self):
        return self._pointwise("cosh")

    def asin(self):
        return self._pointwise("asin")

    def acos(self):
        return self._pointwise("acos")

    def asinh(self):
        return self._pointwise("asinh")

    def acosh(self):
        return self._pointwise("acosh")

    def atanh(self):
        return self._pointwise("atanh")

    arcsin, arccos, arcsinh, arccosh, arctanh = asin, acos, asinh, acosh, atanh

    def lgamma(self):
        """log |Gamma(x)| (minifw's own, within 1e-14 of the exact value in float64)."""
        return self._pointwise("lgamma")

    def digamma(self):
        """d/dx lgamma(x): -inf at 0, nan at the negative integers."""
        return self._pointwise("digamma")

    def deg2rad(self):
        return self._pointwise("deg2rad")

    def rad2deg(self):
        return self._pointwise("rad2deg")

    def sinc(self):
        """sin(pi x) / (pi x), 1 at 0."""
        return self._pointwise("sinc")

    def frac(self):
        """x - trunc(x): the fractional part, with x's sign."""
        self._check_float("frac")
        return self._pointwise("frac")

    def logit(self, eps=None):
        """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given (no gradient
        outside that range)."""
        if eps is not None:
            eps = _real("logit", "eps", eps, minimum=0, maximum=1)
        return self._pointwise("logit", eps)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN, +inf and -inf replaced by `nan`, `posinf` and `neginf` (by default 0 and the
        dtype's largest and lowest finite values); the gradient flows through finite elements."""
        if self.dtype.kind != "f":
            return self.clone()
        info = np.finfo(self.dtype)
        values = [_real("nan_to_num", name, default if v is None else v, finite=False)
                  for name, v, default in (("nan", nan, 0.0), ("posinf", posinf, float(info.max)),
                                           ("neginf", neginf, float(info.min)))]
        with np.errstate(over="ignore"):  # a value beyond the dtype's range becomes inf, as PyTorch's
            values = [self.dtype.type(v) for v in values]
        return _elementwise.Pointwise.apply(self, name="nan_to_num", args=tuple(values))

    def sgn(self):
        """The sign (for real tensors, sign)."""
        return self.sign()

    def positive(self):
        if self.dtype == bool_:
            raise TypeError("positive: not supported for bool tensors")
        return self

    def signbit(self):
        """True where the sign bit is set (also -0.0), a bool tensor."""
        return Tensor._make(_autograd.on_device(np.signbit(self._data), self.device))

    def isposinf(self):
        return Tensor._make(_autograd.on_device(self._data == np.inf, self.device)) \
            if self.dtype.kind == "f" else zeros(self.shape, dtype=bool_, device=self.device)

    def isneginf(self):
        return Tensor._make(_autograd.on_device(self._data == -np.inf, self.device)) \
            if self.dtype.kind == "f" else zeros(self.shape, dtype=bool_, device=self.device)

    def _float_binary(self, other, name, reverse=False):
        """BINARY[name] of this tensor and `other` (a tensor or a number), promoted as
        arithmetic is and then to the default float dtype if not floating point."""
        if isinstance(other, np.ndarray):
            other = tensor(other)
        if isinstance(other, (bool, np.bool_)) or not isinstance(other, (Tensor, numbers.Real)):
            raise TypeError(f"{name}: other must be a Tensor or a real number, got "
                            f"{type(other).__name__}")
        dtype = _result_dtype(self, other)
        dtype = dtype if dtype.kind == "f" else _default_dtype
        a = self._cast(dtype)
        b = other._cast(dtype) if isinstance(other, Tensor) else _scalar(other, dtype)
        a, b = (b, a) if reverse else (a, b)
        return _elementwise.BinaryPointwise.apply(a, b, name=name)

    def atan2(self, other):
        """The angle of the point (other, self) (x = other, y = self), in (-pi, pi]."""
        return self._float_binary(other, "atan2")

    arctan2 = atan2

    def hypot(self, other):
        return self._float_binary(other, "hypot")

    def fmod(self, other):
        """The remainder of self / other with self's sign (C's fmod); integers stay integers
        (a division by zero raises)."""
        if self.dtype.kind in "iu" and _result_dtype(self, other).kind in "iu":
            return self._integral_or_float(other, "fmod", np.fmod)
        return self._float_binary(other, "fmod")

    def xlogy(self, other):
        """self * log(other), 0 where self is 0 (unless other is nan)."""
        return self._float_binary(other, "xlogy")

    def logaddexp(self, other):
        """log(exp(self) + exp(other)), without overflow."""
        return self._float_binary(other, "logaddexp")

    def copysign(self, other):
        """|self| with other's sign (of -0.0 too)."""
        return self._float_binary(other, "copysign")

    def float_power(self, exponent):
        """self ** exponent in float64, whatever the dtypes."""
        if isinstance(exponent, Tensor):
            return self._cast(float64) ** exponent._cast(float64)
        if isinstance(exponent, (bool, np.bool_)) or not isinstance(exponent, numbers.Real):
            raise TypeError(f"float_power: exponent must be a Tensor or a real number, got "
                            f"{type(exponent).__name__}")
        return self._cast(float64) ** float(exponent)

    def float_power_(self, exponent):
        if self.dtype != float64:
            raise TypeError(f"float_power_: the result is float64, which this tensor of dtype "
                            f"{self.dtype} cannot hold; use float_power")
        return self._apply_inplace("float_power_", lambda: self.float_power(exponent), exponent)

    def heaviside(self, values):
        """0 where self < 0, 1 where self > 0, `values` (broadcast) where self == 0; `values`
        must have this tensor's dtype. Not differentiable (as PyTorch's)."""
        if not isinstance(values, Tensor):
            raise TypeError(f"heaviside: values must be a Tensor, got {type(values).__name__}")
        if values.dtype != self.dtype:
            raise TypeError(f"heaviside: values must have the input's dtype {self.dtype}, got "
                            f"{values.dtype}")
        dev = _autograd.common_device("heaviside", (self, values))
        x, v = _autograd._data_on(self, dev), _autograd._data_on(values, dev)
        out = np.where(x == 0, v, (x > 0).astype(self.dtype))
        return Tensor._make(_autograd.on_device(out.astype(self.dtype, copy=False), dev))

    def _integer_pair(self, other, fn, ufunc):
        got = self._operands(other, fn)
        if got is None or got[2].kind not in "iu":
            raise TypeError(f"{fn}: expected integer tensors (or ints), got {self.dtype} and "
                            f"{getattr(other, 'dtype', type(other).__name__)}")
        a, b, _, dev = got
        return Tensor._make(_autograd.on_device(ufunc(a, b), dev))

    def gcd(self, other):
        """The greatest common divisor elementwise (non-negative; gcd(0, 0) = 0)."""
        return self._integer_pair(other, "gcd", np.gcd)

    def lcm(self, other):
        return self._integer_pair(other, "lcm", np.lcm)

    # ---- products --------------------------------------------------------------------
    def _vector(self, fn, name):
        if self.ndim != 1:
            raise ValueError(f"{fn}: {name} must be a 1-D tensor, got shape {self.shape}")
        return self

    def outer(self, vec2):
        """The outer product self[i] * vec2[j] of two 1-D tensors."""
        self._vector("outer", "input")
        _check_tensor("outer", "vec2", vec2)._vector("outer", "vec2")
        return self.reshape(-1, 1) * vec2.reshape(1, -1)

    ger = outer

    def dot(self, other):
        """The inner product of two 1-D tensors of one dtype and size."""
        self._vector("dot", "input")
        _check_tensor("dot", "other", other)._vector("dot", "other")
        if other.dtype != self.dtype:
            raise TypeError(f"dot: expected both vectors to have the same dtype, got {self.dtype} "
                            f"and {other.dtype}")
        if other.shape != self.shape:
            raise ValueError(f"dot: the vectors must have the same size, got {self.numel()} and "
                             f"{other.numel()}")
        return (self * other).sum(dtype=self.dtype)  # int32 stays int32, as PyTorch's

    vdot = dot

    def inner(self, other):
        """The sum of products over the last dims (a 0-d operand: the plain product); the
        result's shape is self.shape[:-1] + other.shape[:-1]."""
        _check_tensor("inner", "other", other)
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise ValueError(f"inner: the last dims must match, got shapes {self.shape} and "
                             f"{other.shape}")
        return tensordot(self, other, ([-1], [-1]))

    def kron(self, other):
        """The Kronecker product: the blocks self[i] * other, laid out as self's elements."""
        _check_tensor("kron", "other", other)
        n = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + self.shape)
        b = other.reshape((1,) * (n - other.ndim) + other.shape)
        interleaved_a = tuple(x for s in a.shape for x in (s, 1))
        interleaved_b = tuple(x for s in b.shape for x in (1, s))
        out = a.reshape(interleaved_a) * b.reshape(interleaved_b)
        return out.reshape(tuple(p * q for p, q in zip(a.shape, b.shape)))

    def cross(self, other, dim=None):
        """The cross product of 3-vectors along `dim` (broadcast); dim None: the first dim of
        size 3."""
        fn = "cross"
        _check_tensor(fn, "other", other)
        try:
            shape = np.broadcast_shapes(self.shape, other.shape)
        except ValueError:
            raise ValueError(f"{fn}: shapes {self.shape} and {other.shape} do not broadcast") from None
        if dim is None:
            found = [i for i, n in enumerate(shape) if n == 3]
            if not found:
                raise ValueError(f"{fn}: no dimension of size 3 in shape {shape}")
            d = found[0]
        else:
            d = _dim(fn, dim, len(shape))
        if shape[d] != 3:
            raise ValueError(f"{fn}: dimension {dim} must have size 3, got {shape[d]} (shape {shape})")
        a, b = self.expand(*shape).unbind(d), other.expand(*shape).unbind(d)
        return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]], dim=d)

    def _scaled_sum(self, fn, product, beta, alpha):
        """beta * self + alpha * product (self broadcast to product's shape); beta 0 ignores
        self's values (nan and inf too), as PyTorch."""
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Number):
                raise TypeError(f"{fn}: {name} must be a number, got {type(v).__name__}")
        try:
            fits = np.broadcast_shapes(self.shape, product.shape) == product.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{fn}: input of shape {self.shape} does not broadcast to the "
                             f"product's shape {product.shape}")
        scaled = product if alpha == 1 else product * alpha
        if beta == 0:  # self's values (nan and inf too) take no part
            return scaled._cast(_result_dtype(self, scaled))
        return scaled + (self if beta == 1 else self * beta)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """beta * self + alpha * (mat1 @ mat2) (self broadcast)."""
        return _autograd.rename(self._scaled_sum("addmm", _mm_checked("addmm", mat1, mat2), beta, alpha),
                                "AddmmBackward0", self, mat1, mat2)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """beta * self + alpha * (mat @ vec)."""
        if not isinstance(mat, Tensor) or mat.ndim != 2:
            raise ValueError(f"addmv: mat must be a 2-D tensor, got {getattr(mat, 'shape', mat)!r}")
        if not isinstance(vec, Tensor) or vec.ndim != 1:
            raise ValueError(f"addmv: vec must be a 1-D tensor, got {getattr(vec, 'shape', vec)!r}")
        return _autograd.rename(self._scaled_sum("addmv", _product("addmv", mat, vec), beta, alpha),
                                "AddmvBackward0", self, mat, vec)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
        return self._scaled_sum("addbmm", _bmm_checked("addbmm", batch1, batch2).sum(0), beta, alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * (batch1 @ batch2), batch by batch."""
        return _autograd.rename(self._scaled_sum("baddbmm", _bmm_checked("baddbmm", batch1, batch2),
                                                 beta, alpha), "BaddbmmBackward0", self, batch1, batch2)

    # ---- more shapes -----------------------------------------------------------------
    def movedim(self, source, destination):
        """Dims `source` (an int or a sequence) moved to the places `destination` names; the
        others keep their order."""
        fn = "movedim"
        src = _dims(fn, source, self.ndim, "source") or ()
        dst = _dims(fn, destination, self.ndim, "destination") or ()
        if len(src) != len(dst):
            raise ValueError(f"{fn}: source and destination must name as many dims, got {source!r} "
                             f"and {destination!r}")
        order = [d for d in range(self.ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return self if not self.ndim else self.permute(*order)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The `offset` diagonal of the matrices spanned by dim1 and dim2, as the last dim (a
        copy here, where PyTorch returns a view)."""
        fn = "diagonal"
        if self.ndim < 2:
            raise ValueError(f"{fn}: input must have at least 2 dimensions, got shape {self.shape}")
        d1, d2 = _dim(fn, dim1, self.ndim, "dim1"), _dim(fn, dim2, self.ndim, "dim2")
        if d1 == d2:
            raise ValueError(f"{fn}: dim1 and dim2 must differ, both are {d1}")
        return _shape.DiagonalAlong.apply(self, offset=_int(fn, "offset", offset), dim1=d1, dim2=d2)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """The last dim written on the `offset` diagonal of new matrices spanned by dims dim1
        and dim2 of the result (one dim more than the input), zeros elsewhere."""
        fn = "diag_embed"
        if self.ndim < 1:
            raise ValueError(f"{fn}: input must have at least 1 dimension, got a 0-d tensor")
        d1, d2 = _dim(fn, dim1, self.ndim + 1, "dim1"), _dim(fn, dim2, self.ndim + 1, "dim2")
        if d1 == d2:
            raise ValueError(f"{fn}: dim1 and dim2 must differ, both are {d1}")
        return _shape.DiagonalEmbed.apply(self, offset=_int(fn, "offset", offset), dim1=d1, dim2=d2)

    def tile(self, *dims):
        """The tensor repeated dims[i] times along dim i; fewer dims than the tensor has are
        padded with 1s in front (unlike repeat)."""
        dims = _check_size("tile", _shape_args("tile", dims))
        return self.repeat(*((1,) * (self.ndim - len(dims)) + dims))

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each element (or slice along `dim`) repeated `repeats` times (an int, or a tensor of
        one count per element along dim); dim None: of the flattened tensor."""
        fn = "repeat_interleave"
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else _dim(fn, dim, max(self.ndim, 1))
        if x.ndim == 0:
            x = x.reshape(1)
        n = x.shape[d]
        if isinstance(repeats, Tensor):
            if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
                raise TypeError(f"{fn}: repeats must be an int or a 0-D/1-D integer tensor, got "
                                f"dtype {repeats.dtype} and shape {repeats.shape}")
            counts = devices.to_device(repeats._data, devices.CPU).reshape(-1)
            if counts.size == 1:
                counts = np.repeat(counts, n)
            if counts.size != n:
                raise ValueError(f"{fn}: repeats must have {n} elements (one per element along "
                                 f"dim), got {counts.size}")
        else:
            counts = np.full(n, _int(fn, "repeats", repeats, minimum=0), np.int64)
        if counts.size and counts.min() < 0:
            raise ValueError(f"{fn}: repeats must be non-negative, got {int(counts.min())}")
        index = np.repeat(np.arange(n), counts)
        if output_size is not None and _int(fn, "output_size", output_size) != index.size:
            raise ValueError(f"{fn}: output_size {output_size} does not match the total of "
                             f"repeats {index.size}")
        return x.index_select(d, Tensor._make(devices.to_device(index, self.device)))

    def rot90(self, k=1, dims=(0, 1)):
        """Rotated by 90 degrees k times, from dims[0] towards dims[1]."""
        fn = "rot90"
        dims = tuple(dims)
        if len(dims) != 2:
            raise ValueError(f"{fn}: dims must name 2 dims, got {dims!r}")
        if self.ndim < 2:
            raise ValueError(f"{fn}: input must have at least 2 dimensions, got shape {self.shape}")
        d0, d1 = _dims(fn, dims, self.ndim, "dims")
        k = _int(fn, "k", k) % 4
        if k == 0:
            return self.clone()
        if k == 2:
            return self.flip(d0, d1)
        return self.flip(d1 if k == 1 else d0).transpose(d0, d1)

    def ravel(self):
        return self.reshape(-1)

    def flipud(self):
        if self.ndim < 1:
            raise ValueError("flipud: input must have at least 1 dimension")
        return self.flip(0)

    def fliplr(self):
        if self.ndim < 2:
            raise ValueError(f"fliplr: input must have at least 2 dimensions, got shape {self.shape}")
        return self.flip(1)

    def broadcast_to(self, *size):
        """self expanded to `size` (a tuple, or the sizes as arguments, as expand)."""
        return self.expand(*_shape_args("broadcast_to", size))

    def tensor_split(self, indices_or_sections, dim=0):
        """Views along `dim`: `sections` pieces of nearly equal size (the first size % sections
        one larger), or the pieces between the given indices (clipped to the size)."""
        fn = "tensor_split"
        if self.ndim == 0:
            raise ValueError(f"{fn}: cannot be applied to a 0-d tensor")
        d = _dim(fn, dim, self.ndim)
        size = self.shape[d]
        if isinstance(indices_or_sections, Tensor):
            if indices_or_sections.dtype.kind not in "iu" or indices_or_sections.ndim > 1:
                raise TypeError(f"{fn}: indices_or_sections must be an int64 tensor of 0 or 1 dims, "
                                f"got {indices_or_sections.dtype} of shape {indices_or_sections.shape}")
            indices_or_sections = indices_or_sections.tolist()
        if _is_int(indices_or_sections):
            sections = _int(fn, "sections", indices_or_sections, minimum=1)
            small, extra = divmod(size, sections)
            sizes = [small + 1] * extra + [small] * (sections - extra)
            bounds = list(itertools.accumulate(sizes))[:-1]
        elif isinstance(indices_or_sections, (list, tuple)):
            bounds = [_int(fn, "indices", i) for i in indices_or_sections]
        else:
            raise TypeError(f"{fn}: indices_or_sections must be an int, a list of ints or a tensor, "
                            f"got {type(indices_or_sections).__name__}")

        def clip(i):
            return min(max(i + size if i < 0 else i, 0), size)
        starts, ends = [0] + [clip(b) for b in bounds], [clip(b) for b in bounds] + [size]
        return tuple(self[(slice(None),) * d + (slice(s, max(s, e)),)] for s, e in zip(starts, ends))

    def _split_by(self, fn, sections, d):
        if _is_int(sections):
            n = _int(fn, "sections", sections, minimum=1)
            if self.shape[d] % n:
                raise ValueError(f"{fn}: dim {d} of size {self.shape[d]} cannot be split into "
                                 f"{n} equal sections")
        return self.tensor_split(sections, d)

    def hsplit(self, sections, *indices):
        if indices:  # hsplit(1, 3): the indices as separate arguments
            sections = (sections,) + indices
        if self.ndim < 1:
            raise ValueError("hsplit: input must have at least 1 dimension")
        return self._split_by("hsplit", sections, 0 if self.ndim == 1 else 1)

    def vsplit(self, sections, *indices):
        if indices:  # vsplit(1, 3): the indices as separate arguments
            sections = (sections,) + indices
        if self.ndim < 2:
            raise ValueError(f"vsplit: input must have at least 2 dimensions, got shape {self.shape}")
        return self._split_by("vsplit", sections, 0)

    def dsplit(self, sections, *indices):
        if indices:  # dsplit(1, 3): the indices as separate arguments
            sections = (sections,) + indices
        if self.ndim < 3:
            raise ValueError(f"dsplit: input must have at least 3 dimensions, got shape {self.shape}")
        return self._split_by("dsplit", sections, 2)

    def split_with_sizes(self, split_sizes, dim=0):
        if not isinstance(split_sizes, (list, tuple)):
            raise TypeError(f"split_with_sizes: split_sizes must be a list of ints, got "
                            f"{type(split_sizes).__name__}")
        return self.split(list(split_sizes), dim)

    def unfold(self, dimension, size, step):
        """Every window of `size` elements along `dimension`, `step` apart, as a new last dim
        (dimension then counts the windows): a view, as PyTorch's."""
        fn = "unfold"
        x = self.reshape(1) if self.ndim == 0 else self
        d = _dim(fn, dimension, x.ndim, "dimension")
        size, step = _int(fn, "size", size, minimum=0), _int(fn, "step", step, minimum=1)
        if size > x.shape[d]:
            raise ValueError(f"{fn}: size ({size}) must not exceed the size of dimension "
                             f"{dimension} ({x.shape[d]})")
        out = _shape.Unfold.apply(x, dim=d, size=size, step=step)
        return out.reshape(size) if self.ndim == 0 else out

    def take(self, index):
        """The elements of the flattened tensor at `index` (an integer tensor; negative counts
        from the end), in index's shape."""
        fn = "take"
        _index_tensor(fn, "index", index, self)
        n = self.numel()
        if index.numel():
            low, high = int(index._data.min()), int(index._data.max())
            if low < -n or high >= n:
                raise IndexError(f"{fn}: index {low if low < -n else high} is out of range for a "
                                 f"tensor of {n} elements")
        flat_index = index._data.astype(np.int64) % builtins.max(n, 1)
        return self.reshape(-1)[Tensor._make(flat_index)].reshape(index.shape)

    def take_along_dim(self, indices, dim=None):
        """gather along `dim` with `indices` broadcast against this tensor (except along dim);
        dim None: of the flattened tensor."""
        fn = "take_along_dim"
        _index_tensor(fn, "indices", indices, self)
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        if indices.ndim != self.ndim:
            raise ValueError(f"{fn}: indices must have as many dimensions as the input "
                             f"({self.ndim}), got shape {indices.shape}")
        d = _dim(fn, dim, max(self.ndim, 1))
        if self.ndim == 0:
            return self.gather(0, indices)
        try:
            common = np.broadcast_shapes(self.shape[:d] + (1,) + self.shape[d + 1:],
                                         indices.shape[:d] + (1,) + indices.shape[d + 1:])
        except ValueError:
            raise ValueError(f"{fn}: input {self.shape} and indices {indices.shape} do not "
                             f"broadcast outside dim {dim}") from None
        x = self.expand(*(common[:d] + (self.shape[d],) + common[d + 1:]))
        i = indices.expand(*(common[:d] + (indices.shape[d],) + common[d + 1:]))
        return x.gather(d, Tensor._make(i._data.copy()))

    def index_copy(self, dim, index, source):
        """A copy with the slices along `dim` that `index` names replaced by source's slices,
        in order (index should not repeat)."""
        return self._index_copy("index_copy", dim, index, source)

    def index_copy_(self, dim, index, source):
        return self._apply_inplace("index_copy_", lambda: self._index_copy(
            "index_copy_", dim, index, source), index, source)

    def _index_copy(self, fn, dim, index, source):
        x = self.reshape(1) if self.ndim == 0 else self
        d = _dim(fn, dim, x.ndim)
        index = x._vector_index(fn, index, d, dim)
        _check_tensor(fn, "source", source)
        _same_device(fn, self, source)
        if source.dtype != self.dtype:
            raise TypeError(f"{fn}: source must have this tensor's dtype {self.dtype}, got "
                            f"{source.dtype}")
        expected = x.shape[:d] + (index.numel(),) + x.shape[d + 1:]
        if source.shape != expected and not (source.ndim == 0 and math.prod(expected) == 1):
            raise ValueError(f"{fn}: source must have shape {expected}, got {source.shape}")
        where = (slice(None),) * d + (index._data,)
        out = _elementwise.Clone.apply(x)
        out = _indexing.IndexPut.apply(out, source.reshape(expected), index=where)
        return out.reshape(self.shape)

    def masked_scatter(self, mask, source):
        """A copy with the elements where the bool `mask` (broadcast) is True taken from
        source's elements in order."""
        return self._masked_scatter("masked_scatter", mask, source)

    def masked_scatter_(self, mask, source):
        return self._apply_inplace("masked_scatter_", lambda: self._masked_scatter(
            "masked_scatter_", mask, source), mask, source)

    def _masked_scatter(self, fn, mask, source):
        if not isinstance(mask, Tensor) or mask.dtype != bool_:
            raise TypeError(f"{fn}: mask must be a bool tensor, got "
                            f"{getattr(mask, 'dtype', type(mask).__name__)}")
        _check_tensor(fn, "source", source)
        _same_device(fn, self, mask, source)
        if source.dtype != self.dtype:
            raise TypeError(f"{fn}: source must have this tensor's dtype {self.dtype}, got "
                            f"{source.dtype}")
        try:
            shape = np.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            shape = None
        if shape != self.shape:
            raise ValueError(f"{fn}: mask of shape {mask.shape} does not broadcast to the input's "
                             f"shape {self.shape}")
        places = np.flatnonzero(devices.to_device(np.broadcast_to(mask._data, shape), devices.CPU))
        if places.size > source.numel():
            raise ValueError(f"{fn}: mask selects {places.size} elements but source has only "
                             f"{source.numel()}")
        out = _elementwise.Clone.apply(self.reshape(-1))
        out = _indexing.IndexPut.apply(out, source.reshape(-1)[:places.size],
                                       index=devices.to_device(places, self.device))
        return out.reshape(self.shape)

    def argwhere(self):
        return self.nonzero()

    def sum_to_size(self, *size):
        """The sum down to `size`, to which this tensor must be expandable."""
        size = _shape_args("sum_to_size", size)
        try:
            fits = np.broadcast_shapes(size, self.shape) == self.shape and len(size) <= self.ndim
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"sum_to_size: size {size} is not expandable to the tensor's shape "
                             f"{self.shape}")
        lead = self.ndim - len(size)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size)
                                          if n == 1 and self.shape[lead + i] != 1)
        return (self.sum(axes, keepdim=True) if axes else self).reshape(size)

    # ---- more reductions and scans ---------------------------------------------------
    def _scan_input(self, fn, dim, dtype):
        """(x, axis) of a scan along `dim`: x cast by dtype=, else integers and bools as int64
        (as sum), a 0-d tensor as 1 element."""
        x = self._cast(_dtype_arg(dtype, fn)) if dtype is not None else \
            self if self.dtype.kind == "f" else self._cast(int64)
        x = x.reshape(1) if x.ndim == 0 else x
        return x, _dim(fn, dim, x.ndim)

    def cumprod(self, dim, *, dtype=None):
        """Running products along `dim` (exact gradients where elements are zero)."""
        x, d = self._scan_input("cumprod", dim, dtype)
        out = _reductions.CumulativeProduct.apply(x, dim=d) if x.dtype.kind == "f" else \
            Tensor._make(_autograd.on_device(np.cumprod(x._data, axis=d), self.device))
        return out.reshape(self.shape)

    def cumprod_(self, dim, *, dtype=None):
        return self._apply_inplace("cumprod_", lambda: self.cumprod(dim, dtype=dtype))

    def cumsum_(self, dim, *, dtype=None):
        return self._apply_inplace("cumsum_", lambda: self.cumsum(dim, dtype=dtype))

    def _cumulative_extreme(self, fn, dim, smallest):
        x = self.reshape(1) if self.ndim == 0 else self
        d = _dim(fn, dim, x.ndim)
        if self.dtype == bool_:
            x = x._cast(int64)
        values, indices = _reductions.CumulativeExtreme.apply(x, dim=d, smallest=smallest)
        values = values._cast(self.dtype) if self.dtype == bool_ else values
        return CumulativeResult(values.reshape(self.shape), indices.reshape(self.shape))

    def cummax(self, dim):
        """(values, indices) of the running maximum along `dim` (NaN, once met, stays)."""
        return self._cumulative_extreme("cummax", dim, smallest=False)

    def cummin(self, dim):
        return self._cumulative_extreme("cummin", dim, smallest=True)

    def logcumsumexp(self, dim):
        """log(cumsum(exp(x))) along `dim`, computed without overflow."""
        self._check_float("logcumsumexp")
        x = self.reshape(1) if self.ndim == 0 else self
        return _reductions.LogCumulativeSumExp.apply(x, dim=_dim("logcumsumexp", dim, x.ndim)) \
            .reshape(self.shape)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """(values, indices) of the k-th smallest element (k from 1) along `dim`."""
        fn = "kthvalue"
        x = self.reshape(1) if self.ndim == 0 else self
        d = _dim(fn, dim, x.ndim)
        k = _int(fn, "k", k)
        if not 1 <= k <= x.shape[d]:
            raise ValueError(f"{fn}: k ({k}) must be in [1, {x.shape[d]}], the size of dim {dim}")
        values, indices = _reductions.KthValue.apply(x, k=k, dim=d, keepdim=bool(keepdim))
        if self.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        return KthValueResult(values, indices)

    def mode(self, dim=-1, keepdim=False):
        """(values, indices) of the most frequent value along `dim` (the smallest of equally
        frequent ones) and the index of its last occurrence."""
        fn = "mode"
        x = self.reshape(1) if self.ndim == 0 else self
        d = _dim(fn, dim, x.ndim)
        if x.shape[d] == 0:
            raise IndexError(f"{fn}: expected reduction dim {dim} to have non-zero size")
        # on the host: sort each row stably, measure the runs of equal values, take the first
        # longest run (the smallest of the most frequent values) and its last element
        data = devices.to_device(x._data, devices.CPU)
        order = _sorting.sort_order(data, d)
        ranked = np.moveaxis(np.take_along_axis(data, order, axis=d), d, -1)
        starts = np.ones(ranked.shape, bool)
        starts[..., 1:] = ranked[..., 1:] != ranked[..., :-1]
        if x.dtype.kind == "f":  # NaN != NaN: a run of NaNs is one run
            starts[..., 1:] &= ~(np.isnan(ranked[..., 1:]) & np.isnan(ranked[..., :-1]))
        position = np.arange(ranked.shape[-1])
        length = position - np.maximum.accumulate(np.where(starts, position, 0), axis=-1) + 1
        best_end = np.moveaxis(np.argmax(length, axis=-1)[..., None], -1, d)
        idx = devices.to_device(np.take_along_axis(order, best_end, axis=d).astype(np.int64),
                                self.device)
        values = x.gather(d, Tensor._make(idx))
        indices = Tensor._make(idx)
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        if self.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        return ModeResult(values, indices)

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        """sum, NaN counting as 0."""
        x = where(self.isnan(), 0.0, self) if self.dtype.kind == "f" else self
        return x.sum(dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """mean of the elements that are not NaN (NaN where there are none)."""
        x = self if dtype is None else self._cast(_dtype_arg(dtype, "nanmean"))
        x._check_float("nanmean")
        present = ~x.isnan()
        return x.nansum(dim, keepdim) / present.sum(dim, keepdim)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The q-th quantiles (q a number or a 1-D tensor in [0, 1]; a tensor adds a first dim)
        along `dim` (all elements when None), between the sorted elements as `interpolation`
        says: 'linear', 'lower', 'higher', 'midpoint' or 'nearest' (half to even). NaN where
        a row holds one."""
        return self._quantile("quantile", q, dim, keepdim, interpolation, ignore_nan=False)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """quantile ignoring NaN (NaN only where a row holds nothing else)."""
        return self._quantile("nanquantile", q, dim, keepdim, interpolation, ignore_nan=True)

    def _quantile(self, fn, q, dim, keepdim, interpolation, ignore_nan):
        self._check_float(fn)
        _choice(fn, "interpolation", interpolation, ("linear", "lower", "higher", "midpoint", "nearest"))
        scalar_q = not isinstance(q, Tensor)
        if scalar_q:
            qs = np.array([_real(fn, "q", q)])
        else:
            if q.ndim > 1:
                raise ValueError(f"{fn}: q must be a number or a 0-D or 1-D tensor, got shape {q.shape}")
            if q.dtype != self.dtype:
                raise TypeError(f"{fn}: q must have the input's dtype {self.dtype}, got {q.dtype}")
            qs = devices.to_device(q._data, devices.CPU).reshape(-1).astype(np.float64)
        if ((qs < 0) | (qs > 1) | np.isnan(qs)).any():
            raise ValueError(f"{fn}: q must be in [0, 1], got {qs.tolist() if qs.size > 1 else float(qs[0])}")
        if dim is None:
            x, d = self.reshape(-1), 0
        else:
            x = self.reshape(1) if self.ndim == 0 else self
            d = _dim(fn, dim, x.ndim)
        if x.shape[d] == 0:
            raise IndexError(f"{fn}: the input is empty along the reduced dim")
        x = x.movedim(d, -1)
        ranked = x.sort(-1).values  # NaN last
        n = x.shape[-1]
        nans = np.sum(np.isnan(x._data), axis=-1, keepdims=True)
        valid = n - nans if ignore_nan else nans * 0 + n  # elements ranked per row: (..., 1)
        rank = devices.to_device(qs.reshape((-1,) + (1,) * x.ndim), self.device) * \
            np.maximum(valid - 1, 0)  # (Q, ..., 1) positions, float64
        low = np.floor(rank)
        high = np.ceil(rank)
        if interpolation == "lower":
            high = low
        elif interpolation == "higher":
            low = high
        elif interpolation == "nearest":
            low = high = np.round(rank)
        weight = rank - low if interpolation == "linear" else \
            np.where(high > low, 0.5, 0.0) if interpolation == "midpoint" else rank * 0.0
        batch = (len(qs),) + ranked.shape[:-1] + (1,)
        expanded = ranked.unsqueeze(0).expand(len(qs), *ranked.shape)
        pick = [expanded.gather(-1, Tensor._make(
            devices.broadcast_to(i.astype(np.int64), batch).copy())) for i in (low, high)]
        w = Tensor._make(devices.broadcast_to(weight.astype(self.dtype), batch).copy())
        out = pick[0] + (pick[1] - pick[0]) * w  # the lower element exactly where w is 0
        out = out.squeeze(-1)
        # a row with a NaN gives NaN (quantile), as does a row of NaNs only (nanquantile)
        bad = (nans > 0) if not ignore_nan else (valid == 0)
        out = where(Tensor._make(devices.broadcast_to(bad[..., 0], out.shape[1:]).copy()),
                    float("nan"), out)
        if keepdim:
            if dim is None:
                out = out.reshape((len(qs),) + (1,) * self.ndim)
            else:
                out = out.unsqueeze(d + 1)
        return out[0] if scalar_q else out

    def count_nonzero(self, dim=None, *dims):
        if dims:  # count_nonzero(0, 1): several dims as separate arguments
            dim = (dim,) + dims
        return (self != 0).sum(dim)

    def aminmax(self, *, dim=None, keepdim=False):
        """(min, max) over all elements or along `dim`."""
        return AminmaxResult(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """The n-th forward difference along `dim` (bool tensors: xor), prepend and append
        joined on first."""
        fn = "diff"
        if self.ndim == 0:
            raise ValueError(f"{fn}: expected a tensor of at least 1 dimension, got a 0-d tensor")
        d = _dim(fn, dim, self.ndim)
        n = _int(fn, "n", n, minimum=0)
        parts = []
        for name, extra in (("prepend", prepend), ("append", append)):
            if extra is not None:
                extra = extra if isinstance(extra, Tensor) else tensor(extra, device=self.device)
                if extra.ndim == 0:
                    extra = extra.expand(*(self.shape[:d] + (1,) + self.shape[d + 1:]))
            parts.append(extra)
        x = cat([t for t in (parts[0], self, parts[1]) if t is not None], dim=d) \
            if parts[0] is not None or parts[1] is not None else self
        for _ in range(n):
            size = x.shape[d]
            if size == 0:
                break
            later, earlier = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
            x = later ^ earlier if x.dtype == bool_ else later - earlier
        return x

    def histc(self, bins=100, min=0, max=0):
        """A histogram of `bins` equal bins over [min, max] (the data's own range when both
        are 0); values outside are ignored, max falls in the last bin."""
        fn = "histc"
        self._check_float(fn)
        bins = _int(fn, "bins", bins, minimum=1)
        lo, hi = _real(fn, "min", min), _real(fn, "max", max)
        data = devices.to_device(self._data, devices.CPU).reshape(-1)
        if lo == hi == 0 and data.size:
            lo, hi = float(data.min()), float(data.max())
        if lo > hi:
            raise ValueError(f"{fn}: max ({hi}) must be >= min ({lo})")
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        counts, _ = np.histogram(data[(data >= lo) & (data <= hi)], bins=bins, range=(lo, hi))
        return Tensor._make(_autograd.on_device(counts.astype(self.dtype), self.device))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """A copy with src's elements combined into the places index names along dim by
        `reduce`: 'sum', 'prod', 'mean', 'amax' or 'amin'; include_self=False leaves this
        tensor's values out where src arrives."""
        return self._scatter_reduce("scatter_reduce", dim, index, src, reduce, include_self)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return self._apply_inplace("scatter_reduce_", lambda: self._scatter_reduce(
            "scatter_reduce_", dim, index, src, reduce, include_self), index, src)

    def _scatter_reduce(self, fn, dim, index, src, reduce, include_self):
        _choice(fn, "reduce", reduce, ("sum", "prod", "mean", "amax", "amin"))
        _bool(fn, "include_self", include_self)
        _check_tensor(fn, "src", src)
        x = self.reshape(1) if self.ndim == 0 else self
        if self.ndim == 0:
            index, src = index.reshape(1), src.reshape(1)
        d = x._gather_checks(fn, dim, index)
        _same_device(fn, self, src)
        if src.dtype != self.dtype:
            raise TypeError(f"{fn}: src must have this tensor's dtype {self.dtype}, got {src.dtype}")
        if src.ndim != index.ndim or any(i > n for i, n in zip(index.shape, src.shape)):
            raise ValueError(f"{fn}: src of shape {src.shape} must have index's number of "
                             f"dimensions and be at least as large ({index.shape})")
        return _indexing.ScatterReduce.apply(x, index, src, dim=d, reduce=reduce,
                                             include_self=include_self).reshape(self.shape)

    # ---- PyTorch's remaining Tensor methods: products, shapes in place, introspection -----
    def mm(self, mat2):
        """The product of two matrices (2-D tensors only), as torch.mm."""
        return _mm_checked("mm", self, mat2)

    def bmm(self, mat2):
        """Batched matrix products of two 3-D tensors with one batch size, as torch.bmm."""
        return _autograd.rename(_bmm_checked("bmm", self, mat2), "BmmBackward0", self, mat2)

    def mv(self, vec):
        """The product of a matrix (2-D) and a vector (1-D), as torch.mv."""
        if self.ndim != 2:
            raise ValueError(f"mv: input must be a 2-D tensor, got shape {self.shape}")
        if not isinstance(vec, Tensor) or vec.ndim != 1:
            raise ValueError(f"mv: vec must be a 1-D tensor, got "
                             f"{getattr(vec, 'shape', type(vec).__name__)}")
        if self.shape[1] != vec.shape[0]:
            raise ValueError(f"mv: input {self.shape} and vec {vec.shape} cannot be multiplied")
        return _product("mv", self, vec)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        """beta * self + alpha * outer(vec1, vec2) (self broadcast to it), as torch.addr."""
        for name, v in (("vec1", vec1), ("vec2", vec2)):
            if not isinstance(v, Tensor) or v.ndim != 1:
                raise ValueError(f"addr: {name} must be a 1-D tensor, got "
                                 f"{getattr(v, 'shape', type(v).__name__)}")
        return self._scaled_sum("addr", vec1.outer(vec2), beta, alpha)

    def reshape_as(self, other):
        return self.reshape(_check_tensor("reshape_as", "other", other).shape)

    def adjoint(self):
        """The conjugate transpose of the last two dims: their transpose (no complex dtypes)."""
        if self.ndim < 2:
            raise ValueError(f"adjoint: expects a tensor of at least 2 dimensions, got shape "
                             f"{self.shape}")
        return self.transpose(-2, -1)

    mH = property(adjoint)
    @property
    def H(self):
        """The conjugate transpose of a matrix (a 0-d tensor: itself); mH for batches."""
        if self.ndim not in (0, 2):
            raise ValueError(f"H: only defined for matrices (2-D tensors), got a {self.ndim}-D "
                             f"tensor; use mH for batches of matrices")
        return self if self.ndim == 0 else self.t()

    def _shape_inplace(self, name, view):
        """squeeze_, t_, ...: this tensor takes the shape view(self) gives, over its own memory
        (the same elements: no value changes), and as in PyTorch the version steps and autograd
        records the view operation as this tensor's history."""
        records = self._inplace_records()
        result = view(self)
        data = result._data if np.may_share_memory(result._data, self._data) or not self._data.size \
            else None
        if data is None:  # NumPy copied: take the view of the array itself
            raise RuntimeError(f"{name}: the new shape is not a view of this tensor's memory")
        self._data = data
        if records:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
        self._version_counter.version += 1
        return self

    def squeeze_(self, dim=None, *dims):
        if dims:
            dim = (dim,) + dims
        return self._shape_inplace("squeeze_", lambda t: t.squeeze(dim))

    def unsqueeze_(self, dim):
        return self._shape_inplace("unsqueeze_", lambda t: t.unsqueeze(dim))

    def t_(self):
        return self._shape_inplace("t_", lambda t: t.t())

    def transpose_(self, dim0, dim1):
        return self._shape_inplace("transpose_", lambda t: t.transpose(dim0, dim1))

    swapdims_ = swapaxes_ = transpose_

    # introspection, as PyTorch's for one tensor over one block of memory
    def stride(self, dim=None):
        """Steps between neighbouring elements of each dim, in elements (the array's strides
        divided by its item size)."""
        steps = tuple(s // self._data.itemsize for s in self._data.strides)
        if dim is None:
            return steps
        if self.ndim == 0:
            raise IndexError(f"stride: dim {dim} given, but a 0-d tensor has no dimensions")
        return steps[_dim("stride", dim, self.ndim)]

    def data_ptr(self):
        """The address of this tensor's first element."""
        a = self._data
        return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr

    def storage_offset(self):
        """How many elements past the start of its memory block this tensor's first is."""
        root = self._data
        while getattr(root, "base", None) is not None and devices.is_array(root.base):
            root = root.base
        start = Tensor._make(root).data_ptr()
        return (self.data_ptr() - start) // self._data.itemsize

    nbytes = property(lambda self: self._data.nbytes)
    itemsize = property(lambda self: self._data.itemsize)
    is_cpu = property(lambda self: self.device.type == "cpu")
    is_sparse = is_quantized = is_meta = is_mkldnn = is_nested = property(lambda self: False)

    def get_device(self):
        """-1 on the CPU, else the device's index (0 when it has none)."""
        return -1 if self.is_cpu else (self.device.index or 0)

    def is_complex(self):
        return False  # minifw has no complex dtypes

    def is_signed(self):
        return self.dtype.kind in "fi"

    def is_nonzero(self):
        """Whether the one element of this tensor is not zero; ValueError for another size."""
        if self.numel() != 1:
            raise ValueError(f"is_nonzero: the tensor must have exactly one element, got "
                             f"{self.numel()} (shape {self.shape})")
        return bool(self.item())

    def is_same_size(self, other):
        return self.shape == _check_tensor("is_same_size", "other", other).shape

    def is_inference(self):
        return False  # inference_mode records no graph but marks no tensor

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        """This tensor itself: pinning has no effect in minifw (copies are synchronous)."""
        return self

    def share_memory_(self):
        """Marks this tensor shared (DataLoader workers are threads of this process, which
        see its memory already); returns it."""
        _shared[id(self)] = weakref.ref(self)
        return self

    def is_shared(self):
        ref = _shared.get(id(self))
        return ref is not None and ref() is self

    def new(self, *args, **kwargs):
        """The legacy constructor, of this tensor's dtype and device: new(2, 3) a (2, 3)
        tensor of zeros, new(data) a tensor of data, new() an empty one."""
        kwargs.setdefault("dtype", self.dtype)
        kwargs.setdefault("device", self.device)
        if len(args) == 1 and isinstance(args[0], Size):  # new(minifw.Size([2, 3])): sizes
            args = tuple(args[0])
        if all(_is_int(a) for a in args):
            return zeros(*(args or (0,)), **kwargs)
        if len(args) != 1:
            raise TypeError(f"new: expected data (one argument) or sizes (ints), got {args!r}")
        return tensor(args[0], **kwargs)

    def _host_callable(self, name, fn):
        if self.device.type != "cpu":
            raise TypeError(f"{name}: only implemented on CPU tensors, this one is on {self.device}")
        if not callable(fn):
            raise TypeError(f"{name}: callable must be callable, got {type(fn).__name__}")

    def apply_(self, callable):
        """Every element x replaced by callable(x) (a Python function; CPU tensors only, as
        PyTorch's); not differentiable."""
        self._host_callable("apply_", callable)
        values = np.array([callable(x) for x in self._data.ravel().tolist()],
                          dtype=self.dtype).reshape(self.shape)
        return self._apply_inplace("apply_", lambda: _elementwise.Overwrite.apply(self, values))

    def map_(self, tensor, callable):
        """Every element x replaced by callable(x, y), y the element of `tensor` (broadcast)
        at its place; CPU tensors only, as PyTorch's; not differentiable."""
        self._host_callable("map_", callable)
        other = np.broadcast_to(_check_tensor("map_", "tensor", tensor).numpy(), self.shape)
        values = np.array([callable(x, y) for x, y in zip(self._data.ravel().tolist(),
                                                          other.ravel().tolist())],
                          dtype=self.dtype).reshape(self.shape)
        return self._apply_inplace("map_", lambda: _elementwise.Overwrite.apply(self, values))

    def _no_such_dtype(self, name, dtype):
        raise TypeError(f"{name}: minifw has no {dtype} tensors; its dtypes are {_DTYPE_NAMES}")

    def byte(self, memory_format=None):
        self._no_such_dtype("byte", "uint8")

    def char(self, memory_format=None):
        self._no_such_dtype("char", "int8")

    def short(self, memory_format=None):
        self._no_such_dtype("short", "int16")

    def half(self, memory_format=None):
        self._no_such_dtype("half", "float16")

    def bfloat16(self, memory_format=None):
        self._no_such_dtype("bfloat16", "bfloat16")

    # in-place comparisons and logic: the result (0/1, True/False) in this tensor's dtype
    def _values_inplace(self, name, compute, *operands):
        """This tensor overwritten with compute()'s values (not differentiable: the history
        gets a zero gradient, as PyTorch's for comparisons)."""
        values = compute()
        if _category(values.dtype) > _category(self.dtype):
            raise TypeError(f"{name}: result type {values.dtype} can't be cast to this tensor's "
                            f"dtype {self.dtype}")
        values = values.detach()._cast(self.dtype)
        return self._apply_inplace(name, lambda: _elementwise.Overwrite.apply(self, values),
                                   *(o for o in operands if isinstance(o, Tensor)))

    def eq_(self, other):
        return self._values_inplace("eq_", lambda: self == other, other)

    def ne_(self, other):
        return self._values_inplace("ne_", lambda: self != other, other)

    def lt_(self, other):
        return self._values_inplace("lt_", lambda: self < other, other)

    def le_(self, other):
        return self._values_inplace("le_", lambda: self <= other, other)

    def gt_(self, other):
        return self._values_inplace("gt_", lambda: self > other, other)

    def ge_(self, other):
        return self._values_inplace("ge_", lambda: self >= other, other)

    not_equal_, less_, less_equal_, greater_, greater_equal_ = ne_, lt_, le_, gt_, ge_

    def logical_and_(self, other):
        return self._values_inplace("logical_and_", lambda: self.logical_and(other), other)

    def logical_or_(self, other):
        return self._values_inplace("logical_or_", lambda: self.logical_or(other), other)

    def logical_xor_(self, other):
        return self._values_inplace("logical_xor_", lambda: self.logical_xor(other), other)

    def logical_not_(self):
        return self._values_inplace("logical_not_", self.logical_not)

    def bitwise_and_(self, other):
        return self._values_inplace("bitwise_and_", lambda: self & other, other)

    def bitwise_or_(self, other):
        return self._values_inplace("bitwise_or_", lambda: self | other, other)

    def bitwise_xor_(self, other):
        return self._values_inplace("bitwise_xor_", lambda: self ^ other, other)

    def bitwise_not_(self):
        return self._values_inplace("bitwise_not_", lambda: ~self)

    def _shift(self, other, fn, left):
        for t in (self, other):
            if isinstance(t, Tensor) and t.dtype.kind not in "iu":
                raise TypeError(f"{fn}: only integer tensors are supported, got {t.dtype}")
        if not isinstance(other, (Tensor, numbers.Integral)) or isinstance(other, (bool, np.bool_)):
            raise TypeError(f"{fn}: other must be an integer tensor or an int, got "
                            f"{type(other).__name__}")
        a, b, dtype, dev = self._operands(other, fn)
        bits = dtype.itemsize * 8
        too_far = (b >= bits) | (b < 0)  # PyTorch: every bit shifted out (sign bits to the right)
        safe = np.where(too_far, 0, b).astype(dtype, copy=False)
        if left:
            out = np.where(too_far, 0, np.left_shift(a, safe))
        else:
            out = np.where(too_far, np.where(a < 0, -1, 0), np.right_shift(a, safe))
        return Tensor._make(_autograd.on_device(np.asarray(out, dtype=dtype), dev))

    def bitwise_left_shift(self, other):
        """self * 2**other for integer tensors; a shift of the width or more (or negative)
        gives 0, as PyTorch's."""
        return self._shift(other, "bitwise_left_shift", left=True)

    def bitwise_right_shift(self, other):
        """self // 2**other for integer tensors (arithmetic shift); a shift of the width or more
        (or negative) gives 0 or -1, as PyTorch's."""
        return self._shift(other, "bitwise_right_shift", left=False)

    __lshift__, __rshift__ = bitwise_left_shift, bitwise_right_shift

    def bitwise_left_shift_(self, other):
        return self._values_inplace("bitwise_left_shift_", lambda: self.bitwise_left_shift(other),
                                    other)

    def bitwise_right_shift_(self, other):
        return self._values_inplace("bitwise_right_shift_",
                                    lambda: self.bitwise_right_shift(other), other)

    __ilshift__, __irshift__ = bitwise_left_shift_, bitwise_right_shift_

    def remainder_(self, other):
        other = self._operand("remainder_", other)
        return self._apply_inplace("remainder_", lambda: self % other, other)

    def floor_divide_(self, other):
        other = self._operand("floor_divide_", other)
        return self._apply_inplace("floor_divide_", lambda: self // other, other)

    __ifloordiv__, __imod__ = floor_divide_, remainder_

    def divide_(self, other, *, rounding_mode=None):
        other = self._operand("divide_", other)
        return self._apply_inplace("divide_", lambda: self.div(other, rounding_mode=rounding_mode),
                                   other)

    def square_(self):
        return self._apply_inplace("square_", self.square)

    subtract_, multiply_, true_divide_ = sub_, mul_, div_

    def fix(self):
        """Rounds toward zero: trunc."""
        return self.trunc()

    # random fills from minifw's generators (generator=), as PyTorch's
    def random_(self, *args, generator=None, **kwargs):
        """Whole numbers drawn uniformly from [from, to): random_(to), random_(from, to), or
        random_() for [0, 2**mantissa bits] of a float dtype ([0, 2**63 - 1] for int64,
        [0, 2**31 - 1] for int32, {False, True} for bool)."""
        fn = "random_"
        names = ("from", "to")
        if len(args) > 2 or set(kwargs) - set(names):
            raise TypeError(f"{fn}: expected (from, to), (to) or nothing, got {args!r} {kwargs!r}")
        given = dict(zip(names if len(args) == 2 else ("to",), args))
        for name in names:
            if name in kwargs:
                if name in given:
                    raise TypeError(f"{fn}: {name} given twice")
                given[name] = kwargs[name]
        low = _int(fn, "from", given.get("from", 0))
        high = given.get("to")
        if high is not None:
            high = _int(fn, "to", high)
        elif "from" in given:  # random_(from, None): up to the int64 maximum, as PyTorch
            high = int(np.iinfo(np.int64).max) + 1
        elif self.dtype.kind == "f":
            high = 2 ** (np.finfo(self.dtype).nmant + 1) + 1
        elif self.dtype.kind == "b":
            high = 2
        else:
            high = int(np.iinfo(self.dtype).max) + 1
        if low >= high:
            raise ValueError(f"{fn}: expects from < to, got from={low}, to={high}")
        if self.dtype.kind == "f" and high - 1 > 2 ** (np.finfo(self.dtype).nmant + 1):
            raise ValueError(f"{fn}: to - 1 ({high - 1}) is more than {self.dtype} holds exactly "
                             f"(2**{np.finfo(self.dtype).nmant + 1})")
        if self.dtype.kind in "iu" and (low < np.iinfo(self.dtype).min or
                                        high - 1 > np.iinfo(self.dtype).max):
            raise ValueError(f"{fn}: [from, to) = [{low}, {high}) is out of {self.dtype}'s range")
        rng = _random._numpy_rng(generator)
        return self._fill_random(fn, lambda shape: rng.integers(low, high, shape, dtype=np.int64
                                                                if high <= 2 ** 63 else np.uint64))

    def _probability(self, fn, p):
        if isinstance(p, Tensor):
            q = p.detach().cpu().numpy().astype(np.float64)
        elif isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_)):
            q = np.float64(p)
        else:
            raise TypeError(f"{fn}: p must be a number or a tensor, got {type(p).__name__}")
        if not bool(np.all((q >= 0) & (q <= 1))):
            raise ValueError(f"{fn}: p must be in [0, 1], got values outside it")
        return q

    def bernoulli(self, p=None, *, generator=None):
        """A tensor of this shape and dtype of 0s and 1s, each 1 with probability the element
        of this tensor (or p) there."""
        if self.dtype.kind != "f" and p is None:
            raise TypeError(f"bernoulli: the probabilities must be a float tensor, got {self.dtype}")
        q = self._probability("bernoulli", self if p is None else p)
        rng = _random._numpy_rng(generator)
        draw = rng.random(self.shape) < np.broadcast_to(q, self.shape)
        # drawn, not computed: zero gradients to the probabilities, as PyTorch's
        return _zero_gradient.with_zero_gradient(
            devices.to_device(draw.astype(self.dtype), self.device), self if p is None else p)

    def bernoulli_(self, p=0.5, *, generator=None):
        q = self._probability("bernoulli_", p)
        try:
            q = np.broadcast_to(q, self.shape)
        except ValueError:
            raise ValueError(f"bernoulli_: p of shape {q.shape} does not broadcast to {self.shape}") \
                from None
        rng = _random._numpy_rng(generator)
        return self._fill_random("bernoulli_", lambda shape: rng.random(shape) < q)

    def _float_fill(self, fn, draw, **positive):
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: only float tensors are supported, got {self.dtype}")
        for name, v in positive.items():
            v = _real(fn, name, v)
            if not v > 0:
                raise ValueError(f"{fn}: {name} must be > 0, got {v}")
        return self._fill_random(fn, draw)

    def exponential_(self, lambd=1.0, *, generator=None):
        rng = _random._numpy_rng(generator)
        return self._float_fill("exponential_", lambda shape: rng.exponential(1.0 / lambd, shape),
                                lambd=lambd)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        rng = _random._numpy_rng(generator)
        return self._float_fill("cauchy_", lambda shape: median + sigma * rng.standard_cauchy(shape),
                                sigma=sigma)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        rng = _random._numpy_rng(generator)
        return self._float_fill("log_normal_", lambda shape: rng.lognormal(mean, std, shape), std=std)

    def geometric_(self, p, *, generator=None):
        """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
        p = _real("geometric_", "p", p)
        if not 0 < p <= 1:
            raise ValueError(f"geometric_: p must be in (0, 1], got {p}")
        if self.dtype.kind == "b":
            raise TypeError("geometric_: bool tensors are not supported")
        rng = _random._numpy_rng(generator)
        return self._fill_random("geometric_", lambda shape: rng.geometric(p, shape))

    # more math
    def _float_pair(self, other, name):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}: other must be a Tensor, got {type(other).__name__}")
        return self._float_binary(other, name)

    def fmax(self, other):
        """The larger of the two elementwise, a NaN losing to a number (NaN only where both are)."""
        return self._fmax("fmax", other, np.fmax)

    def fmin(self, other):
        return self._fmax("fmin", other, np.fmin)

    def _fmax(self, name, other, ufunc):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}: other must be a Tensor, got {type(other).__name__}")
        if _result_dtype(self, other).kind == "f":
            return self._float_binary(other, name)
        a, b, dtype, dev = self._operands(other, name)
        return Tensor._make(_autograd.on_device(ufunc(a, b), dev))

    def logaddexp2(self, other):
        """log2(2**self + 2**other), computed without overflow."""
        return self._float_binary(other, "logaddexp2")

    def igamma(self, other):
        """The regularized lower incomplete gamma function P(self, other); its gradient is
        defined in other only (as PyTorch's)."""
        return self._float_pair(other, "igamma")

    def igammac(self, other):
        """The regularized upper incomplete gamma function Q(self, other) = 1 - P."""
        return self._float_pair(other, "igammac")

    def ldexp(self, other):
        """self * 2**other, in a float dtype."""
        other = self._operand("ldexp", other)
        mantissa = self if self.dtype.kind == "f" else self._cast(_default_dtype)
        if not isinstance(other, Tensor):  # a number: 2**other in the dtype (inf if beyond it)
            with np.errstate(over="ignore"):
                return mantissa * float(np.ldexp(np.float64(1.0), int(other))) \
                    if float(other).is_integer() else mantissa * float(np.exp2(float(other)))
        scale = other._cast(_default_dtype) if other.dtype.kind != "f" else other
        return mantissa * scale.exp2()

    def frexp(self):
        """(mantissa, exponent): self = mantissa * 2**exponent, |mantissa| in [0.5, 1) (0 for
        0), exponent int32; the mantissa is differentiable."""
        if self.dtype.kind != "f":
            raise TypeError(f"frexp: only float tensors are supported, got {self.dtype}")
        _, exponent = np.frexp(devices.to_device(self._data, devices.CPU))
        # np.asarray: NumPy gives a scalar, not an array, for a 0-d input
        exponent = Tensor._make(devices.to_device(np.asarray(exponent, dtype=np.int32), self.device))
        # self * 2**-e in two halves, so that no power of two overflows (2**128 in float32)
        half = (-exponent._cast(self.dtype) / 2).floor()
        mantissa = self * half.exp2() * (-exponent._cast(self.dtype) - half).exp2()
        return FrexpResult(mantissa, exponent)

    def nextafter(self, other):
        """The next float after self toward other (not differentiable)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"nextafter: other must be a Tensor, got {type(other).__name__}")
        a, b, dtype, dev = self._operands(other, "nextafter")
        if dtype.kind != "f":
            raise TypeError(f"nextafter: only float tensors are supported, got {dtype}")
        return Tensor._make(_autograd.on_device(np.nextafter(a, b), dev))

    def i0(self):
        """The modified Bessel function of the first kind of order 0."""
        return self._pointwise("i0")

    def polygamma(self, n):
        """The n-th derivative of digamma (n >= 0) of every element."""
        n = _int("polygamma", "n", n, minimum=0)
        return self._pointwise("polygamma", n)

    def mvlgamma(self, p):
        """The multivariate log-gamma function of dimension p: sum_i lgamma(x - i/2) over
        i < p, plus p(p-1)/4 log(pi); every element must be > (p - 1) / 2."""
        fn = "mvlgamma"
        p = _int(fn, "p", p, minimum=1)
        x = self._float_input(fn)
        if self.numel() and not bool(np.all(devices.to_device(x._data, devices.CPU) > (p - 1) / 2)):
            raise ValueError(f"{fn}: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
        total = x.lgamma()
        for i in range(1, p):
            total = total + (x - i / 2).lgamma()
        return total + p * (p - 1) / 4 * math.log(math.pi)

    def msort(self):
        """Sorted along dim 0 (the values)."""
        return self.sort(dim=0).values if self.ndim else self.clone()

    def dist(self, other, p=2):
        """The p-norm of self - other (broadcast)."""
        return (self - _check_tensor("dist", "other", other)).norm(p)

    def diagflat(self, offset=0):
        """A matrix with this tensor's elements (flattened) on its offset-th diagonal."""
        return self.flatten().diag(_int("diagflat", "offset", offset))

    def hardshrink(self, lambd=0.5):
        """self where |self| > lambd, else 0."""
        lambd = _real("hardshrink", "lambd", lambd)
        return self.masked_fill(self.abs() <= lambd, 0)

    def prelu(self, weight):
        """self where > 0, else weight * self: weight one number or one per channel (dim 1)."""
        fn = "prelu"
        _check_tensor(fn, "weight", weight)
        if weight.ndim > 1:
            raise ValueError(f"{fn}: weight must be 0-D or 1-D, got shape {weight.shape}")
        channels = self.shape[1] if self.ndim >= 2 else 1
        if weight.numel() not in (1, channels):
            raise ValueError(f"{fn}: weight must have 1 element or one per channel ({channels}), "
                             f"got {weight.numel()}")
        if weight.numel() > 1 and self.ndim >= 2:
            weight = weight.reshape((channels,) + (1,) * (self.ndim - 2))
        elif weight.ndim:
            weight = weight.reshape(())
        return where(self > 0, self, weight * self)

    def renorm(self, p, dim, maxnorm):
        """Each slice along dim whose p-norm exceeds maxnorm scaled to norm maxnorm (by
        maxnorm / (norm + 1e-7), as PyTorch)."""
        fn = "renorm"
        p, maxnorm = _real(fn, "p", p, finite=False), _real(fn, "maxnorm", maxnorm)
        if p != p:
            raise ValueError(f"{fn}: p must be a number, got nan")
        if p <= 0:
            raise ValueError(f"{fn}: p must be > 0, got {p}")
        if maxnorm < 0:
            raise ValueError(f"{fn}: maxnorm must be >= 0, got {maxnorm}")
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: only float tensors are supported, got {self.dtype}")
        if self.ndim < 2:
            raise ValueError(f"{fn}: the input needs at least 2 dimensions, got shape {self.shape}")
        d = _dim(fn, dim, self.ndim)
        norms = self.movedim(d, 0).reshape(self.shape[d], -1).norm(p, dim=1).reshape(
            tuple(self.shape[d] if i == d else 1 for i in range(self.ndim)))
        factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        return self * factor._cast(self.dtype)

    def _scatter_positions(self, fn, index, src):
        """A copy of self with src written at the positions `index` (NumPy's index on this
        tensor) names; differentiable in both."""
        _check_tensor(fn, "src", src)
        expected = self._data[index].shape
        if src.shape != expected:
            raise ValueError(f"{fn}: src must have shape {expected}, got {src.shape}")
        out = self.clone()
        out[index] = src
        return out

    def select_scatter(self, src, dim, index):
        """A copy of self with src as its select(dim, index) slice."""
        fn = "select_scatter"
        if self.ndim == 0:
            raise IndexError(f"{fn}: a 0-d tensor has no dimension to select from")
        d = _dim(fn, dim, self.ndim)
        i = _int(fn, "index", index, minimum=-self.shape[d], maximum=self.shape[d] - 1)
        return self._scatter_positions(fn, (slice(None),) * d + (i,), src)

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        """A copy of self with src as its [start:end:step] slice along dim."""
        fn = "slice_scatter"
        if self.ndim == 0:
            raise IndexError(f"{fn}: a 0-d tensor has no dimension to slice")
        d = _dim(fn, dim, self.ndim)
        step = _int(fn, "step", step, minimum=1)
        return self._scatter_positions(fn, (slice(None),) * d + (slice(start, end, step),), src)

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        """A copy of self with src as its diagonal(offset, dim1, dim2) (src's last dim runs
        along the diagonal)."""
        fn = "diagonal_scatter"
        if self.ndim < 2:
            raise ValueError(f"{fn}: the input needs at least 2 dimensions, got shape {self.shape}")
        d1, d2 = _dim(fn, dim1, self.ndim), _dim(fn, dim2, self.ndim)
        if d1 == d2:
            raise ValueError(f"{fn}: dim1 and dim2 must differ, both are {d1}")
        offset = _int(fn, "offset", offset)
        rows, cols = self.shape[d1], self.shape[d2]
        length = builtins.max(0, builtins.min(rows + builtins.min(offset, 0),
                                              cols - builtins.max(offset, 0)))
        rest = [i for i in range(self.ndim) if i not in (d1, d2)]
        rank = len(rest) + 1  # the result of the index: rest's dims, then the diagonal
        index = [None] * self.ndim
        for k, i in enumerate(rest):
            index[i] = np.arange(self.shape[i]).reshape((-1,) + (1,) * (rank - 1 - k))
        step = np.arange(length)
        index[d1] = step + builtins.max(-offset, 0)
        index[d2] = step + builtins.max(offset, 0)
        index = tuple(devices.to_device(i, self.device) for i in index)
        _check_tensor(fn, "src", src)
        expected = tuple(self.shape[i] for i in rest) + (length,)
        if src.shape != expected:
            raise ValueError(f"{fn}: src must have shape {expected}, got {src.shape}")
        out = self.clone()
        out[tuple(Tensor._make(i) for i in index)] = src
        return out

    def index_put(self, indices, values, accumulate=False):
        """A copy of self with values (broadcast) at self[indices] (a tuple of index tensors),
        added there with accumulate (repeated indices adding up)."""
        fn = "index_put"
        if not isinstance(indices, (tuple, list)) or not all(isinstance(i, Tensor) for i in indices):
            raise TypeError(f"{fn}: indices must be a tuple of tensors, got {indices!r}")
        values = values if isinstance(values, Tensor) else tensor(values, dtype=self.dtype,
                                                                  device=self.device)
        indices = tuple(indices)
        if not _bool(fn, "accumulate", accumulate):
            out = self.clone()
            out[indices] = values
            return out
        if len(indices) > self.ndim:
            raise IndexError(f"{fn}: too many indices ({len(indices)}) for a {self.ndim}-D tensor")
        if any(i.dtype.kind == "b" for i in indices):
            indices = tuple(itertools.chain.from_iterable(
                i.nonzero(as_tuple=True) if i.dtype.kind == "b" else (i,) for i in indices))
        k = len(indices)
        lead = self.shape[:k]
        arrays = []
        for d, i in enumerate(indices):
            if i.dtype.kind not in "iu":
                raise TypeError(f"{fn}: index tensors must be integer or bool, got {i.dtype}")
            host = devices.to_device(i._data, devices.CPU).astype(np.int64)
            if host.size and (host.min() < -lead[d] or host.max() >= lead[d]):
                raise IndexError(f"{fn}: index out of range for dim {d} of size {lead[d]}")
            arrays.append(np.where(host < 0, host + lead[d], host))
        flat = np.ravel_multi_index(np.broadcast_arrays(*arrays), lead) if arrays else np.zeros((), np.int64)
        rows = self.reshape((math.prod(lead),) + self.shape[k:])
        source = values._cast(self.dtype).broadcast_to(flat.shape + self.shape[k:]).reshape(
            (flat.size,) + self.shape[k:])
        where_ = Tensor._make(devices.to_device(flat.reshape(-1), self.device))
        return rows.index_add(0, where_, source).reshape(self.shape)

    def index_put_(self, indices, values, accumulate=False):
        values_t = values if isinstance(values, Tensor) else None
        return self._apply_inplace("index_put_", lambda: self.index_put(indices, values, accumulate),
                                   *((values_t,) if values_t is not None else ()))

    def put(self, index, source, accumulate=False):
        """A copy of self with source's elements at the flat positions index names (as if
        self were 1-D), added there with accumulate."""
        fn = "put"
        _check_tensor(fn, "index", index)
        _check_tensor(fn, "source", source)
        if index.numel() != source.numel():
            raise ValueError(f"{fn}: index and source need the same number of elements, got "
                             f"{index.numel()} and {source.numel()}")
        flat = self.reshape(-1)
        return flat.index_put((index.reshape(-1),), source.reshape(-1), accumulate).reshape(self.shape)

    def put_(self, index, source, accumulate=False):
        return self._apply_inplace("put_", lambda: self.put(index, source, accumulate), source)

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        """self with source's slices along dim combined into the slices index names by
        reduce ('prod', 'mean', 'amax' or 'amin'), self's own taking part where include_self."""
        fn = "index_reduce"
        _choice(fn, "reduce", reduce, ("prod", "mean", "amax", "amin"))
        _check_tensor(fn, "source", source)
        index = _index_tensor(fn, "index", index, self)
        d = _dim(fn, dim, builtins.max(self.ndim, 1))
        if index.ndim > 1:
            raise ValueError(f"{fn}: index must be 0-D or 1-D, got shape {index.shape}")
        if source.ndim != self.ndim or (self.ndim and source.shape[d] != index.numel()) or any(
                source.shape[i] != self.shape[i] for i in range(self.ndim) if i != d):
            raise ValueError(f"{fn}: source of shape {source.shape} must be self's shape "
                             f"{self.shape} with dim {d} of the index's length {index.numel()}")
        shape = [1] * builtins.max(self.ndim, 1)
        shape[d] = -1
        spread = index.reshape(-1).reshape(shape).expand(*source.shape) if self.ndim else index
        return self.scatter_reduce(d, spread, source, reduce, include_self=include_self)

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        return self._apply_inplace("index_reduce_", lambda: self.index_reduce(
            dim, index, source, reduce, include_self=include_self), source)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """The values with each run of equal neighbours kept once (flattened, or the slices
        along dim), with the run each element falls in and each run's length."""
        fn = "unique_consecutive"
        data = devices.to_device(self._data, devices.CPU)
        if dim is None:
            rows = data.reshape(-1, 1)
        else:
            d = _dim(fn, dim, builtins.max(self.ndim, 1))
            if self.ndim == 0:
                raise IndexError(f"{fn}: a 0-d tensor has no dimension {dim}")
            rows = np.moveaxis(data, d, 0).reshape(self.shape[d], -1)
        if len(rows):
            starts = np.concatenate([[True], np.any(rows[1:] != rows[:-1], axis=1)])
        else:
            starts = np.zeros(0, dtype=bool)
        first = np.flatnonzero(starts)
        inverse = np.cumsum(starts) - 1
        counts = np.diff(np.append(first, len(rows)))
        if dim is None:
            values = rows[first, 0]
        else:
            values = np.take(data, first, axis=d)

        def as_tensor(a):
            return Tensor._make(devices.to_device(np.array(a, order="C"), self.device))
        out = [as_tensor(values.astype(self.dtype, copy=False))]
        if return_inverse:
            out.append(as_tensor(inverse.astype(np.int64).reshape(self.shape if dim is None else -1)))
        if return_counts:
            out.append(as_tensor(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance matrix of the variables in the rows (observations in the columns;
        a 1-D tensor is one variable), weighted by frequency and/or importance weights."""
        fn = "cov"
        if self.ndim > 2:
            raise ValueError(f"{fn}: expected a 1-D or 2-D tensor, got shape {self.shape}")
        correction = _int(fn, "correction", correction) if not isinstance(correction, float) \
            else correction
        x = self.reshape(1, -1) if self.ndim < 2 else self
        x = x if x.dtype.kind == "f" else x._cast(_default_dtype)
        n = x.shape[1]
        w = None
        for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
            if weights is None:
                continue
            _check_tensor(fn, name, weights)
            if weights.ndim > 1 or weights.numel() != n:
                raise ValueError(f"{fn}: {name} must be 1-D with one weight per observation ({n}), "
                                 f"got shape {weights.shape}")
            if integral and weights.dtype.kind not in "iu":
                raise TypeError(f"{fn}: fweights must be an integer tensor, got {weights.dtype}")
            if not integral and weights.dtype.kind != "f":
                raise TypeError(f"{fn}: aweights must be a float tensor, got {weights.dtype}")
            if bool((weights < 0).any()):
                raise ValueError(f"{fn}: {name} must be non-negative")
            weights = weights.reshape(-1)._cast(x.dtype)
            w = weights if w is None else w * weights
        w_sum = w.sum() if w is not None else n
        average = (x * w).sum(1) / w_sum if w is not None else x.mean(1)
        if w is not None and aweights is not None and correction != 0:
            norm = w_sum - correction * (w * aweights.reshape(-1)._cast(x.dtype)).sum() / w_sum
        else:
            norm = w_sum - correction
        if float(norm) <= 0:
            warnings.warn(f"{fn}: degrees of freedom <= 0 for the correction {correction}",
                          RuntimeWarning, stacklevel=2)
            norm = norm * 0 if isinstance(norm, Tensor) else 0
        centred = x - average.unsqueeze(1)
        weighted = centred if w is None else centred * w
        with np.errstate(divide="ignore", invalid="ignore"):
            return ((centred @ weighted.t()) / norm).squeeze()

    def corrcoef(self):
        """The Pearson correlation coefficients of the variables in the rows, clipped to
        [-1, 1]."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        std = c.diagonal().sqrt()
        return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        """(hist, bin_edges): counts (weighted sums, or a density) of the elements in bins
        equal-width bins over range (the data's min and max by default), or in the bins a
        1-D tensor of increasing edges gives; computed on the host, not differentiable."""
        fn = "histogram"
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: only float tensors are supported, got {self.dtype}")
        if isinstance(bins, Tensor):
            if bins.ndim != 1 or bins.numel() < 1:
                raise ValueError(f"{fn}: bins as a tensor must be 1-D edges, got shape {bins.shape}")
            edges = bins.detach().cpu().numpy().astype(self.dtype)
            if np.any(np.diff(edges) < 0):
                raise ValueError(f"{fn}: bin edges must increase")
        else:
            edges = _int(fn, "bins", bins, minimum=1)
        if range is not None:
            if len(range) != 2 or not range[0] <= range[1]:
                raise ValueError(f"{fn}: range must be (min, max) with min <= max, got {range!r}")
            range = (float(range[0]), float(range[1]))
        w = None
        if weight is not None:
            _check_tensor(fn, "weight", weight)
            if weight.shape != self.shape:
                raise ValueError(f"{fn}: weight must have the input's shape {self.shape}, got "
                                 f"{weight.shape}")
            w = weight.detach().cpu().numpy().reshape(-1)
        data = self.detach().cpu().numpy().reshape(-1)
        if range is None and not isinstance(bins, Tensor) and data.size == 0:
            range = (0.0, 0.0)
        if range is not None and range[0] == range[1]:
            range = (range[0], range[1] + 1.0) if data.size == 0 else (range[0] - 0.5, range[1] + 0.5)
        elif range is None and not isinstance(bins, Tensor) and data.min() == data.max():
            range = (float(data.min()) - 0.5, float(data.max()) + 0.5)
        hist, bin_edges = np.histogram(data, bins=edges, range=range, weights=w, density=density)
        make = lambda a: Tensor._make(devices.to_device(a.astype(self.dtype), self.device))  # noqa: E731
        return HistogramResult(make(hist), make(bin_edges))

    def matrix_exp(self):
        """e**A of each square matrix: a Taylor series of A / 2**s to 18 terms, squared s times
        (||A / 2**s|| <= 1/2); differentiable through its products."""
        fn = "matrix_exp"
        if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
            raise ValueError(f"{fn}: expects square matrices (..., n, n), got shape {self.shape}")
        if self.dtype.kind != "f":
            raise TypeError(f"{fn}: only float tensors are supported, got {self.dtype}")
        if self.numel() == 0:
            return self.clone()
        size = float(np.max(np.sum(np.abs(devices.to_device(self._data, devices.CPU)), axis=-1)))
        if not math.isfinite(size):  # inf or NaN entries: NaN matrices, as PyTorch's
            return self * math.nan
        squarings = builtins.max(0, math.ceil(math.log2(size)) + 1) if size > 0 else 0
        A = self / 2.0 ** squarings
        identity = eye(self.shape[-1], dtype=self.dtype, device=self.device).expand(*self.shape)
        term, total = identity, identity
        for k in range(1, 19):
            term = (term @ A) / k
            total = total + term
        for _ in range(squarings):
            total = total @ total
        return total

    # ---- printing ------------------------------------------------------------------
    def __repr__(self):
        options = _PRINT_OPTIONS
        a = devices.to_device(self._data, devices.CPU).view(np.ndarray)
        indent = len("tensor(")
        extras = []
        if type(self._data) is not np.ndarray:
            extras.append(f"device='{self.device}'")  # as PyTorch shows device='cuda:0'
        if a.size == 0:
            body = "[]"
            if a.ndim != 1:
                extras.append(f"size={a.shape}")
        else:
            summarize = a.size > options["threshold"]
            formatter = _Formatter(_summarized(a, options["edgeitems"]) if summarize else a, options)
            body = _array_str(a, indent, summarize, formatter, options)
        if self.dtype not in (_default_dtype, int64, bool_) or (self._data.size == 0 and
                                                                self.dtype != _default_dtype):
            extras.append(f"dtype=minifw.{self.dtype.name}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        # each suffix on the last line while it fits in linewidth, else on a line of its own
        text = "tensor(" + body
        last = len(text) - text.rfind("\n") + 1
        for extra in extras:
            if last + len(extra) + 2 > options["linewidth"]:
                text += ",\n" + " " * indent + extra
                last = indent + len(extra)
            else:
                text += ", " + extra
                last += len(extra) + 2
        return text + ")"


# ---- printing, as PyTorch's torch/_tensor_str.py ---------------------------------------

class _Formatter:
    """How every element of a tensor prints: floats all with `precision` decimals, all in
    scientific notation (when the nonzero finite magnitudes span more than 1000x, or pass
    1e8, or fall below 1e-4, unless sci_mode says), or as integers with a point where every
    value is one; every element right-aligned to the widest."""

    def __init__(self, a, options):
        self.precision = options["precision"]
        self.floating = a.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            for value in a.reshape(-1).tolist():
                self.width = max(self.width, len(f"{value}"))
            return
        flat = a.reshape(-1)
        values = flat[np.isfinite(flat) & (flat != 0)]
        if values.size == 0:
            return
        magnitude = np.abs(values).astype(np.float64)
        low, high = magnitude.min(), magnitude.max()
        self.int_mode = bool((values == np.ceil(values)).all())
        self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4) \
            if options["sci_mode"] is None else options["sci_mode"]
        p = self.precision
        for value in values.tolist():
            if self.sci_mode:
                self.width = max(self.width, len(f"{value:.{p}e}"))
            elif self.int_mode:
                self.width = max(self.width, len(f"{value:.0f}") + 1)
            else:
                self.width = max(self.width, len(f"{value:.{p}f}"))

    def format(self, value):
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{self.precision}f}"
        return " " * (self.width - len(text)) + text


def _summarized(a, edge):
    """The elements a summarized print shows (edge items at each end of every dim)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * edge:
        a = np.concatenate([a[:edge], a[-edge:]])
    return a if a.ndim == 1 else np.stack([_summarized(row, edge) for row in a])


def _array_str(a, indent, summarize, formatter, options):
    edge = options["edgeitems"]
    if a.ndim == 0:
        return formatter.format(a.item())
    if a.ndim == 1:
        per_line = max(1, (options["linewidth"] - indent) // (formatter.width + 2))
        if summarize and a.shape[0] > 2 * edge:
            data = [formatter.format(v) for v in a[:edge].tolist()] + [" ..."] + \
                [formatter.format(v) for v in a[-edge:].tolist()]
        else:
            data = [formatter.format(v) for v in a.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and a.shape[0] > 2 * edge:
        rows = [_array_str(a[i], indent + 1, summarize, formatter, options) for i in range(edge)] + \
            ["..."] + [_array_str(a[i], indent + 1, summarize, formatter, options)
                       for i in range(a.shape[0] - edge, a.shape[0])]
    else:
        rows = [_array_str(row, indent + 1, summarize, formatter, options) for row in a]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


_shared = {}  # id -> weak reference of the tensors share_memory_() marked (Tensor's == is elementwise)
FrexpResult = collections.namedtuple("FrexpResult", "mantissa exponent")
HistogramResult = collections.namedtuple("HistogramResult", "hist bin_edges")


# How tensors print (set by minifw.set_printoptions), as PyTorch's (_Formatter, _array_str).
_PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                  "sci_mode": None}


def _in_place_form(name):
    """Tensor.<name>_: self = self.<name>(...), in place (see Tensor._apply_inplace)."""
    def method(self, *args, **kwargs):
        return self._apply_inplace(name + "_", lambda: getattr(self, name)(*args, **kwargs))
    method.__name__, method.__qualname__ = name + "_", f"Tensor.{name}_"
    method.__doc__ = f"In place: this tensor becomes self.{name}(...); returns it."
    return method


for _name in ("exp", "log", "sqrt", "abs", "neg", "relu", "sigmoid", "tanh", "sin", "cos", "tan",
              "atan", "exp2", "log1p", "expm1", "rsqrt", "sign", "floor", "ceil", "trunc", "round",
              "tril", "triu",
              "log2", "log10", "reciprocal", "erf", "erfc", "erfinv", "sinh", "cosh", "asin", "acos",
              "asinh", "acosh", "atanh", "lgamma", "digamma", "deg2rad", "rad2deg", "sinc", "frac",
              "logit", "nan_to_num", "sgn", "atan2", "hypot", "fmod", "xlogy", "copysign",
              "heaviside", "gcd", "lcm", "addmm", "addmv", "addbmm", "baddbmm",
              "addr", "fix", "ldexp", "i0", "polygamma", "mvlgamma", "igamma", "igammac", "nextafter",
              "renorm"):
    setattr(Tensor, _name + "_", _in_place_form(_name))
Tensor.negative_, Tensor.absolute_, Tensor.arctan_ = Tensor.neg_, Tensor.abs_, Tensor.atan_
Tensor.arcsin_, Tensor.arccos_, Tensor.arcsinh_, Tensor.arccosh_, Tensor.arctanh_ = (
    Tensor.asin_, Tensor.acos_, Tensor.asinh_, Tensor.acosh_, Tensor.atanh_)
Tensor.arctan2_ = Tensor.atan2_


# ---- making tensors --------------------------------------------------------------------

def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, a NumPy array
    or a Tensor) on `device` (by default the device of a Tensor or array, else the CPU).
    Python floats become the default dtype (float32) and ints int64 unless `dtype` says
    otherwise; an array keeps its dtype where minifw has it (float16 becomes float32, other
    integer dtypes int64)."""
    if isinstance(data, Tensor):
        a = data._data
    elif devices.is_array(data) and not isinstance(data, np.ndarray):
        a = data  # a GPU array (CuPy)
    else:
        try:
            a = np.asanyarray(data)
        except (TypeError, ValueError) as e:
            raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__}: {e}") from None
        if a.dtype == object and dtype is not None and _dtype_arg(dtype).kind == "f":
            try:  # Python ints beyond int64 are fine as floats
                a = np.asarray(data, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                pass
        if a.dtype == object:
            flat = a.ravel()
            if flat.size and all(isinstance(v, numbers.Integral) for v in flat):
                raise OverflowError(f"tensor: integer {max(flat, key=builtins.abs)} is out of "
                                    f"the range of int64")
            raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__} (its elements "
                            f"must be numbers of one nesting depth)")
        if dtype is None and not isinstance(data, (np.ndarray, np.generic)) and a.dtype.kind == "f":
            a = a.astype(_default_dtype)  # Python floats: the default dtype, as in PyTorch
    dev = devices.get(device) if device is not None else devices.of(a)
    d = _natural_dtype(a) if dtype is None else _dtype_arg(dtype)
    if d.kind in "iu" and isinstance(a, np.ndarray) and a.size and not np.can_cast(a.dtype, d):
        _check_integer_range("tensor", a, d)
    placed = devices.to_device(a, dev)  # a copy when it moves
    t = Tensor._make(placed.astype(d, order="C", copy=placed is a))
    return t.requires_grad_(requires_grad) if requires_grad else t


def from_numpy(array):
    """A tensor sharing memory with `array` (no copy), on the array's device: the CPU for
    a NumPy array (a devices.CudaSimArray gives a "cudasim" tensor)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype not in _DTYPES:
        raise TypeError(f"from_numpy: dtype must be one of {_DTYPE_NAMES}; got "
                        f"{array.dtype} (convert it with array.astype first)")
    return Tensor._make(array)


def _creation(fn, size, dtype, device, requires_grad, make):
    """A tensor of `size` made by make(size, dtype, device), on `device`."""
    size = _check_size(fn, _shape_args(fn, size))
    dev = devices.get(device, fn)
    dtype = _default_dtype if dtype is None else _dtype_arg(dtype, fn)
    try:
        t = Tensor._make(make(size, dtype, dev))
    except (MemoryError, ValueError) as e:
        if "too big" not in str(e) and not isinstance(e, MemoryError):
            raise
        raise MemoryError(f"{fn}: a tensor of size {size} and dtype {dtype} "
                          f"({math.prod(size) * dtype.itemsize:,} bytes) cannot be allocated") from None
    return t.requires_grad_(requires_grad) if requires_grad else t


def _filled(value):
    def make(size, dtype, dev):
        a = devices.empty(size, dtype, dev)
        np.copyto(a, value, casting="unsafe")  # as np.full
        return a
    return make


def _on_host_then(make_on_host):
    """make(size, dtype, device) from make_on_host(size, dtype): computed on the CPU (random
    draws from minifw's generators, ranges), then copied to the device."""
    return lambda size, dtype, dev: devices.to_device(make_on_host(size, dtype), dev)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _creation("zeros", size, dtype, device, requires_grad, devices.zeros)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _creation("ones", size, dtype, device, requires_grad, _filled(1))


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _creation("empty", size, dtype, device, requires_grad, devices.empty)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _natural_dtype(np.asarray(fill_value)) if not isinstance(fill_value, float) \
            else _default_dtype
    return _creation("full", (size,) if isinstance(size, numbers.Integral) else size, dtype, device,
                     requires_grad, _filled(fill_value))


def _random_floats(fn, draw, size, generator, dtype, device, requires_grad):
    dtype = _default_dtype if dtype is None else _dtype_arg(dtype, fn)
    if dtype.kind != "f":
        raise TypeError(f"{fn}: dtype must be float32 or float64, got {dtype}")
    rng = _random._numpy_rng(generator)
    return _creation(fn, size, dtype, device, requires_grad,
                     _on_host_then(lambda s, d: draw(rng, s, d)))


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples from the global generator (or `generator`)."""
    return _random_floats("randn", lambda r, s, d: r.standard_normal(s, dtype=d), size, generator,
                          dtype, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) from the global generator (or `generator`)."""
    return _random_floats("rand", lambda r, s, d: r.random(s, dtype=d), size, generator, dtype,
                          device, requires_grad)


def randint(low, high=None, size=(), *, generator=None, dtype=None, device=None):
    """Integers in [low, high) (or [0, low) when high is omitted: randint(10, (3,)) is
    randint(0, 10, (3,)), as PyTorch's)."""
    if isinstance(high, (tuple, list)) and size == ():
        low, high, size = 0, low, high
    low, high = (0, low) if high is None else (low, high)
    low, high = (_int("randint", name, v.item() if isinstance(v, Tensor) else v)
                 for name, v in (("low", low), ("high", high)))
    if low >= high:
        raise ValueError(f"randint: expects low < high, got low={low} and high={high}")
    rng = _random._numpy_rng(generator)
    return _creation("randint", size, int64 if dtype is None else dtype, device, False,
                     _on_host_then(lambda s, d: rng.integers(low, high, s).astype(d)))


def randperm(n, *, generator=None, device=None):
    n = _int("randperm", "n", n)
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    dev = devices.get(device, "randperm")
    return Tensor._make(devices.to_device(
        _random._numpy_rng(generator).permutation(n).astype(np.int64), dev))


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if dtype is None:
        ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = int64 if ints else _default_dtype
    dev = devices.get(device, "arange")
    values = np.arange(start, end, step).astype(_dtype_arg(dtype, "arange"))
    t = Tensor._make(devices.to_device(values, dev))
    return t.requires_grad_(requires_grad) if requires_grad else t


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """`steps` values evenly spaced from start to end inclusive, as torch.linspace."""
    steps = _int("linspace", "steps", steps, minimum=0)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    dtype = _dtype_arg(_default_dtype if dtype is None else dtype, "linspace")
    values = np.linspace(start, end, steps)
    if dtype.kind in "iu":
        values = np.trunc(values)  # as PyTorch: integer results round toward zero
    t = Tensor._make(devices.to_device(values.astype(dtype), devices.get(device, "linspace")))
    return t.requires_grad_(requires_grad) if requires_grad else t


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The n x m (n x n) identity matrix, as torch.eye."""
    n = _int("eye", "n", n, minimum=0)
    m = n if m is None else _int("eye", "m", m, minimum=0)
    dtype = _dtype_arg(_default_dtype if dtype is None else dtype, "eye")
    t = Tensor._make(devices.to_device(np.eye(n, m, dtype=dtype), devices.get(device, "eye")))
    return t.requires_grad_(requires_grad) if requires_grad else t


# *_like: t's shape, and t's dtype and device unless given, as in PyTorch

def zeros_like(t, dtype=None, requires_grad=False, device=None):
    return zeros(*t.shape, dtype=t.dtype if dtype is None else dtype,
                 device=t.device if device is None else device, requires_grad=requires_grad)


def ones_like(t, dtype=None, requires_grad=False, device=None):
    return ones(*t.shape, dtype=t.dtype if dtype is None else dtype,
                device=t.device if device is None else device, requires_grad=requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None):
    return full(t.shape, fill_value, dtype=t.dtype if dtype is None else dtype,
                device=t.device if device is None else device, requires_grad=requires_grad)


def randn_like(t, dtype=None, generator=None, device=None):
    return randn(*t.shape, dtype=t.dtype if dtype is None else dtype,
                 device=t.device if device is None else device, generator=generator)


def rand_like(t, dtype=None, generator=None, device=None):
    return rand(*t.shape, dtype=t.dtype if dtype is None else dtype,
                device=t.device if device is None else device, generator=generator)


# ---- joining --------------------------------------------------------------------------

def _joinable(fn, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError(f"{fn}: expected a non-empty list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: element {i} is a {type(t).__name__}, not a Tensor")
    dtype = _result_dtype(*tensors)
    return [t._cast(dtype) for t in tensors]


def cat(tensors, dim=0):
    """Join tensors along an existing dim; all other sizes must match. Empty 1-D tensors
    are skipped, as PyTorch does (so cat([tensor([]), x]) is x)."""
    tensors = _joinable("cat", tensors)
    if len(tensors) > 1 and any(t.shape == (0,) for t in tensors):
        tensors = [t for t in tensors if t.shape != (0,)] or tensors[:1]
    if tensors[0].ndim == 0:
        raise ValueError("cat: zero-dimensional tensors cannot be concatenated; use stack, or "
                         "unsqueeze them first")
    d = _dim("cat", dim, tensors[0].ndim)
    for i, t in enumerate(tensors):
        if t.ndim != tensors[0].ndim or t.shape[:d] + t.shape[d + 1:] != \
                tensors[0].shape[:d] + tensors[0].shape[d + 1:]:
            raise ValueError(f"cat: sizes must match except along dim {dim}; tensor 0 has shape "
                             f"{tensors[0].shape}, tensor {i} has shape {t.shape}")
    return _shape.Cat.apply(*tensors, dim=d)


def stack(tensors, dim=0):
    """Join same-shape tensors along a new dim."""
    tensors = _joinable("stack", tensors)
    d = _dim("stack", dim, tensors[0].ndim + 1)
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise ValueError(f"stack: every tensor must have the same shape; tensor 0 has shape "
                             f"{tensors[0].shape}, tensor {i} has shape {t.shape}")
    return _shape.Stack.apply(*tensors, dim=d)


def where(condition, input=None, other=None):
    """Elementwise `input` where the bool tensor `condition` is True, else `other`
    (broadcasting; numbers allowed). With the condition alone, the indices of its True
    elements, one tensor per dim (condition.nonzero(as_tuple=True)), as in PyTorch."""
    if input is None and other is None:
        if not isinstance(condition, Tensor):
            raise TypeError(f"where: condition must be a tensor, got {type(condition).__name__}")
        return condition.nonzero(as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: give both input and other, or neither (the condition alone)")
    if not isinstance(condition, Tensor) or condition.dtype != bool_:
        raise TypeError(f"where: condition must be a bool tensor, got "
                        f"{getattr(condition, 'dtype', type(condition).__name__)}")
    operands = [t if isinstance(t, (Tensor, numbers.Number)) else tensor(t) for t in (input, other)]
    dev = _autograd.common_device("where", [condition] + operands)
    if not any(isinstance(t, Tensor) for t in operands):  # two numbers: the result's dtype and place
        operands[0] = tensor(operands[0], device=dev)
    dtype = _result_dtype(*operands)
    a, b = (t._cast(dtype) if isinstance(t, Tensor) else _scalar(t, dtype) for t in operands)
    return _elementwise.Where.apply(a, b, condition=_autograd._data_on(condition, dev))


def einsum(equation, *operands):
    """Einstein summation over the operands (tensors of one dtype, given one by one or as
    one list), as torch.einsum: subscripts in [a-zA-Z], '...' for broadcast dims, the
    output implicit (the letters seen once, in alphabetical order, after the ellipsis' dims)
    or after '->', a letter repeated in an operand taking its diagonal; and PyTorch's
    sublist form einsum(op1, [0, 1], op2, [1, 2], [0, 2]). Differentiable in every
    operand."""
    fn = "einsum"
    if isinstance(equation, Tensor):  # the sublist form: ints (and ...) name the dims
        equation, operands = _einsum_from_sublists(fn, (equation,) + operands)
    if not isinstance(equation, str):
        raise TypeError(f"{fn}: equation must be a string, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError(f"{fn}: at least one operand must be given")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: operand {i} must be a Tensor, got {type(t).__name__}")
        if t.dtype != operands[0].dtype:
            raise TypeError(f"{fn}: every operand must have one dtype; operand 0 is "
                            f"{operands[0].dtype}, operand {i} is {t.dtype}")
    inputs, output, sizes = _einsum.parse_equation(fn, equation, [t.shape for t in operands])
    return _einsum.Einsum.apply(*operands, inputs=inputs, output=output, sizes=sizes)


def _einsum_from_sublists(fn, args):
    """(equation, operands) of einsum(op1, sublist1, op2, sublist2, ..., [output sublist])."""
    output = args[-1] if len(args) % 2 else None
    args = args[:-1] if len(args) % 2 else args
    operands = args[0::2]

    def term(sublist):
        if not isinstance(sublist, (list, tuple)):
            raise TypeError(f"{fn}: in the sublist form, each operand must be followed by a list "
                            f"of ints naming its dims, got {type(sublist).__name__}")
        out = ""
        for item in sublist:
            if item is Ellipsis:
                out += "..."
            elif _is_int(item) and 0 <= item < len(_einsum.LETTERS):
                out += _einsum.LETTERS[item]
            else:
                raise ValueError(f"{fn}: a sublist holds ints in [0, {len(_einsum.LETTERS)}) or "
                                 f"Ellipsis, got {item!r}")
        return out
    equation = ",".join(term(s) for s in args[1::2])
    return equation + ("" if output is None else "->" + term(output)), operands


_meshgrid_warned = False


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-D or 1-D tensors (given one by one or as one list), as
    torch.meshgrid: with indexing 'ij' output i varies along dim i; with 'xy' the first two
    dims are swapped (Cartesian). Without indexing it is 'ij' and, once per process, a
    UserWarning says that a future PyTorch will require it. Expanded views: differentiable,
    not writable."""
    global _meshgrid_warned
    fn = "meshgrid"
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ValueError(f"{fn}: expects a non-empty list of tensors")
    if indexing is None:
        if not _meshgrid_warned:
            _meshgrid_warned = True
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    _choice(fn, "indexing", indexing, ("ij", "xy"))
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: tensor {i} must be a Tensor, got {type(t).__name__}")
        if t.ndim > 1:
            raise ValueError(f"{fn}: expects 0-D or 1-D tensors, got tensor {i} of shape {t.shape}")
        if t.dtype != tensors[0].dtype:
            raise TypeError(f"{fn}: expects all tensors to have one dtype; tensor 0 is "
                            f"{tensors[0].dtype}, tensor {i} is {t.dtype}")
        _same_device(fn, tensors[0], t)
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0  # tensor 0 varies along dim 1, tensor 1 along dim 0
    shape = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        shape[axis] = t.numel()
    return tuple(t.reshape([-1 if a == axis else 1 for a in range(len(tensors))]).expand(*shape)
                 for t, axis in zip(tensors, axes))


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between every row vector of x1 (..., P, M) and of x2 (..., R, M):
    a (..., P, R) tensor, the batch dims broadcast, as torch.cdist; p >= 0 (0 counts the
    differing elements, inf takes the largest difference). Always computed from the
    differences (compute_mode is checked and accepted: the matrix-product expansion is
    never used), so distances are exact; the gradient is PyTorch's (zero at zero distance)."""
    fn = "cdist"
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"{fn}: {name} must have at least 2 dims (..., points, features), "
                             f"got shape {t.shape}")
        if t.dtype.kind != "f":
            raise TypeError(f"{fn}: {name} must be a floating point tensor, got {t.dtype}")
    if x1.dtype != x2.dtype:
        raise TypeError(f"{fn}: x1 and x2 must have one dtype, got {x1.dtype} and {x2.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"{fn}: x1 and x2 must have the same number of columns (features), got "
                         f"x1 of shape {x1.shape} and x2 of shape {x2.shape}")
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of x1 {x1.shape} and x2 {x2.shape} do not "
                         f"broadcast") from None
    p = _real(fn, "p", p, minimum=0, finite=False)
    if math.isnan(p):
        raise ValueError(f"{fn}: p must be >= 0, got nan")
    if compute_mode is not None:
        _choice(fn, "compute_mode", compute_mode, _CDIST_MODES)
    return _distance.PairwiseDistance.apply(x1, x2, p=p)


# ---- products ------------------------------------------------------------------------

def _check_tensor(fn, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    return t


def _product(fn, a, b):
    """a @ b of the promoted dtype; integer operands as a sum of products (the native
    products take floats)."""
    dtype = _result_dtype(a, b)
    a, b = a._cast(dtype), b._cast(dtype)
    if dtype.kind == "f":
        return a @ b
    if b.ndim == 1:
        return (a * b).sum(-1)
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2)


def _mm_checked(fn, mat1, mat2):
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(t, Tensor) or t.ndim != 2:
            raise ValueError(f"{fn}: {name} must be a 2-D tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise ValueError(f"{fn}: mat1 and mat2 shapes cannot be multiplied ({mat1.shape} and "
                         f"{mat2.shape})")
    return _product(fn, mat1, mat2)


def _bmm_checked(fn, batch1, batch2):
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if not isinstance(t, Tensor) or t.ndim != 3:
            raise ValueError(f"{fn}: {name} must be a 3-D tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise ValueError(f"{fn}: batch1 {batch1.shape} and batch2 {batch2.shape} cannot be "
                         f"multiplied batch by batch")
    return _product(fn, batch1, batch2)


def tensordot(a, b, dims=2):
    """The sum of products over dims of a and b: dims an int n (a's last n with b's first n)
    or two lists of dims ([a's], [b's]) paired in order; the result's dims are a's free dims
    then b's."""
    fn = "tensordot"
    _check_tensor(fn, "a", a)
    _check_tensor(fn, "b", b)
    if _is_int(dims) or (isinstance(dims, Tensor) and dims.ndim == 0):
        n = _int(fn, "dims", int(dims), minimum=0)
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"{fn}: dims ({n}) must not exceed the operands' dimensions "
                             f"({a.ndim} and {b.ndim})")
        dims_a, dims_b = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        def listed(d):
            d = d.tolist() if isinstance(d, Tensor) else d
            return [d] if _is_int(d) else list(d)
        dims_a = _dims(fn, listed(dims[0]), a.ndim, "dims[0]") or ()
        dims_b = _dims(fn, listed(dims[1]), b.ndim, "dims[1]") or ()
        if not a.ndim:
            dims_a = ()
        if not b.ndim:
            dims_b = ()
    else:
        raise TypeError(f"{fn}: dims must be an int or a pair of lists of dims, got {dims!r}")
    if len(dims_a) != len(dims_b):
        raise ValueError(f"{fn}: both lists of dims must have one length, got {list(dims_a)} and "
                         f"{list(dims_b)}")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise ValueError(f"{fn}: contracted dimensions must match in size: a's dim {da} has "
                             f"{a.shape[da]}, b's dim {db} has {b.shape[db]}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(*free_a, *dims_a).reshape(math.prod(a.shape[d] for d in free_a), k)
    right = b.permute(*dims_b, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return _product(fn, left, right).reshape(tuple(a.shape[d] for d in free_a) +
                                             tuple(b.shape[d] for d in free_b))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over `dim`, with var's arguments."""
    _check_tensor("var_mean", "input", input)
    return input.var(dim, unbiased, keepdim, correction=correction), \
        input.mean(input._correction("var_mean", dim, unbiased, correction)[0], keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over `dim`, with std's arguments."""
    _check_tensor("std_mean", "input", input)
    return input.std(dim, unbiased, keepdim, correction=correction), \
        input.mean(input._correction("std_mean", dim, unbiased, correction)[0], keepdim)


# ---- shapes of several tensors, index sets -------------------------------------------

def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    try:
        return tuple(np.broadcast_shapes(*[(s,) if _is_int(s) else tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"broadcast_shapes: shapes {list(shapes)} do not broadcast") from None


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views)."""
    for i, t in enumerate(tensors):
        _check_tensor("broadcast_tensors", f"tensor {i}", t)
    try:
        shape = np.broadcast_shapes(*[t.shape for t in tensors])
    except ValueError:
        raise ValueError(f"broadcast_tensors: shapes {[t.shape for t in tensors]} do not "
                         f"broadcast") from None
    return tuple(t.expand(*shape) for t in tensors)


def _at_least(fn, tensors, shape_of):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_at_least(fn, tuple(tensors[0]), shape_of))
    for i, t in enumerate(tensors):
        _check_tensor(fn, f"tensor {i}", t)
    out = tuple(t.reshape(shape_of(t.shape)) for t in tensors)
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors):
    return _at_least("atleast_1d", tensors, lambda s: s or (1,))


def atleast_2d(*tensors):
    return _at_least("atleast_2d", tensors, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def atleast_3d(*tensors):
    # PyTorch's (and NumPy's) layout: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
    return _at_least("atleast_3d", tensors, lambda s: s if len(s) >= 3 else
                     (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1 else s + (1,))


def _sequence(fn, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError(f"{fn}: expected a non-empty list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    return [_check_tensor(fn, f"tensor {i}", t) for i, t in enumerate(tensors)]


def hstack(tensors):
    """cat along dim 1 (dim 0 when they are 1-D), 0-d tensors as 1-D."""
    tensors = [atleast_1d(t) for t in _sequence("hstack", tensors)]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """cat along dim 0 of the tensors made at least 2-D."""
    return cat([atleast_2d(t) for t in _sequence("vstack", tensors)], 0)


row_stack = vstack


def dstack(tensors):
    """cat along dim 2 of the tensors made at least 3-D."""
    return cat([atleast_3d(t) for t in _sequence("dstack", tensors)], 2)


def column_stack(tensors):
    """0-d and 1-D tensors as columns, joined with the 2-D ones along dim 1."""
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t
                for t in _sequence("column_stack", tensors)], 1)


def _triangle_indices(fn, row, col, offset, dtype, device, upper):
    row, col = _int(fn, "row", row, minimum=0), _int(fn, "col", col, minimum=0)
    offset = _int(fn, "offset", offset)
    dtype = int64 if dtype is None else _dtype_arg(dtype, fn)
    if dtype.kind not in "iu":
        raise TypeError(f"{fn}: dtype must be an integer dtype, got {dtype}")
    keep = np.tri(row, col, offset - 1 if upper else offset, dtype=bool)
    rows, cols = np.nonzero(~keep if upper else keep)
    return Tensor._make(devices.to_device(np.stack([rows, cols]).astype(dtype).reshape(2, -1),
                                          devices.device(device or "cpu")))


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the upper triangle of a row x col matrix, from the
    `offset` diagonal on, row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, upper=True)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, upper=False)


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, as rows (the last varying
    fastest); one tensor: itself."""
    fn = "cartesian_prod"
    for i, t in enumerate(tensors):
        if _check_tensor(fn, f"tensor {i}", t).ndim != 1:
            raise ValueError(f"{fn}: expects 1-D tensors, got tensor {i} of shape {t.shape}")
    if not tensors:
        raise ValueError(f"{fn}: expects at least one tensor")
    if len(tensors) == 1:
        return tensors[0]
    tensors = _joinable(fn, list(tensors))
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements (in itertools' order), as rows."""
    fn = "combinations"
    if _check_tensor(fn, "input", input).ndim != 1:
        raise ValueError(f"{fn}: expects a 1-D tensor, got shape {input.shape}")
    r = _int(fn, "r", r, minimum=0)
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.numel()), r)), dtype=np.int64).reshape(-1, r)
    return input[Tensor._make(devices.to_device(index, input.device))]


def block_diag(*tensors):
    """The tensors (0-d, 1-D as a row, or 2-D) on the diagonal of one matrix, zeros elsewhere."""
    fn = "block_diag"
    if not tensors:
        return zeros(1, 0)
    blocks = []
    for i, t in enumerate(tensors):
        if _check_tensor(fn, f"tensor {i}", t).ndim > 2:
            raise ValueError(f"{fn}: expects tensors of at most 2 dimensions, got tensor {i} of "
                             f"shape {t.shape}")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    blocks = _joinable(fn, blocks)
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(cat([zeros(b.shape[0], left, dtype=b.dtype, device=b.device), b,
                         zeros(b.shape[0], right, dtype=b.dtype, device=b.device)], 1))
        left += b.shape[1]
    return cat(rows, 0)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of `elements` is among `test_elements` (either may be a
    number); invert=True: where it is not."""
    fn = "isin"
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"{fn}: elements or test_elements must be a Tensor")
    device = elements.device if isinstance(elements, Tensor) else test_elements.device
    a, b = (t._data if isinstance(t, Tensor) else np.asarray(t) for t in (elements, test_elements))
    a_host, b_host = devices.to_device(a, devices.CPU), devices.to_device(b, devices.CPU)
    found = np.isin(a_host, b_host, invert=_bool(fn, "invert", invert))
    return Tensor._make(devices.to_device(np.asarray(found).reshape(np.shape(a_host)), device))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value of `input` would go in the sorted last dim of `sorted_sequence` (a
    1-D sequence serves every value; otherwise one row per row of input): the first place
    whose element is >= the value, or > with right=True (side='right')."""
    fn = "searchsorted"
    _check_tensor(fn, "sorted_sequence", sorted_sequence)
    if side is not None:
        _choice(fn, "side", side, ("left", "right"))
        if right and side == "left":
            raise ValueError(f"{fn}: side='left' contradicts right=True")
        right = side == "right"
    values = input if isinstance(input, Tensor) else tensor(input, device=sorted_sequence.device)
    _same_device(fn, sorted_sequence, values)
    seq = devices.to_device(sorted_sequence._data, devices.CPU)
    if sorter is not None:
        _index_tensor(fn, "sorter", sorter, sorted_sequence)
        if sorter.shape != sorted_sequence.shape:
            raise ValueError(f"{fn}: sorter must have sorted_sequence's shape "
                             f"{sorted_sequence.shape}, got {sorter.shape}")
        seq = np.take_along_axis(seq, devices.to_device(sorter._data, devices.CPU), axis=-1)
    v = devices.to_device(values._data, devices.CPU)
    side_name = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side_name)
    else:
        if seq.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"{fn}: sorted_sequence {sorted_sequence.shape} and input "
                             f"{values.shape} must match in every dim but the last")
        rows_seq, rows_v = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        out = np.stack([np.searchsorted(s, x, side=side_name) for s, x in zip(rows_seq, rows_v)]) \
            .reshape(v.shape) if rows_seq.shape[0] else np.zeros(v.shape, np.int64)
    dtype = int32 if _bool(fn, "out_int32", out_int32) else int64
    return Tensor._make(devices.to_device(np.asarray(out).astype(dtype), sorted_sequence.device))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the sorted 1-D `boundaries` (searchsorted with one
    sequence; right=False: boundaries[i-1] < x <= boundaries[i])."""
    _check_tensor("bucketize", "boundaries", boundaries)
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be 1-D, got shape {boundaries.shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


class _TypedTensor(type):
    """The metaclass of minifw.FloatTensor and its kind: calling one makes a Tensor of its
    dtype, and isinstance(t, minifw.FloatTensor) asks whether t is a float32 CPU tensor, as
    in PyTorch."""

    def __call__(cls, *args, device=None):
        if device is not None and devices.device(device).type != "cpu":
            raise ValueError(f"{cls.__name__}: a legacy constructor makes tensors on the CPU, got "
                             f"device {str(device)!r}; use minifw.tensor(data, dtype=..., "
                             f"device=...)")
        return Tensor(*args, dtype=cls.dtype)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"


def _typed_tensor(dtype):
    name = _TYPE_NAMES[dtype]
    doc = (f"minifw.{name}(data) is minifw.tensor(data, dtype={dtype.name}); {name}(2, 3) (or "
           f"{name}(minifw.Size([2, 3]))) a 2 x 3 tensor of zeros, where PyTorch leaves it "
           f"uninitialized; as PyTorch's legacy constructor.")
    return _TypedTensor(name, (), {"dtype": dtype, "__doc__": doc, "__module__": "minifw"})


FloatTensor, DoubleTensor, LongTensor, IntTensor, BoolTensor = (
    _typed_tensor(d) for d in (float32, float64, int64, int32, bool_))


# The references from the autograd engine back to Tensor: Function.apply wraps its results
# in Tensors, and grad(is_grads_batched=True, create_graph=True) stacks its Tensors. They
# are set here, rather than imported there, so that no module imports one above its own
# (tensor -> functions -> autograd, never back).
_autograd.Tensor = Tensor
_autograd.stack = stack
