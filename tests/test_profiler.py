"""minifw.profiler: which events are recorded (every Function's forward, every node's
backward, record_function ranges), their nesting, shapes and bytes, schedules, the table and
the Chrome trace, and that nothing is recorded outside a profile."""
import json

import numpy as np
import pytest

import minifw
import minifw.nn as nn
from minifw import autograd
from minifw.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                             schedule, tensorboard_trace_handler)


def names(events):
    return [e.name for e in events]


def test_forward_and_backward_events():
    x = minifw.randn(4, 5)
    layer = nn.Linear(5, 3)
    with profile() as prof:
        layer(x).relu().sum().backward()
    got = names(prof.events())
    assert got == ["InnerProduct", "Activation", "Sum", "SumBackward0", "ReluBackward0",
                   "AddmmBackward0"]
    for e in prof.events():
        assert e.end_us >= e.start_us and e.cpu_time_total >= 0
        assert e.cpu_parent is None and e.self_cpu_time_total == e.cpu_time_total
    assert autograd._profiler is None


def test_counts_and_averages():
    layer = nn.Linear(3, 3)
    x = minifw.randn(2, 3)
    with profile() as prof:
        for _ in range(4):
            layer(x)
    averages = {a.key: a for a in prof.key_averages()}
    assert averages["InnerProduct"].count == 4
    total = averages["InnerProduct"]
    assert abs(total.cpu_time_total - sum(e.cpu_time_total for e in prof.events())) < 1e-6
    assert abs(total.cpu_time - total.cpu_time_total / 4) < 1e-6


def test_record_function_nests_operations():
    x = minifw.randn(3, 3)
    with profile() as prof:
        with record_function("outer"):
            y = x * 2
            with record_function("inner"):
                y = y + 1
        y.exp()
    events = {e.name: e for e in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert names(outer.cpu_children) == ["Mul", "inner"]
    assert names(inner.cpu_children) == ["Add"]
    assert events["Add"].cpu_parent is inner and inner.cpu_parent is outer
    assert events["Exp"].cpu_parent is None
    assert outer.is_user_annotation and not events["Mul"].is_user_annotation
    assert outer.self_cpu_time_total <= outer.cpu_time_total
    assert abs(outer.self_cpu_time_total + inner.cpu_time_total + events["Mul"].cpu_time_total
               - outer.cpu_time_total) < 1e-6
    top = [e for e in prof.events() if e.cpu_parent is None]
    assert abs(sum(e.self_cpu_time_total for e in prof.events())
               - sum(e.cpu_time_total for e in top)) < 1e-3
    table = prof.key_averages().table(sort_by="cpu_time_total", top_level_events_only=True)
    assert "outer" in table and "Exp" in table and " Add " not in table


def test_record_function_as_a_decorator_and_without_a_profiler():
    @record_function("step")
    def step(x):
        return x + 1
    assert step(minifw.ones(1)).item() == 2  # no profiler: nothing happens
    with profile() as prof:
        step(minifw.ones(1))
    assert names(prof.events()) == ["step", "Add"]
    with pytest.raises(TypeError, match="record_function: name must be a string"):
        record_function(3)


def test_shapes_and_bytes():
    x = minifw.randn(2, 3, 8, 8)
    conv = nn.Conv2d(3, 4, 3)
    with profile(record_shapes=True, profile_memory=True) as prof:
        y = conv(x)
        y.sum().backward()
    events = {e.name: e for e in prof.events()}
    conv_event = events["Convolution2D"]
    assert conv_event.input_shapes == [[2, 3, 8, 8], [4, 3, 3, 3], [4]]
    assert conv_event.cpu_memory_usage == 2 * 4 * 6 * 6 * 4  # its float32 output
    backward = events["ConvolutionBackward0"]  # the node, named as PyTorch names it
    assert backward.cpu_memory_usage == (4 * 3 * 3 * 3 + 4) * 4  # weight and bias gradients
    grouped = prof.key_averages(group_by_input_shape=True)
    assert any(a.key == "Convolution2D" and a.input_shapes == [[2, 3, 8, 8], [4, 3, 3, 3], [4]]
               for a in grouped)
    table = grouped.table(sort_by="self_cpu_memory_usage", row_limit=3)
    assert "Input Shapes" in table and "CPU Mem" in table
    assert table.count("\n") == 3 + 3 + 2  # header rules, 3 rows, closing rule and total


def test_user_functions_and_their_inner_operations():
    class Square(minifw.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    x = minifw.randn(3, requires_grad=True)
    with profile() as prof:
        Square.apply(x).sum().backward()
    events = prof.events()
    square = next(e for e in events if e.name == "Square")
    assert names(square.cpu_children) == ["Mul"]
    assert "SquareBackward" in names(events)
    assert np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_nothing_is_recorded_outside_and_misuse_is_refused():
    prof = profile()
    minifw.ones(2) * 2
    with prof:
        pass
    assert names(prof.events()) == []
    with pytest.raises(RuntimeError, match="stop\\(\\) without start\\(\\)"):
        prof.stop()
    with profile() as running:
        with pytest.raises(RuntimeError, match="already running"):
            running.start()
    with pytest.raises(ValueError, match="table: sort_by must be one of"):
        running.key_averages().table(sort_by="cpu_time_totl")
    with pytest.raises(ValueError, match="group_by_input_shape=True needs record_shapes=True"):
        running.key_averages(group_by_input_shape=True)
    with pytest.raises(TypeError, match="activities must hold ProfilerActivity values"):
        profile(activities=["cpu"])
    with pytest.raises(TypeError, match="profile: record_shapes must be a bool"):
        profile(record_shapes=1)


def test_schedule_actions():
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    got = [s(k) for k in range(11)]
    N, W, R, S = (ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                  ProfilerAction.RECORD_AND_SAVE)
    assert got == [N, N, W, R, S, N, W, R, S, N, N]
    s = schedule(wait=2, warmup=0, active=1, skip_first_wait=1)
    assert [s(k) for k in range(5)] == [S, N, N, S, N]
    with pytest.raises(ValueError, match="schedule: active must be >= 1"):
        schedule(wait=0, warmup=0, active=0)


def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    for kw in (dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=3),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2),
               dict(wait=1, warmup=0, active=2, skip_first_wait=1)):
        mine, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [mine(k).name for k in range(20)] == [theirs(k).name for k in range(20)], kw


