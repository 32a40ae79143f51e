"""2-D max and average pooling: forward (values and first-maximum indices) and
backward against the float64 reference, on shapes that hit every edge of the
window arithmetic (odd sizes, N=1, kernel = input, stride > kernel, padding,
ceil-mode edge windows, windows overhanging the padded input, dilated max
pooling, vector tails), float32 and float64, under every ISA and on the CUDA
emulator; finite differences; ties and NaN; max-pooling indices from elsewhere
than the forward; bad input."""
import dataclasses

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import (assert_within_bound, bad_call_test, binding_tests, numerical_grad,
                       pool2d_backward_ref, pool2d_ref, pool_out_size)
from targets import assert_on, place, host

DTYPES = (np.float32, np.float64)
# Max pooling selects values, so its forward is exact; its backward and the
# average are sums of at most k*k (or, backward, of every window touching an
# element) terms: the error is a few ulp of the sum of |terms|, so the bound
# is rtol times the reference computed on |inputs| (rtol ~ 8 ulp).
RTOL = {np.float32: 1e-6, np.float64: 1e-14}


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    x_shape: tuple
    kernel_size: object
    stride: object = None
    padding: object = 0
    ceil_mode: bool = False
    dilation: object = 1  # (max pooling only)

    @property
    def geometry(self):
        geometry = dict(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding,
                        ceil_mode=self.ceil_mode)
        if self.dilation != 1:
            geometry["dilation"] = self.dilation
        return geometry

    def __str__(self):
        return self.id


CASES = [
    Case("lenet_2x2s2", (2, 3, 24, 24), 2, 2),
    Case("alexnet_3x3s2_55", (1, 2, 55, 55), 3, 2),
    Case("alexnet_3x3s2_ceil_13", (2, 3, 13, 13), 3, 2, ceil_mode=True),
    Case("n1_c1_odd_7x9_3x3s2_ceil", (1, 1, 7, 9), 3, 2, ceil_mode=True),
    Case("kernel_equals_input", (2, 3, 5, 7), (5, 7)),
    Case("stride_greater_than_kernel", (1, 2, 11, 13), 2, 3),
    Case("pad1_3x3s1", (2, 2, 6, 7), 3, 1, 1),
    Case("pad1_3x3s2_ceil", (1, 3, 10, 10), 3, 2, 1, True),
    Case("ceil_drops_window_in_padding", (1, 2, 5, 5), 2, 2, 1, True),
    Case("rect_2x3_s1x3_pad1", (2, 2, 9, 11), (2, 3), (1, 3), 1),
    Case("stride3_gathered_columns", (1, 2, 9, 70), 3, 3, 1),
    Case("wide_rows_vector_tails", (1, 1, 4, 71), 3, 2, 1),
    Case("single_pixel", (1, 1, 1, 1), 1),
    Case("threaded_planes", (8, 32, 20, 20), 2, 2),
    Case("ceil_window_overhangs_padded_input", (1, 2, 1, 5), 4, 2, 1, True),
    # dilated max pooling: taps `dilation` apart
    Case("dilated_2_3x3s1", (2, 3, 9, 11), 3, 1, 0, dilation=2),
    Case("dilated_2x3_pad1_s2", (1, 2, 10, 13), (3, 2), 2, 1, dilation=(2, 3)),
    Case("dilated_ceil_pad1", (2, 2, 8, 9), 3, 2, 1, True, dilation=2),
    Case("dilated_windows_interleave", (1, 2, 6, 40), 2, 2, 1, dilation=2),
    Case("dilated_stride3_vector_tails", (1, 1, 7, 71), 3, 3, 1, dilation=(1, 2)),
    Case("dilation_larger_than_input", (1, 2, 3, 3), 2, 1, 1, dilation=3),
    Case("dilated_ceil_overhangs", (1, 2, 10, 7), (4, 3), (3, 1), (1, 0), True, dilation=(4, 1)),
]
DILATED = [case for case in CASES if case.dilation != 1]
MODES = {"max": dict(mode="max"), "avg_include_pad": dict(mode="avg", count_include_pad=True),
         "avg_exclude_pad": dict(mode="avg", count_include_pad=False)}


def ids(d):
    return d.__name__


def case_modes(cases):
    """(case, mode) pairs: every mode of an undilated case, max pooling of a dilated one."""
    return [pytest.param(case, mode, id=f"{case}-{name}") for case in cases for name, mode in MODES.items()
            if case.dilation == 1 or mode["mode"] == "max"]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("case,mode", case_modes(CASES))
