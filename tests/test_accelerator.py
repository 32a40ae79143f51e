"""minifw.accelerator and minifw.cuda, as torch.accelerator and torch.cuda: with and without a
GPU ("cuda" here is the emulated one where there is no GPU)."""
import pytest

import minifw
import minifw.accelerator as accelerator
import minifw.cuda as cuda
from minifw import devices
from targets import cuda_available


def test_without_a_gpu_scripts_fall_back_to_the_cpu(monkeypatch):
    monkeypatch.setattr(devices, "unavailable_reason", lambda t: None if t != "cuda" else "no GPU was found")
    assert not accelerator.is_available() and not cuda.is_available()
    assert accelerator.device_count() == 0 == cuda.device_count()
    assert accelerator.current_device_index() == -1
    assert accelerator.current_accelerator(check_available=True) is None
    device = accelerator.current_accelerator() if accelerator.is_available() else "cpu"
    assert minifw.ones(2, device=device).device == "cpu"
    with pytest.raises(RuntimeError, match="device 'cuda' is not available: no GPU was found"):
        cuda.current_device()
    accelerator.synchronize()  # nothing to wait for
    cuda.empty_cache()


def test_the_accelerator_is_cuda_never_the_emulator(emulated_cuda):
    assert accelerator.is_available() and cuda.is_available()
    assert accelerator.current_accelerator() == minifw.device("cuda", 0) and accelerator.device_count() == 1
    assert accelerator.current_device_index() == 0 == cuda.current_device()
    x = minifw.ones(3, device=accelerator.current_accelerator())
    assert x.device == "cuda:0"
    accelerator.synchronize()
    cuda.synchronize()


def test_cuda_reports_the_gpu_and_its_memory(emulated_cuda):
    assert cuda.get_device_name() == devices.gpu_info()["name"] and cuda.get_device_capability() == (9, 0)
    before = cuda.memory_allocated()
    x = minifw.zeros(1024, 256, device="cuda")  # 1 MiB
    assert cuda.memory_allocated() - before == 2 ** 20 and cuda.memory_reserved() >= cuda.memory_allocated()
    del x
    cuda.empty_cache()
    assert cuda.memory_allocated() == before
    with pytest.raises(ValueError, match="get_device_name: expected a cuda device, got 'cpu'"):
        cuda.get_device_name("cpu")
    cuda.manual_seed(0)
    cuda.manual_seed_all(1)


@pytest.mark.skipif(cuda_available(), reason="a GPU is present")
def test_without_cupy_or_kernels_cuda_is_not_available():
    assert cuda.is_available() is False
    assert accelerator.current_accelerator(check_available=True) is None


def test_inference_mode_records_no_graph_as_a_context_and_a_decorator():
    x = minifw.ones(2, requires_grad=True)
    with minifw.inference_mode():
        assert not minifw.is_grad_enabled() and not (x * 2).requires_grad
    with minifw.inference_mode(False):
        assert (x * 2).requires_grad

    @minifw.inference_mode()
    def predict(t):
        return t * 3

    assert not predict(x).requires_grad and minifw.is_grad_enabled()


