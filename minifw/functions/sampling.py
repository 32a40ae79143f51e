"""Sampling an image at given points (F.grid_sample) and its patches as columns (F.unfold,
F.fold).

GridSampling reads input (N, C, H, W) at the points of grid (N, Ho, Wo, 2), whose last dim
holds (x, y) in [-1, 1] (-1 and 1 the outer edges of the corner pixels, or their centres with
align_corners). Every mode is a sum of taps, each tap a pixel index and a weight per output
point, and the taps along x and y multiply: 'nearest' one per axis, 'bilinear' two, 'bicubic'
four (Keys's cubic convolution, as F.interpolate's). Forward gathers the taps' pixels and
weights them; the input's gradient scatters dy times each weight back onto the pixels; the
grid's is dy times the pixels times each weight's derivative along the coordinate. Coordinates
follow PyTorch's grid sampler: 'border' and 'reflection' move the (unnormalized) coordinate
into the image before bilinear and nearest taps are taken, and move each bicubic tap.

Unfolding is im2col in PyTorch's layout: (N, C, H, W) to (N, C*kh*kw, L), one row per channel
and kernel tap (channel slowest), one column per window position. Folding is its adjoint,
col2im: each column's values added back where they were taken from, overlaps summed. Both are
one strided slice per kernel tap, so each is the other's gradient.
"""
import numpy as np

from .. import devices
from ..autograd import Function
from .interpolation import CUBIC_A, _cubic_coefficients


# ---- grid sampling ----------------------------------------------------------------------------

def _unnormalize(coord, size, align_corners, real):
    """Grid coordinate in [-1, 1] to a pixel coordinate, and its derivative."""
    if align_corners:
        return (coord + real(1)) / real(2) * real(size - 1), real((size - 1) / 2)
    return ((coord + real(1)) * real(size) - real(1)) / real(2), real(size / 2)


def _clip(coord, size, real):
    """Clamped to [0, size - 1]; the derivative is 0 at and beyond the ends."""
    inside = (coord > 0) & (coord < size - 1)
    return np.clip(coord, real(0), real(size - 1)), inside.astype(coord.dtype)


