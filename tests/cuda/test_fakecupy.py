"""The CuPy stand-in (tests/fakecupy.py) refuses what CuPy refuses and does what CuPy does.

Each test pins one behaviour of CuPy 14 that minifw's "cuda" code must live with; see the
docstring of fakecupy for where each was taken from in CuPy's sources."""

import ctypes
import gc
import importlib
import operator
import sys

import numpy as np
import pytest

import fakecupy as cp

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")


@pytest.fixture
def a():
    return cp.arange(6, dtype=cp.float32).reshape(2, 3)


def test_install_makes_import_cupy_the_stand_in_and_monkeypatch_undoes_it():
    before = {name: sys.modules.get(name) for name in ("cupy", "cupy.cuda", "cupy.cuda.runtime")}
    with pytest.MonkeyPatch.context() as mp:
        assert cp.install(mp) is cp
        import cupy
        from cupy import cuda
        assert cupy is cp and cuda is cp.cuda
        assert cupy.cuda.runtime.getDeviceCount() == 1
        # the native layer imports "cupy.cuda" for the current stream
        assert importlib.import_module("cupy.cuda") is cp.cuda
        assert importlib.import_module("cupy.cuda.runtime") is cp.cuda.runtime
        assert cupy.cuda.get_current_stream().ptr == 0
    assert {name: sys.modules.get(name) for name in before} == before


def test_implicit_conversion_to_numpy_is_refused(a):
    host = np.zeros((2, 3), np.float32)
    for convert in (np.asarray, np.array, lambda x: np.array([x, x]),
                    lambda x: host.__setitem__(slice(None), x)):
        with pytest.raises(TypeError) as e:
            convert(a)
        assert str(e.value) == IMPLICIT
    assert not hasattr(a, "__array_interface__") and not hasattr(a, "ctypes")
    with pytest.raises(TypeError):
        memoryview(a)


def test_mixing_numpy_arrays_is_refused_but_scalars_are_not(a):
    host = np.ones(3, np.float32)
    for mix in (lambda: a + host, lambda: host + a, lambda: a * np.array(2.0),
                lambda: np.add(a, host), lambda: cp.maximum(a, host), lambda: a.dot(host.T),
                lambda: np.concatenate([a, host[None]]), lambda: a == host,
                lambda: cp.exp(a, out=np.empty((2, 3), np.float32))):
        with pytest.raises(TypeError, match="Unsupported type|incorrect type"):
            mix()
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        a += host
    with pytest.raises(TypeError):
        a + [1, 2, 3]  # lists are no operands either
    for ok in (a + 2, 2 - a, a * np.float32(2), np.float64(1) + a, a == np.array(1.0), a @ a.T,
               a > 2.5, -a, abs(a), a ** 2):
        assert isinstance(ok, cp.ndarray)
    assert (a == np.array(1.0)).get().tolist() == [[False, True, False], [False, False, False]]
    assert (a * np.float32(2)).dtype == np.float32 and (a + 1.5).dtype == np.float32


def test_numpy_functions_dispatch_to_device_arrays(a):
    h = a.get()
    results = {
        "exp": (np.exp(a), np.exp(h)),
        "where": (np.where(a > 2, a, 0), np.where(h > 2, h, 0)),
        "concatenate": (np.concatenate([a, a]), np.concatenate([h, h])),
        "empty_like": (np.empty_like(a).shape, (2, 3)),
        "sum": (np.sum(a, axis=1), np.sum(h, axis=1)),
        "reduce": (np.add.reduce(a, axis=0), np.add.reduce(h, axis=0)),
        "norm": (np.linalg.norm(a), np.linalg.norm(h)),
        "einsum": (cp.einsum("ij,kj->ik", a, a), np.einsum("ij,kj->ik", h, h)),
        "matmul": (cp.matmul(a, a.T), h @ h.T),
    }
    for name, (got, want) in results.items():
        if name != "empty_like":
            assert isinstance(got, cp.ndarray), name
            got = got.get()
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
    assert isinstance(np.zeros_like(a), cp.ndarray) and np.zeros_like(a).get().sum() == 0
    with pytest.raises(TypeError, match="no implementation found for 'numpy.savetxt'"):
        np.savetxt(sys.stdout, a)  # CuPy has no savetxt
    with pytest.raises(AttributeError):
        cp.savetxt


