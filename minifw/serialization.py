"""minifw.save / minifw.load: nested dicts, lists, tuples, numbers, strings, NumPy
arrays and Tensors (state dicts of models and optimizers, RNG states) in one
NumPy .npz file, without pickle.

`path` may be a file name or an open binary file (as torch.save / torch.load take
either). No object is pickled, so loading a file never runs code from it: a whole
Module is refused with a message to save its state_dict() instead, and
`weights_only` is accepted for PyTorch's signature (every minifw load is weights-only).

The .npz holds each array as "a0", "a1", ... and a "header" entry: UTF-8 JSON
describing the structure, where an array appears as {"__array__": "a3"} (or
{"__tensor__": ...} with requires_grad, and "parameter": true for an nn.Parameter, which
load() gives back as an nn.Parameter, as torch.load does) and dict keys keep their types.
A file holding a Parameter is written as format version 2 (so that a minifw older than
that says the file is newer rather than malformed); any other as version 1. Values that `obj`
holds more than once (a Tensor met twice, such as a weight tied between two layers of a
state dict, or Tensors and arrays over one NumPy or CuPy array, such as p and p.data) are
stored once, every place naming the same entry; load() gives back one object for places
that name the same entry alike, and objects that share their memory for the others, as
torch.load keeps pickled objects and shared storages. (Views of an array that are other
array objects, such as t[1:], are stored apart.) An array
of a device other than the CPU is written as a host copy, with its device
(e.g. "device": "cudasim"), and loaded back onto that device unless
load(map_location=...) says otherwise, as in PyTorch. The
file is written to a temporary file in the same directory, flushed to disk,
then renamed over the target, so a crash mid-write never leaves a half-written
checkpoint behind.

Temporary files. A save to DIR/NAME writes DIR/.NAME.HOST.PID.RANDOM.tmp (HOST: this
machine's name, PID: the writing process). A process killed mid-write (SIGKILL, a power
cut) cannot remove its temporary file, so every save to DIR/NAME first removes the temporary
files of that same target that no live writer can own: those of this host whose process is
no longer running, those of this very process that none of its threads is writing, and
those in the older naming (.NAME.RANDOM.tmp, no process recorded) that nothing has
written to for an hour. Temporary files of other targets, and those of other
hosts (a shared network file system, where a process id says nothing), are left alone. (A
process id reused by a new process keeps a stale file until that process ends; on Windows,
where probing a process could end it, other processes' files are left alone.)

Loading checks the file before it believes it: every entry must be a .npy array of a
bool, integer or float dtype (nothing is unpickled: no code from the file runs), the
sizes its headers declare must fit the file's real size before anything is allocated, and
the JSON header may nest containers at most MAX_DEPTH deep and must use only the entries
above with values of the right types. Any violation raises CheckpointError (a ValueError)
saying "not a valid minifw checkpoint", the file and what is wrong.
"""
import io
import json
import math
import numbers
import os
import pickle
import re
import socket
import threading
import time
import uuid
import zipfile

import numpy as np

from . import devices
from . import torch_format as _torch_format
from .tensor import Tensor

FORMAT = "minifw-checkpoint"
VERSION = 2            # the newest format read; 2 adds the "parameter" flag of a Tensor entry
PARAMETER_VERSION = 2  # the version a file holding a Parameter is written as
MAX_DEPTH = 64         # containers (dict, list, tuple) nested in a saved object
NUMERIC_KINDS = "biuf"  # the dtype kinds an array entry may have: bool, int, uint, float
DEFLATE_MAX_RATIO = 1032  # deflate's largest possible expansion: bounds a compressed entry's size
LEGACY_TEMP_AGE = 3600  # seconds without a write after which an old-style temporary file is stale


class CheckpointError(ValueError):
    """A file that load() cannot read as a minifw checkpoint: the message names it and says
    what is wrong."""

    def __init__(self, name, problem):
        super().__init__(f"load: not a valid minifw checkpoint: {name}: {problem}")
        self.path, self.problem = name, problem


