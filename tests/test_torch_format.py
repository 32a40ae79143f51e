"""Reading torch.save's zip files (state dicts) without running code from them. The files are
written here as torch.save writes them (PyTorch is not a test dependency): a pickle whose
tensors refer to storages by key, beside each storage's bytes."""
import collections
import io
import pickle
import sys
import types
import zipfile

import numpy as np
import pytest

import minifw
from minifw.torch_format import TorchFormatError


class _Storage:
    """Stands for a torch storage while pickling: persistent_id turns it into a key."""

    def __init__(self, values, key):
        self.values, self.key = values, key


class _Tensor:
    def __init__(self, storage, offset, size, stride, requires_grad=False):
        self.args = (storage, offset, size, stride, requires_grad, collections.OrderedDict())

    def __reduce__(self):
        return (_fake_torch.modules["torch._utils"]._rebuild_tensor_v2, self.args)


class _Parameter:
    def __init__(self, tensor, requires_grad=True):
        self.tensor, self.requires_grad = tensor, requires_grad

    def __reduce__(self):
        return (_fake_torch.modules["torch._utils"]._rebuild_parameter,
                (self.tensor, self.requires_grad, collections.OrderedDict()))


def _fake_torch():
    """Modules named as PyTorch's, so the pickle names torch._utils._rebuild_tensor_v2 and
    torch.FloatStorage as torch.save's do."""
    torch, utils = types.ModuleType("torch"), types.ModuleType("torch._utils")
    for name in ("FloatStorage", "DoubleStorage", "LongStorage", "HalfStorage", "BFloat16Storage",
                 "BoolStorage", "IntStorage"):
        cls = type(name, (), {"__module__": "torch"})
        setattr(torch, name, cls)
    for name in ("_rebuild_tensor_v2", "_rebuild_parameter"):
        def f(*a):
            raise AssertionError("never called while pickling")
        f.__module__, f.__name__, f.__qualname__ = "torch._utils", name, name
        setattr(utils, name, f)
    torch._utils = utils
    return {"torch": torch, "torch._utils": utils}


_fake_torch.modules = _fake_torch()


def torch_save(obj, f, byteorder="little", storage_types=None):
    """What torch.save writes for `obj` (built of dicts, _Tensor, _Parameter, numbers)."""
    modules = _fake_torch.modules
    storages = {}
    kinds = {np.dtype(np.float32): "FloatStorage", np.dtype(np.float64): "DoubleStorage",
             np.dtype(np.int64): "LongStorage", np.dtype(np.float16): "HalfStorage",
             np.dtype(np.bool_): "BoolStorage", np.dtype(np.int32): "IntStorage"}

    class Pickler(pickle.Pickler):
        def persistent_id(self, o):
            if isinstance(o, _Storage):
                storages[o.key] = o.values
                kind = (storage_types or {}).get(o.key) or kinds[o.values.dtype]
                return ("storage", getattr(modules["torch"], kind), o.key, "cpu", o.values.size)
            return None

    saved = {k: sys.modules.get(k) for k in modules}
    sys.modules.update(modules)
    try:
        data = io.BytesIO()
        Pickler(data, protocol=2).dump(obj)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/data.pkl", data.getvalue())
        z.writestr("archive/byteorder", byteorder)
        for key, values in storages.items():
            z.writestr(f"archive/data/{key}", values.astype(values.dtype.newbyteorder(
                "<" if byteorder == "little" else ">")).tobytes())
        z.writestr("archive/version", "3\n")


def _linear_state():
    w = _Storage(np.arange(6, dtype=np.float32), "0")
    b = _Storage(np.array([0.5, -0.5], np.float32), "1")
    state = collections.OrderedDict([("weight", _Tensor(w, 0, (2, 3), (3, 1))), ("bias", _Tensor(b, 0, (2,), (1,)))])
    return state


def test_a_pytorch_state_dict_loads_into_a_module(tmp_path):
    path = tmp_path / "linear.pt"
    torch_save(_linear_state(), path)
    state = minifw.load(path)
    assert list(state) == ["weight", "bias"] and state["weight"].dtype == minifw.float32
    layer = minifw.nn.Linear(3, 2)
    layer.load_state_dict(state)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(layer(minifw.ones(1, 3)).detach().numpy(), [[3.5, 11.5]])


