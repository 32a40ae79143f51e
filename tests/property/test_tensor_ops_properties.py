"""Bias add and its gradient, add_tensor and scale_tensor on drawn problems, on every
device: (N, C) and (N, C, H, W) with empty batches and planes; add_tensor's a broadcast
along any subset of c's axes for ranks 0 to 5, alpha and beta drawn (zero included: then
c is not read, so NaN in it must not show); both dtypes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
from ops.test_tensor_ops import RTOL, RTOL_SUM  # tests/ops/test_tensor_ops.py: the error bounds
from problems import coefficients, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import (add_tensor_ref, assert_within_bound, bias_add_ref, bias_backward_ref, scale_tensor_ref)
from targets import assert_on, place

# Representable in float32: the float32 kernels round a coefficient to float32 first (as
# cuDNN's and PyTorch's float32 arithmetic do), a rounding RTOL's error model leaves out.
COEFFICIENTS = coefficients(4).map(lambda v: float(np.float32(v)))
# These kernels have no ISA variants (tests/ops/test_tensor_ops.py): the CPU runs as it is.


def channel_shapes(small):
    n, c, hw = st.integers(0, 3 if small else 9), st.integers(1, 5 if small else 20), st.integers(0, 4 if small else 9)
    return st.one_of(st.tuples(n, c), st.tuples(n, c, hw, hw))


@on_every_device
@settings(max_examples=examples(2))
@given(data=st.data(), dtype=dtypes, seed=seeds)
def test_bias_add_and_backward_match_the_reference(target, data, dtype, seed):
    shape = data.draw(channel_shapes(on_gpu(target)), label="shape")
    rng = np.random.default_rng(seed)
    x, bias = normal(rng, shape, dtype), normal(rng, shape[1], dtype)
    y = ops.bias_add(*place(target, x, bias))
    db = ops.bias_backward(place(target, x))
    assert_on(target, y, db)
    ref = bias_add_ref(x, bias)
    assert_within_bound(y, ref, np.abs(ref), RTOL[dtype], 0, "y")
    assert_within_bound(db, bias_backward_ref(x), bias_backward_ref(np.abs(x)), RTOL_SUM[dtype], 0, "db")


@st.composite
def broadcast_shapes(draw, small):
    """(a's shape, c's shape): c of rank 0 to 5, a with size 1 along a drawn subset of c's axes."""
    c_shape = tuple(draw(st.lists(st.integers(0, 4 if small else 7), min_size=0, max_size=5)))
    ones = draw(st.lists(st.booleans(), min_size=len(c_shape), max_size=len(c_shape)))
    return tuple(1 if one else s for one, s in zip(ones, c_shape)), c_shape


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, alpha=COEFFICIENTS, beta=COEFFICIENTS)
def test_add_tensor_and_scale_tensor_match_the_reference(target, data, dtype, seed, alpha, beta):
    a_shape, c_shape = data.draw(broadcast_shapes(on_gpu(target)), label="shapes")
    rng = np.random.default_rng(seed)
    a, c = normal(rng, a_shape, dtype), normal(rng, c_shape, dtype)
    y = ops.scale_tensor(place(target, c), alpha)
    c_read = c.copy()
    if beta == 0 and c.size:
        c_read.reshape(-1)[0] = np.nan  # not read: must not reach the result
    out = ops.add_tensor(*place(target, a, c_read), alpha=alpha, beta=beta)
    assert_on(target, out, y)
    assert out.shape == y.shape == c_shape and out.dtype == y.dtype == dtype
    ref = add_tensor_ref(a, c, alpha, beta)
    magnitude = np.abs(add_tensor_ref(a, c, abs(alpha), 0.0)) + (abs(beta) * np.abs(c) if beta else 0)
    assert_within_bound(out, ref, magnitude, RTOL[dtype], 0, "add_tensor")
    scaled = scale_tensor_ref(c, alpha)
    assert_within_bound(y, scaled, np.abs(scaled), RTOL[dtype], 0, "scale_tensor")
