"""minifw.devices, the device boundary: device names, availability, allocation, the
kernel registry and the workspace allocator."""
import pickle
import re
import threading

import numpy as np
import pytest

import minifw
from minifw import devices


@pytest.mark.parametrize("spec, type_, index, text", [
    (("cpu",), "cpu", None, "cpu"),
    (("cuda:1",), "cuda", 1, "cuda:1"),
    (("cuda", 0), "cuda", 0, "cuda:0"),
    (("cudasim",), "cudasim", None, "cudasim"),
])
def test_device_objects_follow_torch_device(spec, type_, index, text):
    d = minifw.device(*spec)
    assert (d.type, d.index, str(d)) == (type_, index, text)
    assert d == text and d == minifw.device(text) and hash(d) == hash(minifw.device(text))
    assert repr(d) == f"device(type='{type_}'" + ("" if index is None else f", index={index}") + ")"
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(AttributeError):
        d.type = "cpu"


@pytest.mark.parametrize("args, error, message", [
    (("tpu",), ValueError, "type must be one of 'cpu', 'cudasim', 'cuda'; got 'tpu'"),
    (("cuda:x",), ValueError, "the index in 'cuda:x' must be a non-negative integer"),
    (("cuda:0", 1), ValueError, "give the index in the string or as index, not both"),
    (("cuda", -1), ValueError, "index must be a non-negative int, got -1"),
    ((3,), TypeError, "expected a string such as 'cpu' or a minifw.device, got int 3"),
])
def test_bad_device_names(args, error, message):
    with pytest.raises(error, match=message):
        minifw.device(*args)


@pytest.mark.parametrize("name, reason", [
    ("cuda", None),  # None: what unavailable_reason("cuda") says here (build, CuPy or GPU)
    ("cuda:0", None),
    ("cudasim:1", "the emulator is one device"),
])
def test_unavailable_devices_say_why(name, reason):
    reason = reason or devices.unavailable_reason("cuda")
    if reason is None:
        pytest.skip("'cuda' is available here")
    reason = re.escape(reason)
    for call in (lambda: minifw.zeros(2, device=name), lambda: minifw.ones(2).to(name),
                 lambda: minifw.nn.Linear(2, 2).to(name), lambda: minifw.nn.Linear(2, 2, device=name)):
        with pytest.raises(RuntimeError, match=f"device '{name}' is not available: .*{reason}"):
            call()


class _FakeCuPy:
    """Just enough of CuPy's runtime API for the availability checks."""

    def __init__(self, count):
        runtime = type("runtime", (), {"CUDARuntimeError": RuntimeError,
                                       "getDeviceCount": staticmethod(lambda: count)})
        self.cuda = type("cuda", (), {"runtime": runtime})


@pytest.mark.parametrize("cupy, reason", [
    (None, "CuPy is not installed"),
    (_FakeCuPy(0), "no GPU was found"),
])
def test_cuda_reasons_in_order_build_cupy_gpu(monkeypatch, cupy, reason):
    import sys

    monkeypatch.setattr(minifw._native, "has_cuda", True)
    monkeypatch.setitem(sys.modules, "cupy", cupy)  # None makes `import cupy` fail
    assert reason in devices.unavailable_reason("cuda")
    with pytest.raises(RuntimeError, match=f"device 'cuda' is not available: .*{re.escape(reason)}"):
        minifw.zeros(1, device="cuda")


def test_cuda_is_available_with_the_kernels_cupy_and_a_gpu(monkeypatch):
    import sys

    monkeypatch.setattr(minifw._native, "has_cuda", True)
    monkeypatch.setitem(sys.modules, "cupy", _FakeCuPy(1))
    assert devices.unavailable_reason("cuda") is None


def test_tensors_and_modules_carry_their_device():
    t = minifw.ones(2, device="cpu")
    assert t.device == "cpu" and t.device == minifw.device("cpu") and isinstance(t.device, minifw.device)
    assert t.to("cpu") is t and t.cpu() is t and t.to(minifw.device("cpu"), minifw.float64).dtype == minifw.float64
    net = minifw.nn.Linear(2, 3)
    assert net.to("cpu") is net and net.cpu() is net
    assert all(p.device == "cpu" for p in net.parameters())


def test_allocation_is_on_the_device():
    a = devices.empty((2, 3), np.float32, devices.CPU)
    z = devices.zeros((4,), np.float64, devices.CPU)
    assert a.shape == (2, 3) and a.dtype == np.float32 and devices.of(a) == "cpu"
    assert z.dtype == np.float64 and not z.any()
    assert devices.array_module(devices.CPU) is np
    with pytest.raises(TypeError, match="expected an array of a minifw device"):
        devices.of([1, 2])


def test_every_kernel_is_found_by_family_direction_dtype_and_device():
    keys = devices.kernels()
    assert ("conv", "forward", "float32", "cpu") in keys and ("gemm", "", "float64", "cpu") in keys
    assert ("softmax", "forward", "float32", "cudasim") in keys
    for family, direction, dtype, dev in keys:
        k = devices.kernel(family, direction, np.dtype(dtype), minifw.device(dev))
        suffix = "f32" if dtype == "float32" else "f64"
        name = (family, direction, None if dev == "cpu" else dev, suffix)  # registry.h's bound names
        assert k is getattr(minifw._native, "_".join(filter(None, name)))
    with pytest.raises(KeyError, match="no native kernel 'conv' 'sideways'; known: .*conv/forward"):
        devices.kernel("conv", "sideways", np.dtype(np.float32))
    with pytest.raises(TypeError, match="'pool' 'forward' has no int64 variant on device 'cpu'"):
        devices.kernel("pool", "forward", np.dtype(np.int64))


