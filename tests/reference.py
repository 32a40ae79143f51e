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
# That error scales with the tile's inputs, not the output's own terms, so no rtol
# bounds it everywhere: one input channel, padding 2 and an image 2 rows high
# (tiles mostly padding) reached 1e-2 of ref_abs over 40 random draws; the cases
# tested here stay within 1e-4, and the heuristic picks winograd only from 16
# channels per group.
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
    from targets import host
    actual = np.asarray(host(actual), np.float64)
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
#
# Layouts follow minifw.ops: NCHW, "channels" is axis 1. Every function takes
# and returns float64 and is a direct transcription of the definition: loops
# over windows, channels or positions, NumPy only for whole-array arithmetic.


def numerical_grad(f, x, eps=1e-6):
    """Central-difference gradient of the scalar function f at x (float64)."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f(x)
        flat[i] = old - eps
        down = f(x)
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad


# ---- activations -------------------------------------------------------------


def activation_ref(x, mode, negative_slope=0.01, alpha=1.0):
    x = np.asarray(x, np.float64)
    if mode == "relu":
        return np.where(x > 0, x, 0.0)
    if mode == "leaky_relu":
        return np.where(x > 0, x, negative_slope * x)
    if mode == "sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    if mode == "tanh":
        return np.tanh(x)
    if mode == "elu":
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))
    if mode == "relu6":
        return np.clip(x, 0.0, 6.0)
    raise ValueError(mode)


def activation_backward_ref(dy, x, mode, negative_slope=0.01, alpha=1.0):
    """dy * f'(x), with f' written in terms of x (the kernels use y)."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    if mode == "relu":
        d = np.where(x > 0, 1.0, 0.0)
    elif mode == "leaky_relu":
        d = np.where(x > 0, 1.0, negative_slope)
    elif mode == "sigmoid":
        s = 1.0 / (1.0 + np.exp(-x))
        d = s * (1 - s)
    elif mode == "tanh":
        d = 1 - np.tanh(x) ** 2
    elif mode == "elu":
        d = np.where(x > 0, 1.0, alpha * np.exp(np.minimum(x, 0.0)))
    elif mode == "relu6":
        d = np.where((x > 0) & (x < 6), 1.0, 0.0)
    else:
        raise ValueError(mode)
    return dy * d


# ---- pooling -----------------------------------------------------------------


