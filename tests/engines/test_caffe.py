"""The Caffe engine is the benchmarks' yardstick, so every entry point is held to
the same float64 reference as the primitives: convolution (batched im2col + NumPy
GEMM), pooling, activations, softmax and cross-entropy, LRN, batch norm and
dropout, on odd shapes, N=1, stride, padding, ceil_mode, float32 and float64.
Max pooling's indices equal the primitives' (ties, NaN), bad input raises what
minifw.ops raises, and none of these entry points is the primitive itself."""
import numpy as np
import pytest

from minifw import ops
from minifw.engines import caffe
from reference import (activation_backward_ref, activation_ref, assert_within_bound, batch_norm_backward_ref,
                       batch_norm_inference_ref, batch_norm_training_ref, conv2d_backward_bias_ref,
                       conv2d_backward_data_ref, conv2d_backward_filter_ref, conv2d_forward_ref,
                       cross_entropy_backward_ref, cross_entropy_ref, lrn_backward_ref, lrn_ref,
                       pool2d_backward_ref, pool2d_ref, softmax_backward_ref, softmax_ref)

# ---- convolution ------------------------------------------------------------------

# (x_shape, w_shape, stride, padding, dilation, groups)
CASES = {
    "lenet_conv1": ((2, 1, 28, 28), (20, 1, 5, 5), 1, 0, 1, 1),
    "stride2_pad1_dil2": ((1, 3, 11, 9), (4, 3, 3, 3), 2, 1, 2, 1),
    "groups2_pad2": ((2, 6, 9, 9), (8, 3, 5, 5), 1, 2, 1, 2),
    "alexnet_conv1_geometry": ((1, 3, 35, 35), (6, 3, 11, 11), 4, 0, 1, 1),
    "depthwise_nonsquare": ((2, 4, 7, 8), (4, 1, 3, 2), (1, 2), (1, 0), 1, 4),
    # output rows of 16 or more: the image-major lowering (the others put the batch innermost)
    "wide_rows_stride2_pad1_dil2": ((2, 3, 40, 37), (4, 3, 3, 3), 2, 1, 2, 1),
    "wide_rows_groups2_pad2": ((2, 6, 20, 21), (8, 3, 5, 5), 1, 2, 1, 2),
}
TOL = 1e-12  # float64 throughout: only summation order differs from the reference


def test_cases_cover_both_lowerings():
    from minifw.ops import ConvProblem

    def batch_inner(x_shape, w_shape, stride, padding, dilation, groups):
        return caffe._batch_inner(ConvProblem(x_shape, w_shape, stride=stride, padding=padding,
                                              dilation=dilation, groups=groups))

    assert {name for name, case in CASES.items() if not batch_inner(*case)} == {
        "lenet_conv1", "wide_rows_stride2_pad1_dil2", "wide_rows_groups2_pad2"}


@pytest.mark.parametrize("name", ["stride2_pad1_dil2", "wide_rows_groups2_pad2"])
def test_the_two_lowerings_hold_the_same_matrix(name, rng):
    from minifw.ops import ConvProblem

    xs, ws, stride, padding, dilation, groups = CASES[name]
    p = ConvProblem(xs, ws, stride=stride, padding=padding, dilation=dilation, groups=groups)
    x = rng.standard_normal(xs)
    image_major = caffe.im2col(x, p, batch_inner=False).copy()  # (C, R, S, N, Ho, Wo)
    batch_inner = caffe.im2col(x, p, batch_inner=True)  # (C, R, S, Ho, Wo, N)
    np.testing.assert_array_equal(batch_inner, image_major.transpose(0, 1, 2, 4, 5, 3))


