"""The cost of one small operation: what the framework adds around the array library's work,
minifw against PyTorch CPU in one run.

Each case applies one operation to 16x16 float32 tensors, whose arithmetic takes well under
a microsecond, so the time is the framework's own: checks, type promotion, the graph node,
the output tensor. "grad" cases record a graph (an operand requires grad); "step" is
(a * b).relu().sum() and its backward, a whole forward and backward walk of three nodes.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/op_overhead.py

Times are medians of --repeats timings of --calls calls each (microseconds per call), the
frameworks timed in alternating blocks after a warm-up (benchmarks/_common.py).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, time_engines, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark needs PyTorch to compare with
    torch = None


def cases(lib):
    a, b = lib.randn(16, 16), lib.randn(16, 16)
    leaf = lib.randn(16, 16, requires_grad=True)

    def step():
        (leaf * b).relu().sum().backward()
    return {
        "a * b": lambda: a * b,
        "a + 1.0": lambda: a + 1.0,
        "a.relu()": lambda: a.relu(),
        "a.sum()": lambda: a.sum(),
        "a.reshape(256)": lambda: a.reshape(256),
        "leaf * b (grad)": lambda: leaf * b,
        "leaf.relu() (grad)": lambda: leaf.relu(),
        "leaf.sum() (grad)": lambda: leaf.sum(),
        "step: forward and backward of 3 ops": step,
    }


def repeated(fn, calls):
    def run():
        for _ in range(calls):
            fn()
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--calls", type=int, default=500, help="calls per timing")
    args = ap.parse_args(argv)
    warn_openblas_env()
    if torch is None:
        ap.error("PyTorch is not importable: this benchmark compares with it")
    torch.set_num_threads(minifw.get_num_threads())
    command = "python benchmarks/op_overhead.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(header("The cost of one small operation: minifw against PyTorch", command.strip(),
                 extra=[f"PyTorch {torch.__version__} on {torch.get_num_threads()} threads"]))
    mine, theirs = cases(minifw), cases(torch)
    rows = []
    for name in mine:
        t = time_engines({"minifw": repeated(mine[name], args.calls),
                          "torch": repeated(theirs[name], args.calls)}, args.repeats)
        us = {k: v / args.calls * 1e6 for k, v in t.items()}
        rows.append({"operation": name, "minifw us": f"{us['minifw']:.2f}",
                     "torch us": f"{us['torch']:.2f}",
                     "minifw / torch": f"{us['minifw'] / us['torch']:.2f}x"})
    print(table(rows, ["operation", "minifw us", "torch us", "minifw / torch"]))


if __name__ == "__main__":
    main()
