"""minifw.accelerator, as torch.accelerator (PyTorch 2.6+): the GPU a script may use, if any.

    device = minifw.accelerator.current_accelerator() if minifw.accelerator.is_available() else "cpu"

minifw's accelerator is device "cuda" (an NVIDIA GPU through CuPy). Device "cudasim" runs the
same kernels on the CPU emulator, far slower than the CPU's own kernels: it is for testing and
stepping through kernels, never an accelerator.
"""
from . import devices


def is_available():
    """Whether device "cuda" can be used here (the CUDA kernels, CuPy and a GPU)."""
    return devices.unavailable_reason("cuda") is None


def current_accelerator(check_available=False):
    """minifw.device('cuda') where it can be used; else None (with check_available=False,
    PyTorch still returns the build's accelerator: 'cuda' when the kernels were compiled in)."""
    if is_available():
        return devices.device("cuda", devices.current_cuda_index())
    if check_available or not devices._native.has_cuda:
        return None
    return devices.device("cuda")


def device_count():
    """1 where "cuda" can be used (minifw runs on CuPy's current GPU), else 0."""
    return 1 if is_available() else 0


def current_device_index():
    """The index of the GPU "cuda" is, or -1 without one."""
    return devices.current_cuda_index() if is_available() else -1


def synchronize(device=None):
    """Waits for the work queued on the GPU (a no-op without one)."""
    if is_available():
        devices.synchronize(devices.get("cuda" if device is None else device, "synchronize"))
