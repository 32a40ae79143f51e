"""TF32 tensor cores: with minifw.backends.cuda.matmul.allow_tf32 (GEMM) or
minifw.backends.cudnn.allow_tf32 (convolution) set, float32 products on the CUDA
kernels run on tiled_gemm_tf32 (nvcuda::wmma; the emulator's model of it in
native/cuda/cudasim/wmma.h): they equal the float64 product of the inputs rounded
to TF32, and differ from the exact product by about TF32's precision. Switched
off (the default), and in float64, results are the plain kernels' to the bit.
Also: the switches' Python API, and the emulator catching a broken wmma rule."""
import os
import subprocess
import sys

import numpy as np
import pytest

import minifw
from minifw import _native, backends, devices, ops
from reference import (assert_within_bound, conv2d_backward_data_ref, conv2d_backward_filter_ref,
                       conv2d_forward_ref, gemm_ref, tolerance)
from targets import place

DEVICES = ["cudasim"] + (["cuda"] if devices.unavailable_reason("cuda") is None else [])

# With TF32 on, the result is held to the float32 tolerance (reference.py) around the
# float64 product of TF32-rounded inputs: only the float32 accumulation errs. Around
# the exact product it errs by up to TF32_RTOL * sum|terms|: each input rounded to 10
# mantissa bits is off by at most 2**-11 relative, a product of two by ~2**-10.
TF32_RTOL = 2.0 ** -10 + 1e-5
# Random inputs show that error: somewhere it is over twice the float32 tolerance
# (1e-5 of sum|terms|, which a float32 product stays well inside).
TF32_VISIBLE = 2e-5


@pytest.fixture(autouse=True)
def switches_off():
    """Each test starts with both switches off and leaves them as it found them."""
    before = backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32
    backends.cuda.matmul.allow_tf32 = False
    backends.cudnn.allow_tf32 = False
    yield
    backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32 = before


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def tf32(a):
    """`a` (float32) rounded to TF32 as cvt.rna.tf32.f32 does: to 10 mantissa bits,
    to nearest, ties away from zero (half a unit added to the magnitude, the low 13
    bits dropped); infinities and NaNs kept."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    finite = (bits & 0x7F800000) != 0x7F800000
    rounded = np.where(finite, (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000), bits)
    return rounded.astype(np.uint32).view(np.float32).reshape(np.shape(a))


def host(a):
    """A result as a NumPy array (CuPy arrays on "cuda" are copied back)."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def assert_tf32_result(got, ref_tf32, ref_abs_tf32, ref_exact, ref_abs_exact, what):
    """got is the TF32 product: within float32 rounding of the product of the rounded
    inputs, within TF32_RTOL of the exact product, and visibly not the exact product."""
    got = host(got)
    assert_within_bound(got, ref_tf32, ref_abs_tf32, *tolerance(np.float32), what=f"{what} vs TF32 reference")
    assert_within_bound(got, ref_exact, ref_abs_exact, TF32_RTOL, 1e-30, what=f"{what} vs exact")
    err = np.abs(got.astype(np.float64) - ref_exact) / np.maximum(ref_abs_exact, 1e-30)
    assert err.max() > TF32_VISIBLE, f"{what}: error {err.max():.2g} of sum|terms|: the TF32 path was not taken"


# ---- GEMM ------------------------------------------------------------------------

GEMM_SIZES = [  # (M, N, K): one fragment, K not a multiple of 8, edges of the 64 x 64 tiles
    (16, 16, 8),
    (3, 5, 7),
    (17, 33, 9),
    (65, 70, 19),
    (5, 130, 40),
]


def gemm_operands(m, n, k, trans_a, trans_b, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    return a, b, c


def check_gemm_tf32(got, a, b, c, trans_a, trans_b, alpha, beta, what):
    """The TF32 result: alpha and beta * C are applied in float32 to the TF32 product."""
    ta, tb = tf32(a), tf32(b)
    abs_c = None if c is None else np.abs(c)
    assert_tf32_result(got, gemm_ref(ta, tb, c, trans_a, trans_b, alpha, beta),
                       gemm_ref(np.abs(ta), np.abs(tb), abs_c, trans_a, trans_b, abs(alpha), abs(beta)),
                       gemm_ref(a, b, c, trans_a, trans_b, alpha, beta),
                       gemm_ref(np.abs(a), np.abs(b), abs_c, trans_a, trans_b, abs(alpha), abs(beta)), what)


@pytest.mark.parametrize("size", GEMM_SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)],
                         ids=["NN", "TN", "NT", "TT"])
