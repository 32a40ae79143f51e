"""minifw.Tensor: one NumPy array plus what autograd needs (requires_grad, grad, grad_fn).

Dtypes are float32 (the default for Python floats), float64, int64 (the
default for Python ints) and bool (results of comparisons). Binary operations
promote as PyTorch does: a float tensor keeps its dtype against Python
numbers, int64 meets a float scalar as float32, float32 meets float64 as
float64.

A tensor's device is where its array lives (minifw.devices): "cpu" (a NumPy
array), "cuda" (a CuPy array on the GPU) or "cudasim" (a NumPy array standing for
a GPU's, where minifw's CUDA kernels run on the CPU emulator). Tensors are made
on a device (device=...) or moved there (Tensor.to); an operation's tensors
must share one, and its results stay there, as in PyTorch.

Every differentiable method applies a Function from minifw.functions; see
minifw.autograd for the graph walk.
"""
import collections
import math
import numbers

import numpy as np

from . import autograd as _autograd
from . import devices
from . import random as _random
from .checks import TENSOR_DTYPES as _DTYPES
from .checks import check_dim as _dim
from .checks import check_dims as _dims
from .checks import check_sizes as _shape_args
from .checks import check_tensor_dtype as _dtype_arg
from .functions import activation as _activation
from .functions import elementwise as _elementwise
from .functions import linear as _linear
from .functions import reductions as _reductions
from .functions import shape as _shape
from .functions import softmax as _softmax

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

MaxResult = collections.namedtuple("MaxResult", "values indices")


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
                    f"float32, float64, int64, bool)")


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


def _check_size(fn, size):
    if any(s < 0 for s in size):
        raise ValueError(f"{fn}: sizes must be >= 0, got {size}")
    return size


def _category(dtype):
    return {"b": 0, "i": 1, "u": 1, "f": 2}[dtype.kind]


def _result_dtype(*operands):
    """PyTorch's promotion for Tensors and Python numbers (numbers never widen a float tensor)."""
    tensor_dtypes = [o.dtype for o in operands if isinstance(o, Tensor)]
    scalars = [o for o in operands if not isinstance(o, Tensor)]
    scalar_cat = max((0 if isinstance(o, (bool, np.bool_)) else 1 if isinstance(o, numbers.Integral)
                      else 2) for o in scalars) if scalars else -1
    tensor_cat = max(_category(d) for d in tensor_dtypes)
    if tensor_cat == 2:
        return float64 if float64 in tensor_dtypes else float32
    if scalar_cat == 2:
        return float32
    return int64 if max(tensor_cat, scalar_cat) >= 1 else bool_


