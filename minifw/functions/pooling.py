"""2-D pooling: max and average over fixed windows through the current engine's pooling
primitive; adaptive average and max pooling (the windows follow from the input and output
sizes, as PyTorch computes them) as array code.

Second derivatives (create_graph=True): max pooling's gradient puts dy at the argmax
positions, a scatter whose derivative in dy is gathering at the same (constant) indices
(IndexScatter and Index); average pooling is linear, its gradient the adjoint
(AveragePoolingGradient), whose own gradient is average pooling again."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..engines import current_engine
from .convolution import engine_of
from .shape import IndexScatter


def _scatter_to_planes(dy, indices, x_shape):
    """dy (N, C, ...) added at `indices` (the same shape, flat positions h * W + w in each
    input plane) into zeros of x_shape, recorded: the max poolings' gradient as a Tensor."""
    n, c, h, w = x_shape
    planes = devices.to_device(np.arange(n * c)[:, None], devices.of(indices))
    index = (planes, indices.reshape(n * c, -1))
    return IndexScatter.apply(dy.reshape(n * c, -1), shape=(n * c, h * w), index=index).reshape(x_shape)


class MaxPooling2D(Function):
    @staticmethod
    def forward(ctx, x, *, return_indices, **args):
        engine = ctx.engine = current_engine()
        if not (return_indices or ctx.needs_input_grad[0]):  # inference: no index array at all
            return engine.pool2d_forward(x, mode="max", **args)
        y, indices = engine.pool2d_forward(x, mode="max", return_indices=True, **args)
        ctx.save_for_backward(indices)
        ctx.x_shape, ctx.args = x.shape, args
        return (y, indices) if return_indices else y

    @staticmethod
    def backward(ctx, dy, *_):  # (the indices output, when returned, has no gradient)
        indices, = ctx.saved_tensors
        return ctx.engine.pool2d_backward(dy, ctx.x_shape, mode="max", indices=indices, **ctx.args)

    @staticmethod
    def backward_graph(ctx, dy, *_):
        indices, = ctx.saved_tensors
        return _scatter_to_planes(dy, indices._data, ctx.x_shape)


class AveragePooling2D(Function):
    @staticmethod
    def forward(ctx, x, **args):
        engine = ctx.engine = current_engine()
        ctx.x_shape, ctx.args = x.shape, args
        return engine.pool2d_forward(x, mode="avg", **args)

    @staticmethod
    def backward(ctx, dy):
        return ctx.engine.pool2d_backward(dy, ctx.x_shape, mode="avg", **ctx.args)

    @staticmethod
    def backward_graph(ctx, dy):
        with engine_of(ctx):
            return AveragePoolingGradient.apply(dy, x_shape=ctx.x_shape, **ctx.args)


class AveragePoolingGradient(Function):
    """Average pooling's input gradient as a Function of dy (the primitive's backward): the
    adjoint of a linear map, so its own gradient is average pooling with the same arguments."""

    @staticmethod
    def forward(ctx, dy, *, x_shape, **args):
        engine = ctx.engine = current_engine()
        ctx.args = args
        return engine.pool2d_backward(dy, x_shape, mode="avg", **args)

    @staticmethod
    def backward(ctx, g):
        return ctx.engine.pool2d_forward(g, mode="avg", **ctx.args)

    @staticmethod
    def backward_graph(ctx, g):
        with engine_of(ctx):
            return AveragePooling2D.apply(g, **ctx.args)