def _parameter_class():
    from .nn.parameter import Parameter  # imported here: minifw.nn's modules import this one
    return Parameter


def _encode(obj, arrays, where, depth=0, found=None, stored=None):
    """The JSON node of obj, its arrays added to `arrays`; "parameter" is added to the set
    `found` when a Parameter is stored. `stored` maps id() of each (NumPy or CuPy) array
    already stored to its key, so that values met again name the same entry."""
    if stored is None:
        stored = {}
    if depth > MAX_DEPTH:
        raise ValueError(f"save: obj nests containers more than {MAX_DEPTH} deep (at {where[:200]}...), "
                         f"which load() refuses")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        value = float(obj)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(obj, Tensor):
        if not devices.is_array(obj._data):  # a lazy layer's uninitialized parameter or buffer
            raise TypeError(f"save: {where} is a lazy layer's {type(obj).__name__}, whose shape is "
                            f"not known yet, so it has no values to store; call the module's forward "
                            f"once (or load a state dict into it) before saving")
        entry = {"__tensor__": _stored_once(obj._data, arrays, stored),
                 "requires_grad": bool(obj.requires_grad), **_device_entry(obj._data)}
        if isinstance(obj, _parameter_class()):
            entry["parameter"] = True
            if found is not None:
                found.add("parameter")
        return entry
    if devices.is_array(obj):
        if obj.dtype == object:
            raise TypeError(f"save: {where} is an object array, which cannot be stored without pickle")
        return {"__array__": _stored_once(obj, arrays, stored), **_device_entry(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (str, numbers.Integral)):
                raise TypeError(f"save: dict keys must be str or int; {where} has a key {k!r}")
            items.append([k if isinstance(k, str) else int(k),
                          _encode(v, arrays, f"{where}[{k!r}]", depth + 1, found, stored)])
        return {"__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{where}[{i}]", depth + 1, found, stored)
                              for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, arrays, f"{where}[{i}]", depth + 1, found, stored) for i, v in enumerate(obj)]
    if callable(getattr(obj, "state_dict", None)):  # a Module, an optimizer, a scheduler
        raise TypeError(f"save: cannot store {where}, a {type(obj).__name__}: minifw pickles no objects "
                        f"(so that loading a file never runs code from it); save {where}.state_dict() "
                        f"and restore it with load_state_dict(minifw.load(...)), as PyTorch recommends")
    raise TypeError(f"save: cannot store {where} of type {type(obj).__name__} (supported: dict, "
                    f"list, tuple, str, numbers, None, numpy arrays and Tensors)")


def _host_copy(array, arrays):
    """Store `array` (as a plain NumPy array in host memory) under a new key; returns the key."""
    key = f"a{len(arrays)}"
    arrays[key] = devices.to_device(array, devices.CPU)
    return key


def _stored_once(array, arrays, stored):
    """The key of `array` (a Tensor's or an array the object holds): stored on its first
    meeting, the same key after. (The object being saved holds the array, so its id() is not
    reused while save() runs.)"""
    key = stored.get(id(array))
    if key is None:
        key = stored[id(array)] = _host_copy(array, arrays)
    return key


def _device_entry(array):
    dev = devices.of(array)
    return {} if dev == devices.CPU else {"device": str(dev)}  # none: the CPU (and older files)


def _load_device(saved, map_location):
    """The device an array saved on device `saved` is loaded onto (a map_location function
    is applied by _map_tensor instead: here it means the saved device)."""
    if map_location is None or _is_map_function(map_location):
        name = saved
    elif isinstance(map_location, dict):
        name = map_location.get(saved, saved)
    else:
        name = map_location
    try:
        return devices.get(name, "load")
    except RecursionError:
        raise
    except RuntimeError as e:
        raise RuntimeError(f"{e}; to load it elsewhere, pass map_location (e.g. "
                           f"map_location='cpu')") from None