def test_forward_and_backward_match_reference(target, rng, case, dtype, mode):
    x = rng.standard_normal(case.x_shape).astype(dtype)
    kw = dict(case.geometry, **mode)
    ref_kw = dict(kw, stride=case.stride)
    y_ref, idx_ref = pool2d_ref(x, **ref_kw)
    y = ops.pool2d_forward(place(target, x), **kw)
    assert y.dtype == dtype and y.shape == y_ref.shape
    rtol = RTOL[dtype]
    dy = rng.standard_normal(y.shape).astype(dtype)
    if mode["mode"] == "max":
        np.testing.assert_array_equal(y, y_ref)
        y2, idx = ops.pool2d_forward(place(target, x), return_indices=True, **kw)
        np.testing.assert_array_equal(y2, y_ref)
        assert idx.dtype == np.int64
        np.testing.assert_array_equal(idx, idx_ref)
        assert_on(target, y2, idx)
        dx = ops.pool2d_backward(place(target, dy), x.shape, indices=idx, **kw)
        dref = pool2d_backward_ref(dy, x.shape, indices=idx_ref, **ref_kw)
        dscale = pool2d_backward_ref(np.abs(dy), x.shape, indices=idx_ref, **ref_kw)
    else:
        assert_within_bound(y, y_ref, pool2d_ref(np.abs(x), **ref_kw)[0], rtol, 0, "avg forward")
        dx = ops.pool2d_backward(place(target, dy), x.shape, **kw)
        dref = pool2d_backward_ref(dy, x.shape, **ref_kw)
        dscale = pool2d_backward_ref(np.abs(dy), x.shape, **ref_kw)
    assert dx.dtype == dtype
    assert_on(target, y, dx)
    assert_within_bound(dx, dref, dscale, rtol, 0, "backward")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_output_shape_follows_pytorch(case):
    p = ops.PoolProblem(case.x_shape, case.kernel_size, stride=case.stride, padding=case.padding,
                        ceil_mode=case.ceil_mode, dilation=case.dilation)
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    (kh, kw), (ph, pw), (dh, dw) = pair(case.kernel_size), pair(case.padding), pair(case.dilation)
    sh, sw = pair(case.stride if case.stride is not None else case.kernel_size)
    n, c, h, w = case.x_shape
    assert p.out_shape == (n, c, pool_out_size(h, kh, sh, ph, case.ceil_mode, dh),
                           pool_out_size(w, kw, sw, pw, case.ceil_mode, dw))


def test_known_output_sizes():
    # Caffe's AlexNet pools (ceil) and PyTorch's rule that drops a window starting in the padding.
    assert ops.PoolProblem((1, 1, 55, 55), 3, stride=2, ceil_mode=True).out_shape[2:] == (27, 27)
    assert ops.PoolProblem((1, 1, 13, 13), 3, stride=2, ceil_mode=True).out_shape[2:] == (6, 6)
    assert ops.PoolProblem((1, 1, 14, 14), 3, stride=2, ceil_mode=False).out_shape[2:] == (6, 6)
    assert ops.PoolProblem((1, 1, 14, 14), 3, stride=2, ceil_mode=True).out_shape[2:] == (7, 7)
    assert ops.PoolProblem((1, 1, 5, 5), 2, stride=2, padding=1, ceil_mode=True).out_shape[2:] == (3, 3)
    # dilated: floor((H + 2p - d (k - 1) - 1) / s) + 1, as torch.nn.functional.max_pool2d's
    assert ops.PoolProblem((1, 1, 9, 11), 3, stride=1, dilation=2).out_shape[2:] == (5, 7)
    assert ops.PoolProblem((1, 1, 10, 7), (4, 3), stride=(3, 1), padding=(1, 0), dilation=(4, 1),
                           ceil_mode=True).out_shape[2:] == (1, 5)
    # with ceil_mode a window may overhang the padded input's end, as in PyTorch (1x1 input, 4x4 window)
    assert ops.PoolProblem((1, 1, 1, 1), 4, stride=2, padding=1, ceil_mode=True).out_shape[2:] == (1, 1)


