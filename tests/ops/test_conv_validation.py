"""Bad input to the convolution API is refused in Python, before native code
runs: TypeError for wrong types and dtypes, ValueError for wrong values and
shapes, each message naming the function, the argument, what was expected and
what arrived. And the binding's own checks, the last line of defence."""
import os
import subprocess
import sys

import numpy as np
import pytest

from minifw import _native, ops

# A valid problem every case below breaks in one way: 4 input channels in 2
# groups, 6 output channels, 3x3 kernel, padding 1 (so winograd supports it).
X = np.ones((2, 4, 7, 7), np.float32)
W = np.ones((6, 2, 3, 3), np.float32)
B = np.ones(6, np.float32)
DY = np.ones((2, 6, 7, 7), np.float32)
GEOMETRY = dict(stride=1, padding=1, dilation=1, groups=2)


def forward(x=X, w=W, bias=B, **kw):
    return ops.conv2d_forward(x, w, bias, **{**GEOMETRY, **kw})


def backward_data(dy=DY, w=W, x_shape=X.shape, **kw):
    return ops.conv2d_backward_data(dy, w, x_shape, **{**GEOMETRY, **kw})


def backward_filter(x=X, dy=DY, w_shape=W.shape, **kw):
    return ops.conv2d_backward_filter(x, dy, w_shape, **{**GEOMETRY, **kw})


def test_the_base_problem_is_valid():
    forward(), backward_data(), backward_filter(), ops.conv2d_backward_bias(DY)
    forward(algo="winograd"), backward_data(algo="winograd"), backward_filter(algo="winograd")


CALLS = {"forward": forward, "backward_data": backward_data, "backward_filter": backward_filter}
FN = {"forward": "conv2d_forward", "backward_data": "conv2d_backward_data",
      "backward_filter": "conv2d_backward_filter"}


def case(direction, exc, pattern, **kw):
    """One bad call: CALLS[direction](**kw) must raise exc, its message matching
    `pattern` after the function name."""
    shown = ",".join(f"{k}={_short(v)}" for k, v in kw.items())
    return pytest.param(direction, kw, exc, pattern, id=f"{direction}-{shown}")


def _short(v):
    if isinstance(v, np.ndarray):
        return f"{v.dtype}{list(v.shape)}"
    return repr(v).replace(" ", "")


