"""Lazy layers: parameters whose shapes are inferred from the first input, as torch.nn's.

A lazy layer (LazyLinear, LazyConv2d, LazyBatchNorm2d, ...) is built without its input
size: its parameters and buffers are UninitializedParameter / UninitializedBuffer objects
that know their dtype and device but hold no array. Its first call runs a forward pre-hook
that reads the input's size, materializes every one of them in place (the same Python
objects, which become a plain Parameter and Tensor), initializes them as the ordinary layer
does, and then turns the module into that layer (its class becomes cls_to_become:
LazyLinear -> Linear), so that the hook never runs again.

Because the objects keep their identity, an optimizer built before the first call holds the
very parameters the layer later trains, as in PyTorch (which recommends, but does not
require, a dry run first). load_state_dict materializes them to the checkpoint's shapes
before copying (a load that fails leaves them uninitialized). Until then, reading an
uninitialized tensor's shape raises RuntimeError and any computation with it raises
ValueError, as PyTorch's.
"""
import functools

from ... import devices
from ...autograd import no_grad
from ...tensor import Tensor
from ..parameter import Parameter
from .module import _loading


class _NoData:
    """The array slot of an uninitialized tensor: its dtype and device, no elements. Anything
    that would read elements (an operation, NumPy) is refused with a message that says why."""

    __slots__ = ("dtype", "device")

    def __init__(self, dtype, device):
        self.dtype, self.device = dtype, device

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer: call "
                           "the lazy module's forward once (or load_state_dict) to initialize it")

    ndim = shape

    def _unusable(self, what="it"):
        return ValueError(f"Attempted to use an uninitialized parameter or buffer ({what}); call "
                          f"the lazy module's forward with a sample batch first to infer its shape")

    def __getattr__(self, name):
        raise self._unusable(name)

    def __array__(self, *args, **kwargs):
        raise self._unusable("as an array")

    def __len__(self):
        raise self._unusable("len")

    def __getitem__(self, index):
        raise self._unusable("indexing")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: materialize() and the refusal
    of every use before it."""

    __slots__ = ()
    cls_to_become = None

    def _uninitialized(self, requires_grad, device, dtype):
        from ...tensor import get_default_dtype
        from ...checks import check_tensor_dtype
        dtype = get_default_dtype() if dtype is None else check_tensor_dtype(dtype, type(self).__name__)
        self._set(_NoData(dtype, devices.get(device, type(self).__name__)), None, 0, False)
        self.requires_grad_(requires_grad)

    device = property(lambda self: self._data.device if isinstance(self._data, _NoData)
                      else devices.of(self._data))

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor an (uninitialized) array of `shape`, on its device in its dtype unless
        device or dtype say otherwise, and make it a plain cls_to_become (in place)."""
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(int(s) for s in shape)
        dev = self._data.device if device is None else devices.get(device, "materialize")
        dtype = self._data.dtype if dtype is None else dtype
        with no_grad():
            self._data = devices.empty(shape, dtype, dev)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def detach(self):
        """Another uninitialized tensor of this kind (what state_dict holds, as PyTorch's)."""
        return type(self)(requires_grad=False, device=self._data.device, dtype=self._data.dtype)

    def __deepcopy__(self, memo):
        clone = type(self)(requires_grad=self._requires_grad, device=self._data.device,
                           dtype=self._data.dtype)
        memo[id(self)] = clone
        return clone

    def __reduce_ex__(self, protocol):
        return type(self), (self._requires_grad, self._data.device, self._data.dtype)

    def _convert(self, convert):
        """Module.to/.float()/...: a new dtype or device, found by converting an empty array."""
        probe = convert(devices.empty((0,), self._data.dtype, self._data.device))
        self._data = _NoData(probe.dtype, devices.of(probe))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy layer's, before its first call);
    materialize() makes it a Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        self._uninitialized(requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; materialize() makes it a Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        self._uninitialized(requires_grad, device, dtype)


def is_lazy(t):
    return isinstance(t, UninitializedTensorMixin)


def _unmaterialize(t, lazy_class, data):
    """Undo t.materialize(): t is again uninitialized (of lazy_class, with its _NoData `data`)."""
    t._data, t.__class__ = data, lazy_class


class LazyModuleMixin:
    """Mixed in before a layer class: the layer's parameters start uninitialized and
    initialize_parameters(*inputs) materializes them at the first call, after which the
    module's class becomes cls_to_become."""

    cls_to_become = None

    def _lazy_setup(self):
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any of this module's own parameters or buffers is still uninitialized."""
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def _infer_parameters(self, module, args, kwargs):
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"{type(self).__name__}: not all parameters were initialized by "
                               f"initialize_parameters")
        self._sizes_from_parameters()
        self._initialize_hook.remove()
        self._load_hook.remove()
        del self._initialize_hook, self._load_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _sizes_from_parameters(self):
        """After load_state_dict materialized the parameters, the size attribute (in_features,
        in_channels, num_features) the checkpoint implies."""

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        for name, t in list(self._parameters.items()) + [
                (n, b) for n, b in self._buffers.items() if n not in self._non_persistent]:
            key = prefix + name
            if key in state_dict and is_lazy(t):
                value = state_dict[key]
                shape = value.shape if hasattr(value, "shape") else ()
                if isinstance(value, Tensor) and is_lazy(value):
                    continue  # an uninitialized entry loads nothing
                lazy_class, data = type(t), t._data
                t.materialize(tuple(shape))
                undo = getattr(_loading, "undo", None)
                if undo is not None:  # inside load_state_dict: should the load fail, t is lazy again
                    undo.append(functools.partial(_unmaterialize, t, lazy_class, data))

    def _input_size(self, input, dim_of):
        """The size along dim_of(input.ndim) of the first input, checked."""
        cls = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{cls}: input must be a minifw.Tensor to infer the parameters' "
                            f"shapes, got {type(input).__name__}")
        dim = dim_of(input.ndim)
        if dim is None:
            raise ValueError(f"{cls}: expected {self._lazy_input_desc} input to infer the "
                             f"parameters' shapes, got a {input.ndim}-D input of shape "
                             f"{tuple(input.shape)}")
        size = input.shape[dim]
        if size < 1:
            raise ValueError(f"{cls}: cannot infer the parameters' shapes from an input with 0 "
                             f"elements along dim {dim} (shape {tuple(input.shape)})")
        return int(size)
