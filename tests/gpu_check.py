"""Everything to check on a machine with an NVIDIA GPU, in one command.

    python tests/gpu_check.py OUTDIR [--budget SECONDS] [--steps a,b,...] [--jobs N]

run from the source tree. Steps, in order, the most wanted first (each stops at its own time
limit, LIMITS, and none starts past the budget; a step that runs out of time is cut short
and the next one starts):

  environment  nvidia-smi, nvcc, CuPy and PyTorch as the machine has them
  build        the developer build with the CUDA kernels for this GPU's architecture
               (cmake -DMINIFW_CUDA=ON into build/gpu; the extension lands in minifw/)
  tests        the test suite's GPU tests: every test on device "cuda", which is the
               real GPU here (pytest -k GPU_TESTS), in parallel when pytest-xdist is
               installed
  bench        `minifw bench` on "cuda" for LeNet b64, AlexNet b128 and the char-LSTM
               with the caffe engine, the primitives and PyTorch (cuDNN; TF32 off in all)
  layers       benchmarks/conv.py on "cuda", AlexNet b128 and LeNet b64 per layer: each
               algorithm, the caffe engine (im2col + cuBLAS) and cuDNN; GEMMs against
               cuBLAS
  kernels      benchmarks/gpu_kernels.py: the primitives' training step of AlexNet b128
               and the char-LSTM b32, kernel by kernel (PyTorch's profiler)
  memcheck     compute-sanitizer --tool memcheck over the kernel tests on "cuda" (a few
               shapes per family, CuPy's memory pool off, so every array is its own
               allocation and an access past it is caught)
  racecheck    compute-sanitizer --tool racecheck over the GEMM, convolution and
               recurrent tests on "cuda" (shared-memory races)

Into OUTDIR: log.txt (every command's output, written as it comes; pytest names each test
and its result), summary.md and summary.json (the steps: status, seconds, what each command
said last, a bench's speedups; rewritten after every step), bench_<model>.json and
layers.md. The summary is printed last. Exit status: 0 when every step ran and passed. A
command stopped at its limit is stopped with every process it started.
"""
import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The GPU's tests: those on device "cuda" (the GPU here), not those on the emulator, nor the
# tests of the CuPy stand-in (which the folder tests/cuda would bring in).
GPU_TESTS = "cuda and not cudasim and not emulator and not test_fakecupy.py"
# Under the sanitizers: float32, a few shapes per family.
SANITIZE_SELECTION = (
    f"{GPU_TESTS} and (float32 or test_tf32.py) and not threaded and not 521 and not alexnet"
    " and not (test_conv.py and test_cuda_kernels and not (lenet_conv2 or groups3_dil2 or mixed_stride"
    " or k1x1_groups2 or many_tiles))"
    " and not (test_gemm.py and not (17x33x9 or 97x113x131 or 1x1x1 or 255x1x257 or 5x7x5000"
    " or (128_tiles and NN)))"
    " and not (test_sgd_step_matches and not (seventeen or matrix_31x33))"
    " and not (test_cross_entropy_matches and not mean)")
RACE_TEST_FILES = ["tests/ops/test_gemm.py", "tests/ops/test_conv.py", "tests/ops/test_rnn.py"]
PROFILE = [("alexnet", 128), ("charlstm", 32)]  # model, batch: benchmarks/gpu_kernels.py
BENCH = [("lenet", 64, 20), ("alexnet", 128, 6), ("charlstm", 32, 10)]  # model, batch, iterations

# Seconds each step may take at most (the budget may leave it less), in the order the steps
# run: the most wanted first, sized so that a 10-minute command gets through them all when
# the machine is quick, and through the first ones when it is not.
LIMITS = {"environment": 30, "build": 240, "tests": 150, "bench": 150, "layers": 120, "kernels": 60,
          "memcheck": 90, "racecheck": 150}
STEPS = list(LIMITS)


