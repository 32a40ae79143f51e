"""The long fuzz campaign, and the reproducer of one call.

    python -m tests.fuzz.campaign                      # every single mutation, plus 2000 pairs
    python -m tests.fuzz.campaign --pairs 20000 --seed 7 --workers 2
    python -m tests.fuzz.campaign --sample 3 --seed 1  # CI's kind of plan, another seed
    python -m tests.fuzz.campaign --repro 'ops.conv2d_forward|stride:2**63'

Run from the repository root. Prints a summary (calls, verdicts by kind, per function) and
one reproducer line per failure; exits 1 when any call fails.
"""
import argparse
import collections
import sys
import time

from . import harness


def _repro(call_id):
    """Run one call in this process (so a crash shows its own traceback or signal)."""
    import traceback
    key, muts = harness.parse_id(call_id)
    kwargs = harness._base_args(key)
    for arg, mut in muts:
        make = {n: m for n, m, _ in harness.mutations_for(arg, kwargs[arg])}[mut]
        kwargs[arg] = make(kwargs[arg])
    print(f"{key}(" + ", ".join(f"{k}={_short(v)}" for k, v in kwargs.items()) + ")")
    verdict = harness.run_call(call_id)
    print(f"verdict: {'pass' if verdict['ok'] else 'FAIL'} ({verdict['kind']}) {verdict['detail']}")
    if not verdict["ok"] and verdict["kind"] in ("wrong-exception", "memory-error"):
        try:
            harness._invoke(harness.resolve(key), kwargs)
        except BaseException:
            traceback.print_exc()
    return 0 if verdict["ok"] else 1


def _short(v):
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        a = harness._array_of(v)
        layout = "" if a.flags.c_contiguous else f" strides={a.strides}"
        return f"{type(v).__name__}(shape={tuple(a.shape)}, dtype={a.dtype}{layout})"
    text = repr(v)
    return text if len(text) < 60 else text[:57] + "..."


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.campaign", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None, help="seed of the sampled and paired calls "
                        "(default: from the clock, printed)")
    parser.add_argument("--sample", type=int, default=None, metavar="K",
                        help="K random mutations per argument instead of all of them")
    parser.add_argument("--pairs", type=int, default=2000, help="calls with two arguments mutated (default 2000)")
    parser.add_argument("--calls", type=int, default=None, help="stop after this many calls (a random subset)")
    parser.add_argument("--workers", type=int, default=2, help="child processes at a time (default 2)")
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--repro", metavar="ID", help="run one call id here and print its verdict")
    args = parser.parse_args(argv)
    if args.repro:
        return _repro(args.repro)

    import random
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    ids = harness.full_plan() if args.sample is None else harness.sample_plan(seed, args.sample)
    ids += harness.pair_plan(seed, args.pairs)
    if args.calls is not None and args.calls < len(ids):
        ids = random.Random(seed).sample(ids, args.calls)
    print(f"fuzz campaign: seed {seed}, {len(ids)} calls "
          f"({len(harness.cases.CASES)} functions), {args.workers} workers", flush=True)
    start = time.monotonic()
    last = [0.0]

    def progress(done, total):
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            print(f"  {done}/{total} calls, {time.monotonic() - start:.0f} s", flush=True)

    verdicts = harness.run(ids, workers=args.workers, batch_size=args.batch_size, progress=progress)
    elapsed = time.monotonic() - start
    kinds = collections.Counter(v["kind"] for v in verdicts)
    failures = [v for v in verdicts if not v["ok"]]
    by_function = collections.Counter(harness.parse_id(v["id"])[0] for v in failures)
    print(f"{len(verdicts)} calls in {elapsed:.0f} s ({len(verdicts) / max(elapsed, 1e-9):.0f} calls/s): "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"failures: {len(failures)}" + (" in " + ", ".join(f"{k} {n}" for k, n in by_function.most_common())
                                          if failures else ""))
    for v in failures:
        print(harness.format_failure(v))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
