"""Batch normalization, spatial (NCHW) and per activation ((N, C)): training
forward, running-statistics update, inference forward and backward against
the float64 reference, float32 and float64, on both traversal orders (wide and
narrow H * W), under every ISA and on the CUDA emulator; finite differences;
bad input."""

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import (assert_within_bound, bad_call_test, batch_norm_backward_ref,
                       batch_norm_inference_ref, batch_norm_training_ref, binding_tests,
                       numerical_grad)
from targets import assert_on, place

DTYPES = (np.float32, np.float64)
# Statistics are accumulated in double, so the float32 results are a few
# float32 roundings of (x - mean) * invstd * w + b: rtol/atol ~ 16 ulp of the
# normalized values (which are O(1)). float64: ~1e3 ulp, for sums over up to
# ~1e4 values. dweight / dbias are sums over N*H*W terms of O(1).
TOL = {np.float32: 2e-6, np.float64: 1e-12}
SHAPES = {
    "fc_n2_c1": (2, 1),
    "fc_64x500": (64, 500),
    "fc_odd_7x13": (7, 13),
    "nchw_n1_c3_5x7_narrow": (1, 3, 5, 7),
    "nchw_2x4x1x1": (2, 4, 1, 1),
    "nchw_3x7x2x3_groups": (3, 7, 2, 3),  # the GPU's narrow layout: 5 channels a block, then 2
    "nchw_2x3x4x5": (2, 3, 4, 5),  # H * W = 20: narrow on the GPU, one channel a block
    "nchw_2x3x9x11_wide": (2, 3, 9, 11),
    "nchw_threaded_8x16x12x12": (8, 16, 12, 12),
}


def _inputs(rng, shape, dtype, affine=True):
    c = shape[1]
    x = (rng.standard_normal(shape) * 2 + 5).astype(dtype)  # mean far from 0: tests subtracting it first
    w = rng.standard_normal(c).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    return x, w, b


def _tol(dtype, ref):
    return dict(rtol=TOL[dtype], atol=TOL[dtype] * max(1.0, float(np.max(np.abs(ref)))))


def _dx_magnitude(dy, x, w, mean, invstd):
    """The size of the terms dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))
    is made of: with few values per channel they nearly cancel, and the
    rounding error is relative to them, not to dx."""
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    g = np.abs(np.ones_like(mean) if w is None else np.asarray(w, np.float64)) * invstd
    xhat = np.abs((x - mean.reshape(shape)) * invstd.reshape(shape))
    dy = np.abs(np.asarray(dy, np.float64))
    return g.reshape(shape) * (dy + dy.mean(axis=axes, keepdims=True) + xhat * (dy * xhat).mean(axis=axes, keepdims=True))


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "no_affine"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_training_forward_backward_and_running_stats(target, rng, dtype, shape, affine):
    x, w, b = _inputs(rng, shape, dtype, affine)
    c = shape[1]
    rm0, rv0 = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    rm, rv = place(target, rm0, rv0)
    y, mean, invstd = ops.batch_norm_forward_training(*place(target, x, w, b), rm, rv, momentum=0.3, eps=1e-3)
    assert_on(target, y, mean, invstd, rm, rv)
    y_ref, mean_ref, invstd_ref, var_unbiased = batch_norm_training_ref(x, w, b, eps=1e-3)
    assert y.dtype == mean.dtype == invstd.dtype == dtype
    np.testing.assert_allclose(y, y_ref, **_tol(dtype, y_ref))
    np.testing.assert_allclose(mean, mean_ref, rtol=TOL[dtype])
    np.testing.assert_allclose(invstd, invstd_ref, rtol=TOL[dtype])
    np.testing.assert_allclose(rm, 0.7 * rm0 + 0.3 * mean_ref, **_tol(dtype, rm))
    np.testing.assert_allclose(rv, 0.7 * rv0 + 0.3 * var_unbiased, **_tol(dtype, rv))
    dy = rng.standard_normal(shape).astype(dtype)
    dx, dw, db = ops.batch_norm_backward(*place(target, dy, x, w), mean, invstd)
    assert_on(target, dx, dw, db)
    dx_ref, dw_ref, db_ref = batch_norm_backward_ref(dy, x, w, eps=1e-3)
    assert_within_bound(dx, dx_ref, _dx_magnitude(dy, x, w, mean_ref, invstd_ref), TOL[dtype], 0, "dx")
    m = x.size // c
    np.testing.assert_allclose(dw, dw_ref, rtol=TOL[dtype], atol=TOL[dtype] * m)
    np.testing.assert_allclose(db, db_ref, rtol=TOL[dtype], atol=TOL[dtype] * m)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_inference_forward(target, rng, dtype, shape):
    x, w, b = _inputs(rng, shape, dtype)
    c = shape[1]
    rm, rv = rng.standard_normal(c).astype(dtype) + 5, rng.uniform(0.5, 2, c).astype(dtype)
    y = ops.batch_norm_forward_inference(*place(target, x, w, b, rm, rv), eps=1e-4)
    assert_on(target, y)
    ref = batch_norm_inference_ref(x, w, b, rm, rv, eps=1e-4)
    np.testing.assert_allclose(y, ref, **_tol(dtype, ref))
    y = ops.batch_norm_forward_inference(place(target, x), None, None, *place(target, rm, rv))
    np.testing.assert_allclose(y, batch_norm_inference_ref(x, None, None, rm, rv), **_tol(dtype, ref))


