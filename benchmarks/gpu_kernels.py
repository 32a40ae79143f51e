"""Where a training step's GPU time goes, kernel by kernel.

    python benchmarks/gpu_kernels.py MODEL [--engine primitives] [--batch-size B] [--iterations N] [--top K]

runs `minifw bench`'s training step of MODEL on device "cuda" under PyTorch's profiler,
which records every kernel the process launches on the GPU (minifw's own, CuPy's, cuBLAS's:
CUPTI sees them all), and prints the kernels by their total GPU time per iteration, with
their share of the step's. A kernel's name is the one minifw launches it under (the
`launch("name", ...)` of native/cuda), or the library's. Needs a GPU, CuPy and PyTorch.
"""
import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402,F401  (which minifw: the checkout's when it is built in place)

import minifw  # noqa: E402
from minifw import benchmark, nn  # noqa: E402


def profile(model_name, engine, batch_size, iterations, warmup=3):
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    model, optimizer, x, target = benchmark._setup(model_name, batch_size, device="cuda")
    loss_fn = nn.CrossEntropyLoss()
    sync = benchmark._synchronizer((engine,), "cuda")
    with minifw.engine(engine):
        for _ in range(warmup):
            benchmark.time_iteration(model, optimizer, x, target, loss_fn, sync=sync)
        with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iterations):
                benchmark.time_iteration(model, optimizer, x, target, loss_fn, sync=sync)
        torch.cuda.synchronize()
    return kernel_times(prof.events(), torch.autograd.DeviceType.CUDA)


def kernel_times(events, gpu):
    """(total microseconds, launches) per kernel name, of the profiler's events on `gpu`."""
    totals, calls = collections.Counter(), collections.Counter()
    for event in events:
        if event.device_type == gpu:
            totals[event.name] += event.time_range.elapsed_us()
            calls[event.name] += 1
    return totals, calls


def table(totals, calls, iterations, top):
    """The kernels by GPU time per iteration, a Markdown table, and the step's kernel time
    (ms per iteration)."""
    step_us = sum(totals.values()) / iterations
    lines = ["| kernel | launches / iteration | ms / iteration | share |", "|---|---|---|---|"]
    for name, us in totals.most_common(top):
        share = f"{us / iterations / step_us:.1%}" if step_us else "-"
        lines.append(f"| {name[:90]} | {calls[name] / iterations:g} | {us / iterations / 1000:.3f} | {share} |")
    return "\n".join(lines), step_us / 1000


def _positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=sorted(benchmark.MODELS))
    ap.add_argument("--engine", default="primitives", choices=["primitives", "caffe"])
    ap.add_argument("--batch-size", type=_positive, default=None, help="default: the model's in minifw bench")
    ap.add_argument("--iterations", type=_positive, default=5)
    ap.add_argument("--top", type=_positive, default=25)
    args = ap.parse_args(argv)
    reason = minifw.devices.unavailable_reason("cuda")
    if reason is not None:
        ap.error(f"device cuda is not available: {reason}")
    batch = args.batch_size or benchmark.DEFAULT_BATCH_SIZES.get(args.model, 64)
    text, step_ms = table(*profile(args.model, args.engine, batch, args.iterations), args.iterations, args.top)
    print(f"## {args.model} b{batch}, engine {args.engine}: GPU kernel time per iteration "
          f"{step_ms:.2f} ms ({args.iterations} iterations profiled)\n")
    print(text)


if __name__ == "__main__":
    main()