@pytest.fixture
def workspace():
    ws = devices.workspace("cpu")
    saved = ws.limit
    ws.clear()
    yield ws
    ws.limit = saved
    ws.clear()


def test_workspace_grows_keeps_and_clears(workspace):
    assert workspace is devices.workspace(minifw.device("cpu"))
    assert workspace.stats() == {"current_bytes": 0, "peak_bytes": 0, "limit_bytes": None,
                                "max_cached_bytes": 1 << 30}
    a = workspace.get(1000)
    assert a.nbytes >= 1000 and workspace.current_bytes == a.nbytes
    assert workspace.get(10) is a  # smaller requests reuse the buffer
    b = workspace.get(5000)
    assert b.nbytes >= 5000 and workspace.current_bytes == b.nbytes == workspace.peak_bytes
    other = []
    t = threading.Thread(target=lambda: other.append(workspace.get(300)))
    t.start()
    t.join()
    assert other[0] is not b and workspace.current_bytes == b.nbytes + other[0].nbytes  # per thread
    workspace.clear()
    assert workspace.current_bytes == 0 and workspace.peak_bytes == 0


def test_workspace_limit(workspace):
    workspace.limit = 4096
    workspace.get(4096)
    with pytest.raises(MemoryError, match="4,097 bytes requested on cpu, over the limit of 4,096"):
        workspace.get(4097)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="expected None or an int >= 0"):
            workspace.limit = bad


def test_convolution_takes_its_workspace_from_the_device(workspace, rng):
    x = rng.standard_normal((2, 3, 12, 12)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    problem = minifw.ops.ConvProblem(x.shape, w.shape)
    lowered = minifw.ops.conv_workspace_size(problem, "forward", "im2col_gemm")
    want = minifw.ops.conv2d_forward(x, w, algo="implicit_gemm")
    y = minifw.ops.conv2d_forward(x, w, algo="im2col_gemm")
    assert 0 < workspace.peak_bytes <= lowered and workspace.current_bytes == workspace.peak_bytes
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    workspace.clear()
    workspace.limit = 0  # no scratch memory at all
    with pytest.raises(MemoryError, match="over the limit of 0 bytes"):
        minifw.ops.conv2d_forward(x, w, algo="im2col_gemm")
    for direction in ("forward", "backward_data", "backward_filter"):  # auto keeps within it
        assert minifw.ops.find_conv_algorithms(problem, direction)[0].algo == "implicit_gemm"
    np.testing.assert_allclose(minifw.ops.conv2d_forward(x, w), want, rtol=1e-5, atol=1e-5)
    assert workspace.peak_bytes == 0


def test_peak_memory_on_the_emulated_gpu_counts_what_arrays_hold(emulated_cuda):
    dev = devices.get("cuda")
    before = minifw.zeros(1000, device=dev)  # allocated before: not counted, freed or not
    with devices.peak_memory(dev) as meter:
        a = minifw.zeros(256, 1024, device=dev)      # 1 MiB
        b = minifw.zeros(512, 1024, device=dev)      # 2 MiB
        del a, before
        c = minifw.zeros(128, 1024, device=dev)      # 0.5 MiB, after a went
    assert meter.bytes == 3 * 2 ** 20 and b.numel() + c.numel() == 640 * 1024


def test_peak_memory_on_the_cpu_nests_in_someone_elses_tracing():
    import tracemalloc

    tracemalloc.start()
    try:
        held = np.ones(10 ** 6)  # 8 MB before the meter: not counted
        with devices.peak_memory(devices.CPU) as meter:
            a = np.ones(2 * 10 ** 6)  # 16 MB
            del a
        assert 16e6 <= meter.bytes < 17e6 and tracemalloc.is_tracing() and held.size
    finally:
        tracemalloc.stop()


def test_a_gpu_array_is_on_cuda_whether_or_not_the_device_names_its_index(emulated_cuda):
    a = devices.to_device(np.arange(3.0), devices.get("cuda"))
    assert devices.to_device(a, devices.device("cuda")) is a and devices.to_device(a, devices.device("cuda:0")) is a


AT_INDICES = {  # an index as NumPy's ufunc.at takes it, over a (5, 4) array
    "rows": lambda: np.array([0, 3, 0, 4, 0]),
    "pairs": lambda: (np.array([1, 1, 2, 1]), np.array([0, 0, 3, 0])),
    "slice_then_columns": lambda: (slice(None), np.array([2, 2, 0])),
}


@pytest.mark.parametrize("ufunc", [np.add, np.maximum, np.minimum, np.multiply], ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("index", list(AT_INDICES))
def test_ufunc_at_on_every_device_equals_numpys(dev, ufunc, dtype, index):
    # On "cuda": CuPy's scatter kernels where it has one (add, maximum, minimum; no int64
    # add), a round trip through host memory for the rest; repeated picks accumulate
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((5, 4)) * 4).astype(dtype)
    where = AT_INDICES[index]()
    values = (rng.standard_normal(a[where].shape) * 4).astype(dtype)
    expected = a.copy()
    ufunc.at(expected, where, values)
    got = devices.to_device(a, dev)
    on_dev = lambda i: devices.to_device(i, dev) if isinstance(i, np.ndarray) else i  # noqa: E731
    devices.ufunc_at(ufunc, got, tuple(map(on_dev, where)) if isinstance(where, tuple) else on_dev(where),
                     devices.to_device(values, dev))
    assert devices.of(got) == dev
    np.testing.assert_allclose(devices.to_device(got, devices.CPU), expected, rtol=1e-6)
