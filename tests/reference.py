"""Naive float64 references, written to be obviously right rather than fast.

Every primitive in minifw.ops is tested against a function here.
"""
import numpy as np


# ==== GEMM and convolution =============================================
#
# Shapes follow minifw.ops: x (N, C, H, W), w (K, C // groups, R, S),
# y (N, K, Ho, Wo). stride, padding and dilation are ints or (height, width)
# pairs; padding is added equally on both sides. The defining sum is
#
#   y[n, k, i, j] = bias[k] + sum over c in k's group, r < R, s < S of
#       x_padded[n, c, i * stride_h + r * dilation_h, j * stride_w + s * dilation_w] * w[k, c', r, s]
#
# (c' = c's index within the group). Each function below is that sum or one of
# its two gradients written out directly, looping over kernel taps or output
# positions in Python and using NumPy only across the batch and channel axes.


def _pair(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def conv_out_size(size, kernel, stride=1, padding=0, dilation=1):
    """Output length along one axis: how many kernel placements fit in the padded input."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _geometry(x_shape, w_shape, stride, padding, dilation, groups):
    n, c, h, w = x_shape
    k, cg, r, s = w_shape
    assert c == cg * groups and k % groups == 0, (x_shape, w_shape, groups)
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    ho, wo = conv_out_size(h, r, sh, ph, dh), conv_out_size(w, s, sw, pw, dw)
    assert ho >= 1 and wo >= 1, "output would be empty"
    return (sh, sw), (ph, pw), (dh, dw), ho, wo


def _grouped_weight(w, groups):
    """(K, Cg, R, S) -> (G, K // G, Cg, R, S): output channel k belongs to group k // (K // G)."""
    k = w.shape[0]
    return w.reshape(groups, k // groups, *w.shape[1:])


def conv2d_forward_ref(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y = conv2d(x, w) + bias in float64, one output position at a time."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    (sh, sw), (ph, pw), (dh, dw), ho, wo = _geometry(x.shape, w.shape, stride, padding, dilation, groups)
    n, c, h, wid = x.shape
    k, cg, r, s = w.shape
    xp = np.zeros((n, c, h + 2 * ph, wid + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wid] = x
    xg = xp.reshape(n, groups, cg, *xp.shape[2:])
    wg = _grouped_weight(w, groups)
    y = np.zeros((n, groups, k // groups, ho, wo))
    for i in range(ho):
        for j in range(wo):
            # the R x S input samples under the kernel placed at output (i, j)
            window = xg[:, :, :, i * sh: i * sh + (r - 1) * dh + 1: dh, j * sw: j * sw + (s - 1) * dw + 1: dw]
            y[:, :, :, i, j] = np.einsum("ngcrs,gkcrs->ngk", window, wg)
    y = y.reshape(n, k, ho, wo)
    if bias is not None:
        y += np.asarray(bias, np.float64)[None, :, None, None]
    return y


def conv2d_backward_data_ref(dy, w, x_shape, stride=1, padding=0, dilation=1, groups=1):
    """dx = d(sum(y * dy))/dx in float64: every output position scatters
    dy[n, k, i, j] * w[k, c, r, s] back onto the input sample it read."""
    dy, w = np.asarray(dy, np.float64), np.asarray(w, np.float64)
    (sh, sw), (ph, pw), (dh, dw), ho, wo = _geometry(x_shape, w.shape, stride, padding, dilation, groups)
    assert dy.shape == (x_shape[0], w.shape[0], ho, wo), dy.shape
    n, c, h, wid = x_shape
    k, cg, r, s = w.shape
    dxp = np.zeros((n, groups, cg, h + 2 * ph, wid + 2 * pw))
    dyg = dy.reshape(n, groups, k // groups, ho, wo)
    wg = _grouped_weight(w, groups)
    for i in range(ho):
        for j in range(wo):
            window = dxp[:, :, :, i * sh: i * sh + (r - 1) * dh + 1: dh, j * sw: j * sw + (s - 1) * dw + 1: dw]
            window += np.einsum("ngk,gkcrs->ngcrs", dyg[:, :, :, i, j], wg)
    # samples in the padding were zeros, not inputs: their gradient is dropped
    return dxp.reshape(n, c, *dxp.shape[3:])[:, :, ph:ph + h, pw:pw + wid].copy()


def conv2d_backward_filter_ref(x, dy, w_shape, stride=1, padding=0, dilation=1, groups=1):
    """dw = d(sum(y * dy))/dw in float64: for every kernel tap (r, s), the
    correlation of dy with the input samples that tap met."""
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    (sh, sw), (ph, pw), (dh, dw), ho, wo = _geometry(x.shape, w_shape, stride, padding, dilation, groups)
    assert dy.shape == (x.shape[0], w_shape[0], ho, wo), dy.shape
    n, c, h, wid = x.shape
    k, cg, r, s = w_shape
    xp = np.zeros((n, c, h + 2 * ph, wid + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wid] = x
    xg = xp.reshape(n, groups, cg, *xp.shape[2:])
    dyg = dy.reshape(n, groups, k // groups, ho, wo)
    dwg = np.zeros((groups, k // groups, cg, r, s))
    for a in range(r):
        for b in range(s):
            # rows a*dh, a*dh + sh, ... : the sample tap (a, b) met at each output position
            met = xg[:, :, :, a * dh: a * dh + (ho - 1) * sh + 1: sh, b * dw: b * dw + (wo - 1) * sw + 1: sw]
            dwg[:, :, :, a, b] = np.einsum("ngkij,ngcij->gkc", dyg, met)
    return dwg.reshape(w_shape)


def conv2d_backward_bias_ref(dy):
    """db[k] = sum of dy[:, k] over batch and positions, in float64."""
    return np.asarray(dy, np.float64).sum(axis=(0, 2, 3))


def gemm_ref(a, b, c=None, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """alpha * op(a) @ op(b) + beta * c in float64, by NumPy's matmul."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    a, b = (a.T if trans_a else a), (b.T if trans_b else b)
    out = alpha * (a @ b)
    if c is not None and beta != 0.0:
        out += beta * np.asarray(c, np.float64)
    return out


# The error bound every GEMM and convolution test uses, with assert_within_bound
# below: |got - ref| <= rtol * ref_abs + atol, where ref_abs is the reference
# computed on |inputs| (the sum of |terms| behind each output). Rounding error
# of any summation order is bounded by a small multiple of eps * sum|terms|,
# so one rtol per (dtype, algorithm kind) fits every shape: ~100 eps for GEMM
# and the GEMM-based convolutions (1e-5 is ~170 units of float32 roundoff
# 2**-24 = 6e-8; measured worst cases are 2-3 units). Winograd gets 10x more:
# its transforms add and subtract terms of the whole 6x6 input tile, so an
# output whose own |terms| are small next to its neighbours' sees errors of
# hundreds of eps relative to them (measured: up to 3e-5 in float32, on C=1).
# atol only matters where ref_abs is 0 (e.g. input pixels no kernel tap
# reads), which must then come out as 0.
_TOLERANCES = {  # (dtype, winograd?) -> (rtol, atol)
    ("float32", False): (1e-5, 1e-30),
    ("float32", True): (1e-4, 1e-30),
    ("float64", False): (1e-12, 1e-300),
    ("float64", True): (1e-10, 1e-300),
}


def tolerance(dtype, algo="gemm"):
    """(rtol, atol) for results of `algo` ("auto" may be winograd) in `dtype`."""
    return _TOLERANCES[np.dtype(dtype).name, algo in ("winograd", "auto")]


def assert_within_bound(actual, ref, ref_abs, rtol, atol, what=""):
    """|actual - ref| <= rtol * ref_abs + atol elementwise, where ref_abs is the
    same reference computed on absolute values (the sum of |terms|): the scale
    that rounding error in a sum grows with, so one rtol fits every shape."""
    actual = np.asarray(actual, np.float64)
    assert actual.shape == ref.shape, f"{what}: shape {actual.shape}, expected {ref.shape}"
    err = np.abs(actual - ref)
    bound = rtol * ref_abs + atol
    bad = ~(err <= bound)  # NaN counts as bad
    if bad.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(bad, np.nan_to_num(err / bound, nan=np.inf), 0.0)
        idx = np.unravel_index(np.argmax(ratio), err.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {err.size} elements outside |err| <= {rtol:g} * ref_abs + "
            f"{atol:g}; worst at {tuple(int(i) for i in idx)}: got {actual[idx]!r}, expected "
            f"{ref[idx]!r} (ref_abs {ref_abs[idx]!r}, err / bound {ratio[idx]:.3g})")


# ==== pooling, activations, softmax, LRN, batch norm, dropout, bias =====


# ==== end ===============================================================
