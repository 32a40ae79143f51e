"""Checkpoint I/O on bad or unusual input: clear exceptions (CheckpointError, TorchFormatError,
TypeError naming the argument), never a raw OverflowError, UnicodeDecodeError, RecursionError
or a message about a temporary file; tensors loaded in minifw's own dtypes; map_location as a
function, as old PyTorch scripts pass it."""
import io
import json
import os
import struct
import zipfile

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import devices
from minifw.serialization import CheckpointError
from minifw.torch_format import TorchFormatError

from test_torch_format import _Storage, _Tensor, _linear_state, torch_save


def _npz(path, obj, arrays, raw_arrays=None):
    """A minifw checkpoint written by hand: `obj` the header's object, `arrays` .npy entries."""
    header = json.dumps({"format": "minifw-checkpoint", "version": 1, "object": obj}).encode()
    with zipfile.ZipFile(path, "w") as z:
        for key, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a)
            z.writestr(key + ".npy", buf.getvalue())
        for key, raw in (raw_arrays or {}).items():
            z.writestr(key + ".npy", raw)
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.frombuffer(header, np.uint8))
        z.writestr("header.npy", buf.getvalue())
    return path


# ---- dtypes of loaded tensors -------------------------------------------------------------

@pytest.mark.parametrize("stored, want", [
    (">f4", np.float32), ("<f4", np.float32), (">f8", np.float64), ("f2", np.float32),
    (np.longdouble, np.float64), ("u1", np.int64), ("i1", np.int64), ("i2", np.int64),
    ("u2", np.int64), ("u4", np.int64), ("u8", np.int64), (">i8", np.int64), (">i4", np.int32),
    ("?", np.bool_),
], ids=lambda v: np.dtype(v).str if not isinstance(v, type) or v is np.longdouble else np.dtype(v).name)
def test_tensors_load_in_minifws_dtypes_in_native_byte_order(tmp_path, stored, want):
    values = np.array([0, 1, 2, 3]).astype(stored)
    t = minifw.load(_npz(tmp_path / "c.npz", {"__tensor__": "a0"}, {"a0": values}))
    assert t._data.dtype == np.dtype(want) and t._data.dtype.isnative
    assert t._data.tolist() == values.astype(want).tolist()


def test_a_big_endian_tensor_is_usable_by_the_native_kernels(tmp_path):
    t = minifw.load(_npz(tmp_path / "c.npz", {"__tensor__": "a0", "requires_grad": True},
                         {"a0": np.array([-1.0, 2.0, -3.0], ">f4")}))
    assert t.dtype == minifw.float32 and t.requires_grad
    np.testing.assert_array_equal(F.relu(t).detach().numpy(), [0.0, 2.0, 0.0])


def test_a_uint64_tensor_beyond_int64_is_refused(tmp_path):
    path = _npz(tmp_path / "c.npz", {"__tensor__": "a0"}, {"a0": np.array([1, 2 ** 64 - 1], np.uint64)})
    with pytest.raises(CheckpointError, match=r"a tensor of uint64 holds 18446744073709551615, beyond int64"):
        minifw.load(path)


def test_numpy_arrays_keep_their_dtype_in_native_byte_order(tmp_path):
    loaded = minifw.load(_npz(tmp_path / "c.npz", [{"__array__": "a0"}, {"__array__": "a1"}],
                              {"a0": np.arange(3, dtype=">f4"), "a1": np.arange(3, dtype=np.float16)}))
    assert loaded[0].dtype == np.float32 and loaded[0].tolist() == [0, 1, 2]
    assert loaded[1].dtype == np.float16


def test_a_pytorch_files_tensors_are_usable_by_the_native_kernels(tmp_path):
    torch_save({"w": _Tensor(_Storage(np.array([-1.0, 2.0], np.float32), "0"), 0, (2,), (1,))},
               tmp_path / "t.pt")
    w = minifw.load(tmp_path / "t.pt")["w"]
    assert w._data.dtype == np.float32
    np.testing.assert_array_equal(F.relu(w).numpy(), [0.0, 2.0])


