"""Batch normalization on drawn problems, on every device: training forward (with and
without weight/bias, with and without running statistics, any momentum and eps), its
backward, and the inference forward (an empty batch included); (N, C) and (N, C, H, W)
inputs of odd sizes in both dtypes, their mean drawn far from zero at times."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_batchnorm.py: the error bound
from ops.test_batchnorm import TOL, _tol
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import (assert_within_bound, batch_norm_backward_ref, batch_norm_inference_ref,
                       batch_norm_training_ref)
from targets import assert_on, place


def shapes(small, training):
    """(N, C) or (N, C, H, W); training needs more than one value per channel, inference
    takes an empty batch too."""
    c, hw = st.integers(1, 4 if small else 17), st.integers(1, 4 if small else 9)
    n = st.integers(1 if training else 0, 3 if small else 9)
    rows = st.tuples(st.integers(2, 3 if small else 9), c) if training else st.tuples(n, c)
    planes = st.tuples(n, c, hw, hw)
    return st.one_of(rows, planes.filter(lambda s: s[0] * s[2] * s[3] > 1) if training else planes)


def inputs(rng, shape, dtype, affine, offset):
    c = shape[1]
    x = normal(rng, shape, dtype, 2) + dtype(offset)
    w, b = (normal(rng, c, dtype), normal(rng, c, dtype)) if affine else (None, None)
    return x, w, b


# The rounding-error scales of the training outputs. The mean is rounded to x's dtype
# before it is subtracted, so xhat = (x - mean) * invstd is within a few ulp of
# X = (|x| + |mean|) * invstd, not of |xhat|: where a channel's values spread little next
# to their mean (a batch of two close values) X is much larger than |xhat|, in any batch
# norm computed in x's dtype (PyTorch's too). tests/ops/test_batchnorm.py's inputs keep
# X near |xhat|; drawn ones need X in the bounds: y, dx (its _dx_magnitude with X for
# |xhat|) and dweight = sum(dy * xhat).

def xhat_magnitude(x, mean, invstd):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (np.abs(np.asarray(x, np.float64)) + np.abs(mean).reshape(shape)) * invstd.reshape(shape)


def channel(v, x):
    return np.asarray(v, np.float64).reshape((1, -1) + (1,) * (x.ndim - 2))


def magnitudes(dy, x, w, b, mean, invstd):
    """(y, dx, dweight): the scale of each one's rounding error."""
    c, axes = x.shape[1], (0,) if x.ndim == 2 else (0, 2, 3)
    w = np.ones(c) if w is None else np.abs(np.asarray(w, np.float64))
    b = np.zeros(c) if b is None else np.abs(np.asarray(b, np.float64))
    big_xhat, dy = xhat_magnitude(x, mean, invstd), np.abs(np.asarray(dy, np.float64))
    y = big_xhat * channel(w, x) + channel(b, x)
    dx = channel(w * invstd, x) * (dy + dy.mean(axis=axes, keepdims=True)
                                   + big_xhat * (dy * big_xhat).mean(axis=axes, keepdims=True))
    return y, dx, (dy * big_xhat).sum(axis=axes)


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, affine=st.booleans(), running=st.booleans(),
       offset=st.sampled_from([0.0, 5.0]), momentum=st.floats(0, 1), eps=st.sampled_from([1e-5, 1e-3, 0.1]))
def test_training_forward_and_backward_match_the_reference(target, data, dtype, seed, affine, running, offset,
                                                           momentum, eps):
    shape = data.draw(shapes(on_gpu(target), training=True), label="shape")
    rng = np.random.default_rng(seed)
    x, w, b = inputs(rng, shape, dtype, affine, offset)
    c = shape[1]
    rm0, rv0 = normal(rng, c, dtype), rng.uniform(0.5, 2, c).astype(dtype)
    rm, rv = place(target, rm0, rv0) if running else (None, None)
    dy = normal(rng, shape, dtype)
    with drawn_cpu_variant(data, target):
        y, mean, invstd = ops.batch_norm_forward_training(*place(target, x, w, b), rm, rv, momentum=momentum,
                                                          eps=eps)
        dx, dw, db = ops.batch_norm_backward(*place(target, dy, x, w), mean, invstd)
    assert_on(target, y, mean, invstd, dx, dw, db)
    y_ref, mean_ref, invstd_ref, var_unbiased = batch_norm_training_ref(x, w, b, eps=eps)
    y_scale, dx_scale, dw_scale = magnitudes(dy, x, w, b, mean_ref, invstd_ref)
    assert_within_bound(y, y_ref, y_scale, TOL[dtype], 0, "y")
    np.testing.assert_allclose(mean, mean_ref, **_tol(dtype, mean_ref))
    np.testing.assert_allclose(invstd, invstd_ref, rtol=TOL[dtype])
    if running:
        want_rm, want_rv = (1 - momentum) * rm0 + momentum * mean_ref, (1 - momentum) * rv0 + momentum * var_unbiased
        np.testing.assert_allclose(rm, want_rm, **_tol(dtype, want_rm))
        np.testing.assert_allclose(rv, want_rv, **_tol(dtype, want_rv))
    dx_ref, dw_ref, db_ref = batch_norm_backward_ref(dy, x, w, eps=eps)
    assert_within_bound(dx, dx_ref, dx_scale, TOL[dtype], 0, "dx")
    assert_within_bound(dw, dw_ref, dw_scale, TOL[dtype], 0, "dweight")
    m = x.size // c
    np.testing.assert_allclose(db, db_ref, rtol=TOL[dtype], atol=TOL[dtype] * m)


@on_every_device
@settings(max_examples=examples(2))
@given(data=st.data(), dtype=dtypes, seed=seeds, affine=st.booleans(), offset=st.sampled_from([0.0, 5.0]),
       eps=st.sampled_from([0.0, 1e-5, 0.1]))
def test_inference_forward_matches_the_reference(target, data, dtype, seed, affine, offset, eps):
    shape = data.draw(shapes(on_gpu(target), training=False), label="shape")
    rng = np.random.default_rng(seed)
    x, w, b = inputs(rng, shape, dtype, affine, offset)
    c = shape[1]
    rm, rv = normal(rng, c, dtype) + dtype(offset), rng.uniform(0.5, 2, c).astype(dtype)
    with drawn_cpu_variant(data, target):
        y = ops.batch_norm_forward_inference(*place(target, x, w, b, rm, rv), eps=eps)
    assert_on(target, y)
    ref = batch_norm_inference_ref(x, w, b, rm, rv, eps=eps)
    np.testing.assert_allclose(y, ref, **_tol(dtype, ref if ref.size else np.zeros(1)))
