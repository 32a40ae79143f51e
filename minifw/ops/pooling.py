"""2-D max and average pooling, NCHW: describe, then execute.

    problem = PoolProblem(x.shape, 3, stride=2, ceil_mode=True)   # Caffe's AlexNet pools
    y, indices = pool2d_forward(x, 3, stride=2, ceil_mode=True, return_indices=True)
    dx = pool2d_backward(dy, x.shape, 3, stride=2, ceil_mode=True, indices=indices)

Semantics are PyTorch's max_pool2d / avg_pool2d: padding is at most half the
kernel; the output size is floor((H + 2p - d (k - 1) - 1) / s) + 1, or with
ceil_mode the ceiling, except that a last window starting inside the right
padding is dropped. Max pooling may be dilated (a window's k taps d apart;
every window must hold at least one input element) and ignores padding; its indices are flat indices h * W + w
into each input plane, of each window's first maximum in row-major order (a
NaN counts as the maximum), and its backward routes the gradient there.
Average pooling divides by the window's area clipped to the padded input
(count_include_pad=True) or by the number of input elements it covers.
"""
import numpy as np

from .. import caches, devices
from .geometry import window_out_size
from ..checks import (check_array, check_bool, check_choice, check_dtype_arg, check_float_array,
                      check_no_zero_dims, check_pair, check_same_device, check_shape, contiguous,
                      contiguous_for)

MODES = ("max", "avg")
MAX_DILATION = 2 ** 30  # the largest the native library takes