# ---- PyTorch files ------------------------------------------------------------------------

def _raw_torch(path, pickled, storages=(), byteorder=b"little", compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickled, compress_type=compress)
        if byteorder is not None:
            z.writestr("archive/byteorder", byteorder)
        for key, data in storages:
            z.writestr(f"archive/data/{key}", data)
    return path


def test_a_deeply_nested_pytorch_pickle_is_refused_with_or_without_map_location(tmp_path):
    path = _raw_torch(tmp_path / "deep.pt", b"\x80\x02" + b"]" * 200000 + b"a" * 199999 + b".")
    for map_location in (None, "cpu", lambda storage, loc: storage):
        with pytest.raises(TorchFormatError, match="its containers nest more than 64 deep"):
            minifw.load(path, map_location=map_location)


def test_a_self_containing_pickle_is_refused(tmp_path):
    # a list that holds itself: EMPTY_LIST, MEMOIZE, GET 0, APPEND
    path = _raw_torch(tmp_path / "cycle.pt", b"\x80\x04]\x94h\x00a.")
    with pytest.raises(TorchFormatError, match="nest more than 64 deep"):
        minifw.load(path)


def test_a_deep_persistent_id_is_refused_with_a_short_message(tmp_path):
    path = _raw_torch(tmp_path / "pid.pt", b"\x80\x02)" + b"\x85" * 100000 + b"Q.")
    with pytest.raises(TorchFormatError, match=r"an unknown persistent reference \(\(\(") as e:
        minifw.load(path)
    assert len(str(e.value)) < 400


@pytest.mark.parametrize("offset, size, stride, requires_grad, message", [
    (0, (float("inf"),), (1,), False, r"size \(inf,\) .*its size must hold ints, got float inf"),
    (0, (2.5,), (1,), False, "its size must hold ints, got float 2.5"),
    (0, (True,), (1,), False, "its size must hold ints, got bool True"),
    (0, ("3",), (1,), False, "its size must hold ints, got str '3'"),
    (0, (1, 1), (2 ** 70, 2 ** 70), False, r"its stride must hold ints in \[0, 2\*\*58\]"),
    (0, (1, 1), (2 ** 61, 2 ** 61), False, r"its stride must hold ints in \[0, 2\*\*58\]"),
    (0, (0, 2 ** 63), (1, 1), False, r"its size must hold ints in \[0, 2\*\*58\]"),
    (0, (0, 2 ** 40, 2 ** 40), (1, 1, 1), False, r"the sizes other than 0 multiply to more than 2\*\*58"),
    (2 ** 64, (1,), (1,), False, r"its storage offset must hold ints in \[0, 2\*\*58\]"),
    (1.0, (1,), (1,), False, "its storage offset must hold ints, got float 1.0"),
    (0, (0,) * 70, (0,) * 70, False, "its size has 70 dimensions; at most 64 are read"),
    (0, 3, (1,), False, "its size must be a tuple of ints, got int"),
    (0, (2,), (1,), "yes", "requires_grad must be True or False, got str 'yes'"),
], ids=["inf", "float", "bool", "str", "stride-2**70", "stride-2**61", "empty-2**63", "empty-2**80",
        "offset-2**64", "offset-float", "70-dims", "size-int", "requires_grad-str"])
def test_crafted_tensor_geometry_is_a_torch_format_error(tmp_path, offset, size, stride, requires_grad, message):
    storage = _Storage(np.arange(6, dtype=np.float32), "0")
    torch_save({"t": _Tensor(storage, offset, size, stride, requires_grad)}, tmp_path / "t.pt")
    with pytest.raises(TorchFormatError, match=message):
        minifw.load(tmp_path / "t.pt")


