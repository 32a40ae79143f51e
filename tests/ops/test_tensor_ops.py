"""Bias add, bias gradient, add_tensor and scale_tensor against the float64
reference: 2-D and 4-D, odd sizes, N = 1, empty batches, broadcasting in
add_tensor along every kind of axis, beta == 0 never reading c, sizes large
enough to split over threads (one long row included), float32 and float64, on
the CPU and the CUDA emulator; finite differences for the bias gradient; bad
input. The embedding gradient (host only): against the reference, bit for bit
against numpy.add.at on any thread count, and bad input."""

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import (add_tensor_ref, assert_within_bound, bias_add_ref, bias_backward_ref, binding_tests,
                       embedding_backward_ref, numerical_grad, scale_tensor_ref)
from targets import assert_on, cuda_available, place

DTYPES = (np.float32, np.float64)
# Each output element is one correctly rounded operation (x + b, alpha * x),
# at most three (alpha * a + beta * c: error <= 1.5 ulp of |alpha a| + |beta c|),
# or a sum accumulated in double and rounded once (bias gradient): 2 ulp of the
# operands' magnitude covers them all. In float64 the bias gradient's double
# sum of up to ~10^5 terms may lose a further n * 2^-53 relative to sum |dy|.
RTOL = {np.float32: 2.0 ** -23, np.float64: 2.0 ** -52}
RTOL_SUM = {np.float32: 2.0 ** -23, np.float64: 1e-11}
# These kernels have no ISA variants, so the tests run once per device: the
# `target` fixture given the device alone leaves the CPU's ISA as it is.
# The GPU ("cuda", where there is one) runs them as the emulator does.
ON_EACH_DEVICE = pytest.mark.parametrize("target", ["cpu", "cudasim"] + (["cuda"] if cuda_available() else []),
                                         indirect=True)

BIAS_SHAPES = {
    "single_1x1": (1, 1),
    "fc_5x7": (5, 7),
    "lenet_fc_64x500": (64, 500),
    "empty_batch_0x3": (0, 3),
    "single_1x1x1x1": (1, 1, 1, 1),
    "odd_2x3x5x7": (2, 3, 5, 7),
    "n1_1x5x13x13": (1, 5, 13, 13),
    "empty_plane_2x3x0x4": (2, 3, 0, 4),
    "threaded_4x32x16x16": (4, 32, 16, 16),
    "many_rows_few_columns_700x3": (700, 3),  # more rows than a block has threads
    "columns_past_one_tile_3x70": (3, 70),
    "small_planes_100x2x1x3": (100, 2, 1, 3),  # a block's threads span many images
    "large_planes_2x3x20x19": (2, 3, 20, 19),  # more positions than a block has threads
}


@pytest.mark.parametrize("shape", BIAS_SHAPES.values(), ids=BIAS_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@ON_EACH_DEVICE
def test_bias_add_and_backward_match_reference(target, rng, dtype, shape):
    x = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(shape[1]).astype(dtype)
    xt, bias_t = place(target, x, bias)
    y = ops.bias_add(xt, bias_t)
    assert y.dtype == dtype and y is not xt
    ref = bias_add_ref(x, bias)
    assert_within_bound(y, ref, np.abs(ref), RTOL[dtype], 0, "y")
    db = ops.bias_backward(xt)
    assert db.dtype == dtype and db.shape == (shape[1],)
    assert_on(target, y, db)
    assert_within_bound(db, bias_backward_ref(x), bias_backward_ref(np.abs(x)), RTOL_SUM[dtype], 0, "db")


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2, 3)], ids=["2d", "4d"])
def test_bias_gradient_matches_finite_differences(rng, shape):
    x = rng.standard_normal(shape)
    bias = rng.standard_normal(shape[1])
    dy = rng.standard_normal(shape)
    num = numerical_grad(lambda b: np.sum(ops.bias_add(x, b) * dy), bias)
    np.testing.assert_allclose(ops.bias_backward(dy), num, rtol=1e-7, atol=1e-9)