def test_gemm_with_tf32_is_the_product_of_tf32_inputs(device, trans, size):
    a, b, _ = gemm_operands(*size, *trans)
    backends.cuda.matmul.allow_tf32 = True
    got = ops.gemm(*place(device, a, b), trans_a=trans[0], trans_b=trans[1])
    check_gemm_tf32(got, a, b, None, *trans, 1.0, 0.0, f"{device} {size} {trans}")


@pytest.mark.parametrize("alpha,beta", [(2.5, 0.0), (-0.5, 2.0), (1.0, 1.0), (3.0, -1.0)])
def test_gemm_with_tf32_keeps_alpha_and_beta(device, alpha, beta):
    size, trans = (33, 70, 21), (False, True)
    a, b, c = gemm_operands(*size, *trans, seed=1)
    backends.cuda.matmul.allow_tf32 = True
    a_d, b_d, c_d = place(device, a, b, c)
    got = ops.gemm(a_d, b_d, c_d, trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta)
    check_gemm_tf32(got, a, b, c, *trans, alpha, beta, f"{device} alpha={alpha} beta={beta}")


@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_with_tf32_on_many_blocks_is_the_same_on_any_number_of_workers(device, threads):
    # 3 x 4 tiles of C: 12 blocks, which the emulator spreads over its worker threads
    a, b, _ = gemm_operands(130, 200, 24, False, False, seed=5)
    backends.cuda.matmul.allow_tf32 = True
    before = backends.get_num_threads()
    try:
        backends.set_num_threads(1)
        one = host(ops.gemm(*place(device, a, b)))
        backends.set_num_threads(threads)
        many = host(ops.gemm(*place(device, a, b)))
    finally:
        backends.set_num_threads(before)
    np.testing.assert_array_equal(many, one)
    check_gemm_tf32(one, a, b, None, False, False, 1.0, 0.0, f"{device} 130x200x24")


def test_gemm_with_tf32_and_alpha_0_is_beta_c_exactly(device):
    a, b, c = gemm_operands(9, 10, 11, False, False)
    backends.cuda.matmul.allow_tf32 = True
    got = ops.gemm(*place(device, a, b, c), alpha=0.0, beta=1.5)
    np.testing.assert_array_equal(host(got), np.float32(1.5) * c)


# Values around TF32's rounding points near 1 and 3 (units of 2**-10 and 2**-9): exact
# ties go away from zero, either side of a tie to the nearer neighbour; small and
# large magnitudes round at the same relative place.
TIE = 2.0 ** -11
ROUNDING_CASES = np.array([
    1 + TIE, -(1 + TIE), 1 + 3 * TIE, 1 + TIE + 2 ** -20, 1 + TIE - 2 ** -20, 3 + 2 * TIE, -(3 + 2 * TIE),
    1 + 2 ** -10, 1.0, 0.0, 2 ** -30 * (1 + TIE), 2 ** 40 * (1 + TIE), 1 + 2 ** -23, -(1 + 2 ** -12), 1.5 + TIE,
    0.1,
], np.float32)


def test_tf32_rounding_of_the_reference_helper():
    assert tf32(np.float32(1 + TIE)) == np.float32(1 + 2 ** -10)      # a tie: away from zero
    assert tf32(np.float32(-(1 + TIE))) == np.float32(-(1 + 2 ** -10))
    assert tf32(np.float32(1 + 3 * TIE)) == np.float32(1 + 2 * 2 ** -10)  # a tie again, not to even
    assert tf32(np.float32(1 + TIE - 2 ** -20)) == np.float32(1.0)
    assert tf32(np.float32(0.1)) == np.float32(0.0999755859375)
    assert (tf32(np.float32([np.inf, -np.inf])) == np.float32([np.inf, -np.inf])).all()
    assert np.isnan(tf32(np.float32(np.nan)))


