"""Interpolation along the spatial dims (F.interpolate's modes 'linear', 'bilinear', 'bicubic',
'trilinear' and 'area', and antialias=True): every mode is separable, each output along a dim
a fixed weighted sum of inputs along that dim, so resizing is one (out, in) weight matrix per
dim, applied in turn as matrix products on any device's array module, and the gradient is the
transposed matrices applied in reverse order.

The weights follow PyTorch's CPU kernels (aten/src/ATen/native/UpSample.h): the source
coordinate of output i is scale * (i + 0.5) - 0.5 (scale * i with align_corners), scale is
1 / scale_factor where one was given (else in / out; (in - 1) / (out - 1) with align_corners),
all computed in the input's dtype, as PyTorch's float32 kernels compute in float32."""
import math

import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import constant
from .pooling import _averaging_matrix

# Keys's cubic convolution parameter, PyTorch's (and OpenCV's) for mode 'bicubic'
CUBIC_A = -0.75


def _scale(n_in, n_out, align_corners, scale_factor, real):
    if align_corners:
        return real(n_in - 1) / real(n_out - 1) if n_out > 1 else real(0)
    if scale_factor is not None and scale_factor > 0:
        return real(1.0 / scale_factor)  # the reciprocal in double, rounded once, as PyTorch's
    return real(n_in) / real(n_out)


def _source_positions(n_in, n_out, align_corners, scale_factor, real, cubic):
    """The (fractional) input coordinate each output samples; linear modes clamp it at 0."""
    scale, i = _scale(n_in, n_out, align_corners, scale_factor, real), np.arange(n_out).astype(real)
    if align_corners:
        return scale * i
    source = scale * (i + real(0.5)) - real(0.5)
    return source if cubic else np.maximum(source, real(0))


def _floor_and_fraction(source, n_in, real):
    """PyTorch's guard_index_and_lambda: index floor(source) (at most n_in - 1), fraction
    source - index clamped to [0, 1]."""
    index = np.minimum(np.floor(source).astype(np.int64), n_in - 1)
    return index, np.clip(source - index.astype(real), real(0), real(1))


def linear_weights(n_in, n_out, align_corners, scale_factor, dtype):
    """(n_out, n_in) weights of linear interpolation: 1 - t on floor(source), t on the next
    input (the same one at the last). Equal sizes copy, whatever the scale_factor, as
    PyTorch's kernels do."""
    if n_in == n_out:
        return np.eye(n_in, dtype=dtype)
    real = np.dtype(dtype).type
    source = _source_positions(n_in, n_out, align_corners, scale_factor, real, cubic=False)
    index, t = _floor_and_fraction(source, n_in, real)
    weights, rows = np.zeros((n_out, n_in), dtype), np.arange(n_out)
    np.add.at(weights, (rows, index), real(1) - t)
    np.add.at(weights, (rows, index + (index < n_in - 1)), t)
    return weights


def _cubic_coefficients(t, real):
    """Keys's cubic convolution weights of the inputs at offsets -1, 0, 1, 2 from floor(source),
    t the fraction, in PyTorch's order of operations (get_cubic_upsample_coefficients)."""
    a = real(CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + real(2)) * x - (a + real(3))) * x * x + real(1)

    def far(x):  # 1 < |x| < 2
        return ((a * x - real(5) * a) * x + real(8) * a) * x - real(4) * a

    return far(t + real(1)), near(t), near(real(1) - t), far(real(2) - t)


def cubic_weights(n_in, n_out, align_corners, scale_factor, dtype):
    """(n_out, n_in) weights of bicubic interpolation along one dim: four taps around the
    source coordinate, those past an edge moved onto the edge input (PyTorch's clamping)."""
    real = np.dtype(dtype).type
    source = _source_positions(n_in, n_out, align_corners, scale_factor, real, cubic=True)
    index, t = _floor_and_fraction(source, n_in, real)
    weights, rows = np.zeros((n_out, n_in), dtype), np.arange(n_out)
    for offset, w in zip((-1, 0, 1, 2), _cubic_coefficients(t, real)):
        np.add.at(weights, (rows, np.clip(index + offset, 0, n_in - 1)), w)
    return weights


def _triangle(x, real):
    x = np.abs(x)
    return np.where(x < real(1), real(1) - x, real(0))


def _keys_cubic(x, real, a=-0.5):
    """Keys's cubic kernel with a = -0.5 (PIL's, which antialiased bicubic matches)."""
    x, a = np.abs(x), real(a)
    near = ((a + real(2)) * x - (a + real(3))) * x * x + real(1)
    far = ((a * x - real(5) * a) * x + real(8) * a) * x - real(4) * a
    return np.where(x < real(1), near, np.where(x < real(2), far, real(0)))