@pytest.mark.parametrize("case", DILATED, ids=str)
def test_dilated_max_pooling_matches_torch(case):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).integers(0, 4, case.x_shape).astype(np.float64)  # ties
    y, idx = ops.pool2d_forward(x, return_indices=True, **case.geometry)
    geometry = dict(case.geometry)
    geometry["stride"] = geometry["stride"] or geometry["kernel_size"]
    ty, tidx = torch.nn.functional.max_pool2d(torch.from_numpy(x), return_indices=True, **geometry)
    np.testing.assert_array_equal(y, ty.numpy())
    np.testing.assert_array_equal(idx, tidx.numpy())


@pytest.mark.parametrize("case,mode", case_modes([Case("3x3s2_pad1_ceil", (1, 2, 6, 7), 3, 2, 1, True),
                                                   Case("2x3_s1x2", (2, 1, 4, 6), (2, 3), (1, 2)),
                                                   Case("dilated_2x3_pad1_ceil", (1, 2, 7, 8), (2, 3), 2, 1, True,
                                                        dilation=(3, 2))]))
def test_gradient_matches_finite_differences(rng, case, mode):
    x = rng.standard_normal(case.x_shape)
    kw = dict(case.geometry, **mode)
    y = ops.pool2d_forward(x, **kw)
    dy = rng.standard_normal(y.shape)
    indices = ops.pool2d_forward(x, return_indices=True, **kw)[1] if mode["mode"] == "max" else None
    dx = ops.pool2d_backward(dy, x.shape, indices=indices, **kw)
    num = numerical_grad(lambda v: np.sum(ops.pool2d_forward(v, **kw) * dy), x)
    np.testing.assert_allclose(dx, num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_max_routes_to_the_first_maximum_among_ties(target, rng, dtype):
    x = place(target, rng.integers(0, 3, (2, 3, 9, 40)).astype(dtype))  # many ties
    for geometry in (dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
                     dict(kernel_size=2, stride=3)):
        y, idx = ops.pool2d_forward(x, return_indices=True, **geometry)
        np.testing.assert_array_equal(idx, pool2d_ref(host(x), **geometry)[1])


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_max_nan_wins_and_all_minus_inf_windows(target, dtype):
    x = place(target, np.full((1, 1, 4, 37), -np.inf, dtype))
    y, idx = ops.pool2d_forward(x, 2, return_indices=True)
    assert np.all(y == -np.inf)
    np.testing.assert_array_equal(idx, pool2d_ref(host(x), 2)[1])  # each window's first element
    x = place(target, np.zeros((1, 1, 4, 37), dtype))
    x[0, 0, 1, 5] = np.nan
    x[0, 0, 0, 5] = 7
    y, idx = ops.pool2d_forward(x, 2, return_indices=True)
    assert np.isnan(y[0, 0, 0, 2]) and idx[0, 0, 0, 2] == 1 * 37 + 5
    assert np.isnan(ops.pool2d_forward(x, 2, mode="avg")[0, 0, 0, 2])



@pytest.mark.parametrize("count_include_pad", [True, False], ids=["include_pad", "exclude_pad"])
def test_heavily_padded_huge_window_costs_what_the_input_does(target, count_include_pad):
    # A 2**40-wide window padded by 2**39 on each side over a single pixel: the
    # loops touch only what lies in the input, and the window's area (2**80
    # with the padding) is formed without wrapping around.
    x = place(target, np.full((1, 1, 1, 1), 3.0))
    geometry = dict(padding=2 ** 39, mode="avg", count_include_pad=count_include_pad)
    y = ops.pool2d_forward(x, 2 ** 40, **geometry)
    area = 2.0 ** 80 if count_include_pad else 1.0
    np.testing.assert_array_equal(y, x / area)
    np.testing.assert_array_equal(ops.pool2d_backward(np.ones_like(y), x.shape, 2 ** 40, **geometry), 1 / area)
    np.testing.assert_array_equal(ops.pool2d_forward(x, 2 ** 40, padding=2 ** 39), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_max_backward_routes_indices_from_elsewhere(target, rng, dtype):
    # Indices the forward cannot have made, each somewhere in its plane but
    # mostly outside its own window: the backward still routes dy there
    # (several outputs to one element add up), as the reference does.
    x_shape, geometry = (2, 3, 7, 8), dict(kernel_size=3, stride=2, padding=1)
    dy = rng.standard_normal((2, 3, 4, 4)).astype(dtype)
    indices = rng.integers(0, 7 * 8, dy.shape)
    indices[0, 0, 0, :] = 5  # four outputs to one element
    dx = ops.pool2d_backward(place(target, dy), x_shape, indices=place(target, indices), **geometry)
    assert_on(target, dx)
    ref_kw = dict(geometry, indices=indices)
    assert_within_bound(dx, pool2d_backward_ref(dy, x_shape, **ref_kw),
                        pool2d_backward_ref(np.abs(dy), x_shape, **ref_kw), RTOL[dtype], 0, "dx")


@pytest.mark.parametrize("bad", [-1, 36, 2 ** 40], ids=["negative", "one_past_the_plane", "huge"])
def test_max_backward_names_the_first_index_outside_the_plane(target, bad):
    x = np.zeros((1, 2, 6, 6), np.float32)
    y, idx = ops.pool2d_forward(x, 2, return_indices=True)
    idx[0, 1, 2, 0] = bad  # flat position 15, and a later one at 17
    idx[0, 1, 2, 2] = 999
    with pytest.raises(ValueError, match=rf"pool2d_backward: indices: value {bad} at flat position 15 is outside "
                                         rf"the input plane \[0, 36\)"):
        ops.pool2d_backward(place(target, y), x.shape, 2, indices=place(target, idx))


def test_results_do_not_depend_on_thread_count(target, rng):
    x = place(target, rng.standard_normal((8, 32, 20, 20)).astype(np.float32))
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            y, idx = ops.pool2d_forward(x, 3, stride=2, return_indices=True)
            out.append((y, idx, ops.pool2d_backward(y, x.shape, 3, stride=2, indices=idx)))
    finally:
        minifw.set_num_threads(before)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_problem_is_a_value_object():
    a = ops.PoolProblem((2, 3, 8, 8), 2)
    b = ops.PoolProblem((2, 3, 8, 8), (2, 2), stride=2)
    assert a == b and hash(a) == hash(b) and a != ops.PoolProblem((2, 3, 8, 8), 2, mode="avg")
    assert "PoolProblem(x_shape=(2, 3, 8, 8)" in repr(a)


# ---- bad input ---------------------------------------------------------------

X = np.zeros((1, 2, 6, 6), np.float32)
Y, IDX = ops.pool2d_forward(X, 2, return_indices=True)
BAD_CALLS = {
    "x_3d": (lambda: ops.pool2d_forward(np.zeros((2, 6, 6)), 2), ValueError, "pool2d_forward: x must be 4-D"),
    "x_int": (lambda: ops.pool2d_forward(np.zeros((1, 1, 4, 4), np.int32), 2), TypeError, "pool2d_forward: x"),
    "x_list": (lambda: ops.pool2d_forward([[[[1.0]]]], 1), TypeError, "pool2d_forward: x"),
    "kernel_zero": (lambda: ops.pool2d_forward(X, 0), ValueError, "kernel_size"),
    "kernel_float": (lambda: ops.pool2d_forward(X, 2.0), TypeError, "kernel_size"),
    "kernel_triple": (lambda: ops.pool2d_forward(X, (2, 2, 2)), ValueError, "kernel_size"),
    "stride_zero": (lambda: ops.pool2d_forward(X, 2, stride=0), ValueError, "stride"),
    "stride_past_2_58": (lambda: ops.pool2d_forward(X, 2, stride=2 ** 64), ValueError,
                         r"pool2d_forward: stride must be in \[1, 2\*\*58\]"),
    "padding_negative": (lambda: ops.pool2d_forward(X, 2, padding=-1), ValueError, "padding"),
    "padding_over_half_kernel": (lambda: ops.pool2d_forward(X, 3, padding=2), ValueError, "padding"),
    "kernel_larger_than_input": (lambda: ops.pool2d_forward(X, 7), ValueError, "output size"),
    "dilated_kernel_larger_than_input": (lambda: ops.pool2d_forward(X, 3, dilation=3), ValueError,
                                         r"output size would be < 1: .*dilated to 7x7 by dilation=\(3, 3\)"),
    "dilation_zero": (lambda: ops.pool2d_forward(X, 2, dilation=0), ValueError, "dilation"),
    "dilation_past_2_30": (lambda: ops.pool2d_forward(X, 2, dilation=2 ** 30 + 1), ValueError,
                           r"pool2d_forward: dilation must be in \[1, 1073741824\], got 1073741825"),
    "dilated_average": (lambda: ops.pool2d_forward(X, 2, mode="avg", dilation=2), ValueError,
                        "pool2d_forward: dilation must be 1 for mode='avg'"),
    "window_with_no_input": (lambda: ops.pool2d_forward(X[:, :, :3, :3], 2, stride=1, padding=1, dilation=4),
                             ValueError, "output 0 along the height holds no input element"),
    "bad_mode": (lambda: ops.pool2d_forward(X, 2, mode="min"), ValueError, "mode"),
    "ceil_mode_not_bool": (lambda: ops.pool2d_forward(X, 2, ceil_mode=1), TypeError, "ceil_mode"),
    "indices_for_avg": (lambda: ops.pool2d_forward(X, 2, mode="avg", return_indices=True), ValueError,
                        "return_indices"),
    "backward_max_without_indices": (lambda: ops.pool2d_backward(Y, X.shape, 2), ValueError, "indices"),
    "backward_indices_int32": (lambda: ops.pool2d_backward(Y, X.shape, 2, indices=IDX.astype(np.int32)),
                               TypeError, "indices"),
    "backward_indices_shape": (lambda: ops.pool2d_backward(Y, X.shape, 2, indices=IDX[:, :1]), ValueError,
                               "indices"),
    "backward_index_out_of_plane": (lambda: ops.pool2d_backward(Y, X.shape, 2, indices=IDX + 36), ValueError,
                                    "pool2d_backward: indices: value 36"),
    "backward_index_negative": (lambda: ops.pool2d_backward(Y, X.shape, 2, indices=IDX - 100), ValueError,
                                "indices"),
    "backward_dy_shape": (lambda: ops.pool2d_backward(Y[:, :, :2], X.shape, 2, indices=IDX), ValueError,
                          "pool2d_backward: dy"),
    "backward_bad_x_shape": (lambda: ops.pool2d_backward(Y, (1, 2, 6), 2, indices=IDX), ValueError, "x_shape"),
    "backward_indices_for_avg": (lambda: ops.pool2d_backward(Y, X.shape, 2, mode="avg", indices=IDX), ValueError,
                                 "indices"),
    "problem_bad_dtype": (lambda: ops.PoolProblem((1, 1, 4, 4), 2, dtype="int8"), TypeError, "dtype"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
geometry = (2, 4, 7, 7, 3, 3, 2, 2, 0, 0, 1, 1, False)  # valid: x (2, 4, 7, 7), y (2, 4, 3, 3)
x, y, dy, dx = np.ones(392, f32), np.empty(72, f32), np.ones(72, f32), np.empty(392, f32)
indices = np.zeros(72, np.int64)
# N * C * H * W == 392, N * C * Ho * Wo == 72 (mod 2**64)
wrapped = (2 ** 62 + 2, 4, 7, 7, 3, 3, 2, 2, 0, 0, 1, 1, False)
plane_wraps = (1, 1, 2 ** 62, 4, 2, 2, 2 ** 62, 2, 0, 0, 1, 1, False)  # H * W == 0 (mod 2**64), y has 2 elements
huge_window = (1, 1, 4, 4, 2 ** 62, 2 ** 62, 1, 1, 2 ** 61, 2 ** 61, 1, 1, False)
negative_pair = (-2, -4, 7, 7, 3, 3, 2, 2, 0, 0, 1, 1, False)
dilated = (2, 4, 7, 7, 3, 3, 2, 2, 0, 0, 2, 2, False)  # valid for max pooling: y (2, 4, 2, 2)
dilated_wide = (1, 1, 4, 2 ** 20, 2, 2 ** 50, 1, 1, 0, 0, 1, 2 ** 30, True)  # d (k - 1) wraps in 64 bits
no_input_tap = (1, 1, 3, 3, 2, 2, 1, 1, 1, 1, 4, 4, False)  # output (0, 0) reads rows -1 and 3 only
dilation_zero = (2, 4, 7, 7, 3, 3, 2, 2, 0, 0, 0, 1, False)
shared = np.empty(144, f32)  # y in its first 72 floats, int64 indices over all of it
shared_xy = np.empty(392, f32)
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid_geometry": ("_native.pool_forward_f32('max', geometry, x, y, indices)", None, ""),
    "batch_wraps": ("_native.pool_forward_f32('max', wrapped, x, y, None)", ValueError,
                    "pooling: x: sizes too large"),
    "plane_wraps_to_zero": ("_native.pool_forward_f32('max', plane_wraps, x[:0], y[:2], None)", ValueError,
                            "pooling: x: sizes too large"),
    "huge_window": ("_native.pool_forward_f32('avg_include_pad', huge_window, x[:16], y[:25], None)", ValueError,
                    "pooling: kernel, stride, padding, dilation: sizes too large"),
    "negative_pair": ("_native.pool_forward_f32('max', negative_pair, x, y, None)", ValueError,
                      "sizes must be >= 0"),
    "backward_batch_wraps": ("_native.pool_backward_f32('avg_exclude_pad', wrapped, dy, None, dx)", ValueError,
                             "sizes too large"),
    "y_too_small": ("_native.pool_forward_f32('max', geometry, x, y[:71], None)", ValueError,
                    "y: expected 72 elements, got 71"),
    "x_float64": ("_native.pool_forward_f32('max', geometry, np.ones(392), y, None)", TypeError,
                  "x: expected dtype float32"),
    "indices_int32": ("_native.pool_forward_f32('max', geometry, x, y, np.zeros(72, np.int32))", TypeError,
                      "indices: expected dtype int64"),
    "indices_overlap_y": ("_native.pool_forward_f32('max', geometry, x, shared[:72], shared.view(np.int64))",
                          ValueError, "y: must not share memory with indices"),
    "y_overlaps_x": ("_native.pool_forward_f32('max', geometry, shared_xy, shared_xy[:72], None)", ValueError,
                     "y: must not share memory with x"),
    "avg_with_indices": ("_native.pool_forward_f32('avg_include_pad', geometry, x, y, indices)", ValueError,
                         "indices: only max pooling"),
    "unknown_mode": ("_native.pool_forward_f32('min', geometry, x, y, None)", ValueError, "unknown pooling mode"),
    "valid_dilated": ("_native.pool_forward_f32('max', dilated, x, y[:32], indices[:32])", None, ""),
    "dilated_average": ("_native.pool_forward_f32('avg_include_pad', dilated, x, y[:32], None)", ValueError,
                        "dilation: average pooling takes none"),
    "dilated_average_backward": ("_native.pool_backward_f32('avg_exclude_pad', dilated, dy[:32], None, dx)",
                                 ValueError, "dilation: average pooling takes none"),
    "dilation_zero": ("_native.pool_forward_f32('max', dilation_zero, x, y, None)", ValueError,
                      "dilation must be in"),
    "dilated_extent_wraps": ("_native.pool_forward_f32('max', dilated_wide, x, y, None)", ValueError,
                             "no output"),
    "window_with_no_input_tap": ("_native.pool_forward_f32('max', no_input_tap, x[:9], y[:4], None)", ValueError,
                                 "holds no input element"),
    "backward_indices_missing": ("_native.pool_backward_f32('max', geometry, dy, None, dx)", ValueError,
                                 "indices: required"),
    "backward_index_outside_plane": ("_native.pool_backward_f32('max', geometry, dy, np.full(72, 49), dx)",
                                     ValueError, "indices: value 49 at flat position 0 is outside"),
    "backward_dx_too_small": ("_native.pool_backward_f32('max', geometry, dy, indices, dx[:391])", ValueError,
                              "dx: expected 392 elements"),
    "backward_dx_overlaps_dy": ("_native.pool_backward_f32('avg_include_pad', geometry, shared_xy[:72], None, "
                                "shared_xy)", ValueError, "dx: must not share memory with dy"),
    # the entry points of device "cudasim" make the same checks
    "cudasim_valid_geometry": ("on_cudasim(_native.pool_forward_cudasim_f32)('max', geometry, x, y, indices)", None, ""),
    "cudasim_batch_wraps": ("on_cudasim(_native.pool_forward_cudasim_f32)('max', wrapped, x, y, None)", ValueError,
                            "pooling: x: sizes too large"),
    "cudasim_indices_overlap_y": ("on_cudasim(_native.pool_forward_cudasim_f32)('max', geometry, x, shared[:72], "
                                  "shared.view(np.int64))", ValueError, "y: must not share memory with indices"),
    "cudasim_backward_index_outside_plane": ("on_cudasim(_native.pool_backward_cudasim_f32)('max', geometry, dy, "
                                             "np.full(72, 49), dx)", ValueError,
                                             "indices: value 49 at flat position 0 is outside"),
    "cudasim_backward_dx_too_small": ("on_cudasim(_native.pool_backward_cudasim_f64)('avg_include_pad', geometry, "
                                      "dy.astype(np.float64), None, dx[:391].astype(np.float64))", ValueError,
                                      "dx: expected 392 elements"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