def test_gemm_with_tf32_rounds_each_input_to_nearest_ties_away(device):
    # A @ I = A on the tensor cores is tf32(A) bit for bit; without TF32 it is A.
    a = np.tile(ROUNDING_CASES, (3, 1))
    eye = np.eye(a.shape[1], dtype=np.float32)
    a_d, eye_d = place(device, a, eye)
    np.testing.assert_array_equal(host(ops.gemm(a_d, eye_d)), a)
    backends.cuda.matmul.allow_tf32 = True
    got = host(ops.gemm(a_d, eye_d))
    np.testing.assert_array_equal(got, tf32(a))
    assert (got != a).any()
    # and a sum: 12 * (1 + 2**-11) is 12 * (1 + 2**-10) on TF32, exactly
    ones = np.ones((12, 1), np.float32)
    np.testing.assert_array_equal(host(ops.gemm(*place(device, np.full((1, 12), 1 + TIE, np.float32), ones))),
                                  [[np.float32(12 * (1 + 2 ** -10))]])


def test_gemm_without_tf32_is_the_plain_kernel_bit_for_bit(device):
    a, b, c = gemm_operands(65, 70, 19, False, True)
    a_d, b_d = place(device, a, b)
    before = host(ops.gemm(a_d, b_d, trans_b=True))
    backends.cuda.matmul.allow_tf32 = True
    tf32_result = host(ops.gemm(a_d, b_d, trans_b=True))
    backends.cuda.matmul.allow_tf32 = False
    after = host(ops.gemm(a_d, b_d, trans_b=True))
    np.testing.assert_array_equal(after, before)
    assert not np.array_equal(tf32_result, before)
    assert_within_bound(after, gemm_ref(a, b, None, False, True), gemm_ref(np.abs(a), np.abs(b), None, False, True),
                        *tolerance(np.float32), what="switch off")
    # the convolution switch does not reach the GEMM
    backends.cudnn.allow_tf32 = True
    np.testing.assert_array_equal(host(ops.gemm(a_d, b_d, trans_b=True)), before)


def test_float64_ignores_the_switches(device):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((30, 17))
    x, w = rng.standard_normal((1, 3, 7, 6)), rng.standard_normal((4, 3, 3, 3))
    a_d, b_d, x_d, w_d = place(device, a, b, x, w)
    plain = host(ops.gemm(a_d, b_d)), host(ops.conv2d_forward(x_d, w_d, padding=1, algo="implicit_gemm"))
    backends.cuda.matmul.allow_tf32 = backends.cudnn.allow_tf32 = True
    np.testing.assert_array_equal(host(ops.gemm(a_d, b_d)), plain[0])
    np.testing.assert_array_equal(host(ops.conv2d_forward(x_d, w_d, padding=1, algo="implicit_gemm")), plain[1])
    assert_within_bound(plain[0], gemm_ref(a, b), gemm_ref(np.abs(a), np.abs(b)), *tolerance(np.float64))


# ---- convolution ---------------------------------------------------------------------

CONV_CASES = {  # id: (x_shape, w_shape, geometry)
    "odd7x9_3x3_pad1": ((2, 3, 7, 9), (5, 3, 3, 3), dict(padding=1)),
    "stride2_pad1": ((1, 4, 9, 8), (6, 4, 3, 3), dict(stride=2, padding=1)),
    "groups2_3x2_dil2": ((2, 4, 8, 7), (6, 2, 3, 2), dict(padding=(2, 1), dilation=2, groups=2)),
    "c20_k1x5_stride1x2": ((1, 20, 4, 11), (3, 20, 1, 5), dict(stride=(1, 2), padding=(0, 2))),
}
ONE_BY_ONE = ((2, 24, 5, 6), (7, 24, 1, 1), {})  # what gemm_1x1 runs


def conv_data(case, seed=3):
    x_shape, w_shape, geometry = CONV_CASES[case] if isinstance(case, str) else case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    y_shape = ops.ConvProblem(x_shape, w_shape, **geometry).out_shape
    dy = rng.standard_normal(y_shape).astype(np.float32)
    return x, w, bias, dy, geometry


def run_conv(direction, device, x, w, bias, dy, geometry, algo="implicit_gemm"):
    if direction == "forward":
        return host(ops.conv2d_forward(*place(device, x, w, bias), algo=algo, **geometry))
    if direction == "backward_data":
        return host(ops.conv2d_backward_data(*place(device, dy, w), x.shape, algo=algo, **geometry))
    return host(ops.conv2d_backward_filter(*place(device, x, dy), w.shape, algo=algo, **geometry))


