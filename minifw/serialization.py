"""minifw.save / minifw.load: nested dicts, lists, tuples, numbers, strings, NumPy
arrays and Tensors (state dicts of models and optimizers, RNG states) in one
NumPy .npz file, without pickle.

`path` may be a file name or an open binary file (as torch.save / torch.load take
either). No object is pickled, so loading a file never runs code from it: a whole
Module is refused with a message to save its state_dict() instead, and
`weights_only` is accepted for PyTorch's signature (every minifw load is weights-only).

The .npz holds each array as "a0", "a1", ... and a "header" entry: UTF-8 JSON
describing the structure, where an array appears as {"__array__": "a3"} (or
{"__tensor__": ...} with requires_grad) and dict keys keep their types. An array
of a device other than the CPU is written as a host copy, with its device
(e.g. "device": "cudasim"), and loaded back onto that device unless
load(map_location=...) says otherwise, as in PyTorch. The
file is written to a temporary file in the same directory, flushed to disk,
then renamed over the target, so a crash mid-write never leaves a half-written
checkpoint behind.
"""
import json
import math
import numbers
import os
import uuid
import zipfile

import numpy as np

from . import devices
from .tensor import Tensor

FORMAT = "minifw-checkpoint"
VERSION = 1


def _encode(obj, arrays, where):
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
        return {"__tensor__": _host_copy(obj._data, arrays), "requires_grad": bool(obj.requires_grad),
                **_device_entry(obj._data)}
    if devices.is_array(obj):
        if obj.dtype == object:
            raise TypeError(f"save: {where} is an object array, which cannot be stored without pickle")
        return {"__array__": _host_copy(obj, arrays), **_device_entry(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (str, numbers.Integral)):
                raise TypeError(f"save: dict keys must be str or int; {where} has a key {k!r}")
            items.append([k if isinstance(k, str) else int(k), _encode(v, arrays, f"{where}[{k!r}]")])
        return {"__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]
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


def _device_entry(array):
    dev = devices.of(array)
    return {} if dev == devices.CPU else {"device": str(dev)}  # none: the CPU (and older files)


def _load_device(saved, map_location):
    """The device an array saved on device `saved` is loaded onto."""
    if map_location is None:
        name = saved
    elif isinstance(map_location, dict):
        name = map_location.get(saved, saved)
    else:
        name = map_location
    try:
        return devices.get(name, "load")
    except RuntimeError as e:
        raise RuntimeError(f"{e}; to load it elsewhere, pass map_location (e.g. "
                           f"map_location='cpu')") from None


def _decode(node, arrays, map_location):
    if isinstance(node, list):
        return [_decode(v, arrays, map_location) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node or "__array__" in node:
        array = arrays[node.get("__tensor__", node.get("__array__"))]
        array = devices.to_device(array, _load_device(node.get("device", "cpu"), map_location))
        if "__array__" in node:
            return array
        t = Tensor._make(array)
        return t.requires_grad_(True) if node.get("requires_grad") else t
    if "__dict__" in node:
        return {k: _decode(v, arrays, map_location) for k, v in node["__dict__"]}
    if "__tuple__" in node:
        return tuple(_decode(v, arrays, map_location) for v in node["__tuple__"])
    if "__float__" in node:
        return float(node["__float__"])
    raise ValueError(f"load: unknown entry in the checkpoint header: {sorted(node)}")


def _moved(obj, map_location):
    """A PyTorch file's object (its tensors on the CPU), with every tensor moved to
    map_location when that names one device."""
    if map_location is None or isinstance(map_location, dict):
        return obj
    dev = _load_device("cpu", map_location)
    if isinstance(obj, Tensor):
        moved = Tensor._make(devices.to_device(obj._data, dev))
        return moved.requires_grad_(True) if obj.requires_grad else moved
    if isinstance(obj, dict):
        moved = type(obj)((k, _moved(v, map_location)) for k, v in obj.items())
        if hasattr(obj, "__dict__"):  # a state dict's _metadata
            moved.__dict__.update(obj.__dict__)
        return moved
    if isinstance(obj, (list, tuple)):
        return type(obj)(_moved(v, map_location) for v in obj)
    return obj


def _not_an_archive(name, start):
    if start[:1] == b"\x80":  # a pickle: torch.save's format before PyTorch 1.6
        return (f"load: {name} is a PyTorch file in the old pickle format, which minifw does not read "
                f"(unpickling can run code); re-save it with a current PyTorch's torch.save, whose zip "
                f"format minifw reads")
    return f"load: {name} is not a minifw checkpoint (not a .npz archive)"


def _is_file(f, *methods):
    return not isinstance(f, (str, bytes, os.PathLike)) and all(callable(getattr(f, m, None)) for m in methods)


def save(obj, path):
    """Write `obj` to `path`, a file name (atomically: the file is replaced only once fully
    written) or an open binary file (written from its current position)."""
    arrays = {}
    header = {"format": FORMAT, "version": VERSION, "object": _encode(obj, arrays, "obj")}
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    if _is_file(path, "write"):
        np.savez(path, **arrays)
        return
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"save: path must be a file name or a binary file opened for writing, got "
                        f"{type(path).__name__}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: directory {folder} does not exist")
    # A unique name next to the target (os.replace is atomic only within one file system),
    # opened with O_EXCL and the usual 0o666 & ~umask mode (mkstemp would make it 0o600).
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
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
    try:  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def load(path, map_location=None, *, weights_only=None):
    """Read what save() wrote, from a file name or an open binary file: Tensors come back as
    Tensors (NumPy arrays as arrays), each on the device it was saved from, or as
    `map_location` says: a device for all of them (a name such as 'cpu' or a minifw.device),
    or a dict from saved device names to devices, e.g. {'cudasim': 'cpu'}, as torch.load's
    map_location. weights_only (None, True or False) is accepted for torch.load's signature:
    minifw's files hold no pickled objects, so every load is weights-only whatever it says.

    A file torch.save wrote (a state dict: tensors, parameters, dicts, lists, numbers) is
    read too, without running code from it (minifw.torch_format), its tensors on the CPU
    or on the one device map_location names."""
    if not (map_location is None or isinstance(map_location, (str, devices.device, dict))):
        raise TypeError(f"load: map_location must be None, a device (e.g. 'cpu') or a dict from "
                        f"device names to devices, got {type(map_location).__name__}")
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be None, True or False, got {weights_only!r}")
    if _is_file(path, "read", "seek"):
        name, start = getattr(path, "name", "the file"), path.tell()
        is_zip = zipfile.is_zipfile(path)
        path.seek(start)
        if not is_zip:
            raise ValueError(_not_an_archive(name, path.read(2)))
    else:
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"load: path must be a file name or a binary file opened for reading, got "
                            f"{type(path).__name__}")
        path = name = os.fspath(path)
        if os.path.isfile(path) and not zipfile.is_zipfile(path):
            with open(path, "rb") as f:
                raise ValueError(_not_an_archive(path, f.read(2)))
    from . import torch_format  # PyTorch's own zip format, read without unpickling code

    if torch_format.is_torch_file(path):
        return _moved(torch_format.read(path, name), map_location)
    try:
        with np.load(path, allow_pickle=False) as npz:
            if not isinstance(npz, np.lib.npyio.NpzFile) or "header" not in npz.files:
                raise ValueError("no header entry")
            header = json.loads(npz["header"].tobytes().decode("utf-8"))
            arrays = {name: npz[name] for name in npz.files if name != "header"}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"load: {name} is not a readable minifw checkpoint ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"load: {name} is not a minifw checkpoint")
    if header.get("version", 0) > VERSION:
        raise ValueError(f"load: {name} was written by a newer minifw (format version "
                         f"{header['version']}, this one reads up to {VERSION})")
    return _decode(header["object"], arrays, map_location)
