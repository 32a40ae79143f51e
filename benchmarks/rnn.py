"""Recurrent layers: one training step of a whole layer (forward, backward data,
backward weights; no optimizer), three engines timed in one run:

    primitives  minifw.ops: the whole multi-layer sequence in one native call per pass
    caffe       minifw.engines.caffe: the classic loop, one NumPy GEMM per step
    torch       torch.nn.LSTM / GRU with the same weights, forward + backward of
                sum(y * dy), on as many threads as minifw (skipped when torch is
                not importable)

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/rnn.py

Times are medians of --repeats timed steps, each engine timed in blocks of three
steps (after a warm-up step) that alternate between engines. "speedup vs X" is
X's time / the primitives' time. minifw's engines fill one reserve, allocated once,
at every step, as minifw.nn's recurrent layers reuse theirs (a new one each step is
tens of MiB of fresh pages to fault in). Peak memory is measured apart from the timing,
over building the inputs and weights and one step: tracemalloc for minifw's
engines (NumPy reports its arrays to it; memory the native kernels allocate
themselves is not seen), PyTorch's profiler memory events for torch.
"""
import argparse
import os
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, time_engines, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402
from minifw import ops  # noqa: E402
from minifw.engines import caffe  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark runs without it, leaving torch out
    torch = None

SHAPES = {
    # key: label, mode, input size, hidden size, layers, T, N
    "1": ("LSTM I 128, H 512, 2 layers, T 64, N 32 (char-LSTM)", "lstm", 128, 512, 2, 64, 32),
    "2": ("LSTM I 650, H 650, 2 layers, T 35, N 20", "lstm", 650, 650, 2, 35, 20),
    "3": ("GRU I 128, H 512, 2 layers, T 64, N 32", "gru", 128, 512, 2, 64, 32),
}
MINIFW_ENGINES = {"primitives": ops, "caffe": caffe}


def make_problem(shape, seed=0):
    """The descriptor and float32 arrays of one shape: x, h0, c0 (LSTM) or None, weights, dy."""
    _, mode, i, h, layers, t, n = shape
    desc = ops.RNNDescriptor(mode, i, h, layers)
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(h)  # PyTorch's initialization
    arrays = {
        "x": rng.standard_normal((t, n, i), dtype=np.float32),
        "h0": rng.standard_normal((layers, n, h), dtype=np.float32),
        "c0": rng.standard_normal((layers, n, h), dtype=np.float32) if mode == "lstm" else None,
        "w": rng.uniform(-bound, bound, desc.weight_count()).astype(np.float32),
        "dy": rng.standard_normal((t, n, h), dtype=np.float32),
    }
    return desc, arrays


def minifw_step(engine, desc, a):
    """A function running one step on `engine` (minifw.ops or minifw.engines.caffe); it
    returns (dx, dw)."""
    dw = np.zeros_like(a["w"])
    # One reserve, filled by every step's forward, as nn's recurrent layers reuse theirs.
    t, n = a["x"].shape[:2]
    reserve = np.empty(desc.reserve_size(t, n), a["x"].dtype)

    def step():
        engine.rnn_forward(desc, a["x"], a["h0"], a["c0"], a["w"], True, reserve=reserve)
        dx, _, _ = engine.rnn_backward_data(desc, a["x"], a["w"], reserve, a["h0"], a["c0"], a["dy"],
                                            None, None)
        dw[...] = 0
        engine.rnn_backward_weights(desc, a["x"], reserve, a["h0"], dw)
        return dx, dw
    return step


def torch_step(desc, a):
    """The same step in PyTorch: its layer with the weights copied in, the gradient of
    sum(y * dy) with respect to x, h0 (and c0) and the weights; returns (dx, dw) as NumPy
    arrays in minifw's flat layout."""
    cls = torch.nn.LSTM if desc.mode == "lstm" else torch.nn.GRU
    layer = cls(desc.input_size, desc.hidden_size, desc.num_layers)
    with torch.no_grad():
        for name, view in desc.views(a["w"]).items():
            getattr(layer, name).copy_(torch.from_numpy(view))
    x = torch.tensor(a["x"], requires_grad=True)
    h0 = torch.tensor(a["h0"], requires_grad=True)
    c0 = None if a["c0"] is None else torch.tensor(a["c0"], requires_grad=True)
    dy = torch.tensor(a["dy"])
    params = [getattr(layer, name) for name, _ in desc.weight_shapes()]

    def step():
        for p in (x, h0, c0, *params):
            if p is not None:
                p.grad = None
        y, _ = layer(x, h0 if c0 is None else (h0, c0))
        (y * dy).sum().backward()
        return x.grad, params
    return step