def test_the_pytorch_namespaces_are_attributes_after_import_minifw(tmp_path):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    code = ("import minifw; print(minifw.utils.data.DataLoader.__name__, minifw.vision.transforms.Compose.__name__, "
            "minifw.accelerator.is_available() in (True, False), minifw.cuda.is_available() in (True, False))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=root), cwd=tmp_path)
    assert out.stdout.split() == ["DataLoader", "Compose", "True", "True"]


def test_cuda_memory_peaks_and_stats_count_what_arrays_hold(emulated_cuda):
    x = minifw.zeros(1024, 256, device="cuda")  # 1 MiB; places the counter on this thread
    del x
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    assert cuda.max_memory_allocated() == base
    before = cuda.memory_stats()
    x = minifw.ones(1024, 256, device="cuda")
    y = x * 2  # a second MiB, held with the first
    del x, y
    assert cuda.memory_allocated() == base
    assert cuda.max_memory_allocated() == base + 2 * 2 ** 20
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == base + 2 * 2 ** 20 == stats["active_bytes.all.peak"]
    assert stats["allocated_bytes.all.current"] == base
    assert stats["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"] >= 2 * 2 ** 20
    assert (stats["allocated_bytes.all.allocated"] - stats["allocated_bytes.all.freed"]
            == before["allocated_bytes.all.allocated"] - before["allocated_bytes.all.freed"])
    assert stats["allocation.all.allocated"] - before["allocation.all.allocated"] >= 2
    assert stats["reserved_bytes.all.current"] == cuda.memory_reserved() >= stats["allocated_bytes.all.current"]
    assert cuda.max_memory_reserved() >= base + 2 * 2 ** 20
    assert "Allocated memory" in cuda.memory_summary() and "Reserved memory" in cuda.memory_summary()
    cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == base
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_reserved() == cuda.memory_reserved()
    with pytest.raises(ValueError, match="max_memory_allocated: expected a cuda device, got 'cpu'"):
        cuda.max_memory_allocated("cpu")


def test_cuda_device_properties_memory_info_and_device_choice(emulated_cuda):
    from minifw.devices import _cupy
    props = cuda.get_device_properties(0)
    raw = _cupy().cuda.runtime.getDeviceProperties(0)
    assert (props.name, props.major, props.minor) == (raw["name"].decode(), 9, 0)
    assert props.total_memory == raw["totalGlobalMem"] and props.multi_processor_count == raw["multiProcessorCount"]
    assert "total_memory=" in repr(props)
    free, total = cuda.mem_get_info()
    assert total == props.total_memory and 0 < free <= total
    cuda.set_device(0)
    cuda.set_device("cuda:0")
    cuda.set_device(-1)
    with cuda.device(0):
        assert minifw.ones(1, device="cuda").device == "cuda:0"
    with pytest.raises(RuntimeError, match=r"set_device: device 'cuda:1' is not available.*cupy.cuda.Device\(1\)"):
        cuda.set_device(1)
    with pytest.raises(RuntimeError, match="'cuda:1' is not available"):
        with cuda.device(1):
            pass
    with pytest.raises(ValueError, match="set_device: expected a cuda device, got 'cpu'"):
        cuda.set_device("cpu")
    cuda.init()
    assert cuda.is_initialized() and cuda.is_bf16_supported() is False


def test_cuda_events_time_and_streams_carry_the_kernels(emulated_cuda):
    from minifw.devices import _cupy
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    x = minifw.ones(64, 64, device="cuda")
    y = (x @ x).sum()
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float) and elapsed >= 0
    with pytest.raises(ValueError, match="enable_timing=True"):
        cuda.Event().elapsed_time(end)
    with pytest.raises(TypeError, match="expected end_event to be a minifw.cuda.Event, got float"):
        start.elapsed_time(1.0)

    s = cuda.Stream()
    assert cuda.current_stream() == cuda.default_stream() != s
    with cuda.stream(s) as entered:
        assert entered is s and cuda.current_stream() == s
        assert _cupy().cuda.get_current_stream().ptr == s.cuda_stream  # where the kernels go
        z = minifw.ones(8, device="cuda") * 3
    s.synchronize()
    assert s.query() and z.sum().item() == 24.0 and y.item() == 64.0 ** 3
    assert cuda.current_stream() == cuda.default_stream()
    s.wait_stream(cuda.current_stream())
    s.record_event().wait()
    with cuda.stream(None) as entered:
        assert entered is None and cuda.current_stream() == cuda.default_stream()
    cuda.set_stream(s)
    assert cuda.current_stream() == s
    cuda.set_stream(cuda.default_stream())
    with pytest.raises(TypeError, match="stream: expected a minifw.cuda.Stream or None, got str"):
        cuda.stream("s")


def test_cuda_out_of_memory_is_caught_by_its_torch_name(emulated_cuda):
    from minifw.devices import _cupy
    pool = _cupy().get_default_memory_pool()
    pool.set_limit(size=2 ** 20)
    try:
        with pytest.raises(cuda.OutOfMemoryError, match="zeros: a tensor of size"):
            minifw.zeros(2 ** 20, device="cuda")  # 4 MiB
        x = minifw.ones(2 ** 17, device="cuda")  # 512 KiB
        with pytest.raises(cuda.OutOfMemoryError):
            x.repeat(4)
    finally:
        pool.set_limit(size=0)


def test_cuda_memory_and_stream_calls_without_a_gpu_say_why(monkeypatch):
    monkeypatch.setattr(devices, "unavailable_reason", lambda t: None if t != "cuda" else "no GPU was found")
    for call in (cuda.max_memory_allocated, cuda.memory_stats, cuda.reset_peak_memory_stats, cuda.init,
                 cuda.mem_get_info, cuda.Event, cuda.Stream, cuda.current_stream):
        with pytest.raises(RuntimeError, match="not available: no GPU was found"):
            call()
    assert cuda.is_bf16_supported() is False
