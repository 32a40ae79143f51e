import numpy as np
import pytest

import minifw
from targets import cuda_available, emulate_cuda, host


def _comparing_host_copies(assertion):
    def compare(*args, **kwargs):
        return assertion(*map(host, args), **kwargs)
    compare.__wrapped__ = assertion
    return compare


# numpy.testing's assertions compare host arrays: a "cuda" result (a CuPy array, which
# refuses implicit conversion) is copied back first, so a conformance test reads alike
# on every device.
for _name in ("assert_allclose", "assert_array_equal", "assert_equal", "assert_array_almost_equal",
              "assert_almost_equal", "assert_array_less", "assert_array_max_ulp"):
    setattr(np.testing, _name, _comparing_host_copies(getattr(np.testing, _name)))


@pytest.fixture(autouse=True)
def _autotuning_switch_kept():
    """A script written for PyTorch may set torch.backends.cudnn.benchmark (tests/scripts/
    dp_sgd.py does), which in minifw turns autotuning on for the whole process: the
    convolutions then pick their algorithms by timing, and a later test that compares a
    run with PyTorch's from the same weights sees other roundings. Each test leaves the
    switch as it found it."""
    before = minifw.backends.benchmark
    yield
    minifw.backends.benchmark = before


@pytest.fixture(params=minifw.backends.supported_isas())
def isa(request):
    """Run a test once for every instruction set this CPU supports."""
    before = minifw.backends.get_isa()
    minifw.backends.set_isa(request.param)
    yield request.param
    minifw.backends.set_isa(before)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Where a primitive's conformance tests run: the CPU under every ISA it supports,
# the CUDA kernels on the emulator ("cudasim"), and "cuda": a GPU where there is
# one, else the emulated one (targets.emulate_cuda: CuPy's stand-in and the
# emulator's kernels). The test gets the device; its inputs go there with `place`.
TARGETS = ([f"cpu-{isa}" for isa in minifw.backends.supported_isas()] + ["cudasim"]
           + ["cuda" if cuda_available() else "cuda-emulated"])


@pytest.fixture(params=TARGETS)
def target(request, monkeypatch):
    """A device for a primitive's conformance test (under each CPU ISA in turn)."""
    name, _, variant = request.param.partition("-")
    before = minifw.backends.get_isa()
    if variant == "emulated":
        emulate_cuda(monkeypatch)
    elif variant:
        minifw.backends.set_isa(variant)
    yield minifw.device(name)
    minifw.backends.set_isa(before)


@pytest.fixture(params=["cudasim", "cuda"])
def dev(request, monkeypatch):
    """A GPU device under test, as its tensors report it ('cudasim', 'cuda:0'): the emulator,
    and "cuda" (the emulated GPU where there is none)."""
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return minifw.devices.get(request.param)


@pytest.fixture
def emulated_cuda(monkeypatch):
    """Device "cuda" on CuPy's stand-in and the emulator's kernels (targets.emulate_cuda)."""
    emulate_cuda(monkeypatch)
    return minifw.device("cuda")
