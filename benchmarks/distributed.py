"""Data-parallel training on one machine: 1 process x C threads against C processes x 1
thread (and 1 x 1), the same global batch, time per global batch and the share of it spent in
all-reduce.

    python benchmarks/distributed.py [--iterations 20] [--cores 2]

For each model (LeNet, global batch 64; AlexNetSmall, global batch 32) it launches
`mpiexec -n P python benchmarks/distributed.py --worker ...` for P = 1 and P = cores. Each
rank trains on global batch / P samples per step (SGD, DistributedDataParallel when P > 1) and
reports the median step time, the time the step spent inside DDP's reduction (copies into the
buckets, the all-reduce calls and the final wait: the communication that backward did not
hide) and, separately, the time of one blocking all-reduce of every gradient (what a step
would pay without overlap). Needs mpi4py and mpiexec (pip install ".[distributed]").
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

MODELS = {"lenet": ("LeNet", 28, 64), "alexnet-small": ("AlexNetSmall", 32, 32)}


def worker(model_name, global_batch, iterations, threads):
    import minifw
    import minifw.distributed as dist
    from minifw import nn
    from minifw.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi", timeout=300)
    rank, size = dist.get_rank(), dist.get_world_size()
    minifw.set_num_threads(threads)
    cls, side, _ = MODELS[model_name]
    minifw.manual_seed(0)
    model = getattr(minifw.models, cls)()
    batch = global_batch // size
    rng = np.random.default_rng(rank)
    x = minifw.from_numpy(rng.standard_normal((batch, 1, side, side)).astype(np.float32))
    y = minifw.from_numpy(rng.integers(0, 10, batch).astype(np.int64))
    reduce_seconds = [0.0]
    if size > 1:
        model = DDP(model)
        launch = model._launch_ready

        def timed_launch():  # every entry of the reduction into this step's time
            start = time.perf_counter()
            launch()
            reduce_seconds[0] += time.perf_counter() - start
        object.__setattr__(model, "_launch_ready", timed_launch)
    opt = minifw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    steps, reduces = [], []
    for i in range(iterations + 3):
        dist.barrier()  # the ranks start each step together
        reduce_seconds[0] = 0.0
        start = time.perf_counter()
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        if i >= 3:  # after warm-up
            steps.append(time.perf_counter() - start)
            reduces.append(reduce_seconds[0])
    params = [p for p in model.parameters()]
    flat = minifw.from_numpy(np.concatenate([p.detach().numpy().ravel() for p in params]))
    blocking = []
    for _ in range(5):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(flat, op=dist.ReduceOp.AVG)
        blocking.append(time.perf_counter() - start)
    # the slowest rank sets the pace: report rank-wise maxima of the medians
    result = np.array([np.median(steps), np.median(reduces), np.median(blocking)])
    t = minifw.from_numpy(result)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(json.dumps({"model": cls, "ranks": size, "threads": threads, "global_batch": global_batch,
                          "parameters": int(flat.numel()), "step_ms": 1e3 * t.numpy()[0],
                          "reduce_ms": 1e3 * t.numpy()[1], "blocking_allreduce_ms": 1e3 * t.numpy()[2]}))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--cores", type=int, default=2, help="cores to share between the ranks")
    parser.add_argument("--worker", nargs=4, metavar=("MODEL", "GLOBAL_BATCH", "ITERATIONS", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        model, batch, iterations, threads = args.worker
        return worker(model, int(batch), int(iterations), int(threads))
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit("benchmarks/distributed.py: mpiexec not found (pip install mpi4py mpich)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    print(f"{'model':<13} {'ranks x threads':>15} {'global batch':>12} {'ms / step':>10} "
          f"{'reduce ms':>10} {'share':>6} {'blocking all-reduce ms':>23}")
    for model, (_, _, batch) in MODELS.items():
        # 1 x 1: the baseline without parallelism, beside the two ways of using every core
        for ranks, threads in ((1, 1), (1, args.cores), (args.cores, 1)):
            out = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, os.path.abspath(__file__),
                                  "--worker", model, str(batch), str(args.iterations), str(threads)],
                                 capture_output=True, text=True, env=env, check=True, timeout=1800)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{r['model']:<13} {f'{ranks} x {threads}':>15} {batch:>12} {r['step_ms']:>10.1f} "
                  f"{r['reduce_ms']:>10.2f} {r['reduce_ms'] / r['step_ms']:>6.1%} "
                  f"{r['blocking_allreduce_ms']:>23.2f}", flush=True)


if __name__ == "__main__":
    main()
