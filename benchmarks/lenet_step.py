"""The LeNet training step: batch 64 of 1x28x28 inputs, one step = zero_grad,
forward, cross-entropy, backward, SGD (lr 0.01, momentum 0.9, weight decay
5e-4). Medians over --steps steps after --warmup untimed ones, of the whole
step and of its parts (forward includes the loss).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/lenet_step.py
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/lenet_step.py \\
        --tree before=PATH_TO_OLD_CHECKOUT --tree after=.

With no --tree it measures the minifw this Python imports. With --tree NAME=DIR
(repeatable) each block of steps runs in a child process that imports DIR's own
minifw (PYTHONPATH=DIR, cwd DIR; the child reports which file it imported), and
the trees take turns block by block for --repeats rounds, the order reversed
every other round, so drifts in load hit every tree alike. "ratio" is a tree's
median step over the first tree's; "ratio range" the lowest and highest
per-round ratio of block medians: the noise, which the same tree given twice
shows. On a busy 2-core machine --threads 1 is far steadier: OpenMP threads
that wait at a barrier for a descheduled partner make two-thread steps several
times slower whenever another process runs. Only API that old and new trees
share is used (not Tensor.data, which differs between versions).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, warn_openblas_env  # noqa: E402

PARTS = ("step", "forward", "backward", "sgd")
SETTLE_S = 0.2


def measure(batch_size, steps, warmup, threads):
    """One block in this process: seconds per step, and per part of it."""
    import minifw
    from minifw import nn, optim
    if threads:
        minifw.set_num_threads(threads)
    minifw.manual_seed(0)  # every block and every tree computes the same numbers
    rng = np.random.default_rng(0)
    x = minifw.from_numpy(rng.standard_normal((batch_size, 1, 28, 28), dtype=np.float32))
    y = minifw.from_numpy(rng.integers(0, 10, batch_size, dtype=np.int64))
    model = minifw.models.LeNet()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    times = {part: [] for part in PARTS}
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        if i >= warmup:
            for part, t in zip(PARTS, (t3 - t0, t1 - t0, t2 - t1, t3 - t2)):
                times[part].append(t)
    return {"minifw": os.path.abspath(minifw.__file__), "info": minifw.info(), "times": times}


def child_block(tree, args):
    """One block measured by a child process that imports `tree`'s minifw."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--batch-size", str(args.batch_size),
           "--steps", str(args.steps), "--warmup", str(args.warmup), "--threads", str(args.threads)]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"lenet_step: the child for {tree} failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.splitlines()[-1])
    # An installed minifw (an editable install's import hook, say) could win over PYTHONPATH.
    if not os.path.realpath(result["minifw"]).startswith(os.path.join(os.path.realpath(tree), "")):
        sys.exit(f"lenet_step: the child for {tree} imported {result['minifw']}, not that tree's minifw")
    return result


def summarize(blocks, first):
    """Per tree: pooled medians in ms, the range of block medians, ratios to the first tree."""
    def block_medians(name):
        return [np.median(b["times"]["step"]) for b in blocks[name]]
    pooled = {name: {part: 1e3 * float(np.median(sum((b["times"][part] for b in bs), [])))
                     for part in PARTS} for name, bs in blocks.items()}
    rows = []
    for name in blocks:
        medians, round_ratios = block_medians(name), np.divide(block_medians(name), block_medians(first))
        rows.append({"tree": name, **{f"{part} ms": f"{pooled[name][part]:.2f}" for part in PARTS},
                     "block medians ms": f"{1e3 * min(medians):.2f}-{1e3 * max(medians):.2f}",
                     "ratio": f"{pooled[name]['step'] / pooled[first]['step']:.3f}",
                     "ratio range": f"{min(round_ratios):.3f}-{max(round_ratios):.3f}",
                     "minifw": blocks[name][0]["minifw"]})
    return rows, pooled


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                    help="a source tree to measure (repeatable); ratios are to the first")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=50, help="timed steps per block")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps before each block")
    ap.add_argument("--repeats", type=int, default=5, help="blocks per tree")
    ap.add_argument("--threads", type=int, default=0, help="minifw.set_num_threads (0: its default)")
    ap.add_argument("--json", metavar="PATH", help="also write every block's step times here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.batch_size, args.steps, args.warmup, args.threads)))
        return
    warn_openblas_env()
    trees = {name: os.path.abspath(d) for name, d in
             (t.split("=", 1) if "=" in t else (os.path.basename(os.path.abspath(t)), t) for t in args.tree)}
    if len(trees) != len(args.tree):
        sys.exit("lenet_step: give each --tree a different NAME (NAME=DIR)")
    for d in trees.values():
        if not os.path.isfile(os.path.join(d, "minifw", "__init__.py")):
            sys.exit(f"lenet_step: --tree {d}: expected a source tree with minifw/__init__.py in it")
    run = {name: (lambda d=d: child_block(d, args)) for name, d in trees.items()} or \
        {"current": lambda: measure(args.batch_size, args.steps, args.warmup, args.threads)}
    blocks = {name: [] for name in run}
    for r in range(args.repeats):
        for name in (list(run) if r % 2 == 0 else list(run)[::-1]):
            # Children have exited, so no worker thread spins on; the pause still gives each block
            # the same start (and in-process blocks OpenMP's and OpenBLAS's spinning workers time to sleep).
            time.sleep(SETTLE_S)
            blocks[name].append(run[name]())
    first = next(iter(run))
    rows, pooled = summarize(blocks, first)
    command = "python benchmarks/lenet_step.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(header(f"LeNet training step, batch {args.batch_size}", command, info=blocks[first][0]["info"]))
    print(f"{args.repeats} blocks per tree of {args.steps} steps after {args.warmup} warm-up steps; "
          f"medians over all blocks; ratios to {first}.\n")
    print(table(rows, ["tree", "step ms", "block medians ms", "ratio", "ratio range", "forward ms",
                       "backward ms", "sgd ms"]))
    print()
    for row in rows:
        print(f"- {row['tree']}: {row['minifw']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "trees": trees, "median_ms": pooled,
                       "blocks": {name: [b["times"] for b in bs] for name, bs in blocks.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
