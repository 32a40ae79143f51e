"""Convolution and GEMM: minifw's algorithms against the Caffe-style baseline
(batched im2col + NumPy/OpenBLAS GEMM per group), layer by layer, for LeNet
(batch 64) and Caffe's bvlc_alexnet (batch 16), every direction.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/conv.py

Times are medians of --repeats timed runs, each engine timed in blocks of
three runs (after a warm-up run) that alternate between engines. "speedup"
is baseline time / our best time.

On a GPU (`--device cuda`) the baseline is the caffe engine's GPU path (an
im2col kernel per image, then cuBLAS through CuPy), the GEMMs are compared with
CuPy's (cuBLAS), and every call is timed up to the GPU's finishing it.
`--torch` adds PyTorch's convolution (cuDNN on the GPU; TF32 off, as minifw's
default) and matmul as one more engine. `--batch` sets every layer's batch
(AlexNet's usual GPU batch is 128). `--device cudasim` runs the CUDA kernels
on the emulator: slow, for trying the benchmark on small batches without a GPU.
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


def with_batch(layers, batch):
    """`layers` with every input's batch set to `batch` (None: as listed)."""
    return [layer if batch is None else (layer[0], (batch,) + layer[1][1:]) + layer[2:] for layer in layers]


class Device:
    """Where the benchmark runs: its arrays, and each timed call made to wait for its work."""

    def __init__(self, name, use_torch=False):
        self.dev = minifw.devices.get(name, "benchmarks/conv.py")
        self.name, self.gpu = str(self.dev), self.dev.type != "cpu"
        self.xp = minifw.devices.array_module(self.dev)
        self.torch = _torch(self.dev) if use_torch else None

    def array(self, a):
        return minifw.devices.to_device(a, self.dev)

    def timed(self, fn):
        """fn, made to return only once the device has done the work it queued."""
        if self.dev.type != "cuda":
            return fn
        sync = self.xp.cuda.Device().synchronize
        if self.torch is None:
            return lambda: (fn(), sync())
        return lambda: (fn(), sync(), self.torch.cuda.synchronize())

    def torch_tensor(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.dev.type)

    @property
    def blas(self):
        return "cuBLAS through CuPy" if self.dev.type == "cuda" else "NumPy GEMM"


def _torch(dev):
    """PyTorch, set to compute as minifw does on `dev`: its threads, TF32 off (cuDNN's default
    is on), cuDNN's own heuristics choosing the algorithm (minifw's "auto" is a heuristic too)."""
    import torch

    if dev.type not in ("cpu", "cuda") or (dev.type == "cuda" and not torch.cuda.is_available()):
        raise SystemExit(f"--torch: PyTorch cannot run on device {str(dev)!r} here")
    torch.set_num_threads(minifw.get_num_threads())
    torch.backends.cudnn.allow_tf32 = minifw.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = minifw.backends.cuda.matmul.allow_tf32
    return torch


def torch_conv(device, direction, x, w, dy, stride, padding, groups):
    """PyTorch's convolution in `direction` on host arrays x, w, dy copied to the device."""
    torch = device.torch
    xt, wt, dyt = (device.torch_tensor(a) for a in (x, w, dy))
    mask = {"forward": None, "backward_data": [True, False, False], "backward_filter": [False, True, False]}
    if direction == "forward":
        return lambda: torch.nn.functional.conv2d(xt, wt, stride=stride, padding=padding, groups=groups)
    return lambda: torch.ops.aten.convolution_backward(
        dyt, xt, wt, None, [stride] * 2, [padding] * 2, [1, 1], False, [0, 0], groups, mask[direction])


def conv_rows(repeats, layers, directions, device=None):
    device = device or Device("cpu")
    rows = []
    rng = np.random.default_rng(0)
    for name, xs, ws, stride, padding, groups in layers:
        p = ops.ConvProblem(xs, ws, stride=stride, padding=padding, groups=groups)
        hx = rng.standard_normal(xs, dtype=np.float32)
        hw = rng.standard_normal(ws, dtype=np.float32)
        hdy = rng.standard_normal(p.out_shape, dtype=np.float32)
        x, w, dy = (device.array(a) for a in (hx, hw, hdy))
        kw = dict(stride=stride, padding=padding, groups=groups)
        col_bytes = caffe.col_buffer_bytes(p, device.name)
        for direction in directions:
            algos = ops.conv_algorithms(p, direction, device.name)
            if direction == "forward":
                base = lambda: caffe.conv2d_forward(x, w, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_forward(x, w, algo=a, **kw)) for a in algos}
            elif direction == "backward_data":
                base = lambda: caffe.conv2d_backward_data(dy, w, xs, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_backward_data(dy, w, xs, algo=a, **kw)) for a in algos}
            else:
                base = lambda: caffe.conv2d_backward_filter(x, dy, ws, **kw)  # noqa: E731
                ours = {a: (lambda a=a: ops.conv2d_backward_filter(x, dy, ws, algo=a, **kw)) for a in algos}
            engines = {"caffe": base, **ours}
            if device.torch is not None:
                engines["torch"] = torch_conv(device, direction, hx, hw, hdy, stride, padding, groups)
            t = time_engines({e: device.timed(fn) for e, fn in engines.items()}, repeats)
            best = min(ours, key=lambda a: t[a])
            for algo in engines:
                if algo == "torch":
                    label, ws_text, share = f"torch ({'cuDNN' if device.gpu else 'CPU'})", "", ""
                else:
                    ws_bytes = (col_bytes if algo == "caffe"
                                else ops.conv_workspace_size(p, direction, algo, device.name))
                    label = f"caffe (im2col + {device.blas})" if algo == "caffe" else algo
                    ws_text, share = f"{ws_bytes / 2**20:.2f}", f"{100 * ws_bytes / col_bytes:.1f}%"
                rows.append({
                    "layer": name, "direction": direction, "engine/algorithm": label,
                    "ms": f"{1e3 * t[algo]:.2f}",
                    "GFLOP/s": f"{p.flops() / t[algo] / 1e9:.1f}",
                    "workspace MiB": ws_text, "vs im2col buffer": share,
                    "speedup vs caffe": ("" if algo == "caffe" else
                                         f"{t['caffe'] / t[algo]:.2f}x" + (" (best)" if algo == best else "")),
                })
    return rows


