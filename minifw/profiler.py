"""A profiler for minifw programs, under torch.profiler's names: every operation's forward
(one event per Function call: Convolution2D, MatMul, ...) and every node's backward
(named as PyTorch names the node: ConvolutionBackward0, ...) is timed, with the ranges a
program marks with record_function.

    from minifw.profiler import profile, record_function, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("step"):
            loss = model(x).sum()
            loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")        # chrome://tracing, Perfetto

An event's CPU total is its time from start to end; its self time leaves out the events
nested in it (a record_function range around operations; operations a user Function's
forward runs). Memory ("CPU Mem") is the bytes of the arrays an event returned: the
outputs of a forward, the gradients of a backward. With ProfilerActivity.CUDA asked for, an
operation whose results are on a GPU (or on "cudasim") waits for the device before its event
ends, so its time is the device's; that time is also its device time. minifw's events are
its own Functions, not a library's kernels: a layer is one event (Convolution2D, not the
GEMMs inside it).
"""
import collections
import enum
import json
import os
import threading
import time

from . import autograd, devices
from .checks import check_bool, check_int

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities minifw can record: CPU, and CUDA (operations on a GPU or "cudasim",
    timed on the host after the device finishes)."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


def _default_activities():
    """CPU, and CUDA where a GPU is there, as PyTorch's default."""
    from . import cuda
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step number (prof.step() counts them): skip `skip_first` steps,
    then cycles of `wait` idle steps, `warmup` steps running but not kept, and `active`
    recorded ones, the cycle's last handing the trace to on_trace_ready; `repeat` cycles
    (0: forever). skip_first_wait=1 leaves out the first cycle's wait."""
    wait = check_int("schedule", "wait", wait, minimum=0)
    warmup = check_int("schedule", "warmup", warmup, minimum=0)
    active = check_int("schedule", "active", active, minimum=1)
    repeat = check_int("schedule", "repeat", repeat, minimum=0)
    skip_first = check_int("schedule", "skip_first", skip_first, minimum=0)
    skip_first_wait = check_int("schedule", "skip_first_wait", skip_first_wait, minimum=0,
                                maximum=1)

    def action(step):
        step = check_int("schedule", "step", step, minimum=0)
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts at its warmup
        cycle = wait + warmup + active
        if repeat and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if k == cycle - 1 else ProfilerAction.RECORD
    return action


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler writing each trace as a Chrome trace file
    `<worker>.<timestamp>.pt.trace.json` into dir_name (made if missing), where TensorBoard's
    profiler plugin and chrome://tracing read it."""
    if use_gzip:
        raise ValueError("tensorboard_trace_handler: use_gzip=True is not supported; traces are "
                         "written as plain JSON")

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{worker}.{time.time_ns()}.pt.trace.json"))
    return handler