# (a's shape, c's shape): every way a may broadcast onto c.
ADD_SHAPES = {
    "same_2d_5x7": ((5, 7), (5, 7)),
    "same_4d_2x3x5x7": ((2, 3, 5, 7), (2, 3, 5, 7)),
    "bias_1xCx1x1": ((1, 3, 1, 1), (2, 3, 5, 7)),
    "per_image_Nx1x1x1": ((2, 1, 1, 1), (2, 3, 5, 7)),
    "plane_1x1xHxW": ((1, 1, 5, 7), (2, 3, 5, 7)),
    "mixed_1xCx1xW": ((1, 3, 1, 7), (2, 3, 5, 7)),
    "rows_Nx1": ((5, 1), (5, 7)),
    "columns_1xC": ((1, 7), (5, 7)),
    "scalar_1x1x1x1": ((1, 1, 1, 1), (2, 3, 5, 7)),
    "n1_1x3x4x4": ((1, 3, 4, 4), (1, 3, 4, 4)),
    "one_d": ((11,), (11,)),
    "zero_d": ((), ()),
    "five_d_broadcast": ((1, 2, 1, 3, 1), (2, 2, 3, 3, 4)),
    "empty_c_0x3": ((1, 3), (0, 3)),
    "threaded_long_row_2x40000": ((2, 40000), (2, 40000)),
    "threaded_bias_8x16x32x32": ((1, 16, 1, 1), (8, 16, 32, 32)),
    "threaded_rows_8x16x32x32": ((8, 16, 32, 1), (8, 16, 32, 32)),
}
COEFFICIENTS = {"plain_copy": (1.0, 0.0), "scaled_a": (2.0, 0.0), "sum": (1.0, 1.0), "mixed": (-0.5, 2.0)}