def test_views_strides_offsets_parameters_and_dtypes(tmp_path):
    shared = _Storage(np.arange(12, dtype=np.float64), "0")
    obj = {"t": _Tensor(shared, 2, (2, 3), (1, 4)),  # a transposed, offset view of one storage
           "same": _Tensor(shared, 0, (12,), (1,)),
           "param": _Parameter(_Tensor(_Storage(np.ones(3, np.float32), "1"), 0, (3,), (1,))),
           "half": _Tensor(_Storage(np.array([1.5, -2.0], np.float16), "2"), 0, (2,), (1,)),
           "ints": _Tensor(_Storage(np.array([7, 8], np.int32), "3"), 0, (2,), (1,)),
           "flags": _Tensor(_Storage(np.array([True, False]), "4"), 0, (2,), (1,)),
           "empty": _Tensor(_Storage(np.zeros(0, np.float32), "5"), 0, (0, 4), (4, 1)),
           "step": 10, "lr": [0.1, 0.01]}
    buffer = io.BytesIO()
    torch_save(obj, buffer, byteorder="big")
    buffer.seek(0)
    got = minifw.load(buffer)
    assert got["t"].tolist() == [[2.0, 6.0, 10.0], [3.0, 7.0, 11.0]] and got["t"].dtype == minifw.float64
    assert got["same"].tolist() == list(range(12))
    assert got["param"].requires_grad and got["param"].tolist() == [1.0, 1.0, 1.0]
    assert got["half"].dtype == minifw.float32 and got["half"].tolist() == [1.5, -2.0]
    assert got["ints"].dtype == minifw.int32 and got["ints"].tolist() == [7, 8]
    assert got["flags"].tolist() == [True, False] and got["empty"].shape == (0, 4)
    assert got["step"] == 10 and got["lr"] == [0.1, 0.01]


def test_bfloat16_storages_become_float32(tmp_path):
    values = np.array([1.0, -3.5, 0.15625], np.float32)
    halves = (values.view(np.uint32) >> 16).astype(np.uint16)  # exact in bfloat16
    path = tmp_path / "b.pt"
    torch_save({"x": _Tensor(_Storage(halves, "0"), 0, (3,), (1,))}, path,
               storage_types={"0": "BFloat16Storage"})
    assert minifw.load(path)["x"].tolist() == values.tolist()


def test_map_location_moves_the_tensors(tmp_path):
    path = tmp_path / "linear.pt"
    torch_save(_linear_state(), path)
    state = minifw.load(path, map_location="cudasim")
    assert all(t.device == "cudasim" for t in state.values())


class _Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo should never run",))


@pytest.mark.parametrize("obj, message", [
    (_Evil(), r"names (posix|os)\.system, which minifw does not run"),
    ({"t": _Tensor(_Storage(np.arange(4, dtype=np.float32), "0"), 2, (3,), (1,))},
     r"reaches past its storage of 4 elements"),
    ({"t": _Tensor(_Storage(np.arange(4, dtype=np.float32), "0"), 0, (2, 2), (-1, 1))}, "a tensor of size"),
    ({"t": _Tensor(_Storage(np.arange(4, dtype=np.float32), "0"), 0, (10 ** 9,), (0,))},  # 4 GB from 16 bytes
     r"has more elements than its storage of 4"),
])
def test_anything_but_tensors_and_containers_is_refused_before_it_runs(obj, message, tmp_path, capfd):
    path = tmp_path / "bad.pt"
    torch_save(obj, path)
    with pytest.raises(TorchFormatError, match=message):
        minifw.load(path)
    assert "should never run" not in capfd.readouterr().out


def test_a_real_pytorch_file_loads(tmp_path):
    torch = pytest.importorskip("torch")
    layer = torch.nn.LSTM(3, 4, num_layers=2)
    path = tmp_path / "lstm.pt"
    torch.save(layer.state_dict(), path)
    mine = minifw.nn.LSTM(3, 4, num_layers=2)
    mine.load_state_dict(minifw.load(path))
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    want = layer(torch.from_numpy(x))[0].detach().numpy()
    np.testing.assert_allclose(mine(minifw.tensor(x))[0].detach().numpy(), want, rtol=1e-5, atol=1e-6)


