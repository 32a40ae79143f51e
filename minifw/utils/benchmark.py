"""torch.utils.benchmark's Timer, Measurement and Compare, for timing a statement on minifw.

    t = Timer("model(x)", globals={"model": model, "x": x}, label="lenet", num_threads=2)
    print(t.blocked_autorange(min_run_time=1.0))

A Timer runs its statement (Python source, with `setup` run once before each measurement) in
blocks of `number` runs and keeps each block's time; a Measurement holds those times per run
and their median, mean and interquartile range. As in PyTorch, the statement runs with
`num_threads` threads (1 unless given: minifw.set_num_threads for the measurement, restored
after) and, where a GPU is in use, the clock is read after waiting for its queued work; the
statement sees `minifw` (also as `torch`, for statements written for PyTorch) beside `globals`.
Statements in C++, callgrind counts and Timer.repeat/autorange (which PyTorch refuses too) are
not here.
"""
import enum
import statistics
import time
import timeit

import numpy as np

from .. import backends, cuda, devices

__all__ = ["Compare", "Language", "Measurement", "Timer"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _quartiles(values):
    q1, q3 = np.percentile(np.asarray(values, dtype=np.float64), [25, 75])
    return float(q1), float(q3)


_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}


def _time_unit(seconds):
    """(unit, seconds per unit) that shows `seconds` with 1 to 3 digits before the point."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if seconds < 1000 * scale:
            return unit, scale
    return "s", 1.0


class Measurement:
    """The times of one Timer run: `raw_times` (seconds per block of `number_per_run` runs),
    `times` (seconds per run, one per block), `median`, `mean`, `iqr`, and the Timer's
    label, sub_label, description, env, num_threads, stmt and setup."""

    def __init__(self, number_per_run, raw_times, *, stmt="pass", setup="pass", label=None, sub_label=None,
                 description=None, env=None, num_threads=1):
        if isinstance(number_per_run, bool) or not isinstance(number_per_run, int) or number_per_run < 1:
            raise ValueError(f"Measurement: number_per_run must be an int >= 1, got {number_per_run!r}")
        raw_times = [float(t) for t in raw_times]
        if not raw_times:
            raise ValueError("Measurement: raw_times must hold at least one time, got none")
        self.number_per_run, self.raw_times = number_per_run, raw_times
        self.stmt, self.setup, self.label, self.sub_label = stmt, setup, label, sub_label
        self.description, self.env, self.num_threads = description, env, num_threads

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return statistics.median(self.times)

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        q1, q3 = _quartiles(self.times)
        return q3 - q1

    @property
    def title(self):
        if self.label is None:
            return self.stmt
        return self.label if self.sub_label is None else f"{self.label}: {self.sub_label}"

    @property
    def has_warnings(self):
        """Whether the times spread widely: an interquartile range over 10% of the median."""
        return len(self.times) > 1 and not self.meets_confidence(0.1)

    def meets_confidence(self, threshold=0.1):
        return self.iqr / self.median < threshold if self.median else True

    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    @staticmethod
    def merge(measurements):
        """Measurements of one task (the same stmt, setup, labels, env and threads) as one, their
        times pooled, each time kept per run (number_per_run 1); a list, one per task."""
        groups = {}
        for m in measurements:
            key = (m.stmt, m.setup, m.label, m.sub_label, m.description, m.env, m.num_threads)
            groups.setdefault(key, []).append(m)
        merged = []
        for (stmt, setup, label, sub_label, description, env, num_threads), ms in groups.items():
            times = [t for m in ms for t in m.times]
            merged.append(Measurement(1, times, stmt=stmt, setup=setup, label=label, sub_label=sub_label,
                                      description=description, env=env, num_threads=num_threads))
        return merged

    def __repr__(self):
        unit, scale = _time_unit(self.median)
        lines = [f"<minifw.utils.benchmark.Measurement object at {id(self):#x}>", self.title]
        if self.description:
            lines.append(self.description)
        if self.setup and self.setup != "pass":
            lines.append(f"setup: {self.setup}")
        if len(self.times) == 1:
            lines.append(f"  {self.median / scale:.2f} {unit}")
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({_quartiles(self.times)[0] / scale:.2f} to "
                         f"{_quartiles(self.times)[1] / scale:.2f})")
        count = len(self.times)
        runs = (f"{self.number_per_run} runs" if count == 1
                else f"{self.number_per_run} runs per measurement")
        threads = "thread" if self.num_threads == 1 else "threads"
        lines.append(f"  {count} measurement{'s' if count != 1 else ''}, {runs}, {self.num_threads} {threads}")
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is {100 * self.iqr / self.median:.1f}% of the median "
                         f"measurement.")
        return "\n".join(lines)


def _default_timer():
    """time.perf_counter, after waiting for the GPU's queued work where "cuda" is in use."""
    if cuda.is_available() and cuda.is_initialized():
        devices.synchronize(devices.get("cuda", "Timer"))
    return time.perf_counter()


