"""Convolution and GEMM: minifw's algorithms against the Caffe-style baseline
(batched im2col + NumPy/OpenBLAS GEMM per group), layer by layer, for LeNet
(batch 64) and Caffe's bvlc_alexnet (batch 16), every direction.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/conv.py

Times are medians of --repeats timed runs, each engine timed in blocks of
three runs (after a warm-up run) that alternate between engines. "speedup"
is baseline time / our best time.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, time_engines, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402
from minifw import ops  # noqa: E402
from minifw.engines import caffe  # noqa: E402

LAYERS = [
    # name, x shape, w shape, stride, padding, groups
    ("lenet conv1", (64, 1, 28, 28), (20, 1, 5, 5), 1, 0, 1),
    ("lenet conv2", (64, 20, 12, 12), (50, 20, 5, 5), 1, 0, 1),
    ("alexnet conv1", (16, 3, 227, 227), (96, 3, 11, 11), 4, 0, 1),
    ("alexnet conv2", (16, 96, 27, 27), (256, 48, 5, 5), 1, 2, 2),
    ("alexnet conv3", (16, 256, 13, 13), (384, 256, 3, 3), 1, 1, 1),
    ("alexnet conv4", (16, 384, 13, 13), (384, 192, 3, 3), 1, 1, 2),
    ("alexnet conv5", (16, 384, 13, 13), (256, 192, 3, 3), 1, 1, 2),
    ("alexnet-small conv1", (64, 1, 32, 32), (32, 1, 5, 5), 1, 2, 1),
    ("alexnet-small conv2", (64, 32, 16, 16), (64, 16, 5, 5), 1, 2, 2),
    ("alexnet-small conv3", (64, 64, 8, 8), (96, 64, 3, 3), 1, 1, 1),
    ("alexnet-small conv4", (64, 96, 8, 8), (96, 48, 3, 3), 1, 1, 2),
    ("alexnet-small conv5", (64, 96, 8, 8), (64, 48, 3, 3), 1, 1, 2),
]


def conv_rows(repeats, layers, directions):
    rows = []
    rng = np.random.default_rng(0)
    for name, xs, ws, stride, padding, groups in layers:
        p = ops.ConvProblem(xs, ws, stride=stride, padding=padding, groups=groups)
        x = rng.standard_normal(xs, dtype=np.float32)
        w = rng.standard_normal(ws, dtype=np.float32)
        dy = rng.standard_normal(p.out_shape, dtype=np.float32)
        kw = dict(stride=stride, padding=padding, groups=groups)
        col_bytes = caffe.col_buffer_bytes(p)
        for direction in directions:
            if direction == "forward":
                base = lambda: caffe.conv2d_forward(x, w, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_forward(x, w, algo=a, **kw))
                        for a in ops.conv_algorithms(p, direction)}
            elif direction == "backward_data":
                base = lambda: caffe.conv2d_backward_data(dy, w, xs, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_backward_data(dy, w, xs, algo=a, **kw))
                        for a in ops.conv_algorithms(p, direction)}
            else:
                base = lambda: caffe.conv2d_backward_filter(x, dy, ws, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_backward_filter(x, dy, ws, algo=a, **kw))
                        for a in ops.conv_algorithms(p, direction)}
            t = time_engines({"caffe": base, **ours}, repeats)
            best = min(ours, key=lambda a: t[a])
            for algo in ["caffe"] + list(ours):
                ws_bytes = col_bytes if algo == "caffe" else ops.conv_workspace_size(p, direction, algo)
                rows.append({
                    "layer": name, "direction": direction,
                    "engine/algorithm": "caffe (im2col + NumPy GEMM)" if algo == "caffe" else algo,
                    "ms": f"{1e3 * t[algo]:.2f}",
                    "GFLOP/s": f"{p.flops() / t[algo] / 1e9:.1f}",
                    "workspace MiB": f"{ws_bytes / 2**20:.2f}",
                    "vs im2col buffer": f"{100 * ws_bytes / col_bytes:.1f}%",
                    "speedup vs caffe": ("" if algo == "caffe" else
                                         f"{t['caffe'] / t[algo]:.2f}x" + (" (best)" if algo == best else "")),
                })
    return rows


# Inner-product layers' forward GEMMs, x (batch x in) times W^T (W: out x in): B transposed.
FC_LAYERS = [("lenet fc1 b64", 64, 500, 800), ("alexnet fc6 b16", 16, 4096, 9216),
             ("alexnet fc7 b16", 16, 4096, 4096), ("alexnet fc8 b16", 16, 1000, 4096)]


def gemm_rows(repeats, layers, fc_layers=FC_LAYERS):
    rng = np.random.default_rng(0)
    shapes = [(f"{n}^3", n, n, n, False) for n in (256, 512, 1024, 2048)]
    for name, xs, ws, stride, padding, groups in layers:
        p = ops.ConvProblem(xs, ws, stride=stride, padding=padding, groups=groups)
        n, k, ho, wo = p.out_shape
        _, cg, r, s = ws
        shapes.append((f"{name} fwd lowered", k // groups, n * ho * wo, cg * r * s, False))
    shapes += [(f"{name} fwd (B^T)", m, n, k, True) for name, m, n, k in fc_layers]
    rows = []
    for label, m, n, k, trans_b in shapes:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
        c = np.empty((m, n), dtype=np.float32)
        t = time_engines({"numpy": lambda: np.matmul(a, b.T if trans_b else b, out=c),
                          "minifw": lambda: ops.gemm(a, b, c, trans_b=trans_b)}, repeats)
        flops = 2.0 * m * n * k
        rows.append({"shape": label, "M x N x K": f"{m} x {n} x {k}",
                     "minifw GFLOP/s": f"{flops / t['minifw'] / 1e9:.1f}",
                     "NumPy GFLOP/s": f"{flops / t['numpy'] / 1e9:.1f}",
                     "ratio": f"{t['numpy'] / t['minifw']:.2f}x"})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--layers", default="", help="comma-separated substrings of layer names to run")
    ap.add_argument("--directions", default="forward,backward_data,backward_filter")
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--skip-conv", action="store_true")
    args = ap.parse_args(argv)
    warn_openblas_env()
    layers = [layer for layer in LAYERS
              if not args.layers or any(s in layer[0] for s in args.layers.split(","))]
    print(header("Convolution and GEMM, float32", "python benchmarks/conv.py " + " ".join(argv or sys.argv[1:])))
    if not args.skip_gemm:
        print("### GEMM: minifw vs NumPy (OpenBLAS)\n")
        print(table(gemm_rows(args.repeats, layers),
                    ["shape", "M x N x K", "minifw GFLOP/s", "NumPy GFLOP/s", "ratio"]))
        print()
    if not args.skip_conv:
        print("### Convolution layers\n")
        print(table(conv_rows(args.repeats, layers, args.directions.split(",")),
                    ["layer", "direction", "engine/algorithm", "ms", "GFLOP/s", "workspace MiB",
                     "vs im2col buffer", "speedup vs caffe"]))


if __name__ == "__main__":
    main()
