"""Activations: forward and backward of every mode, float32 and float64, under
every ISA, against the float64 reference; finite-difference gradients; the
in-place forward; bad input. Also the vectorized exp/log/pow underneath
(minifw._native._vecmath_*), checked in ulps over extreme ranges."""

import numpy as np
import pytest

import minifw
from minifw import _native, ops
from reference import (activation_backward_ref, activation_ref, assert_within_bound, bad_call_test,
                       binding_tests, numerical_grad)
from targets import assert_on, place

DTYPES = (np.float32, np.float64)
MODES = ("relu", "leaky_relu", "sigmoid", "tanh", "elu", "relu6")
# Each output is one elementwise function of one input, so the error is a few
# ulp of the result: rtol ~ 8 float32 ulp (eps 6e-8) or ~50 float64 ulp. atol
# sits below the smallest normal number, where relative accuracy ends.
# Backward: dy * f'(y) loses relative accuracy where f' is a difference near
# cancellation (1 - y for y near 1), but never more than a few ulp of |dy|, so
# the backward bound is taken relative to |dy| + |dx|.
TOL = {np.float32: (1e-6, 1e-37), np.float64: (1e-14, 1e-300)}
SHAPES = {
    "vector7": (7,),
    "fc_3x5": (3, 5),
    "nchw_odd": (2, 3, 5, 7),
    "single": (1, 1, 1, 1),
    "threaded_4x16x33x35": (4, 16, 33, 35),  # > one thread's grain
}
PARAMS = {"leaky_relu": dict(negative_slope=0.1), "elu": dict(alpha=1.3)}


def sample(rng, shape, dtype):
    """Normal values with the kinks (0 and 6) and large magnitudes mixed in."""
    x = 4 * rng.standard_normal(shape)
    flat = x.reshape(-1)
    specials = [0.0, 6.0, -6.0, 30.0, -30.0, 1e-3, -1e-3, 6.0001, 5.9999, 100.0, -100.0]
    flat[:min(len(specials), flat.size)] = specials[:flat.size]
    return x.astype(dtype)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_forward_and_backward_match_reference(target, rng, mode, dtype, shape):
    params = PARAMS.get(mode, {})
    x = sample(rng, shape, dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    rtol, atol = TOL[dtype]
    y = ops.activation_forward(place(target, x), mode, **params)
    assert y.dtype == dtype and y.shape == x.shape
    ref = activation_ref(x, mode, **params)
    assert_within_bound(y, ref, np.abs(ref), rtol, atol, f"{mode} forward")
    dx = ops.activation_backward(place(target, dy), y, mode, **params)
    assert_on(target, y, dx)
    dref = activation_backward_ref(dy, x, mode, **params)
    assert_within_bound(dx, dref, np.abs(dy) + np.abs(dref), rtol, atol, f"{mode} backward")


@pytest.mark.parametrize("mode", MODES)
def test_gradient_matches_finite_differences(rng, mode):
    params = PARAMS.get(mode, {})
    x = rng.uniform(-4, 8, (2, 3, 3, 4))
    x[np.abs(x) < 0.05] += 0.2  # keep central differences off the kinks
    x[np.abs(x - 6) < 0.05] += 0.2
    dy = rng.standard_normal(x.shape)
    y = ops.activation_forward(x, mode, **params)
    num = numerical_grad(lambda v: np.sum(ops.activation_forward(v, mode, **params) * dy), x)
    np.testing.assert_allclose(ops.activation_backward(dy, y, mode, **params), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode,params", [("leaky_relu", dict(negative_slope=-0.5)),
                                         ("elu", dict(alpha=-0.7))], ids=["leaky_negative_slope",
                                                                           "elu_negative_alpha"])