@pytest.mark.parametrize("alpha,beta", COEFFICIENTS.values(), ids=COEFFICIENTS.keys())
@pytest.mark.parametrize("a_shape,c_shape", ADD_SHAPES.values(), ids=ADD_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@ON_EACH_DEVICE
def test_add_tensor_matches_reference(target, rng, dtype, a_shape, c_shape, alpha, beta):
    a = np.asarray(rng.standard_normal(a_shape), dtype)
    c = np.asarray(rng.standard_normal(c_shape), dtype)
    out = ops.add_tensor(*place(target, a, c), alpha=alpha, beta=beta)
    assert out.shape == c_shape and out.dtype == dtype
    assert_on(target, out)
    ref = add_tensor_ref(a, c, alpha, beta)
    magnitude = np.abs(add_tensor_ref(a, c, abs(alpha), 0.0)) + abs(beta) * np.abs(c)
    assert_within_bound(out, ref, magnitude, RTOL[dtype], 0, "out")


@pytest.mark.parametrize("a_shape,c_shape", [((1, 3, 1, 1), (2, 3, 4, 5)), ((2, 3, 4, 5), (2, 3, 4, 5))],
                         ids=["broadcast", "same_shape"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@ON_EACH_DEVICE
def test_add_tensor_with_beta_zero_does_not_read_c(target, rng, dtype, a_shape, c_shape):
    a = place(target, rng.standard_normal(a_shape).astype(dtype))
    c = place(target, np.full(c_shape, np.nan, dtype))
    c[0, 0, 0, 0] = np.inf
    out = ops.add_tensor(a, c, alpha=3.0, beta=0.0)
    np.testing.assert_array_equal(out, np.broadcast_to(dtype(3) * a, c_shape))
    # With beta != 0, c is read: NaN propagates as arithmetic says.
    assert np.isnan(ops.add_tensor(a, c, alpha=3.0, beta=1.0)[0, 1]).all()


SCALE_SHAPES = {"zero_d": (), "one": (1,), "odd_5x7": (5, 7), "nchw_2x3x5x7": (2, 3, 5, 7),
                "empty_0x4": (0, 4), "threaded_64x4096": (64, 4096)}


@pytest.mark.parametrize("alpha", [0.5, -3.0, 0.0])
@pytest.mark.parametrize("shape", SCALE_SHAPES.values(), ids=SCALE_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@ON_EACH_DEVICE
def test_scale_tensor_matches_reference(target, rng, dtype, shape, alpha):
    x = np.asarray(rng.standard_normal(shape), dtype)
    xt = place(target, x)
    y = ops.scale_tensor(xt, alpha)
    assert y.shape == shape and y.dtype == dtype and y is not xt
    assert_on(target, y)
    ref = scale_tensor_ref(x, alpha)
    assert_within_bound(y, ref, np.abs(ref), RTOL[dtype], 0, "y")


def test_non_contiguous_inputs_are_accepted(rng):
    x = rng.standard_normal((3, 4, 6, 5)).transpose(0, 1, 3, 2)
    bias = rng.standard_normal(8)[::2]
    np.testing.assert_allclose(ops.bias_add(x, bias), bias_add_ref(x, bias), rtol=1e-15)
    np.testing.assert_allclose(ops.bias_backward(x), bias_backward_ref(x), rtol=1e-12)
    a = rng.standard_normal((1, 4, 1, 6))[..., ::2]
    np.testing.assert_allclose(ops.add_tensor(a, x[..., :3], beta=1.0), add_tensor_ref(a, x[..., :3], beta=1.0),
                               rtol=1e-15)
    np.testing.assert_allclose(ops.scale_tensor(x, 2.0), 2 * x, rtol=0)


@ON_EACH_DEVICE
def test_results_do_not_depend_on_thread_count(target, rng):
    x, bias = place(target, rng.standard_normal((8, 16, 32, 32)).astype(np.float32),
                    rng.standard_normal(16).astype(np.float32))
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            out.append((ops.bias_add(x, bias), ops.bias_backward(x), ops.bias_backward(x.reshape(512, 256)),
                        ops.add_tensor(bias.reshape(1, 16, 1, 1), x, alpha=2.0, beta=-1.0)))
    finally:
        minifw.set_num_threads(before)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


# (picks P, columns E, rows V): a row of dw picked many times, rows never picked, one
# column, a width that is not a whole cache line, more columns than one thread's share,
# nothing picked, no rows at all, the char-LSTM's and a word model's sizes
EMBEDDING_SHAPES = {
    "p1_e1_v1": (1, 1, 1),
    "p7_e3_v2": (7, 3, 2),
    "p50_e17_v9": (50, 17, 9),
    "p33_e70_v1000": (33, 70, 1000),
    "p0_e5_v4": (0, 5, 4),
    "p6_e0_v3": (6, 0, 3),
    "p0_e3_v0": (0, 3, 0),
    "charlstm_p2048_e128_v65": (2048, 128, 65),
    "wordlm_p700_e650_v10000": (700, 650, 10000),
}


@pytest.mark.parametrize("shape", EMBEDDING_SHAPES.values(), ids=EMBEDDING_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_embedding_backward_matches_reference_and_add_at(rng, dtype, shape):
    P, E, V = shape
    indices = rng.integers(0, max(V, 1), P).astype(np.int64) if V else np.zeros(0, np.int64)
    if P > 4 and V > 2:
        indices[::3] = V - 1  # one row picked many times
    g = rng.standard_normal((P, E)).astype(dtype)
    dw = ops.embedding_backward(indices, g, V)
    assert dw.shape == (V, E) and dw.dtype == dtype and dw.flags.c_contiguous
    ref = embedding_backward_ref(indices, g, V)
    picks = np.bincount(indices, minlength=V)[:, None] if P else np.zeros((V, 1))
    # a row summed from k picks: k - 1 roundings of at most the sum of their magnitudes
    bound = np.maximum(picks - 1, 0) * RTOL[dtype] * embedding_backward_ref(indices, np.abs(g), V)
    assert np.all(np.abs(dw - ref) <= bound)
    expected = np.zeros((V, E), dtype)
    np.add.at(expected, indices, g)  # the same sums in the same order
    np.testing.assert_array_equal(dw, expected)


def test_embedding_backward_does_not_depend_on_thread_count(rng):
    indices = rng.integers(0, 50, 3000).astype(np.int64)
    g = rng.standard_normal((3000, 300)).astype(np.float32)
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2, 3, 7):
            minifw.set_num_threads(n)
            out.append(ops.embedding_backward(indices, g, 50))
    finally:
        minifw.set_num_threads(before)
    for a in out[1:]:
        np.testing.assert_array_equal(a, out[0])


def test_embedding_backward_reads_strided_gradients_and_indices(rng):
    indices = rng.integers(0, 6, 40).astype(np.int64)
    g = rng.standard_normal((40, 10))
    dw = ops.embedding_backward(indices[::2], g[::2, ::3], 6)
    np.testing.assert_allclose(dw, embedding_backward_ref(indices[::2], g[::2, ::3], 6), rtol=1e-14)


X = np.ones((2, 3, 4, 4), np.float32)
B = np.ones(3, np.float32)
I3 = np.array([0, 2, 1], np.int64)
BAD_CALLS = {
    "bias_add_x_3d": (lambda: ops.bias_add(np.ones((3, 4, 4)), np.ones(3)), ValueError, "bias_add: x must be 2-D"),
    "bias_add_x_int": (lambda: ops.bias_add(np.ones((2, 3), np.int32), B), TypeError, "bias_add: x"),
    "bias_add_x_list": (lambda: ops.bias_add([[1.0, 2.0]], B), TypeError, "bias_add: x"),
    "bias_add_no_channels": (lambda: ops.bias_add(np.ones((2, 0), np.float32), B[:0]), ValueError,
                             "bias_add: x must have at least one channel"),
    "bias_add_bias_length": (lambda: ops.bias_add(X, np.ones(4, np.float32)), ValueError,
                             r"bias_add: bias must have shape \(3,\)"),
    "bias_add_bias_2d": (lambda: ops.bias_add(X, np.ones((1, 3), np.float32)), ValueError, "bias_add: bias"),
    "bias_add_bias_dtype": (lambda: ops.bias_add(X, np.ones(3)), TypeError, "bias_add: bias must have dtype"),
    "bias_add_bias_none": (lambda: ops.bias_add(X, None), TypeError, "bias_add: bias"),
    "bias_backward_dy_5d": (lambda: ops.bias_backward(np.ones((1, 2, 3, 4, 5))), ValueError,
                            "bias_backward: dy must be 2-D"),
    "bias_backward_dy_float16": (lambda: ops.bias_backward(np.ones((2, 3), np.float16)), TypeError,
                                 "bias_backward: dy"),
    "add_rank_mismatch": (lambda: ops.add_tensor(B, X), ValueError, "add_tensor: a must have c's rank"),
    "add_not_broadcastable": (lambda: ops.add_tensor(np.ones((1, 2, 1, 1), np.float32), X), ValueError,
                              r"add_tensor: a .* got a of shape \(1, 2, 1, 1\)"),
    "add_a_larger_than_c": (lambda: ops.add_tensor(X, X[:1]), ValueError, "add_tensor: a"),
    "add_dtype_mismatch": (lambda: ops.add_tensor(X.astype(np.float64), X), TypeError,
                           "add_tensor: a must have dtype float32"),
    "add_c_int": (lambda: ops.add_tensor(X, np.ones((2, 3, 4, 4), np.int64)), TypeError, "add_tensor: c"),
    "add_nine_dims": (lambda: ops.add_tensor(np.ones((1,) * 9), np.ones((1,) * 9)), ValueError,
                      "add_tensor: c must have at most 8 dimensions"),
    "add_alpha_string": (lambda: ops.add_tensor(X, X, alpha="2"), TypeError, "add_tensor: alpha"),
    "add_beta_nan": (lambda: ops.add_tensor(X, X, beta=float("nan")), ValueError, "add_tensor: beta"),
    "scale_alpha_bool": (lambda: ops.scale_tensor(X, True), TypeError, "scale_tensor: alpha"),
    "scale_alpha_inf": (lambda: ops.scale_tensor(X, float("inf")), ValueError, "scale_tensor: alpha"),
    "scale_x_tuple": (lambda: ops.scale_tensor((1.0, 2.0), 2.0), TypeError, "scale_tensor: x"),
    "embedding_index_too_large": (lambda: ops.embedding_backward(I3, np.ones((3, 2)), 2), ValueError,
                                  r"embedding_backward: indices must lie in \[0, num_embeddings\) = \[0, 2\), got 2"),
    "embedding_index_negative": (lambda: ops.embedding_backward(-I3, np.ones((3, 2)), 5), ValueError,
                                 "embedding_backward: indices must lie in .* got -2"),
    "embedding_indices_int32": (lambda: ops.embedding_backward(I3.astype(np.int32), np.ones((3, 2)), 5), TypeError,
                                "embedding_backward: indices must be a 1-D int64"),
    "embedding_indices_2d": (lambda: ops.embedding_backward(I3[None], np.ones((3, 2)), 5), TypeError,
                             "embedding_backward: indices must be a 1-D int64"),
    "embedding_indices_list": (lambda: ops.embedding_backward([0, 1], np.ones((2, 2)), 5), TypeError,
                               "embedding_backward: indices"),
    "embedding_rows_differ": (lambda: ops.embedding_backward(I3, np.ones((4, 2)), 5), ValueError,
                              "embedding_backward: g must have one row per index: 3 indices"),
    "embedding_g_1d": (lambda: ops.embedding_backward(I3, np.ones(3), 5), ValueError, "embedding_backward: g must be 2-D"),
    "embedding_g_int": (lambda: ops.embedding_backward(I3, np.ones((3, 2), np.int64), 5), TypeError,
                        "embedding_backward: g"),
    "embedding_count_negative": (lambda: ops.embedding_backward(I3, np.ones((3, 2)), -1), ValueError,
                                 "embedding_backward: num_embeddings"),
    "embedding_count_float": (lambda: ops.embedding_backward(I3, np.ones((3, 2)), 5.0), TypeError,
                              "embedding_backward: num_embeddings must be an int"),
    "embedding_too_large": (lambda: ops.embedding_backward(I3, np.ones((3, 2 ** 20)), 2 ** 40), ValueError,
                            "embedding_backward: dw would have"),
}


@pytest.mark.parametrize("call,exc,pattern", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_naming_the_argument(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
x, y = np.ones(8, f32), np.empty(8, f32)  # (outer, C, inner) = (2, 4, 1)
bias, db = np.ones(4, f32), np.empty(4, f32)
empty = np.empty(0, f32)
buf = np.empty(16, f32)
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid": ("_native.bias_add_f32(2, 4, 1, x, bias, y)", None, ""),
    "bias_add_outer_wraps": ("_native.bias_add_f32(2 ** 62 + 2, 4, 1, x, bias, y)", ValueError,
                             "bias: sizes too large"),  # 4 * (2**62 + 2) == 8 (mod 2**64)
    "bias_add_wraps_to_zero": ("_native.bias_add_f32(2 ** 32, 1, 2 ** 32, empty, bias[:1], empty.copy())",
                               ValueError, "bias: sizes too large"),
    "bias_add_negative_pair": ("_native.bias_add_f32(-2, 4, -1, x, bias, y)", ValueError, "sizes must be >= 0"),
    "bias_add_bias_too_short": ("_native.bias_add_f32(2, 4, 1, x, bias[:3], y)", ValueError,
                                "bias: expected 4 elements, got 3"),
    "bias_add_y_is_x": ("_native.bias_add_f32(2, 4, 1, buf[:8], bias, buf[:8])", ValueError,
                        "y: must not share memory with x"),
    "bias_backward_wraps": ("_native.bias_backward_f32(2 ** 62 + 2, 4, 1, x, db)", ValueError,
                            "bias: sizes too large"),
    "bias_backward_db_too_small": ("_native.bias_backward_f32(2, 4, 1, x, db[:3])", ValueError,
                                   "db: expected 4 elements"),
    "add_not_broadcastable": ("_native.tensor_add_f32(np.ones((2, 3), f32), np.ones((3, 3), f32), "
                              "np.empty((3, 3), f32), 1.0, 1.0)", ValueError, "a: must broadcast"),
    "add_out_shape": ("_native.tensor_add_f32(np.ones((1, 3), f32), np.ones((3, 3), f32), np.empty((9, 1), f32), "
                      "1.0, 1.0)", ValueError, "out: must have c's shape"),
    "add_out_is_c": ("_native.tensor_add_f32(x, buf[:8], buf[:8], 1.0, 1.0)", ValueError,
                     "out: must not share memory with c"),
    "add_nine_dims": ("_native.tensor_add_f32(*(np.ones((1,) * 9, f32) for _ in range(3)), 1.0, 0.0)", ValueError,
                      "at most 8 dimensions"),
    "scale_y_too_small": ("_native.tensor_scale_f32(x, y[:7], 2.0)", ValueError, "y: expected 8 elements"),
    "scale_y_overlaps_x": ("_native.tensor_scale_f32(buf[:8], buf[4:12], 2.0)", ValueError,
                           "y: must not share memory with x"),
    "embedding_valid": ("_native.embedding_backward_f32(np.array([1, 0, 1]), np.ones((3, 4), f32), "
                        "np.empty((2, 4), f32))", None, ""),
    "embedding_index_past_end": ("_native.embedding_backward_f32(np.array([1, 2]), np.ones((2, 4), f32), "
                                 "np.empty((2, 4), f32))", ValueError, r"indices\[1\] = 2 is outside \[0, 2\)"),
    "embedding_index_negative": ("_native.embedding_backward_f32(np.array([-1]), np.ones((1, 4), f32), "
                                 "np.empty((2, 4), f32))", ValueError, "is outside"),
    "embedding_indices_int32": ("_native.embedding_backward_f32(np.array([0], np.int32), np.ones((1, 4), f32), "
                                "np.empty((2, 4), f32))", TypeError, "indices: expected dtype int64"),
    "embedding_g_rows": ("_native.embedding_backward_f32(np.array([0, 1]), np.ones((3, 4), f32), "
                         "np.empty((2, 4), f32))", ValueError, "g must have a row per index"),
    "embedding_dw_columns": ("_native.embedding_backward_f32(np.array([0]), np.ones((1, 4), f32), "
                             "np.empty((2, 3), f32))", ValueError, "dw must have g's columns"),
    "embedding_dw_dtype": ("_native.embedding_backward_f32(np.array([0]), np.ones((1, 4), f32), "
                           "np.empty((2, 4)))", TypeError, "dw: expected dtype float32"),
    "embedding_dw_strided": ("_native.embedding_backward_f32(np.array([0]), np.ones((1, 4), f32), "
                             "np.empty((2, 8), f32)[:, ::2])", ValueError, "dw: expected a C-contiguous array"),
    "embedding_dw_is_g": ("_native.embedding_backward_f32(np.array([0, 1]), buf[:8].reshape(2, 4), "
                          "buf[:8].reshape(2, 4))", ValueError, "dw: must not share memory with g"),
    "embedding_dw_read_only": ("_native.embedding_backward_f32(np.array([0]), np.ones((1, 4), f32), "
                               "np.broadcast_to(np.empty(4, f32), (2, 4)))", ValueError, "dw"),
    # the entry points of device "cudasim" make the same checks
    "cudasim_valid": ("on_cudasim(_native.bias_add_cudasim_f32)(2, 4, 1, x, bias, y)", None, ""),
    "cudasim_bias_add_outer_wraps": ("on_cudasim(_native.bias_add_cudasim_f32)(2 ** 62 + 2, 4, 1, x, bias, y)", ValueError,
                                     "bias: sizes too large"),
    "cudasim_bias_backward_db_too_small": ("on_cudasim(_native.bias_backward_cudasim_f32)(2, 4, 1, x, db[:3])", ValueError,
                                           "db: expected 4 elements"),
    "cudasim_add_not_broadcastable": ("on_cudasim(_native.tensor_add_cudasim_f32)(np.ones((2, 3), f32), np.ones((3, 3), f32), "
                                      "np.empty((3, 3), f32), 1.0, 1.0)", ValueError, "a: must broadcast"),
    "cudasim_add_out_is_c": ("on_cudasim(_native.tensor_add_cudasim_f32)(x, buf[:8], buf[:8], 1.0, 1.0)", ValueError,
                             "out: must not share memory with c"),
    "cudasim_scale_y_overlaps_x": ("on_cudasim(_native.tensor_scale_cudasim_f32)(buf[:8], buf[4:12], 2.0)", ValueError,
                                   "y: must not share memory with x"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