def as_numpy(dx, dw):
    if isinstance(dw, list):  # torch: the named gradients, packed as minifw's flat weights
        dw = np.concatenate([p.grad.numpy().ravel() for p in dw])
        dx = dx.numpy()
    return dx, dw


def minifw_peak_memory(engine, shape):
    """Bytes NumPy held at most while the problem was built and one step ran on `engine`."""
    caffe.release_buffers()
    minifw.devices.workspace("cpu").clear()
    tracemalloc.start()
    try:
        desc, a = make_problem(shape)
        minifw_step(engine, desc, a)()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        caffe.release_buffers()


def torch_peak_memory(shape):
    """Bytes PyTorch's allocator held at most while its layer and tensors were built and one
    step ran, from its profiler's memory events; None when it reported none."""
    from minifw.benchmark import torch_profiled_peak

    desc, a = make_problem(shape)
    return torch_profiled_peak(lambda: torch_step(desc, a)())


def relative_difference(ours, theirs):
    return max(float(np.max(np.abs(o - t)) / max(float(np.max(np.abs(o))), 1e-30))
               for o, t in zip(ours, theirs))


def rows_for(shape, repeats, with_torch):
    desc, a = make_problem(shape)
    steps = {name: minifw_step(engine, desc, a) for name, engine in MINIFW_ENGINES.items()}
    if with_torch:
        steps["torch"] = torch_step(desc, a)
    reference = as_numpy(*steps["primitives"]())
    reference = (reference[0].copy(), reference[1].copy())
    diffs = {name: relative_difference(reference, as_numpy(*step())) for name, step in steps.items()}
    t = time_engines(steps, repeats)
    peaks = {name: minifw_peak_memory(engine, shape) for name, engine in MINIFW_ENGINES.items()}
    if with_torch:
        peaks["torch"] = torch_peak_memory(shape)
    rows = []
    for name in steps:
        rows.append({
            "shape": shape[0], "engine": name,
            "ms": f"{1e3 * t[name]:.1f}",
            "speedup of primitives": "" if name == "primitives" else f"{t[name] / t['primitives']:.2f}x",
            "peak MiB": "not measured" if peaks[name] is None else f"{peaks[name] / 2**20:.1f}",
            "max rel. diff (dx, dw) vs primitives": "" if name == "primitives" else f"{diffs[name]:.1e}",
        })
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated keys of {sorted(SHAPES)}")
    ap.add_argument("--threads", type=int, default=None, help="minifw's and PyTorch's threads (default: minifw's)")
    args = ap.parse_args(argv)
    warn_openblas_env()
    keys = args.shapes.split(",")
    unknown = [k for k in keys if k not in SHAPES]
    if unknown:
        ap.error(f"--shapes: unknown {unknown}; choose from {sorted(SHAPES)}")
    if args.threads is not None:
        minifw.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(minifw.get_num_threads())
        torch_line = f"PyTorch {torch.__version__} on {torch.get_num_threads()} threads"
    else:
        torch_line = "PyTorch not importable: torch left out"
    command = "python benchmarks/rnn.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(header("Recurrent layers, float32: one training step of the layer", command.strip(),
                 extra=[torch_line, "caffe's GEMMs are NumPy's (OpenBLAS, its own thread count)"]))
    rows = []
    for key in keys:
        rows += rows_for(SHAPES[key], args.repeats, torch is not None)
    print(table(rows, ["shape", "engine", "ms", "speedup of primitives", "peak MiB",
                       "max rel. diff (dx, dw) vs primitives"]))


if __name__ == "__main__":
    main()
