"""torch.nn.attention's names: SDPBackend and the sdpa_kernel context manager. minifw's
scaled_dot_product_attention has one implementation (the composed "math" one), so choosing
backends changes nothing; the names exist so that scripts choosing them run."""
import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Accepts an SDPBackend or a list of them (checked) and runs the block unchanged:
    minifw computes attention one way whichever is chosen."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends) \
        if isinstance(backends, (list, tuple, set)) else None
    if chosen is None or not chosen or not all(isinstance(b, SDPBackend) for b in chosen):
        raise TypeError(f"sdpa_kernel: backends must be an SDPBackend or a non-empty list of them, "
                        f"got {backends!r}")
    if not isinstance(set_priority, bool):
        raise TypeError(f"sdpa_kernel: set_priority must be a bool, got {set_priority!r}")
    yield
