"""Build minifw under a sanitizer and run its tests against that build.

    python tests/sanitize.py [--workdir DIR] [PYTEST ARGS...]

builds the whole extension (bindings, CPU kernels, emulator, emulated CUDA kernels)
with AddressSanitizer + UBSan (cmake -DMINIFW_SANITIZE=address) into a copy of the
minifw package, then runs pytest there in a child process with the sanitizer's
runtime preloaded. With no pytest arguments it runs the whole kernel suite,
tests/ops and tests/cuda/test_cudasim.py, on every device (the CPU under each ISA
it supports, "cudasim" and the emulated "cuda"): the long run of docs/sanitizers.md,
too long for CI. Any report stops the child with a non-zero status. It prints the
build's and the run's seconds; the exit status is pytest's.

tests/test_sanitizers.py uses build() and run_pytest() for what CI runs: a selection.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The long run: every kernel test on every device.
ALL_KERNEL_TESTS = ["tests/ops", "tests/cuda/test_cudasim.py", "tests/cuda/test_tf32.py"]

# ASan/UBSan: stop at the first report. Leaks are not checked (CPython's own
# allocations at exit would drown minifw's); the child must run pytest with -s so
# a report reaches its stderr rather than pytest's capture.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=1:report_signal_unsafe=0",
}


class Unavailable(Exception):
    """The tools for a sanitized build are missing (the caller skips)."""


def runtime(name):
    """The path of the C++ compiler's runtime library `name` (e.g. libasan.so), or None."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return None
    path = subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


def build(workdir, sanitizer="address", jobs=None):
    """Build minifw under `sanitizer` into workdir/pkg/minifw. "address": the whole
    extension with ASan + UBSan (MINIFW_SANITIZE=address); "thread": the emulator
    and the emulated kernels with TSan (MINIFW_CUDASIM_SANITIZE=thread). Returns
    (the folder to put on PYTHONPATH, the environment to run Python in, seconds the
    build took). Raises Unavailable without the source tree, cmake or the runtime."""
    if not (ROOT / "CMakeLists.txt").exists() or not shutil.which("cmake"):
        raise Unavailable("needs the source tree and cmake")
    lib = runtime({"address": "libasan.so", "thread": "libtsan.so"}[sanitizer])
    if lib is None:
        raise Unavailable(f"the compiler has no {sanitizer} sanitizer runtime")
    workdir = Path(workdir)
    package = workdir / "pkg" / "minifw"
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(ROOT / "minifw", package, ignore=shutil.ignore_patterns("_native*", "__pycache__"))
    option = "-DMINIFW_SANITIZE=address" if sanitizer == "address" else "-DMINIFW_CUDASIM_SANITIZE=thread"
    # Debug for ASan: -g and no stripping (pybind11 strips a Release build); the
    # sanitized files are compiled at -O1 whatever the build type. No LTO for either:
    # it would only lengthen the link.
    build_type = "Debug" if sanitizer == "address" else "Release"
    build_dir = workdir / f"build-{sanitizer}"
    configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), f"-DCMAKE_BUILD_TYPE={build_type}",
                 "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF", "-DMINIFW_CUDA=OFF", option,
                 f"-DMINIFW_OUTPUT_DIR={package}"]
    start = time.monotonic()
    for command in (configure, ["cmake", "--build", str(build_dir), "-j", str(jobs or os.cpu_count() or 2)]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    seconds = time.monotonic() - start
    # Python is not built with the sanitizer, so its runtime (and libstdc++, whose
    # exceptions it intercepts) must be loaded first.
    preload = [lib] + ([p] if (p := runtime("libstdc++.so")) else [])
    env = dict(os.environ, LD_PRELOAD=" ".join(preload), PYTHONPATH=str(package.parent), **SANITIZER_ENV)
    return package.parent, env, seconds


def run_python(cwd, env, *args, timeout=3600):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run_pytest(cwd, env, *args, timeout=3600, capture=True):
    """pytest in a child process against the build in `cwd` (-s: a sanitizer's
    report goes to the child's stderr, not into pytest's capture)."""
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *args]
    if capture:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return subprocess.run(command, cwd=cwd, env=env, timeout=timeout)


def sanitizer_reported(stderr):
    """Whether a child's stderr holds a sanitizer's report."""
    return "Sanitizer" in stderr or "runtime error:" in stderr


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="%(prog)s [--workdir DIR] [--jobs N] [PYTEST ARGS...]")
    parser.add_argument("--workdir", help="where to build (kept); default: a temporary folder, removed after")
    parser.add_argument("--jobs", type=int, help="parallel compile jobs (default: the CPU count)")
    options, pytest_args = parser.parse_known_args(argv)
    if not pytest_args:
        # (the comparisons with PyTorch are left out: they check agreement, not memory
        # safety, and would load PyTorch's libraries under the preloaded runtime)
        pytest_args = [str(ROOT / t) for t in ALL_KERNEL_TESTS] + ["-k", "not torch"]
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="minifw-asan-"))
    try:
        cwd, env, build_seconds = build(workdir, "address", options.jobs)
        print(f"sanitize.py: AddressSanitizer + UBSan build in {build_seconds:.0f} s ({workdir})", flush=True)
        start = time.monotonic()
        done = run_pytest(cwd, env, *pytest_args, capture=False)
        print(f"sanitize.py: pytest under the sanitizers took {time.monotonic() - start:.0f} s, "
              f"exit status {done.returncode}", flush=True)
        return done.returncode
    finally:
        if not options.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
