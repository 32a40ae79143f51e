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
