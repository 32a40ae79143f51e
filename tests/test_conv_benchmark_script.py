"""benchmarks/conv.py on every device it takes, on layers small enough to run in a test
(the timings are not checked: only that every engine ran and was reported)."""
import pathlib
import runpy

import pytest

import minifw

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "conv.py"
TINY = [("tiny conv", (2, 3, 9, 8), (4, 3, 3, 3), 2, 1, 1), ("tiny grouped", (1, 4, 7, 7), (6, 2, 3, 3), 1, 1, 2)]
DIRECTIONS = ["forward", "backward_data", "backward_filter"]


@pytest.fixture
def conv_script():
    return runpy.run_path(str(SCRIPT))


def _check_rows(rows, device, baseline, extra=()):
    """One row per engine, the baseline first, then each of minifw's algorithms, then `extra`."""
    for name, xs, ws, stride, padding, groups in TINY:
        problem = minifw.ops.ConvProblem(xs, ws, stride=stride, padding=padding, groups=groups)
        for direction in DIRECTIONS:
            got = [r["engine/algorithm"] for r in rows if r["layer"] == name and r["direction"] == direction]
            assert got == [baseline, *minifw.ops.conv_algorithms(problem, direction, device), *extra]
    for r in rows:
        assert float(r["ms"]) >= 0 and float(r["GFLOP/s"]) >= 0
    assert sum(r["speedup vs caffe"].endswith("(best)") for r in rows) == len(TINY) * len(DIRECTIONS)


def test_the_conv_benchmark_batch_option(conv_script):
    layers = conv_script["with_batch"](conv_script["LAYERS"][:2], 5)
    assert [layer[1] for layer in layers] == [(5, 1, 28, 28), (5, 20, 12, 12)]
    assert conv_script["with_batch"](conv_script["LAYERS"][:1], None) == conv_script["LAYERS"][:1]


def test_the_conv_benchmark_on_the_cpu_with_torch(conv_script):
    pytest.importorskip("torch")
    device = conv_script["Device"]("cpu", use_torch=True)
    rows = conv_script["conv_rows"](1, TINY, DIRECTIONS, device)
    _check_rows(rows, "cpu", "caffe (im2col + NumPy GEMM)", extra=("torch (CPU)",))
    gemm = conv_script["gemm_rows"](1, TINY[:1], [("fc", 3, 5, 7)], device=device, sizes=(16,))
    assert [r["shape"] for r in gemm] == ["16^3", "tiny conv fwd lowered", "fc fwd (B^T)"]
    assert all(set(r) == {"shape", "M x N x K", "minifw GFLOP/s", "NumPy GFLOP/s", "ratio", "torch GFLOP/s"}
               for r in gemm)


def test_the_conv_benchmark_on_the_emulator(conv_script):
    device = conv_script["Device"]("cudasim")
    rows = conv_script["conv_rows"](1, TINY, DIRECTIONS, device)
    _check_rows(rows, "cudasim", "caffe (im2col + NumPy GEMM)")


def test_the_conv_benchmark_on_the_gpu_waits_for_it(conv_script, emulated_cuda):
    import cupy
    synced = []
    real = cupy.cuda.Device.synchronize
    cupy.cuda.Device.synchronize = lambda self: synced.append(1) or real(self)
    try:
        device = conv_script["Device"]("cuda")
        rows = conv_script["conv_rows"](1, TINY, DIRECTIONS, device)
        gemm = conv_script["gemm_rows"](1, [], [("fc", 3, 5, 7)], device=device, sizes=(16,))
    finally:
        cupy.cuda.Device.synchronize = real
    _check_rows(rows, "cuda", "caffe (im2col + cuBLAS through CuPy)")
    assert synced
    assert [set(r) for r in gemm] == [{"shape", "M x N x K", "minifw GFLOP/s", "CuPy GFLOP/s", "ratio"}] * 2


def test_the_conv_benchmark_refuses_torch_where_it_cannot_run(conv_script):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit, match="--torch: PyTorch cannot run on device 'cudasim'"):
        conv_script["Device"]("cudasim", use_torch=True)