def first_empty_window(size, stride, padding, dilation, out):
    """The first output along one axis whose window holds no input element, or None. Every
    window starts before `size`, so only one starting in the left padding can miss the
    input, by stepping over it with a dilation larger than the input (PyTorch would give
    -inf and an index outside the input there)."""
    if dilation <= size:
        return None
    for o in range(min(out, -(-padding // stride))):
        start = o * stride - padding
        if start + -(-(-start) // dilation) * dilation >= size:
            return o
    return None


class PoolProblem:
    """A pooling problem: shapes, geometry and dtype; no data.

    x_shape is (N, C, H, W); kernel_size, stride, padding and dilation are ints or
    (height, width) pairs (stride None means the kernel size; dilation other than 1
    for mode='max' only). `out_shape` is (N, C, Ho, Wo).
    """

    __slots__ = ("x_shape", "kernel_size", "stride", "padding", "dilation", "mode", "ceil_mode",
                 "count_include_pad", "dtype", "out_shape", "_args", "_native_mode", "_key")

    def __init__(self, x_shape, kernel_size, *, stride=None, padding=0, dilation=1, mode="max", ceil_mode=False,
                 count_include_pad=True, dtype="float32", _fn="PoolProblem"):
        x_shape = check_shape(_fn, "x_shape", x_shape, 4)
        kernel_size = check_pair(_fn, "kernel_size", kernel_size, minimum=1)
        stride = kernel_size if stride is None else check_pair(_fn, "stride", stride, minimum=1)
        padding = check_pair(_fn, "padding", padding, minimum=0)
        dilation = check_pair(_fn, "dilation", dilation, minimum=1, maximum=MAX_DILATION)
        check_choice(_fn, "mode", mode, MODES)
        if mode != "max" and dilation != (1, 1):
            raise ValueError(f"{_fn}: dilation must be 1 for mode={mode!r} (only max pooling is dilated), "
                             f"got dilation={dilation}")
        ceil_mode = check_bool(_fn, "ceil_mode", ceil_mode)
        count_include_pad = check_bool(_fn, "count_include_pad", count_include_pad)
        dtype = check_dtype_arg(_fn, "dtype", dtype)
        n, c, h, w = x_shape
        for axis, k, p in (("height", kernel_size[0], padding[0]), ("width", kernel_size[1], padding[1])):
            if 2 * p > k:
                raise ValueError(f"{_fn}: padding must be at most half the kernel size; got padding={padding} "
                                 f"with kernel_size={kernel_size} ({axis})")
        ho = window_out_size(h, kernel_size[0], stride[0], padding[0], dilation[0], ceil_mode)
        wo = window_out_size(w, kernel_size[1], stride[1], padding[1], dilation[1], ceil_mode)
        if ho < 1 or wo < 1:
            extent = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel_size))
            dilated = "" if dilation == (1, 1) else f" dilated to {extent[0]}x{extent[1]} by dilation={dilation}"
            raise ValueError(f"{_fn}: output size would be < 1: padded input {h + 2 * padding[0]}x"
                             f"{w + 2 * padding[1]} is smaller than the kernel, kernel_size={kernel_size}"
                             f"{dilated} (x_shape={x_shape}, padding={padding}, stride={stride}, "
                             f"ceil_mode={ceil_mode})")
        if h * w >= 2 ** 31 or n * c * h * w * 8 >= 2 ** 62:
            raise ValueError(f"{_fn}: problem too large to index: x_shape={x_shape}")
        self.x_shape, self.kernel_size, self.stride, self.padding = x_shape, kernel_size, stride, padding
        self.dilation = dilation
        self.mode, self.ceil_mode, self.count_include_pad, self.dtype = mode, ceil_mode, count_include_pad, dtype
        self._args = (n, c, h, w, kernel_size[0], kernel_size[1], stride[0], stride[1], padding[0], padding[1],
                      dilation[0], dilation[1], ceil_mode)
        for axis, size, s, p, d, out in (("height", h, stride[0], padding[0], dilation[0], ho),
                                         ("width", w, stride[1], padding[1], dilation[1], wo)):
            empty = first_empty_window(size, s, p, d, out)
            if empty is not None:
                raise ValueError(f"{_fn}: output {empty} along the {axis} holds no input element: every tap of "
                                 f"its window lands in the padding (x_shape={x_shape}, kernel_size={kernel_size}, "
                                 f"stride={stride}, padding={padding}, dilation={dilation})")
        self.out_shape = (n, c, ho, wo)
        self._native_mode = "max" if mode == "max" else (
            "avg_include_pad" if count_include_pad else "avg_exclude_pad")
        self._key = (self._args, self._native_mode, dtype.name)

    def __eq__(self, other):
        return isinstance(other, PoolProblem) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return (f"PoolProblem(x_shape={self.x_shape}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, mode={self.mode!r}, ceil_mode={self.ceil_mode}, "
                f"count_include_pad={self.count_include_pad}, dtype='{self.dtype.name}')")


# bounded (minifw.caches): a program that sees ever new shapes must not grow it without end
_problems = caches.register("pool.problems", caches.LRUCache("pool.problems", 1024))


def _typed(v):
    if isinstance(v, (tuple, list)):
        return type(v), tuple(_typed(e) for e in v)
    return type(v), v


def pool_problem(fn, x_shape, kernel_size, stride, padding, mode, ceil_mode, count_include_pad, dtype,
                 dilation=1):
    """PoolProblem for these arguments, memoized (a training loop asks for the
    same few problems every step)."""
    # Types are part of the key: 2.0 == 2 and True == 1 as dict keys, but only
    # the ints are valid.
    key = (fn, dtype) + tuple(_typed(v) for v in (x_shape, kernel_size, stride, padding, dilation, mode,
                                                  ceil_mode, count_include_pad))
    try:
        problem = _problems.get(key)
    except TypeError:  # unhashable arguments (e.g. lists): no caching
        key = problem = None
    if problem is not None:
        return problem
    problem = PoolProblem(x_shape, kernel_size, stride=stride, padding=padding, dilation=dilation, mode=mode,
                          ceil_mode=ceil_mode, count_include_pad=count_include_pad, dtype=dtype, _fn=fn)
    if key is not None:
        _problems.put(key, problem)
    return problem


# The argument checks of both directions, shared with the other engines (minifw.engines).

def check_pool_forward_args(x, kernel_size, stride, padding, mode, ceil_mode, count_include_pad,
                            return_indices, fn="pool2d_forward", dilation=1):
    """(x C-contiguous, its PoolProblem, return_indices as a bool)."""
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)", copy=False)
    check_no_zero_dims(fn, "x", x)
    return_indices = check_bool(fn, "return_indices", return_indices)
    problem = pool_problem(fn, x.shape, kernel_size, stride, padding, mode, ceil_mode,
                           count_include_pad, x.dtype, dilation)
    x = contiguous_for(fn, "x", x)  # after the problem's size checks
    if return_indices and problem.mode != "max":
        raise ValueError(f"{fn}: return_indices=True needs mode='max', got mode={mode!r}")
    return x, problem, return_indices


def check_pool_backward_args(dy, x_shape, kernel_size, stride, padding, mode, ceil_mode,
                             count_include_pad, indices, fn="pool2d_backward", dilation=1):
    """(dy C-contiguous, the PoolProblem, indices C-contiguous or None)."""
    dy = check_float_array(fn, "dy", dy, ndim=4, ndim_desc="4-D (N, C, Ho, Wo)", copy=False)
    problem = pool_problem(fn, x_shape, kernel_size, stride, padding, mode, ceil_mode,
                           count_include_pad, dy.dtype, dilation)
    if dy.shape != problem.out_shape:
        raise ValueError(f"{fn}: dy must have the output shape {problem.out_shape} of this problem "
                         f"({problem}), got {tuple(dy.shape)}")
    dy = contiguous_for(fn, "dy", dy)
    indices = check_pool_indices(fn, indices, problem)
    check_same_device(fn, dy=dy, indices=indices)
    return dy, problem, indices


def check_pool_indices(fn, indices, problem):
    """Max pooling's backward needs the forward's int64 indices of the output's shape (returned
    C-contiguous); average pooling takes none."""
    if problem.mode != "max":
        if indices is not None:
            raise ValueError(f"{fn}: indices is only used by mode='max', got mode={problem.mode!r}")
        return None
    if indices is None:
        raise ValueError(f"{fn}: indices is required for mode='max' (from pool2d_forward(..., "
                         f"return_indices=True))")
    check_array(fn, "indices", indices)
    if indices.dtype != np.int64:
        raise TypeError(f"{fn}: indices must have dtype int64, got {indices.dtype}")
    if indices.shape != problem.out_shape:
        raise ValueError(f"{fn}: indices must have the output shape {problem.out_shape}, got "
                         f"{tuple(indices.shape)}")
    return contiguous(indices)


def pool2d_forward(x, kernel_size, *, stride=None, padding=0, dilation=1, mode="max", ceil_mode=False,
                   count_include_pad=True, return_indices=False):
    """y (N, C, Ho, Wo), or (y, indices) with return_indices (max pooling only;
    int64 flat indices into each input plane)."""
    x, problem, return_indices = check_pool_forward_args(x, kernel_size, stride, padding, mode,
                                                         ceil_mode, count_include_pad, return_indices,
                                                         dilation=dilation)
    y = devices.empty(problem.out_shape, x.dtype, devices.of(x))
    indices = devices.empty(problem.out_shape, np.int64, devices.of(x)) if return_indices else None
    devices.kernel_for("pool", "forward", x)(problem._native_mode, problem._args, x, y, indices)
    return (y, indices) if return_indices else y


def pool2d_backward(dy, x_shape, kernel_size, *, stride=None, padding=0, dilation=1, mode="max",
                    ceil_mode=False, count_include_pad=True, indices=None):
    """dx of shape x_shape. Max pooling needs the forward's indices."""
    dy, problem, indices = check_pool_backward_args(dy, x_shape, kernel_size, stride, padding, mode,
                                                    ceil_mode, count_include_pad, indices, dilation=dilation)
    dx = devices.empty(problem.x_shape, dy.dtype, devices.of(dy))
    try:
        kernel = devices.kernel_for("pool", "backward", dy)
        kernel(problem._native_mode, problem._args, dy, indices, dx)
    except ValueError as e:  # an index outside its input plane
        raise ValueError(f"pool2d_backward: {e}") from None
    return dx