@pytest.mark.parametrize("byteorder, message", [
    (b"\xff\xfe", r"its byteorder entry must say 'little' or 'big', got b'\\xff\\xfe'"),
    (b"middle", r"its byteorder entry must say 'little' or 'big', got b'middle'"),
])
def test_a_bad_byteorder_entry_is_a_torch_format_error(tmp_path, byteorder, message):
    path = tmp_path / "t.pt"
    torch_save(_linear_state(), path)
    with zipfile.ZipFile(path) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    entries["archive/byteorder"] = byteorder
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    with pytest.raises(TorchFormatError, match=message):
        minifw.load(path)


def _recompressed(src, dst, method):
    with zipfile.ZipFile(src) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(dst, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data, compress_type=method if name.endswith("data.pkl") else zipfile.ZIP_STORED)
    return dst


@pytest.mark.parametrize("method", [zipfile.ZIP_LZMA, zipfile.ZIP_BZIP2], ids=["lzma", "bzip2"])
def test_data_pkl_compressed_other_than_deflate_is_refused_as_npz_entries_are(tmp_path, method):
    torch_save(_linear_state(), tmp_path / "t.pt")
    path = _recompressed(tmp_path / "t.pt", tmp_path / "c.pt", method)
    with pytest.raises(TorchFormatError, match=rf"entry 'archive/data.pkl' uses zip compression method {method}; "
                                               r"only stored and deflated entries are read"):
        minifw.load(path)


def test_a_deflated_data_pkl_is_read(tmp_path):
    torch_save(_linear_state(), tmp_path / "t.pt")
    state = minifw.load(_recompressed(tmp_path / "t.pt", tmp_path / "d.pt", zipfile.ZIP_DEFLATED))
    assert state["weight"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_a_storage_count_that_is_not_an_int_is_refused(tmp_path):
    import pickle
    import sys

    from test_torch_format import _fake_torch

    class Pickler(pickle.Pickler):
        def persistent_id(self, o):
            if isinstance(o, _Storage):
                return ("storage", _fake_torch.modules["torch"].FloatStorage, "0", "cpu", "6")
            return None

    saved = {k: sys.modules.get(k) for k in _fake_torch.modules}
    sys.modules.update(_fake_torch.modules)
    try:
        buf = io.BytesIO()
        Pickler(buf, protocol=2).dump({"t": _Tensor(_Storage(np.zeros(6, np.float32), "0"), 0, (2,), (1,))})
    finally:
        for k, v in saved.items():
            sys.modules.pop(k, None) if v is None else sys.modules.__setitem__(k, v)
    path = _raw_torch(tmp_path / "n.pt", buf.getvalue(), [("0", np.zeros(6, np.float32).tobytes())])
    with pytest.raises(TorchFormatError, match=r"storage 0's element count must be an int >= 0, got str '6'"):
        minifw.load(path)


# ---- minifw's own files ------------------------------------------------------------------

def test_an_npy_entry_with_a_negative_shape_is_a_checkpoint_error(tmp_path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3), }"
    header += " " * (64 - 10 - len(header) - 1) + "\n"
    raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(24)
    path = _npz(tmp_path / "neg.npz", {"__array__": "a0"}, {}, raw_arrays={"a0": raw})
    with pytest.raises(CheckpointError, match=r"entry 'a0': its .npy header declares shape \(-2, -3\); a shape "
                                              r"is a tuple of at most 64 sizes, each an int >= 0"):
        minifw.load(path)


@pytest.mark.parametrize("cut", [10, 100, -1], ids=["head", "middle", "last-byte"])
def test_a_truncated_checkpoint_says_truncated(tmp_path, cut):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(100)}, path)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut > 0 else data[:cut])
    with pytest.raises(CheckpointError, match=r"truncated or corrupt: it starts as a .npz \(zip\) archive"):
        minifw.load(path)
    with open(path, "rb") as f:
        with pytest.raises(CheckpointError, match="truncated or corrupt"):
            minifw.load(f)