def test_reductions_and_integer_indexing_give_0d_device_arrays(a):
    for r in (a.sum(), a.max(), a[1, 2], np.mean(a), a.argmax(), next(iter(a[0]))):
        assert isinstance(r, cp.ndarray) and r.shape == ()
    assert float(a.sum()) == 15.0 and int(a[1, 2]) == 5
    assert a.argmax(dtype=np.int32).dtype == np.int32
    with pytest.raises(TypeError):
        operator.index(a[0, 0])  # CuPy's ndarray has no __index__
    with pytest.raises(ValueError, match="more than one element"):
        bool(a)
    assert bool(a[0, 1]) and not bool(a[0, 0]) and len(a) == 2 and a[1, 1].item() == 4.0
    assert repr(cp.arange(3)) == "array([0, 1, 2])"


def test_flags_are_cupys_three_and_there_is_no_writeable(a):
    f = a.T.flags
    assert (f.c_contiguous, f.f_contiguous, f.owndata) == (False, True, False)
    assert f["F_CONTIGUOUS"] and f.fnc and f.forc
    with pytest.raises(AttributeError):
        a.flags.writeable
    with pytest.raises(KeyError):
        a.flags["WRITEABLE"]
    with pytest.raises(AttributeError):
        a.flags.c_contiguous = False
    b = cp.zeros(3)
    assert b.flags.owndata and b.base is None
    assert b[1:].base is b and not b[1:].flags.owndata and b[1:][1:].base is b


def test_cuda_array_interface_is_cupys(a):
    cai = a.__cuda_array_interface__
    assert set(cai) == {"shape", "typestr", "descr", "stream", "version", "strides", "data"}
    assert cai["version"] == 3 and cai["shape"] == (2, 3) and cai["typestr"] == "<f4"
    assert cai["descr"] == [("", "<f4")] and cai["strides"] is None
    assert cai["data"] == (a.data.ptr, False) and cai["data"][0] != 0
    assert cai["stream"] == 1  # the null stream is exported as cudaStreamLegacy
    t = a.T.__cuda_array_interface__
    assert t["strides"] == (4, 12) and t["data"][0] == cai["data"][0]
    assert a[:, 1:].__cuda_array_interface__["data"][0] == cai["data"][0] + 4
    assert cp.empty((0, 3)).__cuda_array_interface__["data"] == (0, False)
    s = cp.cuda.Stream()
    with s:
        assert cp.cuda.get_current_stream() is s
        assert a.__cuda_array_interface__["stream"] == s.ptr not in (0, 1, 2)
    assert cp.cuda.get_current_stream() is cp.cuda.Stream.null
    assert a.__cuda_array_interface__["stream"] == 1


def test_cai_pointer_addresses_the_arrays_memory():
    x = cp.zeros(4, dtype=cp.float32)
    ptr = x.__cuda_array_interface__["data"][0]
    ctypes.c_float.from_address(ptr + 4).value = 2.5  # write through the pointer ...
    assert x.get().tolist() == [0.0, 2.5, 0.0, 0.0]    # ... read through the array
    x[3] = 7.0                                          # and the other way round
    assert ctypes.c_float.from_address(ptr + 12).value == 7.0
    view = x[2:]
    view[0] = 1.5
    assert ctypes.c_float.from_address(view.__cuda_array_interface__["data"][0]).value == 1.5
    y = cp.ndarray((2,), cp.float32, memptr=x.data + 8)  # CuPy's constructor over a pointer
    assert y.get().tolist() == [1.5, 7.0]
    y[1] = -1
    assert x.get()[3] == -1


