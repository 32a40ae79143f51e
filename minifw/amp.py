"""Automatic mixed precision, as far as minifw has it: the names PyTorch's training scripts use
(autocast, GradScaler), so that a script written for mixed precision runs. minifw computes in
float32 (float64 where asked), never float16 or bfloat16, so autocast changes no dtype and the
GradScaler scales nothing; asked to be enabled, each warns once that it does nothing."""
import contextlib
import functools
import warnings

_DEVICE_TYPES = ("cpu", "cuda", "cudasim")


def _check_device_type(fn, device_type):
    if device_type not in _DEVICE_TYPES:
        raise ValueError(f"{fn}: device_type must be one of {', '.join(_DEVICE_TYPES)}; got "
                         f"{device_type!r}")


def _warn_enabled(fn):
    warnings.warn(f"{fn}: minifw computes in float32 (no float16/bfloat16), so mixed precision "
                  f"is not applied; pass enabled=False to silence this", UserWarning, stacklevel=3)


class autocast(contextlib.ContextDecorator):
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context
    (and decorator) in which operations keep their float32 dtype."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        _check_device_type("autocast", device_type)
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, bool(enabled)
        if self.enabled:
            _warn_enabled("autocast")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=65536.0, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True): the loss is not scaled (float32
    gradients do not underflow as float16 ones do), so scale() returns its argument, step()
    runs optimizer.step(), and update() and unscale_() change nothing."""

    def __init__(self, device="cuda", init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _check_device_type("GradScaler", device)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        if enabled:
            _warn_enabled("GradScaler")

    # the schedule's settings are kept and reported, though no scale ever follows them
    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return False  # nothing is ever scaled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict):
            raise TypeError(f"GradScaler.load_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")


def is_autocast_available(device_type):
    """Whether autocast accepts `device_type` (a string such as "cpu" or "cuda")."""
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_available: device_type must be a str, got "
                        f"{type(device_type).__name__}")
    return device_type in _DEVICE_TYPES


def _device_type_arg(fn, device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"{fn}: device_type must be a str such as 'cuda' or 'cpu', got "
                         f"{type(device_type).__name__}")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the forward of an autograd.Function under autocast (used as
    @custom_fwd(device_type="cuda") or @custom_fwd(device_type="cuda", cast_inputs=...)).
    minifw's autocast casts nothing, so forward runs as written and cast_inputs has nothing
    to undo: the function comes back unchanged."""
    _device_type_arg("custom_fwd", device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the backward of an autograd.Function whose forward has custom_fwd: the
    backward runs with the forward's autocast state, which in minifw is always float32, so the
    function comes back unchanged."""
    _device_type_arg("custom_bwd", device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
