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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
    totals, calls = collections.Counter(), collections.Counter()
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] += event.time_range.elapsed_us()
            calls[event.name] += 1
    return totals, calls


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=sorted(benchmark.MODELS))
    ap.add_argument("--engine", default="primitives", choices=["primitives", "caffe"])
    ap.add_argument("--batch-size", type=int, default=None, help="default: the model's in minifw bench")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    reason = minifw.devices.unavailable_reason("cuda")
    if reason is not None:
        ap.error(f"device cuda is not available: {reason}")
    batch = args.batch_size or benchmark.DEFAULT_BATCH_SIZES.get(args.model, 64)
    totals, calls = profile(args.model, args.engine, batch, args.iterations)
    step_us = sum(totals.values()) / args.iterations
    print(f"## {args.model} b{batch}, engine {args.engine}: GPU kernel time per iteration "
          f"{step_us / 1000:.2f} ms ({args.iterations} iterations profiled)\n")
    print("| kernel | launches / iteration | ms / iteration | share |")
    print("|---|---|---|---|")
    for name, us in totals.most_common(args.top):
        print(f"| {name[:90]} | {calls[name] / args.iterations:g} | {us / args.iterations / 1000:.3f} | "
              f"{us / args.iterations / step_us:.1%} |")


if __name__ == "__main__":
    main()
