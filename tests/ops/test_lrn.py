"""LRN across channels: forward (y and the saved scale) and backward against
the float64 reference (PyTorch's LocalResponseNorm), odd and even window
sizes, windows wider than C, blocks of positions, float32 and float64, under
every ISA and on the CUDA emulator; finite differences; bad input."""

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import bad_call_test, assert_within_bound, binding_tests, lrn_backward_ref, lrn_ref, numerical_grad
from targets import assert_on, place

DTYPES = (np.float32, np.float64)
# y = x * scale^-beta: the window sum is accumulated in double, so scale is
# within an ulp or two, and scale^-beta within a few more; rtol 4e-6 is ~30
# float32 ulp. The backward subtracts two terms; its bound is relative to the
# sum of their magnitudes (see _backward_magnitude).
RTOL = {np.float32: 4e-6, np.float64: 1e-13}
SHAPES = {
    "single": (1, 1, 1, 1),
    "odd_2x7x5x6": (2, 7, 5, 6),
    "n1_c3_window_wider_than_c": (1, 3, 4, 4),
    "two_position_blocks_1x6x23x31": (1, 6, 23, 31),
    "alexnet_like_2x96x7x7": (2, 96, 7, 7),
    "threaded_4x32x16x16": (4, 32, 16, 16),
}
PARAMS = {
    "alexnet": dict(alpha=1e-4, beta=0.75, k=1.0),
    "strong": dict(alpha=2.0, beta=0.6, k=0.5),  # the general pow path, scale far from k
}


def _backward_magnitude(dy, x, size, alpha, beta, k):
    """|dy| * scale^-beta + 2 alpha beta / size * |x| * sum_window |dy * y / scale|."""
    y, scale = lrn_ref(x, size, alpha, beta, k)
    r = np.abs(dy * y / scale)
    c = x.shape[1]
    acc = np.zeros_like(r)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + size // 2)
        acc[:, ch] = r[:, lo:hi + 1].sum(axis=1)
    return np.abs(dy) * scale ** -beta + 2 * alpha * beta / size * np.abs(x) * acc


@pytest.mark.parametrize("params", PARAMS.values(), ids=PARAMS.keys())
@pytest.mark.parametrize("size", [1, 2, 5, 6])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_forward_and_backward_match_reference(target, rng, dtype, shape, size, params):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    rtol = RTOL[dtype]
    y, scale = ops.lrn_forward(place(target, x), size, **params)
    y_ref, scale_ref = lrn_ref(x, size, **params)
    assert_within_bound(scale, scale_ref, scale_ref, rtol, 0, "scale")
    assert_within_bound(y, y_ref, np.abs(y_ref), rtol, 0, "y")
    dx = ops.lrn_backward(*place(target, dy, x), y, scale, size, **params)
    assert_on(target, y, scale, dx)
    dref = lrn_backward_ref(dy, x, size, **params)
    assert_within_bound(dx, dref, _backward_magnitude(dy, x, size, **params), rtol, 0, "dx")


@pytest.mark.parametrize("params", PARAMS.values(), ids=PARAMS.keys())
@pytest.mark.parametrize("size", [1, 3, 4, 9])
def test_gradient_matches_finite_differences(rng, size, params):
    x = rng.standard_normal((2, 6, 2, 3))
    dy = rng.standard_normal(x.shape)
    y, scale = ops.lrn_forward(x, size, **params)
    num = numerical_grad(lambda v: np.sum(ops.lrn_forward(v, size, **params)[0] * dy), x)
    np.testing.assert_allclose(ops.lrn_backward(dy, x, y, scale, size, **params), num, rtol=1e-6, atol=1e-9)


def test_a_large_value_leaving_the_window_leaves_no_error_behind(target):
    # Channel 0 is huge; the windows of later channels hold only small values.
    x = np.full((1, 12, 1, 40), 1e-3, np.float32)
    x[:, 0] = 1e4
    _, scale = ops.lrn_forward(place(target, x), 3, alpha=1.0, beta=0.75, k=0.0)
    _, scale_ref = lrn_ref(x, 3, alpha=1.0, beta=0.75, k=0.0)
    np.testing.assert_allclose(scale[:, 3:], scale_ref[:, 3:], rtol=1e-6)



def test_an_infinite_value_reaches_only_the_windows_that_hold_it(target):
    # Channels outside the window of channel 0 must stay exactly as without it:
    # no 0 * inf (NaN) from a channel that is not entering or leaving.
    x = np.full((1, 12, 1, 40), 0.5, np.float32)
    x[:, 0] = np.inf
    y, scale = ops.lrn_forward(place(target, x), 3)
    with np.errstate(invalid="ignore"):  # channel 0 is inf * 0 = NaN, as it should be
        y_ref, scale_ref = lrn_ref(x, 3)
    np.testing.assert_allclose(y[:, 2:], y_ref[:, 2:], rtol=4e-6)
    assert np.isinf(scale[:, :2]).all() and np.isfinite(scale[:, 2:]).all()
    dx = ops.lrn_backward(*place(target, np.ones_like(x), np.where(np.isinf(x), 0, x)), y, scale, 3)
    assert np.isfinite(dx[:, 3:]).all()

def test_results_do_not_depend_on_thread_count(target, rng):
    x = place(target, rng.standard_normal((4, 32, 16, 16)).astype(np.float32))
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            y, s = ops.lrn_forward(x, 5)
            out.append((y, s, ops.lrn_backward(x, x, y, s, 5)))
    finally:
        minifw.set_num_threads(before)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)