def test_a_schedule_records_its_active_steps_and_hands_them_over(tmp_path):
    traces = []
    x = minifw.ones(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: traces.append(names(p.events()))) as prof:
        for step in range(6):
            with record_function(f"step{step}"):
                x + 1
            prof.step()
    assert traces == [["step2", "Add", "step3", "Add"]]
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 on_trace_ready=handler) as prof:
        for _ in range(3):
            x * 3
            prof.step()
    files = sorted((tmp_path / "tb").iterdir())
    assert len(files) == 2 and all(f.name.startswith("w.") and f.name.endswith(".pt.trace.json")
                                   for f in files)
    assert [e["name"] for e in json.loads(files[0].read_text())["traceEvents"]] == ["Mul"]


def test_chrome_trace(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            minifw.ones(2, 3).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert [e["name"] for e in trace] == ["block", "Sum"]
    block, total = trace
    assert block["ph"] == "X" and block["cat"] == "user_annotation" and total["cat"] == "cpu_op"
    assert block["ts"] <= total["ts"] and total["ts"] + total["dur"] <= block["ts"] + block["dur"] + 1e-3
    assert total["args"]["Input Dims"] == [[2, 3]]
    with pytest.raises(TypeError, match="needs the events themselves"):
        prof.key_averages().export_chrome_trace(str(path))


def test_device_operations_count_as_device_time_with_cuda_activity():
    x = minifw.ones(4, 4, device="cudasim")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        (x * 2).sum()
    for e in prof.events():
        assert e.device_time_total == e.cpu_time_total > 0
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self Device" in table and "Self Device time total" in table


def test_the_older_autograd_profiler():
    from minifw.autograd import profiler as legacy
    x = minifw.ones(3, requires_grad=True)
    with legacy.profile(enabled=False) as prof:
        (x * 2).sum()
    assert names(prof.events()) == []
    with legacy.profile(record_shapes=True) as prof:
        (x * 2).sum().backward()
    assert names(prof.function_events) == ["Mul", "Sum", "SumBackward0", "MulBackward0"]
    assert prof.total_average().count == 4
    assert "MulBackward0" in prof.table(sort_by="self_cpu_time_total")


class _Failing(minifw.autograd.Function):
    fail_forward = False

    @staticmethod
    def forward(ctx, x):
        if _Failing.fail_forward:
            raise ValueError("forward fails")
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("backward fails")


def test_an_error_in_a_forward_or_a_backward_closes_its_event():
    x = minifw.ones(3, requires_grad=True)
    with profile() as prof:
        _Failing.fail_forward = True
        try:
            with pytest.raises(ValueError, match="forward fails"):
                _Failing.apply(x)
        finally:
            _Failing.fail_forward = False
        y = _Failing.apply(x).sum()
        with pytest.raises(ValueError, match="backward fails"):
            y.backward()
        z = (x * 3).sum()
    assert prof._stack() == []
    events = {e.name: e for e in prof.events()}
    assert events["_FailingBackward"].end_us is not None
    assert events["_Failing"].cpu_parent is None
    assert all(events[n].cpu_parent is None for n in ("Mul", "Sum"))
    assert z.item() == 9.0
