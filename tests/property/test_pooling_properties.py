"""Max and average pooling on drawn problems, forward and backward, on every device:
kernel, stride (or None: the kernel), padding up to half the kernel, dilation (max
pooling), ceil_mode and count_include_pad, odd sizes down to the (dilated) kernel's, both
dtypes; inputs of small integers give ties, where max pooling must pick the first maximum
of each window (row-major)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
from ops.test_pooling import RTOL  # tests/ops/test_pooling.py: the error bound and its reason
from problems import drawn_cpu_variant, dtypes, examples, int_or_pair, normal, on_every_device, on_gpu, seeds
from reference import assert_within_bound, pool2d_backward_ref, pool2d_ref
from targets import assert_on, place


@st.composite
def pool_problems(draw, small, dilated):
    """(x_shape, geometry): kernel, stride, padding (at most half the kernel), ceil_mode, and
    with `dilated` a dilation (which may be 1; the input at least as large as it, so that
    every window holds an input element)."""
    kernel, (kh, kw) = draw(int_or_pair(1, 4))
    stride = draw(st.one_of(st.none(), int_or_pair(1, 4).map(lambda v: v[0])))
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    padding = ph if ph == pw and draw(st.booleans()) else (ph, pw)
    dilation, (dh, dw) = draw(int_or_pair(1, 3)) if dilated else (1, (1, 1))
    n, c = draw(st.integers(1, 2 if small else 3)), draw(st.integers(1, 3 if small else 5))
    low_h, low_w = max(1, dh * (kh - 1) + 1 - 2 * ph, dh), max(1, dw * (kw - 1) + 1 - 2 * pw, dw)
    h = draw(st.integers(low_h, low_h + (5 if small else 12)))
    w = draw(st.integers(low_w, low_w + (5 if small else 12)))
    geometry = dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=draw(st.booleans()))
    if dilation != 1:
        geometry["dilation"] = dilation
    return (n, c, h, w), geometry


MODES = st.sampled_from([dict(mode="max"), dict(mode="avg", count_include_pad=True),
                         dict(mode="avg", count_include_pad=False)])


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, mode=MODES, ties=st.booleans())
def test_forward_and_backward_match_the_reference(target, data, dtype, seed, mode, ties):
    x_shape, geometry = data.draw(pool_problems(on_gpu(target), mode["mode"] == "max"), label="problem")
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, x_shape).astype(dtype) if ties else normal(rng, x_shape, dtype)
    kw = dict(geometry, **mode)
    y_ref, idx_ref = pool2d_ref(x, **kw)
    dy = normal(rng, y_ref.shape, dtype)
    rtol = RTOL[dtype]
    with drawn_cpu_variant(data, target):
        if mode["mode"] == "max":
            y, idx = ops.pool2d_forward(place(target, x), return_indices=True, **kw)
            assert_on(target, y, idx)
            np.testing.assert_array_equal(y, y_ref)  # max pooling selects: exact
            np.testing.assert_array_equal(idx, idx_ref)
            np.testing.assert_array_equal(ops.pool2d_forward(place(target, x), **kw), y_ref)
            dx = ops.pool2d_backward(place(target, dy), x_shape, indices=idx, **kw)
            dref = pool2d_backward_ref(dy, x_shape, indices=idx_ref, **kw)
            dscale = pool2d_backward_ref(np.abs(dy), x_shape, indices=idx_ref, **kw)
        else:
            y = ops.pool2d_forward(place(target, x), **kw)
            assert_on(target, y)
            assert_within_bound(y, y_ref, pool2d_ref(np.abs(x), **kw)[0], rtol, 0, "avg forward")
            dx = ops.pool2d_backward(place(target, dy), x_shape, **kw)
            dref = pool2d_backward_ref(dy, x_shape, **kw)
            dscale = pool2d_backward_ref(np.abs(dy), x_shape, **kw)
    assert_on(target, dx)
    assert y.dtype == dx.dtype == dtype
    assert_within_bound(dx, dref, dscale, rtol, 0, f"{mode} backward")