def _is_map_function(map_location):
    """Whether map_location is a function (storage, location) -> storage, as torch.load takes."""
    return callable(map_location) and not isinstance(map_location, (str, dict, devices.device, type))


def _map_tensor(array, requires_grad, saved, map_location):
    """The Tensor a map_location function makes of a loaded host `array`, applied as torch.load
    applies it: called with the array as a Tensor on the CPU (as PyTorch hands it each storage,
    deserialized on the CPU) and the name of the device it was saved from; the Tensor it
    returns is what load returns (so ``lambda storage, loc: storage`` keeps everything on the
    CPU), and None means the saved device. requires_grad is set on the result afterwards."""
    result = map_location(Tensor._make(array), str(saved))
    if result is None:
        result = Tensor._make(devices.to_device(array, _load_device(saved, None)))
    elif not isinstance(result, Tensor):
        raise TypeError(f"load: map_location, a function, must return the Tensor it was given (or "
                        f"that Tensor on another device, e.g. storage.to('cudasim')), or None; it "
                        f"returned {type(result).__name__}")
    elif result.shape != array.shape:
        raise ValueError(f"load: map_location returned a Tensor of shape {tuple(result.shape)} for one of "
                         f"shape {tuple(array.shape)}")
    elif not result.is_leaf or result.requires_grad:
        result = result.detach()
    return result.requires_grad_(True) if requires_grad else result


def _as_loaded(array, tensor, bad):
    """A loaded array in native byte order; for a Tensor also in one of minifw's dtypes, as
    minifw.tensor() and the PyTorch-file reader convert: float16 -> float32, long double ->
    float64, integers other than int32/int64 -> int64 (bad(...) raised where a value does not
    fit, e.g. a uint64 beyond 2**63 - 1)."""
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not tensor:
        return array
    kind, size = array.dtype.kind, array.dtype.itemsize
    if kind == "u" and size == 8 and array.size and int(array.max()) > np.iinfo(np.int64).max:
        raise bad(f"a tensor of {array.dtype} holds {int(array.max())}, beyond int64 (minifw's integer "
                  f"dtype)")
    if kind == "f" and size > 8:
        return array.astype(np.float64)
    return _torch_format._as_minifw(array)


_MARKERS = {"__tensor__": {"requires_grad", "device", "parameter"}, "__array__": {"device"},
            "__dict__": set(), "__tuple__": set(), "__float__": set()}


def _decode_entry(memo, marker, key, array, saved, requires_grad, parameter, map_location, bad):
    """The object of a Tensor or array node not met before, over the loaded array of its
    entry: loaded (in minifw's dtypes for a Tensor, _as_loaded) and moved (or passed through
    a map_location function) once per entry, kind and saved device, and shared by every
    node that names them."""
    tensor = marker == "__tensor__"
    loaded = memo.get((tensor, key, saved))
    if loaded is None:
        loaded = _as_loaded(array, tensor, bad)
        if _is_map_function(map_location):
            loaded = _map_tensor(loaded, False, saved, map_location)._data
        else:
            loaded = devices.to_device(loaded, _load_device(saved, map_location))
        memo[(tensor, key, saved)] = loaded
    if not tensor:
        return loaded
    if parameter:  # a Parameter of the loaded values, as torch.load rebuilds one
        return _parameter_class()(Tensor._make(loaded), requires_grad)
    t = Tensor._make(loaded)
    return t.requires_grad_(True) if requires_grad else t


