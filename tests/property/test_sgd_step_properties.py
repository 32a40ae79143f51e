"""The fused SGD step on drawn problems, on every device: momentum (0, with no buffer, or
drawn, values below float32's range included), dampening (up to 1), Nesterov, weight
decay, maximize, first step or a later one, learning rate, any shape (0-D and empty
included), both dtypes; p and the buffer against the float64 reference (PyTorch's
formulas), and the gradient left as it was."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
from ops.test_sgd_step import RTOL  # tests/ops/test_sgd_step.py: the error bound and its reason
from problems import dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import assert_within_bound, sgd_step_ref
from targets import assert_on, place

FLAGS = st.fixed_dictionaries(dict(
    lr=st.one_of(st.just(0.0), st.floats(-1, 1)), momentum=st.one_of(st.just(0.0), st.floats(0, 1)),
    dampening=st.one_of(st.just(0.0), st.floats(0, 1)), weight_decay=st.one_of(st.just(0.0), st.floats(0, 1)),
    nesterov=st.booleans(), maximize=st.booleans(), first_step=st.booleans()))
# The SGD step has no ISA variants (tests/ops/test_sgd_step.py): the CPU runs as it is.


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, flags=FLAGS)
def test_sgd_step_matches_the_reference(target, data, dtype, seed, flags):
    shape = data.draw(st.lists(st.integers(0, 5 if on_gpu(target) else 40), max_size=3).map(tuple), label="shape")
    rng = np.random.default_rng(seed)
    p0, grad = normal(rng, shape, dtype), normal(rng, shape, dtype)
    buf0 = None
    if flags["momentum"]:
        # on the first step the buffer is not read: NaN in it would show
        buf0 = np.full(shape, np.nan, dtype) if flags["first_step"] else normal(rng, shape, dtype)
    p, grad_dev, buf = place(target, p0, grad, buf0)
    ops.sgd_step(p, grad_dev, buf, **flags)
    assert_on(target, p, grad_dev, *([] if buf is None else [buf]))
    ref_p, ref_buf = sgd_step_ref(p0, grad, buf0, **flags)
    abs_p, abs_buf = sgd_step_ref(p0, grad, buf0, **flags, absolute=True)
    assert p.dtype == dtype and p.shape == shape
    assert_within_bound(p, ref_p, abs_p, RTOL[dtype], 0, "p")
    if buf is not None:
        assert_within_bound(buf, ref_buf, abs_buf, RTOL[dtype], 0, "momentum_buffer")
    np.testing.assert_array_equal(grad_dev, grad)