def _reflect(coord, twice_low, twice_high, real):
    """Reflected into [twice_low / 2, twice_high / 2] about its ends, as often as it takes,
    and the derivative (+1 or -1). Half-integer bounds keep the reflection exact."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    low, span = real(twice_low / 2), real((twice_high - twice_low) / 2)
    coord = coord - low
    sign = np.where(coord < 0, real(-1), real(1))
    coord = np.abs(coord)
    extra, even = np.fmod(coord, span), np.floor(coord / span) % 2 == 0
    return (np.where(even, extra + low, span - extra + low),
            np.where(even, sign, -sign))


def _padded(coord, size, padding_mode, align_corners, real):
    """A pixel coordinate moved into the image by padding_mode, and its derivative."""
    if padding_mode == "zeros":
        return coord, None
    grad = None
    if padding_mode == "reflection":
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord, grad = _reflect(coord, *twice, real)
    coord, inside = _clip(coord, size, real)
    return coord, inside if grad is None else grad * inside


def _cubic_derivatives(t, real):
    """d/dt of _cubic_coefficients(t): the taps at offsets -1, 0, 1, 2 from floor(source)."""
    a = real(CUBIC_A)

    def near(x):  # d/dx of ((a + 2) x - (a + 3)) x^2 + 1
        return (real(3) * (a + real(2)) * x - real(2) * (a + real(3))) * x

    def far(x):  # d/dx of ((a x - 5 a) x + 8 a) x - 4 a
        return (real(3) * a * x - real(10) * a) * x + real(8) * a

    return far(t + real(1)), near(t), -near(real(1) - t), -far(real(2) - t)


def _axis_taps(coord, size, mode, padding_mode, align_corners):
    """The taps along one axis for grid coordinates `coord` (N, L): a list of (index, weight,
    d weight / d coord), the index 0 and both weights 0 where the tap falls outside the image
    (there it reads a zero)."""
    real = coord.dtype.type
    source, scale = _unnormalize(coord, size, align_corners, real)
    if mode == "bicubic":  # padding moves each tap, not the coordinate
        floor = np.floor(source)
        t = source - floor
        taps = [(_padded(floor + real(offset), size, padding_mode, align_corners, real)[0],
                 w, dw * scale)
                for offset, w, dw in zip((-1, 0, 1, 2), _cubic_coefficients(t, real),
                                         _cubic_derivatives(t, real))]
    else:
        source, grad = _padded(source, size, padding_mode, align_corners, real)
        chain = np.full_like(source, scale) if grad is None else grad * scale
        if mode == "nearest":  # round half to even, as nearbyint
            taps = [(np.rint(source), np.ones_like(source), np.zeros_like(source))]
        else:
            floor = np.floor(source)
            taps = [(floor, floor + real(1) - source, -chain),
                    (floor + real(1), source - floor, chain)]
    out = []
    for position, weight, slope in taps:
        inside = (position >= 0) & (position <= size - 1)  # false for NaN
        index = np.where(inside, position, real(0)).astype(np.int64)
        out.append((index, np.where(inside, weight, real(0)),
                    np.where(inside, slope, real(0))))
    return out


def _taps(x_shape, grid, mode, padding_mode, align_corners):
    """Every tap of the 2-D sampling: (flat pixel index y * W + x, weight, d weight / d x,
    d weight / d y), each (N, Ho * Wo)."""
    n, _, h, w = x_shape
    points = grid.reshape(n, grid.shape[1] * grid.shape[2], 2)  # (-1 is ambiguous when n = 0)
    with np.errstate(invalid="ignore", over="ignore"):  # inf / NaN coordinates read zeros
        along_x = _axis_taps(points[..., 0], w, mode, padding_mode, align_corners)
        along_y = _axis_taps(points[..., 1], h, mode, padding_mode, align_corners)
    return [(iy * w + ix, wx * wy, dwx * wy, wx * dwy)
            for iy, wy, dwy in along_y for ix, wx, dwx in along_x]


def _gather(x, index):
    """x (N, C, H, W) at flat pixel indices `index` (N, L): (N, C, L)."""
    n, c, h, w = x.shape
    xp = devices.array_module(devices.of(x))
    return x.reshape(n, c, h * w)[xp.arange(n)[:, None, None], xp.arange(c)[None, :, None],
                                  index[:, None, :]]


def _scatter_add(x_shape, parts, dtype, dev):
    """dx (N, C, H, W) with dx[n, c, index] += value for every (index (N, L), value (N, C, L))
    in `parts`. np.bincount adds on the host, in float64 and always in one order, so the
    result is the same on every run and device (a GPU's atomic adds would not be)."""
    n, c, h, w = x_shape
    total = np.zeros(n * c * h * w)
    row = (np.arange(n)[:, None, None] * c + np.arange(c)[None, :, None]) * (h * w)
    for index, value in parts:
        index = np.asarray(devices.to_device(index, devices.CPU))
        value = np.asarray(devices.to_device(value, devices.CPU))
        total += np.bincount((row + index[:, None, :]).reshape(-1), value.reshape(-1),
                             minlength=total.size)
    return devices.to_device(total.astype(dtype).reshape(x_shape), dev)


class GridSampling(Function):
    """y[n, c, p] = sum over taps k of weight_k[n, p] x[n, c, index_k[n, p]], the taps those of
    the grid point p (see the module's docstring). dx scatters dy weight_k onto index_k;
    dgrid[n, p] = sum_k sum_c dy[n, c, p] x[n, c, index_k] d weight_k / d (x, y)."""

    @staticmethod
    def forward(ctx, x, grid, *, mode, padding_mode, align_corners):
        ctx.save_for_backward(x, grid)
        ctx.args = mode, padding_mode, align_corners
        n, c = x.shape[:2]
        ho, wo = grid.shape[1:3]
        y = devices.zeros((n, c, ho * wo), x.dtype, devices.of(x))
        for index, weight, _, _ in _taps(x.shape, grid, mode, padding_mode, align_corners):
            y += _gather(x, index) * weight[:, None, :]
        return y.reshape(n, c, ho, wo)

    @staticmethod
    def backward(ctx, dy):
        x, grid = ctx.saved_tensors
        mode, padding_mode, align_corners = ctx.args
        n, c = x.shape[:2]
        dy = dy.reshape(n, c, grid.shape[1] * grid.shape[2])
        taps = _taps(x.shape, grid, mode, padding_mode, align_corners)
        dx = dgrid = None
        if ctx.needs_input_grad[0]:
            dx = _scatter_add(x.shape, [(index, dy * weight[:, None, :])
                                        for index, weight, _, _ in taps], x.dtype, devices.of(x))
        if ctx.needs_input_grad[1]:
            dgrid = devices.zeros(grid.shape, grid.dtype, devices.of(grid))
            if mode != "nearest":  # piecewise constant in the grid: its gradient is zero
                d_along_x, d_along_y = dgrid[..., 0], dgrid[..., 1]
                for index, _, dw_dx, dw_dy in taps:
                    dy_x = (dy * _gather(x, index)).sum(axis=1).reshape(d_along_x.shape)
                    d_along_x += dy_x * dw_dx.reshape(d_along_x.shape)
                    d_along_y += dy_x * dw_dy.reshape(d_along_y.shape)
        return dx, dgrid


# ---- unfold and fold (im2col and col2im) ----------------------------------------------------

def _windows(size, kernel, dilation, padding, stride):
    """The number of window positions along one dim."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _tap_slices(kernel, dilation, stride, count):
    """For each kernel tap along one dim, the strided slice of the padded input it reads."""
    return [slice(i * dilation, i * dilation + stride * (count - 1) + 1, stride)
            for i in range(kernel)]


def im2col(x, kernel_size, dilation, padding, stride):
    """x (N, C, H, W) to columns (N, C*kh*kw, L): row (c, i, j) holds, for every window, the
    padded input under kernel tap (i, j) of channel c."""
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _windows(h, kh, dh, ph, sh), _windows(w, kw, dw, pw, sw)
    padded = devices.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype, devices.of(x))
    padded[:, :, ph:ph + h, pw:pw + w] = x
    cols = devices.empty((n, c, kh, kw, oh, ow), x.dtype, devices.of(x))
    for i, rows in enumerate(_tap_slices(kh, dh, sh, oh)):
        for j, columns in enumerate(_tap_slices(kw, dw, sw, ow)):
            cols[:, :, i, j] = padded[:, :, rows, columns]
    return cols.reshape(n, c * kh * kw, oh * ow)


def col2im(cols, output_size, kernel_size, dilation, padding, stride):
    """Columns (N, C*kh*kw, L) to (N, C, H, W), H, W = output_size: im2col's adjoint, each
    value added where im2col read it. One tap at a time, and a tap's slice never repeats an
    element, so the sums take one order."""
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (output_size, kernel_size, dilation,
                                                      padding, stride)
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    oh, ow = _windows(h, kh, dh, ph, sh), _windows(w, kw, dw, pw, sw)
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    padded = devices.zeros((n, c, h + 2 * ph, w + 2 * pw), cols.dtype, devices.of(cols))
    for i, rows in enumerate(_tap_slices(kh, dh, sh, oh)):
        for j, columns in enumerate(_tap_slices(kw, dw, sw, ow)):
            padded[:, :, rows, columns] += cols[:, :, i, j]
    return padded[:, :, ph:ph + h, pw:pw + w].copy()


class Unfolding(Function):
    """F.unfold: im2col; its gradient is col2im of dy."""

    @staticmethod
    def forward(ctx, x, *, kernel_size, dilation, padding, stride):
        ctx.args = tuple(x.shape[2:]), kernel_size, dilation, padding, stride
        return im2col(x, kernel_size, dilation, padding, stride)

    @staticmethod
    def backward(ctx, dy):
        return col2im(dy, *ctx.args)

    @staticmethod
    def backward_graph(ctx, dy):
        output_size, kernel_size, dilation, padding, stride = ctx.args
        return Folding.apply(dy, output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                             padding=padding, stride=stride)


class Folding(Function):
    """F.fold: col2im; its gradient is im2col of dy."""

    @staticmethod
    def forward(ctx, cols, *, output_size, kernel_size, dilation, padding, stride):
        ctx.args = kernel_size, dilation, padding, stride
        return col2im(cols, output_size, kernel_size, dilation, padding, stride)

    @staticmethod
    def backward(ctx, dy):
        return im2col(dy, *ctx.args)

    @staticmethod
    def backward_graph(ctx, dy):
        kernel_size, dilation, padding, stride = ctx.args
        return Unfolding.apply(dy, kernel_size=kernel_size, dilation=dilation, padding=padding,
                               stride=stride)