def test_running_stats_left_alone_when_none(target, rng):
    x, w, b = _inputs(rng, (4, 3, 5, 5), np.float64)
    y, _, _ = ops.batch_norm_forward_training(*place(target, x, w, b), None, None)
    np.testing.assert_allclose(y, batch_norm_training_ref(x, w, b)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(300, 5), (3, 4, 10, 10)], ids=["fc", "nchw"])
def test_variance_of_values_far_from_their_mean(target, rng, shape):
    # Values 1e4 +- 1 in float32: E[x^2] - E[x]^2 in float32 would lose every digit
    # of the variance (1e8 against 1, with roundings of 4); the two passes in double
    # keep invstd to its own rounding. y is off by the float32 rounding of the mean
    # (half a spacing at 1e4: 4.9e-4) times invstd (~1).
    x = (1e4 + rng.standard_normal(shape)).astype(np.float32)
    y, mean, invstd = ops.batch_norm_forward_training(place(target, x), None, None, None, None)
    y_ref, mean_ref, invstd_ref, _ = batch_norm_training_ref(x, None, None)
    np.testing.assert_allclose(invstd, invstd_ref, rtol=1e-6)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-7)
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-3)


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "no_affine"])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 2, 3), (3, 2, 4, 5)], ids=["fc", "nchw_narrow", "nchw_wide"])
def test_gradient_matches_finite_differences(rng, shape, affine):
    x, w, b = _inputs(rng, shape, np.float64, affine)
    dy = rng.standard_normal(shape)

    def loss_of_x(v):
        return np.sum(ops.batch_norm_forward_training(v, w, b, None, None)[0] * dy)

    y, mean, invstd = ops.batch_norm_forward_training(x, w, b, None, None)
    dx, dw, db = ops.batch_norm_backward(dy, x, w, mean, invstd)
    np.testing.assert_allclose(dx, numerical_grad(loss_of_x, x), rtol=1e-5, atol=1e-7)
    if affine:
        np.testing.assert_allclose(
            dw, numerical_grad(lambda v: np.sum(ops.batch_norm_forward_training(x, v, b, None, None)[0] * dy), w),
            rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(
            db, numerical_grad(lambda v: np.sum(ops.batch_norm_forward_training(x, w, v, None, None)[0] * dy), b),
            rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_results_do_not_depend_on_thread_count(rng, device):
    # On "cudasim" the threads are the emulator's workers, which run the blocks.
    x, w, b = place(device, *_inputs(rng, (8, 16, 12, 12) if device == "cpu" else (4, 40, 3, 3), np.float32))
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            y, m, s = ops.batch_norm_forward_training(x, w, b, None, None)
            out.append((y, m, s) + ops.batch_norm_backward(x, x, w, m, s))
    finally:
        minifw.set_num_threads(before)
    for a, b_ in zip(*out):
        np.testing.assert_array_equal(a, b_)


def test_empty_planes_in_inference_and_backward(target):
    x, c = place(target, np.ones((2, 3, 0, 4), np.float32), np.ones(3, np.float32))
    assert ops.batch_norm_forward_inference(x, c, c, c, c).shape == x.shape
    dx, dweight, dbias = ops.batch_norm_backward(x, x, c, c, c)
    assert dx.shape == x.shape
    np.testing.assert_array_equal(dweight, 0)  # sums over no values
    np.testing.assert_array_equal(dbias, 0)


X = np.ones((2, 3, 4, 4))
V = np.ones(3)
BAD_CALLS = {
    "x_3d": (lambda: ops.batch_norm_forward_training(np.ones((2, 3, 4)), None, None, None, None), ValueError,
             "batch_norm_forward_training: x must be 2-D"),
    "x_int": (lambda: ops.batch_norm_forward_training(np.ones((2, 3), np.int32), None, None, None, None),
              TypeError, "batch_norm_forward_training: x"),
    "one_value_per_channel": (lambda: ops.batch_norm_forward_training(np.ones((1, 3, 1, 1)), None, None, None,
                                                                      None), ValueError, "more than one value"),
    "weight_wrong_length": (lambda: ops.batch_norm_forward_training(X, np.ones(4), None, None, None), ValueError,
                            "weight must have shape \\(3,\\)"),
    "bias_wrong_dtype": (lambda: ops.batch_norm_forward_training(X, None, np.ones(3, np.float32), None, None),
                         TypeError, "bias"),
    "only_running_mean": (lambda: ops.batch_norm_forward_training(X, None, None, np.zeros(3), None), ValueError,
                          "running_mean and running_var"),
    "running_var_read_only": (lambda: ops.batch_norm_forward_training(
        X, None, None, np.zeros(3), np.broadcast_to(np.ones(1), (3,))), ValueError, "running_var"),
    "momentum_above_1": (lambda: ops.batch_norm_forward_training(X, None, None, None, None, momentum=2),
                         ValueError, "momentum"),
    "eps_negative": (lambda: ops.batch_norm_forward_training(X, None, None, None, None, eps=-1), ValueError, "eps"),
    "inference_without_running_var": (lambda: ops.batch_norm_forward_inference(X, None, None, V, None), ValueError,
                                      "running_var"),
    "backward_dy_shape": (lambda: ops.batch_norm_backward(X[:1], X, None, V, V), ValueError,
                          "batch_norm_backward: dy"),
    "backward_save_invstd_shape": (lambda: ops.batch_norm_backward(X, X, None, V, np.ones(2)), ValueError,
                                   "save_invstd"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
x, y, dx = np.ones(8, f32), np.empty(8, f32), np.empty(8, f32)  # (outer, C, inner) = (2, 4, 1)
w, b, mean, var = (np.ones(4, f32) for _ in range(4))
save_mean, save_invstd, dw, db = (np.empty(4, f32) for _ in range(4))
empty = np.empty(0, f32)
read_only = np.zeros(4, f32)
read_only.flags.writeable = False
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid": ("_native.batch_norm_forward_training_f32(2, 4, 1, x, w, b, mean, var, 0.1, 1e-5, y, save_mean, "
              "save_invstd)", None, ""),
    "batch_wraps": ("_native.batch_norm_forward_inference_f32(2 ** 62 + 2, 4, 1, x, None, None, mean, var, 1e-5, "
                    "y)", ValueError, "batch_norm: sizes too large"),  # 4 * (2**62 + 2) == 8 (mod 2**64)
    "wraps_to_zero": ("_native.batch_norm_forward_inference_f32(2 ** 32, 1, 2 ** 32, empty, None, None, w[:1], "
                      "var[:1], 1e-5, empty.copy())", ValueError, "batch_norm: sizes too large"),
    "negative_pair": ("_native.batch_norm_forward_training_f32(-2, 4, -1, x, None, None, None, None, 0.1, 1e-5, y, "
                      "save_mean, save_invstd)", ValueError, "sizes must be >= 0"),
    "backward_wraps": ("_native.batch_norm_backward_f32(2 ** 62 + 2, 4, 1, x, x, None, save_mean, save_invstd, dx, "
                       "dw, db)", ValueError, "sizes too large"),
    "one_value_per_channel": ("_native.batch_norm_forward_training_f32(1, 4, 1, x[:4], None, None, None, None, "
                              "0.1, 1e-5, y[:4], save_mean, save_invstd)", ValueError,
                              "more than one value per channel"),
    "weight_too_short": ("_native.batch_norm_forward_inference_f32(2, 4, 1, x, w[:3], None, mean, var, 1e-5, y)",
                         ValueError, "weight: expected 4 elements, got 3"),
    "running_mean_read_only": ("_native.batch_norm_forward_training_f32(2, 4, 1, x, None, None, read_only, var, "
                               "0.1, 1e-5, y, save_mean, save_invstd)", ValueError,
                               "running_mean: expected a writable array"),
    "running_var_alone": ("_native.batch_norm_forward_training_f32(2, 4, 1, x, None, None, None, var, 0.1, 1e-5, "
                          "y, save_mean, save_invstd)", ValueError, "give both or neither"),
    "running_mean_is_weight": ("_native.batch_norm_forward_training_f32(2, 4, 1, x, w, b, w, var, 0.1, 1e-5, y, "
                               "save_mean, save_invstd)", ValueError,
                               "running_mean: must not share memory with weight"),
    "save_mean_is_save_invstd": ("_native.batch_norm_forward_training_f32(2, 4, 1, x, w, b, None, None, 0.1, 1e-5, "
                                 "y, save_mean, save_mean)", ValueError,
                                 "save_mean: must not share memory with save_invstd"),
    "backward_save_invstd_float64": ("_native.batch_norm_backward_f32(2, 4, 1, x, x, None, save_mean, np.ones(4), "
                                     "dx, dw, db)", TypeError, "save_invstd: expected dtype float32"),
    "backward_dx_is_dy": ("_native.batch_norm_backward_f32(2, 4, 1, y, x, None, save_mean, save_invstd, y, dw, db)",
                          ValueError, "dx: must not share memory with dy"),
    # The emulator's entry points share these checks; a few show they are wired.
    "cudasim_valid": ("on_cudasim(_native.batch_norm_forward_training_cudasim_f32)(2, 4, 1, x, w, b, mean, var, 0.1, 1e-5, y, "
                      "save_mean, save_invstd)", None, ""),
    "cudasim_batch_wraps": ("on_cudasim(_native.batch_norm_forward_inference_cudasim_f32)(2 ** 62 + 2, 4, 1, x, None, None, "
                            "mean, var, 1e-5, y)", ValueError, "batch_norm: sizes too large"),
    "cudasim_one_value_per_channel": ("on_cudasim(_native.batch_norm_forward_training_cudasim_f32)(1, 4, 1, x[:4], None, None, "
                                      "None, None, 0.1, 1e-5, y[:4], save_mean, save_invstd)", ValueError,
                                      "more than one value per channel"),
    "cudasim_backward_dx_is_dy": ("on_cudasim(_native.batch_norm_backward_cudasim_f32)(2, 4, 1, y, x, None, save_mean, "
                                  "save_invstd, y, dw, db)", ValueError, "dx: must not share memory with dy"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