def _check_int(fn, name, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{fn}: {name} must be an int >= {low}, got {value!r}")
    return value


def _check_time(fn, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ValueError(f"{fn}: {name} must be a positive, finite number of seconds, got {value!r}")
    return float(value)


class Timer:
    """Times `stmt` (Python source) after `setup`, in `globals` (a dict; the Timer works on a copy
    of it), with `num_threads` threads; see the module's docstring."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=None, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: only Python statements can be timed here (language=Language.PYTHON), "
                             f"got language={language!r}")
        for name, value in (("stmt", stmt), ("setup", setup)):
            if not isinstance(value, str):
                raise TypeError(f"Timer: {name} must be a string of Python source, got {type(value).__name__}")
        if global_setup:
            raise ValueError("Timer: global_setup is for C++ statements; put Python set-up in setup")
        if globals is not None and not isinstance(globals, dict):
            raise TypeError(f"Timer: globals must be a dict or None, got {type(globals).__name__}")
        self._num_threads = _check_int("Timer", "num_threads", num_threads, 1)
        if num_threads > backends.max_num_threads():
            raise ValueError(f"Timer: num_threads must be at most {backends.max_num_threads()}, got {num_threads}")
        self._timer = _default_timer if timer is None else timer
        if not callable(self._timer):
            raise TypeError(f"Timer: timer must be a callable returning seconds, got {type(timer).__name__}")
        self._stmt, self._setup = stmt, setup
        self._labels = dict(label=label, sub_label=sub_label, description=description, env=env)
        # as PyTorch's Timer adds `torch`: minifw under its own name and, for statements written
        # for PyTorch, under `torch`; compiled now, so that a syntax error is raised here
        import minifw
        namespace = dict(globals or {})
        namespace.setdefault("minifw", minifw)
        namespace.setdefault("torch", minifw)
        self._timeit = timeit.Timer(stmt=stmt, setup=setup, timer=self._timer, globals=namespace)

    def _measurement(self, number, raw_times):
        return Measurement(number, raw_times, stmt=self._stmt, setup=self._setup, num_threads=self._num_threads,
                           **self._labels)

    def _with_threads(self, run):
        before = backends.get_num_threads()
        backends.set_num_threads(self._num_threads)
        try:
            return run()
        finally:
            backends.set_num_threads(before)

    def timeit(self, number=1000000):
        """One block of `number` runs (after one block of up to 100 runs to warm up): a
        Measurement with one time."""
        _check_int("Timer.timeit", "number", number, 1)

        def run():
            self._timeit.timeit(number=min(number, 100))
            return self._timeit.timeit(number=number)
        return self._measurement(number, [self._with_threads(run)])

    def _block_size(self, min_run_time):
        """Runs per block: grown tenfold until a block takes a thousandth of min_run_time and the
        timer's own cost (a block of 0 runs) is under 0.01% of it, or a block takes min_run_time."""
        overhead = statistics.median(self._timeit.timeit(number=0) for _ in range(5))
        number = 1
        while number < 10 ** 9:
            taken = self._timeit.timeit(number=number)
            if taken >= min_run_time or (taken >= min_run_time / 1000 and overhead <= 1e-4 * taken):
                break
            number *= 10
        return number

    def _blocks(self, number, keep_going, callback):
        times, total = [], 0.0
        while True:
            taken = self._timeit.timeit(number=number)
            times.append(taken)
            total += taken
            if callback is not None:
                callback(number, taken)
            if not keep_going(times, total):
                return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs until min_run_time seconds have been spent timing (at least one block);
        callback(number, seconds) after each block."""
        min_run_time = _check_time("Timer.blocked_autorange", "min_run_time", min_run_time)

        def run():
            number = self._block_size(min_run_time)
            return number, self._blocks(number, lambda times, total: total < min_run_time, callback)
        number, times = self._with_threads(run)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the interquartile range is under `threshold` times the median
        (with at least min_run_time seconds and 4 blocks timed), or max_run_time seconds."""
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 0:
            raise ValueError(f"Timer.adaptive_autorange: threshold must be a positive number, got {threshold!r}")
        min_run_time = _check_time("Timer.adaptive_autorange", "min_run_time", min_run_time)
        max_run_time = _check_time("Timer.adaptive_autorange", "max_run_time", max_run_time)
        if max_run_time < min_run_time:
            raise ValueError(f"Timer.adaptive_autorange: max_run_time ({max_run_time}) must be at least "
                             f"min_run_time ({min_run_time})")

        def keep_going(times, total):
            if total >= max_run_time:
                return False
            if total < min_run_time or len(times) < 4:
                return True
            q1, q3 = _quartiles(times)
            return (q3 - q1) >= threshold * statistics.median(times)

        def run():
            number = self._block_size(min_run_time)
            return number, self._blocks(number, keep_going, callback)
        number, times = self._with_threads(run)
        return self._measurement(number, times)


class Compare:
    """Measurements as tables, one per label: a row per sub_label (or stmt), a column per
    description, each cell the median in one unit for the table. print(compare) or
    compare.print()."""

    def __init__(self, results):
        if not isinstance(results, (list, tuple)) or not all(isinstance(r, Measurement) for r in results):
            raise TypeError("Compare: results must be a list of Measurements")
        self._results = list(results)
        self._colorize = self._trim = False

    def extend_results(self, results):
        if not all(isinstance(r, Measurement) for r in results):
            raise TypeError("Compare.extend_results: results must be Measurements")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True  # accepted; the table is plain text

    def highlight_warnings(self):
        pass  # warnings are marked in every table with '(!)'

    def _table(self, label, results):
        merged = Measurement.merge(results)
        columns = list(dict.fromkeys(m.description for m in merged))
        rows = list(dict.fromkeys((m.num_threads, m.as_row_name()) for m in merged))
        cells = {((m.num_threads, m.as_row_name()), m.description): m for m in merged}
        unit, scale = _time_unit(min(m.median for m in merged))
        digits = 1 if self._trim else 2
        header = [""] + [c or "" for c in columns]
        body = []
        for threads in dict.fromkeys(t for t, _ in rows):
            body.append([f"{threads} thread{'s' if threads != 1 else ''}:"] + [""] * len(columns))
            for row in (r for r in rows if r[0] == threads):
                line = [f"  {row[1]}"]
                for c in columns:
                    m = cells.get((row, c))
                    line.append("" if m is None else f"{m.median / scale:.{digits}f}"
                                + (" (!)" if m.has_warnings else ""))
                body.append(line)
        widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]

        def fmt(row):
            return "  |  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        lines = [f"[--- {label} ---]", fmt(header)] + [fmt(r) for r in body]
        return "\n".join(lines) + f"\n\nTimes are in {_UNIT_NAMES[unit]} ({unit}).\n"

    def __str__(self):
        labels = dict.fromkeys(m.label for m in self._results)
        return "\n".join(self._table(label, [m for m in self._results if m.label == label]) for label in labels)

    def print(self):
        print(str(self))