def adaptive_windows(size, out):
    """(start, end) of each of the `out` windows over `size` positions, as PyTorch's adaptive
    pooling: start_i = floor(i * size / out), end_i = ceil((i + 1) * size / out). Windows
    cover every position, overlap by at most one, and differ in length by at most one."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _host_averaging_matrix(size, out, dtype):
    """(out, size) matrix whose row i averages window i: 1 / length over the window."""
    start, end = adaptive_windows(size, out)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _averaging_matrix(size, out, dtype, dev):
    return devices.to_device(_host_averaging_matrix(size, out, dtype), dev)


def _pooling_matrix(h, w, oh, ow, dtype, dev):
    """kron(A_h, A_w): row i * ow + j averages window (i, j) of a flattened H x W plane."""
    return devices.to_device(np.kron(_host_averaging_matrix(h, oh, dtype), _host_averaging_matrix(w, ow, dtype)),
                             dev)


# The most elements of the pooling matrix kron(A_h, A_w) that AdaptiveAveragePooling2D forms
# (32 MiB of float64): beyond, two batches of small products.
_POOLING_MATRIX_LIMIT = 1 << 22


class AdaptiveAveragePooling2D(Function):
    """Mean of x (N, C, H, W) over adaptive windows: out_h x out_w of them. A window's mean
    is the mean over its rows of the mean over its columns, so the pooling is two matrix
    products, y = A_h x A_w^T with A the averaging matrices, and its adjoint is
    dx = A_h^T dy A_w. With each plane flattened, that is one product with the pooling
    matrix K = kron(A_h, A_w) ((out_h out_w) x (H W)): y = x K^T and dx = dy K, one GEMM
    over all planes rather than a batch of one small product per plane (global pooling of
    16 x 1280 x 7 x 7: 1.6 -> 0.4 ms forward); where K would be large, the two batches."""

    @staticmethod
    def forward(ctx, x, *, output_size):
        (n, c, h, w), (oh, ow), dev = x.shape, output_size, devices.of(x)
        rows = _averaging_matrix(h, oh, x.dtype, dev)
        cols = _averaging_matrix(w, ow, x.dtype, dev)
        ctx.save_for_backward(rows, cols)
        if oh * ow * h * w > _POOLING_MATRIX_LIMIT:
            return np.matmul(np.matmul(rows, x), cols.T)
        pooling = _pooling_matrix(h, w, oh, ow, x.dtype, dev)
        return (x.reshape(n * c, h * w) @ pooling.T).reshape(n, c, oh, ow)

    @staticmethod
    def backward(ctx, dy):
        rows, cols = ctx.saved_tensors
        (n, c, oh, ow), h, w = dy.shape, rows.shape[1], cols.shape[1]
        if oh * ow * h * w > _POOLING_MATRIX_LIMIT:
            return np.matmul(np.matmul(rows.T, dy), cols)
        pooling = _pooling_matrix(h, w, oh, ow, dy.dtype, devices.of(dy))
        return (dy.reshape(n * c, oh * ow) @ pooling).reshape(n, c, h, w)

    @staticmethod
    def backward_graph(ctx, dy):  # the averaging matrices depend on the sizes only: constants
        rows, cols = ctx.saved_tensors
        return rows.T @ dy @ cols


def _window_positions(size, out):
    """(out, k) positions of each window, k the longest window; shorter windows repeat their
    last position, which leaves a maximum (and the first position holding it) unchanged."""
    start, end = adaptive_windows(size, out)
    k = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)


class AdaptiveMaxPooling2D(Function):
    """Maximum of x (N, C, H, W) over adaptive windows. Every window is gathered at once
    (N, C, out_h, out_w, k_h * k_w) and reduced with argmax, which picks the first maximum
    in row-major order, as PyTorch's kernel does. The int64 indices (second output, when
    asked) are h * W + w in each input plane, as max_pool2d's."""

    @staticmethod
    def forward(ctx, x, *, output_size, return_indices):
        (n, c, h, w), (oh, ow), dev = x.shape, output_size, devices.of(x)
        ph, pw = _window_positions(h, oh), _window_positions(w, ow)
        kh, kw = ph.shape[1], pw.shape[1]
        # flat[i, j, :]: the plane offsets h * W + w of window (i, j), row-major
        flat = (ph[:, None, :, None] * w + pw[None, :, None, :]).reshape(oh, ow, kh * kw)
        flat = devices.to_device(flat.astype(np.int64), dev)
        windows = x.reshape(n, c, h * w)[:, :, flat]  # (N, C, oh, ow, kh * kw)
        best = np.argmax(windows, axis=-1)
        y = np.take_along_axis(windows, best[..., None], axis=-1)[..., 0]
        window = devices.to_device(np.arange(oh * ow).reshape(oh, ow), dev)
        indices = flat.reshape(oh * ow, kh * kw)[window, best]  # (N, C, oh, ow)
        ctx.save_for_backward(indices)
        ctx.x_shape = x.shape
        return (y, indices) if return_indices else y

    @staticmethod
    def backward(ctx, dy, *_):  # (the indices output has no gradient)
        indices, = ctx.saved_tensors
        n, c, h, w = ctx.x_shape
        dx = devices.zeros((n * c, h * w), dy.dtype, devices.of(dy))
        planes = devices.to_device(np.arange(n * c)[:, None], devices.of(dy))
        # windows overlap: an input may be the maximum of several, so contributions add
        devices.ufunc_at(np.add, dx, (planes, indices.reshape(n * c, -1)), dy.reshape(n * c, -1))
        return dx.reshape(n, c, h, w)

    @staticmethod
    def backward_graph(ctx, dy, *_):
        indices, = ctx.saved_tensors
        return _scatter_to_planes(dy, indices._data, ctx.x_shape)

