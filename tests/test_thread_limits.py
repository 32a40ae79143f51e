"""Bounds on thread counts: minifw.set_num_threads (OpenMP and the "cudasim" emulator's workers),
a too-large OMP_NUM_THREADS at import, and DataLoader's num_workers. A count far above what the
system can start used to crash the process (libgomp's SIGSEGV or "Thread creation failed") or
fail with a raw pybind11 TypeError; now it is a ValueError naming the argument and the limit.
Also devices.kernel's dtype argument, which is normalised with np.dtype."""
import os
import subprocess
import sys

import numpy as np
import pytest

import minifw
from minifw import backends, devices, ops
from minifw.data import DataLoader
from minifw.data.dataloader import max_num_workers

from childenv import child_env

LIMIT = backends.max_num_threads()


@pytest.mark.skipif("OMP_THREAD_LIMIT" in os.environ, reason="OMP_THREAD_LIMIT lowers the limit")
def test_the_limit_is_max_of_256_and_four_per_cpu():
    assert LIMIT == max(256, 4 * (os.cpu_count() or 1)) == minifw._native.max_num_threads()
    assert "max(256, 4 * the CPU" in backends.set_num_threads.__doc__


@pytest.mark.parametrize("n", [LIMIT + 1, 40000, 10 ** 6, 2 ** 31, 2 ** 40, 2 ** 70])
def test_too_many_threads_is_a_clear_value_error(n):
    before = minifw.get_num_threads()
    with pytest.raises(ValueError, match=rf"set_num_threads: n must be in \[1, {LIMIT}\] .*got {n}$"):
        minifw.set_num_threads(n)
    assert minifw.get_num_threads() == before


def test_the_native_setter_is_bounded_too():
    before = minifw.get_num_threads()
    with pytest.raises(ValueError, match=rf"set_num_threads: n must be in \[1, {LIMIT}\], got {LIMIT + 1}"):
        minifw._native.set_num_threads(LIMIT + 1)
    assert minifw.get_num_threads() == before


def test_the_limit_itself_is_accepted_and_kernels_run():
    before = minifw.get_num_threads()
    x, w = np.ones((8, 16, 32, 32), np.float32), np.ones((16, 16, 3, 3), np.float32)
    want = ops.conv2d_forward(x, w, padding=1)
    try:
        minifw.set_num_threads(LIMIT)
        assert minifw.get_num_threads() == LIMIT
        np.testing.assert_array_equal(ops.conv2d_forward(x, w, padding=1), want)
        # the emulator takes at most its own worker limit (fiber stacks use memory mappings)
        assert minifw._native.cudasim_workers() == min(LIMIT, minifw._native.cudasim_max_workers())
        xs, ws = devices.to_device(x, devices.CUDASIM), devices.to_device(w, devices.CUDASIM)
        np.testing.assert_allclose(devices.to_device(ops.conv2d_forward(xs, ws, padding=1), devices.CPU),
                                   ops.conv2d_forward(x, w, padding=1), rtol=1e-6)
    finally:
        minifw.set_num_threads(before)


def _child(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=child_env(**env))


_CONV = ("import warnings, numpy as np\n"
         "with warnings.catch_warnings(record=True) as caught:\n"
         "    warnings.simplefilter('always')\n"
         "    import minifw\n"
         "from minifw import ops\n"
         "print('warned', [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)])\n"
         "print('threads', minifw.get_num_threads(), minifw.backends.max_num_threads())\n"
         "x, w = np.ones((8, 16, 32, 32), np.float32), np.ones((16, 16, 3, 3), np.float32)\n"
         "print('sum', float(ops.conv2d_forward(x, w, padding=1).sum()))\n"
         "import threading\n"
         "out = []\n"
         "t = threading.Thread(target=lambda: out.append(float(ops.conv2d_forward(x, w, padding=1).sum())))\n"
         "t.start(); t.join(); print('thread', out)\n")


def test_a_huge_omp_num_threads_is_capped_with_a_warning():
    r = _child(_CONV, OMP_NUM_THREADS="100000000")
    assert r.returncode == 0, r.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert "OMP_NUM_THREADS='100000000' asks for 100000000 threads" in lines["warned"]
    assert "minifw uses" in lines["warned"]
    threads, limit = map(int, lines["threads"].split())
    assert threads == limit
    assert float(lines["sum"]) > 0 and lines["thread"] == f"[{lines['sum']}]"


def test_a_reasonable_omp_num_threads_gives_no_warning():
    r = _child(_CONV, OMP_NUM_THREADS="3")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "warned []" in r.stdout and "threads 3 " in r.stdout


def test_omp_thread_limit_lowers_the_limit():
    r = _child("import minifw\nprint(minifw.backends.max_num_threads())\n"
               "try:\n    minifw.set_num_threads(4)\nexcept ValueError as e:\n    print(e)\n",
               OMP_THREAD_LIMIT="3", OMP_NUM_THREADS="2")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines() == ["3", "set_num_threads: n must be in [1, 3] (max(256, 4 x the CPU count), "
                                          "at most OMP_THREAD_LIMIT), got 4"]


# ---- DataLoader's worker threads --------------------------------------------------------------

@pytest.mark.parametrize("n", [max_num_workers() + 1, 10 ** 6])
def test_too_many_workers_is_a_clear_value_error(n):
    with pytest.raises(ValueError, match=rf"DataLoader: num_workers must be in \[0, {max_num_workers()}\].*got {n}"):
        DataLoader(list(range(4)), num_workers=n)


def test_the_worker_limit_follows_the_cpu_count():
    assert max_num_workers() == max(256, 4 * (os.cpu_count() or 1))
    assert [b.tolist() for b in DataLoader(list(range(6)), batch_size=3, num_workers=8)] == [[0, 1, 2], [3, 4, 5]]


# ---- devices.kernel's dtype --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, "float32", np.dtype(np.float32), np.dtype("<f4")])
def test_kernel_takes_any_spelling_of_a_dtype(dtype):
    assert devices.kernel("conv", "forward", dtype) is devices.kernel("conv", "forward", np.dtype(np.float32))
    assert devices.kernel("conv", "forward", dtype, "cudasim") is \
        devices.kernel("conv", "forward", np.dtype(np.float32), devices.CUDASIM)


@pytest.mark.parametrize("dtype, error, message", [
    (np.int64, TypeError, "native kernel 'conv' 'forward' has no int64 variant on device 'cpu'"),
    (None, TypeError, "kernel: dtype must be a NumPy dtype such as np.float32 or 'float32', got None"),
    ([1], TypeError, r"kernel: dtype must be a NumPy dtype such as np.float32 or 'float32', got \[1\]"),
])
def test_kernel_refuses_what_has_no_variant(dtype, error, message):
    with pytest.raises(error, match=message):
        devices.kernel("conv", "forward", dtype)