def test_backward_takes_the_branch_on_x_when_y_cannot_tell(rng, mode, params):
    x = rng.standard_normal((3, 40))
    dy = rng.standard_normal(x.shape)
    y = ops.activation_forward(x, mode, **params)
    with pytest.raises(ValueError, match="x is required"):
        ops.activation_backward(dy, y, mode, **params)
    dx = ops.activation_backward(dy, y, mode, x=x, **params)
    np.testing.assert_allclose(dx, activation_backward_ref(dy, x, mode, **params), rtol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_inplace_forward_writes_into_x(target, rng, mode):
    x = place(target, sample(rng, (2, 4, 6, 5), np.float32))
    expected = ops.activation_forward(x, mode)
    y = ops.activation_forward(x, mode, inplace=True)
    assert y is x
    np.testing.assert_array_equal(x, expected)


def test_nan_propagates(target):
    x = place(target, np.array([np.nan, 1.0, -1.0], np.float32))
    for mode in MODES:
        assert np.isnan(ops.activation_forward(x, mode)[0]), mode


def test_results_do_not_depend_on_thread_count(rng):
    x = sample(rng, (4, 16, 33, 35), np.float32)
    before = minifw.get_num_threads()
    try:
        out = []
        for n in (1, 2):
            minifw.set_num_threads(n)
            out.append([ops.activation_forward(x, m) for m in MODES])
    finally:
        minifw.set_num_threads(before)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_empty_and_zero_d_inputs():
    assert ops.activation_forward(np.zeros((0, 3), np.float32), "tanh").shape == (0, 3)
    assert ops.activation_forward(np.full((), -2.0), "relu") == 0.0


@pytest.mark.parametrize("mode, params", [("elu", dict(alpha=-1.0)), ("leaky_relu", dict(negative_slope=-0.5)),
                                          ("tanh", {})])
def test_empty_backward_on_every_device(target, mode, params):
    # CuPy's empty arrays have no data pointer: a given x is still given
    x, dy = place(target, np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))
    y = ops.activation_forward(x, mode, **params)
    dx = ops.activation_backward(dy, y, mode, x=x, **params)
    assert_on(target, y, dx)
    assert dx.shape == (0, 3) and dx.dtype == np.float32


# ---- bad input ---------------------------------------------------------------

