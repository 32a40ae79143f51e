"""Placing test inputs on the device under test (see the `target` fixture), and the
emulated GPU: device "cuda" on a machine without one.

emulate_cuda(monkeypatch) makes "cuda" usable for one test: `import cupy` gives
tests/fakecupy.py (CuPy's behaviour, its arrays in host memory) and the "cuda"
kernels are the emulator's ("cudasim") entry points, handed each CuPy array's
memory. So the "cuda" code of minifw's Python layer (CuPy as the array module,
transfers, allocation, the glue arithmetic) runs in the tests here; on a machine
with a GPU the "cuda" target is the real one.
"""
import numpy as np

import minifw
from minifw import devices

import fakecupy


def cuda_available():
    return devices.unavailable_reason("cuda") is None


def _on_emulated_gpu(entry):
    """A "cudasim" entry point taking CuPy stand-in arrays: each is handed over as a
    "cudasim" view of its memory (the emulator's kernels read host memory)."""
    def view(a):
        return a._a.view(devices.CudaSimArray) if isinstance(a, fakecupy.ndarray) else a

    def call(*args, **kwargs):
        return entry(*map(view, args), **{k: view(v) for k, v in kwargs.items()})
    return call


def emulate_cuda(monkeypatch):
    """Device "cuda" on the CuPy stand-in and the emulator's kernels, for one test."""
    fakecupy.install(monkeypatch)
    monkeypatch.setattr(minifw._native, "has_cuda", True)
    for name, emulated in (("cuda_version", "none (emulated)"), ("cuda_architectures", "cudasim")):
        monkeypatch.setattr(minifw._native, name, getattr(minifw._native, name, emulated), raising=False)
    emulated = {(family, direction, dtype, "cuda"): _on_emulated_gpu(entry)
                for (family, direction, dtype, dev), entry in devices._kernels.items() if dev == "cudasim"}
    monkeypatch.setattr(devices, "_kernels", {**devices._kernels, **emulated})
    devices.workspace("cuda").clear()  # nothing of another test's (or the real) CuPy


def place(device, *arrays):
    """Copies of `arrays` on `device` (None stays None); one array for one argument."""
    out = tuple(None if a is None else devices.to_device(np.array(a), devices.get(device))
                for a in arrays)
    return out[0] if len(out) == 1 else out


def host(a):
    """`a` as a NumPy array on the host (a device's array copied back), for assertions."""
    return devices.to_device(a, devices.CPU) if devices.is_array(a) and devices.of(a).type == "cuda" else a


def assert_on(device, *arrays):
    """Every array is on `device`: results stay where their inputs were."""
    want = devices.get(device)
    for a in arrays:
        assert devices.of(a) == want, f"result on {devices.of(a)}, expected {want}"
