"""Elementwise activations: relu, leaky_relu, sigmoid, tanh, elu, relu6.

    y = activation_forward(x, "relu", inplace=True)    # y is x
    dx = activation_backward(dy, y, "relu")

The backward works from the forward output y, so an in-place forward loses
nothing. Where y cannot tell which branch an element took (leaky_relu with
negative_slope < 0, elu with alpha < 0: a negative input then gives a positive
output) the forward input x is required as well; when x is given, the branch
is always taken on x. Any shape is accepted (the operation is elementwise).
"""
import numpy as np

from .. import devices
from ..checks import check_array, check_bool, check_choice, check_float_array, check_like, check_real

MODES = ("relu", "leaky_relu", "sigmoid", "tanh", "elu", "relu6")



def check_activation_params(fn, mode, negative_slope, alpha, dtype=None):
    """(slope, alpha): finite and, given the data's dtype, representable in it (an alpha
    of 1e308 on float32 data would make every negative output NaN)."""
    check_choice(fn, "mode", mode, MODES)
    return (check_real(fn, "negative_slope", negative_slope, dtype=dtype),
            check_real(fn, "alpha", alpha, dtype=dtype))


def check_activation_forward_args(x, mode, negative_slope, alpha, inplace, fn="activation_forward"):
    """(x, slope, alpha, inplace), checked for both engines; with inplace, x must already be a
    writable, C-contiguous array (it is written, so it cannot be copied)."""
    check_choice(fn, "mode", mode, MODES)
    inplace = check_bool(fn, "inplace", inplace)
    if inplace:
        check_array(fn, "x", x)
        if not x.flags.c_contiguous or not devices.is_writeable(x):
            raise ValueError(f"{fn}: inplace=True needs x to be a writable, C-contiguous array")
    x = check_float_array(fn, "x", x, copy=False)
    slope, alpha = check_activation_params(fn, mode, negative_slope, alpha, x.dtype)
    return check_float_array(fn, "x", x), slope, alpha, inplace


def check_activation_backward_args(dy, y, mode, x, negative_slope, alpha, fn="activation_backward"):
    """(dy, y, x or None, slope, alpha), checked for both engines."""
    check_choice(fn, "mode", mode, MODES)
    y = check_float_array(fn, "y", y, copy=False)
    slope, alpha = check_activation_params(fn, mode, negative_slope, alpha, y.dtype)
    y = check_float_array(fn, "y", y)
    dy = check_like(fn, "dy", dy, y, "y")
    if x is not None:
        x = check_like(fn, "x", x, y, "y")
    elif mode == "leaky_relu" and slope < 0:
        raise ValueError(f"{fn}: x is required for leaky_relu with negative_slope < 0 (got "
                         f"{slope!r}): a negative input then gives a positive output, so y cannot "
                         f"tell the branch")
    elif mode == "elu" and alpha < 0:
        raise ValueError(f"{fn}: x is required for elu with alpha < 0 (got {alpha!r}): a negative "
                         f"input then gives a positive output, so y cannot tell the branch")
    return dy, y, x, slope, alpha


def activation_forward(x, mode, *, negative_slope=0.01, alpha=1.0, inplace=False):
    """y = f(x) elementwise. mode: relu; leaky_relu (x > 0 ? x : negative_slope * x);
    sigmoid; tanh; elu (x > 0 ? x : alpha * (exp(x) - 1)); relu6 (min(max(x, 0), 6)).
    With inplace=True the result is written into x (which must then be
    C-contiguous and writable) and x is returned."""
    x, slope, alpha, inplace = check_activation_forward_args(x, mode, negative_slope, alpha, inplace)
    y = x if inplace else np.empty_like(x)
    devices.kernel_for("activation", "forward", x)(mode, x, y, slope, alpha)
    return y


def activation_backward(dy, y, mode, *, x=None, negative_slope=0.01, alpha=1.0):
    """dx = dy * f'(x), computed from the forward output y (and x where needed)."""
    dy, y, x, slope, alpha = check_activation_backward_args(dy, y, mode, x, negative_slope, alpha)
    dx = np.empty_like(y)
    devices.kernel_for("activation", "backward", y)(mode, dy, y, x, dx, slope, alpha)
    return dx