class Tensor:
    """An n-dimensional array with reverse-mode automatic differentiation.

    Make one with minifw.tensor / zeros / ones / randn / ...; `Tensor(data)` is
    the same as `minifw.tensor(data)`.
    """

    __slots__ = ("_data", "grad", "grad_fn", "_output_nr", "_requires_grad", "__weakref__")
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operator
    __hash__ = object.__hash__  # __eq__ is elementwise

    def __init__(self, data, dtype=None, device=None, requires_grad=False):
        t = tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        self._set(t._data, None, 0, t._requires_grad)

    def _set(self, data, grad_fn, output_nr, requires_grad):
        self._data, self.grad, self.grad_fn = data, None, grad_fn
        self._output_nr, self._requires_grad = output_nr, requires_grad

    @classmethod
    def _make(cls, data, grad_fn=None, output_nr=0):
        """Wrap an array produced inside minifw (no checks, no copy)."""
        t = object.__new__(Tensor)
        t._set(data, grad_fn, output_nr, False)
        return t

    # ---- what it is -----------------------------------------------------------------
    @property
    def data(self):
        """A tensor sharing this one's storage, detached from the graph, as in PyTorch:
        changes through it (p.data.add_(1)) change this tensor and are not recorded."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        """Replace the storage with `value`'s (shape and dtype may change, as in PyTorch)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data: expected a Tensor, got {type(value).__name__} (wrap an "
                            f"array with minifw.from_numpy)")
        value = value._data
        if value.dtype not in _DTYPES:
            raise TypeError(f"Tensor.data: dtype must be one of float32, float64, int64, bool; "
                            f"got {value.dtype}")
        if self._requires_grad and value.dtype.kind != "f":
            raise RuntimeError(f"Tensor.data: a tensor that requires grad must hold floating point "
                               f"data; got {value.dtype}")
        self._data = value

    shape = property(lambda self: self._data.shape)
    ndim = property(lambda self: self._data.ndim)
    dtype = property(lambda self: self._data.dtype)
    device = property(lambda self: devices.of(self._data))
    is_leaf = property(lambda self: self.grad_fn is None)

    @property
    def requires_grad(self):
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
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

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[_dim("size", dim, self.ndim)]

    def dim(self):
        return self.ndim

    def numel(self):
        return int(self._data.size)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

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

    def __array__(self, dtype=None, copy=None):
        self._host_only("numpy.asarray")
        a = self._data if dtype is None else self._data.astype(dtype)
        return np.array(a, copy=True) if copy else a

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor with {self.numel()} elements is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype != int64 or self.numel() != 1:
            raise TypeError("only an int64 tensor with one element can be used as an index")
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

    def bool(self):
        return self._cast(bool_)

    def type_as(self, other):
        return self._cast(other.dtype)

    # ---- autograd ------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Add d(self)/d(leaf) (times `gradient` for non-scalars) into every leaf's .grad.
        Saved arrays are freed on the way unless retain_graph=True."""
        if create_graph:
            raise NotImplementedError("backward: create_graph=True (gradients of gradients) is "
                                      "not supported; backward runs on arrays, without a graph")
        if inputs is not None:
            raise NotImplementedError("backward: inputs= is not supported; every leaf that "
                                      "requires grad receives its gradient")
        _autograd.backward([self], [gradient], retain_graph=bool(retain_graph))

    def detach(self):
        """The same data, cut off from the graph."""
        return Tensor._make(self._data)

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
        if not isinstance(other, (Tensor, numbers.Number, np.bool_)):
            return NotImplemented
        dtype = _result_dtype(self, other)
        if true_div and dtype.kind != "f":
            dtype = float32
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
        return self._binary(other, _elementwise.Sub, reverse=True)

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
        return tensor(other).__matmul__(self) if isinstance(other, np.ndarray) else NotImplemented

    add = __add__
    sub = __sub__
    mul = __mul__
    div = __truediv__
    matmul = __matmul__

    def pow(self, exponent):
        return self ** exponent

    def _compare(self, other, op):
        dev = _autograd.common_device(op.__name__, (self, other))
        other = other._data if isinstance(other, Tensor) else other
        return Tensor._make(_autograd.on_device(op(self._data, other), dev))

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

    # in place: only where no graph is being recorded (autograd keeps no version counters,
    # so changing an array a Function saved would silently corrupt its gradient)
    def _check_inplace(self, name, other=None):
        if _autograd.is_grad_enabled() and (self.requires_grad or (
                isinstance(other, Tensor) and other.requires_grad)):
            raise RuntimeError(f"{name}: in-place operations are not recorded by autograd, and "
                               f"here a tensor that requires grad is involved; use an "
                               f"out-of-place operation (x = x + y) or wrap the update in "
                               f"minifw.no_grad()")

    def _inplace(self, name, other, op):
        self._check_inplace(name, other)
        _autograd.common_device(name, (self, other))
        if isinstance(other, (Tensor, numbers.Number)):
            result_dtype = _result_dtype(self, other)
            if _category(result_dtype) > _category(self.dtype):
                raise TypeError(f"{name}: result type {result_dtype} can't be cast to this "
                                f"tensor's dtype {self.dtype}")
        other = other._data if isinstance(other, Tensor) else other
        result = op(self._data, other)
        if result.shape != self.shape:
            raise ValueError(f"{name}: the result of shape {result.shape} does not fit this "
                             f"tensor's shape {self.shape}")
        self._data[...] = result
        return self

    def add_(self, other, alpha=1):
        return self._inplace("add_", other, lambda a, b: a + alpha * b)

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", other, lambda a, b: a - alpha * b)

    def mul_(self, other):
        return self._inplace("mul_", other, np.multiply)

    def div_(self, other):
        return self._inplace("div_", other, np.true_divide)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        self._check_inplace("fill_", value)
        devices.assign(self._data, Ellipsis, value._data if isinstance(value, Tensor) else value)
        return self

    def copy_(self, src):
        """Copies src's values (broadcast to this shape) into this tensor, from any device."""
        self._check_inplace("copy_", src)
        src = src._data if isinstance(src, Tensor) else src if devices.is_array(src) else np.asarray(src)
        if np.broadcast_shapes(src.shape, self.shape) != self.shape:  # ValueError if they don't broadcast
            raise ValueError(f"copy_: a source of shape {src.shape} does not broadcast to {self.shape}")
        devices.assign(self._data, Ellipsis, src)
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        self._check_inplace("uniform_")
        devices.assign(self._data, Ellipsis, _random._numpy_rng(generator).uniform(a, b, self.shape))
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        self._check_inplace("normal_")
        devices.assign(self._data, Ellipsis, _random._numpy_rng(generator).normal(mean, std, self.shape))
        return self

    # ---- elementwise functions -----------------------------------------------------
    def _float_input(self, name):
        return self if self.dtype.kind == "f" else self._cast(float32)

    def exp(self):
        return _elementwise.Exp.apply(self._float_input("exp"))

    def log(self):
        return _elementwise.Log.apply(self._float_input("log"))

    def sqrt(self):
        return _elementwise.Sqrt.apply(self._float_input("sqrt"))

    def abs(self):
        return _elementwise.Abs.apply(self)

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given")
        return _elementwise.Clamp.apply(self, min=min, max=max)

    clip = clamp

    def relu(self):
        return _activation.Activation.apply(self._float_input("relu"), mode="relu")

    def sigmoid(self):
        return _activation.Activation.apply(self._float_input("sigmoid"), mode="sigmoid")

    def tanh(self):
        return _activation.Activation.apply(self._float_input("tanh"), mode="tanh")

    def softmax(self, dim):
        return _softmax.softmax(self._float_input("softmax"), _dim("softmax", dim, max(self.ndim, 1)))

    def log_softmax(self, dim):
        return _softmax.softmax(self._float_input("log_softmax"),
                                _dim("log_softmax", dim, max(self.ndim, 1)), log=True)

    # ---- reductions ----------------------------------------------------------------
    def sum(self, dim=None, keepdim=False):
        x = self if self.dtype.kind == "f" else self._cast(int64)
        return _reductions.Sum.apply(x, axes=_dims("sum", dim, self.ndim), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False):
        if self.dtype.kind != "f":
            raise TypeError(f"mean: input must be a floating point tensor, got {self.dtype}; "
                            f"convert it with .float() first")
        return _reductions.Mean.apply(self, axes=_dims("mean", dim, self.ndim), keepdim=keepdim)

    def var(self, dim=None, keepdim=False, correction=1):
        """Variance with Bessel's correction by default (correction=1), as torch.var."""
        mean = self.mean(dim, keepdim=True)
        axes = _dims("var", dim, self.ndim)
        count = self.numel() if axes is None else int(np.prod([self.shape[a] for a in axes]))
        return ((self - mean) ** 2).sum(dim, keepdim) / max(count - correction, 0)

    def std(self, dim=None, keepdim=False, correction=1):
        return self.var(dim, keepdim, correction).sqrt()

    def _extreme(self, name, dim, keepdim, smallest):
        if self.numel() == 0:
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
        return _reductions.Amax.apply(self, axes=_dims("amax", dim, self.ndim), keepdim=keepdim)

    def amin(self, dim=None, keepdim=False):
        return _reductions.Amax.apply(self, axes=_dims("amin", dim, self.ndim), keepdim=keepdim,
                              smallest=True)

    def _arg(self, name, fn, dim, keepdim):
        if self.numel() == 0:
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

    # ---- shapes --------------------------------------------------------------------
    def reshape(self, *shape):
        target = _infer_shape("reshape", _shape_args("reshape", shape), self.shape)
        return self if target == self.shape else _shape.Reshape.apply(self, shape=target)

    view = reshape

    def view_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dim("flatten", start_dim, self.ndim), _dim("flatten", end_dim, self.ndim)
        if s > e:
            raise ValueError(f"flatten: start_dim ({start_dim}) must not come after end_dim ({end_dim})")
        return self.reshape(self.shape[:s] + (-1,) + self.shape[e + 1:])

    def permute(self, *dims):
        dims = _shape_args("permute", dims)
        if len(dims) != self.ndim:
            raise ValueError(f"permute: got {len(dims)} dims {dims} for a {self.ndim}-D tensor")
        return _shape.Permute.apply(self, dims=_dims("permute", dims, self.ndim))

    def transpose(self, dim0, dim1):
        order = list(range(self.ndim))
        a, b = _dim("transpose", dim0, self.ndim), _dim("transpose", dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return _shape.Permute.apply(self, dims=tuple(order))

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self if self.ndim < 2 else self.transpose(0, 1)

    T = property(lambda self: self.permute(*reversed(range(self.ndim))))

    def unsqueeze(self, dim):
        d = _dim("unsqueeze", dim, self.ndim + 1)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim=None):
        axes = _dims("squeeze", dim, self.ndim)
        if axes is None:
            axes = range(self.ndim)
        keep = [n for i, n in enumerate(self.shape) if not (i in axes and n == 1)]
        return self.reshape(tuple(keep))

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

    # ---- indexing ------------------------------------------------------------------
    def _index(self, index):
        items = index if isinstance(index, tuple) else (index,)
        out = []
        for i in items:
            if isinstance(i, Tensor):
                if i.dtype.kind not in "bi":
                    raise IndexError(f"tensors used as indices must be int64 or bool, got {i.dtype}")
                if i.device != self.device and i.device != devices.CPU:  # as PyTorch
                    raise IndexError(f"indices should be either on cpu or on the same device as "
                                     f"the indexed tensor ({self.device}); got indices on "
                                     f"{i.device}")
                i = i._data
            out.append(i)
        return tuple(out) if isinstance(index, tuple) else out[0]

    def __getitem__(self, index):
        index = self._index(index)
        try:
            return _shape.Index.apply(self, index=index)
        except IndexError as e:
            raise IndexError(f"index {index!r} is invalid for a tensor of shape {self.shape}: {e}") from None

    def __setitem__(self, index, value):
        value_requires = isinstance(value, Tensor) and value.requires_grad
        if _autograd.is_grad_enabled() and (self.requires_grad or value_requires):
            raise RuntimeError("__setitem__: assigning into a tensor is not recorded by autograd; "
                               "build the result with cat/stack/indexing instead, or assign under "
                               "minifw.no_grad()")
        devices.assign(self._data, self._index(index), value._data if isinstance(value, Tensor) else value)

    # ---- printing ------------------------------------------------------------------
    def __repr__(self):
        body = np.array2string(devices.to_device(self._data, devices.CPU).view(np.ndarray), separator=", ",
                               prefix="tensor(", precision=4, threshold=1000, edgeitems=3)
        extras = []
        if type(self._data) is not np.ndarray:
            extras.append(f"device='{self.device}'")  # as PyTorch shows device='cuda:0'
        if self.size and self.dtype not in (float32, int64, bool_) or (self._data.size == 0 and
                                                                     self.dtype != float32):
            extras.append(f"dtype=minifw.{self.dtype.name}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"


# ---- making tensors --------------------------------------------------------------------

def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, a NumPy array
    or a Tensor) on `device` (by default the device of a Tensor or array, else the CPU).
    Floats become float32 and ints int64 unless `dtype` says otherwise."""
    if isinstance(data, Tensor):
        a = data._data
    elif devices.is_array(data) and not isinstance(data, np.ndarray):
        a = data  # a GPU array (CuPy)
    else:
        try:
            a = np.asanyarray(data)
        except (TypeError, ValueError) as e:
            raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__}: {e}") from None
        if a.dtype == object:
            raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__} (its elements "
                            f"must be numbers of one nesting depth)")
        if dtype is None and not isinstance(data, (np.ndarray, np.generic)) and a.dtype.kind == "f":
            a = a.astype(float32)  # Python floats: the default dtype, as in PyTorch
    dev = devices.get(device) if device is not None else devices.of(a)
    d = _natural_dtype(a) if dtype is None else _dtype_arg(dtype)
    placed = devices.to_device(a, dev)  # a copy when it moves
    t = Tensor._make(placed.astype(d, order="C", copy=placed is a))
    return t.requires_grad_(requires_grad) if requires_grad else t


def from_numpy(array):
    """A tensor sharing memory with `array` (no copy), on the array's device: the CPU for
    a NumPy array (a devices.CudaSimArray gives a "cudasim" tensor)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype not in _DTYPES:
        raise TypeError(f"from_numpy: dtype must be one of float32, float64, int64, bool; got "
                        f"{array.dtype} (convert it with array.astype first)")
    return Tensor._make(array)