@pytest.mark.parametrize("name", CASES)
def test_caffe_conv_matches_reference(name, rng):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    geo = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    y = caffe.conv2d_forward(x, w, b, **geo)
    want = conv2d_forward_ref(x, w, b, **geo)
    np.testing.assert_allclose(y, want, rtol=TOL, atol=TOL)
    dy = rng.standard_normal(y.shape)
    np.testing.assert_allclose(caffe.conv2d_backward_data(dy, w, xs, **geo),
                               conv2d_backward_data_ref(dy, w, xs, **geo), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(caffe.conv2d_backward_filter(x, dy, ws, **geo),
                               conv2d_backward_filter_ref(x, dy, ws, **geo), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(caffe.conv2d_backward_bias(dy), conv2d_backward_bias_ref(dy), rtol=TOL)


def test_col_buffer_bytes_is_the_lowered_matrix():
    p = ops.ConvProblem((16, 3, 227, 227), (96, 3, 11, 11), stride=4)
    assert caffe.col_buffer_bytes(p) == 3 * 11 * 11 * 16 * 55 * 55 * 4


# ---- the other layers ----------------------------------------------------------------
#
# Error model: each output is a few roundings of a short sum, a ratio or an
# elementwise function, so the error is a few ulp of the magnitude of the terms it
# is made of. The bounds below are rtol times that magnitude (assert_within_bound):
# ~80 float32 ulp (eps 6e-8) or ~5000 float64 ulp, loose enough for any summation
# order and tight enough that a wrong term, window or divisor fails by orders of
# magnitude.

DTYPES = (np.float32, np.float64)
RTOL = {np.float32: 5e-6, np.float64: 1e-12}
TINY = 1e-30  # absolute slack for values that are exactly 0 in the reference


def ids(d):
    return d.__name__


def _within(got, want, magnitude, dtype, what):
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}"
    assert_within_bound(got, want, magnitude, RTOL[dtype], TINY, what)


def test_no_entry_point_is_the_primitive():
    for name in ("pool2d_forward", "pool2d_backward", "activation_forward", "activation_backward",
                 "softmax_forward", "softmax_backward", "cross_entropy_forward", "cross_entropy_backward",
                 "lrn_forward", "lrn_backward", "batch_norm_forward_training", "batch_norm_forward_inference",
                 "batch_norm_backward", "dropout_forward", "dropout_backward"):
        assert getattr(caffe, name).__module__ == "minifw.engines.caffe", name


# ---- pooling ---------------------------------------------------------------------------

# (x_shape, kernel_size, stride, padding, ceil_mode)
POOL_CASES = {
    "lenet_2x2s2": ((2, 3, 8, 8), 2, 2, 0, False),
    "alexnet_3x3s2_ceil_13": ((2, 3, 13, 13), 3, 2, 0, True),
    "n1_c1_odd_7x9_3x3s2_ceil": ((1, 1, 7, 9), 3, 2, 0, True),
    "kernel_equals_input": ((2, 3, 5, 7), (5, 7), None, 0, False),
    "stride_greater_than_kernel": ((1, 2, 11, 13), 2, 3, 0, False),
    "pad1_3x3s1": ((2, 2, 6, 7), 3, 1, 1, False),
    "pad1_3x3s2_ceil": ((1, 3, 10, 10), 3, 2, 1, True),
    "ceil_drops_window_in_padding": ((1, 2, 5, 5), 2, 2, 1, True),
    "rect_2x3_s1x3_pad1x0": ((2, 2, 9, 11), (2, 3), (1, 3), (1, 0), False),
    "single_pixel": ((1, 1, 1, 1), 1, None, 0, False),
}
POOL_MODES = {"max": dict(mode="max"), "avg_include_pad": dict(mode="avg", count_include_pad=True),
              "avg_exclude_pad": dict(mode="avg", count_include_pad=False)}


def _pool_args(case, mode):
    x_shape, kernel_size, stride, padding, ceil_mode = case
    return dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode, **mode)