BAD = [
    # wrong types and dtypes
    case("forward", TypeError, r"x must have dtype float32 or float64, got int32", x=X.astype(np.int32)),
    case("forward", TypeError, r"x must have dtype float32 or float64, got bool", x=X.astype(bool)),
    case("forward", TypeError, r"w must have dtype float32 or float64, got float16", w=W.astype(np.float16)),
    case("forward", TypeError, r"bias must have dtype float32 or float64, got int64", bias=B.astype(np.int64)),
    case("forward", TypeError, r"x must be a numpy.ndarray .*got list", x=X.tolist()),
    case("forward", TypeError, r"w must be a numpy.ndarray .*got float", w=1.0),
    case("forward", TypeError, r"bias must be a numpy.ndarray .*got tuple", bias=(1.0,) * 6),
    case("backward_data", TypeError, r"dy must have dtype float32 or float64, got int16", dy=DY.astype(np.int16)),
    case("backward_filter", TypeError, r"x must have dtype float32 or float64, got complex64",
         x=X.astype(np.complex64)),
    # mismatched dtypes between operands
    case("forward", TypeError, r"x must have dtype float32 to match the other operands, got float64",
         x=X.astype(np.float64)),
    case("forward", TypeError, r"bias must have dtype float32 to match the other operands, got float64",
         bias=B.astype(np.float64)),
    case("forward", TypeError, r"x must have dtype float64 to match the other operands, got float32",
         w=W.astype(np.float64), bias=B.astype(np.float64)),
    case("backward_data", TypeError, r"dy must have dtype float32 to match the other operands, got float64",
         dy=DY.astype(np.float64)),
    case("backward_filter", TypeError, r"dy must have dtype float64 to match the other operands, got float32",
         x=X.astype(np.float64)),
    # wrong rank
    case("forward", ValueError, r"x must be 4-D \(N, C, H, W\).*got a 3-D array of shape \(4, 7, 7\)", x=X[0]),
    case("forward", ValueError, r"x must be 4-D.*got a 5-D array of shape \(1, 2, 4, 7, 7\)", x=X[None]),
    case("forward", ValueError, r"w must be 4-D \(K, C/groups, R, S\); got a 2-D array of shape \(6, 18\)",
         w=W.reshape(6, 18)),
    case("forward", ValueError, r"bias must be 1-D; got a 2-D array of shape \(1, 6\)", bias=B[None]),
    case("backward_data", ValueError, r"dy must be 4-D \(N, K, Ho, Wo\); got a 2-D array", dy=DY[0, 0]),
    case("backward_data", ValueError, r"w must be 4-D.*got a 3-D array", w=W[0]),
    case("backward_filter", ValueError, r"x must be 4-D.*got a 3-D array of shape \(4, 7, 7\)", x=X[0]),
    case("backward_filter", ValueError, r"dy must be 4-D.*got a 1-D array", dy=B),
    # channel / group mismatch
    case("forward", ValueError, r"weight of shape \(6, 2, 3, 3\) with groups=2 expects 4 input channels, "
                                r"got x of shape \(2, 6, 7, 7\) with 6", x=np.ones((2, 6, 7, 7), np.float32)),
    case("forward", ValueError, r"input channels \(4\) must be divisible by groups \(3\)", groups=3),
    case("forward", ValueError, r"output channels w.shape\[0\] \(5\) must be divisible by groups \(2\)",
         w=np.ones((5, 2, 3, 3), np.float32), bias=None),
    case("forward", ValueError, r"bias must have shape \(6,\) to match weight of shape \(6, 2, 3, 3\), got \(5,\)",
         bias=np.ones(5, np.float32)),
    case("backward_data", ValueError, r"expects 4 input channels, got x of shape \(2, 6, 7, 7\) with 6",
         x_shape=(2, 6, 7, 7)),
    case("backward_filter", ValueError, r"input channels \(4\) must be divisible by groups \(3\)", groups=3),
    case("backward_filter", ValueError, r"w_shape \(6, 4, 3, 3\) with groups=2 expects 8 input channels|"
                                        r"weight of shape \(6, 4, 3, 3\) with groups=2 expects 8",
         w_shape=(6, 4, 3, 3)),
    # groups
    case("forward", ValueError, r"groups must be >= 1, got 0", groups=0),
    case("forward", ValueError, r"groups must be >= 1, got -2", groups=-2),
    case("forward", TypeError, r"groups must be an int, got float 2.5", groups=2.5),
    case("backward_data", TypeError, r"groups must be an int, got bool", groups=True),
    # non-positive stride or dilation, negative padding
    case("forward", ValueError, r"stride must be >= 1, got 0", stride=0),
    case("forward", ValueError, r"stride must be >= 1, got -1", stride=-1),
    case("forward", ValueError, r"stride must be >= 1, got \(1, 0\)", stride=(1, 0)),
    case("backward_data", ValueError, r"stride must be >= 1, got \(0, 2\)", stride=(0, 2)),
    case("backward_filter", ValueError, r"stride must be >= 1, got 0", stride=0),
    case("forward", TypeError, r"stride must be an int or a pair of ints, got 1.5", stride=1.5),
    case("forward", ValueError, r"stride must be an int or a pair of ints, got \(1, 1, 1\)", stride=(1, 1, 1)),
    case("forward", ValueError, r"dilation must be >= 1, got 0", dilation=0),
    case("backward_data", ValueError, r"dilation must be >= 1, got \(2, -1\)", dilation=(2, -1)),
    case("backward_filter", ValueError, r"dilation must be >= 1, got 0", dilation=0),
    case("forward", ValueError, r"padding must be >= 0, got -1", padding=-1),
    case("backward_data", ValueError, r"padding must be >= 0, got \(0, -2\)", padding=(0, -2)),
    case("backward_filter", ValueError, r"padding must be >= 0, got -3", padding=-3),
    case("forward", TypeError, r"padding must be an int or a pair of ints, got '1'", padding="1"),
    # output size < 1
    case("forward", ValueError, r"output size would be < 1: padded input 7x7 is smaller than the dilated "
                                r"kernel 9x9", padding=0, dilation=4),
    case("forward", ValueError, r"output size would be < 1: padded input 3x3.*kernel 5x5",
         x=np.ones((2, 4, 3, 3), np.float32), w=np.ones((6, 2, 5, 5), np.float32), padding=0),
    case("backward_data", ValueError, r"output size would be < 1.*padded input 9x3 .*kernel 3x5",
         x_shape=(2, 4, 7, 1), w=np.ones((6, 2, 3, 5), np.float32)),
    case("backward_filter", ValueError, r"output size would be < 1", w_shape=(6, 2, 10, 3)),
    # dy, x_shape and w_shape that do not fit the problem
    case("backward_data", ValueError, r"dy must have the output shape \(2, 6, 7, 7\).*got \(2, 6, 5, 5\)",
         dy=np.ones((2, 6, 5, 5), np.float32)),
    case("backward_data", ValueError, r"dy must have the output shape \(2, 6, 4, 4\).*got \(2, 6, 7, 7\)",
         stride=2),
    case("backward_filter", ValueError, r"dy must have the output shape \(2, 8, 7, 7\).*got \(2, 6, 7, 7\)",
         w_shape=(8, 2, 3, 3)),
    case("backward_filter", ValueError, r"dy must have the output shape \(1, 6, 7, 7\).*got \(2, 6, 7, 7\)",
         x=X[:1]),
    case("backward_data", ValueError, r"x_shape must be a tuple of 4 ints, got \(4, 7, 7\)", x_shape=(4, 7, 7)),
    case("backward_data", TypeError, r"x_shape must be a tuple of 4 ints, got \(2, 4, 7\.5, 7\)",
         x_shape=(2, 4, 7.5, 7)),
    case("backward_data", ValueError, r"x_shape must have every dimension >= 1, got \(2, 4, 0, 7\)",
         x_shape=(2, 4, 0, 7)),
    case("backward_data", ValueError, r"x_shape must be a tuple of 4 ints, got array", x_shape=X),
    case("backward_filter", ValueError, r"w_shape must be a tuple of 4 ints, got \(6, 2, 3\)", w_shape=(6, 2, 3)),
    case("backward_filter", ValueError, r"w_shape must have every dimension >= 1, got \(6, 2, 3, -3\)",
         w_shape=(6, 2, 3, -3)),
    # empty arrays: refused by name
    case("forward", ValueError, r"x must have every dimension >= 1, got shape \(0, 4, 7, 7\)", x=X[:0]),
    # algorithms
    case("forward", ValueError, r"algo must be 'auto' or one of .*; got 'fft'", algo="fft"),
    case("forward", ValueError, r"algo must be 'auto' or one of .*; got 'Winograd'", algo="Winograd"),
    case("forward", TypeError, r"algo must be a string, got NoneType", algo=None),
    case("backward_data", ValueError, r"algo must be 'auto' or one of .*; got 'gemm'", algo="gemm"),
    case("backward_data", ValueError, r"algo 'direct' does not support this problem.*it needs stride 1 in "
                                      r"backward_data.*supported here: \['im2col_gemm', 'implicit_gemm'\]",
         algo="direct", stride=(1, 2), dy=np.ones((2, 6, 7, 4), np.float32)),
    case("backward_filter", ValueError, r"algo 'winograd' does not support this problem.*3x3 kernel.*supported "
                                        r"here: \['im2col_gemm', 'implicit_gemm', 'direct'\]",
         algo="winograd", w_shape=(6, 2, 5, 5), dy=np.ones((2, 6, 5, 5), np.float32)),
    case("forward", ValueError, r"algo 'winograd' does not support this problem.*3x3 kernel, stride 1, "
                                r"dilation 1 and padding <= 2.*supported here: \['im2col_gemm', 'implicit_gemm', "
                                r"'direct'\]", algo="winograd", stride=2),
    case("forward", ValueError, r"algo 'winograd' does not support.*supported", algo="winograd", padding=3),
    case("forward", ValueError, r"algo 'winograd' does not support.*supported", algo="winograd", dilation=2),
    case("forward", ValueError, r"algo 'winograd' does not support.*supported", algo="winograd",
         w=np.ones((6, 2, 5, 5), np.float32)),
    case("backward_data", ValueError, r"algo 'winograd' does not support.*supported", algo="winograd",
         w=np.ones((6, 2, 3, 1), np.float32), dy=np.ones((2, 6, 7, 9), np.float32)),
    case("forward", ValueError, r"algo 'gemm_1x1' does not support this problem.*1x1 kernel.*supported",
         algo="gemm_1x1"),
    case("backward_data", ValueError, r"algo 'gemm_1x1' does not support.*supported", algo="gemm_1x1",
         w=np.ones((6, 2, 1, 1), np.float32), dy=np.ones((2, 6, 9, 9), np.float32)),
    case("backward_filter", ValueError, r"algo 'gemm_1x1' does not support.*supported", algo="gemm_1x1",
         w_shape=(6, 2, 1, 1), padding=0, stride=2, dy=np.ones((2, 6, 4, 4), np.float32)),
]


