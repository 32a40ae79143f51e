"""The Caffe engine: each layer computed the classic way, with the same entry
points and signatures as minifw.ops.

Convolution is batched im2col + the array library's GEMM (NumPy, i.e. OpenBLAS
on the CPU), one GEMM per group; inner products are that GEMM too, and the
bias gradient a sum. This is the honest baseline: the lowering is done with
vectorized strided copies (one per kernel tap), the GEMMs are single large BLAS
calls, and the lowered matrix lives in a buffer that is kept between calls, as
Caffe keeps its col_buffer_.

Pooling, activations, softmax and its loss, LRN, batch norm and dropout are not
yet written the Caffe way here: in this engine they still run minifw's
primitives (imported below), so a model's difference between the two engines
is its convolutions and inner products.
"""
import threading

import numpy as np

from ..ops import (activation_backward, activation_forward, batch_norm_backward,  # noqa: F401
                   batch_norm_forward_inference, batch_norm_forward_training,
                   cross_entropy_backward, cross_entropy_forward, dropout_backward, dropout_forward,
                   lrn_backward, lrn_forward, pool2d_backward, pool2d_forward, softmax_backward,
                   softmax_forward)
from ..ops.conv import ConvProblem

_local = threading.local()


def _buffer(name, shape, dtype):
    """A cached buffer, grown when needed (Caffe keeps its col buffer per layer)."""
    size = int(np.prod(shape))
    buf = getattr(_local, name, None)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = np.empty(size, dtype=dtype)
        setattr(_local, name, buf)
    return buf[:size].reshape(shape)


def col_buffer_bytes(problem):
    """Bytes of the lowered matrix: C*R*S rows by N*Ho*Wo columns."""
    n, c, _, _ = problem.x_shape
    _, _, ho, wo = problem.out_shape
    _, _, r, s = problem.w_shape
    return c * r * s * n * ho * wo * problem.dtype.itemsize


def _tap_slices(problem, r, s):
    (sh, sw), (dh, dw) = problem.stride, problem.dilation
    _, _, ho, wo = problem.out_shape
    return (slice(r * dh, r * dh + sh * (ho - 1) + 1, sh), slice(s * dw, s * dw + sw * (wo - 1) + 1, sw))


def _padded(x, problem):
    ph, pw = problem.padding
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    xp = _buffer("padded", (n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    xp.fill(0)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    return xp


def im2col(x, problem):
    """col[c, r, s, n, oh, ow] = padded x[n, c, oh*sh + r*dh, ow*sw + s*dw]."""
    n, c, _, _ = x.shape
    _, _, ho, wo = problem.out_shape
    _, _, kr, ks = problem.w_shape
    xp = _padded(x, problem).transpose(1, 0, 2, 3)
    col = _buffer("col", (c, kr, ks, n, ho, wo), x.dtype)
    for r in range(kr):
        for s in range(ks):
            rows, cols = _tap_slices(problem, r, s)
            col[:, r, s] = xp[:, :, rows, cols]
    return col


def col2im(col, problem):
    n, c, h, w = problem.x_shape
    ph, pw = problem.padding
    _, _, kr, ks = problem.w_shape
    dxp = np.zeros((c, n, h + 2 * ph, w + 2 * pw), dtype=col.dtype)
    for r in range(kr):
        for s in range(ks):
            rows, cols = _tap_slices(problem, r, s)
            dxp[:, :, rows, cols] += col[:, r, s]
    return np.ascontiguousarray(dxp[:, :, ph:ph + h, pw:pw + w].transpose(1, 0, 2, 3))


def _problem(x_shape, w_shape, stride, padding, dilation, groups, dtype):
    return ConvProblem(x_shape, w_shape, stride=stride, padding=padding, dilation=dilation,
                       groups=groups, dtype=dtype)


def conv2d_forward(x, w, bias=None, *, stride=1, padding=0, dilation=1, groups=1):
    p = _problem(x.shape, w.shape, stride, padding, dilation, groups, x.dtype)
    n, k, ho, wo = p.out_shape
    g, kg = groups, k // groups
    col = im2col(x, p).reshape(g, -1, n * ho * wo)
    out = np.matmul(w.reshape(g, kg, -1), col)  # (g, kg, N*P): one GEMM per group
    y = out.reshape(k, n, ho, wo).transpose(1, 0, 2, 3)
    if bias is not None:
        y = y + bias.reshape(1, k, 1, 1)
    return np.ascontiguousarray(y)


def conv2d_backward_data(dy, w, x_shape, *, stride=1, padding=0, dilation=1, groups=1):
    p = _problem(x_shape, w.shape, stride, padding, dilation, groups, dy.dtype)
    n, k, ho, wo = p.out_shape
    _, cg, kr, ks = w.shape
    g, kg = groups, k // groups
    dy_mat = dy.transpose(1, 0, 2, 3).reshape(g, kg, n * ho * wo)
    dcol = np.matmul(w.reshape(g, kg, -1).transpose(0, 2, 1), dy_mat)
    return col2im(dcol.reshape(cg * g, kr, ks, n, ho, wo), p)


def conv2d_backward_filter(x, dy, w_shape, *, stride=1, padding=0, dilation=1, groups=1):
    p = _problem(x.shape, w_shape, stride, padding, dilation, groups, x.dtype)
    n, k, ho, wo = p.out_shape
    g, kg = groups, k // groups
    col = im2col(x, p).reshape(g, -1, n * ho * wo)
    dy_mat = dy.transpose(1, 0, 2, 3).reshape(g, kg, n * ho * wo)
    return np.matmul(dy_mat, col.transpose(0, 2, 1)).reshape(w_shape)


def conv2d_backward_bias(dy):
    return bias_backward(dy)


def bias_backward(dy):
    """dy summed over every axis but the channel axis 1."""
    return dy.sum(axis=(0,) + tuple(range(2, dy.ndim)))


def gemm(a, b, c=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """alpha * op(a) @ op(b) + beta * c by the array library's GEMM (c, when given, is
    written and returned), as minifw.ops.gemm."""
    product = np.matmul(a.T if trans_a else a, b.T if trans_b else b)
    if alpha != 1.0:
        product *= alpha
    if c is None:
        return product
    if beta == 0.0:
        c[...] = product
    else:
        c *= beta
        c += product
    return c
