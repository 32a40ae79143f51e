import numpy as np
import pytest

import minifw


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
# and the CUDA kernels on the emulator ("cudasim"; "cuda" joins when tensors on a
# GPU land). The test gets the device; its inputs go there with `place`.
TARGETS = [f"cpu-{isa}" for isa in minifw.backends.supported_isas()] + ["cudasim"]


@pytest.fixture(params=TARGETS)
def target(request):
    """A device for a primitive's conformance test (under each CPU ISA in turn)."""
    name, _, isa = request.param.partition("-")
    before = minifw.backends.get_isa()
    if isa:
        minifw.backends.set_isa(isa)
    yield minifw.device(name)
    minifw.backends.set_isa(before)