def _two(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def pool_out_size(size, kernel, stride, padding, ceil_mode, dilation=1):
    """PyTorch's rule: floor (or ceil) of the window count, but with ceil_mode a
    last window that would start in the right padding is dropped. A window spans
    dilation * (kernel - 1) + 1 elements."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _pool_windows(x_shape, kernel_size, stride, padding, ceil_mode, dilation=1):
    """Yield (oh, ow, (h0, h1, w0, w1), (hs, he, ws, we)) for every output:
    the window clipped to the padded input, and its taps inside the input, which
    are rows hs, hs + dh, ... below he (columns likewise), dilation (dh, dw)."""
    _, _, h, w = x_shape
    kh, kw = _two(kernel_size)
    sh, sw = _two(stride if stride is not None else kernel_size)
    ph, pw = _two(padding)
    dh, dw = _two(dilation)
    ho, wo = pool_out_size(h, kh, sh, ph, ceil_mode, dh), pool_out_size(w, kw, sw, pw, ceil_mode, dw)
    for oh in range(ho):
        for ow in range(wo):
            h0, w0 = oh * sh - ph, ow * sw - pw
            rows = [r for r in range(h0, h0 + dh * (kh - 1) + 1, dh) if 0 <= r < h]
            cols = [c for c in range(w0, w0 + dw * (kw - 1) + 1, dw) if 0 <= c < w]
            h1, w1 = min(h0 + kh, h + ph), min(w0 + kw, w + pw)  # (the average's; never dilated)
            yield oh, ow, (h0, h1, w0, w1), (rows[0], rows[-1] + 1, cols[0], cols[-1] + 1)


def pool2d_ref(x, kernel_size, stride=None, padding=0, mode="max", ceil_mode=False,
               count_include_pad=True, dilation=1):
    """(y, indices): indices (max only) is the first maximum of each window in
    row-major order, as a flat index h * W + w into the input plane."""
    x = np.asarray(x, np.float64)
    n, c, h, w = x.shape
    dh, dw = _two(dilation)
    windows = list(_pool_windows(x.shape, kernel_size, stride, padding, ceil_mode, dilation))
    ho, wo = windows[-1][0] + 1, windows[-1][1] + 1
    y = np.zeros((n, c, ho, wo))
    idx = np.zeros((n, c, ho, wo), dtype=np.int64)
    for oh, ow, (h0, h1, w0, w1), (hs, he, ws, we) in windows:
        taps = x[:, :, hs:he:dh, ws:we:dw]
        region = taps.reshape(n, c, -1)
        if mode == "max":
            first = np.argmax(region, axis=2)  # argmax returns the first maximum (a NaN is one)
            y[:, :, oh, ow] = np.take_along_axis(region, first[..., None], 2)[..., 0]
            per_row = taps.shape[3]
            idx[:, :, oh, ow] = (hs + first // per_row * dh) * w + ws + first % per_row * dw
        else:
            divisor = (h1 - h0) * (w1 - w0) if count_include_pad else (he - hs) * (we - ws)
            y[:, :, oh, ow] = region.sum(axis=2) / divisor
    return y, idx


def pool2d_backward_ref(dy, x_shape, kernel_size, stride=None, padding=0, mode="max",
                        ceil_mode=False, count_include_pad=True, indices=None, dilation=1):
    dy = np.asarray(dy, np.float64)
    n, c, h, w = x_shape
    dx = np.zeros(x_shape)
    for oh, ow, (h0, h1, w0, w1), (hs, he, ws, we) in _pool_windows(x_shape, kernel_size, stride,
                                                                   padding, ceil_mode, dilation):
        g = dy[:, :, oh, ow]
        if mode == "max":
            for i in range(n):
                for j in range(c):
                    k = indices[i, j, oh, ow]
                    dx[i, j, k // w, k % w] += g[i, j]
        else:
            divisor = (h1 - h0) * (w1 - w0) if count_include_pad else (he - hs) * (we - ws)
            dx[:, :, hs:he, ws:we] += (g / divisor)[:, :, None, None]
    return dx


# ---- softmax and cross-entropy -----------------------------------------------


def softmax_ref(x, log=False):
    """Softmax (or log-softmax) over axis 1: the classes of (N, C) or the
    channels of (N, C, H, W) at each position."""
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    return shifted - np.log(s) if log else e / s


def softmax_backward_ref(dy, x, log=False):
    """dx = J^T dy with the Jacobian J of softmax (or log-softmax) over axis 1
    built explicitly at every position: dp_i/dx_j = p_i (delta_ij - p_j) and
    dlogp_i/dx_j = delta_ij - p_j."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    c = x.shape[1]
    p = np.moveaxis(softmax_ref(x), 1, -1).reshape(-1, c)
    g = np.moveaxis(dy, 1, -1).reshape(-1, c)
    dx = np.empty_like(g)
    for r in range(p.shape[0]):
        if log:
            jac = np.eye(c) - p[r][None, :]
        else:
            jac = np.diag(p[r]) - np.outer(p[r], p[r])
        dx[r] = jac.T @ g[r]
    out_shape = (x.shape[0],) + x.shape[2:] + (c,)
    return np.moveaxis(dx.reshape(out_shape), -1, 1)


def cross_entropy_ref(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """PyTorch's F.cross_entropy with class-index targets: per target,
    (1 - eps) * (-log p_t) + eps / C * sum_c (-log p_c); ignored targets count
    0 and are left out of the mean's denominator (0 / 0 = nan when all are)."""
    logp = softmax_ref(logits, log=True)
    c = logp.shape[1]
    rows = np.moveaxis(logp, 1, -1).reshape(-1, c)
    t = np.asarray(target).reshape(-1)
    nll, smooth = np.zeros(t.size), np.zeros(t.size)
    for i in range(t.size):
        if t[i] != ignore_index:
            nll[i] = -rows[i, t[i]]
            smooth[i] = -rows[i].sum()
    eps = label_smoothing
    if reduction == "none":
        return ((1 - eps) * nll + eps / c * smooth).reshape(np.shape(target))
    if reduction == "sum":
        return np.float64((1 - eps) * nll.sum() + eps / c * smooth.sum())
    count = np.sum(t != ignore_index)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.float64((1 - eps) * nll.sum() / count + eps / c * smooth.sum() / count)


def cross_entropy_backward_ref(grad, logits, target, ignore_index=-100, label_smoothing=0.0,
                               reduction="mean"):
    """d loss / d logits, term by term from cross_entropy_ref's definition:
    d(-log p_t)/dz = p - onehot(t) and d(-sum_c log p_c / C)/dz = p - 1/C,
    times the upstream gradient of each target (divided by the count for mean)."""
    p = softmax_ref(logits)
    c = p.shape[1]
    rows = np.moveaxis(p, 1, -1).reshape(-1, c)
    t = np.asarray(target).reshape(-1)
    count = np.sum(t != ignore_index)
    g = np.broadcast_to(np.asarray(grad, np.float64), np.shape(target)).reshape(-1)
    d = np.zeros_like(rows)
    eps = label_smoothing
    for i in range(t.size):
        if t[i] == ignore_index:
            continue
        onehot = np.zeros(c)
        onehot[t[i]] = 1
        gi = g[i] / count if reduction == "mean" else g[i]
        d[i] = gi * ((1 - eps) * (rows[i] - onehot) + eps * (rows[i] - 1 / c))
    out_shape = (p.shape[0],) + p.shape[2:] + (c,)
    return np.moveaxis(d.reshape(out_shape), -1, 1)


# ---- local response normalization --------------------------------------------


def lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
    """(y, scale): scale_c = k + alpha / size * sum of x_j^2 over channels
    j = c - size//2 .. c + (size-1)//2 that exist; y = x * scale^-beta."""
    x = np.asarray(x, np.float64)
    c = x.shape[1]
    scale = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c - 1, ch + (size - 1) // 2)
        scale[:, ch] = k + alpha / size * (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x * scale ** -beta, scale


def lrn_backward_ref(dy, x, size, alpha=1e-4, beta=0.75, k=1.0):
    """The chain rule term by term: y_j depends on x_j directly and on every
    x_c inside its window through scale_j."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    _, scale = lrn_ref(x, size, alpha, beta, k)
    c = x.shape[1]
    dx = dy * scale ** -beta
    for j in range(c):
        lo, hi = max(0, j - size // 2), min(c - 1, j + (size - 1) // 2)
        dy_dscale = dy[:, j] * x[:, j] * -beta * scale[:, j] ** (-beta - 1)
        for ch in range(lo, hi + 1):
            dx[:, ch] += dy_dscale * alpha / size * 2 * x[:, ch]
    return dx


# ---- batch normalization -----------------------------------------------------


def _bn_axes(x):
    return (0,) if x.ndim == 2 else (0, 2, 3)


def _bn_channel(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def batch_norm_training_ref(x, weight, bias, eps=1e-5):
    """(y, mean, invstd, unbiased_var) over N (and H, W) per channel."""
    x = np.asarray(x, np.float64)
    c = x.shape[1]
    weight = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    bias = np.zeros(c) if bias is None else np.asarray(bias, np.float64)
    axes = _bn_axes(x)
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    invstd = 1 / np.sqrt(var + eps)
    y = (x - _bn_channel(mean, x)) * _bn_channel(invstd * weight, x) + _bn_channel(bias, x)
    return y, mean, invstd, x.var(axis=axes, ddof=1)


def batch_norm_inference_ref(x, weight, bias, running_mean, running_var, eps=1e-5):
    x = np.asarray(x, np.float64)
    c = x.shape[1]
    weight = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    bias = np.zeros(c) if bias is None else np.asarray(bias, np.float64)
    invstd = 1 / np.sqrt(np.asarray(running_var, np.float64) + eps)
    return ((x - _bn_channel(np.asarray(running_mean, np.float64), x)) * _bn_channel(invstd * weight, x)
            + _bn_channel(bias, x))


def batch_norm_backward_ref(dy, x, weight, eps=1e-5):
    """(dx, dweight, dbias) by the step-by-step chain rule through mean and
    variance (the kernels use the folded closed form)."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    c = x.shape[1]
    weight = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    axes = _bn_axes(x)
    m = x.size // c
    mean = _bn_channel(x.mean(axis=axes), x)
    var = _bn_channel(x.var(axis=axes), x)
    invstd = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * invstd
    dxhat = dy * _bn_channel(weight, x)
    dvar = (dxhat * (x - mean) * -0.5 * invstd ** 3).sum(axis=axes, keepdims=True)
    dmean = (-dxhat * invstd).sum(axis=axes, keepdims=True) + dvar * (-2 * (x - mean)).mean(
        axis=axes, keepdims=True)
    dx = dxhat * invstd + dvar * 2 * (x - mean) / m + dmean / m
    return dx, (dy * xhat).sum(axis=axes), dy.sum(axis=axes)


# ---- dropout -----------------------------------------------------------------

_MASK32 = 0xFFFFFFFF


def philox4x32_10(counter, key):
    """Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as
    1, 2, 3", SC 2011) on Python ints: 4 counter words, 2 key words."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & _MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & _MASK32)
        k0, k1 = (k0 + 0x9E3779B9) & _MASK32, (k1 + 0xBB67AE85) & _MASK32
    return c0, c1, c2, c3


def dropout_mask_ref(shape, p, seed):
    """The mask minifw's dropout defines: element i is drawn from block
    b = i // 64, word w = (i % 64) // 16 of Philox counter 16 * b + i % 16
    (key = the 64-bit seed), and kept when that word >= floor(p * 2^32)."""
    n = int(np.prod(shape))
    threshold = int(np.floor(p * 2.0 ** 32))
    key = (seed & _MASK32, seed >> 32)
    mask = np.zeros(n, dtype=np.uint8)
    for i in range(n):
        ctr = 16 * (i // 64) + i % 16
        word = philox4x32_10((ctr & _MASK32, ctr >> 32, 0, 0), key)[(i % 64) // 16]
        mask[i] = word >= threshold
    return mask.reshape(shape)


# ---- bias and tensor ops -----------------------------------------------------


def bias_add_ref(x, bias):
    x = np.asarray(x, np.float64)
    return x + np.asarray(bias, np.float64).reshape((1, -1) + (1,) * (x.ndim - 2))


def bias_backward_ref(dy):
    dy = np.asarray(dy, np.float64)
    return dy.sum(axis=tuple(a for a in range(dy.ndim) if a != 1))


def add_tensor_ref(a, c, alpha=1.0, beta=0.0):
    """alpha * a + beta * c with a broadcast along its size-1 axes (NumPy's
    broadcasting is that rule); beta == 0 means c is not read at all."""
    a, c = np.asarray(a, np.float64), np.asarray(c, np.float64)
    out = alpha * np.broadcast_to(a, c.shape)
    return out + beta * c if beta != 0 else out.copy()


def scale_tensor_ref(x, alpha):
    return alpha * np.asarray(x, np.float64)


def embedding_backward_ref(indices, g, num_embeddings):
    """dw (num_embeddings, E): row v the sum of the rows p of g with indices[p] == v, one
    pick at a time."""
    g = np.asarray(g, np.float64)
    dw = np.zeros((num_embeddings, g.shape[1]))
    for p, v in enumerate(indices):
        dw[v] += g[p]
    return dw


# ---- optimizer updates -------------------------------------------------------


def sgd_step_ref(p, grad, buf, *, lr, momentum, dampening, weight_decay, nesterov, maximize, first_step,
                 absolute=False):
    """(p, buf) after one step of PyTorch's SGD (the formulas of torch.optim.SGD's
    documentation), in float64; buf is None when momentum == 0 and is not read on
    the first step. With absolute=True every term enters with its absolute value:
    the scale rounding error grows with (ref_abs of assert_within_bound)."""
    p, grad = np.asarray(p, np.float64), np.asarray(grad, np.float64)
    buf = None if buf is None or first_step else np.asarray(buf, np.float64)
    keep, sign = 1 - dampening, (-1 if maximize else 1)
    if absolute:
        p, grad, buf = np.abs(p), np.abs(grad), None if buf is None else np.abs(buf)
        lr, momentum, weight_decay, keep, sign = -abs(lr), abs(momentum), abs(weight_decay), abs(keep), 1
    g = sign * grad + weight_decay * p
    if momentum == 0:
        return p - lr * g, None
    buf = g.copy() if first_step else momentum * buf + keep * g
    d = g + momentum * buf if nesterov else buf
    return p - lr * d, buf


# ---- recurrent layers ----------------------------------------------------------


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def rnn_cell_ref(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of one layer and direction, PyTorch's formulas: (h', c')."""
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "lstm":
        i, f, g, o = np.split(gi + gh, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        return _sigmoid(o) * np.tanh(c), c
    if mode == "gru":
        ir, iz, i_n = np.split(gi, 3, axis=1)
        hr, hz, h_n = np.split(gh, 3, axis=1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        n = np.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (np.tanh(pre) if mode == "rnn_tanh" else np.maximum(pre, 0)), None


def rnn_forward_ref(desc, x, h0, c0, weights, lengths=None):
    """(y, h_n, c_n) in float64 by a loop over layers, directions and steps, the
    weights read through desc.views (PyTorch's names). With lengths, sequence n
    steps only at t < lengths[n]: elsewhere its state is kept and its output is 0."""
    w = {k: np.asarray(v, np.float64) for k, v in desc.views(np.asarray(weights)).items()}
    x = np.asarray(x, np.float64)
    T, N, _ = x.shape
    H, D = desc.hidden_size, desc.num_directions
    h0 = np.zeros((desc.num_layers * D, N, H)) if h0 is None else np.asarray(h0, np.float64)
    lstm = desc.mode == "lstm"
    c0 = (np.zeros_like(h0) if c0 is None else np.asarray(c0, np.float64)) if lstm else None
    h_n, c_n = np.zeros_like(h0), np.zeros_like(h0) if lstm else None
    steps = np.full(N, T) if lengths is None else np.asarray(lengths)
    inp = x
    for layer in range(desc.num_layers):
        out = np.zeros((T, N, D * H))
        for d, sfx in enumerate(("", "_reverse")[:D]):
            k = layer * D + d
            h, c = h0[k], (c0[k] if lstm else None)
            args = [w[f"{n}_l{layer}{sfx}"] if f"{n}_l{layer}{sfx}" in w else None
                    for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            for t in (range(T) if d == 0 else reversed(range(T))):
                live = (t < steps)[:, None]
                h_new, c_new = rnn_cell_ref(desc.mode, inp[t], h, c, *args)
                h = np.where(live, h_new, h)
                c = np.where(live, c_new, c) if lstm else None
                out[t, :, d * H:(d + 1) * H] = np.where(live, h, 0.0)
            h_n[k] = h
            if lstm:
                c_n[k] = c
        inp = out
    return inp, h_n, c_n


# ---- the bindings' own checks ------------------------------------------------
#
# Not a reference, but shared by every family's tests: calls into
# minifw._native that bypass minifw.ops, run in a child process because an
# unchecked size or pointer would crash the process rather than raise.


# Cases call the emulator's entry points as on_cudasim(_native.<entry>)(...): its
# host arrays are viewed as "cudasim" arrays (those entry points take nothing else).
ON_CUDASIM = """
from minifw.devices import CudaSimArray
def on_cudasim(entry):
    def call(*args, **kwargs):
        view = lambda a: a.view(CudaSimArray) if type(a) is np.ndarray else a
        return entry(*map(view, args), **{k: view(v) for k, v in kwargs.items()})
    return call
"""


def binding_outcomes(setup, cases, cwd):
    """Runs `setup` (Python source) and then each case (a Python expression,
    by name) in one child process started in the directory `cwd` (so that it
    imports this minifw, not a source tree it happens to start in). Returns
    {name: outcome}: "ValueError: <message>", "TypeError: <message>",
    "returned", another exception's name and message, or, for the case that
    killed the child and every later one, "child died with status <rc>"."""
    import os
    import subprocess
    import sys

    from minifw import _native

    lines = ["import numpy as np", "from minifw import _native", ON_CUDASIM, setup]
    for name, expr in cases.items():
        lines += [f"try:\n    {expr}\n    outcome = 'returned'",
                  "except Exception as e:\n    outcome = f'{type(e).__name__}: {e}'",
                  f"print({name!r}, outcome.replace(chr(10), ' '), sep='\\t', flush=True)"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(_native.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", "\n".join(lines)], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=120)
    outcomes = dict(line.split("\t", 1) for line in proc.stdout.splitlines() if "\t" in line)
    for name in cases:
        outcomes.setdefault(name, f"child died with status {proc.returncode}: {proc.stderr[-300:]}")
    return outcomes


def binding_tests(setup, cases):
    """The module fixture and the test that run `cases` ({name: (expression,
    exception type or None, message pattern)}) against the binding with
    binding_outcomes. A test module assigns both to module names:

        binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(SETUP, CASES)
    """
    import re

    import pytest

    @pytest.fixture(scope="module")
    def binding_results(tmp_path_factory):
        return binding_outcomes(setup, {name: case[0] for name, case in cases.items()},
                                tmp_path_factory.mktemp("child"))

    @pytest.mark.parametrize("name", cases)
    def test_binding_checks_sizes_and_arrays_itself(binding_results, name):
        _, exc, pattern = cases[name]
        outcome = binding_results[name]
        if exc is None:
            assert outcome == "returned", outcome
        else:
            assert re.match(f"{exc.__name__}: .*{pattern}", outcome), outcome

    return binding_results, test_binding_checks_sizes_and_arrays_itself


def bad_call_test(cases):
    """The test that each of `cases` ({name: (a function of no arguments, exception type,
    message pattern)}) raises that exception with that message. A test module assigns it:

        test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)
    """
    import pytest

    @pytest.mark.parametrize("call,exc,pattern", cases.values(), ids=cases.keys())
    def test_bad_input_raises_naming_the_argument(call, exc, pattern):
        with pytest.raises(exc, match=pattern):
            call()

    return test_bad_input_raises_naming_the_argument


# ==== end ===============================================================
