"""Local response normalization on drawn problems, forward (y and scale) and backward, on
every device: window sizes wider or narrower than the channel count, even and odd,
alpha, beta and k drawn, odd spatial sizes and empty batches, both dtypes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_lrn.py: the error bound and the scale of dx's terms
from ops.test_lrn import RTOL, _backward_magnitude
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import assert_within_bound, lrn_backward_ref, lrn_ref
from targets import assert_on, place

PARAMS = st.fixed_dictionaries(dict(alpha=st.floats(1e-4, 2.0), beta=st.floats(0.1, 1.5), k=st.floats(0.5, 2.0)))


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, size=st.integers(1, 9), params=PARAMS)
def test_forward_and_backward_match_the_reference(target, data, dtype, seed, size, params):
    small = on_gpu(target)
    shape = data.draw(st.tuples(st.integers(0, 2 if small else 3), st.integers(1, 6 if small else 12),
                                st.integers(1, 4 if small else 7), st.integers(1, 4 if small else 7)), label="shape")
    rng = np.random.default_rng(seed)
    x, dy = normal(rng, shape, dtype, 3), normal(rng, shape, dtype)
    with drawn_cpu_variant(data, target):
        y, scale = ops.lrn_forward(place(target, x), size, **params)
        dx = ops.lrn_backward(*place(target, dy, x), y, scale, size, **params)
    assert_on(target, y, scale, dx)
    y_ref, scale_ref = lrn_ref(x, size, **params)
    rtol = RTOL[dtype]
    assert_within_bound(scale, scale_ref, scale_ref, rtol, 0, "scale")
    assert_within_bound(y, y_ref, np.abs(y_ref), rtol, 0, "y")
    assert_within_bound(dx, lrn_backward_ref(dy, x, size, **params), _backward_magnitude(dy, x, size, **params),
                        rtol, 0, "dx")
