"""Elementwise activations on drawn problems, forward (in place or not) and backward (from y
alone, or with x where y cannot tell the branch), on every device: every mode, drawn
negative_slope and alpha (negative ones included), any rank from 0-D to 4-D with empty
arrays, inputs with the kinks (0, 6) and large magnitudes mixed in, both dtypes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_activation.py: the error bound, and inputs with the kinks mixed in
from ops.test_activation import MODES, TOL, sample
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import activation_backward_ref, activation_ref, assert_within_bound
from targets import assert_on, place


def shapes(small):
    return st.lists(st.integers(0, 5 if small else 13), min_size=0, max_size=4).map(tuple)


@on_every_device
@settings(max_examples=examples(4))
@given(data=st.data(), dtype=dtypes, seed=seeds, mode=st.sampled_from(MODES), inplace=st.booleans(),
       negative_slope=st.floats(-1, 1), alpha=st.floats(-2, 2), with_x=st.booleans())
def test_forward_and_backward_match_the_reference(target, data, dtype, seed, mode, inplace, negative_slope, alpha,
                                                  with_x):
    shape = data.draw(shapes(on_gpu(target)), label="shape")
    rng = np.random.default_rng(seed)
    x, dy = sample(rng, shape, dtype), normal(rng, shape, dtype)
    params = dict(negative_slope=negative_slope, alpha=alpha)
    # y cannot tell the branch of a negative input when it comes out positive: x is needed then
    with_x = with_x or (mode == "leaky_relu" and negative_slope < 0) or (mode == "elu" and alpha < 0)
    x_dev = place(target, x)
    with drawn_cpu_variant(data, target):
        y = ops.activation_forward(x_dev, mode, inplace=inplace, **params)
        dx = ops.activation_backward(place(target, dy), y, mode, x=place(target, x) if with_x else None, **params)
    assert (y is x_dev) == inplace
    assert_on(target, y, dx)
    assert y.shape == dx.shape == shape and y.dtype == dx.dtype == dtype
    rtol, atol = TOL[dtype]
    ref = activation_ref(x, mode, **params)
    assert_within_bound(y, ref, np.abs(ref), rtol, atol, f"{mode} forward")
    dref = activation_backward_ref(dy, x, mode, **params)
    assert_within_bound(dx, dref, np.abs(dy) + np.abs(dref), rtol, atol, f"{mode} backward")