def conv_refs(direction, x, w, bias, dy, geometry):
    """(reference, reference on |inputs|) in float64."""
    if direction == "forward":
        return (conv2d_forward_ref(x, w, bias, **geometry),
                conv2d_forward_ref(np.abs(x), np.abs(w), np.abs(bias), **geometry))
    if direction == "backward_data":
        return (conv2d_backward_data_ref(dy, w, x.shape, **geometry),
                conv2d_backward_data_ref(np.abs(dy), np.abs(w), x.shape, **geometry))
    return (conv2d_backward_filter_ref(x, dy, w.shape, **geometry),
            conv2d_backward_filter_ref(np.abs(x), np.abs(dy), w.shape, **geometry))


DIRECTIONS = ["forward", "backward_data", "backward_filter"]


@pytest.mark.parametrize("case_id", list(CONV_CASES))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_implicit_gemm_with_tf32_is_the_product_of_tf32_inputs(device, direction, case_id):
    x, w, bias, dy, geometry = conv_data(case_id)
    backends.cudnn.allow_tf32 = True
    got = run_conv(direction, device, x, w, bias, dy, geometry)
    # The bias is added in float32 to the TF32 product: it is not rounded.
    assert_tf32_result(got, *conv_refs(direction, tf32(x), tf32(w), bias, tf32(dy), geometry),
                       *conv_refs(direction, x, w, bias, dy, geometry), f"{device} {direction} {case_id}")