def _kernel_test_files():
    """The kernel families' test files (those the emulator's sanitizer run takes), less the
    emulator's own. Read from tests/test_sanitizers.py, which imports minifw: so only once
    the build step has built its extension, never when this script starts."""
    for path in (str(ROOT), str(ROOT / "tests")):
        if path not in sys.path:
            sys.path.insert(0, path)
    from test_sanitizers import CUDASIM_FILES
    return [f for f in CUDASIM_FILES if "test_cudasim" not in f]


def _python_with_plain_cupy_allocations(pytest_args):
    """python -c ...: pytest with CuPy's memory pool off (every array cudaMalloc'd on its own)."""
    code = ("import sys, cupy, pytest; cupy.cuda.set_allocator(None); "
            f"sys.exit(pytest.main({pytest_args!r}))")
    return [sys.executable, "-c", code]


def _pytest_args(files, selection, *extra):
    """pytest naming each test and its result as it ends (-v), so that a run stopped at its
    time limit still says which ran and which failed."""
    return ["-v", "-p", "no:cacheprovider", "-rfE", "--maxfail", "100", *files, "-k", selection, *extra]


def _compute_capability():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split()
        return out[0].replace(".", "") if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def commands(step, outdir, jobs):
    """The commands of `step`, each a (label, argv, extra environment) triple."""
    py = sys.executable
    if step == "environment":
        return [("nvidia-smi", ["nvidia-smi"], {}), ("nvcc", ["nvcc", "--version"], {}),
                ("python", [py, "-c", "import sys, cupy, numpy; print(sys.version); "
                                      "print('numpy', numpy.__version__, 'cupy', cupy.__version__); "
                                      "import torch; print('torch', torch.__version__, torch.cuda.is_available(), "
                                      "torch.backends.cudnn.version())"], {})]
    if step == "build":
        arch = _compute_capability() or "90"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        pybind11 = subprocess.run([py, "-m", "pybind11", "--cmakedir"], capture_output=True, text=True).stdout.strip()
        configure = ["cmake", "-S", str(ROOT), "-B", str(ROOT / "build" / "gpu"), *generator,
                     "-DCMAKE_BUILD_TYPE=Release", "-DMINIFW_CUDA=ON", f"-DMINIFW_CUDA_ARCHITECTURES={arch}",
                     f"-DPython_EXECUTABLE={py}", *([f"-Dpybind11_DIR={pybind11}"] if pybind11 else [])]
        return [("configure", configure, {}),
                ("compile", ["cmake", "--build", str(ROOT / "build" / "gpu"), "-j", str(jobs)], {}),
                ("info", [py, "-m", "minifw.cli", "info"], {})]
    if step == "tests":
        parallel = (["-n", str(min(jobs, 8)), "--dist", "loadfile"]
                    if importlib.util.find_spec("xdist") else [])
        return [("pytest", [py, "-m", "pytest", *_pytest_args(["tests"], GPU_TESTS), *parallel], {})]
    if step == "bench":
        return [(f"bench {model}", [py, "-m", "minifw.cli", "bench", model, "--device", "cuda",
                                    "--batch-size", str(batch), "--iterations", str(iterations),
                                    "--engine", "caffe,primitives,torch",
                                    "--json", str(outdir / f"bench_{model}.json")], {})
                for model, batch, iterations in BENCH]
    if step == "kernels":
        script = str(ROOT / "benchmarks" / "gpu_kernels.py")
        return [(f"kernels {model}", [py, script, model, "--batch-size", str(batch), "--iterations", "3"], {})
                for model, batch in PROFILE]
    if step in ("memcheck", "racecheck"):
        files = _kernel_test_files() if step == "memcheck" else RACE_TEST_FILES
        sanitizer = ["compute-sanitizer", "--tool", step, "--error-exitcode", "97", "--target-processes", "all"]
        return [(f"compute-sanitizer {step}",
                 sanitizer + _python_with_plain_cupy_allocations(_pytest_args(files, SANITIZE_SELECTION, "-x")), {})]
    if step == "layers":
        script = str(ROOT / "benchmarks" / "conv.py")
        return [("alexnet b128", [py, script, "--device", "cuda", "--torch", "--batch", "128", "--layers",
                                  "alexnet conv", "--repeats", "5", "--gemm-sizes", "1024,4096"], {}),
                ("lenet b64", [py, script, "--device", "cuda", "--torch", "--layers", "lenet",
                               "--skip-gemm", "--repeats", "5"], {})]
    raise ValueError(f"unknown step {step!r}; the steps are {', '.join(STEPS)}")


