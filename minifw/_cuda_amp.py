"""torch.cuda.amp's (deprecated) forms of minifw.amp's autocast, GradScaler, custom_fwd and
custom_bwd, with device "cuda" filled in; importable as minifw.cuda.amp."""
from . import amp as _amp


def autocast(enabled=True, dtype=None, cache_enabled=None):
    return _amp.autocast("cuda", dtype, enabled, cache_enabled)


def GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
    return _amp.GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    return _amp.custom_bwd(bwd, device_type="cuda")


__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