def test_get_asnumpy_and_asarray_copy():
    host = np.arange(4, dtype=np.float64)
    x = cp.asarray(host)
    host[0] = 100  # the device copy is not the host array
    assert x.get().tolist() == [0, 1, 2, 3]
    h = x.get()
    h[1] = 100
    assert cp.asnumpy(x).tolist() == [0, 1, 2, 3] and isinstance(cp.asnumpy(x), np.ndarray)
    out = np.empty(4)
    assert x.get(out=out) is out and out.tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        x.get(out=np.empty(4, np.float32))
    x.set(np.full(4, 2.0))
    assert x.get().tolist() == [2, 2, 2, 2]
    with pytest.raises(ValueError):
        x.set(np.zeros(5))
    assert cp.asarray(x) is x and cp.array(x, copy=False) is x and cp.array(x) is not x
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        cp.array(x, dtype=cp.float32, copy=False)
    assert cp.array([x, x]).shape == (2, 4)
    with pytest.raises(TypeError):
        cp.ascontiguousarray(host)  # CuPy's takes device arrays only


def test_memory_pool_counts_live_buffers_in_512_byte_units():
    pool = cp.get_default_memory_pool()
    gc.collect()
    gc.disable()
    try:
        pool.free_all_blocks()
        used, free = pool.used_bytes(), pool.free_bytes()
        x = cp.empty(1000, cp.float32)  # 4000 bytes -> 4096
        view = x[10:]
        assert pool.used_bytes() == used + 4096 and pool.total_bytes() == used + free + 4096
        del x, view
        assert pool.used_bytes() == used and pool.free_bytes() == free + 4096
        assert pool.n_free_blocks() >= 1
        y = cp.empty(1024, cp.float32)  # same rounded size: the free block is reused
        assert pool.free_bytes() == free and pool.used_bytes() == used + 4096
        del y
        pool.free_all_blocks()
        assert pool.free_bytes() == 0 and pool.used_bytes() == used
        assert cp.empty(0).data.ptr == 0 and pool.used_bytes() == used
        pool.set_limit(size=used + 1024)
        try:
            with pytest.raises(cp.cuda.memory.OutOfMemoryError):
                cp.empty(2048, cp.uint8)
        finally:
            pool.set_limit(size=0)
    finally:
        gc.enable()


def test_events_time_in_milliseconds():
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    (cp.ones(1000) * 2).sum()
    end.record(cp.cuda.get_current_stream())
    end.synchronize()
    assert 0 <= cp.cuda.get_elapsed_time(start, end) < 10_000
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="invalid resource handle"):
        cp.cuda.get_elapsed_time(start, cp.cuda.Event())  # never recorded
    untimed = cp.cuda.Event(disable_timing=True)
    untimed.record()
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        cp.cuda.get_elapsed_time(start, untimed)


def test_unsupported_dtypes_are_refused(a):
    for make in (lambda: cp.empty(3, dtype=object), lambda: cp.zeros(2, dtype=np.str_),
                 lambda: cp.array(["a"]), lambda: cp.array([b"x"]),
                 lambda: cp.asarray(np.array(["2020-01-01"], dtype="datetime64[D]")),
                 lambda: a.astype(object), lambda: cp.array(np.ones(2, ">f4")).view(">f4")):
        with pytest.raises(ValueError, match="Unsupported dtype"):
            make()
    assert cp.array(np.ones(2, ">f4")).dtype.str == "<f4"  # big-endian data is swapped
    for dt in (cp.bool_, cp.int8, cp.uint64, cp.float16, cp.complex128):
        assert cp.zeros(2, dt).dtype == dt