def _decode(node, arrays, map_location, name, where="obj", depth=0, memo=None):
    """The object the header's `node` describes; a malformed node raises CheckpointError.
    `memo` holds what entries gave already: the loaded array of an entry for a kind (Tensor
    or array) and device, and the object of a node, so that nodes naming one entry alike
    give one object, and otherwise objects over one array."""
    if memo is None:
        memo = {}
    def bad(problem):
        return CheckpointError(name, f"header entry {where[:200]}: {problem}")

    if depth > MAX_DEPTH:
        raise bad(f"containers nest more than {MAX_DEPTH} deep")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, arrays, map_location, name, f"{where}[{i}]", depth + 1, memo)
                for i, v in enumerate(node)]
    if not isinstance(node, dict):
        raise bad(f"a JSON value of type {type(node).__name__}")
    markers = [k for k in node if k in _MARKERS]
    if len(markers) != 1 or set(node) - {markers[0]} - _MARKERS[markers[0]]:
        raise bad(f"unknown entry with keys {sorted(map(str, node))[:10]}")
    marker, value = markers[0], node[markers[0]]
    if marker in ("__tensor__", "__array__"):
        if not isinstance(value, str) or value not in arrays:
            raise bad(f"refers to array {value!r}, which the file does not hold")
        saved = node.get("device", "cpu")
        try:
            devices.device(saved)
        except (TypeError, ValueError):
            raise bad(f"device must be a device name such as 'cpu'; got {saved!r}") from None
        requires_grad = node.get("requires_grad", False)
        if not isinstance(requires_grad, bool):
            raise bad(f"requires_grad must be true or false; got {requires_grad!r}")
        parameter = node.get("parameter", False)
        if not isinstance(parameter, bool):
            raise bad(f"parameter must be true or false; got {str(parameter)[:80]!r}")
        array = arrays[value]
        if requires_grad and array.dtype.kind != "f":
            raise bad(f"requires_grad is set on an array of {array.dtype}; only float tensors "
                      f"have gradients")
        node_key = (marker, value, saved, requires_grad, parameter)
        if node_key not in memo:
            memo[node_key] = _decode_entry(memo, marker, value, array, saved, requires_grad, parameter,
                                           map_location, bad)
        return memo[node_key]
    if marker == "__dict__":
        if not isinstance(value, list):
            raise bad(f"__dict__ must be a list of [key, value] pairs; got {type(value).__name__}")
        out = {}
        for i, item in enumerate(value):
            if not (isinstance(item, list) and len(item) == 2 and not isinstance(item[0], bool)
                    and isinstance(item[0], (str, int))):
                raise bad(f"item {i} of __dict__ must be a [key, value] pair with a str or int key; "
                          f"got {str(item)[:80]}")
            key = item[0]
            out[key] = _decode(item[1], arrays, map_location, name, f"{where}[{key!r}]", depth + 1, memo)
        return out
    if marker == "__tuple__":
        if not isinstance(value, list):
            raise bad(f"__tuple__ must be a list; got {type(value).__name__}")
        return tuple(_decode(v, arrays, map_location, name, f"{where}[{i}]", depth + 1, memo)
                     for i, v in enumerate(value))
    try:  # __float__: the repr of a non-finite float
        return float(value) if isinstance(value, str) else float("x")
    except ValueError:
        raise bad(f"__float__ must be a string such as 'inf' or 'nan'; got {str(value)[:80]!r}") from None


def _moved(obj, map_location, name):
    """A PyTorch file's object (its tensors on the CPU), with every tensor moved to
    map_location when that names one device, or passed through it when it is a callable;
    containers may nest at most MAX_DEPTH deep, as in minifw's own files."""
    if map_location is None or isinstance(map_location, dict):
        move = None
    elif _is_map_function(map_location):
        def move(t):
            return _map_tensor(t._data, t.requires_grad, "cpu", map_location)
    else:
        dev = _load_device("cpu", map_location)

        def move(t):
            moved = Tensor._make(devices.to_device(t._data, dev))
            return moved.requires_grad_(True) if t.requires_grad else moved
    return _walk(obj, move, name, 0)