class FunctionEvent:
    """One timed range: an operation's forward or backward, or a record_function range.
    Times in microseconds, as PyTorch's."""

    __slots__ = ("name", "start_us", "end_us", "thread", "input_shapes", "cpu_memory_usage",
                 "device_time_total", "cpu_children", "cpu_parent", "is_user_annotation", "id")

    def __init__(self, name, start_ns, thread, input_shapes, is_user_annotation, id):
        self.name, self.start_us, self.end_us = name, start_ns / 1000.0, None
        self.thread, self.input_shapes = thread, input_shapes
        self.cpu_memory_usage, self.device_time_total = 0, 0.0
        self.cpu_children, self.cpu_parent = [], None
        self.is_user_annotation, self.id = is_user_annotation, id

    key = property(lambda self: self.name)
    count = property(lambda self: 1)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total
    self_cpu_time_total = property(
        lambda self: self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))
    self_cpu_memory_usage = property(
        lambda self: self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children))
    self_device_time_total = property(
        lambda self: self.device_time_total - sum(c.device_time_total for c in self.cpu_children))
    device_time = property(lambda self: self.device_time_total)
    time_range = property(lambda self: (self.start_us, self.end_us))

    def __repr__(self):
        return (f"<FunctionEvent {self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self={self.self_cpu_time_total:.3f}us input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them) summed."""

    def __init__(self, key, input_shapes):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.is_user_annotation = False
        self.cpu_parent = None  # an enclosing event of one of them (top_level_events_only)

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.device_time_total += event.device_time_total
        self.self_device_time_total += event.self_device_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.is_user_annotation = event.is_user_annotation
        self.cpu_parent = self.cpu_parent or event.cpu_parent
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time",
              "device_time_total", "self_device_time_total", "cuda_time", "cuda_time_total",
              "self_cuda_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "count")


def _time(us):
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _bytes(n):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


class EventList(list):
    """A list of FunctionEvent (prof.events()) or FunctionEventAvg (key_averages())."""

    def __init__(self, events=(), *, memory=False, device=False, shapes=False):
        super().__init__(events)
        self._memory, self._device, self._shapes = memory, device, shapes

    def key_averages(self, group_by_input_shape=False):
        groups = collections.OrderedDict()
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            key = (e.key, shapes)
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape
                                               else None)
            groups[key].add(e)
        return EventList(groups.values(), memory=self._memory, device=self._device,
                         shapes=group_by_input_shape)

    def total_average(self):
        total = FunctionEventAvg("Total", None)
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as a text table, sorted by `sort_by` (largest first): one of
        cpu_time_total, self_cpu_time_total, cpu_time, device_time_total (cuda_time_total),
        self_device_time_total, cpu_memory_usage, self_cpu_memory_usage, count."""
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table: sort_by must be one of {', '.join(_SORT_KEYS)}; got "
                             f"{sort_by!r}")
        row_limit = check_int("table", "row_limit", row_limit, minimum=-1)
        if time_unit is not None and time_unit not in ("s", "ms", "us"):
            raise ValueError(f"table: time_unit must be 's', 'ms' or 'us', got {time_unit!r}")
        events = [e for e in self if not (top_level_events_only and
                                           getattr(e, "cpu_parent", None) is not None)]
        if sort_by is not None:
            key = sort_by.replace("cuda", "device")
            events.sort(key=lambda e: getattr(e, key), reverse=True)
        if row_limit >= 0:
            events = events[:row_limit]
        fmt = _time if time_unit is None else (
            lambda us: f"{us / {'s': 1e6, 'ms': 1e3, 'us': 1.0}[time_unit]:.3f}{time_unit}")
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        columns = [("Self CPU %", lambda e: f"{100 * e.self_cpu_time_total / total_self:.2f}%"),
                   ("Self CPU", lambda e: fmt(e.self_cpu_time_total)),
                   ("CPU total %", lambda e: f"{100 * e.cpu_time_total / total_self:.2f}%"),
                   ("CPU total", lambda e: fmt(e.cpu_time_total)),
                   ("CPU time avg", lambda e: fmt(e.cpu_time))]
        if self._device:
            columns += [("Self Device", lambda e: fmt(e.self_device_time_total)),
                        ("Device total", lambda e: fmt(e.device_time_total)),
                        ("Device time avg", lambda e: fmt(e.device_time))]
        if self._memory:
            columns += [("CPU Mem", lambda e: _bytes(e.cpu_memory_usage)),
                        ("Self CPU Mem", lambda e: _bytes(e.self_cpu_memory_usage))]
        columns.append(("# of Calls", lambda e: str(e.count)))
        width = max([len("Name")] + [min(len(e.key), max_name_column_width) for e in events])
        shapes_width = max([len("Input Shapes")] + [min(len(str(e.input_shapes)),
                                                        max_shapes_column_width)
                                                    for e in events]) if self._shapes else 0
        rule = "  ".join(["-" * width] + ["-" * 12] * len(columns) +
                         (["-" * shapes_width] if self._shapes else [])) + "  "
        head = "  ".join([f"{'Name':>{width}}"] + [f"{name:>12}" for name, _ in columns] +
                         ([f"{'Input Shapes':>{shapes_width}}"] if self._shapes else [])) + "  "
        lines = ([header] if header else []) + [rule, head, rule]
        for e in events:
            name = e.key if len(e.key) <= width else e.key[:width - 3] + "..."
            cells = [f"{name:>{width}}"] + [f"{get(e):>12}" for _, get in columns]
            if self._shapes:
                shapes = str(e.input_shapes)
                if len(shapes) > shapes_width:
                    shapes = shapes[:shapes_width - 3] + "..."
                cells.append(f"{shapes:>{shapes_width}}")
            lines.append("  ".join(cells) + "  ")
        lines += [rule, f"Self CPU time total: {fmt(sum(e.self_cpu_time_total for e in self))}"]
        if self._device:
            lines.append(f"Self Device time total: "
                         f"{fmt(sum(e.self_device_time_total for e in self))}")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        events = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise TypeError("export_chrome_trace: needs the events themselves (prof.events()), "
                                "not averages")
            args = {}
            if e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes
            if e.cpu_memory_usage:
                args["Memory (bytes)"] = e.cpu_memory_usage
            events.append({"name": e.name, "ph": "X", "cat": "user_annotation"
                           if e.is_user_annotation else "cpu_op", "ts": e.start_us,
                           "dur": e.cpu_time_total, "pid": os.getpid(), "tid": e.thread,
                           "args": args})
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
        os.replace(tmp, path)


def _shapes(values):
    out = []
    for v in values:
        if isinstance(v, autograd.Tensor):
            out.append(list(v.shape))
        elif devices.is_array(v):
            out.append(list(v.shape))
        else:
            out.append([])
    return out


def _nbytes(result):
    values = result if isinstance(result, (tuple, list)) else (result,)
    total = 0
    for v in values:
        data = v._data if isinstance(v, autograd.Tensor) else v
        total += getattr(data, "nbytes", 0) if devices.is_array(data) else 0
    return total


def _device_of(result):
    values = result if isinstance(result, (tuple, list)) else (result,)
    for v in values:
        data = v._data if isinstance(v, autograd.Tensor) else v
        if devices.is_array(data):
            return devices.of(data)
    return devices.CPU


class profile:
    """Record the operations run inside `with profile(...) as prof:` (or between start() and
    stop()), as torch.profiler.profile. `activities`: ProfilerActivity.CPU and/or CUDA (a
    device operation then waits for the device, and its time counts as device time too);
    `record_shapes` keeps each event's input shapes; `profile_memory` counts the bytes
    each event returned; `schedule` and `on_trace_ready` record some steps of a loop that
    calls prof.step(). `with_stack`, `with_flops` and `with_modules` are accepted and add
    nothing (minifw's events carry no stacks, FLOP counts or module names)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None):
        activities = set(_default_activities() if activities is None else activities)
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: activities must hold ProfilerActivity values, got {a!r}")
        if use_cuda is not None and check_bool("profile", "use_cuda", use_cuda):
            activities.add(ProfilerActivity.CUDA)
        self.activities = activities
        self.record_shapes = check_bool("profile", "record_shapes", record_shapes)
        self.profile_memory = check_bool("profile", "profile_memory", profile_memory)
        for name, value in (("with_stack", with_stack), ("with_flops", with_flops),
                            ("with_modules", with_modules), ("acc_events", acc_events)):
            check_bool("profile", name, value)
        if schedule is not None and not callable(schedule):
            raise TypeError("profile: schedule must be a callable (minifw.profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("profile: on_trace_ready must be a callable taking the profiler")
        self.schedule, self.on_trace_ready = schedule, on_trace_ready
        self._sync_devices = ProfilerActivity.CUDA in activities
        self._events, self._open = [], threading.local()
        self._recording, self._previous, self.step_num = False, None, 0
        self._finished = []  # the events of the last saved trace (schedule)
        self._next_id = 0

    # -- the hooks minifw.autograd calls ----------------------------------------------
    def records(self, cls):
        """False once for the call record() makes again, so that it is not timed twice."""
        state = self._open
        if getattr(state, "reentry", None) is cls:
            state.reentry = None
            return False
        return self._recording

    def record(self, cls, args, kwargs):
        event = self.begin(cls.__name__, args)
        self._open.reentry = cls
        try:
            result = cls.apply(*args, **kwargs)
        except BaseException:
            self._open.reentry = None
            self.end(event, None)
            raise
        self.end(event, result)
        return result

    def begin(self, name, inputs, user=False):
        if not self._recording:
            return None
        stack = self._stack()
        self._next_id += 1
        event = FunctionEvent(name, time.perf_counter_ns(), threading.get_ident(),
                              _shapes(inputs) if self.record_shapes else None, user,
                              self._next_id)
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        return event

    def end(self, event, result):
        if event is None:
            return
        device = _device_of(result) if result is not None else devices.CPU
        if self._sync_devices and device is not devices.CPU:
            devices.synchronize(device)
        event.end_us = time.perf_counter_ns() / 1000.0
        if device is not devices.CPU:
            event.device_time_total = event.cpu_time_total
        if self.profile_memory and result is not None:
            event.cpu_memory_usage = _nbytes(result) + sum(c.cpu_memory_usage
                                                           for c in event.cpu_children)
        stack = self._stack()
        while stack:  # an event left open by an error inside it ends here too
            top = stack.pop()
            if top is event:
                break
        self._events.append(event)

    def _stack(self):
        stack = getattr(self._open, "stack", None)
        if stack is None:
            stack = self._open.stack = []
        return stack

    # -- starting, stopping and steps --------------------------------------------------
    def start(self):
        if self._previous is not None or autograd._profiler is self:
            raise RuntimeError("profile: this profiler is already running")
        self._previous = autograd._set_profiler(self)
        self._apply_action(self._action())
        return self

    def stop(self):
        if autograd._profiler is not self:
            raise RuntimeError("profile: stop() without start() (or profilers stopped out of order)")
        if self.schedule is not None and self._recording:
            self._save()  # an unfinished active range is still handed over, as PyTorch's
        self._recording = False
        autograd._set_profiler(self._previous)
        self._previous = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _action(self):
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def _apply_action(self, action):
        recording = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recording and not self._recording:
            self._events = []
        self._recording = recording

    def step(self):
        """Mark the end of one step of a loop: with a schedule, the next step's action
        applies, and a finished recording is handed to on_trace_ready."""
        action = self._action()
        self.step_num += 1
        if action == ProfilerAction.RECORD_AND_SAVE:
            self._save()
        self._apply_action(self._action())

    def _save(self):
        self._finished = list(self._events)
        self._recording = False
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)
        self._events = []

    # -- results -----------------------------------------------------------------------
    def events(self):
        """Every event recorded (those of the last saved range, with a schedule), in the order
        they ended."""
        events = self._finished if self.schedule is not None and not self._events else self._events
        return EventList(sorted(events, key=lambda e: e.start_us), memory=self.profile_memory,
                         device=self._sync_devices, shapes=False)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages: group_by_input_shape=True needs record_shapes=True")
        check_int("key_averages", "group_by_stack_n", group_by_stack_n, minimum=0)
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        """The events as a Chrome trace (JSON): chrome://tracing and Perfetto open it."""
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise NotImplementedError("export_stacks: minifw's events carry no stacks")


class record_function:
    """A named range in the profile, as a context manager or decorator: the operations run
    inside are its children. Does nothing when no profiler is recording."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a string, got {type(name).__name__}")
        self.name, self._event = name, None

    def __enter__(self):
        profiler = autograd._profiler
        self._profiler = profiler
        self._event = profiler.begin(self.name, (), user=True) if profiler is not None else None
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._profiler.end(self._event, ())
        self._event = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped
