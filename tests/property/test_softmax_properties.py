"""Softmax, log-softmax and cross-entropy on drawn problems, forward and backward, on every
device: (N, C) rows and (N, C, H, W) maps with one class or many, empty batches, logits
of any scale up to 1e4 (no overflow), both dtypes; cross-entropy with ignored targets,
label smoothing and every reduction."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_softmax.py: the error bound of softmax (with the scale each output's
# terms have, built below as it is there)
from ops.test_softmax import TOL, _class_sum
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import (assert_within_bound, cross_entropy_backward_ref, cross_entropy_ref, softmax_backward_ref,
                       softmax_ref)
from targets import assert_on, place


def shapes(small, least_n=0):
    n, c = st.integers(least_n, 3 if small else 9), st.integers(1, 6 if small else 40)
    hw = st.integers(0, 3 if small else 6)
    return st.one_of(st.tuples(n, c), st.tuples(n, c, hw, hw))


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, log=st.booleans(), scale=st.sampled_from([0.0, 1.0, 3.0, 1e4]))
def test_softmax_forward_and_backward_match_the_reference(target, data, dtype, seed, log, scale):
    shape = data.draw(shapes(on_gpu(target)), label="shape")
    rng = np.random.default_rng(seed)
    x, dy = normal(rng, shape, dtype, scale), normal(rng, shape, dtype)
    with drawn_cpu_variant(data, target):
        y = ops.softmax_forward(place(target, x), log=log)
        dx = ops.softmax_backward(place(target, dy), y, log=log)
    assert_on(target, y, dx)
    rtol, atol = TOL[dtype]
    ref, p = softmax_ref(x, log=log), softmax_ref(x)
    # x - max rounds with an error of eps * (|x| + max|x|), which exp turns into relative error
    k = 1 + np.abs(x) + (np.max(np.abs(x), axis=1, keepdims=True) if x.size else 0)
    assert_within_bound(y, ref, k + np.abs(ref) if log else p * k, rtol, atol, "forward")
    g = np.abs(dy)
    dscale = g + p * k * _class_sum(g) if log else p * k * (g + 2 * _class_sum(g * p * k))
    assert_within_bound(dx, softmax_backward_ref(dy, x, log=log), dscale, rtol, atol, "backward")


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, reduction=st.sampled_from(["mean", "sum", "none"]),
       label_smoothing=st.one_of(st.just(0.0), st.just(1.0), st.floats(0, 1)),
       ignore_index=st.sampled_from([-100, 0, 2]), ignored_fraction=st.sampled_from([0.0, 0.3, 1.0]))
def test_cross_entropy_forward_and_backward_match_the_reference(target, data, dtype, seed, reduction, label_smoothing,
                                                                ignore_index, ignored_fraction):
    shape = data.draw(shapes(on_gpu(target), least_n=1), label="shape")
    rng = np.random.default_rng(seed)
    logits = normal(rng, shape, dtype, 2)
    t_shape = shape[:1] + shape[2:]
    t = rng.integers(0, shape[1], t_shape)
    t[rng.random(t_shape) < ignored_fraction] = ignore_index
    settings_ = dict(ignore_index=ignore_index, label_smoothing=label_smoothing, reduction=reduction)
    grad = normal(rng, t_shape, dtype) if reduction == "none" else 0.7
    with drawn_cpu_variant(data, target):
        loss, log_probs = ops.cross_entropy_forward(place(target, logits), place(target, t), **settings_)
        d = ops.cross_entropy_backward(place(target, grad) if reduction == "none" else grad, log_probs,
                                       place(target, t), **settings_)
    assert_on(target, loss, log_probs, d)
    # tests/ops/test_softmax.py's bound: logits of size ~2, at most 40 classes, a few ulp
    # of the log-sum-exp per term
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    ref = cross_entropy_ref(logits, t, **settings_)
    assert loss.dtype == dtype and loss.shape == np.shape(ref)
    np.testing.assert_allclose(loss, ref, rtol=rtol, atol=rtol)  # NaN where it is: a mean over no targets
    np.testing.assert_allclose(log_probs, softmax_ref(logits, log=True), rtol=rtol, atol=rtol)
    dref = cross_entropy_backward_ref(grad, logits, t, **settings_)
    np.testing.assert_allclose(d, dref, rtol=rtol, atol=rtol * np.max(np.abs(grad), initial=0))
