"""Dropout with a counter-based random number generator.

    y, mask = dropout_forward(x, 0.5, seed=1234)
    dx = dropout_backward(dy, mask, 0.5)

y = x * mask / (1 - p), mask a uint8 array of x's shape (1 = kept). The mask
is a function of (seed, element index) only, through Philox-4x32-10 keyed by
the seed: the same seed gives the same mask for any thread count and any
instruction set. Element i is kept when word (i % 64) // 16 of Philox's
output for counter 16 * (i // 64) + i % 16 is >= floor(p * 2**32), so each
element is kept with probability 1 - p (to within 2**-32). p = 1 drops
everything (y = 0, no division by zero); p = 0 keeps everything (y == x).
Any shape is accepted (the operation is elementwise).
"""
import numpy as np

from .. import devices
from ..checks import check_array, check_float_array, check_real, check_same_device, contiguous, is_int


def check_dropout_p(fn, p):
    return check_real(fn, "p", p, minimum=0.0, maximum=1.0)


def dropout_forward(x, p, *, seed):
    """(y, mask); seed is an int in [0, 2**64)."""
    fn = "dropout_forward"
    x = check_float_array(fn, "x", x)
    p = check_dropout_p(fn, p)
    if not is_int(seed):  # the caffe engine makes the same checks with the same messages
        raise TypeError(f"{fn}: seed must be an int, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"{fn}: seed must be in [0, 2**64), got {seed}")
    y = np.empty_like(x)
    mask = devices.empty(x.shape, np.uint8, devices.of(x))
    devices.kernel_for("dropout", "forward", x)(x, p, seed, y, mask)
    return y, mask


def dropout_backward(dy, mask, p):
    """dx = dy * mask / (1 - p) (0 where mask is 0, and everywhere when p == 1)."""
    fn = "dropout_backward"
    dy = check_float_array(fn, "dy", dy)
    p = check_dropout_p(fn, p)
    check_array(fn, "mask", mask)
    if mask.dtype not in (np.uint8, np.bool_):
        raise TypeError(f"{fn}: mask must have dtype uint8 (from dropout_forward), got {mask.dtype}")
    if mask.shape != dy.shape:
        raise ValueError(f"{fn}: mask must have the shape of dy {tuple(dy.shape)}, got {tuple(mask.shape)}")
    check_same_device(fn, dy=dy, mask=mask)
    mask = contiguous(mask).view(np.uint8)
    dx = np.empty_like(dy)
    devices.kernel_for("dropout", "backward", dy)(dy, mask, p, dx)
    return dx