def _walk(obj, move, name, depth):
    if depth > MAX_DEPTH:
        raise _torch_format.TorchFormatError(
            f"load: {name} is a PyTorch file that minifw will not read: its containers nest more "
            f"than {MAX_DEPTH} deep (or contain themselves)")
    if isinstance(obj, Tensor):
        if move is None:
            return obj
        moved = move(obj)
        parameter = _parameter_class()
        if isinstance(obj, parameter) and not isinstance(moved, parameter):
            moved = parameter(moved, obj.requires_grad)
        return moved
    if isinstance(obj, dict):
        moved = type(obj)((k, _walk(v, move, name, depth + 1)) for k, v in obj.items())
        if hasattr(obj, "__dict__"):  # a state dict's _metadata
            moved.__dict__.update(obj.__dict__)
        return moved
    if isinstance(obj, (list, tuple)):
        return type(obj)(_walk(v, move, name, depth + 1) for v in obj)
    return obj


def _not_an_archive(name, start):
    if start[:1] == b"\x80":  # a pickle: torch.save's format before PyTorch 1.6
        return ValueError(f"load: {name} is a PyTorch file in the old pickle format, which minifw "
                          f"does not read (unpickling can run code); re-save it with a current "
                          f"PyTorch's torch.save, whose zip format minifw reads")
    if start == b"PK\x03\x04":  # a zip's first entry, but no readable directory at the end
        return CheckpointError(name, "truncated or corrupt: it starts as a .npz (zip) archive, but "
                                     "the zip directory at its end is missing or damaged (was the "
                                     "write or the copy interrupted?)")
    return CheckpointError(name, f"not a .npz (zip) archive: it starts with bytes "
                                 f"{start.hex() or 'nothing (it is empty)'}")


def _read_archive(source, name):
    """(header, {key: array}) of the .npz at `source` (a path or a seekable binary file), each
    entry checked before it is read: a .npy array of a NUMERIC_KINDS dtype whose declared size
    is the entry's size, and no entry larger than the file can hold."""
    if isinstance(source, (str, bytes)):
        file_size = os.path.getsize(source)  # a missing file: FileNotFoundError, as open() says
    else:
        start = source.tell()
        file_size = source.seek(0, os.SEEK_END)
        source.seek(start)
    try:
        archive = zipfile.ZipFile(source)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as e:
        raise CheckpointError(name, f"not a readable zip archive ({e})") from None
    with archive:
        entries = archive.infolist()
        keys = [info.filename[:-4] for info in entries]
        for info in entries:
            if not info.filename.endswith(".npy") or info.is_dir():
                raise CheckpointError(name, f"entry {info.filename[:80]!r} is not a .npy array")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise CheckpointError(name, f"entry {info.filename[:80]!r} uses zip compression "
                                            f"method {info.compress_type}; only stored and deflated "
                                            f"entries are read")
            if info.header_offset + info.compress_size > file_size:
                raise CheckpointError(name, f"entry {info.filename[:80]!r} declares "
                                            f"{info.compress_size} bytes at offset "
                                            f"{info.header_offset}, past the end of the file "
                                            f"({file_size} bytes): truncated or corrupt")
            most = (info.compress_size if info.compress_type == zipfile.ZIP_STORED
                    else DEFLATE_MAX_RATIO * info.compress_size)
            if info.file_size > most:
                raise CheckpointError(name, f"entry {info.filename[:80]!r} declares {info.file_size} "
                                            f"bytes, more than its {info.compress_size} stored bytes "
                                            f"can hold")
        if len(set(keys)) != len(keys):
            raise CheckpointError(name, "the archive holds an entry twice")
        if "header" not in keys:
            raise CheckpointError(name, f"the archive has no header entry (it holds "
                                        f"{', '.join(keys[:5]) or 'nothing'})")
        arrays = {key: _read_npy(archive, info, key, name) for key, info in zip(keys, entries)}
    raw = arrays.pop("header")
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise CheckpointError(name, f"the header entry must be a 1-D uint8 array (UTF-8 JSON); got "
                                    f"{raw.dtype} of shape {raw.shape}")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        raise CheckpointError(name, "its JSON header nests too deeply to parse") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(name, f"its header is not UTF-8 JSON ({e})") from None
    return header, arrays