@pytest.mark.parametrize("shape", [(0, 3, 2, 2), (1, 3, 0, 4)], ids=["no_images", "empty_planes"])
def test_empty_inputs_give_empty_outputs(target, shape):
    x = place(target, np.ones(shape, np.float32))
    y, scale = ops.lrn_forward(x, 5)
    assert y.shape == scale.shape == shape
    dx = ops.lrn_backward(x, x, y, scale, 5)
    assert dx.shape == shape
    assert_on(target, y, scale, dx)


X = np.ones((1, 4, 3, 3))
BAD_CALLS = {
    "x_3d": (lambda: ops.lrn_forward(np.ones((4, 3, 3)), 3), ValueError, "lrn_forward: x must be 4-D"),
    "x_int": (lambda: ops.lrn_forward(np.ones((1, 4, 3, 3), np.int64), 3), TypeError, "lrn_forward: x"),
    "x_no_channels": (lambda: ops.lrn_forward(np.ones((1, 0, 3, 3)), 3), ValueError,
                      "lrn_forward: x must have at least one channel"),
    "size_zero": (lambda: ops.lrn_forward(X, 0), ValueError, "lrn_forward: size"),
    "size_past_int64": (lambda: ops.lrn_forward(X, 2 ** 63), ValueError,
                        r"lrn_forward: size must be in \[1, 2\*\*58\]"),
    "size_float": (lambda: ops.lrn_forward(X, 3.0), TypeError, "lrn_forward: size"),
    "alpha_inf": (lambda: ops.lrn_forward(X, 3, alpha=float("inf")), ValueError, "lrn_forward: alpha"),
    "beta_string": (lambda: ops.lrn_forward(X, 3, beta="0.75"), TypeError, "lrn_forward: beta"),
    "backward_scale_shape": (lambda: ops.lrn_backward(X, X, X, X[:, :2], 3), ValueError, "lrn_backward: scale"),
    "backward_dy_dtype": (lambda: ops.lrn_backward(X.astype(np.float32), X, X, X, 3), TypeError,
                          "lrn_backward: dy"),
    "backward_y_missing": (lambda: ops.lrn_backward(X, X, None, X, 3), TypeError, "lrn_backward: y"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
x, y, scale, dx = np.ones(8, f32), np.empty(8, f32), np.empty(8, f32), np.empty(8, f32)  # (N, C, HW) = (2, 4, 1)
empty = np.empty(0, f32)
buf = np.empty(16, f32)
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "window_wider_than_everything": ("_native.lrn_forward_f32(2, 4, 1, 2 ** 62, 1e-4, 0.75, 1.0, x, y, scale)",
                                     None, ""),
    "batch_wraps": ("_native.lrn_forward_f32(2 ** 62 + 2, 4, 1, 5, 1e-4, 0.75, 1.0, x, y, scale)", ValueError,
                    "lrn: sizes too large"),  # 4 * (2**62 + 2) == 8 (mod 2**64)
    "wraps_to_zero": ("_native.lrn_forward_f32(2 ** 32, 1, 2 ** 32, 5, 1e-4, 0.75, 1.0, empty, empty.copy(), "
                      "empty.copy())", ValueError, "lrn: sizes too large"),
    "negative_pair": ("_native.lrn_forward_f32(-2, 4, -1, 5, 1e-4, 0.75, 1.0, x, y, scale)", ValueError,
                      "sizes must be >= 0"),
    "size_zero": ("_native.lrn_forward_f32(2, 4, 1, 0, 1e-4, 0.75, 1.0, x, y, scale)", ValueError,
                  "size must be >= 1"),
    "scale_too_small": ("_native.lrn_forward_f32(2, 4, 1, 5, 1e-4, 0.75, 1.0, x, y, scale[:7])", ValueError,
                        "scale: expected 8 elements, got 7"),
    "scale_overlaps_y": ("_native.lrn_forward_f32(2, 4, 1, 5, 1e-4, 0.75, 1.0, x, buf[:8], buf[4:12])",
                         ValueError, "y: must not share memory with scale"),
    "backward_wraps": ("_native.lrn_backward_f32(2 ** 62 + 2, 4, 1, 5, 1e-4, 0.75, 1.0, x, x, x, x, dx)",
                       ValueError, "sizes too large"),
    "backward_x_float64": ("_native.lrn_backward_f32(2, 4, 1, 5, 1e-4, 0.75, 1.0, x, np.ones(8), x, x, dx)",
                           TypeError, "x: expected dtype float32"),
    "backward_dx_is_dy": ("_native.lrn_backward_f32(2, 4, 1, 5, 1e-4, 0.75, 1.0, buf[:8], x, x, x, buf[:8])",
                          ValueError, "dx: must not share memory with dy"),
    # the entry points of device "cudasim" make the same checks
    "cudasim_window_wider_than_everything": ("on_cudasim(_native.lrn_forward_cudasim_f32)(2, 4, 1, 2 ** 62, 1e-4, 0.75, 1.0, "
                                             "x, y, scale)", None, ""),
    "cudasim_batch_wraps": ("on_cudasim(_native.lrn_forward_cudasim_f32)(2 ** 62 + 2, 4, 1, 5, 1e-4, 0.75, 1.0, x, y, scale)",
                            ValueError, "lrn: sizes too large"),
    "cudasim_scale_overlaps_y": ("on_cudasim(_native.lrn_forward_cudasim_f32)(2, 4, 1, 5, 1e-4, 0.75, 1.0, x, buf[:8], "
                                 "buf[4:12])", ValueError, "y: must not share memory with scale"),
    "cudasim_backward_x_float64": ("on_cudasim(_native.lrn_backward_cudasim_f32)(2, 4, 1, 5, 1e-4, 0.75, 1.0, x, np.ones(8), "
                                   "x, x, dx)", TypeError, "x: expected dtype float32"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
