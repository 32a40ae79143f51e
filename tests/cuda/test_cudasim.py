"""The CUDA emulator (device "cudasim"): kernels that break one rule each
(native/cuda/selftest.cu) are caught, with the kernel, block and thread named;
launch limits; arrays on the device; what the build reports."""
import re
import shutil

import numpy as np
import pytest

import minifw
from minifw import _native, devices, ops

N = 64  # threads in the self-test block: two warps


def expected_selftest(n=N):
    """What the correct kernel writes: the sum of the thread indices of t's warp,
    plus the index of thread (t + 1) % n read back through shared memory."""
    t = np.arange(n)
    warp_sums = np.add.reduceat(t, np.arange(0, n, 32))[t // 32]
    return (warp_sums + (t + 1) % n).astype(np.float32)


@pytest.mark.parametrize("n", [32, 64, 1024])
def test_the_correct_kernel_gives_the_expected_values(n):
    np.testing.assert_array_equal(_native.cudasim_selftest("none", n), expected_selftest(n))


@pytest.mark.parametrize("fault, message", [
    ("early_return", r"kernel selftest_kernel, block \(0,0,0\), thread \(32,0,0\): exited before "
                     r"__syncthreads at selftest\.cu:\d+ \(32 of 64 threads exited"),
    ("divergent_barrier", r"thread \(1,0,0\): waits at __syncthreads at selftest\.cu:\d+ while thread "
                          r"\(0,0,0\) waits at selftest\.cu:\d+ \(a barrier in divergent code\)"),
    ("lane_not_in_mask", r"thread \(16,0,0\): __shfl_xor_sync: the calling lane 16 is not in the mask "
                         r"0x0000ffff"),
    ("exited_lane_in_mask", r"__shfl_xor_sync with mask 0xffffffff: lane 31 has exited"),
    ("too_many_threads", r"kernel selftest_kernel: invalid launch: block \(1025,1,1\) has 1025 threads; "
                         r"a block holds 1 to 1024"),
    ("too_much_shared", r"invalid launch: 65536 bytes of dynamic shared memory requested; the kernel's "
                        r"limit is 49152 \(cudaFuncSetAttribute"),
])
def test_broken_rules_raise_naming_kernel_block_and_thread(fault, message):
    if _native.cudasim_backend == "threads":  # which thread is caught first depends on the OS's schedule
        message = re.sub(r"thread \\\(\d+,0,0\\\)", r"thread \\(\\d+,0,0\\)", message)
        message = message.replace("calling lane 16", r"calling lane \d+")
    with pytest.raises(_native.CudaSimError, match=message):
        _native.cudasim_selftest(fault, N)
    # the emulator is left in a usable state
    np.testing.assert_array_equal(_native.cudasim_selftest("none", N), expected_selftest())


def test_the_error_is_a_runtime_error():
    assert issubclass(_native.CudaSimError, RuntimeError)


def test_a_missing_barrier_reads_unwritten_shared_memory_as_nan():
    # Thread t reads what thread t + 1 wrote; without the barrier, t + 1 has not run yet,
    # and dynamic shared memory starts every block as NaN.
    out = _native.cudasim_selftest("missing_barrier", N)
    assert np.isnan(out[:N - 1]).all()


def test_a_shuffle_from_a_lane_outside_the_mask_reads_poison():
    out = _native.cudasim_selftest("shuffle_outside_mask", N)
    lanes = np.arange(N) % 32
    assert np.isnan(out[lanes < 16]).all()  # read lanes 16-31, which were not in the mask
    np.testing.assert_array_equal(out[lanes >= 16], np.arange(N)[lanes >= 16])


def test_selftest_arguments_are_checked():
    with pytest.raises(ValueError, match="n: expected a multiple of 32 from 32 to 1024, got 33"):
        _native.cudasim_selftest("none", 33)
    with pytest.raises(ValueError, match="unknown fault 'sideways'"):
        _native.cudasim_selftest("sideways", N)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blocks_on_several_workers_give_the_same_result(threads):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((200, 70)), rng.standard_normal((70, 150))
    before = minifw.get_num_threads()
    minifw.set_num_threads(threads)
    try:
        c = ops.gemm(devices.to_device(a, devices.CUDASIM), devices.to_device(b, devices.CUDASIM))
    finally:
        minifw.set_num_threads(before)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


# ---- arrays on the device ---------------------------------------------------------------

def test_arrays_carry_the_device_through_numpy():
    x = devices.to_device(np.arange(6.0).reshape(2, 3), devices.CUDASIM)
    assert isinstance(x, devices.CudaSimArray) and devices.of(x) == "cudasim"
    for result in (x + 1, x * x, x[1:], x.T, np.empty_like(x), x.reshape(3, 2), np.exp(x)):
        assert devices.of(result) == "cudasim"
    back = devices.to_device(x, devices.CPU)
    assert type(back) is np.ndarray and devices.of(back) == "cpu"
    np.testing.assert_array_equal(back, np.arange(6.0).reshape(2, 3))


def test_moving_copies_and_staying_does_not():
    a = np.ones(3)
    sim = devices.to_device(a, devices.CUDASIM)
    assert not np.shares_memory(a, sim)  # a transfer, as to a GPU
    assert devices.to_device(sim, devices.CUDASIM) is sim


def test_allocation_on_the_device():
    for make in (devices.empty, devices.zeros):
        a = make((2, 3), np.float32, devices.CUDASIM)
        assert devices.of(a) == "cudasim" and a.shape == (2, 3) and a.dtype == np.float32
    assert devices.workspace("cudasim").get(100).size >= 100
    assert devices.of(devices.workspace("cudasim").get(100)) == "cudasim"


def test_every_cpu_kernel_family_has_a_cuda_kernel():
    cpu = {k[:2] for k in devices.kernels() if k[3] == "cpu"}
    sim = {k[:2] for k in devices.kernels() if k[3] == "cudasim"}
    assert cpu - sim == set()


def test_a_kernel_the_device_lacks_is_named():
    with pytest.raises(TypeError, match="'conv' 'forward' has no int64 variant on device 'cudasim'"):
        devices.kernel("conv", "forward", np.dtype(np.int64), devices.CUDASIM)


# ---- the build ----------------------------------------------------------------------------

def test_cuda_kernels_are_compiled_in_where_nvcc_is_found():
    """Where nvcc is on PATH, the default build (MINIFW_CUDA=AUTO) compiles the kernels for
    the GPU too."""
    assert _native.cuda_option in ("AUTO", "ON", "OFF")
    if _native.cuda_option == "OFF" or not shutil.which("nvcc"):
        pytest.skip(f"MINIFW_CUDA={_native.cuda_option}, nvcc {'found' if shutil.which('nvcc') else 'not found'}")
    assert _native.has_cuda
    assert "90" in _native.cuda_architectures and "80" in _native.cuda_architectures
    # every entry point of the emulator's kernels has its GPU twin (the same binding code)
    on = {dev: {k[:3] for k in devices.kernels() if k[3] == dev} for dev in ("cudasim", "cuda")}
    assert on["cuda"] == on["cudasim"] and len(on["cuda"]) > 50
