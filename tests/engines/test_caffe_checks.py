"""The caffe engine checks its arguments as minifw.ops does, with minifw.ops's own checks: it used
to mix devices and dtypes silently (conv2d_forward of a CPU x and a "cudasim" w returned a CPU
array; gemm took int64 and a on "cudasim" with b on the CPU; dropout_backward took a mask of
another device; float64 x with float32 w gave float64), lower an x of the wrong shape in its
public im2col, accept RNN lengths of 0 and fail with raw reshape errors on empty batches."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import devices, ops
from minifw.engines import caffe


def sim(a):
    return devices.to_device(a, devices.CUDASIM)


rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
W = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
DY = rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
A = rng.standard_normal((2, 3)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)

BAD_CALLS = {
    # devices
    "conv_x_cpu_w_sim": lambda e: e.conv2d_forward(X, sim(W)),
    "conv_x_sim_w_cpu": lambda e: e.conv2d_forward(sim(X), W),
    "conv_bias_sim": lambda e: e.conv2d_forward(X, W, sim(np.zeros(4, np.float32))),
    "conv_bwd_data_w_sim": lambda e: e.conv2d_backward_data(DY, sim(W), X.shape),
    "conv_bwd_filter_dy_sim": lambda e: e.conv2d_backward_filter(X, sim(DY), W.shape),
    "gemm_a_sim_b_cpu": lambda e: e.gemm(sim(A), B),
    "gemm_c_sim": lambda e: e.gemm(A, B, sim(np.zeros((2, 4), np.float32))),
    "dropout_mask_cpu": lambda e: e.dropout_backward(sim(np.ones(3, np.float32)), np.ones(3, np.uint8), 0.5),
    # dtypes
    "conv_x_float64_w_float32": lambda e: e.conv2d_forward(X.astype(np.float64), W),
    "conv_x_int": lambda e: e.conv2d_forward(X.astype(np.int64), W),
    "conv_bwd_data_dy_float64": lambda e: e.conv2d_backward_data(DY.astype(np.float64), W, X.shape),
    "gemm_int64": lambda e: e.gemm(A.astype(np.int64), B.astype(np.int64)),
    "gemm_mixed": lambda e: e.gemm(A.astype(np.float64), B),
    "gemm_c_dtype": lambda e: e.gemm(A, B, np.zeros((2, 4))),
    # shapes
    "conv_bias_shape": lambda e: e.conv2d_forward(X, W, np.zeros(3, np.float32)),
    "conv_x_3d": lambda e: e.conv2d_forward(X[0], W),
    "conv_x_empty": lambda e: e.conv2d_forward(X[:0], W),
    "conv_channels": lambda e: e.conv2d_forward(X[:, :2], W),
    "conv_bwd_data_dy_shape": lambda e: e.conv2d_backward_data(DY[:, :, :3], W, X.shape),
    "conv_bwd_data_x_shape_bools": lambda e: e.conv2d_backward_data(DY, W, (True, 3, 6, 6)),
    "conv_bwd_filter_dy_shape": lambda e: e.conv2d_backward_filter(X, DY[:, :3], W.shape),
    "conv_bwd_bias_3d": lambda e: e.conv2d_backward_bias(DY[0]),
    "bias_backward_3d": lambda e: e.bias_backward(DY[0]),
    "bias_backward_no_channels": lambda e: e.bias_backward(np.zeros((2, 0), np.float32)),
    "gemm_inner": lambda e: e.gemm(A, A),
    "gemm_inner_trans": lambda e: e.gemm(A, B, trans_a=True),
    "gemm_c_shape": lambda e: e.gemm(A, B, np.zeros((4, 2), np.float32)),
    "gemm_c_alias": lambda e: (lambda s: e.gemm(s, s, s))(np.ones((3, 3), np.float32)),
    "gemm_c_readonly": lambda e: e.gemm(A, B, np.broadcast_to(np.zeros(4, np.float32), (2, 4))),
    "gemm_beta_without_c": lambda e: e.gemm(A, B, beta=1.0),
    "gemm_3d": lambda e: e.gemm(X, B),
    "gemm_trans_flag": lambda e: e.gemm(A, B, trans_a=1),
    "gemm_alpha_str": lambda e: e.gemm(A, B, alpha="2"),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_what_the_primitives_raise(call):
    with pytest.raises((TypeError, ValueError)) as want:
        call(ops)
    with pytest.raises(want.type) as got:
        call(caffe)
    assert str(got.value) == str(want.value)


def test_mixed_devices_name_the_arrays():
    with pytest.raises(ValueError, match="conv2d_forward: expected every array on one device, got x on 'cpu', "
                                         "w on 'cudasim'"):
        caffe.conv2d_forward(X, sim(W))
    with pytest.raises(ValueError, match="dropout_backward: expected every array on one device, got dy on "
                                         "'cudasim', mask on 'cpu'"):
        caffe.dropout_backward(sim(np.ones(3, np.float32)), np.ones(3, np.uint8), 0.5)


def test_valid_calls_still_agree_with_the_primitives():
    np.testing.assert_allclose(caffe.conv2d_forward(X, W, np.ones(4, np.float32), padding=1),
                               ops.conv2d_forward(X, W, np.ones(4, np.float32), padding=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(caffe.conv2d_backward_data(DY, W, X.shape), ops.conv2d_backward_data(DY, W, X.shape),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(caffe.conv2d_backward_filter(X, DY, W.shape),
                               ops.conv2d_backward_filter(X, DY, W.shape), rtol=1e-5, atol=1e-4)
    c = np.zeros((2, 4), np.float32)
    assert caffe.gemm(A, B, c, alpha=2.0) is c
    np.testing.assert_allclose(c, 2 * A @ B, rtol=1e-6)
    # strided views are read as they are (the checks copy nothing)
    view = np.asfortranarray(X)
    np.testing.assert_allclose(caffe.conv2d_forward(view, W), ops.conv2d_forward(X, W), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(caffe.gemm(A.T, B.T, trans_a=True, trans_b=True), A @ B, rtol=1e-6)


# ---- im2col / col2im -----------------------------------------------------------------------------

P = ops.ConvProblem((2, 3, 10, 10), (4, 3, 3, 3), padding=1)


@pytest.mark.parametrize("call, error, message", [
    (lambda: caffe.im2col(np.zeros((2, 3, 20, 20), np.float32), P), ValueError,
     r"im2col: x must have shape \(2, 3, 10, 10\) for this problem \(ConvProblem\(x_shape=\(2, 3, 10, 10\)"),
    (lambda: caffe.im2col(np.zeros((2, 3, 10), np.float32), P), ValueError,
     r"im2col: x must be 4-D of shape \(2, 3, 10, 10\) \(from the problem\); got a 3-D array"),
    (lambda: caffe.im2col(np.zeros((2, 3, 10, 10), np.int64), P), TypeError,
     "im2col: x must have dtype float32 or float64, got int64"),
    (lambda: caffe.im2col(sim(np.zeros((2, 3, 10, 10), np.float32)), P), ValueError,
     "im2col: x must be on the CPU"),
    (lambda: caffe.im2col(np.zeros((2, 3, 10, 10), np.float32), (2, 3, 10, 10)), TypeError,
     "im2col: problem must be a ConvProblem, got tuple"),
    (lambda: caffe.im2col(np.zeros((2, 3, 10, 10), np.float32), P, batch_inner=1), TypeError,
     "im2col: batch_inner must be a bool"),
    (lambda: caffe.col2im(np.zeros((3, 3, 3, 10, 10, 1), np.float32), P), ValueError,
     r"col2im: col must have shape \(3, 3, 3, 10, 10, 2\) for this problem"),
    (lambda: caffe.col2im(np.zeros((2, 3, 10, 10), np.float32), P), ValueError, "col2im: col must be 6-D"),
], ids=["x-larger", "x-3d", "x-int", "x-on-cudasim", "not-a-problem", "batch_inner-int", "col-shape", "col-4d"])
def test_im2col_and_col2im_check_their_input_against_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_im2col_and_col2im_round_trip_as_before():
    x = rng.standard_normal(P.x_shape)
    col = caffe.im2col(x, P, batch_inner=True).copy()
    assert col.shape == (3, 3, 3, 10, 10, 2)
    # col2im adds every tap back: with ones, each input gets the number of windows that read it
    counts = caffe.col2im(np.ones_like(col), P)
    assert counts.shape == P.x_shape and counts[0, 0, 5, 5] == 9 and counts[0, 0, 0, 0] == 4


# ---- RNN lengths ------------------------------------------------------------------------------------

def test_rnn_lengths_are_checked_as_the_primitives_check_them():
    desc = ops.RNNDescriptor("gru", 3, 4)
    x = rng.standard_normal((2, 2, 3)).astype(np.float32)
    w = rng.standard_normal(desc.weight_count()).astype(np.float32)
    with pytest.raises(ValueError, match=r"rnn_forward: lengths must each be in \[1, T=2\], got 0 at index 1"):
        caffe.rnn_forward(desc, x, None, None, w, lengths=[2, 0])
    for lengths in ([2, 0], [3, 1], [1], [1.0, 2.0]):
        with pytest.raises((ValueError, TypeError)) as want:
            ops.rnn_forward(desc, x, None, None, w, lengths=lengths)
        with pytest.raises(want.type) as got:
            caffe.rnn_forward(desc, x, None, None, w, lengths=lengths)
        assert str(got.value) == str(want.value)


# ---- empty batches -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4, 4), (2, 3, 0, 4)], ids=["N0-2d", "N0-4d", "H0-4d"])
def test_empty_batches_give_what_the_primitives_give(shape):
    x = np.zeros(shape, np.float32)
    mean, var = np.zeros(3, np.float32), np.ones(3, np.float32)
    weight, bias = np.full(3, 2.0, np.float32), np.ones(3, np.float32)
    for engine in (ops, caffe):
        y = engine.batch_norm_forward_inference(x, weight, bias, mean, var)
        assert y.shape == shape and y.dtype == np.float32
        dx, dw, db = engine.batch_norm_backward(x, x, weight, mean, var)
        assert dx.shape == shape
        np.testing.assert_array_equal(dw, np.zeros(3))
        np.testing.assert_array_equal(db, np.zeros(3))
        np.testing.assert_array_equal(engine.bias_backward(x), np.zeros(3))
        if len(shape) == 4:
            np.testing.assert_array_equal(engine.conv2d_backward_bias(x), np.zeros(3))


def test_functional_batch_norm_on_an_empty_batch_under_the_caffe_engine():
    x = minifw.zeros(0, 3)
    mean, var = minifw.zeros(3), minifw.ones(3)
    with minifw.engine("caffe"):
        y = F.batch_norm(x, mean, var, training=False)
    assert tuple(y.shape) == (0, 3)
