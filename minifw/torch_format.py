"""Reading PyTorch's checkpoint files (torch.save's zip format) without running code from them.

A .pt file is a zip archive: `<name>/data.pkl`, a pickle of the saved object whose tensors
refer to storages by key, and `<name>/data/<key>`, each storage's raw bytes. Unpickling
runs whatever callables a pickle names, so this reader allows only the few that a state
dict needs, each replaced by minifw's own safe version (as torch.load(weights_only=True)
does): OrderedDict, tensor and parameter rebuilding, the typed storages; and the one step
that sets attributes (BUILD) only on a state dict, for its `_metadata`. Anything else in
the file is refused before it runs. Storages must be stored uncompressed, as torch.save
writes them, and hold what their entry announces; data.pkl and byteorder may be stored or
deflated (as minifw's own .npz entries), never LZMA or BZIP2. A tensor's size, stride and
storage offset must be ints (not floats, strings or bools), sizes and strides in
[0, 2**58], at most 64 dimensions; anything else raises TorchFormatError. Tensors come
back as minifw Tensors: float16 and bfloat16 as float32, int8/int16/uint8 as int64
(minifw's dtypes), in native byte order.
"""
import collections
import io
import numbers
import pickle
import reprlib
import zipfile

import numpy as np

from .tensor import Tensor

_STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "BFloat16Storage": "bfloat16", "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}


class TorchFormatError(ValueError):
    """A PyTorch file minifw cannot (or will not) read; the message says what and why."""


class _StorageType:
    """A storage class a pickle names (torch.FloatStorage, ...): only its element type."""

    __slots__ = ("dtype",)

    def __init__(self, name):
        object.__setattr__(self, "dtype", _STORAGE_DTYPES[name])

    def __setattr__(self, name, value):  # a pickle's BUILD must not change the element type
        raise TorchFormatError("a storage type with state")

    def __setstate__(self, state):
        raise TorchFormatError("a storage type with state")


class _StateDict(collections.OrderedDict):
    """PyTorch's state dicts carry a `_metadata` attribute (restored by the pickle's BUILD)."""


def _storage_values(raw, dtype, little_endian):
    if dtype == "bfloat16":  # the high half of a float32
        halves = np.frombuffer(raw, "<u2" if little_endian else ">u2").astype(np.uint32)
        return (halves << 16).view(np.float32)
    dt = np.dtype(dtype).newbyteorder("<" if little_endian else ">")
    return np.frombuffer(raw, dt)


_MAX_SIZE = 2 ** 58  # the largest size the native library indexes (minifw.checks.MAX_SIZE)
_MAX_DIMS = 64       # NumPy's
_short = reprlib.Repr()
_short.maxlevel, _short.maxstring, _short.maxother = 3, 60, 60


def _as_minifw(values):
    """A storage's values in a minifw dtype (float32/float64, int32/int64, bool), in native
    byte order: float16 (and bfloat16) as float32, wider floats as float64, other integers
    as int64 (the caller checks that uint64 values fit)."""
    kind, size = values.dtype.kind, values.dtype.itemsize
    if kind == "f":
        target = np.float64 if size >= 8 else np.float32
    elif kind == "i" and size == 4:
        target = np.int32
    elif kind in "iu":
        target = np.int64
    else:
        target = np.bool_
    return values.astype(target, copy=False)


