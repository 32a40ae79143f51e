"""What the property tests draw, shared by every family: the devices they run on, the
CPU's ISA and thread count, dtypes, seeds for the data, int-or-pair geometry arguments;
and each test's example budget under the current Hypothesis profile (conftest.py).

The array contents come from NumPy's generator seeded by a drawn seed rather than from
Hypothesis element by element: shapes, geometry and settings are what the search
explores and shrinks; the values of a few thousand elements would only slow it down.
"""
import contextlib

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

import minifw
from targets import cuda_available

# "cpu" (every ISA: drawn per example), the CUDA kernels on the emulator, and a real GPU
# where there is one. The emulated "cuda" of tests/conftest.py adds nothing here: its
# kernels are the emulator's, already drawn against on "cudasim".
DEVICES = ["cpu", "cudasim"] + (["cuda"] if cuda_available() else [])
on_every_device = pytest.mark.parametrize("target", DEVICES, indirect=True)

dtypes = st.sampled_from([np.float32, np.float64])
seeds = st.integers(0, 2 ** 32 - 1)


def examples(factor=1.0):
    """The current profile's max_examples times `factor` (at least 2)."""
    return max(2, round(settings().max_examples * factor))


def on_gpu(device):
    """True for the CUDA kernels ("cudasim", "cuda"): their tests draw smaller shapes
    (the emulator runs every CUDA thread as a fiber)."""
    return device.type != "cpu"


@contextlib.contextmanager
def drawn_cpu_variant(data, device):
    """On the CPU, draw an instruction set and a thread count and run under them
    (restored afterwards); elsewhere, nothing to draw."""
    if on_gpu(device):
        yield
        return
    isa = data.draw(st.sampled_from(minifw.backends.supported_isas()), label="isa")
    threads = data.draw(st.sampled_from([1, 2]), label="threads")
    before = minifw.backends.get_isa(), minifw.get_num_threads()
    minifw.backends.set_isa(isa)
    minifw.set_num_threads(threads)
    try:
        yield
    finally:
        minifw.backends.set_isa(before[0])
        minifw.set_num_threads(before[1])


@st.composite
def int_or_pair(draw, lo, hi):
    """(argument, (height, width)): the argument as a user may pass it (an int, or a tuple
    or list of two ints) and the pair it means."""
    form = draw(st.sampled_from(["int", "tuple", "list"]))
    h = draw(st.integers(lo, hi))
    if form == "int":
        return h, (h, h)
    w = draw(st.integers(lo, hi))
    return (h, w) if form == "tuple" else [h, w], (h, w)


def coefficients(limit, signed=True):
    """0 (and +-1 when signed), or a magnitude in [1e-6, limit]. Values below float32's
    range, nonzero in float64 but 0 once rounded, are left out: the float32 kernels of
    GEMM and add_tensor take such a coefficient for 0 (docs/property_tests.md)."""
    magnitude = st.floats(1e-6, limit)
    if not signed:
        return st.one_of(st.just(0.0), magnitude)
    return st.one_of(st.sampled_from([0.0, 1.0, -1.0]), magnitude, magnitude.map(lambda v: -v))


def normal(rng, shape, dtype, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(dtype)