@pytest.mark.parametrize("algo", ["im2col_gemm", "gemm_1x1"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_other_algorithms_follow_the_convolution_switch(device, direction, algo):
    x, w, bias, dy, geometry = conv_data("c20_k1x5_stride1x2" if algo == "im2col_gemm" else ONE_BY_ONE)
    backends.cuda.matmul.allow_tf32 = True  # the GEMM switch does not reach convolutions
    plain = run_conv(direction, device, x, w, bias, dy, geometry, algo)
    assert_within_bound(plain, *conv_refs(direction, x, w, bias, dy, geometry), *tolerance(np.float32),
                        what=f"{direction} {algo} without cudnn.allow_tf32")
    backends.cudnn.allow_tf32 = True
    got = run_conv(direction, device, x, w, bias, dy, geometry, algo)
    assert_tf32_result(got, *conv_refs(direction, tf32(x), tf32(w), bias, tf32(dy), geometry),
                       *conv_refs(direction, x, w, bias, dy, geometry), f"{device} {direction} {algo}")


def test_convolution_with_tf32_rounds_each_input(device):
    # A 1x1 filter of ones on one channel passes x through: tf32(x) exactly. Backward,
    # the same filter passes dy through to dx.
    x = ROUNDING_CASES.reshape(1, 1, 2, 8)
    w = np.ones((1, 1, 1, 1), np.float32)
    for algo in ("implicit_gemm", "im2col_gemm", "gemm_1x1"):
        np.testing.assert_array_equal(run_conv("forward", device, x, w, None, None, {}, algo), x)
    backends.cudnn.allow_tf32 = True
    for algo in ("implicit_gemm", "im2col_gemm", "gemm_1x1"):
        np.testing.assert_array_equal(run_conv("forward", device, x, w, None, None, {}, algo), tf32(x))
        np.testing.assert_array_equal(run_conv("backward_data", device, x, w, None, x, {}, algo), tf32(x))


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_convolution_without_tf32_is_the_plain_kernel_bit_for_bit(device, direction):
    x, w, bias, dy, geometry = conv_data("groups2_3x2_dil2")
    before = run_conv(direction, device, x, w, bias, dy, geometry)
    backends.cudnn.allow_tf32 = True
    assert not np.array_equal(run_conv(direction, device, x, w, bias, dy, geometry), before)
    backends.cudnn.allow_tf32 = False
    np.testing.assert_array_equal(run_conv(direction, device, x, w, bias, dy, geometry), before)


# ---- the switches --------------------------------------------------------------------

def test_switches_are_off_by_default_in_a_fresh_process(tmp_path):
    # the minifw this process imported (a source tree or an installed package), run from an
    # empty directory so that a source tree there cannot shadow it
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    code = ("import minifw; b = minifw.backends; "
            "print(b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env=env)
    assert out.stdout.split() == ["False", "False"]


def test_switches_set_the_native_flags_and_are_independent():
    assert backends.cuda.matmul.allow_tf32 is False and backends.cudnn.allow_tf32 is False
    backends.cuda.matmul.allow_tf32 = True
    assert _native.get_tf32("matmul") is True and _native.get_tf32("conv") is False
    assert backends.cuda.matmul.allow_tf32 is True and backends.cudnn.allow_tf32 is False
    backends.cudnn.allow_tf32 = True
    backends.cuda.matmul.allow_tf32 = False
    assert _native.get_tf32("matmul") is False and _native.get_tf32("conv") is True
    assert repr(backends.cudnn) == ("<minifw.backends.cudnn: allow_tf32=True, benchmark=False, "
                                    "deterministic=False>")


@pytest.mark.parametrize("value", [1, 0, "True", None, np.bool_(True)], ids=repr)
def test_switches_take_only_bools(value):
    for switch, name in ((backends.cuda.matmul, r"minifw\.backends\.cuda\.matmul\.allow_tf32"),
                         (backends.cudnn, r"minifw\.backends\.cudnn\.allow_tf32")):
        with pytest.raises(TypeError, match=f"{name} must be a bool \\(True or False\\), got "
                                            f"{type(value).__name__}"):
            switch.allow_tf32 = value
        assert switch.allow_tf32 is False  # unchanged


def test_misspelt_settings_are_refused():
    with pytest.raises(AttributeError, match=r"minifw\.backends\.cudnn has no setting 'allow_tf23'; it has "
                                             r"allow_tf32, benchmark, deterministic and enabled$"):
        backends.cudnn.allow_tf23 = True
    with pytest.raises(AttributeError, match=r"minifw\.backends\.cuda\.matmul has no setting 'benchmark'; "
                                             r"it has allow_tf32$"):
        backends.cuda.matmul.benchmark = True
    with pytest.raises(AttributeError, match=r"minifw\.backends\.cuda has no setting 'matmul'"):
        backends.cuda.matmul = None
    with pytest.raises(ValueError, match="kind must be 'matmul' or 'conv', got 'cublas'"):
        _native.set_tf32("cublas", True)


# ---- the emulator's wmma -------------------------------------------------------------

def wmma_operands(seed=4):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)


def test_wmma_selftest_computes_the_tf32_product_in_each_warp():
    a, b = wmma_operands()
    a[0, :] = ROUNDING_CASES[:8]
    out = _native.cudasim_wmma_selftest("none", a, b)
    assert out.shape == (2, 16, 16)
    np.testing.assert_array_equal(out[0], out[1])
    ta, tb = tf32(a).astype(np.float64), tf32(b).astype(np.float64)
    assert_within_bound(out[0], ta @ tb, np.abs(ta) @ np.abs(tb), *tolerance(np.float32), what="wmma")
    # one term per output: the product of two TF32 values, exact in float32
    eye = np.eye(8, 16, dtype=np.float32)
    np.testing.assert_array_equal(_native.cudasim_wmma_selftest("none", a, eye)[0][:, :8], tf32(a))


@pytest.mark.parametrize("fault, message", [
    # lanes 16-31 skip mma_sync and meet lanes 0-15 at the next wmma call
    ("divergent_mma", r"kernel wmma_selftest_kernel, block \(0,0,0\), thread \((1[6-9]|2\d|3[01]|4[89]|5\d|6[0-3]),"
                      r"0,0\): wmma::store_matrix_sync at wmma_selftest\.cu:\d+: lane 0 of the warp is at "
                      r"wmma::mma_sync \(line \d+\); a wmma call is warp-collective: all 32 lanes must make it "
                      r"together"),
    ("lane_exits", r"__syncwarp with mask 0xffffffff: lane (1[6-9]|2\d|3[01]) has exited"),
    ("misaligned", r"wmma::load_matrix_sync at wmma_selftest\.cu:\d+: the pointer 0x[0-9a-f]+ must be 256-bit "
                   r"\(32-byte\) aligned, it is 4 bytes past a multiple of 32"),
])
def test_a_broken_wmma_rule_raises(fault, message):
    a, b = wmma_operands()
    with pytest.raises(_native.CudaSimError, match=message):
        _native.cudasim_wmma_selftest(fault, a, b)
    # the emulator is left in a usable state
    assert np.isfinite(_native.cudasim_wmma_selftest("none", a, b)).all()


def test_wmma_selftest_arguments_are_checked():
    a, b = wmma_operands()
    with pytest.raises(ValueError, match="fault must be one of 'none', 'divergent_mma', 'lane_exits', "
                                         "'misaligned'; got 'sideways'"):
        _native.cudasim_wmma_selftest("sideways", a, b)
    with pytest.raises(ValueError, match=r"a: expected shape \(16, 8\), got \(8, 16\)"):
        _native.cudasim_wmma_selftest("none", b, b)
