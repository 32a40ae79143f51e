"""Convolution on drawn problems: every direction (forward with and without bias, backward
data, filter and bias), every algorithm that claims the problem (and exactly the
algorithms the contract says should), and "auto", on every device, against the float64
reference. Drawn: batch, channels per group, groups, kernel, stride, padding and dilation
(ints, tuples or lists), input sizes down to the dilated kernel's extent, dtype, and on
the CPU the ISA and thread count; shapes Winograd and the 1x1 GEMM take are drawn often
enough to be met in every run."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_conv.py (the contract, written out there): which algorithms support what
from ops.test_conv import DIRECTIONS, expected_algorithms, expected_cuda_algorithms
from problems import drawn_cpu_variant, dtypes, examples, int_or_pair, normal, on_every_device, on_gpu, seeds
from reference import (assert_within_bound, conv2d_backward_bias_ref, conv2d_backward_data_ref,
                       conv2d_backward_filter_ref, conv2d_forward_ref, tolerance)
from targets import assert_on, place


class Problem:
    """A drawn convolution: shapes and geometry as the user passes them."""

    def __init__(self, x_shape, w_shape, stride, padding, dilation, groups):
        self.x_shape, self.w_shape = x_shape, w_shape
        self.geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)

    def __repr__(self):
        return f"Problem(x_shape={self.x_shape}, w_shape={self.w_shape}, {self.geometry})"

    def described(self, dtype):
        return ops.ConvProblem(self.x_shape, self.w_shape, dtype=dtype, **self.geometry)

    # test_conv's contract functions read these
    @property
    def stride(self):
        return self.geometry["stride"]

    @property
    def padding(self):
        return self.geometry["padding"]

    @property
    def dilation(self):
        return self.geometry["dilation"]


@st.composite
def conv_problems(draw, small):
    """Any geometry, or the shapes Winograd (3x3, stride 1, dilation 1, padding <= 2) and
    the 1x1 GEMM (1x1, stride 1, no padding) take, which uniform draws would seldom meet."""
    kind = draw(st.sampled_from(["any", "winograd_shaped", "1x1_unit_stride"]))
    if kind == "winograd_shaped":
        (r, s), stride, dilation = (3, 3), (1, (1, 1)), (1, (1, 1))
        padding = draw(int_or_pair(0, 2))
    elif kind == "1x1_unit_stride":
        (r, s), stride, padding = (1, 1), (1, (1, 1)), (0, (0, 0))
        dilation = draw(int_or_pair(1, 3))
    else:
        r, s = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        stride, padding, dilation = draw(int_or_pair(1, 3)), draw(int_or_pair(0, 3)), draw(int_or_pair(1, 3))
    groups = draw(st.integers(1, 3))
    cg, kg = draw(st.integers(1, 3 if small else 6)), draw(st.integers(1, 3 if small else 6))
    n = draw(st.integers(1, 2 if small else 3))
    sizes = []
    for kernel, pad, dil in ((r, padding[1][0], dilation[1][0]), (s, padding[1][1], dilation[1][1])):
        least = max(1, dil * (kernel - 1) + 1 - 2 * pad)  # an output of at least one position
        sizes.append(draw(st.integers(least, least + (5 if small else 10))))
    return Problem((n, cg * groups, *sizes), (kg * groups, cg, r, s), stride[0], padding[0], dilation[0],
                   groups)


def run(direction, algo, problem, x, w, dy, bias):
    g = problem.geometry
    if direction == "forward":
        return ops.conv2d_forward(x, w, bias, algo=algo, **g)
    if direction == "backward_data":
        return ops.conv2d_backward_data(dy, w, problem.x_shape, algo=algo, **g)
    return ops.conv2d_backward_filter(x, dy, problem.w_shape, algo=algo, **g)


def reference(direction, problem, x, w, dy, bias):
    """The float64 reference of `direction`, and the same on |inputs| (the bound's scale)."""
    g = problem.geometry
    if direction == "forward":
        b = np.zeros(1) if bias is None else bias.astype(np.float64)[None, :, None, None]
        return (conv2d_forward_ref(x, w, None, **g) + b,
                conv2d_forward_ref(np.abs(x), np.abs(w), None, **g) + np.abs(b))
    if direction == "backward_data":
        return (conv2d_backward_data_ref(dy, w, problem.x_shape, **g),
                conv2d_backward_data_ref(np.abs(dy), np.abs(w), problem.x_shape, **g))
    return (conv2d_backward_filter_ref(x, dy, problem.w_shape, **g),
            conv2d_backward_filter_ref(np.abs(x), np.abs(dy), problem.w_shape, **g))


def winograd_scale(ref_abs):
    """Winograd's rounding error is relative to the terms of the whole tile its output
    came from (reference.tolerance): an output whose own terms are small next to its
    tile's (e.g. a corner of backward data with C = K = 1: 1.3e-4 of its own found, past
    tolerance's 1e-4) is held to the largest scale in its plane, which covers its tile."""
    return np.maximum(ref_abs, ref_abs.max(axis=(2, 3), keepdims=True, initial=0))


@on_every_device
@settings(max_examples=examples(2))
@given(data=st.data(), dtype=dtypes, seed=seeds, with_bias=st.booleans())
def test_every_algorithm_of_every_direction_matches_the_reference(target, data, dtype, seed, with_bias):
    problem = data.draw(conv_problems(small=on_gpu(target)), label="problem")
    described = problem.described(dtype)
    rng = np.random.default_rng(seed)
    x, w, b, dy = (normal(rng, shape, dtype) for shape in (problem.x_shape, problem.w_shape,
                                                           problem.w_shape[:1], described.out_shape))
    bias = b if with_bias else None
    contract = expected_cuda_algorithms if on_gpu(target) else expected_algorithms
    on_device = place(target, x, w, dy, bias)
    with drawn_cpu_variant(data, target):
        for direction in DIRECTIONS:
            supported = ops.conv_algorithms(described, direction, target)
            assert set(supported) == contract(problem, direction), f"{direction} on {target}: {supported}"
            ref, ref_abs = reference(direction, problem, x, w, dy, bias)
            for algo in supported + ["auto"]:
                got = run(direction, algo, problem, *on_device)
                assert_on(target, got)
                assert got.dtype == dtype
                scale = ref_abs if algo not in ("winograd", "auto") else winograd_scale(ref_abs)
                assert_within_bound(got, ref, scale, *tolerance(dtype, algo),
                                    what=f"{direction} {algo} {np.dtype(dtype).name} on {target}")
        db = ops.conv2d_backward_bias(on_device[2])
    assert_on(target, db)
    assert_within_bound(db, conv2d_backward_bias_ref(dy), conv2d_backward_bias_ref(np.abs(dy)),
                        *tolerance(dtype), what="backward_bias")