@pytest.mark.parametrize("direction,kwargs,exc,pattern", BAD)
def test_bad_input_is_refused_by_name(direction, kwargs, exc, pattern):
    with pytest.raises(exc, match=rf"^{FN[direction]}: .*(?:{pattern})") as info:
        CALLS[direction](**kwargs)
    assert type(info.value) is exc  # not a subclass raised from deeper down


@pytest.mark.parametrize("direction,kwargs", [
    pytest.param("forward", dict(groups=2.0), id="forward-groups=2.0"),
    pytest.param("forward", dict(stride=True), id="forward-stride=True"),
    pytest.param("forward", dict(padding=1.0), id="forward-padding=1.0"),
    pytest.param("backward_data", dict(x_shape=(2, 4, 7.0, 7)), id="backward_data-x_shape=(2,4,7.0,7)"),
    pytest.param("backward_filter", dict(w_shape=(6, 2, 3, np.float64(3))), id="backward_filter-w_shape_float"),
])
def test_validation_does_not_depend_on_earlier_calls(direction, kwargs):
    CALLS[direction]()  # the same problem spelled with ints: valid
    with pytest.raises(TypeError, match=rf"^{FN[direction]}: .*must be"):
        CALLS[direction](**kwargs)


@pytest.mark.parametrize("dy,exc,pattern", [
    pytest.param(DY[0], ValueError, r"dy must be 4-D \(N, K, Ho, Wo\); got a 3-D array of shape \(6, 7, 7\)",
                 id="rank3"),
    pytest.param(DY.astype(np.int8), TypeError, r"dy must have dtype float32 or float64, got int8", id="int8"),
    pytest.param(DY.tolist(), TypeError, r"dy must be a numpy.ndarray .*got list", id="list"),
])
def test_backward_bias_bad_input(dy, exc, pattern):
    with pytest.raises(exc, match=rf"^conv2d_backward_bias: {pattern}"):
        ops.conv2d_backward_bias(dy)