# Inner-product layers' forward GEMMs, x (batch x in) times W^T (W: out x in): B transposed;
# and the char-LSTM's recurrent product, h (batch x hidden) times W_hh^T (4 hidden x hidden),
# one per time step and layer (64 x 2 in a forward pass), the bulk of its GPU step.
FC_LAYERS = [("lenet fc1 b64", 64, 500, 800), ("alexnet fc6 b16", 16, 4096, 9216),
             ("alexnet fc7 b16", 16, 4096, 4096), ("alexnet fc8 b16", 16, 1000, 4096),
             ("char-lstm step b32", 32, 2048, 512)]


def gemm_rows(repeats, layers, fc_layers=FC_LAYERS, device=None, sizes=(256, 512, 1024, 2048)):
    device = device or Device("cpu")
    lib = "CuPy" if device.dev.type == "cuda" else "NumPy"
    rng = np.random.default_rng(0)
    shapes = [(f"{n}^3", n, n, n, False) for n in sizes]
    for name, xs, ws, stride, padding, groups in layers:
        p = ops.ConvProblem(xs, ws, stride=stride, padding=padding, groups=groups)
        n, k, ho, wo = p.out_shape
        _, cg, r, s = ws
        shapes.append((f"{name} fwd lowered", k // groups, n * ho * wo, cg * r * s, False))
    shapes += [(f"{name} fwd (B^T)", m, n, k, True) for name, m, n, k in fc_layers]
    rows = []
    for label, m, n, k, trans_b in shapes:
        ha = rng.standard_normal((m, k), dtype=np.float32)
        hb = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
        a, b = device.array(ha), device.array(hb)
        c = minifw.devices.empty((m, n), np.float32, device.dev)
        engines = {"library": lambda: device.xp.matmul(a, b.T if trans_b else b, out=c),
                   "minifw": lambda: ops.gemm(a, b, c, trans_b=trans_b)}
        if device.torch is not None:
            at, bt = device.torch_tensor(ha), device.torch_tensor(hb)
            ct = device.torch.empty((m, n), dtype=device.torch.float32, device=at.device)
            engines["torch"] = lambda: device.torch.matmul(at, bt.T if trans_b else bt, out=ct)
        t = time_engines({e: device.timed(fn) for e, fn in engines.items()}, repeats)
        flops = 2.0 * m * n * k
        row = {"shape": label, "M x N x K": f"{m} x {n} x {k}",
               "minifw GFLOP/s": f"{flops / t['minifw'] / 1e9:.1f}",
               f"{lib} GFLOP/s": f"{flops / t['library'] / 1e9:.1f}",
               "ratio": f"{t['library'] / t['minifw']:.2f}x"}
        if device.torch is not None:
            row["torch GFLOP/s"] = f"{flops / t['torch'] / 1e9:.1f}"
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--layers", default="", help="comma-separated substrings of layer names to run")
    ap.add_argument("--directions", default="forward,backward_data,backward_filter")
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--skip-conv", action="store_true")
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda, or cudasim (the emulator: slow)")
    ap.add_argument("--torch", action="store_true", help="PyTorch's convolution and matmul as one more engine")
    ap.add_argument("--batch", type=int, default=None, help="every layer's batch (default: as listed)")
    ap.add_argument("--gemm-sizes", default="256,512,1024,2048", help="the square GEMMs' sizes")
    args = ap.parse_args(argv)
    warn_openblas_env()
    device = Device(args.device, args.torch)
    layers = with_batch([layer for layer in LAYERS
                         if not args.layers or any(s in layer[0] for s in args.layers.split(","))], args.batch)
    extra = []
    if device.dev.type == "cuda":
        g = minifw.devices.gpu_info()
        extra.append(f"GPU: {g['name']} (compute capability {g['compute_capability']}, "
                     f"{g['memory_bytes'] / 2**30:.0f} GiB); CuPy {g['cupy']}, CUDA runtime "
                     f"{g['cuda_runtime']}, driver {g['cuda_driver']}")
    if device.torch is not None:
        extra.append(f"PyTorch {device.torch.__version__}, TF32 "
                     f"{'on' if device.torch.backends.cudnn.allow_tf32 else 'off'}")
    print(header(f"Convolution and GEMM, float32, device {device.name}",
                 "python benchmarks/conv.py " + " ".join(argv or sys.argv[1:]), extra=extra))
    if not args.skip_gemm:
        lib = "CuPy (cuBLAS)" if device.dev.type == "cuda" else "NumPy (OpenBLAS)"
        print(f"### GEMM: minifw vs {lib}\n")
        sizes = [int(n) for n in args.gemm_sizes.split(",") if n]
        rows = gemm_rows(args.repeats, layers, device=device, sizes=sizes)
        print(table(rows, list(rows[0]) if rows else []))
        print()
    if not args.skip_conv:
        print("### Convolution layers\n")
        print(table(conv_rows(args.repeats, layers, args.directions.split(","), device),
                    ["layer", "direction", "engine/algorithm", "ms", "GFLOP/s", "workspace MiB",
                     "vs im2col buffer", "speedup vs caffe"]))


if __name__ == "__main__":
    main()