def _creation(fn, size, dtype, device, requires_grad, make):
    """A tensor of `size` made by make(size, dtype, device), on `device`."""
    size = _check_size(fn, _shape_args(fn, size))
    dev = devices.get(device, fn)
    t = Tensor._make(make(size, float32 if dtype is None else _dtype_arg(dtype, fn), dev))
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
        dtype = _natural_dtype(np.asarray(fill_value)) if not isinstance(fill_value, float) else float32
    return _creation("full", (size,) if isinstance(size, numbers.Integral) else size, dtype, device,
                     requires_grad, _filled(fill_value))


def _random_floats(fn, draw, size, generator, dtype, device, requires_grad):
    dtype = float32 if dtype is None else _dtype_arg(dtype, fn)
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
    """Integers in [low, high) (or [0, low) when high is omitted)."""
    low, high = (0, low) if high is None else (low, high)
    rng = _random._numpy_rng(generator)
    return _creation("randint", size, int64 if dtype is None else dtype, device, False,
                     _on_host_then(lambda s, d: rng.integers(low, high, s).astype(d)))


def randperm(n, *, generator=None, device=None):
    dev = devices.get(device, "randperm")
    return Tensor._make(devices.to_device(
        _random._numpy_rng(generator).permutation(n).astype(np.int64), dev))


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if dtype is None:
        ints = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = int64 if ints else float32
    dev = devices.get(device, "arange")
    values = np.arange(start, end, step).astype(_dtype_arg(dtype, "arange"))
    t = Tensor._make(devices.to_device(values, dev))
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
    """Join tensors along an existing dim; all other sizes must match."""
    tensors = _joinable("cat", tensors)
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


def where(condition, input, other):
    """Elementwise `input` where condition is true, else `other` (broadcasting; numbers allowed)."""
    if not isinstance(condition, Tensor) or condition.dtype != bool_:
        raise TypeError(f"where: condition must be a bool tensor, got "
                        f"{getattr(condition, 'dtype', type(condition).__name__)}")
    operands = [t if isinstance(t, (Tensor, numbers.Number)) else tensor(t) for t in (input, other)]
    _autograd.common_device("where", [condition] + operands)
    dtype = _result_dtype(*operands)
    a, b = (t._cast(dtype) if isinstance(t, Tensor) else _scalar(t, dtype) for t in operands)
    return _elementwise.Where.apply(a, b, condition=condition._data)



# The one reference from the autograd engine back to Tensor: Function.apply wraps its
# results in Tensors. It is set here, rather than imported there, so that no module
# imports one above its own (tensor -> functions -> autograd, never back).
_autograd.Tensor = Tensor
