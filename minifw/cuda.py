"""minifw.cuda, the parts of torch.cuda that training scripts call.

    if minifw.cuda.is_available(): model.cuda()

Device "cuda" is CuPy's current GPU: minifw uses one GPU per process (choose it with
CUDA_VISIBLE_DEVICES or cupy.cuda.Device(n).use()). Random numbers for every device come from
minifw's CPU generators (minifw.manual_seed), so manual_seed here seeds nothing more.
"""
from . import devices


def is_available():
    """Whether tensors can be placed on "cuda": the CUDA kernels compiled in, CuPy installed
    and a GPU present (minifw.devices.unavailable_reason('cuda') says which is missing)."""
    return devices.unavailable_reason("cuda") is None


def device_count():
    """1 where "cuda" can be used (CuPy's current GPU), else 0."""
    return 1 if is_available() else 0


def current_device():
    """The index of the GPU "cuda" is; RuntimeError saying why where there is none."""
    return devices.get("cuda", "current_device").index


def get_device_name(device=None):
    """The GPU's name, as torch.cuda.get_device_name."""
    _check_device(device, "get_device_name")
    return devices.gpu_info()["name"]


def get_device_capability(device=None):
    """(major, minor) compute capability of the GPU."""
    _check_device(device, "get_device_capability")
    major, minor = devices.gpu_info()["compute_capability"].split(".")
    return int(major), int(minor)


def synchronize(device=None):
    """Waits for the work queued on the GPU (CuPy's current stream)."""
    devices.synchronize(_check_device(device, "synchronize"))


def memory_allocated(device=None):
    """Bytes of GPU memory held by arrays now (CuPy's memory pool)."""
    _check_device(device, "memory_allocated")
    return devices._cupy().get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes of GPU memory CuPy's pool holds, in use or cached for reuse."""
    _check_device(device, "memory_reserved")
    return devices._cupy().get_default_memory_pool().total_bytes()


def empty_cache():
    """Returns the memory CuPy's pool caches (not held by arrays) to the GPU."""
    if is_available():
        devices._cupy().get_default_memory_pool().free_all_blocks()


def manual_seed(seed):
    """Accepted for torch.cuda.manual_seed's callers: minifw draws every device's random
    numbers from its CPU generators, which minifw.manual_seed seeds."""
    int(seed)


manual_seed_all = manual_seed


def _check_device(device, fn):
    if device is None:
        return devices.get("cuda", fn)
    name = f"cuda:{device}" if isinstance(device, int) else device
    dev = devices.get(name, fn)
    if dev.type != "cuda":
        raise ValueError(f"{fn}: expected a cuda device, got {str(dev)!r}")
    return dev


class amp:
    """torch.cuda.amp's (deprecated) forms of minifw.amp's autocast and GradScaler."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=None):
        from .amp import autocast
        return autocast("cuda", dtype, enabled, cache_enabled)

    @staticmethod
    def GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                   growth_interval=2000, enabled=True):
        from .amp import GradScaler
        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                          enabled)

    @staticmethod
    def custom_fwd(fwd=None, *, cast_inputs=None):
        from .amp import custom_fwd
        return custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)

    @staticmethod
    def custom_bwd(bwd=None):
        from .amp import custom_bwd
        return custom_bwd(bwd, device_type="cuda")
