"""minifw.save / minifw.load: nested containers of tensors, arrays, numbers and strings
come back equal (types, dtypes and dict key types included), the file is a plain .npz
readable without pickle, and a failed write never damages the previous checkpoint."""
import io
import json
import math
import os
import zipfile

import numpy as np
import pytest

import minifw
from minifw import nn


def assert_same(a, b, where="obj"):
    """Equal values of the same types, recursively; tensors and arrays bit for bit."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} came back as {type(b).__name__}"
    if isinstance(a, minifw.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad, where
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=where)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} came back as {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, where


OBJECTS = [
    pytest.param(minifw.tensor([[1.5, -2.0], [0.0, 3.25]]), id="tensor"),
    pytest.param({"w": minifw.randn(3, 4, dtype=minifw.float64), "i": minifw.tensor([1, 2, 3]),
                  "flag": minifw.tensor([True, False]), "scalar": minifw.tensor(2.5),
                  "empty": minifw.zeros(0, 5)}, id="dtypes-and-shapes"),
    pytest.param({"model": {"fc.weight": minifw.ones(2, 2)}, "epoch": 3, "lr": 0.01,
                  "history": [0.5, 0.25, {"best": [1, 2.0, "three"]}]}, id="nested"),
    pytest.param({0: "int key", "0": "str key", -7: [None, True, False]}, id="key-types"),
    pytest.param({"ints": [0, -1, 2**100], "floats": [0.1, -0.0, 1e-300, math.inf, -math.inf,
                                                         math.nan]}, id="numbers"),
    pytest.param({"text": "naïve ☃ \"quoted\"\n", "empty": "", "tuple": (1, "a", (2.0,))},
                 id="strings-and-tuples"),
    pytest.param({"array": np.arange(6, dtype=np.uint8).reshape(2, 3), "f16": np.ones(2, np.float16)},
                 id="numpy-arrays"),
    pytest.param([], id="empty-list"),
    pytest.param({}, id="empty-dict"),
]


@pytest.mark.parametrize("obj", OBJECTS)
def test_round_trip(obj, tmp_path):
    minifw.save(obj, tmp_path / "obj.npz")
    assert_same(obj, minifw.load(tmp_path / "obj.npz"))


def test_requires_grad_survives_and_loaded_tensors_are_independent(tmp_path):
    w = minifw.ones(2, requires_grad=True)
    minifw.save({"w": w}, tmp_path / "w.npz")
    loaded = minifw.load(str(tmp_path / "w.npz"))["w"]
    assert loaded.requires_grad and loaded.is_leaf
    with minifw.no_grad():
        loaded.data[0] = 5
    assert w.tolist() == [1.0, 1.0]


def test_numpy_scalars_come_back_as_python_numbers(tmp_path):
    minifw.save([np.float32(0.5), np.int64(3), np.bool_(True)], tmp_path / "s.npz")
    assert_same([0.5, 3, True], minifw.load(tmp_path / "s.npz"))


def test_model_and_optimizer_state_round_trip(tmp_path):
    minifw.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    opt = minifw.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(minifw.randn(4, 1, 4, 4)).sum().backward()
    opt.step()
    minifw.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ckpt.npz")

    checkpoint = minifw.load(tmp_path / "ckpt.npz")
    assert_same({"model": dict(model.state_dict()), "opt": opt.state_dict()},
                {"model": dict(checkpoint["model"]), "opt": checkpoint["opt"]})
    minifw.manual_seed(1)
    other = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    other.load_state_dict(checkpoint["model"])
    for (name, a), (_, b) in zip(model.state_dict().items(), other.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_the_file_is_a_plain_npz_with_a_json_header(tmp_path):
    minifw.save({"w": minifw.ones(2), "n": 1}, tmp_path / "c.npz")
    with zipfile.ZipFile(tmp_path / "c.npz") as z:
        assert sorted(z.namelist()) == ["a0.npy", "header.npy"]
    with np.load(tmp_path / "c.npz", allow_pickle=False) as npz:  # no pickle needed anywhere
        header = json.loads(npz["header"].tobytes())
        assert header["format"] == "minifw-checkpoint"
        np.testing.assert_array_equal(npz["a0"], [1.0, 1.0])


@pytest.mark.parametrize("obj, message", [
    pytest.param({"s": {1, 2}}, r"obj\['s'\] of type set", id="set"),
    pytest.param([object()], r"obj\[0\] of type object", id="object"),
    pytest.param({"a": np.array([None])}, "object array", id="object-array"),
    pytest.param({(1, 2): 3}, "keys must be str or int", id="tuple-key"),
    pytest.param({True: 3}, "keys must be str or int", id="bool-key"),
])
def test_what_cannot_be_stored_without_pickle_is_refused(obj, message, tmp_path):
    with pytest.raises(TypeError, match=message):
        minifw.save(obj, tmp_path / "x.npz")
    assert os.listdir(tmp_path) == []


# ---- atomic write ----------------------------------------------------------------------
def test_a_failure_during_the_write_keeps_the_previous_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    minifw.save({"epoch": 1, "w": minifw.ones(1000)}, path)
    before = path.read_bytes()

    def fail_halfway(file, **arrays):
        file.write(b"PK\x03\x04 half of a zip")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", fail_halfway)
    with pytest.raises(OSError, match="No space left"):
        minifw.save({"epoch": 2, "w": minifw.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.npz"]
    monkeypatch.undo()
    assert minifw.load(path)["epoch"] == 1


def test_save_replaces_the_previous_file(tmp_path):
    path = tmp_path / "ckpt.npz"
    minifw.save({"epoch": 1}, path)
    minifw.save({"epoch": 2}, path)
    assert minifw.load(path) == {"epoch": 2}
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        minifw.save({}, tmp_path / "c.npz")
    finally:
        os.umask(umask)
    assert (tmp_path / "c.npz").stat().st_mode & 0o777 == 0o644


def test_save_into_a_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        minifw.save({}, tmp_path / "nowhere" / "c.npz")


# ---- load errors -------------------------------------------------------------------------
def test_load_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        minifw.load(tmp_path / "missing.npz")


@pytest.mark.parametrize("make, message", [
    pytest.param(lambda p: p.write_bytes(b"hello"), "not a valid minifw checkpoint: .*not a .npz", id="not-a-zip"),
    pytest.param(lambda p: np.savez(p, x=np.ones(2)), "not a valid minifw checkpoint: .*no header entry",
                 id="npz-without-header"),
    pytest.param(lambda p: p.write_bytes(_truncated_checkpoint(p)), "minifw checkpoint",
                 id="truncated"),
    pytest.param(lambda p: np.savez(p, header=np.frombuffer(b'{"format": "other"}', np.uint8)),
                 "not a valid minifw checkpoint: .*format .other.", id="foreign-header"),
    pytest.param(lambda p: np.savez(p, header=np.frombuffer(
        b'{"format": "minifw-checkpoint", "version": 99, "object": 1}', np.uint8)),
                 "newer minifw", id="newer-version"),
])
def test_load_refuses_what_is_not_a_checkpoint(make, message, tmp_path):
    path = tmp_path / "bad.npz"
    make(path)
    with pytest.raises(ValueError, match=message):
        minifw.load(path)


def _truncated_checkpoint(path):
    minifw.save({"w": minifw.ones(100)}, path)
    return path.read_bytes()[:-40]


# ---- as torch.save / torch.load: open files, weights_only, no pickled objects --------------

def test_save_to_and_load_from_open_binary_files(tmp_path):
    import io

    state = {"w": minifw.arange(6).reshape(2, 3).float(), "step": 3}
    buffer = io.BytesIO()
    minifw.save(state, buffer)
    buffer.seek(0)
    loaded = minifw.load(buffer, weights_only=True)
    assert loaded["step"] == 3 and loaded["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with open(tmp_path / "c.npz", "wb") as f:
        minifw.save(state, f)
    with open(tmp_path / "c.npz", "rb") as f:
        assert minifw.load(f)["w"].shape == (2, 3)
    assert minifw.load(tmp_path / "c.npz", weights_only=False)["step"] == 3  # still no pickle


def test_a_file_that_is_not_a_checkpoint_is_refused_by_name(tmp_path):
    import io

    with pytest.raises(ValueError, match="not a valid minifw checkpoint: the file: not a .npz"):
        minifw.load(io.BytesIO(b"PK not really a zip"))
    with pytest.raises(TypeError, match="weights_only must be None, True or False"):
        minifw.load(io.BytesIO(), weights_only="yes")
    with pytest.raises(TypeError, match="path must be a file name or a binary file"):
        minifw.save({}, 42)


@pytest.mark.parametrize("make", [lambda: minifw.nn.Linear(2, 3),
                                  lambda: minifw.optim.SGD(minifw.nn.Linear(2, 3).parameters(), lr=0.1)],
                         ids=["module", "optimizer"])
def test_a_whole_module_is_refused_with_what_to_save_instead(make, tmp_path):
    obj = make()
    with pytest.raises(TypeError, match=rf"cannot store obj, a {type(obj).__name__}: minifw pickles no "
                                        rf"objects .* save obj.state_dict\(\)"):
        minifw.save(obj, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_an_uninitialized_lazy_parameter_is_refused_by_name(tmp_path):
    """A lazy layer's state dict before its first call holds parameters without values: saving
    it names the entry and says what to do (PyTorch pickles the placeholder objects, which its
    own weights-only load then refuses)."""
    m = nn.Sequential(nn.LazyLinear(3))
    with pytest.raises(TypeError, match=r"save: obj\['0.weight'\] is a lazy layer's "
                                        r"UninitializedParameter.*call the module's forward once"):
        minifw.save(m.state_dict(), tmp_path / "m.npz")
    assert os.listdir(tmp_path) == []
    m(minifw.ones(2, 4))
    minifw.save(m.state_dict(), tmp_path / "m.npz")
    assert minifw.load(tmp_path / "m.npz")["0.weight"].shape == (3, 4)


def test_save_and_load_take_torchs_pickle_arguments(tmp_path):
    import io
    import pickle
    state = {"w": minifw.arange(3.0), "epoch": 2}
    buffer = io.BytesIO()
    minifw.save(state, buffer, pickle_module=pickle, pickle_protocol=4,
                _use_new_zipfile_serialization=True)
    minifw.save(state, tmp_path / "ckpt.pt", pickle, 2)  # torch.save's positional order
    buffer.seek(0)
    for loaded in (minifw.load(buffer, "cpu", pickle, weights_only=True, mmap=False,
                               encoding="latin1"),
                   minifw.load(tmp_path / "ckpt.pt", pickle_module=pickle, mmap=True)):
        assert loaded["epoch"] == 2 and loaded["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"save: pickle_protocol must be between 0 and \d, got 99"):
        minifw.save(state, io.BytesIO(), pickle_protocol=99)
    with pytest.raises(TypeError, match=r"save: pickle_protocol must be an int, got str '4'"):
        minifw.save(state, io.BytesIO(), pickle_protocol="4")
    with pytest.raises(TypeError, match=r"save: pickle_module must be None or a module like "
                                        r"pickle, got int"):
        minifw.save(state, io.BytesIO(), pickle_module=3)
    with pytest.raises(TypeError, match=r"save: _use_new_zipfile_serialization must be a bool, "
                                        r"got int 1"):
        minifw.save(state, io.BytesIO(), _use_new_zipfile_serialization=1)
    with pytest.raises(TypeError, match=r"load: mmap must be None, True or False, got 1"):
        minifw.load(tmp_path / "ckpt.pt", mmap=1)
    with pytest.raises(TypeError, match=r"load: unexpected keyword argument 'fix_import' "):
        minifw.load(tmp_path / "ckpt.pt", fix_import=True)


# ---- nn.Parameter round trips as an nn.Parameter, as torch.save / torch.load do -------------
def _saved_and_loaded(obj, **load_kwargs):
    buffer = io.BytesIO()
    minifw.save(obj, buffer)
    buffer.seek(0)
    return minifw.load(buffer, **load_kwargs)


@pytest.mark.parametrize("map_location", [None, "cpu", {"cpu": "cpu"}, lambda storage, loc: storage],
                         ids=["none", "device", "dict", "function"])
def test_a_parameter_comes_back_as_a_parameter(map_location):
    p = nn.Parameter(minifw.tensor([1.0, 2.0]))
    frozen = nn.Parameter(minifw.tensor([3.0]), requires_grad=False)
    got = _saved_and_loaded(p, map_location=map_location)
    assert type(got) is nn.Parameter and got.requires_grad and got.is_leaf
    assert got.tolist() == [1.0, 2.0]
    got = _saved_and_loaded({"l": [frozen, minifw.tensor([4.0])], "t": (p,)}, map_location=map_location)
    assert type(got["l"][0]) is nn.Parameter and not got["l"][0].requires_grad
    assert type(got["l"][1]) is minifw.Tensor and not isinstance(got["l"][1], nn.Parameter)
    assert type(got["t"][0]) is nn.Parameter and got["t"][0].requires_grad


def test_a_keep_vars_state_dict_keeps_its_parameters_and_a_plain_one_its_tensors():
    layer = nn.Linear(3, 2)
    layer.bias.requires_grad_(False)
    got = _saved_and_loaded(layer.state_dict(keep_vars=True))
    assert {k: (type(v), v.requires_grad) for k, v in got.items()} == {
        "weight": (nn.Parameter, True), "bias": (nn.Parameter, False)}
    np.testing.assert_array_equal(got["weight"].detach().numpy(), layer.weight.detach().numpy())
    got["weight"].detach().numpy()[...] = 0  # the loaded parameter owns its values
    assert layer.weight.detach().numpy().any()
    plain = _saved_and_loaded(layer.state_dict())
    assert all(type(v) is minifw.Tensor for v in plain.values())
    other = nn.Linear(3, 2)
    other.load_state_dict(_saved_and_loaded(layer.state_dict(keep_vars=True)))
    np.testing.assert_array_equal(other.bias.detach().numpy(), layer.bias.detach().numpy())


def test_a_file_with_a_parameter_is_format_version_2_and_others_stay_version_1(tmp_path):
    def header_of(obj):
        minifw.save(obj, tmp_path / "c.npz")
        with np.load(tmp_path / "c.npz", allow_pickle=False) as npz:
            return json.loads(npz["header"].tobytes())

    with_parameter = header_of({"w": nn.Parameter(minifw.ones(2))})
    assert with_parameter["version"] == 2
    assert with_parameter["object"]["__dict__"][0][1]["parameter"] is True
    plain = header_of({"w": minifw.ones(2, requires_grad=True)})
    assert plain["version"] == 1 and "parameter" not in plain["object"]["__dict__"][0][1]


def test_a_parameter_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)
    torch.save([theirs], tmp_path / "t.pt")
    back = torch.load(tmp_path / "t.pt")
    ours = _saved_and_loaded([nn.Parameter(minifw.tensor([1.0, 2.0]), requires_grad=False)])
    assert type(back[0]).__name__ == type(ours[0]).__name__ == "Parameter"
    assert back[0].requires_grad == ours[0].requires_grad is False
    read = minifw.load(tmp_path / "t.pt")  # PyTorch's own file
    assert type(read[0]) is nn.Parameter and not read[0].requires_grad


# ---- values held more than once --------------------------------------------------------------

def _entries(obj, tmp_path):
    """The array entries of obj's file (the header aside) and the header's object node."""
    minifw.save(obj, tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as npz:
        return sorted(k for k in npz.files if k != "header"), json.loads(npz["header"].tobytes())["object"]


def test_a_tensor_held_twice_is_stored_once_and_loads_as_one_object(tmp_path):
    p = nn.Parameter(minifw.tensor([1.0, 2.0]))
    keys, node = _entries({"a": p, "b": [p, (p,)]}, tmp_path)
    assert keys == ["a0"]
    got = minifw.load(tmp_path / "c.npz")
    assert type(got["a"]) is nn.Parameter and got["a"] is got["b"][0] is got["b"][1][0]
    with minifw.no_grad():
        got["a"][0] = 7.0
    assert got["b"][0].tolist() == [7.0, 2.0]
    # distinct tensors of equal values stay distinct
    keys, _ = _entries([minifw.ones(2), minifw.ones(2)], tmp_path)
    assert keys == ["a0", "a1"]
    a, b = minifw.load(tmp_path / "c.npz")
    assert a is not b and not np.shares_memory(a.numpy(), b.numpy())


def test_tensors_over_one_array_share_it_when_loaded(tmp_path):
    w = minifw.randn(3, 2, requires_grad=True)
    keys, _ = _entries({"w": w, "data": w.data, "detached": w.detach(), "array": w.data.numpy()}, tmp_path)
    assert keys == ["a0"]
    got = minifw.load(tmp_path / "c.npz")
    assert got["w"].requires_grad and not got["data"].requires_grad and not got["detached"].requires_grad
    assert got["data"] is got["detached"]  # named alike: one object, as pickle's memo gives
    assert got["w"] is not got["data"]
    assert np.shares_memory(got["w"].detach().numpy(), got["data"].numpy())
    assert np.shares_memory(got["w"].detach().numpy(), got["array"])
    # a view that is another array object is stored apart
    t = minifw.arange(6.0)
    keys, _ = _entries([t, t[2:]], tmp_path)
    assert keys == ["a0", "a1"]


def test_a_tied_weight_round_trips_tied(tmp_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.out = nn.Embedding(5, 3), nn.Linear(3, 5, bias=False)
            self.out.weight = self.embed.weight

    model = Tied()
    keys, _ = _entries(model.state_dict(), tmp_path)
    assert keys == ["a0"]
    state = minifw.load(tmp_path / "c.npz")
    assert state["embed.weight"] is state["out.weight"]
    other = Tied()
    other.load_state_dict(state)
    assert other.out.weight is other.embed.weight
    np.testing.assert_array_equal(other.out.weight.detach().numpy(), model.embed.weight.detach().numpy())


@pytest.mark.parametrize("map_location", [None, "cpu", lambda storage, loc: storage],
                         ids=["none", "device", "function"])
def test_a_shared_tensor_of_a_device_is_moved_once(map_location, tmp_path):
    t = minifw.randn(4, device="cudasim")
    calls = []
    if callable(map_location):
        function = map_location

        def map_location(storage, loc):
            calls.append(loc)
            return function(storage, loc)
    keys, _ = _entries({"x": t, "y": [t], "z": t.detach().requires_grad_()}, tmp_path)
    assert keys == ["a0"]
    got = minifw.load(tmp_path / "c.npz", map_location=map_location)
    assert got["x"] is got["y"][0] and got["z"].requires_grad and got["z"] is not got["x"]
    assert np.shares_memory(got["x"].detach().cpu().numpy() if got["x"].device.type == "cpu" else got["x"]._data,
                            got["z"]._data)
    assert got["x"].device == minifw.device("cudasim" if map_location is None else "cpu")
    assert calls == (["cudasim"] if callable(map_location) else [])


def test_nodes_naming_one_entry_differently_load_as_objects_over_one_array(tmp_path):
    # what save() writes for a tensor and a frozen Parameter over one array, and a file
    # that names one entry as a Tensor and as an array: each node gets its own object,
    # over one array wherever the kinds agree
    w = minifw.ones(2)
    frozen = nn.Parameter(w, requires_grad=False)
    keys, _ = _entries([w, frozen], tmp_path)
    assert keys == ["a0"]
    a, b = minifw.load(tmp_path / "c.npz")
    assert type(a) is minifw.Tensor and type(b) is nn.Parameter and np.shares_memory(a.numpy(), b.detach().numpy())
    header = {"format": "minifw-checkpoint", "version": 1,
              "object": [{"__tensor__": "a0"}, {"__array__": "a0"}, {"__tensor__": "a0", "requires_grad": True}]}
    np.savez(tmp_path / "crafted.npz", a0=np.arange(3.0),
             header=np.frombuffer(json.dumps(header).encode(), np.uint8))
    t, array, grad = minifw.load(tmp_path / "crafted.npz")
    assert type(t) is minifw.Tensor and isinstance(array, np.ndarray) and grad.requires_grad
    assert np.shares_memory(t.numpy(), grad.detach().numpy()) and np.shares_memory(t.numpy(), array)
