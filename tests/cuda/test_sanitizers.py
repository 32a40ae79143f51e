"""The emulated CUDA kernels under sanitizers. A second build of minifw from this
source tree compiles the emulator and the kernels with AddressSanitizer + UBSan
(MINIFW_CUDASIM_SANITIZE=address) and runs a subset of the cudasim tests in a
child process, where any out-of-bounds access or undefined behaviour in a kernel
aborts the run. ThreadSanitizer (MINIFW_CUDASIM_SANITIZE=thread: each CUDA thread
an OS thread) runs the emulator's own tests on small shapes, and must report the
missing barrier of the self-test kernel as a data race (MINIFW_TEST_TSAN=0 leaves
it out). See docs/cuda.md.

Each build takes one to two minutes on 2 cores; both are skipped without cmake, a
C++ compiler with the sanitizer's runtime, or the source tree (an installed minifw
without its sources)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What runs under AddressSanitizer: the emulator's tests and, per kernel family, the
# conformance tests on cudasim (a few shapes each, -k below).
ASAN_TESTS = ["tests/cuda/test_cudasim.py", "tests/ops/test_conv.py", "tests/ops/test_gemm.py",
              "tests/ops/test_pooling.py", "tests/ops/test_rnn.py", "tests/ops/test_batchnorm.py",
              "tests/ops/test_dropout.py", "tests/ops/test_lrn.py", "tests/ops/test_softmax.py",
              "tests/ops/test_activation.py", "tests/ops/test_tensor_ops.py", "tests/ops/test_sgd_step.py",
              "tests/cuda/test_tf32.py"]
ASAN_SELECTION = ("test_cudasim.py or test_tf32.py or (cudasim and (float32 and not threaded and not 521 and not alexnet)) or "
                  "(emulator and float32 and (lenet_conv2 or groups3_dil2 or mixed_stride or k1x1_groups2))")


def _runtime(name):
    """The path of the compiler's sanitizer runtime (e.g. libasan.so), or None."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return None
    path = subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


def _build(tmp_path_factory, sanitizer):
    """A copy of the minifw package with an extension built under `sanitizer`."""
    if not (ROOT / "CMakeLists.txt").exists() or not shutil.which("cmake"):
        pytest.skip("needs the source tree and cmake")
    runtime = _runtime("libasan.so" if sanitizer == "address" else "libtsan.so")
    if runtime is None:
        pytest.skip(f"the compiler has no {sanitizer} sanitizer runtime")
    work = tmp_path_factory.mktemp(f"sanitize-{sanitizer}")
    package = work / "pkg" / "minifw"
    shutil.copytree(ROOT / "minifw", package, ignore=shutil.ignore_patterns("_native*", "__pycache__"))
    build = work / "build"
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DMINIFW_CUDA=OFF",
                 f"-DMINIFW_CUDASIM_SANITIZE={sanitizer}", f"-DMINIFW_OUTPUT_DIR={package}"]
    for command in (configure, ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    # Python is not built with the sanitizer, so its runtime (and libstdc++, whose
    # exceptions it intercepts) must be loaded first.
    preload = [runtime] + ([p] if (p := _runtime("libstdc++.so")) else [])
    env = dict(os.environ, LD_PRELOAD=" ".join(preload), PYTHONPATH=str(package.parent),
               ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               TSAN_OPTIONS="halt_on_error=1:report_signal_unsafe=0")
    return package.parent, env


def _run(cwd, env, *args, timeout=1200):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def asan(tmp_path_factory):
    return _build(tmp_path_factory, "address")


def test_the_sanitized_extension_is_instrumented(asan):
    cwd, env = asan
    probe = _run(cwd, env, "-c", "import minifw._native as n; print(n.__file__)")
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.strip().startswith(str(cwd))  # this build, not the one under test
    symbols = subprocess.run(["nm", "-D", probe.stdout.strip()], capture_output=True, text=True).stdout
    assert "__asan_report" in symbols and "__ubsan_handle" in symbols


def test_cudasim_tests_pass_under_address_and_undefined_behaviour_sanitizers(asan):
    cwd, env = asan
    # -s: a sanitizer's report goes to the child's stderr, not into pytest's capture
    done = _run(cwd, env, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
                *[str(ROOT / t) for t in ASAN_TESTS], "-k", ASAN_SELECTION)
    tail = done.stdout[-2000:] + "\n" + done.stderr[-6000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout and "Sanitizer" not in done.stderr and "runtime error" not in done.stderr


@pytest.fixture(scope="module")
def tsan(tmp_path_factory):
    if os.environ.get("MINIFW_TEST_TSAN") == "0":
        pytest.skip("MINIFW_TEST_TSAN=0")
    return _build(tmp_path_factory, "thread")


def test_thread_sanitizer_reports_the_missing_barrier_as_a_race(tsan):
    cwd, env = tsan
    clean = _run(cwd, env, "-c", "import minifw._native as n; print(n.cudasim_selftest('none', 64)[:2])")
    assert clean.returncode == 0 and "ThreadSanitizer" not in clean.stderr, clean.stderr[-3000:]
    racy = _run(cwd, env, "-c", "import minifw._native as n; n.cudasim_selftest('missing_barrier', 64)")
    assert racy.returncode != 0 and "WARNING: ThreadSanitizer: data race" in racy.stderr, racy.stderr[-3000:]


def test_emulator_tests_pass_under_thread_sanitizer(tsan):
    cwd, env = tsan
    # (the missing barrier's race is the test above; it would stop this run)
    done = _run(cwd, env, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
                str(ROOT / "tests/cuda/test_cudasim.py"), "-k", "not several_workers and not missing_barrier")
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
