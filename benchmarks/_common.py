"""Shared helpers for the benchmarks: timing, environment checks, table output.

Imported before minifw by every benchmark. Run as `python benchmarks/X.py` from a
checkout whose extension is built in place (minifw/_native*.so, as the developer
build leaves it), a benchmark measures that checkout, not another minifw installed
in site-packages, which Python would otherwise find first (a script's own folder,
not the working directory, starts sys.path). PYTHONPATH, when set, decides
instead. The header names the minifw measured."""
import glob
import itertools
import os
import sys
import time

import numpy as np

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "PYTHONPATH" not in os.environ and glob.glob(os.path.join(_CHECKOUT, "minifw", "_native*")):
    sys.path.insert(0, _CHECKOUT)


def warn_openblas_env():
    """OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE slow NumPy's BLAS down and so would
    flatter minifw: say so loudly when they are set."""
    bad = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ]
    if bad:
        print(f"WARNING: {', '.join(bad)} set in the environment; they slow NumPy's OpenBLAS and make "
              f"the baseline unfair. Re-run with: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ...")
    return bad


def time_engines(fns, repeats, block=3, warmup=1, settle=0.15):
    """Median seconds of each callable in `fns` (a dict), over `repeats` timed calls.

    The calls run in blocks of `block` (each after `warmup` untimed calls, and
    at least 2 ms of them), and the blocks alternate between engines, so slow
    drifts and bursts of load on a shared machine hit every engine alike. Between blocks the benchmark
    sleeps briefly: OpenBLAS's and OpenMP's worker threads spin for a while
    after their last call, and on a small machine a spinning thread from one
    library would steal a core from the next engine measured.
    """
    times = {name: [] for name in fns}
    while any(len(t) < repeats for t in times.values()):
        for name, fn in fns.items():
            time.sleep(settle)
            # Warm up for a few calls and at least 30 ms: after the pause a
            # core wakes slowly, and the OpenMP team's threads may wake up on
            # one core, where every parallel call of a millisecond or less then
            # took 8 ms (two scheduler ticks) until the kernel moved a thread
            # away. A 2 ms warm-up left whole blocks of 512^3 GEMMs at 8 ms on a
            # 2-core VM; 30 ms of calls spread them in every block we timed.
            t_end = time.perf_counter() + 0.03
            for i in itertools.count():
                if i >= warmup and time.perf_counter() >= t_end:
                    break
                fn()
            for _ in range(min(block, repeats - len(times[name]))):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def header(title, command, info=None, extra=()):
    """`info` is minifw.info() of the minifw measured, when a child process measured it; by default
    the one imported here (imported only now, so a parent that compares trees imports none).
    `extra`: more "- ..." lines (without the dash), after the CPU's."""
    if info is None:
        import minifw
        info = minifw.info()
        print(f"(measuring the minifw in {os.path.dirname(os.path.abspath(minifw.__file__))})", file=sys.stderr)
    lines = [f"## {title}", "",
             f"- date: {time.strftime('%Y-%m-%d')}",
             f"- CPU: {info['cpu']} ({os.cpu_count()} cores), minifw ISA {info['isa']}, "
             f"{info['num_threads']} threads; NumPy {info['numpy']}",
             *(f"- {line}" for line in extra),
             f"- command: `{command}`", ""]
    return "\n".join(lines)


def table(rows, columns):
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        out.append("| " + " | ".join(str(row[c]) for c in columns) + " |")
    return "\n".join(out)
