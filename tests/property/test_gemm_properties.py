"""GEMM on drawn problems: C = alpha * op(A) @ op(B) + beta * C for any M, N, K (zero
included), both transposes, alpha and beta (zero included), a new C or one given, and
operands that are contiguous, sub-blocks of a larger matrix or transposed views, in both
dtypes, on every device and (CPU) every ISA and thread count, against the float64
reference within the bound of reference.tolerance."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
from ops.test_gemm import check  # tests/ops/test_gemm.py: the reference and its error bound
from problems import coefficients, drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from targets import assert_on, place

LAYOUTS = ("contiguous", "sub_block", "transposed_view")
COEFFICIENTS = coefficients(3)


def sizes(small):
    """Mostly within one register tile, sometimes past the cache blocks (on the CPU)."""
    return st.integers(0, 20) if small else st.one_of(st.integers(0, 40), st.integers(41, 300))


def laid_out(device, a, layout, rng):
    """`a` on `device` as the drawn layout: the same values, in a view where asked."""
    if layout == "sub_block":  # rows longer than the matrix's, the matrix inside
        big = place(device, normal(rng, (a.shape[0] + 3, a.shape[1] + 5), a.dtype))
        big[2:2 + a.shape[0], 1:1 + a.shape[1]] = place(device, a)
        return big[2:2 + a.shape[0], 1:1 + a.shape[1]]
    if layout == "transposed_view":
        return place(device, np.ascontiguousarray(a.T)).T
    return place(device, a)


@on_every_device
@settings(max_examples=examples(3))
@given(data=st.data(), dtype=dtypes, seed=seeds, trans_a=st.booleans(), trans_b=st.booleans(),
       alpha=COEFFICIENTS, beta=COEFFICIENTS, into_c=st.booleans(), layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * 2))
def test_gemm_matches_the_reference(target, data, dtype, seed, trans_a, trans_b, alpha, beta, into_c, layouts):
    m, n, k = (data.draw(sizes(on_gpu(target)), label=axis) for axis in "mnk")
    rng = np.random.default_rng(seed)
    a = normal(rng, (k, m) if trans_a else (m, k), dtype)
    b = normal(rng, (n, k) if trans_b else (k, n), dtype)
    c0 = normal(rng, (m, n), dtype) if into_c else None
    beta = beta if into_c else 0.0  # with no C there is nothing to scale
    a_dev, b_dev = laid_out(target, a, layouts[0], rng), laid_out(target, b, layouts[1], rng)
    c = place(target, c0)
    with drawn_cpu_variant(data, target):
        out = ops.gemm(a_dev, b_dev, c, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta)
    assert_on(target, out)
    assert out is c if into_c else out.flags.c_contiguous
    check(out, a, b, c0, trans_a, trans_b, alpha, beta, dtype, what=f"{m}x{n}x{k} {layouts} on {target}")