@pytest.mark.parametrize("kwargs,exc,pattern", [
    pytest.param(dict(dtype="float16"), TypeError, r"dtype must be 'float32' or 'float64', got 'float16'",
                 id="float16"),
    pytest.param(dict(dtype="int8"), TypeError, r"dtype must be 'float32' or 'float64', got 'int8'", id="int8"),
    pytest.param(dict(dtype="floaty"), TypeError, r"dtype must be 'float32' or 'float64', got 'floaty'",
                 id="unknown"),
    pytest.param(dict(x_shape=(1, 28, 28)), ValueError, r"x_shape must be a tuple of 4 ints, got \(1, 28, 28\)",
                 id="x_shape3"),
    pytest.param(dict(w_shape=None), ValueError, r"w_shape must be a tuple of 4 ints, got None", id="w_none"),
    pytest.param(dict(stride=0), ValueError, r"stride must be >= 1, got 0", id="stride0"),
    pytest.param(dict(padding=-1), ValueError, r"padding must be >= 0, got -1", id="padding-1"),
    pytest.param(dict(dilation=(1, 0)), ValueError, r"dilation must be >= 1, got \(1, 0\)", id="dilation0"),
    pytest.param(dict(groups=4), ValueError, r"weight of shape \(20, 1, 5, 5\) with groups=4 expects 4 input "
                                             r"channels|input channels \(1\) must be divisible by groups \(4\)",
                 id="groups"),
    pytest.param(dict(x_shape=(16, 2 ** 20, 2 ** 16, 2 ** 16), w_shape=(1, 2 ** 20, 3, 3), padding=1), ValueError,
                 r"problem too large to index", id="too_large"),
])
def test_conv_problem_bad_input(kwargs, exc, pattern):
    args = {"x_shape": (1, 1, 28, 28), "w_shape": (20, 1, 5, 5), **kwargs}
    with pytest.raises(exc, match=rf"^ConvProblem: (?:{pattern})"):
        ops.ConvProblem(args.pop("x_shape"), args.pop("w_shape"), **args)