def _read_npy(archive, info, key, name):
    """The array in the .npy entry `info`, its header checked and its size matched to the
    entry's before the array is allocated; never unpickles."""
    def bad(problem):
        return CheckpointError(name, f"entry {key[:80]!r}: {problem}")

    try:
        with archive.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise bad(f".npy format version {version} is not read")
            if not (isinstance(shape, tuple) and len(shape) <= 64
                    and all(type(n) is int and n >= 0 for n in shape)):
                raise bad(f"its .npy header declares shape {str(shape)[:80]}; a shape is a tuple of "
                          f"at most 64 sizes, each an int >= 0")
            if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
                raise bad(f"an array must hold bool, integer or float numbers; this one holds "
                          f"{dtype}")
            nbytes = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
            available = info.file_size - f.tell()
            if nbytes != available:
                raise bad(f"its .npy header declares shape {shape} of {dtype} ({nbytes} bytes), "
                          f"but the entry holds {available} bytes of data")
            array = np.empty(math.prod(shape), dtype)
            buffer, done = array.view(np.uint8), 0
            while done < nbytes:
                chunk = f.read(min(1 << 24, nbytes - done))
                if not chunk:
                    raise bad(f"the data ends after {done} of {nbytes} bytes")
                buffer[done:done + len(chunk)] = np.frombuffer(chunk, np.uint8)
                done += len(chunk)
            f.read(1)  # at the entry's end: zipfile checks its CRC
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, SyntaxError, TypeError) as e:
        raise bad(f"unreadable ({type(e).__name__}: {e})") from None
    return array.reshape(shape, order="F" if fortran_order else "C")


def _is_file(f, *methods):
    return not isinstance(f, (str, bytes, os.PathLike)) and all(callable(getattr(f, m, None)) for m in methods)


# ---- temporary files (the rule is in the module's docstring) ----
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:63] or "host"
_TEMP_SUFFIX = re.compile(r"(?P<host>[A-Za-z0-9-]{1,63})\.(?P<pid>[0-9]{1,19})\.[0-9a-f]{32}\.tmp")
_LEGACY_TEMP_SUFFIX = re.compile(r"[0-9a-f]{32}\.tmp")
_writing = set()  # the temporary files this process's save() calls are writing now
_writing_lock = threading.Lock()


def _process_is_running(pid):
    if os.name == "nt":  # os.kill would terminate it there: assume it runs
        return True
    if pid <= 0:
        return True  # never a writer's pid; os.kill(0, ...) would mean the process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OverflowError, ValueError):  # larger than any pid
        return False
    return True


def _is_stale(folder, name, base):
    """Whether `name` in `folder` is a temporary file of save(..., folder/base) that no live
    writer can own."""
    prefix = f".{base}."
    if not name.startswith(prefix):
        return False
    rest = name[len(prefix):]
    match = _TEMP_SUFFIX.fullmatch(rest)
    if match is not None:
        if match["host"] != _HOST:
            return False  # another machine's process: its pid says nothing here
        pid = int(match["pid"])
        if pid == os.getpid():
            with _writing_lock:
                return os.path.join(folder, name) not in _writing
        return not _process_is_running(pid)
    if _LEGACY_TEMP_SUFFIX.fullmatch(rest):
        try:
            return time.time() - os.stat(os.path.join(folder, name)).st_mtime > LEGACY_TEMP_AGE
        except OSError:
            return False
    return False


def _remove_stale_temp_files(folder, base):
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.name.startswith(f".{base}.")]
    except OSError:
        return
    for name in names:
        if _is_stale(folder, name, base):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:  # removed by another process meanwhile, or not ours to remove
                pass


