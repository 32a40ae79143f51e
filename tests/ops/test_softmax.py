"""Softmax, log-softmax and cross-entropy against the float64 reference (an
explicit Jacobian for the backward, PyTorch's definition for the loss), on
(N, classes) rows and NCHW channels, under every ISA and on the CUDA emulator; huge and tiny inputs;
ignored targets, label smoothing, every reduction; finite differences; bad input."""

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import (assert_within_bound, bad_call_test, binding_tests,
                       cross_entropy_backward_ref, cross_entropy_ref, numerical_grad,
                       softmax_backward_ref, softmax_ref)
from targets import assert_on, place

DTYPES = (np.float32, np.float64)
# Error model: x - max rounds with an error of eps * (|x| + max|x|), which exp
# turns into that much relative error of each probability; the sum over C,
# the division or the log add a few ulp. So every bound below is a small rtol
# (~16 float32 ulp, eps = 6e-8) times a scale built from K = 1 + |x| + max|x|
# and the terms each output is made of.
TOL = {np.float32: (2e-6, 1e-37), np.float64: (1e-13, 1e-300)}
SHAPES = {
    "rows_1x1": (1, 1),
    "rows_3x10": (3, 10),
    "rows_odd_5x37": (5, 37),
    "lenet_fc_64x10": (64, 10),
    "alexnet_fc_16x1000": (16, 1000),
    "nchw_1x1x1x1": (1, 1, 1, 1),
    "nchw_odd_2x3x5x7": (2, 3, 5, 7),
    "nchw_n1_c21_9x11": (1, 21, 9, 11),
    "nchw_blocks_2x4x17x31": (2, 4, 17, 31),  # 527 positions: two full blocks and a partial one
    "nchw_threaded_3x64x15x15": (3, 64, 15, 15),
}


def ids(d):
    return d.__name__


def _class_sum(a):
    return np.sum(a, axis=1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_forward_and_backward_match_reference(target, rng, log, dtype, shape):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    rtol, atol = TOL[dtype]
    y = ops.softmax_forward(place(target, x), log=log)
    ref = softmax_ref(x, log=log)
    p = softmax_ref(x)
    k = 1 + np.abs(x) + np.max(np.abs(x), axis=1, keepdims=True)
    assert_within_bound(y, ref, k + np.abs(ref) if log else p * k, rtol, atol, "forward")
    dx = ops.softmax_backward(place(target, dy), y, log=log)
    assert_on(target, y, dx)
    dref = softmax_backward_ref(dy, x, log=log)
    g = np.abs(dy)
    if log:  # dx = dy - p * sum(dy)
        dscale = g + p * k * _class_sum(g)
    else:  # dx = p * (dy - <dy, p>)
        dscale = p * k * (g + 2 * _class_sum(g * p * k))
    assert_within_bound(dx, dref, dscale, rtol, atol, "backward")


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(3, 7), (2, 4, 3, 5)], ids=["rows", "nchw"])
def test_gradient_matches_finite_differences(rng, shape, log):
    x = rng.standard_normal(shape)
    dy = rng.standard_normal(shape)
    y = ops.softmax_forward(x, log=log)
    num = numerical_grad(lambda v: np.sum(ops.softmax_forward(v, log=log) * dy), x)
    np.testing.assert_allclose(ops.softmax_backward(dy, y, log=log), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape", [(4, 9), (2, 9, 3, 3)], ids=["rows", "nchw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_huge_inputs_do_not_overflow(target, rng, dtype, shape):
    x = (1e4 * np.sign(rng.standard_normal(shape))).astype(dtype)
    x[:, 0] = 1e4 - 1  # one class a little below the top ones
    for log in (False, True):
        y = ops.softmax_forward(place(target, x), log=log)
        assert np.all(np.isfinite(y)), "softmax of +-1e4 must stay finite"
        np.testing.assert_allclose(y, softmax_ref(x, log=log), rtol=1e-6, atol=1e-30)
    loss, _ = ops.cross_entropy_forward(place(target, x), place(target, np.zeros((shape[0],) + shape[2:], np.int64)),
                                        reduction="none")
    assert np.all(np.isfinite(loss))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_row_maximum_is_found_at_every_position(target, dtype):
    # Row j's only large value is at column j: the vectorized row maximum must
    # see every lane of the full vectors and of the tail (75 = 2 * 32 + 11).
    x = np.full((75, 75), -1e4, dtype)
    np.fill_diagonal(x, 1e4)
    np.testing.assert_array_equal(ops.softmax_forward(place(target, x)), np.eye(75, dtype=dtype))

@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_tiny_inputs_give_uniform_probabilities(target, dtype):
    x = np.full((3, 50), 1e-30, dtype)
    x[:, ::2] = -1e-30
    x = place(target, x)
    np.testing.assert_allclose(ops.softmax_forward(x), 1 / 50, rtol=1e-6)
    np.testing.assert_allclose(ops.softmax_forward(x, log=True), -np.log(50), rtol=1e-6)


def test_rows_sum_to_one(rng):
    y = ops.softmax_forward(rng.standard_normal((2, 13, 6, 5)).astype(np.float32))
    np.testing.assert_allclose(y.sum(axis=1), 1, rtol=1e-6)


def test_results_do_not_depend_on_thread_count(rng):
    x = rng.standard_normal((3, 64, 15, 15)).astype(np.float32)
    t = rng.integers(0, 64, (3, 15, 15))
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            out.append((ops.softmax_forward(x), ops.cross_entropy_forward(x, t)[0]))
    finally:
        minifw.set_num_threads(before)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]