def test_save_and_load_take_bytes_paths(tmp_path):
    path = os.fsencode(tmp_path / "b.npz")
    minifw.save({"w": minifw.ones(2)}, path)
    assert minifw.load(path)["w"].tolist() == [1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["b.npz"]


@pytest.mark.parametrize("name", ["dir/", "dir"])
def test_saving_to_a_directory_names_the_directory_not_a_temporary_file(tmp_path, name):
    (tmp_path / "dir").mkdir()
    target = str(tmp_path / "dir") + ("/" if name.endswith("/") else "")
    with pytest.raises(IsADirectoryError, match=rf"save: cannot write {target}: it names a directory; "
                                                r"give a file name") as e:
        minifw.save({}, target)
    assert ".tmp" not in str(e.value)
    assert os.listdir(tmp_path / "dir") == [] and os.listdir(tmp_path) == ["dir"]


def test_an_empty_path_is_refused(tmp_path):
    with pytest.raises(ValueError, match="save: path must be a file name, got an empty string"):
        minifw.save({}, "")


def test_files_opened_in_text_mode_are_refused_with_what_to_do(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(2)}, path)
    with open(path, "r") as f:
        with pytest.raises(TypeError, match=r"load: the file .* is open in text mode; a checkpoint must be read "
                                            r"from a file opened in binary mode \(open\(path, 'rb'\)\)"):
            minifw.load(f)
    with open(tmp_path / "t.npz", "w") as f:
        with pytest.raises(TypeError, match=r"save: the file .* is open in text mode; open it in binary mode"):
            minifw.save({}, f)
    with open(path, "rb") as f:
        with pytest.raises(TypeError, match=r"save: the file .* is not open for writing"):
            minifw.save({}, f)


# ---- map_location as a function ------------------------------------------------------------------

def test_map_location_identity_function_keeps_tensors_on_the_cpu(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(2, device="cudasim").requires_grad_(), "a": np.ones(2), "n": 3}, path)
    seen = []

    def keep(storage, location):
        seen.append((storage.device.type, location))
        return storage

    state = minifw.load(path, map_location=keep)
    assert state["w"].device.type == "cpu" and state["w"].requires_grad and state["w"].is_leaf
    assert isinstance(state["a"], np.ndarray) and state["n"] == 3
    assert seen == [("cpu", "cudasim"), ("cpu", "cpu")]
    assert minifw.load(path, map_location=lambda storage, loc: storage)["w"].device.type == "cpu"


def test_map_location_function_may_move_or_defer(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(2), "s": minifw.ones(1, device="cudasim")}, path)
    moved = minifw.load(path, map_location=lambda storage, loc: storage.to("cudasim"))
    assert moved["w"].device.type == "cudasim" and moved["s"].device.type == "cudasim"
    deferred = minifw.load(path, map_location=lambda storage, loc: None)  # None: the saved device
    assert deferred["w"].device.type == "cpu" and deferred["s"].device.type == "cudasim"


def test_map_location_function_on_a_pytorch_file(tmp_path):
    torch_save(_linear_state(), tmp_path / "t.pt")
    state = minifw.load(tmp_path / "t.pt", map_location=lambda storage, loc: storage)
    assert state["weight"].device.type == "cpu" and state["weight"].tolist() == [[0, 1, 2], [3, 4, 5]]
    state = minifw.load(tmp_path / "t.pt", map_location=lambda storage, loc: storage.to("cudasim"))
    assert state["bias"].device.type == "cudasim"


def test_map_location_function_must_return_a_tensor(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(2)}, path)
    with pytest.raises(TypeError, match=r"load: map_location, a function, must return the Tensor it was given"
                                        r".* it returned int"):
        minifw.load(path, map_location=lambda storage, loc: 5)
    with pytest.raises(ValueError, match=r"load: map_location returned a Tensor of shape \(3,\) for one of shape"):
        minifw.load(path, map_location=lambda storage, loc: minifw.ones(3))
    with pytest.raises(TypeError, match="map_location must be None, a device"):
        minifw.load(path, map_location=42)


def test_a_map_location_dict_still_maps_saved_devices(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(2)}, path)
    assert devices.of(minifw.load(path, map_location={"cpu": "cudasim"})["w"]._data) == devices.CUDASIM
