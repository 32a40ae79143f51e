"""benchmarks/gpu_kernels.py: its table from profiler events, and its refusals (the
profile itself needs a GPU: gpu_check runs it there)."""
import pathlib
import runpy
import subprocess
import sys
from types import SimpleNamespace

import pytest

import minifw
from childenv import child_env

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_kernels.py"


def _event(name, us, device="gpu"):
    return SimpleNamespace(name=name, device_type=device, time_range=SimpleNamespace(elapsed_us=lambda: us))


def test_kernels_are_summed_by_name_over_the_gpus_events_only():
    script = runpy.run_path(str(SCRIPT))
    events = [_event("gemm", 300.0), _event("pool", 50.0), _event("gemm", 500.0), _event("host_op", 9e6, "cpu"),
              _event("relu", 150.0)]
    totals, calls = script["kernel_times"](events, "gpu")
    assert dict(totals) == {"gemm": 800.0, "pool": 50.0, "relu": 150.0} and calls["gemm"] == 2
    text, step_ms = script["table"](totals, calls, 2, 2)
    assert step_ms == 0.5  # 1,000 us over 2 iterations
    lines = text.splitlines()
    assert lines[2:] == ["| gemm | 1 | 0.400 | 80.0% |", "| relu | 0.5 | 0.075 | 15.0% |"]  # the top 2


@pytest.mark.parametrize("argv, message", [
    (["lenet", "--iterations", "0"], "--iterations: expected a positive integer, got '0'"),
    (["vgg"], "invalid choice: 'vgg'"),
    pytest.param(["lenet"], "device cuda is not available",
                 marks=pytest.mark.skipif(minifw.devices.unavailable_reason("cuda") is None,
                                          reason="cuda is available here")),
])
def test_bad_arguments_and_no_gpu_are_usage_errors(argv, message):
    done = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, env=child_env())
    assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
