"""tests/gpu_check.py, the one command for a machine with a GPU: its steps' commands and
selections, and its running, summary and exit status (with stand-in commands: there is no
GPU here)."""
import os
import subprocess
import sys
import time

import pytest

import gpu_check
from childenv import child_env


# Collecting as on a machine with a GPU: "cuda" is taken for available (nothing runs).
PRETEND_GPU = """import minifw.devices as d
_real = d.unavailable_reason
d.unavailable_reason = lambda t: None if t == "cuda" else _real(t)
"""


def _collected(files, selection, tmp_path):
    (tmp_path / "pretend_gpu.py").write_text(PRETEND_GPU)
    env = child_env()  # this test's own minifw (the installed one in CI), then the plugin's folder
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(tmp_path)])
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "pretend_gpu", *files, "-k", selection], cwd=gpu_check.ROOT, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_step_has_commands(tmp_path):
    for step in gpu_check.STEPS:
        for label, argv, env in gpu_check.commands(step, tmp_path, 4):
            assert label and argv and all(isinstance(a, str) for a in argv) and isinstance(env, dict)
    with pytest.raises(ValueError, match="unknown step 'gpu'"):
        gpu_check.commands("gpu", tmp_path, 4)


def test_the_build_targets_this_gpu_and_the_benches_write_json(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "_compute_capability", lambda: "90")
    configure = gpu_check.commands("build", tmp_path, 4)[0][1]
    assert "-DMINIFW_CUDA=ON" in configure and "-DMINIFW_CUDA_ARCHITECTURES=90" in configure
    benches = gpu_check.commands("bench", tmp_path, 4)
    assert [argv[argv.index("--json") + 1] for _, argv, _ in benches] == [
        str(tmp_path / f"bench_{model}.json") for model, _, _ in gpu_check.BENCH]


def test_the_script_starts_before_minifw_is_built():
    # On a fresh machine the build step makes the extension: nothing before it may import
    # minifw (None in sys.modules makes every import of it fail)
    code = ("import sys, runpy; sys.modules['minifw'] = None; "
            f"g = runpy.run_path({str(gpu_check.ROOT / 'tests' / 'gpu_check.py')!r}, run_name='gpu_check'); "
            "print(g['STEPS'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and "environment" in done.stdout, done.stderr[-2000:]


def test_the_sanitizers_select_kernel_tests_on_the_gpu(tmp_path):
    kernel_files = gpu_check._kernel_test_files()
    selected = _collected(kernel_files, gpu_check.SANITIZE_SELECTION, tmp_path)
    files = {line.split("::")[0] for line in selected}
    assert files == set(kernel_files), set(kernel_files) - files
    assert 100 < len(selected) < 800, len(selected)
    assert not [line for line in selected if "cudasim" in line or "emulator" in line]
    assert not [line for line in selected if "float64" in line and "test_tf32.py" not in line]
    # The convolution and recurrent kernels' conformance tests run there on the GPU too.
    for name in ("test_conv.py::test_cuda_kernels[", "test_rnn.py::test_cuda_kernels_give_the_cpus"):
        assert [line for line in selected if name in line and line.endswith("-gpu]")], name
    race = _collected(gpu_check.RACE_TEST_FILES, gpu_check.SANITIZE_SELECTION, tmp_path)
    assert {line.split("::")[0] for line in race} == set(gpu_check.RACE_TEST_FILES)


def test_the_gpu_tests_are_those_on_the_gpu(tmp_path):
    # The whole suite collects where "cuda" is available (a collection error would stop the run).
    selected = _collected(["tests"], gpu_check.GPU_TESTS, tmp_path)
    assert not [line for line in selected if "cudasim" in line or "emulator" in line or "fakecupy" in line]
    files = {line.split("::")[0] for line in selected}
    assert {"tests/ops/test_conv.py", "tests/ops/test_rnn.py", "tests/ops/test_pooling.py",
            "tests/test_device_tensors.py"} <= files
    assert len(selected) > 2000


def _fake(monkeypatch, scripts):
    """Each step runs Python code instead of its commands."""
    monkeypatch.setattr(gpu_check, "commands", lambda step, outdir, jobs: [
        (f"{step} {i}", [sys.executable, "-c", code], {}) for i, code in enumerate(scripts[step])])


def test_a_run_writes_the_log_and_summary(tmp_path, monkeypatch, capsys):
    _fake(monkeypatch, {"build": ["print('built')"], "tests": ["print('x'); print('12 passed in 3s')"],
                        "layers": ["print('| conv | 1.0 |')"]})
    assert gpu_check.main([str(tmp_path), "--steps", "build,tests,layers"]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert "| tests | ok |" in summary and "tests 0: 12 passed in 3s" in summary
    assert capsys.readouterr().out.strip() == summary.strip()
    log = (tmp_path / "log.txt").read_text()
    assert "===== build: build 0" in log and "built" in log and "12 passed" in log
    assert "| conv | 1.0 |" in (tmp_path / "layers.md").read_text()


def test_a_failing_step_fails_the_run_and_a_failed_build_skips_the_rest(tmp_path, monkeypatch):
    _fake(monkeypatch, {"tests": ["import sys; print('1 failed'); sys.exit(1)"], "bench": ["print('ok')"]})
    assert gpu_check.main([str(tmp_path), "--steps", "tests,bench"]) == 1
    assert "| tests | failed |" in (tmp_path / "summary.md").read_text()
    assert "rc 1, 1 failed" in (tmp_path / "summary.md").read_text()
    _fake(monkeypatch, {"build": ["import sys; sys.exit(2)", "print('never')"], "tests": ["print('never')"]})
    assert gpu_check.main([str(tmp_path), "--steps", "build,tests"]) == 1
    summary = (tmp_path / "summary.md").read_text()
    assert "| build | failed |" in summary and "| tests | skipped |" in summary
    assert "never" not in (tmp_path / "log.txt").read_text()


def test_the_budget_and_the_step_limits_stop_commands_and_what_they_started(tmp_path, monkeypatch):
    # the command starts a child that outlives it unless stopped too (as pytest's workers, or
    # the program compute-sanitizer runs); its output so far is in the log
    marker = f"gpu_check_grandchild_{os.getpid()}"
    code = ("import subprocess, sys, time; print('started', flush=True); "
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # {marker}']); "
            "time.sleep(60)")
    _fake(monkeypatch, {"tests": [code], "bench": ["print('primitives vs torch: 2.00x the speed'); print('json: x')"]})
    monkeypatch.setitem(gpu_check.LIMITS, "tests", 7)
    start = time.monotonic()
    assert gpu_check.main([str(tmp_path), "--steps", "tests,bench"]) == 1
    assert time.monotonic() - start < 13  # 7 s, not the grandchild's 60 (nor a wait for its pipe)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left running: {left}"
    summary = (tmp_path / "summary.md").read_text()
    assert "| tests | timeout |" in summary and "stopped at the time limit" in summary
    assert "| bench | ok |" in summary and "primitives vs torch: 2.00x the speed" in summary
    assert "started" in (tmp_path / "log.txt").read_text()
    assert gpu_check.main([str(tmp_path), "--steps", "tests", "--budget", "1"]) == 1
    assert "no time left" in (tmp_path / "summary.md").read_text()


def test_unknown_steps_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        gpu_check.main([str(tmp_path), "--steps", "tests,gpu"])
    assert e.value.code == 2 and "--steps: unknown gpu" in capsys.readouterr().err