@pytest.mark.parametrize("mode", POOL_MODES.values(), ids=POOL_MODES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("case", POOL_CASES.values(), ids=POOL_CASES.keys())
def test_pooling_matches_reference(rng, case, dtype, mode):
    args = _pool_args(case, mode)
    x = rng.standard_normal(case[0]).astype(dtype)
    y_ref, idx_ref = pool2d_ref(x, **args)
    dy = rng.standard_normal(y_ref.shape).astype(dtype)
    if args["mode"] == "max":
        y, idx = caffe.pool2d_forward(x, return_indices=True, **args)
        assert y.dtype == dtype and idx.dtype == np.int64
        np.testing.assert_array_equal(y, y_ref)  # a selection: exact
        np.testing.assert_array_equal(idx, idx_ref)
        np.testing.assert_array_equal(caffe.pool2d_forward(x, **args), y_ref)
        dx = caffe.pool2d_backward(dy, x.shape, indices=idx, **args)
        dref = pool2d_backward_ref(dy, x.shape, indices=idx_ref, **args)
        dmag = pool2d_backward_ref(np.abs(dy), x.shape, indices=idx_ref, **args)
    else:
        _within(caffe.pool2d_forward(x, **args), y_ref, pool2d_ref(np.abs(x), **args)[0], dtype, "avg forward")
        dx = caffe.pool2d_backward(dy, x.shape, **args)
        dref = pool2d_backward_ref(dy, x.shape, **args)
        dmag = pool2d_backward_ref(np.abs(dy), x.shape, **args)
    _within(dx, dref, dmag, dtype, "backward")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_max_pool_indices_equal_the_primitives_among_ties_and_nan(rng, dtype):
    x = rng.integers(0, 3, (2, 3, 9, 12)).astype(dtype)  # many ties
    x[0, 0, 1, 1] = x[0, 1, 4, 4] = x[0, 1, 4, 6] = x[1, 2, 0, 0] = np.nan
    x[1, 0, 2:, 3:] = -np.inf  # whole windows of -inf: the index of their first input element
    x[1, 1, 2, 2] = np.inf
    for geometry in (dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
                     dict(kernel_size=2, stride=3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        y, idx = caffe.pool2d_forward(x, return_indices=True, **geometry)
        y_ops, idx_ops = ops.pool2d_forward(x, return_indices=True, **geometry)
        np.testing.assert_array_equal(idx, idx_ops)
        np.testing.assert_array_equal(y, y_ops)  # NaN where NaN
        np.testing.assert_array_equal(caffe.pool2d_forward(x, **geometry), y_ops)
        dy = rng.standard_normal(y.shape).astype(dtype)
        _within(caffe.pool2d_backward(dy, x.shape, indices=idx, **geometry),
                ops.pool2d_backward(dy, x.shape, indices=idx_ops, **geometry).astype(np.float64),
                ops.pool2d_backward(np.abs(dy), x.shape, indices=idx_ops, **geometry), dtype, "backward")


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["include_pad", "exclude_pad"])
def test_heavily_padded_huge_window_visits_only_taps_inside_the_input(count_include_pad):
    # 2**40-wide windows padded by 2**39 over a 1x2 input: the loop over taps must
    # skip those that land only in the padding, and the area 2**80 must not wrap.
    x = np.array([[[[3.0, 5.0]]]])
    args = dict(kernel_size=(1, 2 ** 40), stride=1, padding=(0, 2 ** 39), mode="avg",
                count_include_pad=count_include_pad)
    y = caffe.pool2d_forward(x, **args)
    np.testing.assert_array_equal(y, ops.pool2d_forward(x, **args))
    np.testing.assert_array_equal(caffe.pool2d_backward(np.ones_like(y), x.shape, **args),
                                  ops.pool2d_backward(np.ones_like(y), x.shape, **args))


# ---- activations -----------------------------------------------------------------------

ACTIVATION_PARAMS = {"leaky_relu": dict(negative_slope=0.1), "elu": dict(alpha=1.3)}
ACTIVATION_SHAPES = {"vector7": (7,), "fc_3x5": (3, 5), "nchw_odd_2x3x5x7": (2, 3, 5, 7)}


def _activation_sample(rng, shape, dtype):
    """Normal values with the kinks (0 and 6) and large magnitudes mixed in."""
    x = 4 * rng.standard_normal(shape)
    specials = [0.0, 6.0, -6.0, 30.0, -30.0, 1e-3, -1e-3, 6.0001, 5.9999, 100.0, -100.0]
    flat = x.reshape(-1)
    flat[:min(len(specials), flat.size)] = specials[:flat.size]
    return x.astype(dtype)


@pytest.mark.parametrize("shape", ACTIVATION_SHAPES.values(), ids=ACTIVATION_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_matches_reference(rng, mode, dtype, shape):
    params = ACTIVATION_PARAMS.get(mode, {})
    x = _activation_sample(rng, shape, dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    y = caffe.activation_forward(x, mode, **params)
    y_ref = activation_ref(x, mode, **params)
    _within(y, y_ref, np.abs(y_ref), dtype, f"{mode} forward")
    # dy * f'(y) may lose relative accuracy where f' is 1 - y near y = 1, never more than
    # a few ulp of |dy|
    dref = activation_backward_ref(dy, x, mode, **params)
    _within(caffe.activation_backward(dy, y, mode, **params), dref, np.abs(dy) + np.abs(dref), dtype,
            f"{mode} backward")
    _within(caffe.activation_backward(dy, y, mode, x=x, **params), dref, np.abs(dy) + np.abs(dref), dtype,
            f"{mode} backward with x")


@pytest.mark.parametrize("mode,params", [("leaky_relu", dict(negative_slope=-0.5)), ("elu", dict(alpha=-0.7))],
                         ids=["leaky_negative_slope", "elu_negative_alpha"])
def test_activation_backward_takes_the_branch_on_x_when_y_cannot_tell(rng, mode, params):
    x = rng.standard_normal((3, 40))
    dy = rng.standard_normal(x.shape)
    y = caffe.activation_forward(x, mode, **params)
    with pytest.raises(ValueError, match="activation_backward: x is required"):
        caffe.activation_backward(dy, y, mode, **params)
    np.testing.assert_allclose(caffe.activation_backward(dy, y, mode, x=x, **params),
                               activation_backward_ref(dy, x, mode, **params), rtol=1e-14)


@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_inplace_writes_into_x(rng, mode):
    x = _activation_sample(rng, (2, 4, 6, 5), np.float32)
    expected = caffe.activation_forward(x, mode)
    y = caffe.activation_forward(x, mode, inplace=True)
    assert y is x
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_special_values_as_the_primitives(mode):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, 1e4, -1e4], np.float32)
    dy = np.ones_like(x)
    y = caffe.activation_forward(x, mode)
    np.testing.assert_array_equal(y, ops.activation_forward(x, mode))
    with np.errstate(invalid="ignore"):  # inf * 0 in the sigmoid and tanh derivatives
        np.testing.assert_array_equal(caffe.activation_backward(dy, y, mode),
                                      ops.activation_backward(dy, y, mode))


def test_activation_empty_and_zero_d_inputs_give_arrays():
    assert caffe.activation_forward(np.zeros((0, 3), np.float32), "tanh").shape == (0, 3)
    y = caffe.activation_forward(np.full((), -2.0), "relu")
    assert isinstance(y, np.ndarray) and y.shape == () and y == 0.0
    dx = caffe.activation_backward(np.full((), 3.0), np.full((), 0.5), "sigmoid")
    assert isinstance(dx, np.ndarray) and dx == 0.75


# ---- softmax and cross-entropy ---------------------------------------------------------

SOFTMAX_SHAPES = {"rows_1x1": (1, 1), "rows_odd_5x37": (5, 37), "nchw_1x1x1x1": (1, 1, 1, 1),
                  "nchw_odd_2x3x5x7": (2, 3, 5, 7), "nchw_n1_c21_3x4": (1, 21, 3, 4)}


@pytest.mark.parametrize("shape", SOFTMAX_SHAPES.values(), ids=SOFTMAX_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_matches_reference(rng, log, dtype, shape):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    y = caffe.softmax_forward(x, log=log)
    y_ref = softmax_ref(x, log=log)
    # log-softmax is x - max - log(sum): its error is relative to those terms
    magnitude = np.abs(x) + np.abs(x).max(axis=1, keepdims=True) + 1 if log else y_ref
    _within(y, y_ref, magnitude, dtype, "forward")
    # dx = dy - p * sum(dy) (log) or p * (dy - sum(p * dy)): relative to the terms
    p = softmax_ref(x)
    if log:
        dmag = np.abs(dy) + p * np.sum(np.abs(dy), axis=1, keepdims=True)
    else:
        dmag = p * (np.abs(dy) + np.sum(p * np.abs(dy), axis=1, keepdims=True))
    _within(caffe.softmax_backward(dy, y, log=log), softmax_backward_ref(dy, x, log=log), dmag, dtype, "backward")


def test_softmax_of_huge_inputs_does_not_overflow():
    x = np.array([[1e4, -1e4, 0.0], [3e38, 3e38, -3e38]], np.float32)
    np.testing.assert_array_equal(caffe.softmax_forward(x), [[1, 0, 0], [0.5, 0.5, 0]])


CE_SHAPES = {"rows_7x5": ((7, 5), (7,)), "rows_n1_1x3": ((1, 3), (1,)), "nchw_2x4x3x5": ((2, 4, 3, 5), (2, 3, 5))}
CE_SETTINGS = {
    "plain": dict(),
    "ignore_class_2": dict(ignore_index=2),
    "ignore_default_-100": dict(ignore_index=-100),
    "smoothing_0.1": dict(label_smoothing=0.1),
    "smoothing_1": dict(label_smoothing=1.0),
    "ignore_and_smoothing": dict(ignore_index=1, label_smoothing=0.3),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("settings", CE_SETTINGS.values(), ids=CE_SETTINGS.keys())
@pytest.mark.parametrize("shapes", CE_SHAPES.values(), ids=CE_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_cross_entropy_matches_reference(rng, dtype, shapes, settings, reduction):
    shape, tshape = shapes
    logits = (2 * rng.standard_normal(shape)).astype(dtype)
    target = rng.integers(0, shape[1], tshape)
    if settings.get("ignore_index") == -100:
        target.reshape(-1)[::3] = -100
    loss, log_probs = caffe.cross_entropy_forward(logits, target, reduction=reduction, **settings)
    ref = cross_entropy_ref(logits, target, reduction=reduction, **settings)
    assert loss.dtype == dtype and loss.shape == np.shape(ref)
    # logits of size ~2 over a few classes: the terms are O(10)
    rtol = 10 * RTOL[dtype]
    np.testing.assert_allclose(loss, ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(log_probs, softmax_ref(logits, log=True), rtol=rtol, atol=rtol)
    grad = rng.standard_normal(tshape).astype(dtype) if reduction == "none" else 0.7
    d = caffe.cross_entropy_backward(grad, log_probs, target, reduction=reduction, **settings)
    assert d.dtype == dtype
    np.testing.assert_allclose(d, cross_entropy_backward_ref(grad, logits, target, reduction=reduction, **settings),
                               rtol=rtol, atol=rtol * np.max(np.abs(grad)))


@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 2, 3)], ids=["rows", "nchw"])
def test_cross_entropy_all_ignored(shape):
    logits = np.ones(shape)
    target = np.full((shape[0],) + shape[2:], -100)
    loss, log_probs = caffe.cross_entropy_forward(logits, target)
    assert np.isnan(loss)  # 0 / 0, as PyTorch
    assert caffe.cross_entropy_forward(logits, target, reduction="sum")[0] == 0
    np.testing.assert_array_equal(caffe.cross_entropy_backward(1.0, log_probs, target), 0)


def test_cross_entropy_ignored_positions_give_exact_zeros_even_over_inf():
    logits = np.array([[np.inf, 0.0, 1.0], [0.5, 2.0, -1.0], [np.nan, 1.0, 1.0]])
    target = np.array([-100, 1, -100])
    loss, log_probs = caffe.cross_entropy_forward(logits, target, reduction="none", label_smoothing=0.2)
    assert loss[0] == 0 and loss[2] == 0 and np.isfinite(loss[1])
    d = caffe.cross_entropy_backward(np.ones(3), log_probs, target, reduction="none", label_smoothing=0.2)
    np.testing.assert_array_equal(d[[0, 2]], 0)
    want = ops.cross_entropy_backward(np.ones(3), log_probs, target, reduction="none", label_smoothing=0.2)
    np.testing.assert_allclose(d, want, rtol=1e-15)


# ---- local response normalization ------------------------------------------------------

LRN_SHAPES = {"single": (1, 1, 1, 1), "odd_2x7x5x6": (2, 7, 5, 6), "n1_c3_window_wider_than_c": (1, 3, 4, 4),
              "alexnet_like_2x96x3x3": (2, 96, 3, 3)}
LRN_PARAMS = {"alexnet": dict(alpha=1e-4, beta=0.75, k=2.0),
              "strong": dict(alpha=2.0, beta=0.6, k=0.5)}  # scale far from k


def _lrn_backward_magnitude(dy, x, size, alpha, beta, k):
    """|dy| scale^-beta + 2 alpha beta / size |x| S: the two terms dx is the difference
    of, where S is the largest window sum of |dy y / scale| along the channels at that
    position. A sliding sum (Caffe's) subtracts what it added earlier, so its rounding
    error is relative to every window it slid through, not only the current one."""
    y, scale = lrn_ref(x, size, alpha, beta, k)
    ratio = np.abs(dy * y / scale)
    c = x.shape[1]
    sums = np.stack([ratio[:, max(0, ch - (size - 1) // 2):ch + size // 2 + 1].sum(axis=1) for ch in range(c)], 1)
    return np.abs(dy) * scale ** -beta + 2 * alpha * beta / size * np.abs(x) * sums.max(axis=1, keepdims=True)


@pytest.mark.parametrize("params", LRN_PARAMS.values(), ids=LRN_PARAMS.keys())
@pytest.mark.parametrize("size", [1, 2, 5, 6])
@pytest.mark.parametrize("shape", LRN_SHAPES.values(), ids=LRN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_lrn_matches_reference(rng, dtype, shape, size, params):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    y, scale = caffe.lrn_forward(x, size, **params)
    y_ref, scale_ref = lrn_ref(x, size, **params)
    _within(scale, scale_ref, scale_ref, dtype, "scale")
    _within(y, y_ref, np.abs(y_ref), dtype, "y")
    dx = caffe.lrn_backward(dy, x, y, scale, size, **params)
    _within(dx, lrn_backward_ref(dy, x, size, **params), _lrn_backward_magnitude(dy, x, size, **params), dtype,
            "dx")


def test_lrn_keyword_size_as_the_functions_call_it(rng):
    x = rng.standard_normal((1, 4, 2, 2))
    y, scale = caffe.lrn_forward(x, size=3, alpha=1e-2, beta=0.75, k=1.0)
    np.testing.assert_allclose(y, lrn_ref(x, 3, 1e-2, 0.75, 1.0)[0], rtol=1e-14)
    assert caffe.lrn_backward(x, x, y, scale, size=3, alpha=1e-2, beta=0.75, k=1.0).shape == x.shape


# ---- batch normalization ---------------------------------------------------------------

BN_SHAPES = {"fc_n2_c1": (2, 1), "fc_odd_7x13": (7, 13), "nchw_n1_c3_5x7": (1, 3, 5, 7),
             "nchw_2x4x1x1": (2, 4, 1, 1), "nchw_2x3x9x11": (2, 3, 9, 11)}


def _bn_inputs(rng, shape, dtype, affine):
    c = shape[1]
    x = (2 * rng.standard_normal(shape) + 5).astype(dtype)  # mean far from 0: the mean must be subtracted first
    w = rng.standard_normal(c).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    return x, w, b


def _bn_dx_magnitude(dy, x, w, mean, invstd):
    """The terms of dx = w invstd (dy - mean(dy) - xhat mean(dy xhat)): with few values
    per channel they nearly cancel, and the rounding error is relative to them."""
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    gain = np.abs(np.ones_like(mean) if w is None else np.asarray(w, np.float64)) * invstd
    xhat = np.abs((x - mean.reshape(shape)) * invstd.reshape(shape))
    dy = np.abs(np.asarray(dy, np.float64))
    return gain.reshape(shape) * (dy + dy.mean(axis=axes, keepdims=True)
                                  + xhat * (dy * xhat).mean(axis=axes, keepdims=True))


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "no_affine"])
@pytest.mark.parametrize("shape", BN_SHAPES.values(), ids=BN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_batch_norm_training_matches_reference(rng, dtype, shape, affine):
    x, w, b = _bn_inputs(rng, shape, dtype, affine)
    c = shape[1]
    rm, rv = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    rm0, rv0 = rm.copy(), rv.copy()
    y, mean, invstd = caffe.batch_norm_forward_training(x, w, b, rm, rv, momentum=0.3, eps=1e-3)
    y_ref, mean_ref, invstd_ref, var_unbiased = batch_norm_training_ref(x, w, b, eps=1e-3)
    channel = (1, -1) + (1,) * (x.ndim - 2)
    _within(y, y_ref, np.abs(y_ref) + (np.abs(w).reshape(channel) if affine else 1), dtype, "y")  # O(|w|) + |b|
    _within(mean, mean_ref, np.abs(mean_ref), dtype, "save_mean")
    _within(invstd, invstd_ref, invstd_ref, dtype, "save_invstd")
    _within(rm, 0.7 * rm0 + 0.3 * mean_ref, 0.7 * np.abs(rm0) + 0.3 * np.abs(mean_ref), dtype, "running_mean")
    _within(rv, 0.7 * rv0 + 0.3 * var_unbiased, 0.7 * rv0 + 0.3 * var_unbiased, dtype, "running_var")
    dy = rng.standard_normal(shape).astype(dtype)
    dx, dw, db = caffe.batch_norm_backward(dy, x, w, mean, invstd)
    dx_ref, dw_ref, db_ref = batch_norm_backward_ref(dy, x, w, eps=1e-3)
    _within(dx, dx_ref, _bn_dx_magnitude(dy, x, w, mean_ref, invstd_ref), dtype, "dx")
    m = x.size // c  # dweight, dbias: sums of m terms of O(1)
    _within(dw, dw_ref, np.full(c, m), dtype, "dweight")
    _within(db, db_ref, np.full(c, m), dtype, "dbias")


@pytest.mark.parametrize("shape", BN_SHAPES.values(), ids=BN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_batch_norm_inference_matches_reference(rng, dtype, shape):
    x, w, b = _bn_inputs(rng, shape, dtype, affine=True)
    c = shape[1]
    rm, rv = rng.standard_normal(c).astype(dtype) + 5, rng.uniform(0.5, 2, c).astype(dtype)
    channel = (1, -1) + (1,) * (x.ndim - 2)
    for weight, bias in ((w, b), (None, None)):
        y = caffe.batch_norm_forward_inference(x, weight, bias, rm, rv, eps=1e-4)
        ref = batch_norm_inference_ref(x, weight, bias, rm, rv, eps=1e-4)
        # (x - mean) * invstd is O(10) here: x - mean rounds relative to |x| ~ 10
        _within(y, ref, np.abs(ref) + 10 * (1 if weight is None else np.abs(weight).reshape(channel)), dtype, "y")


def test_batch_norm_without_running_statistics(rng):
    x, w, b = _bn_inputs(rng, (4, 3, 2, 2), np.float64, affine=True)
    y, _, _ = caffe.batch_norm_forward_training(x, w, b, None, None)
    np.testing.assert_allclose(y, batch_norm_training_ref(x, w, b)[0], rtol=1e-12, atol=1e-12)


# ---- dropout ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(1,), (5, 7), (2, 3, 9, 11)], ids=["one", "fc_5x7", "nchw"])
def test_dropout_scales_the_kept_values_by_a_seeded_uint8_mask(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    y, mask = caffe.dropout_forward(x, 0.3, seed=1234)
    assert mask.dtype == np.uint8 and mask.shape == shape and y.dtype == dtype
    assert set(np.unique(mask)) <= {0, 1}
    np.testing.assert_array_equal(caffe.dropout_forward(x, 0.3, seed=1234)[1], mask)  # deterministic
    # the kept values are x / (1 - p) rounded once, as the primitives
    np.testing.assert_array_equal(y, np.where(mask == 1, x * dtype(1 / 0.7), 0))
    dy = rng.standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(caffe.dropout_backward(dy, mask, 0.3), np.where(mask == 1, dy * dtype(1 / 0.7), 0))


def test_dropout_of_zero_d_and_empty_inputs():
    y, mask = caffe.dropout_forward(np.full((), 2.0), 0.5, seed=0)
    assert isinstance(y, np.ndarray) and y.shape == mask.shape == () and mask.dtype == np.uint8
    assert y == 4.0 * mask and isinstance(caffe.dropout_backward(np.full((), 1.0), mask, 0.5), np.ndarray)
    assert caffe.dropout_forward(np.zeros((0, 5), np.float32), 0.5, seed=0)[1].shape == (0, 5)


def test_dropout_seeds_give_independent_masks():
    x = np.ones(4096, np.float32)
    a, b = caffe.dropout_forward(x, 0.5, seed=1)[1], caffe.dropout_forward(x, 0.5, seed=2)[1]
    assert 0.4 < np.mean(a != b) < 0.6
    assert caffe.dropout_forward(x, 0.5, seed=2 ** 64 - 1)[1].shape == x.shape


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keep_fraction(p):
    n = 200_000
    _, mask = caffe.dropout_forward(np.ones(n, np.float32), p, seed=7)
    # Binomial(n, 1 - p): 5 standard deviations leave a false failure below 1e-6
    assert abs(mask.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)


def test_dropout_p_zero_and_p_one(rng):
    x = rng.standard_normal((3, 70)).astype(np.float32)
    x[0, 0] = np.inf
    y, mask = caffe.dropout_forward(x, 0.0, seed=3)
    np.testing.assert_array_equal(y, x)
    assert np.all(mask == 1)
    y, mask = caffe.dropout_forward(x, 1.0, seed=3)
    assert np.all(y == 0) and np.all(mask == 0)  # no inf / nan from 1 / (1 - p) or inf * 0
    assert np.all(caffe.dropout_backward(np.ones_like(x), mask, 1.0) == 0)
    assert np.all(caffe.dropout_backward(np.ones_like(x), mask.astype(bool), 1.0) == 0)


# ---- bad input: what minifw.ops raises -------------------------------------------------

X4 = np.zeros((1, 2, 6, 6))
Y4 = np.zeros((1, 2, 3, 3))
IDX = np.zeros((1, 2, 3, 3), np.int64)
X2 = np.zeros((4, 3))
T1 = np.array([0, 1, 2, 1])
V3 = np.ones(3)
BAD_CALLS = {
    "pool_x_3d": lambda e: e.pool2d_forward(np.zeros((2, 6, 6)), 2),
    "pool_x_int": lambda e: e.pool2d_forward(np.zeros((1, 1, 4, 4), np.int32), 2),
    "pool_padding_over_half_kernel": lambda e: e.pool2d_forward(X4, 3, padding=2),
    "pool_kernel_larger_than_input": lambda e: e.pool2d_forward(X4, 7),
    "pool_bad_mode": lambda e: e.pool2d_forward(X4, 2, mode="min"),
    "pool_indices_for_avg": lambda e: e.pool2d_forward(X4, 2, mode="avg", return_indices=True),
    "pool_backward_without_indices": lambda e: e.pool2d_backward(Y4, X4.shape, 2),
    "pool_backward_indices_int32": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX.astype(np.int32)),
    "pool_backward_index_out_of_plane": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX + 36),
    "pool_backward_index_negative": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX - 1),
    "pool_backward_dy_shape": lambda e: e.pool2d_backward(Y4[:, :, :2], X4.shape, 2, indices=IDX),
    "act_unknown_mode": lambda e: e.activation_forward(np.ones(3), "gelu"),
    "act_alpha_nan": lambda e: e.activation_forward(np.ones(3), "elu", alpha=float("nan")),
    "act_inplace_on_a_view": lambda e: e.activation_forward(np.ones((4, 4))[:, ::2], "relu", inplace=True),
    "act_dy_dtype": lambda e: e.activation_backward(np.ones(3, np.float32), np.ones(3), "relu"),
    "act_x_shape": lambda e: e.activation_backward(np.ones(3), np.ones(3), "relu", x=np.ones(2)),
    "softmax_x_3d": lambda e: e.softmax_forward(np.ones((2, 3, 4))),
    "softmax_no_classes": lambda e: e.softmax_forward(np.ones((2, 0))),
    "ce_target_float": lambda e: e.cross_entropy_forward(X2, T1.astype(float)),
    "ce_target_shape": lambda e: e.cross_entropy_forward(X2, T1[:3]),
    "ce_target_out_of_range": lambda e: e.cross_entropy_forward(X2, np.array([0, 1, 3, 1])),
    "ce_smoothing_above_1": lambda e: e.cross_entropy_forward(X2, T1, label_smoothing=1.5),
    "ce_bad_reduction": lambda e: e.cross_entropy_forward(X2, T1, reduction="avg"),
    "ce_grad_array_for_mean": lambda e: e.cross_entropy_backward(np.ones(4), X2, T1),
    "ce_grad_shape_for_none": lambda e: e.cross_entropy_backward(np.ones(3), X2, T1, reduction="none"),
    "lrn_size_zero": lambda e: e.lrn_forward(X4, 0),
    "lrn_x_2d": lambda e: e.lrn_forward(X2, 3),
    "lrn_scale_shape": lambda e: e.lrn_backward(X4, X4, X4, X4[:, :1], 3),
    "bn_one_value_per_channel": lambda e: e.batch_norm_forward_training(np.ones((1, 3, 1, 1)), None, None,
                                                                          None, None),
    "bn_weight_length": lambda e: e.batch_norm_forward_training(X2, np.ones(4), None, None, None),
    "bn_only_running_mean": lambda e: e.batch_norm_forward_training(X2, None, None, np.zeros(3), None),
    "bn_running_var_read_only": lambda e: e.batch_norm_forward_training(
        X2, None, None, np.zeros(3), np.broadcast_to(np.ones(1), (3,))),
    "bn_inference_without_running_var": lambda e: e.batch_norm_forward_inference(X2, None, None, V3, None),
    "bn_backward_save_invstd_shape": lambda e: e.batch_norm_backward(X2, X2, None, V3, np.ones(2)),
    "dropout_p_above_1": lambda e: e.dropout_forward(X2, 1.5, seed=0),
    "dropout_seed_float": lambda e: e.dropout_forward(X2, 0.5, seed=1.0),
    "dropout_seed_negative": lambda e: e.dropout_forward(X2, 0.5, seed=-1),
    "dropout_mask_dtype": lambda e: e.dropout_backward(X2, np.ones((4, 3), np.int32), 0.5),
    "dropout_mask_shape": lambda e: e.dropout_backward(X2, np.ones((4, 2), np.uint8), 0.5),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_what_the_primitives_raise(call):
    with pytest.raises((TypeError, ValueError)) as want:
        call(ops)
    with pytest.raises(want.type) as got:
        call(caffe)
    assert str(got.value) == str(want.value)