def _int_arg(what, value, minimum=0, maximum=_MAX_SIZE):
    """value as an int in [minimum, maximum]; a float, string, bool or anything else is refused
    (int() would read 2.5 as 2, '3' as 3 and True as 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TorchFormatError(f"its {what} must hold ints, got {type(value).__name__} "
                               f"{_short.repr(value)}")
    value = int(value)
    if not minimum <= value <= maximum:
        raise TorchFormatError(f"its {what} must hold ints in [{minimum}, 2**58], got {_short.repr(value)}")
    return value


def _int_tuple(what, values):
    if not isinstance(values, (tuple, list)):
        raise TorchFormatError(f"its {what} must be a tuple of ints, got {type(values).__name__}")
    if len(values) > _MAX_DIMS:
        raise TorchFormatError(f"its {what} has {len(values)} dimensions; at most {_MAX_DIMS} are read")
    return tuple(_int_arg(what, v) for v in values)


def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    """torch._utils._rebuild_tensor_v2: a tensor of `size` and element `stride` into
    `storage` from `offset`, every element checked to lie inside the storage."""
    if not isinstance(storage, np.ndarray):
        raise TorchFormatError(f"a tensor whose storage is a {type(storage).__name__}, not a storage")
    try:
        size, stride = _int_tuple("size", size), _int_tuple("stride", stride)
        offset = _int_arg("storage offset", offset)
    except TorchFormatError as e:
        raise TorchFormatError(f"a tensor of size {_short.repr(size)} and stride {_short.repr(stride)} at "
                               f"offset {_short.repr(offset)}: {e}") from None
    if not isinstance(requires_grad, (bool, np.bool_)):
        raise TorchFormatError(f"a tensor's requires_grad must be True or False, got "
                               f"{type(requires_grad).__name__} {_short.repr(requires_grad)}")
    if len(size) != len(stride):
        raise TorchFormatError(f"a tensor of size {size} and stride {stride} at offset {offset}")
    values = storage
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if last >= values.size:
        raise TorchFormatError(f"a tensor of size {size}, stride {stride} at offset {offset} reaches past "
                               f"its storage of {values.size} elements")
    elements = 1
    for n in size:
        elements *= n
    if elements > values.size:  # overlapping or expanded (stride 0): a copy could be any size
        raise TorchFormatError(f"a tensor of size {size} and stride {stride} has more elements than its "
                               f"storage of {values.size}; minifw copies each tensor it loads and reads "
                               f"no such views")
    if not all(size):
        others = 1
        for n in size:
            others *= max(n, 1)
        if others > _MAX_SIZE:  # empty, but NumPy would still refuse (or overflow on) its shape
            raise TorchFormatError(f"a tensor of size {_short.repr(size)}: the sizes other than 0 multiply "
                                   f"to more than 2**58")
        array = np.empty(size, values.dtype)
    else:
        view = np.lib.stride_tricks.as_strided(values[offset:], size,
                                               tuple(s * values.itemsize for s in stride), writeable=False)
        array = np.array(view)  # copied: the loaded tensor owns its memory
    t = Tensor._make(_as_minifw(array))
    return t.requires_grad_(True) if requires_grad and t.dtype.kind == "f" else t


def _rebuild_parameter(data, requires_grad, backward_hooks, *state):
    """torch._utils._rebuild_parameter: an nn.Parameter of the rebuilt tensor `data`, keeping
    requires_grad (only a float tensor requires grad); the hooks and any subclass state are
    not restored."""
    from .nn.parameter import Parameter  # imported here: minifw.nn's modules import this one
    if not isinstance(data, Tensor):
        raise TorchFormatError(f"a parameter whose data is a {type(data).__name__}, not a tensor")
    if not isinstance(requires_grad, (bool, np.bool_)):
        raise TorchFormatError(f"a parameter's requires_grad must be True or False, got "
                               f"{type(requires_grad).__name__} {_short.repr(requires_grad)}")
    return Parameter(data, bool(requires_grad) and data.dtype.kind == "f")


_ALLOWED = {
    ("collections", "OrderedDict"): _StateDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
}


class _Unpickler(pickle._Unpickler):  # the Python one: its dispatch table can be restricted
    dispatch = dict(pickle._Unpickler.dispatch)

    def _build(self):
        """BUILD (set an object's attributes from a state) only on a state dict, whose one
        attribute is `_metadata`: never on the loader's own callables and classes."""
        state = self.stack.pop()
        target = self.stack[-1]
        if type(target) is not _StateDict or not isinstance(state, dict) or set(state) - {"_metadata"}:
            raise TorchFormatError(f"it sets the state of a {type(target).__name__}, which minifw does not "
                                   f"allow (only a state dict's _metadata)")
        if "_metadata" in state:
            target._metadata = state["_metadata"]

    dispatch[pickle.BUILD[0]] = _build

    def __init__(self, data, archive, prefix, little_endian):
        super().__init__(io.BytesIO(data))
        self.archive, self.prefix, self.little_endian = archive, prefix, little_endian
        self.storages = {}

    def find_class(self, module, name):
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        allowed = _ALLOWED.get((module, name))
        if allowed is None:
            raise TorchFormatError(f"it names {module}.{name}, which minifw does not run (only tensors, "
                                   f"parameters and dicts of them are read, so that loading runs no code "
                                   f"from the file); save model.state_dict() in PyTorch")
        return allowed

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise TorchFormatError(f"an unknown persistent reference {_short.repr(pid)}")
        _, kind, key, _location, numel = pid
        if not isinstance(key, str):
            raise TorchFormatError(f"a storage key must be a string, got {type(key).__name__} {_short.repr(key)}")
        if isinstance(numel, bool) or not isinstance(numel, numbers.Integral) or numel < 0:
            raise TorchFormatError(f"storage {key[:40]}'s element count must be an int >= 0, got "
                                   f"{type(numel).__name__} {_short.repr(numel)}")
        if key not in self.storages:
            try:
                entry = self.archive.getinfo(f"{self.prefix}data/{key}")
            except KeyError:
                raise TorchFormatError(f"storage {key} is missing from the archive") from None
            itemsize = 2 if kind.dtype == "bfloat16" else np.dtype(kind.dtype).itemsize
            if entry.compress_type != zipfile.ZIP_STORED or entry.file_size > int(numel) * itemsize + 64:
                raise TorchFormatError(f"storage {key} is compressed or larger than the {numel} elements "
                                       f"it announces (torch.save stores storages as they are)")
            raw = self.archive.read(entry)
            values = _storage_values(raw, kind.dtype, self.little_endian)
            if values.size < int(numel):
                raise TorchFormatError(f"storage {key} holds {values.size} elements, {numel} announced")
            self.storages[key] = values
        return self.storages[key]


def is_torch_file(f):
    """Whether `f` (a path or a binary file at the archive's start) is a torch.save zip."""
    try:
        with zipfile.ZipFile(f) as archive:
            return any(n.endswith("/data.pkl") or n == "data.pkl" for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    finally:
        if hasattr(f, "seek"):
            f.seek(0)


_READ_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_DEFLATE_MAX_RATIO = 1032  # deflate's largest possible expansion (as minifw.serialization)


def _read_small_entry(archive, entry_name, name):
    """An entry other than a storage (data.pkl, byteorder): stored or deflated only, as minifw's
    own .npz entries, and no larger than its compressed bytes can hold."""
    info = archive.getinfo(entry_name)
    if info.compress_type not in _READ_METHODS:
        raise TorchFormatError(f"load: {name}: entry {entry_name[:80]!r} uses zip compression method "
                               f"{info.compress_type}; only stored and deflated entries are read "
                               f"(torch.save stores them)")
    most = (info.compress_size if info.compress_type == zipfile.ZIP_STORED
            else _DEFLATE_MAX_RATIO * info.compress_size)
    if info.file_size > most:
        raise TorchFormatError(f"load: {name}: entry {entry_name[:80]!r} declares {info.file_size} bytes, "
                               f"more than its {info.compress_size} stored bytes can hold")
    try:
        return archive.read(info)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
        raise TorchFormatError(f"load: {name}: entry {entry_name[:80]!r} is unreadable "
                               f"({type(e).__name__}: {e})") from None


def read(f, name):
    """The object a torch.save zip holds, tensors as minifw Tensors on the CPU."""
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        raise TorchFormatError(f"load: {name} is not a readable PyTorch file ({type(e).__name__}: {e})") from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pickles) != 1:
            raise TorchFormatError(f"load: {name}: expected one data.pkl in the archive, found {len(pickles)}")
        prefix = pickles[0][:-len("data.pkl")]
        order = "little"
        if prefix + "byteorder" in names:
            raw = _read_small_entry(archive, prefix + "byteorder", name)
            try:
                order = raw.decode("ascii").strip()
            except UnicodeDecodeError:
                order = None
            if order not in ("little", "big"):
                raise TorchFormatError(f"load: {name}: its byteorder entry must say 'little' or 'big', got "
                                       f"{_short.repr(raw)}")
        data = _read_small_entry(archive, pickles[0], name)
        try:
            return _Unpickler(data, archive, prefix, order == "little").load()
        except TorchFormatError as e:
            raise TorchFormatError(f"load: {name} is a PyTorch file that minifw will not read: {e}") from None
        except RecursionError:
            raise TorchFormatError(f"load: {name} is a PyTorch file that minifw will not read: its "
                                   f"objects nest too deeply") from None
        except (pickle.UnpicklingError, EOFError, TypeError, ValueError, AttributeError, IndexError,
                KeyError, OverflowError, MemoryError, zipfile.BadZipFile, NotImplementedError) as e:
            raise TorchFormatError(f"load: {name} is not a readable PyTorch file ({type(e).__name__}: "
                                   f"{str(e)[:200]})") from None
