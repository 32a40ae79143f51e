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


def kernel_devices():
    """Where the CUDA kernels' conformance tests run, as pytest params: the emulator
    ("cudasim", id "emulator") always, and the GPU ("cuda", id "gpu") where there is one.
    The emulated "cuda" would only run the emulator's kernels a second time."""
    import pytest

    return ([pytest.param("cudasim", id="emulator")]
            + ([pytest.param("cuda", id="gpu")] if cuda_available() else []))


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
    # the stand-in's arrays go to a "cuda" workspace of the emulation's own, dropped with it, so
    # that none reaches a later test on a real GPU, and nothing of another test's (or the real)
    # CuPy reaches this one; the other devices' workspaces are the usual ones
    own, usual = {}, devices.workspace

    def workspace(dev=devices.CPU):
        dev = devices.get(dev, "workspace")
        if dev.type != "cuda":
            return usual(dev)
        if dev not in own:
            own[dev] = devices.Workspace(dev)
        return own[dev]
    monkeypatch.setattr(devices, "workspace", workspace)


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


def assert_ops_match_the_cpu(dev, make, op, *, rtol=1e-4, atol=1e-5, what=""):
    """op(*inputs) and the gradients of its sum on `dev` equal the CPU's: make() gives the
    inputs as CPU tensors (float32 ones get requires_grad), moved to each device in turn."""
    results = {}
    for device in ("cpu", dev):
        inputs = [t.to(device) for t in make()]
        for t in inputs:
            if t.dtype == minifw.float32:
                t.requires_grad_()
        out = op(*inputs)
        out.sum().backward() if out.numel() > 1 else out.backward()
        assert out.device == device and devices.of(out._data) == devices.get(device), what
        assert all(t.grad is None or t.grad.device == device for t in inputs), what
        results[device] = [out] + [t.grad for t in inputs if t.grad is not None]
    for got, want in zip(results[dev], results["cpu"]):
        np.testing.assert_allclose(host(got.detach()._data), want.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=what)