def _verdict(lines):
    """The lines of a command's output that say how it went: a bench's speedups, else the
    last non-empty line (pytest's summary, ...)."""
    lines = [line.strip() for line in lines if line.strip()]
    speedups = [line for line in lines if line.startswith("primitives vs ")]
    if speedups:
        return "; ".join(speedups)[:240]
    return lines[-1][:160] if lines else ""


def _run(argv, env, limit, log):
    """Run argv, its output copied line by line into `log` as it comes; stop it, and every
    process it started (pytest's workers, the program under compute-sanitizer), after
    `limit` seconds. Returns (return code or None when stopped, output lines)."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    lines = []

    def copy():
        for line in proc.stdout:
            lines.append(line)
            log.write(line)
            log.flush()
    reader = threading.Thread(target=copy, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        reader.join(timeout=10)
        return None, lines
    reader.join(timeout=10)
    return proc.returncode, lines


def run_step(step, outdir, jobs, deadline, log):
    start = time.monotonic()
    status, verdicts = "ok", []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PYTHONUNBUFFERED": "1"}
    for label, argv, extra in commands(step, outdir, jobs):
        left = min(LIMITS[step] - (time.monotonic() - start), deadline - time.monotonic())
        if left < 5:
            status = "timeout"
            verdicts.append(f"{label}: no time left")
            break
        log.write(f"\n===== {step}: {label}\n$ {' '.join(argv)}\n")
        log.flush()
        try:
            rc, output = _run(argv, {**env, **extra}, left, log)
        except OSError as e:
            status = "failed"
            verdicts.append(f"{label}: {e}")
            log.write(f"{e}\n")
            continue
        if rc is None:
            status = "timeout"
        elif rc != 0:
            status = "failed"
        verdicts.append(f"{label}: {'stopped at the time limit, ' if rc is None else ''}"
                        f"{'rc ' + str(rc) + ', ' if rc else ''}{_verdict(output)}")
        if status == "timeout" or (step == "build" and status == "failed"):
            break
    return {"step": step, "status": status, "seconds": round(time.monotonic() - start, 1),
            "result": " / ".join(verdicts)}


def summary_table(results):
    lines = ["| step | status | seconds | result |", "|---|---|---|---|"]
    lines += [f"| {r['step']} | {r['status']} | {r['seconds']} | {r['result'].replace('|', '/')} |" for r in results]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--budget", type=float, default=3600, help="seconds for all the steps together")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of: {', '.join(STEPS)}")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="build jobs and test workers")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = [s for s in steps if s not in LIMITS]
    if unknown:
        ap.error(f"--steps: unknown {', '.join(unknown)}; the steps are {', '.join(STEPS)}")
    args.outdir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget
    results = []
    with open(args.outdir / "log.txt", "w") as log:
        for step in steps:
            if step != "build" and any(r["step"] == "build" and r["status"] != "ok" for r in results):
                results.append({"step": step, "status": "skipped", "seconds": 0, "result": "the build failed"})
            else:
                results.append(run_step(step, args.outdir, args.jobs, deadline, log))
            if step == "layers":
                log_text = (args.outdir / "log.txt").read_text(errors="replace")
                tables = log_text[log_text.find("===== layers"):]
                (args.outdir / "layers.md").write_text(tables)
            _write_summary(args.outdir, results)  # after every step: a run cut short keeps it
    table = summary_table(results)
    print(table)
    return 0 if all(r["status"] == "ok" for r in results) else 1


def _write_summary(outdir, results):
    (outdir / "summary.md").write_text(summary_table(results) + "\n")
    (outdir / "summary.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