# ---- cross-entropy -----------------------------------------------------------

CE_SHAPES = {"rows_7x5": ((7, 5), (7,)), "lenet_64x10": ((64, 10), (64,)), "rows_3x75": ((3, 75), (3,)),
             "nchw_2x4x3x5": ((2, 4, 3, 5), (2, 3, 5)), "nchw_n1_c3_17x31": ((1, 3, 17, 31), (1, 17, 31))}
SMALL_CE_SHAPES = {"rows_5x4": ((5, 4), (5,)), "nchw_2x3x2x3": ((2, 3, 2, 3), (2, 2, 3))}
CE_SETTINGS = {
    "plain": dict(),
    "ignore_some": dict(ignore_index=2),
    "ignore_default_-100": dict(ignore_index=-100),
    "smoothing_0.1": dict(label_smoothing=0.1),
    "smoothing_1": dict(label_smoothing=1.0),
    "ignore_and_smoothing": dict(ignore_index=1, label_smoothing=0.3),
}


def _targets(rng, shape, classes, settings):
    t = rng.integers(0, classes, shape)
    if settings.get("ignore_index", None) == -100:
        t.reshape(-1)[::3] = -100
    return t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("settings", CE_SETTINGS.values(), ids=CE_SETTINGS.keys())
@pytest.mark.parametrize("shapes", CE_SHAPES.values(), ids=CE_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_cross_entropy_matches_pytorch_definition(target, rng, dtype, shapes, settings, reduction):
    shape, tshape = shapes
    logits = (2 * rng.standard_normal(shape)).astype(dtype)
    t = _targets(rng, tshape, shape[1], settings)
    # Logits of size ~2, C <= 75 classes: a few ulp of the log-sum-exp per term.
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    loss, log_probs = ops.cross_entropy_forward(place(target, logits), place(target, t), reduction=reduction,
                                                **settings)
    ref = cross_entropy_ref(logits, t, reduction=reduction, **settings)
    assert loss.dtype == dtype and loss.shape == np.shape(ref)
    np.testing.assert_allclose(loss, ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(log_probs, softmax_ref(logits, log=True), rtol=rtol, atol=rtol)
    grad = rng.standard_normal(tshape).astype(dtype) if reduction == "none" else 0.7
    d = ops.cross_entropy_backward(place(target, grad) if reduction == "none" else grad, log_probs,
                                   place(target, t), reduction=reduction, **settings)
    assert_on(target, loss, log_probs, d)
    dref = cross_entropy_backward_ref(grad, logits, t, reduction=reduction, **settings)
    np.testing.assert_allclose(d, dref, rtol=rtol, atol=rtol * np.max(np.abs(grad)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("settings", CE_SETTINGS.values(), ids=CE_SETTINGS.keys())
@pytest.mark.parametrize("shapes", SMALL_CE_SHAPES.values(), ids=SMALL_CE_SHAPES.keys())
def test_cross_entropy_gradient_matches_finite_differences(rng, shapes, settings, reduction):
    shape, tshape = shapes
    logits = rng.standard_normal(shape)
    target = _targets(rng, tshape, shape[1], settings)
    grad = rng.standard_normal(tshape) if reduction == "none" else 0.7
    _, log_probs = ops.cross_entropy_forward(logits, target, reduction=reduction, **settings)
    d = ops.cross_entropy_backward(grad, log_probs, target, reduction=reduction, **settings)
    num = numerical_grad(
        lambda v: np.sum(ops.cross_entropy_forward(v, target, reduction=reduction, **settings)[0] * grad), logits)
    np.testing.assert_allclose(d, num, rtol=1e-6, atol=1e-8)


def test_cross_entropy_ignored_targets_contribute_nothing(target, rng):
    logits = place(target, rng.standard_normal((6, 4)))
    t = place(target, np.array([0, -100, 3, -100, 1, 2]))
    loss, lp = ops.cross_entropy_forward(logits, t, reduction="none")
    assert loss[1] == 0 and loss[3] == 0
    mean, _ = ops.cross_entropy_forward(logits, t)
    assert float(mean) == pytest.approx(float(loss.sum()) / 4)
    d = ops.cross_entropy_backward(1.0, lp, t)
    assert np.all(d[[1, 3]] == 0)


@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 2, 3)], ids=["rows", "nchw"])
def test_cross_entropy_all_ignored_mean_is_nan(target, shape):
    logits = place(target, np.ones(shape))
    t = place(target, np.full((shape[0],) + shape[2:], -100))
    loss, lp = ops.cross_entropy_forward(logits, t)
    assert np.isnan(loss)
    assert ops.cross_entropy_forward(logits, t, reduction="sum")[0] == 0
    np.testing.assert_array_equal(ops.cross_entropy_backward(1.0, lp, t), 0)


@pytest.mark.parametrize("shape", [(70, 3), (2, 3, 5, 7)], ids=["rows", "nchw"])
def test_cross_entropy_ignored_positions_get_exact_zeros_whatever_log_probs_hold(target, shape):
    # The backward writes 0 at ignored positions without reading log_probs there
    # (inf or nan in them must not leak through as 0 * inf).
    rng = np.random.default_rng(3)
    t = rng.integers(0, 3, (shape[0],) + shape[2:])
    t.reshape(-1)[::4] = -100
    lp = ops.softmax_forward(place(target, rng.standard_normal(shape)), log=True)
    ignored = np.expand_dims(t == -100, 1) & np.ones(shape, bool)
    lp[ignored] = np.where(np.arange(ignored.sum()) % 2, np.inf, np.nan)
    d = ops.cross_entropy_backward(1.0, lp, place(target, t))
    assert np.all(d[ignored] == 0) and np.all(np.isfinite(d))


def test_cross_entropy_loss_is_zero_d_and_accepts_other_int_dtypes(rng):
    logits = rng.standard_normal((4, 3)).astype(np.float32)
    loss, _ = ops.cross_entropy_forward(logits, np.array([0, 1, 2, 1], np.int32))
    assert loss.shape == () and loss.dtype == np.float32
    d = ops.cross_entropy_backward(np.array(2.0, np.float32), _, np.array([0, 1, 2, 1], np.uint8))
    assert d.shape == (4, 3)


# ---- bad input ---------------------------------------------------------------

X2 = np.zeros((4, 3))
T1 = np.array([0, 1, 2, 1])


def test_empty_inputs_give_empty_outputs(target):
    for shape in ((0, 5), (2, 3, 0, 4)):
        x = place(target, np.ones(shape, np.float32))
        y = ops.softmax_forward(x, log=True)
        assert y.shape == shape and ops.softmax_backward(x, y, log=True).shape == shape
    logits, t = place(target, np.ones((2, 3, 0, 4), np.float32), np.zeros((2, 0, 4), np.int64))
    assert np.isnan(ops.cross_entropy_forward(logits, t)[0])  # mean over no targets, as PyTorch
    assert ops.cross_entropy_forward(logits, t, reduction="sum")[0] == 0
    loss, log_probs = ops.cross_entropy_forward(logits, t, reduction="none")
    assert loss.shape == (2, 0, 4)
    assert ops.cross_entropy_backward(loss, log_probs, t, reduction="none").shape == logits.shape


BAD_CALLS = {
    "softmax_3d": (lambda: ops.softmax_forward(np.zeros((2, 3, 4))), ValueError, "softmax_forward: x"),
    "softmax_int": (lambda: ops.softmax_forward(np.zeros((2, 3), np.int64)), TypeError, "softmax_forward: x"),
    "softmax_no_classes": (lambda: ops.softmax_forward(np.zeros((2, 0))), ValueError, "softmax_forward: x"),
    "softmax_log_not_bool": (lambda: ops.softmax_forward(X2, log="yes"), TypeError, "softmax_forward: log"),
    "softmax_backward_dtype": (lambda: ops.softmax_backward(X2.astype(np.float32), X2), TypeError,
                               "softmax_backward: dy"),
    "softmax_backward_shape": (lambda: ops.softmax_backward(np.zeros((4, 2)), X2), ValueError,
                               "softmax_backward: dy"),
    "ce_target_out_of_range": (lambda: ops.cross_entropy_forward(X2, np.array([0, 1, 3, 1])), ValueError,
                               r"cross_entropy_forward: target .* got 3 at index \(2,\)"),
    "ce_target_negative": (lambda: ops.cross_entropy_forward(X2, np.array([0, -1, 0, 1])), ValueError,
                           r"cross_entropy_forward: target .* got -1"),
    "ce_target_float": (lambda: ops.cross_entropy_forward(X2, T1.astype(float)), TypeError,
                        "cross_entropy_forward: target"),
    "ce_target_shape": (lambda: ops.cross_entropy_forward(X2, T1[:3]), ValueError, "cross_entropy_forward: target"),
    "ce_target_list": (lambda: ops.cross_entropy_forward(X2, [0, 1, 2, 1]), TypeError,
                       "cross_entropy_forward: target"),
    "ce_smoothing_above_1": (lambda: ops.cross_entropy_forward(X2, T1, label_smoothing=1.5), ValueError,
                             "cross_entropy_forward: label_smoothing"),
    "ce_bad_reduction": (lambda: ops.cross_entropy_forward(X2, T1, reduction="avg"), ValueError,
                         "cross_entropy_forward: reduction"),
    "ce_ignore_index_float": (lambda: ops.cross_entropy_forward(X2, T1, ignore_index=1.5), TypeError,
                              "cross_entropy_forward: ignore_index"),
    "ce_backward_grad_shape": (lambda: ops.cross_entropy_backward(np.ones(3), X2, T1, reduction="none"),
                               ValueError, "cross_entropy_backward: grad_loss"),
    "ce_backward_grad_not_scalar": (lambda: ops.cross_entropy_backward(np.ones(4), X2, T1), ValueError,
                                    "cross_entropy_backward: grad_loss"),
    "ce_backward_target_range": (lambda: ops.cross_entropy_backward(1.0, X2, np.array([0, 1, 9, 1])),
                                 ValueError, "cross_entropy_backward: target .* got 9"),
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
target, losses = np.zeros(2, np.int64), np.empty(2, f32)
empty = np.empty(0, f32)
buf = np.empty(10, f32)
class Fake:  # an array interface that describes what it likes
    def __init__(self, address, shape, readonly=False):
        self.__cudasim_array_interface__ = {"data": (address, readonly), "shape": shape, "typestr": "<f4",
                                            "strides": None, "version": 3}
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid": ("_native.cross_entropy_forward_f32(2, 4, 1, x, target, -100, 0.1, y, losses)", None, ""),
    "outer_wraps": ("_native.softmax_forward_f32(2 ** 62 + 2, 4, 1, x, y, False)", ValueError,
                    "softmax: sizes too large"),  # 4 * (2**62 + 2) == 8 (mod 2**64)
    "wraps_to_zero": ("_native.softmax_forward_f32(2 ** 32, 1, 2 ** 32, empty, empty.copy(), False)", ValueError,
                      "softmax: sizes too large"),
    "negative_pair": ("_native.softmax_forward_f32(-2, 4, -1, x, y, False)", ValueError, "sizes must be >= 0"),
    "no_classes": ("_native.softmax_forward_f32(2, 0, 4, empty, empty.copy(), False)", ValueError,
                   "C must be >= 1"),
    "y_too_small": ("_native.softmax_forward_f32(2, 4, 1, x, y[:7], True)", ValueError,
                    "y: expected 8 elements, got 7"),
    "y_is_x": ("_native.softmax_forward_f32(2, 4, 1, buf[:8], buf[:8], False)", ValueError,
               "y: must not share memory with x"),
    "backward_wraps": ("_native.softmax_backward_f32(2 ** 62 + 2, 4, 1, x, x, dx, False)", ValueError,
                       "sizes too large"),
    "backward_dx_overlaps_y": ("_native.softmax_backward_f32(2, 4, 1, x, buf[:8], buf[2:], False)", ValueError,
                               "dx: must not share memory with y"),
    "ce_outer_wraps": ("_native.cross_entropy_forward_f32(2 ** 62 + 2, 4, 1, x, target, -100, 0.0, y, losses)",
                       ValueError, "sizes too large"),
    "ce_target_too_short": ("_native.cross_entropy_forward_f32(2, 4, 1, x, target[:1], -100, 0.0, y, losses)",
                            ValueError, "target: expected 2 elements"),
    "ce_target_int32": ("_native.cross_entropy_forward_f32(2, 4, 1, x, np.zeros(2, np.int32), -100, 0.0, y, "
                        "losses)", TypeError, "target: expected dtype int64"),
    "ce_target_out_of_range": ("_native.cross_entropy_forward_f32(2, 4, 1, x, np.array([0, 7]), -100, 0.0, y, "
                               "losses)", ValueError, "target: value at flat position 1"),
    "ce_outputs_overlap": ("_native.cross_entropy_forward_f32(2, 4, 1, x, target, -100, 0.0, buf[:8], buf[7:9])",
                           ValueError, "log_probs: must not share memory with losses"),
    "ce_backward_grad_too_short": ("_native.cross_entropy_backward_f32(2, 4, 1, x, target, -100, 0.0, "
                                   "np.ones(1, f32), 1.0, False, dx)", ValueError, "grad_loss: expected 2"),
    "ce_backward_dlogits_is_log_probs": ("_native.cross_entropy_backward_f32(2, 4, 1, buf[:8], target, -100, 0.0, "
                                         "None, 1.0, True, buf[:8])", ValueError,
                                         "dlogits: must not share memory with log_probs"),
    # The emulator's entry points: the same checks, and the kernels find the
    # first bad target themselves (the flat position, rows and NCHW alike).
    "cudasim_valid": ("on_cudasim(_native.cross_entropy_forward_cudasim_f32)(2, 4, 1, x, target, -100, 0.1, y, losses)", None,
                      ""),
    "cudasim_outer_wraps": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2 ** 62 + 2, 4, 1, x, y, False)", ValueError,
                            "softmax: sizes too large"),
    "cudasim_ce_target_too_short": ("on_cudasim(_native.cross_entropy_forward_cudasim_f32)(2, 4, 1, x, target[:1], -100, 0.0, "
                                    "y, losses)", ValueError, "target: expected 2 elements"),
    "cudasim_ce_first_bad_target": ("on_cudasim(_native.cross_entropy_forward_cudasim_f32)(2, 4, 1, x, np.array([0, 7]), "
                                    "-100, 0.0, y, losses)", ValueError, "target: value at flat position 1 "),
    "cudasim_ce_first_bad_of_many": (
        "on_cudasim(_native.cross_entropy_forward_cudasim_f32)(1, 2, 1000, np.ones(2000, f32), "
        "np.where(np.arange(1000) % 300 == 299, -5, 0), -100, 0.0, np.empty(2000, f32), np.empty(1000, f32))",
        ValueError, "target: value at flat position 299 "),
    "cudasim_ce_backward_first_bad_of_many": (
        "on_cudasim(_native.cross_entropy_backward_cudasim_f32)(1000, 2, 1, np.zeros(2000, f32), "
        "np.where(np.arange(1000) % 400 == 399, 2, -100), -100, 0.0, None, 1.0, True, np.empty(2000, f32))",
        ValueError, "target: value at flat position 399 "),
    # They read arrays through the CUDA array interface: host arrays are not theirs,
    # and a malformed interface is refused before any pointer is used.
    "cudasim_host_array_refused": ("_native.softmax_forward_cudasim_f32(2, 4, 1, x, y, False)", TypeError,
                                   "incompatible function arguments"),
    "cudasim_null_pointer": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2, 4, 1, Fake(0, (8,)), y, False)",
                             ValueError, "null data pointer"),
    "cudasim_negative_shape": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2, 4, 1, Fake(x.ctypes.data, (-8,)), "
                               "y, False)", ValueError, "bad shape"),
    "cudasim_misaligned": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2, 4, 1, Fake(x.ctypes.data + 1, (8,)), "
                           "y, False)", ValueError, "x: misaligned data pointer"),
    "cudasim_huge_after_zero": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2, 4, 1, Fake(x.ctypes.data, "
                                "(0, 2 ** 62)), y, False)", ValueError, "bad shape"),
    "cudasim_readonly_output": ("on_cudasim(_native.softmax_forward_cudasim_f32)(2, 4, 1, x, Fake(y.ctypes.data, "
                                "(8,), True), False)", ValueError, "y: expected a writable array"),
    "cudasim_ce_backward_dlogits_is_log_probs": ("on_cudasim(_native.cross_entropy_backward_cudasim_f32)(2, 4, 1, buf[:8], "
                                                 "target, -100, 0.0, None, 1.0, True, buf[:8])", ValueError,
                                                 "dlogits: must not share memory with log_probs"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
