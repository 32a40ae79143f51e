"""The Caffe engine's convolution (batched im2col + NumPy GEMM) is the
benchmarks' yardstick, so it is held to the same float64 reference."""
import numpy as np
import pytest

from minifw.engines import caffe
from reference import (conv2d_backward_bias_ref, conv2d_backward_data_ref, conv2d_backward_filter_ref,
                       conv2d_forward_ref)

# (x_shape, w_shape, stride, padding, dilation, groups)
CASES = {
    "lenet_conv1": ((2, 1, 28, 28), (20, 1, 5, 5), 1, 0, 1, 1),
    "stride2_pad1_dil2": ((1, 3, 11, 9), (4, 3, 3, 3), 2, 1, 2, 1),
    "groups2_pad2": ((2, 6, 9, 9), (8, 3, 5, 5), 1, 2, 1, 2),
    "alexnet_conv1_geometry": ((1, 3, 35, 35), (6, 3, 11, 11), 4, 0, 1, 1),
    "depthwise_nonsquare": ((2, 4, 7, 8), (4, 1, 3, 2), (1, 2), (1, 0), 1, 4),
}
TOL = 1e-12  # float64 throughout: only summation order differs from the reference


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
    from minifw import ops
    p = ops.ConvProblem((16, 3, 227, 227), (96, 3, 11, 11), stride=4)
    assert caffe.col_buffer_bytes(p) == 3 * 11 * 11 * 16 * 55 * 55 * 4