def _raw_torch_file(path, pickled, storages=(), compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        for key, data in storages:
            z.writestr(zipfile.ZipInfo(f"archive/data/{key}"), data, compress_type=compress)


def test_a_pickle_may_not_set_the_state_of_the_loaders_own_callables(tmp_path):
    from minifw import torch_format

    before = torch_format._rebuild_tensor.__defaults__
    # GLOBAL torch._utils._rebuild_tensor_v2; {"__defaults__": (True, None, None)}; BUILD
    pickled = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}X\x0c\x00\x00\x00__defaults__"
               b"(\x88NNtsb.")
    _raw_torch_file(tmp_path / "bad.pt", pickled)
    with pytest.raises(TorchFormatError, match="sets the state of a function"):
        minifw.load(tmp_path / "bad.pt")
    assert torch_format._rebuild_tensor.__defaults__ == before


def test_compressed_or_oversized_storages_are_refused(tmp_path):
    path = tmp_path / "linear.pt"
    torch_save(_linear_state(), path)
    with zipfile.ZipFile(path) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(tmp_path / "deflated.pt", "w") as z:
        for name, data in entries.items():
            z.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED if "/data/" in name else zipfile.ZIP_STORED)
    with pytest.raises(TorchFormatError, match="storage 0 is compressed or larger"):
        minifw.load(tmp_path / "deflated.pt")
    entries["archive/data/0"] += bytes(4096)  # far more than the 6 floats it announces
    with zipfile.ZipFile(tmp_path / "padded.pt", "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    with pytest.raises(TorchFormatError, match="storage 0 is compressed or larger"):
        minifw.load(tmp_path / "padded.pt")


def test_a_file_in_pytorchs_old_pickle_format_is_refused_with_what_to_do(tmp_path):
    (tmp_path / "old.pt").write_bytes(b"\x80\x02\x8a\x0alZ\xfc\x9cF\xf9 j\xa8P\x19.")
    with pytest.raises(ValueError, match="old pickle format, which minifw does not read"):
        minifw.load(tmp_path / "old.pt")


def test_a_pytorch_adam_checkpoint_loads_into_minifws_adam(tmp_path):
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(layer.parameters(), lr=0.01)
    layer(torch.ones(1, 3)).sum().backward()
    opt.step()
    torch.save({"model": layer.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "ck.pt")
    saved = minifw.load(tmp_path / "ck.pt")
    mine = minifw.nn.Linear(3, 2)
    mine.load_state_dict(saved["model"])
    adam = minifw.optim.Adam(mine.parameters(), lr=0.01)
    adam.load_state_dict(saved["optimizer"])
    assert adam.state[mine.weight]["step"] == 1
    np.testing.assert_allclose(adam.state[mine.weight]["exp_avg"], opt.state[layer.weight]["exp_avg"].numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("map_location", [None, "cpu", lambda storage, loc: storage],
                         ids=["none", "device", "function"])
def test_a_pytorch_parameter_loads_as_a_parameter(map_location, tmp_path):
    path = tmp_path / "params.pt"
    ones = _Storage(np.ones(2, np.float32), "0")
    torch_save({"p": _Parameter(_Tensor(ones, 0, (2,), (1,))),
                "frozen": [_Parameter(_Tensor(ones, 0, (2,), (1,)), requires_grad=False)],
                "t": _Tensor(ones, 0, (2,), (1,))}, path)
    got = minifw.load(path, map_location=map_location)
    assert type(got["p"]) is minifw.nn.Parameter and got["p"].requires_grad
    assert type(got["frozen"][0]) is minifw.nn.Parameter and not got["frozen"][0].requires_grad
    assert type(got["t"]) is minifw.Tensor and not got["t"].requires_grad
    assert got["p"].tolist() == [1.0, 1.0]


def test_a_parameter_of_anything_but_a_tensor_is_refused(tmp_path):
    path = tmp_path / "bad.pt"
    torch_save({"p": _Parameter([1.0, 2.0])}, path)
    with pytest.raises(TorchFormatError, match="a parameter whose data is a list"):
        minifw.load(path)