def test_too_large_problem_is_refused_before_allocating():
    # x_shape describes 2**58 elements; dx must never be allocated, let alone written
    with pytest.raises(ValueError, match=r"^conv2d_backward_data: problem too large to index"):
        ops.conv2d_backward_data(np.ones((16, 1, 1, 1), np.float32),
                                 np.ones((1, 2 ** 20, 3, 3), np.float32), (16, 2 ** 20, 2 ** 16, 2 ** 16), padding=1)


def test_the_documented_choice_for_noncontiguous_inputs_is_copying():
    # (that a copied view gives the contiguous result is tested in test_conv.py)
    assert "not C-contiguous are copied" in " ".join(ops.__doc__.split())


# ---- the binding's own checks: no pointer reaches a kernel unchecked ----------------

ARGS = (2, 4, 7, 7, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2)  # the base problem as the native tuple


def _ws(algo, direction="forward", dtype="float32", args=ARGS):
    query = _native.conv_workspace_f32 if dtype == "float32" else _native.conv_workspace_f64
    explicit, _ = query(algo, direction, args)
    return np.empty(max(explicit, 64), np.uint8)


@pytest.mark.parametrize("call,exc,pattern", [
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X[:1], W, None, np.empty_like(DY),
                                                  _ws("im2col_gemm")), ValueError, r"x: expected 392 elements",
                 id="x_too_small"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X, W, None, np.empty_like(DY)[:1],
                                                  _ws("im2col_gemm")), ValueError, r"y: expected 588 elements",
                 id="y_too_small"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X.astype(np.float64), W, None,
                                                  np.empty_like(DY), _ws("im2col_gemm")), TypeError,
                 r"x: expected dtype float32", id="x_dtype"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X.transpose(0, 1, 3, 2), W, None,
                                                  np.empty_like(DY), _ws("im2col_gemm")), ValueError,
                 r"x: expected a C-contiguous array", id="x_strided"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X, W, None, np.broadcast_to(DY, DY.shape),
                                                  _ws("im2col_gemm")), ValueError, r"y: expected a writable array",
                 id="y_read_only"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X, W, B[:5], np.empty_like(DY),
                                                  _ws("im2col_gemm")), ValueError, r"bias: expected 6 elements",
                 id="bias_short"),
    pytest.param(lambda: _native.conv_forward_f32("im2col_gemm", ARGS, X, W, None, np.empty_like(DY),
                                                  np.empty(8, np.uint8)), ValueError,
                 r"workspace: expected at least", id="workspace_small"),
    pytest.param(lambda: _native.conv_forward_f32("gemm_1x1", ARGS, X, W, None, np.empty_like(DY),
                                                  _ws("im2col_gemm")), ValueError, r"does not support",
                 id="unsupported_algo"),
    pytest.param(lambda: _native.conv_backward_data_f32("im2col_gemm", ARGS, DY, W, np.empty((2, 4, 7, 6), np.float32),
                                                        _ws("im2col_gemm", "backward_data")), ValueError,
                 r"dx: expected 392 elements", id="dx_wrong_size"),
    pytest.param(lambda: _native.conv_backward_filter_f64("implicit_gemm", ARGS, X.astype(np.float64), DY,
                                                          np.empty(W.shape), _ws("implicit_gemm", "backward_filter",
                                                                                 "float64")),
                 TypeError, r"dy: expected dtype float64", id="dy_dtype"),
])
def test_binding_checks(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


@pytest.mark.parametrize("args", [
    pytest.param((2, 4, 7, 7, 6, 2, 3, 3, 0, 1, 1, 1, 1, 1, 2), id="stride0"),
    pytest.param((2, 4, 7, 7, 6, 2, 3, 3, 1, 1, -1, 1, 1, 1, 2), id="padding-1"),
    pytest.param((2, 4, 7, 7, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 0), id="groups0"),
    pytest.param((2, 4, 7, 7, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 2), id="channels"),
    pytest.param((2, 4, 1, 1, 6, 2, 3, 3, 1, 1, 0, 0, 1, 1, 2), id="empty_output"),
    pytest.param((-2, 4, 7, 7, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2), id="negative_batch"),
])
def test_binding_revalidates_the_problem(args):
    with pytest.raises((ValueError, TypeError)):
        _native.conv_forward_f32("im2col_gemm", args, X, W, None, np.empty_like(DY), _ws("im2col_gemm"))


# make_conv_shape (native/cpu/conv.cpp) must refuse sizes whose products
# overflow int64: a batch of 2**62 + 2 makes N*C*H*W wrap around to the 392
# elements of a small x, so without that check every element-count check
# would pass and the kernel would read far past the arrays. ConvProblem
# refuses such problems before the binding sees them; this calls the binding
# directly, in a child process so that a regression shows as a failed test
# rather than a crashed test run.
OVERFLOW_CHILD = """
import numpy as np
from minifw import _native
args = (2 ** 62 + 2, 4, 7, 7, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1)  # N*4*7*7 == 392 (mod 2**64)
x, w = np.ones((2, 4, 7, 7), np.float32), np.ones((4, 4, 3, 3), np.float32)
try:
    _native.conv_forward_f32("implicit_gemm", args, x, w, None, np.empty_like(x), np.empty(1 << 20, np.uint8))
except ValueError as e:
    print("refused:", e)
"""


def test_binding_refuses_sizes_that_overflow(tmp_path):
    # Run from an empty directory so the child imports the same minifw as this
    # process (an installed one), not a source tree in the working directory.
    root = os.path.dirname(os.path.dirname(os.path.abspath(_native.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", OVERFLOW_CHILD], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, f"child died with status {proc.returncode}: {proc.stderr[-500:]}"
    assert proc.stdout.startswith("refused:")
