"""minifw.utils.benchmark (torch.utils.benchmark's Timer, Measurement, Compare) and
minifw.utils.hooks. The Timers here read a virtual clock that the timed statement advances, so
every time is known exactly and nothing depends on the machine's speed."""
import math

import pytest

import minifw
from minifw import backends
from minifw.utils import benchmark

TICK = 2.0 ** -20  # seconds per run of the statement: exact in binary, so the sums are exact


class Clock:
    def __init__(self):
        self.now, self.runs, self.setups, self.threads = 0.0, 0, 0, set()

    def tick(self):
        self.now += TICK
        self.runs += 1
        self.threads.add(minifw.get_num_threads())

    def setup(self):
        self.setups += 1


def timer(clock, **kwargs):
    return benchmark.Timer("clock.tick()", setup="clock.setup()", timer=lambda: clock.now,
                           globals={"clock": clock}, **kwargs)


def test_timeit_runs_a_warm_up_block_then_the_measured_one():
    clock = Clock()
    m = timer(clock, label="tick", sub_label="virtual", description="cpu").timeit(1000)
    assert clock.runs == 100 + 1000 and clock.setups == 2  # setup once per block, as timeit
    assert m.number_per_run == 1000 and m.raw_times == [1000 * TICK] and m.times == [TICK]
    assert m.median == m.mean == TICK and m.iqr == 0
    assert m.title == "tick: virtual" and m.description == "cpu" and m.num_threads == 1
    assert not m.has_warnings and "1 measurement, 1000 runs, 1 thread" in repr(m)
    assert "  953.67 ns" in repr(m)  # 2**-20 s


def test_blocked_autorange_grows_the_block_then_times_for_min_run_time():
    clock = Clock()
    calls = []
    m = timer(clock).blocked_autorange(callback=lambda n, t: calls.append((n, t)), min_run_time=0.01)
    # the block grows tenfold until it takes min_run_time / 1000 (1e-5 s): 100 runs (9.5e-5 s)
    assert m.number_per_run == 100
    blocks = math.ceil(0.01 / (100 * TICK))
    assert len(m.raw_times) == blocks == len(calls) and all(t == 100 * TICK for t in m.raw_times)
    assert calls[0] == (100, 100 * TICK) and m.median == TICK
    assert "Median: 953.67 ns" in repr(m) and f"{blocks} measurements, 100 runs per measurement" in repr(m)


def test_adaptive_autorange_stops_once_the_spread_is_small():
    clock = Clock()
    m = timer(clock).adaptive_autorange(threshold=0.1, min_run_time=0.001, max_run_time=1.0)
    # equal blocks: the spread is 0 once 4 blocks and min_run_time are reached
    assert len(m.times) == max(4, math.ceil(0.001 / (m.number_per_run * TICK))) and m.iqr == 0

    class Noisy(Clock):
        def tick(self):  # every other block twice as slow: the spread never falls under 10%
            super().tick()
            if self.setups % 2:  # setup runs once before each block
                self.now += TICK

    noisy = Noisy()
    m = timer(noisy).adaptive_autorange(threshold=0.1, min_run_time=0.001, max_run_time=0.01)
    assert sum(m.raw_times) >= 0.01 and m.iqr > 0.1 * m.median and m.has_warnings
    assert "WARNING: Interquartile range" in repr(m)


def test_the_statement_runs_with_num_threads_restored_after():
    before = minifw.get_num_threads()
    clock = Clock()
    threads = 1 if before != 1 else 2
    timer(clock, num_threads=threads).timeit(10)
    assert clock.threads == {threads} and minifw.get_num_threads() == before


def test_statements_see_minifw_also_as_torch():
    m = benchmark.Timer("torch.ones(3) + minifw.ones(3)", timer=lambda: 0.0).timeit(2)
    assert m.raw_times == [0.0]


