"""Dropout on drawn problems, on every device: the mask is 0 or 1 and exactly the Philox
mask the reference defines for (shape, p, seed); y = x * (mask * (1 / (1 - p))), the
scale rounded once, so kept values are x / (1 - p) and dropped ones x * 0 (0, or NaN for
an infinite or NaN x, as in PyTorch), and likewise dx from dy; p = 0 keeps everything (y is x, inf and NaN
included) and p = 1 drops everything (exact zeros, no inf or NaN from 1 / (1 - p)).
Drawn: any rank and size (empty included, partial blocks of 64), p anywhere in [0, 1]
with the edges, any 64-bit seed, both dtypes, and on the CPU the ISA and thread count."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu
from reference import dropout_mask_ref
from targets import assert_on, host, place

PROBABILITIES = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 2.0 ** -32, 1 - 2.0 ** -32]), st.floats(0, 1))
SEEDS = st.one_of(st.sampled_from([0, 2 ** 64 - 1]), st.integers(0, 2 ** 64 - 1))


def shapes(small):
    return st.lists(st.integers(0, 6 if small else 24), min_size=0, max_size=3).map(tuple)


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, p=PROBABILITIES, seed=SEEDS, specials=st.booleans())
def test_mask_scaling_and_edges(target, data, dtype, p, seed, specials):
    shape = data.draw(shapes(on_gpu(target)), label="shape")
    rng = np.random.default_rng(seed % 2 ** 32)
    x, dy = normal(rng, shape, dtype), normal(rng, shape, dtype)
    if specials and x.size >= 3:
        x.reshape(-1)[:3] = np.inf, -np.inf, np.nan
    with drawn_cpu_variant(data, target):
        y, mask = ops.dropout_forward(place(target, x), p, seed=seed)
        dx = ops.dropout_backward(place(target, dy), mask, p)
    assert_on(target, y, mask, dx)
    assert mask.dtype == np.uint8 and mask.shape == y.shape == dx.shape == shape and y.dtype == dx.dtype == dtype
    mask = host(mask)
    assert np.isin(mask, (0, 1)).all()
    np.testing.assert_array_equal(mask, dropout_mask_ref(shape, p, seed))
    if p == 1:
        assert not mask.any() and not host(y).any() and not host(dx).any()  # exact zeros, even for inf and NaN
        return
    scale = dtype(1 / (1 - p))  # rounded once, as PyTorch's x * (1 / (1 - p))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(y, x * (mask * scale))
    np.testing.assert_array_equal(dx, dy * (mask * scale))
    if p == 0:
        assert mask.all()
        np.testing.assert_array_equal(y, x)