def antialiased_weights(mode, n_in, n_out, align_corners, scale_factor, dtype):
    """(n_out, n_in) weights of antialiased 'bilinear' or 'bicubic' along one dim, as PIL's
    resampling and PyTorch's antialias=True: when shrinking by s, the filter (triangle, or
    Keys's cubic with a = -0.5) is stretched by s, so every input within its support counts;
    each output's weights are normalized to sum to 1. The mixed float/double arithmetic
    follows PyTorch's _compute_indices_min_size_weights_aa."""
    real, double = np.dtype(dtype).type, np.float64
    scale = _scale(n_in, n_out, align_corners, scale_factor, real)
    taps = 2 if mode == "linear" else 4
    support = real(taps * 0.5 * double(scale)) if scale >= 1 else real(taps * 0.5)
    widest = math.ceil(support) * 2 + 1
    inverse = real(1.0 / double(scale)) if scale >= 1 else real(1)
    center = (double(scale) * (np.arange(n_out) + 0.5)).astype(real)
    first = np.maximum(((center - support).astype(double) + 0.5).astype(np.int64), 0)
    count = np.minimum(((center + support).astype(double) + 0.5).astype(np.int64), n_in) - first
    count = np.clip(count, 0, widest)
    position = first[:, None] + np.arange(widest)  # (n_out, widest)
    x = ((position.astype(real) - center[:, None]).astype(double) + 0.5) * double(inverse)
    filter_ = _triangle if mode == "linear" else _keys_cubic
    w = np.where(np.arange(widest) < count[:, None], filter_(x.astype(real), real), real(0))
    total = w.sum(axis=1, keepdims=True, dtype=real)
    w = np.where(total != 0, w / np.where(total != 0, total, real(1)), w).astype(real)
    weights, inside = np.zeros((n_out, n_in), dtype), position < n_in
    np.add.at(weights, (np.broadcast_to(np.arange(n_out)[:, None], position.shape)[inside],
                        position[inside]), w[inside])
    return weights


def weight_matrix(mode, n_in, n_out, align_corners, scale_factor, dtype, dev, antialias=False):
    """The (n_out, n_in) matrix of one dim on device `dev`; None where it is the identity."""
    if mode == "area":
        return None if n_in == n_out else _averaging_matrix(n_in, n_out, dtype, dev)
    if antialias and n_in == n_out:
        return None  # PyTorch's separable antialiased kernel skips such a dim, whatever the scale
    if antialias:
        weights = antialiased_weights(mode, n_in, n_out, align_corners, scale_factor, dtype)
    else:
        make = cubic_weights if mode == "bicubic" else linear_weights
        weights = make(n_in, n_out, align_corners, scale_factor, dtype)
    if n_in == n_out and np.array_equal(weights, np.eye(n_in)):
        return None
    return devices.to_device(weights, dev)


def _along(x, axis, matrix):
    """y[..., o, ...] = sum_i matrix[o, i] x[..., i, ...] along `axis`, as one matrix product."""
    shape = x.shape
    if axis == x.ndim - 1:
        y = np.matmul(x.reshape(math.prod(shape[:-1]), shape[-1]), matrix.T)
    else:  # (explicit sizes: -1 is ambiguous for an empty batch)
        y = np.matmul(matrix, x.reshape(math.prod(shape[:axis]), shape[axis],
                                        math.prod(shape[axis + 1:])))
    return y.reshape(shape[:axis] + (matrix.shape[0],) + shape[axis + 1:])


class Interpolation(Function):
    """Resize x (N, C, *spatial) to `sizes` with one weight matrix W_d per spatial dim d:
    y is x with W_1 applied along the first spatial dim, then W_2 along the next, ... (for
    4-D, y = W_h x W_w^T), and dx is dy with the transposed matrices applied in reverse order
    (dx = W_h^T dy W_w). mode: 'linear' (any number of dims: linear, bilinear, trilinear),
    'bicubic' or 'area' (adaptive average pooling's windows); antialias: the linear or cubic
    filter stretched over all the inputs an output covers when shrinking."""

    @staticmethod
    def forward(ctx, x, *, mode, sizes, align_corners, scale_factors, antialias=False):
        dev = devices.of(x)
        matrices = [(axis, weight_matrix(mode, n_in, n_out, align_corners, scale, x.dtype, dev,
                                         antialias))
                    for axis, (n_in, n_out, scale)
                    in enumerate(zip(x.shape[2:], sizes, scale_factors), start=2)]
        ctx.matrices = [(axis, m) for axis, m in matrices if m is not None]  # identities skipped
        y = x
        for axis, matrix in ctx.matrices:
            y = _along(y, axis, matrix)
        return y.copy() if y is x else y

    @staticmethod
    def backward(ctx, dy):
        dx = dy
        for axis, matrix in reversed(ctx.matrices):
            dx = _along(dx, axis, matrix.T)
        return dx.copy() if dx is dy else dx

    @staticmethod
    def backward_graph(ctx, dy):
        # linear in dy: the same transposed matrices as recorded products (constants)
        dx = dy
        for axis, matrix in reversed(ctx.matrices):
            dx = (dx.movedim(axis, -1) @ constant(matrix)).movedim(-1, axis)
        return dx if dx is not dy else dy.clone()