def test_measurement_statistics_and_merge():
    m = benchmark.Measurement(2, [2.0, 4.0, 6.0, 8.0, 100.0], stmt="f()", label="L", sub_label="s")
    assert m.times == [1.0, 2.0, 3.0, 4.0, 50.0] and m.median == 3.0 and m.mean == 12.0
    assert m.iqr == 4.0 - 2.0 and m.has_warnings and not m.meets_confidence(0.5)
    a = benchmark.Measurement(1, [1.0], stmt="f()", label="L")
    b = benchmark.Measurement(2, [4.0], stmt="f()", label="L")
    c = benchmark.Measurement(1, [9.0], stmt="g()", label="L")
    merged = benchmark.Measurement.merge([a, b, c])
    assert [(x.stmt, x.times) for x in merged] == [("f()", [1.0, 2.0]), ("g()", [9.0])]


def test_compare_tables_medians_by_row_and_column():
    ms = [benchmark.Measurement(1, [t * 1e-6], stmt=s, label="ops", sub_label=s, description=d)
          for s, d, t in (("add", "cpu", 2.0), ("add", "cudasim", 3.0), ("mul", "cpu", 4.0))]
    ms.append(benchmark.Measurement(1, [1e-3], stmt="x", label="other", sub_label="x", description="cpu"))
    text = str(benchmark.Compare(ms))
    lines = text.splitlines()
    assert lines[0] == "[--- ops ---]" and "cpu" in lines[1] and "cudasim" in lines[1]
    add = next(line for line in lines if line.strip().startswith("add"))
    mul = next(line for line in lines if line.strip().startswith("mul"))
    assert [c.strip() for c in add.split("|")[1:]] == ["2.00", "3.00"]
    assert [c.strip() for c in mul.split("|")[1:]] == ["4.00", ""]
    assert "[--- other ---]" in text and "Times are in milliseconds (ms)." in text
    assert "Times are in microseconds (us)." in text


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"Timer.timeit: number must be an int >= 1, got 0"):
        benchmark.Timer().timeit(0)
    with pytest.raises(ValueError, match="min_run_time must be a positive, finite number of seconds, got -1"):
        benchmark.Timer().blocked_autorange(min_run_time=-1)
    with pytest.raises(ValueError, match=r"max_run_time \(0.001\) must be at least min_run_time \(0.01\)"):
        benchmark.Timer().adaptive_autorange(min_run_time=0.01, max_run_time=0.001)
    with pytest.raises(ValueError, match="Timer: num_threads must be an int >= 1, got 0"):
        benchmark.Timer(num_threads=0)
    with pytest.raises(ValueError, match="num_threads must be at most"):
        benchmark.Timer(num_threads=backends.max_num_threads() + 1)
    with pytest.raises(ValueError, match="only Python statements"):
        benchmark.Timer(language=benchmark.Language.CPP)
    with pytest.raises(TypeError, match="Timer: stmt must be a string of Python source, got function"):
        benchmark.Timer(stmt=lambda: None)
    with pytest.raises(SyntaxError):
        benchmark.Timer("1 +")
    with pytest.raises(TypeError, match="Compare: results must be a list of Measurements"):
        benchmark.Compare([1.0])
    with pytest.raises(ValueError, match="Measurement: raw_times must hold at least one time"):
        benchmark.Measurement(1, [])


def test_removable_handle_is_the_modules():
    from minifw.utils.hooks import RemovableHandle
    layer = minifw.nn.Linear(2, 2)
    seen = []
    handle = layer.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    assert isinstance(handle, RemovableHandle)
    layer(minifw.ones(1, 2))
    handle.remove()
    layer(minifw.ones(1, 2))
    assert seen == [(1, 2)]


def test_the_timer_matches_pytorchs_structure():
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    ours = benchmark.Timer("x + 1", setup="x = torch.ones(3)").timeit(100)
    theirs = torch_benchmark.Timer("x + 1", setup="x = torch.ones(3)").timeit(100)
    for name in ("times", "raw_times", "number_per_run", "median", "mean", "iqr", "title", "num_threads"):
        assert type(getattr(ours, name)) is type(getattr(theirs, name)), name
    assert (ours.number_per_run, len(ours.times), ours.title) == (theirs.number_per_run, len(theirs.times),
                                                                  theirs.title)