BAD_CALLS = {
    "x_not_array": (lambda: ops.activation_forward([1.0, 2.0], "relu"), TypeError, "x"),
    "x_int_dtype": (lambda: ops.activation_forward(np.ones(3, np.int32), "relu"), TypeError, "x"),
    "unknown_mode": (lambda: ops.activation_forward(np.ones(3), "gelu"), ValueError, "mode"),
    "slope_not_real": (lambda: ops.activation_forward(np.ones(3), "leaky_relu", negative_slope="a"),
                       TypeError, "negative_slope"),
    "alpha_nan": (lambda: ops.activation_forward(np.ones(3), "elu", alpha=float("nan")), ValueError, "alpha"),
    "inplace_not_bool": (lambda: ops.activation_forward(np.ones(3), "relu", inplace=1), TypeError, "inplace"),
    "inplace_on_a_view": (lambda: ops.activation_forward(np.ones((4, 4))[:, ::2], "relu", inplace=True),
                          ValueError, "inplace"),
    "dy_dtype_mismatch": (lambda: ops.activation_backward(np.ones(3, np.float32), np.ones(3), "relu"),
                          TypeError, "dy"),
    "dy_shape_mismatch": (lambda: ops.activation_backward(np.ones(4), np.ones(3), "relu"), ValueError, "dy"),
    "x_shape_mismatch": (lambda: ops.activation_backward(np.ones(3), np.ones(3), "relu", x=np.ones(2)),
                         ValueError, "x"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(
    {case: (call, exc, rf"activation_(forward|backward): {name}\b")
     for case, (call, exc, name) in BAD_CALLS.items()})


# ---- the vectorized math under sigmoid, tanh, elu, softmax and LRN -----------

ULPS = {  # max error in units in the last place of the result
    "exp": 2, "exp_shift_sum": 2, "log": 3, "sigmoid": 4, "tanh": 4, "elu": 3, "pow_neg": 5,
}


def _vecmath_inputs(dtype):
    rng = np.random.default_rng(1)
    wide = 800.0 if dtype == np.float64 else 110.0
    x = np.concatenate([rng.uniform(-wide, wide, 3001), rng.uniform(-30, 30, 3001),
                        rng.uniform(-1e-3, 1e-3, 301), rng.uniform(-1e-6, 1e-6, 31),
                        [0.0, -0.0, 88.7, -87.3, 709.7, -745.0, 1.0, -1.0, 0.5, 40.0, -60.0]])
    return x.astype(dtype)


def _ulp_error(got, exact, dtype):
    with np.errstate(over="ignore"):
        rounded = exact.astype(dtype)
    fin = np.isfinite(rounded) & (np.abs(rounded) >= np.finfo(dtype).tiny)
    rounded = rounded[fin]
    return np.max(np.abs((got[fin].astype(np.longdouble) - exact[fin]) / np.spacing(np.abs(rounded))))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", ULPS)
def test_vecmath_accuracy_in_ulps(isa, dtype, fn):
    x = _vecmath_inputs(dtype)
    param = {"elu": 1.0, "pow_neg": 0.75, "exp_shift_sum": 3.0}.get(fn, 0.0)
    if fn in ("log", "pow_neg"):
        x = np.abs(x) + np.finfo(dtype).tiny
    xl = x.astype(np.longdouble)
    with np.errstate(over="ignore", under="ignore"):
        exact = {"exp": lambda: np.exp(xl), "exp_shift_sum": lambda: np.exp((x - dtype(3)).astype(np.longdouble)),  # the shift rounds first
                 "log": lambda: np.log(xl), "sigmoid": lambda: 1 / (1 + np.exp(-xl)),
                 "tanh": lambda: np.tanh(xl), "elu": lambda: np.where(xl > 0, xl, np.expm1(np.minimum(xl, 0))),
                 "pow_neg": lambda: xl ** -0.75}[fn]()
        y = np.empty_like(x)
        native = _native._vecmath_f32 if dtype == np.float32 else _native._vecmath_f64
        total = native(fn, x, y, param)
    assert _ulp_error(y, exact, dtype) <= ULPS[fn]
    with np.errstate(over="ignore"):
        rounded = exact.astype(dtype)
    overflow = np.isinf(rounded)
    np.testing.assert_array_equal(y[overflow], rounded[overflow])
    if fn == "exp_shift_sum":
        finite = y[np.isfinite(y)]
        np.testing.assert_allclose(total, finite.astype(np.float64).sum() if finite.size == y.size else np.inf,
                                   rtol=1e-5 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_vecmath_special_values(isa, dtype):
    inf, nan = np.inf, np.nan
    cases = {  # fn, param: inputs -> expected
        ("exp", 0): ([-inf, inf, nan, 0.0, -1e4, 1e4], [0.0, inf, nan, 1.0, 0.0, inf]),
        ("log", 0): ([0.0, -1.0, inf, nan, 1.0], [-inf, nan, inf, nan, 0.0]),
        ("sigmoid", 0): ([-inf, inf, nan, 0.0, -1e4, 1e4], [0.0, 1.0, nan, 0.5, 0.0, 1.0]),
        ("tanh", 0): ([-inf, inf, nan, 0.0, -0.0, 1e4], [-1.0, 1.0, nan, 0.0, -0.0, 1.0]),
        ("elu", 1): ([-inf, inf, nan, 0.0, -1e4], [-1.0, inf, nan, 0.0, -1.0]),
        ("pow_neg", 0.75): ([inf, 0.0, 1.0, 16.0], [0.0, inf, 1.0, 0.125]),
        ("pow_neg", 0.5): ([inf, 0.0, 1.0, 16.0], [0.0, inf, 1.0, 0.25]),
    }
    native = _native._vecmath_f32 if dtype == np.float32 else _native._vecmath_f64
    for (fn, param), (inputs, expected) in cases.items():
        x = np.array(inputs, dtype)
        y = np.empty_like(x)
        native(fn, x, y, float(param))
        np.testing.assert_array_equal(y, np.array(expected, dtype), err_msg=f"{fn}({inputs})")
        signed = ~np.isnan(y)  # (a NaN's sign is unspecified)
        assert np.array_equal(np.signbit(y[signed]), np.signbit(np.array(expected, dtype)[signed])), fn


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_vecmath_pow_neg_of_a_subnormal_among_normal_values(isa, dtype):
    # A lane outside the normal range sends its vector down the square-root
    # path (exact here: (2^-136)^-0.75 = 2^102); the other lanes stay within
    # the usual ulps of 16^-0.75 = 1/8.
    x = np.full(40, 16.0, dtype)
    x[17] = 2.0 ** -136 if dtype == np.float32 else 2.0 ** -1064
    y = np.empty_like(x)
    (_native._vecmath_f32 if dtype == np.float32 else _native._vecmath_f64)("pow_neg", x, y, 0.75)
    assert y[17] == (2.0 ** 102 if dtype == np.float32 else 2.0 ** 798)
    np.testing.assert_allclose(np.delete(y, 17), 0.125, rtol=ULPS["pow_neg"] * np.finfo(dtype).eps / 2)

# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
x, dx = np.ones(8, f32), np.empty(8, f32)
buf = np.ones(9, f32)
read_only = np.empty(8, f32)
read_only.flags.writeable = False
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "y_too_small": ("_native.activation_forward_f32('relu', x, np.empty(7, f32), 0.01, 1.0)", ValueError,
                    "y: expected 8 elements, got 7"),
    "y_float64": ("_native.activation_forward_f32('relu', x, np.empty(8), 0.01, 1.0)", TypeError,
                  "y: expected dtype float32"),
    "x_strided": ("_native.activation_forward_f32('relu', np.ones(16, f32)[::2], dx, 0.01, 1.0)", ValueError,
                  "x: expected a C-contiguous array"),
    "y_read_only": ("_native.activation_forward_f32('relu', x, read_only, 0.01, 1.0)", ValueError,
                    "y: expected a writable array"),
    "y_overlaps_x": ("_native.activation_forward_f32('tanh', buf[:8], buf[1:], 0.01, 1.0)", ValueError,
                     "y: must not share memory with x"),
    "y_is_x_in_place": ("_native.activation_forward_f32('tanh', buf[:8], buf[:8], 0.01, 1.0)", None, ""),
    "unknown_mode": ("_native.activation_forward_f32('swish', x, dx, 0.01, 1.0)", ValueError,
                     "unknown activation mode"),
    "backward_dy_too_small": ("_native.activation_backward_f32('relu', x[:7], x, None, dx, 0.01, 1.0)", ValueError,
                              "dy: expected 8 elements"),
    "backward_x_too_small": ("_native.activation_backward_f32('elu', x, x, x[:7], dx, 0.01, 1.0)", ValueError,
                             "x: expected 8 elements"),
    "backward_x_a_list": ("_native.activation_backward_f32('elu', x, x, [1.0] * 8, dx, 0.01, 1.0)", TypeError,
                          "x: expected dtype float32"),
    "backward_x_missing": ("_native.activation_backward_f32('leaky_relu', x, x, None, dx, -0.5, 1.0)", ValueError,
                           "x: required"),
    "backward_dx_is_dy": ("_native.activation_backward_f32('relu', buf[:8], x, None, buf[:8], 0.01, 1.0)",
                          ValueError, "dx: must not share memory with dy"),
    "vecmath_y_too_small": ("_native._vecmath_f32('exp', x, dx[:4], 0.0)", ValueError, "y: expected 8 elements"),
    "vecmath_y_is_x": ("_native._vecmath_f32('exp', buf, buf, 0.0)", ValueError, "y: must not share memory with x"),
    "vecmath_unknown": ("_native._vecmath_f32('erf', x, dx, 0.0)", ValueError, "unknown vecmath function"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
