"""torch.autograd.profiler's names: the older profile (enabled=, use_cuda=) and
record_function, over minifw.profiler."""
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function  # noqa: F401
from ..profiler import ProfilerActivity
from ..profiler import profile as _profile


class profile(_profile):
    """torch.autograd.profiler.profile: as minifw.profiler.profile, with enabled=False
    recording nothing and use_cuda=True (use_device="cuda") timing device operations."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        activities = {ProfilerActivity.CPU}
        if use_cuda or use_device is not None:
            activities.add(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules, acc_events=acc_events)
        self.enabled = bool(enabled)

    def __enter__(self):
        return self.start() if self.enabled else self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop()
        return False

    def total_average(self):
        return self.events().total_average()

    @property
    def function_events(self):
        return self.events()

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)