def test_indexing_forms_match_numpy_and_cupys_rules():
    x = cp.arange(24).reshape(2, 3, 4)
    h = x.get()
    for key in (1, (1, 2), slice(None, None, -1), (Ellipsis, 1), (None, 0), (0, None, 1),
                np.array([1, 0]), [0, 1, 1], np.array([True, False]), (slice(None), [2, 0]),
                (Ellipsis, np.array([[0, 3]])), h[..., 0] > 5, (1, slice(1, 3), [0, 2])):
        got = x[key]
        assert isinstance(got, cp.ndarray)
        np.testing.assert_array_equal(got.get(), h[key], err_msg=str(key))
    np.testing.assert_array_equal(x[cp.array([1, 0])].get(), h[[1, 0]])
    np.testing.assert_array_equal(x[x > 20].get(), h[h > 20])
    # integer-array indices wrap around (CuPy), scalar ones are checked (as NumPy)
    np.testing.assert_array_equal(x[0, 0, cp.array([5, -5])].get(), [1, 3])
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[cp.array([0.5])]
    # assignment: views write through; host data only where CuPy copies it in
    x[1, :, 0] = 0
    x[0][0] = cp.arange(4) * 10
    x[[0], [2]] = np.array([7, 7, 7, 7])
    assert x[1, :, 0].get().tolist() == [0, 0, 0] and x[0, 0].get().tolist() == [0, 10, 20, 30]
    assert x[0, 2].get().tolist() == [7, 7, 7, 7]
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        x[0, 0] = np.zeros(4, np.int64)
    with pytest.raises(TypeError, match="Unsupported type <class 'list'>"):
        x[0, 0] = [1, 2, 3, 4]
    x[0, 0] = np.array(9)  # a 0-d host array is a scalar
    assert x[0, 0].get().tolist() == [9, 9, 9, 9]


def test_methods_and_module_functions(a):
    h = a.get()
    np.testing.assert_array_equal(a.T.get(), h.T)
    np.testing.assert_array_equal(a.transpose(1, 0).swapaxes(0, 1).get(), h)
    np.testing.assert_allclose(a.std(axis=0).get(), h.std(axis=0))
    np.testing.assert_array_equal(a.cumsum().get(), h.cumsum())
    np.testing.assert_array_equal(a.clip(1, 3).get(), h.clip(1, 3))
    np.testing.assert_array_equal(a.ravel().get(), h.ravel())
    np.testing.assert_array_equal(a.take(cp.array([7]), axis=None).get(), [1])  # wraps
    np.testing.assert_array_equal(cp.stack([a, a], axis=1).get(), np.stack([h, h], axis=1))
    d = cp.eye(3)
    d.diagonal()[...] = 5  # CuPy's diagonal is a writable view
    assert d.get().trace() == 15
    s = cp.array([3, 1, 2])
    s.sort()
    assert s.get().tolist() == [1, 2, 3] and s.argsort().get().tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        s.sort(kind="quicksort")
    assert [v.get().tolist() for v in cp.array([[0, 1], [2, 0]]).nonzero()] == [[0, 1], [1, 0]]
    assert cp.get_array_module(a) is cp and cp.get_array_module(h) is np
    assert cp.full((2,), 3).get().tolist() == [3, 3] and cp.linspace(0, 1, 3).get()[1] == 0.5
    rs = cp.random.RandomState(1)
    assert rs.randn(2, 3, dtype=cp.float32).dtype == np.float32
    with pytest.raises(TypeError):
        rs.randn(2, dtype=cp.int32)


def test_devices_and_runtime():
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(0)
    assert props["name"] == b"Emulated GPU (fakecupy)"
    assert {"major", "minor", "totalGlobalMem", "multiProcessorCount",
            "sharedMemPerBlock"} <= set(props)
    assert rt.getDevice() == 0 and rt.runtimeGetVersion() > 0 and rt.driverGetVersion() > 0
    with cp.cuda.Device(0) as dev:
        assert dev.id == 0 and dev.compute_capability == "90"
        dev.synchronize()
    assert cp.arange(2).device == cp.cuda.Device(0) and cp.arange(2).data.device_id == 0
    with pytest.raises(rt.CUDARuntimeError, match="cudaErrorInvalidDevice: invalid device"):
        with cp.cuda.Device(1):
            pass
    with pytest.raises(rt.CUDARuntimeError):
        rt.getDeviceProperties(1)
    assert rt.getDevice() == 0
