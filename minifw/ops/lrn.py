"""Local response normalization across channels (AlexNet's LRN, with PyTorch's
LocalResponseNorm semantics), NCHW:

    scale[:, c] = k + alpha / size * sum of x[:, j]**2 over j = c - size//2 .. c + (size-1)//2
                  (channels outside [0, C) count as zero)
    y = x * scale**-beta

    y, scale = lrn_forward(x, 5, alpha=1e-4, beta=0.75, k=1.0)
    dx = lrn_backward(dy, x, y, scale, 5, alpha=1e-4, beta=0.75, k=1.0)

The forward returns the scale so the backward can reuse it. Both directions
slide their window sums along the channels, so the cost does not grow with size.
"""
import numpy as np

from .. import devices
from ..checks import check_float_array, check_like, check_real, check_size


def check_lrn_params(fn, size, alpha, beta, k, dtype=None):
    """(size, alpha, beta, k): size in [1, 2**58]; the floats finite and, given the data's
    dtype, representable in it (alpha = 1e308 on float32 data gives NaN)."""
    size = check_size(fn, "size", size)
    return (size, check_real(fn, "alpha", alpha, dtype=dtype), check_real(fn, "beta", beta, dtype=dtype),
            check_real(fn, "k", k, dtype=dtype))


def _layout(fn, x):
    n, c, h, w = x.shape
    if c < 1:
        raise ValueError(f"{fn}: x must have at least one channel, got shape {tuple(x.shape)}")
    return n, c, h * w


def lrn_forward(x, size, *, alpha=1e-4, beta=0.75, k=1.0):
    """(y, scale), both of x's shape."""
    fn = "lrn_forward"
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)")
    size, alpha, beta, k = check_lrn_params(fn, size, alpha, beta, k, x.dtype)
    y = np.empty_like(x)
    scale = np.empty_like(x)
    devices.kernel_for("lrn", "forward", x)(*_layout(fn, x), size, alpha, beta, k, x, y, scale)
    return y, scale


def lrn_backward(dy, x, y, scale, size, *, alpha=1e-4, beta=0.75, k=1.0):
    """dx from dy, the forward's input x, output y and scale (same parameters
    as the forward)."""
    fn = "lrn_backward"
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)")
    dy = check_like(fn, "dy", dy, x, "x")
    y = check_like(fn, "y", y, x, "x")
    scale = check_like(fn, "scale", scale, x, "x")
    size, alpha, beta, k = check_lrn_params(fn, size, alpha, beta, k, x.dtype)
    dx = np.empty_like(x)
    kernel = devices.kernel_for("lrn", "backward", x)
    kernel(*_layout(fn, x), size, alpha, beta, k, dy, x, y, scale, dx)
    return dx