def _check_pickle_module(fn, pickle_module):
    if pickle_module is not None and not callable(getattr(pickle_module, "dumps", None)):
        raise TypeError(f"{fn}: pickle_module must be None or a module like pickle, got "
                        f"{type(pickle_module).__name__} {pickle_module!r}")


def save(obj, path, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` to `path`, a file name (str, bytes or os.PathLike; written atomically: the
    file is replaced only once fully written) or an open binary file (written from its
    current position).

    pickle_module, pickle_protocol and the two underscored flags are accepted for torch.save's
    signature and checked; minifw's files hold no pickle (and always one archive format), so
    they change nothing."""
    _check_pickle_module("save", pickle_module)
    if pickle_protocol is not None and (isinstance(pickle_protocol, bool)
                                        or not isinstance(pickle_protocol, numbers.Integral)):
        raise TypeError(f"save: pickle_protocol must be an int, got "
                        f"{type(pickle_protocol).__name__} {pickle_protocol!r}")
    if pickle_protocol is not None and not 0 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save: pickle_protocol must be between 0 and {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol}")
    for name, flag in (("_use_new_zipfile_serialization", _use_new_zipfile_serialization),
                       ("_disable_byteorder_record", _disable_byteorder_record)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"save: {name} must be a bool, got {type(flag).__name__} {flag!r}")
    arrays, found = {}, set()
    encoded = _encode(obj, arrays, "obj", found=found)
    # the lowest version that describes the object, so that older minifws read what they can
    version = PARAMETER_VERSION if "parameter" in found else 1
    header = {"format": FORMAT, "version": version, "object": encoded}
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    if _is_file(path, "write"):
        if isinstance(path, io.TextIOBase):
            raise TypeError(f"save: the file {getattr(path, 'name', '')!r} is open in text mode; open it in "
                            f"binary mode (open(path, 'wb'))")
        writable = getattr(path, "writable", None)
        if callable(writable) and not writable():
            raise TypeError(f"save: the file {getattr(path, 'name', '')!r} is not open for writing; open it "
                            f"with open(path, 'wb')")
        np.savez(path, **arrays)
        return
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"save: path must be a file name or a binary file opened for writing, got "
                        f"{type(path).__name__}")
    path = os.fsdecode(os.fspath(path))  # bytes names as str: the temporary name is built from it
    if not path:
        raise ValueError("save: path must be a file name, got an empty string")
    if path.endswith(os.sep) or (os.altsep and path.endswith(os.altsep)) or os.path.isdir(path):
        raise IsADirectoryError(f"save: cannot write {path}: it names a directory; give a file name "
                                f"(e.g. {os.path.join(path, 'checkpoint.pt')})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: directory {folder} does not exist")
    # A unique name next to the target (os.replace is atomic only within one file system),
    # opened with O_EXCL and the usual 0o666 & ~umask mode (mkstemp would make it 0o600).
    base = os.path.basename(path)
    _remove_stale_temp_files(folder, base)
    tmp = os.path.join(folder, f".{base}.{_HOST}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    with _writing_lock:
        _writing.add(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except BaseException:
        with _writing_lock:
            _writing.discard(tmp)
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    finally:
        with _writing_lock:
            _writing.discard(tmp)
    try:  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


_PICKLE_LOAD_ARGS = ("encoding", "errors", "fix_imports")


def load(path, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what save() wrote, from a file name or an open binary file: Tensors come back as
    Tensors (NumPy arrays as arrays), each on the device it was saved from, or as
    `map_location` says: a device for all of them (a name such as 'cpu' or a minifw.device),
    or a dict from saved device names to devices, e.g. {'cudasim': 'cpu'}, as torch.load's
    map_location. weights_only (None, True or False) is accepted for torch.load's signature:
    minifw's files hold no pickled objects, so every load is weights-only whatever it says.
    So are pickle_module, mmap (None, True or False) and the unpickler's keywords torch.load
    passes on (encoding, errors, fix_imports): checked, and without effect.

    map_location may also be a function, as old PyTorch scripts pass it: as torch.load calls
    map_location(storage, location) with each storage deserialized on the CPU, minifw calls
    it with each loaded Tensor on the CPU and the name of the device it was saved from
    ("cpu" for every tensor of a PyTorch file), and load returns the Tensor it returns
    (None: the Tensor on its saved device, as PyTorch's default). So the common
    ``lambda storage, loc: storage`` loads everything onto the CPU, and
    ``lambda storage, loc: storage.to("cudasim")`` onto "cudasim"; requires_grad is kept.

    Tensors come back in minifw's dtypes: an entry stored as float16 becomes float32, as
    long double float64, as an integer type other than int32/int64 int64 (refused with
    CheckpointError if a value does not fit), each in native byte order. NumPy arrays keep
    their dtype (in native byte order).

    A file torch.save wrote (a state dict: tensors, parameters, dicts, lists, numbers) is
    read too, without running code from it (minifw.torch_format), its tensors on the CPU
    or on the one device map_location names."""
    if not (map_location is None or isinstance(map_location, (str, devices.device, dict))
            or _is_map_function(map_location)):
        raise TypeError(f"load: map_location must be None, a device (e.g. 'cpu'), a dict from "
                        f"device names to devices or a function (storage, location), got "
                        f"{type(map_location).__name__}")
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be None, True or False, got {weights_only!r}")
    _check_pickle_module("load", pickle_module)
    if not (mmap is None or isinstance(mmap, (bool, np.bool_))):
        raise TypeError(f"load: mmap must be None, True or False, got {mmap!r}")
    unknown = sorted(set(pickle_load_args) - set(_PICKLE_LOAD_ARGS))
    if unknown:
        raise TypeError(f"load: unexpected keyword argument {unknown[0]!r} (besides map_location, "
                        f"pickle_module, weights_only and mmap, torch.load's keywords are the "
                        f"unpickler's: {', '.join(_PICKLE_LOAD_ARGS)})")
    if _is_file(path, "read", "seek"):
        name = getattr(path, "name", "the file")
        if isinstance(path, io.TextIOBase):
            raise TypeError(f"load: the file {name!r} is open in text mode; a checkpoint must be read "
                            f"from a file opened in binary mode (open(path, 'rb'))")
        start = path.tell()
        is_zip = zipfile.is_zipfile(path)
        path.seek(start)
        if not is_zip:
            raise _not_an_archive(name, path.read(4))
    else:
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"load: path must be a file name or a binary file opened for reading, got "
                            f"{type(path).__name__}")
        path = name = os.fsdecode(os.fspath(path))
        if os.path.isfile(path) and not zipfile.is_zipfile(path):
            with open(path, "rb") as f:
                raise _not_an_archive(path, f.read(4))
    if _torch_format.is_torch_file(path):  # PyTorch's own zip format, read without unpickling code
        return _moved(_torch_format.read(path, name), map_location, name)
    header, arrays = _read_archive(path, name)
    if not isinstance(header, dict):
        raise CheckpointError(name, f"its header is a JSON {type(header).__name__}, not an object")
    if header.get("format") != FORMAT:
        raise CheckpointError(name, f"its header names format {str(header.get('format'))[:80]!r}, "
                                    f"not {FORMAT!r}")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise CheckpointError(name, f"its header's version must be a positive int; got "
                                    f"{str(version)[:80]!r}")
    if version > VERSION:
        raise ValueError(f"load: {name} was written by a newer minifw (format version "
                         f"{version}, this one reads up to {VERSION})")
    if "object" not in header:
        raise CheckpointError(name, "its header has no 'object' entry")
    return _decode(header["object"], arrays, map_location, name)
