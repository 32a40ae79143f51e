"""The Caffe engine is the benchmarks' yardstick, so every entry point is held to
the same float64 reference as the primitives: convolution (im2col + the array
library's GEMM), pooling, activations, softmax and cross-entropy, LRN, batch norm,
dropout and the SGD step, on odd shapes, N=1, stride, padding, ceil_mode, float32
and float64, on every device: the CPU (NumPy), "cudasim" and "cuda" (emulated where
there is no GPU), whose convolutions lower each image with minifw's im2col and
col2im CUDA kernels. Results stay on their inputs' device. Max pooling's indices
equal the primitives' (ties, NaN), bad input raises what minifw.ops raises, and
none of these entry points is the primitive itself."""
import numpy as np
import pytest

from minifw import devices, ops
from minifw.engines import caffe
from reference import (activation_backward_ref, activation_ref, assert_within_bound, batch_norm_backward_ref,
                       batch_norm_inference_ref, batch_norm_training_ref, binding_tests, conv2d_backward_bias_ref,
                       conv2d_backward_data_ref, conv2d_backward_filter_ref, conv2d_forward_ref,
                       cross_entropy_backward_ref, cross_entropy_ref, lrn_backward_ref, lrn_ref,
                       pool2d_backward_ref, pool2d_ref, softmax_backward_ref, softmax_ref)
from targets import assert_on, cuda_available, host, place

# The engine computes with the array library of its inputs' device (NumPy on the CPU
# whatever its ISA), so its conformance tests take the `target` fixture once per device.
CUDA = "cuda" if cuda_available() else "cuda-emulated"
on_every_device = pytest.mark.parametrize("target", ["cpu", "cudasim", CUDA], indirect=True)
on_the_gpu_devices = pytest.mark.parametrize("target", ["cudasim", CUDA], indirect=True)
DTYPES = (np.float32, np.float64)


def ids(d):
    return d.__name__


@pytest.fixture(autouse=True)
def fresh_buffers():
    """Each test starts without the engine's kept buffers (a col buffer of another test's device)."""
    caffe.release_buffers()
    yield
    caffe.release_buffers()

# ---- convolution ------------------------------------------------------------------

# (x_shape, w_shape, stride, padding, dilation, groups)
CASES = {
    "lenet_conv1": ((2, 1, 28, 28), (20, 1, 5, 5), 1, 0, 1, 1),
    "stride2_pad1_dil2": ((1, 3, 11, 9), (4, 3, 3, 3), 2, 1, 2, 1),
    "groups2_pad2": ((2, 6, 9, 9), (8, 3, 5, 5), 1, 2, 1, 2),
    "alexnet_conv1_geometry": ((1, 3, 35, 35), (6, 3, 11, 11), 4, 0, 1, 1),
    "depthwise_nonsquare": ((2, 4, 7, 8), (4, 1, 3, 2), (1, 2), (1, 0), 1, 4),
    # output rows of 16 or more: the image-major lowering (the others put the batch innermost)
    "wide_rows_stride2_pad1_dil2": ((2, 3, 40, 37), (4, 3, 3, 3), 2, 1, 2, 1),
    "wide_rows_groups2_pad2": ((2, 6, 20, 21), (8, 3, 5, 5), 1, 2, 1, 2),
    # a column stride of 3 (three phases of columns), unequal strides, groups, three images
    "wide_rows_stride2x3_groups3": ((3, 6, 23, 70), (6, 2, 3, 4), (2, 3), (1, 0), 1, 3),
}
# Each output is a sum of products (C*R*S of them forward, K*R*S backward-data, N*Ho*Wo
# backward-filter), rounded in another order than the reference's: the bound is rtol times
# the sum of |terms| (the reference on absolute values). 1e-5 is ~170 float32 ulp, which a
# random walk of roundings over these few thousand terms stays far within.
CONV_RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def test_cases_cover_both_lowerings():
    from minifw.ops import ConvProblem

    def batch_inner(x_shape, w_shape, stride, padding, dilation, groups):
        return caffe._batch_inner(ConvProblem(x_shape, w_shape, stride=stride, padding=padding,
                                              dilation=dilation, groups=groups))

    assert {name for name, case in CASES.items() if not batch_inner(*case)} == {
        "lenet_conv1", "wide_rows_stride2_pad1_dil2", "wide_rows_groups2_pad2", "wide_rows_stride2x3_groups3"}


@pytest.mark.parametrize("images_per_chunk", [1, 2])
@pytest.mark.parametrize("name", ["lenet_conv1", "wide_rows_stride2x3_groups3"])
def test_weight_gemms_per_image_in_chunks(monkeypatch, name, images_per_chunk):
    # the image-major backward-filter's GEMMs, one per image, stacked a few images at a time:
    # every chunking adds up to the same dW
    geo, (x, _, _, dy), refs = _conv_case(name, np.float64)
    whole = caffe.conv2d_backward_filter(x, dy, refs["dw"][0].shape, **geo)
    monkeypatch.setattr(caffe, "WEIGHT_GEMM_CHUNK_ELEMENTS", images_per_chunk * whole.size)
    chunked = caffe.conv2d_backward_filter(x, dy, whole.shape, **geo)
    assert_within_bound(chunked, *refs["dw"], CONV_RTOL[np.float64], 1e-30, "dw")
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", ["stride2_pad1_dil2", "wide_rows_groups2_pad2"])
def test_the_two_lowerings_hold_the_same_matrix(name, rng):
    from minifw.ops import ConvProblem

    xs, ws, stride, padding, dilation, groups = CASES[name]
    p = ConvProblem(xs, ws, stride=stride, padding=padding, dilation=dilation, groups=groups)
    x = rng.standard_normal(xs)
    image_major = caffe.im2col(x, p, batch_inner=False).copy()  # (C, R, S, N, Ho, Wo)
    batch_inner = caffe.im2col(x, p, batch_inner=True)  # (C, R, S, Ho, Wo, N)
    np.testing.assert_array_equal(batch_inner, image_major.transpose(0, 1, 2, 4, 5, 3))


_conv_references = {}


def _conv_case(name, dtype):
    """Inputs (rounded to dtype) of a case and the float64 references, with their bounds'
    magnitudes: computed once, shared by every device."""
    key = (name, dtype)
    if key not in _conv_references:
        xs, ws, stride, padding, dilation, groups = CASES[name]
        geo = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        rng = np.random.default_rng(list(CASES).index(name))
        y_shape = ops.ConvProblem(xs, ws, **geo).out_shape
        x, w, b, dy = (rng.standard_normal(shape).astype(dtype) for shape in (xs, ws, ws[0], y_shape))
        a = {k: np.abs(v) for k, v in dict(x=x, w=w, b=b, dy=dy).items()}
        refs = {"y": (conv2d_forward_ref(x, w, b, **geo), conv2d_forward_ref(a["x"], a["w"], a["b"], **geo)),
                "dx": (conv2d_backward_data_ref(dy, w, xs, **geo),
                       conv2d_backward_data_ref(a["dy"], a["w"], xs, **geo)),
                "dw": (conv2d_backward_filter_ref(x, dy, ws, **geo),
                       conv2d_backward_filter_ref(a["x"], a["dy"], ws, **geo)),
                "db": (conv2d_backward_bias_ref(dy), conv2d_backward_bias_ref(a["dy"]))}
        _conv_references[key] = (geo, (x, w, b, dy), refs)
    return _conv_references[key]


@on_every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("name", CASES)
def test_caffe_conv_matches_reference(target, name, dtype):
    geo, inputs, refs = _conv_case(name, dtype)
    x, w, b, dy = place(target, *inputs)
    got = {"y": caffe.conv2d_forward(x, w, b, **geo), "dx": caffe.conv2d_backward_data(dy, w, x.shape, **geo),
           "dw": caffe.conv2d_backward_filter(x, dy, w.shape, **geo), "db": caffe.conv2d_backward_bias(dy)}
    assert_on(target, *got.values())
    for what, (want, magnitude) in refs.items():
        assert got[what].dtype == dtype, what
        assert_within_bound(got[what], want, magnitude, CONV_RTOL[dtype], 1e-30, what)


def test_col_buffer_bytes_is_the_lowered_matrix():
    p = ops.ConvProblem((16, 3, 227, 227), (96, 3, 11, 11), stride=4)
    assert caffe.col_buffer_bytes(p) == 3 * 11 * 11 * 16 * 55 * 55 * 4
    # the GPU devices lower one image at a time, as Caffe's GPU path
    assert caffe.col_buffer_bytes(p, "cudasim") == 3 * 11 * 11 * 55 * 55 * 4


# ---- the GPU devices' lowering: minifw's im2col and col2im CUDA kernels ----------------

def _lowering_problem(name, dtype=np.float64):
    xs, ws, stride, padding, dilation, groups = CASES[name]
    return ops.ConvProblem(xs, ws, stride=stride, padding=padding, dilation=dilation, groups=groups, dtype=dtype)


@on_the_gpu_devices
@pytest.mark.parametrize("name", ["stride2_pad1_dil2", "groups2_pad2", "depthwise_nonsquare"])
def test_the_im2col_kernel_lowers_each_image_as_the_cpu_does(target, name, rng):
    p = _lowering_problem(name)
    (n, c, _, _), (_, _, r, s), (_, _, ho, wo) = p.x_shape, p.w_shape, p.out_shape
    x = rng.standard_normal(p.x_shape)
    cpu = caffe.im2col(x, p, batch_inner=False).copy()  # (C, R, S, N, Ho, Wo), NumPy's strided copies
    gpu_x, col = place(target, x), devices.empty((c * r * s, ho * wo), np.float64, target)
    im2col = devices.kernel_for("conv", "im2col", gpu_x)
    for i in range(n):
        im2col(p._args, gpu_x, i, col)
        np.testing.assert_array_equal(col, cpu[:, :, :, i].reshape(c * r * s, ho * wo))  # copies: exact


@on_the_gpu_devices
@pytest.mark.parametrize("name", ["stride2_pad1_dil2", "groups2_pad2"])
def test_the_col2im_kernel_is_the_adjoint_of_im2col_on_one_image(target, name, rng):
    # <im2col(x_i), g> == <x_i, col2im(g)_i>, and col2im writes image i alone
    p = _lowering_problem(name)
    (n, c, _, _), (_, _, r, s), (_, _, ho, wo) = p.x_shape, p.w_shape, p.out_shape
    x, g = rng.standard_normal(p.x_shape), rng.standard_normal((c * r * s, ho * wo))
    gpu_x, gpu_g, col = place(target, x, g) + (devices.empty(g.shape, np.float64, target),)
    dx = place(target, np.full(p.x_shape, np.nan))
    i = n - 1
    devices.kernel_for("conv", "im2col", gpu_x)(p._args, gpu_x, i, col)
    devices.kernel_for("conv", "col2im", gpu_g)(p._args, gpu_g, i, dx)
    dx = host(dx)
    assert np.isnan(dx[:i]).all(), "col2im wrote another image"
    np.testing.assert_allclose(np.sum(host(col) * g), np.sum(x[i] * dx[i]), rtol=1e-12)


@on_the_gpu_devices
def test_the_gpu_path_lowers_every_image_with_the_kernels_into_a_kept_col_buffer(target, monkeypatch, rng):
    calls = []  # (direction, image, address of col)
    kernel_for = devices.kernel_for

    def spy(family, direction, array):
        kernel = kernel_for(family, direction, array)

        def call(args, a, image, b):
            col = b if direction == "im2col" else a
            interface = getattr(col, "__cuda_array_interface__", None) or col.__cudasim_array_interface__
            calls.append((direction, image, interface["data"][0]))
            return kernel(args, a, image, b)
        assert (family, devices.of(array)) == ("conv", devices.get(target))
        return call

    monkeypatch.setattr(devices, "kernel_for", spy)
    x, w, dy = place(target, rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3)),
                     rng.standard_normal((2, 4, 4, 4)))
    caffe.conv2d_forward(x, w)
    caffe.conv2d_backward_data(dy, w, x.shape)
    caffe.conv2d_backward_filter(x, dy, w.shape)
    assert [c[:2] for c in calls] == [("im2col", 0), ("im2col", 1), ("col2im", 0), ("col2im", 1),
                                      ("im2col", 0), ("im2col", 1)]
    assert len({c[2] for c in calls}) == 1, "the col buffer is kept between images and calls"


def test_the_cpu_path_runs_no_native_kernel(monkeypatch, rng):
    # the CPU yardstick is NumPy and OpenBLAS, as Caffe's CPU path is its own im2col and a BLAS
    for lookup in ("kernel", "kernel_for"):
        monkeypatch.setattr(devices, lookup, lambda *args: pytest.fail(f"native kernel {args[:2]} looked up"))
    x, w = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    y = caffe.conv2d_forward(x, w, padding=1)
    caffe.conv2d_backward_data(y, w, x.shape, padding=1)
    caffe.conv2d_backward_filter(x, y, w.shape, padding=1)
    caffe.bias_backward(y)
    pooled, indices = caffe.pool2d_forward(y, 3, stride=1, return_indices=True)
    caffe.pool2d_backward(pooled, y.shape, 3, stride=1, indices=indices)
    caffe.activation_backward(y, caffe.activation_forward(y, "relu"), "relu")
    caffe.lrn_backward(y, y, *caffe.lrn_forward(y, 3), 3)
    caffe.batch_norm_backward(y, y, None, *caffe.batch_norm_forward_training(y, None, None, None, None)[1:])
    caffe.dropout_backward(y, caffe.dropout_forward(y, 0.5, seed=0)[1], 0.5)
    logits = caffe.gemm(y.reshape(2, -1), rng.standard_normal((5, 144)), trans_b=True)
    loss, log_probs = caffe.cross_entropy_forward(logits, np.array([1, 4]))
    caffe.cross_entropy_backward(1.0, log_probs, np.array([1, 4]))
    caffe.sgd_step(w, w.copy(), np.zeros_like(w), lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0,
                   nesterov=False, maximize=False, first_step=True)


# The binding's own checks of the lowering kernels, in a child process (binding_tests): a
# check that let a bad pointer through would crash it, not this run.
LOWERING_SETUP = """
args = (2, 4, 5, 5, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2)  # (N, C, H, W, K, C/groups, R, S, ...): Ho = Wo = 5
x, col = np.ones((2, 4, 5, 5), np.float32), np.empty((36, 25), np.float32)
buf = np.empty(200 + 900, np.float32)
im2col, col2im = on_cudasim(_native.conv_im2col_cudasim_f32), on_cudasim(_native.conv_col2im_cudasim_f32)
"""
LOWERING_CASES = {
    "im2col_runs": ("im2col(args, x, 1, col)", None, ""),
    "col2im_runs": ("col2im(args, col, 0, x.copy())", None, ""),
    "image_negative": ("im2col(args, x, -1, col)", ValueError, r"n: expected an image index in \[0, 2\), got -1"),
    "image_past_the_batch": ("col2im(args, col, 2, x.copy())", ValueError, r"n: expected an image index in \[0, 2\)"),
    "col_one_image_short": ("im2col(args, x, 0, col[:35])", ValueError, "col: expected 900 elements, got 875"),
    "x_of_one_image": ("im2col(args, x[:1], 0, col)", ValueError, "x: expected 200 elements, got 100"),
    "col_float64": ("im2col(args, x, 0, col.astype(np.float64))", TypeError, "col: expected dtype float32"),
    "col_strided": ("im2col(args, x, 0, np.empty((36, 50), np.float32)[:, ::2])", ValueError,
                    "col: expected a C-contiguous array"),
    "dx_read_only": ("col2im(args, col, 0, np.broadcast_to(x.copy(), x.shape))", ValueError,
                     "dx: expected a writable array"),
    "col_overlaps_x": ("im2col(args, buf[:200], 0, buf[100:1000])", ValueError, "col: must not share memory with x"),
    "dx_beside_col": ("col2im(args, buf[200:], 0, buf[:200])", None, ""),
    "dx_is_col": ("col2im(args, buf[:900], 0, buf[:200])", ValueError, "dx: must not share memory with col"),
    "groups_do_not_divide": ("im2col((2, 4, 5, 5, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 3), x, 0, col)", ValueError,
                             "channels do not match groups"),
    "batch_wraps": ("im2col((2 ** 62 + 2, 4, 5, 5, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2), x, 0, col)", ValueError,
                    "sizes overflow"),
    "no_cpu_entry_point": ("_native.conv_im2col_f32", AttributeError, "conv_im2col_f32"),
}
binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(LOWERING_SETUP, LOWERING_CASES)


# ---- the other layers ----------------------------------------------------------------
#
# Error model: each output is a few roundings of a short sum, a ratio or an
# elementwise function, so the error is a few ulp of the magnitude of the terms it
# is made of. The bounds below are rtol times that magnitude (assert_within_bound):
# ~80 float32 ulp (eps 6e-8) or ~5000 float64 ulp, loose enough for any summation
# order and tight enough that a wrong term, window or divisor fails by orders of
# magnitude.

RTOL = {np.float32: 5e-6, np.float64: 1e-12}
TINY = 1e-30  # absolute slack for values that are exactly 0 in the reference


def _within(got, want, magnitude, dtype, what):
    assert got.dtype == dtype, f"{what}: dtype {got.dtype}"
    assert_within_bound(got, want, magnitude, RTOL[dtype], TINY, what)


def test_no_entry_point_is_the_primitive():
    for name in ("pool2d_forward", "pool2d_backward", "activation_forward", "activation_backward",
                 "softmax_forward", "softmax_backward", "cross_entropy_forward", "cross_entropy_backward",
                 "lrn_forward", "lrn_backward", "batch_norm_forward_training", "batch_norm_forward_inference",
                 "batch_norm_backward", "dropout_forward", "dropout_backward"):
        assert getattr(caffe, name).__module__ == "minifw.engines.caffe", name


# ---- pooling ---------------------------------------------------------------------------

# (x_shape, kernel_size, stride, padding, ceil_mode[, dilation: max pooling only])
POOL_CASES = {
    "lenet_2x2s2": ((2, 3, 8, 8), 2, 2, 0, False),
    "alexnet_3x3s2_ceil_13": ((2, 3, 13, 13), 3, 2, 0, True),
    "n1_c1_odd_7x9_3x3s2_ceil": ((1, 1, 7, 9), 3, 2, 0, True),
    "kernel_equals_input": ((2, 3, 5, 7), (5, 7), None, 0, False),
    "stride_greater_than_kernel": ((1, 2, 11, 13), 2, 3, 0, False),
    "pad1_3x3s1": ((2, 2, 6, 7), 3, 1, 1, False),
    "pad1_3x3s2_ceil": ((1, 3, 10, 10), 3, 2, 1, True),
    "ceil_drops_window_in_padding": ((1, 2, 5, 5), 2, 2, 1, True),
    "rect_2x3_s1x3_pad1x0": ((2, 2, 9, 11), (2, 3), (1, 3), (1, 0), False),
    "single_pixel": ((1, 1, 1, 1), 1, None, 0, False),
    "ceil_window_overhangs_padded_input": ((1, 2, 1, 5), 4, 2, 1, True),
    "dilated_2_3x3s1": ((2, 3, 9, 11), 3, 1, 0, False, 2),
    "dilated_2x3_pad1_ceil": ((1, 2, 10, 13), (3, 2), 2, 1, True, (2, 3)),
    "dilated_windows_share_taps": ((1, 2, 6, 9), 2, 2, 1, False, 2),
    "dilation_larger_than_input": ((1, 2, 3, 3), 2, 1, 1, False, 3),
}
POOL_MODES = {"max": dict(mode="max"), "avg_include_pad": dict(mode="avg", count_include_pad=True),
              "avg_exclude_pad": dict(mode="avg", count_include_pad=False)}


def _pool_args(case, mode):
    x_shape, kernel_size, stride, padding, ceil_mode, *dilation = case
    args = dict(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode, **mode)
    if dilation:
        args["dilation"] = dilation[0]
    return args


POOL_CASE_MODES = [pytest.param(case, mode, id=f"{name}-{mode_name}") for name, case in POOL_CASES.items()
                   for mode_name, mode in POOL_MODES.items() if len(case) == 5 or mode["mode"] == "max"]


@on_every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("case,mode", POOL_CASE_MODES)
def test_pooling_matches_reference(target, rng, case, dtype, mode):
    args = _pool_args(case, mode)
    x = rng.standard_normal(case[0]).astype(dtype)
    y_ref, idx_ref = pool2d_ref(x, **args)
    dy = rng.standard_normal(y_ref.shape).astype(dtype)
    on = place(target, x, dy)
    if args["mode"] == "max":
        y, idx = caffe.pool2d_forward(on[0], return_indices=True, **args)
        assert y.dtype == dtype and idx.dtype == np.int64
        np.testing.assert_array_equal(y, y_ref)  # a selection: exact
        np.testing.assert_array_equal(idx, idx_ref)
        np.testing.assert_array_equal(caffe.pool2d_forward(on[0], **args), y_ref)
        dx = caffe.pool2d_backward(on[1], x.shape, indices=idx, **args)
        assert_on(target, y, idx)
        dref = pool2d_backward_ref(dy, x.shape, indices=idx_ref, **args)
        dmag = pool2d_backward_ref(np.abs(dy), x.shape, indices=idx_ref, **args)
    else:
        y = caffe.pool2d_forward(on[0], **args)
        _within(y, y_ref, pool2d_ref(np.abs(x), **args)[0], dtype, "avg forward")
        dx = caffe.pool2d_backward(on[1], x.shape, **args)
        assert_on(target, y)
        dref = pool2d_backward_ref(dy, x.shape, **args)
        dmag = pool2d_backward_ref(np.abs(dy), x.shape, **args)
    assert_on(target, dx)
    _within(dx, dref, dmag, dtype, "backward")


@on_every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_max_pool_indices_equal_the_primitives_among_ties_and_nan(target, rng, dtype):
    x = rng.integers(0, 3, (2, 3, 9, 12)).astype(dtype)  # many ties
    x[0, 0, 1, 1] = x[0, 1, 4, 4] = x[0, 1, 4, 6] = x[1, 2, 0, 0] = np.nan
    x[1, 0, 2:, 3:] = -np.inf  # whole windows of -inf: the index of their first input element
    x[1, 1, 2, 2] = np.inf
    for geometry in (dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
                     dict(kernel_size=2, stride=3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                     dict(kernel_size=2, stride=1, padding=1, dilation=(2, 3))):
        y, idx = caffe.pool2d_forward(place(target, x), return_indices=True, **geometry)
        y_ops, idx_ops = ops.pool2d_forward(x, return_indices=True, **geometry)
        np.testing.assert_array_equal(idx, idx_ops)
        np.testing.assert_array_equal(y, y_ops)  # NaN where NaN
        np.testing.assert_array_equal(caffe.pool2d_forward(place(target, x), **geometry), y_ops)
        dy = rng.standard_normal(y.shape).astype(dtype)
        _within(caffe.pool2d_backward(place(target, dy), x.shape, indices=idx, **geometry),
                ops.pool2d_backward(dy, x.shape, indices=idx_ops, **geometry).astype(np.float64),
                ops.pool2d_backward(np.abs(dy), x.shape, indices=idx_ops, **geometry), dtype, "backward")


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["include_pad", "exclude_pad"])
def test_heavily_padded_huge_window_visits_only_taps_inside_the_input(count_include_pad):
    # 2**40-wide windows padded by 2**39 over a 1x2 input: the loop over taps must
    # skip those that land only in the padding, and the area 2**80 must not wrap.
    x = np.array([[[[3.0, 5.0]]]])
    args = dict(kernel_size=(1, 2 ** 40), stride=1, padding=(0, 2 ** 39), mode="avg",
                count_include_pad=count_include_pad)
    y = caffe.pool2d_forward(x, **args)
    np.testing.assert_array_equal(y, ops.pool2d_forward(x, **args))
    np.testing.assert_array_equal(caffe.pool2d_backward(np.ones_like(y), x.shape, **args),
                                  ops.pool2d_backward(np.ones_like(y), x.shape, **args))


@pytest.mark.parametrize("kernel", [(1, 2 ** 40), (70001, 70001)], ids=["2_40_wide", "70001_square"])
def test_max_pooling_with_a_huge_padded_kernel_numbers_only_the_taps_it_visits(kernel):
    # (2**40 taps would overflow the tap codes of the indices' first-maximum pass, and 70001**2
    # make a table of 4.9e9 entries: only taps that reach the input are numbered.)
    x = np.array([[[[3.0, 5.0, 1.0], [2.0, 7.0, 0.0], [4.0, 4.0, 6.0]]]])
    x = x[:, :, :1] if kernel[0] == 1 else x  # a kernel of height 1 and no padding: one row
    args = dict(kernel_size=kernel, stride=1, padding=tuple(k // 2 for k in kernel), mode="max")
    y, idx = caffe.pool2d_forward(x, return_indices=True, **args)
    y_ops, idx_ops = ops.pool2d_forward(x, return_indices=True, **args)
    np.testing.assert_array_equal(y, y_ops)
    np.testing.assert_array_equal(idx, idx_ops)


def _caffes_max_pool_backward_loop(dy, indices, x_shape):
    """Caffe's MaxPoolBackward: for each output in order, bottom_diff[mask] += top_diff, in
    dy's type."""
    dx = np.zeros(x_shape, dy.dtype)
    for n, c in np.ndindex(*x_shape[:2]):
        plane = dx[n, c].reshape(-1)
        for i, at in enumerate(indices[n, c].reshape(-1)):
            plane[at] += dy[n, c].reshape(-1)[i]
    return dx


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_overlapping_max_pool_backward_adds_in_caffes_order(rng, dtype):
    # Caffe's MaxPoolBackward: for each output in order, bottom_diff[mask] += top_diff, in the
    # blob's type. Overlapping windows (3/2, ceil) with ties make inputs that receive from up
    # to four outputs; the engine's float32 sums must be those of that loop, bit for bit.
    x = rng.integers(0, 3, (2, 3, 9, 8)).astype(dtype)  # many ties: shared maxima
    args = dict(kernel_size=3, stride=2, ceil_mode=True, mode="max")
    y, indices = caffe.pool2d_forward(x, return_indices=True, **args)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = caffe.pool2d_backward(dy, x.shape, indices=indices, **args)
    assert dx.dtype == dtype
    np.testing.assert_array_equal(dx, _caffes_max_pool_backward_loop(dy, indices, x.shape))
    assert np.count_nonzero(np.bincount(indices.reshape(6, -1)[0]) > 1)  # an input did receive twice


@pytest.mark.parametrize("chunk", [1, 40, 1 << 20], ids=["plane_by_plane", "uneven_chunks", "one_chunk"])
@pytest.mark.parametrize("geometry", [dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=2)],
                         ids=["overlapping", "disjoint"])
def test_max_pool_backward_scatters_in_chunks_of_planes(monkeypatch, rng, chunk, geometry):
    # the host scatter runs a chunk of (image, channel) planes at a time: every chunking
    # gives Caffe's loop, bit for bit (chunk 40 takes two planes of 4 x 4 outputs a chunk,
    # the last chunk one)
    monkeypatch.setattr(caffe, "SCATTER_CHUNK_ELEMENTS", chunk)
    x = rng.integers(0, 3, (3, 3, 9, 8)).astype(np.float32)
    y, indices = caffe.pool2d_forward(x, return_indices=True, **geometry)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    np.testing.assert_array_equal(caffe.pool2d_backward(dy, x.shape, indices=indices, **geometry),
                                  _caffes_max_pool_backward_loop(dy, indices, x.shape))


@pytest.mark.parametrize("bad", [-1, 72, 2 ** 40], ids=["negative", "one_past_the_plane", "huge"])
def test_max_pool_backward_names_the_first_index_outside_in_a_later_chunk(monkeypatch, bad):
    monkeypatch.setattr(caffe, "SCATTER_CHUNK_ELEMENTS", 20)  # a plane (16 outputs) per chunk
    x = np.zeros((2, 3, 9, 8), np.float32)
    y, indices = caffe.pool2d_forward(x, kernel_size=3, stride=2, ceil_mode=True, return_indices=True)
    indices[1, 2, 3, 1] = bad  # the last plane, flat position 5 * 16 + 13 = 93
    indices[1, 2, 3, 3] = 999
    with pytest.raises(ValueError, match=rf"pool2d_backward: indices: value {bad} at flat position 93 is "
                                         rf"outside the input plane \[0, 72\)"):
        caffe.pool2d_backward(y, x.shape, kernel_size=3, stride=2, ceil_mode=True, indices=indices)


# ---- activations -----------------------------------------------------------------------

ACTIVATION_PARAMS = {"leaky_relu": dict(negative_slope=0.1), "elu": dict(alpha=1.3)}
ACTIVATION_SHAPES = {"vector7": (7,), "fc_3x5": (3, 5), "nchw_odd_2x3x5x7": (2, 3, 5, 7)}


def _activation_sample(rng, shape, dtype):
    """Normal values with the kinks (0 and 6) and large magnitudes mixed in."""
    x = 4 * rng.standard_normal(shape)
    specials = [0.0, 6.0, -6.0, 30.0, -30.0, 1e-3, -1e-3, 6.0001, 5.9999, 100.0, -100.0]
    flat = x.reshape(-1)
    flat[:min(len(specials), flat.size)] = specials[:flat.size]
    return x.astype(dtype)


@on_every_device
@pytest.mark.parametrize("shape", ACTIVATION_SHAPES.values(), ids=ACTIVATION_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_matches_reference(target, rng, mode, dtype, shape):
    params = ACTIVATION_PARAMS.get(mode, {})
    x = _activation_sample(rng, shape, dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    on_x, on_dy = place(target, x, dy)
    y = caffe.activation_forward(on_x, mode, **params)
    y_ref = activation_ref(x, mode, **params)
    _within(y, y_ref, np.abs(y_ref), dtype, f"{mode} forward")
    # dy * f'(y) may lose relative accuracy where f' is 1 - y near y = 1, never more than
    # a few ulp of |dy|
    dref = activation_backward_ref(dy, x, mode, **params)
    dx, dx_from_x = (caffe.activation_backward(on_dy, y, mode, **params),
                     caffe.activation_backward(on_dy, y, mode, x=on_x, **params))
    assert_on(target, y, dx, dx_from_x)
    _within(dx, dref, np.abs(dy) + np.abs(dref), dtype, f"{mode} backward")
    _within(dx_from_x, dref, np.abs(dy) + np.abs(dref), dtype, f"{mode} backward with x")


@pytest.mark.parametrize("mode,params", [("leaky_relu", dict(negative_slope=-0.5)), ("elu", dict(alpha=-0.7))],
                         ids=["leaky_negative_slope", "elu_negative_alpha"])
def test_activation_backward_takes_the_branch_on_x_when_y_cannot_tell(rng, mode, params):
    x = rng.standard_normal((3, 40))
    dy = rng.standard_normal(x.shape)
    y = caffe.activation_forward(x, mode, **params)
    with pytest.raises(ValueError, match="activation_backward: x is required"):
        caffe.activation_backward(dy, y, mode, **params)
    np.testing.assert_allclose(caffe.activation_backward(dy, y, mode, x=x, **params),
                               activation_backward_ref(dy, x, mode, **params), rtol=1e-14)


@on_every_device
@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_inplace_writes_into_x(target, rng, mode):
    x = place(target, _activation_sample(rng, (2, 4, 6, 5), np.float32))
    expected = caffe.activation_forward(x, mode)
    y = caffe.activation_forward(x, mode, inplace=True)
    assert y is x
    np.testing.assert_array_equal(x, expected)


@pytest.mark.parametrize("mode", ops.activation.MODES)
def test_activation_special_values_as_the_primitives(mode):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, 1e4, -1e4], np.float32)
    dy = np.ones_like(x)
    y = caffe.activation_forward(x, mode)
    np.testing.assert_array_equal(y, ops.activation_forward(x, mode))
    with np.errstate(invalid="ignore"):  # inf * 0 in the sigmoid and tanh derivatives
        np.testing.assert_array_equal(caffe.activation_backward(dy, y, mode),
                                      ops.activation_backward(dy, y, mode))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("inplace", [False, True], ids=["new", "inplace"])
def test_relu_past_the_kept_row_of_zeros(rng, dtype, inplace):
    # ReLU runs over rows of 16384 values against a kept row of zeros, the tail after them
    # against a scalar: sizes below, at and past whole rows, with specials in both parts
    for size in (16383, 16384, 2 * 16384 + 5):
        x = rng.standard_normal(size).astype(dtype)
        x[[0, 5, 7, -1, -2, -3]] = [np.nan, -np.inf, -0.0, np.nan, -np.inf, np.inf]
        expected = np.maximum(x, 0)
        y = caffe.activation_forward(x, "relu", inplace=inplace)
        assert (y is x) == inplace
        np.testing.assert_array_equal(y, expected)
    strided = rng.standard_normal((3, 2 * 16384)).astype(dtype)[:, ::2]  # not contiguous
    np.testing.assert_array_equal(caffe.activation_forward(strided, "relu"), np.maximum(strided, 0))


def test_activation_empty_and_zero_d_inputs_give_arrays():
    assert caffe.activation_forward(np.zeros((0, 3), np.float32), "tanh").shape == (0, 3)
    y = caffe.activation_forward(np.full((), -2.0), "relu")
    assert isinstance(y, np.ndarray) and y.shape == () and y == 0.0
    dx = caffe.activation_backward(np.full((), 3.0), np.full((), 0.5), "sigmoid")
    assert isinstance(dx, np.ndarray) and dx == 0.75


# ---- softmax and cross-entropy ---------------------------------------------------------

SOFTMAX_SHAPES = {"rows_1x1": (1, 1), "rows_odd_5x37": (5, 37), "nchw_1x1x1x1": (1, 1, 1, 1),
                  "nchw_odd_2x3x5x7": (2, 3, 5, 7), "nchw_n1_c21_3x4": (1, 21, 3, 4)}


@on_every_device
@pytest.mark.parametrize("shape", SOFTMAX_SHAPES.values(), ids=SOFTMAX_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_matches_reference(target, rng, log, dtype, shape):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    y = caffe.softmax_forward(place(target, x), log=log)
    dx = caffe.softmax_backward(place(target, dy), y, log=log)
    assert_on(target, y, dx)
    y_ref = softmax_ref(x, log=log)
    # log-softmax is x - max - log(sum): its error is relative to those terms
    magnitude = np.abs(x) + np.abs(x).max(axis=1, keepdims=True) + 1 if log else y_ref
    _within(y, y_ref, magnitude, dtype, "forward")
    # dx = dy - p * sum(dy) (log) or p * (dy - sum(p * dy)): relative to the terms
    p = softmax_ref(x)
    if log:
        dmag = np.abs(dy) + p * np.sum(np.abs(dy), axis=1, keepdims=True)
    else:
        dmag = p * (np.abs(dy) + np.sum(p * np.abs(dy), axis=1, keepdims=True))
    _within(dx, softmax_backward_ref(dy, x, log=log), dmag, dtype, "backward")


def test_softmax_of_huge_inputs_does_not_overflow():
    x = np.array([[1e4, -1e4, 0.0], [3e38, 3e38, -3e38]], np.float32)
    np.testing.assert_array_equal(caffe.softmax_forward(x), [[1, 0, 0], [0.5, 0.5, 0]])


CE_SHAPES = {"rows_7x5": ((7, 5), (7,)), "rows_n1_1x3": ((1, 3), (1,)), "nchw_2x4x3x5": ((2, 4, 3, 5), (2, 3, 5))}
CE_SETTINGS = {
    "plain": dict(),
    "ignore_class_2": dict(ignore_index=2),
    "ignore_default_-100": dict(ignore_index=-100),
    "smoothing_0.1": dict(label_smoothing=0.1),
    "smoothing_1": dict(label_smoothing=1.0),
    "ignore_and_smoothing": dict(ignore_index=1, label_smoothing=0.3),
}


@on_every_device
@pytest.mark.parametrize("settings", CE_SETTINGS.values(), ids=CE_SETTINGS.keys())
@pytest.mark.parametrize("shapes", CE_SHAPES.values(), ids=CE_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_cross_entropy_matches_reference(target, rng, dtype, shapes, settings):
    shape, tshape = shapes
    logits = (2 * rng.standard_normal(shape)).astype(dtype)
    labels = rng.integers(0, shape[1], tshape)
    if settings.get("ignore_index") == -100:
        labels.reshape(-1)[::3] = -100
    on_logits, on_labels = place(target, logits, labels)
    # logits of size ~2 over a few classes: the terms are O(10)
    rtol = 10 * RTOL[dtype]
    for reduction in ("mean", "sum", "none"):
        loss, log_probs = caffe.cross_entropy_forward(on_logits, on_labels, reduction=reduction, **settings)
        ref = cross_entropy_ref(logits, labels, reduction=reduction, **settings)
        assert loss.dtype == dtype and loss.shape == np.shape(ref), reduction
        np.testing.assert_allclose(loss, ref, rtol=rtol, atol=rtol, err_msg=reduction)
        np.testing.assert_allclose(log_probs, softmax_ref(logits, log=True), rtol=rtol, atol=rtol, err_msg=reduction)
        grad = rng.standard_normal(tshape).astype(dtype) if reduction == "none" else 0.7
        d = caffe.cross_entropy_backward(place(target, grad) if reduction == "none" else grad, log_probs, on_labels,
                                         reduction=reduction, **settings)
        assert d.dtype == dtype, reduction
        assert_on(target, loss, log_probs, d)
        np.testing.assert_allclose(d, cross_entropy_backward_ref(grad, logits, labels, reduction=reduction, **settings),
                                   rtol=rtol, atol=rtol * np.max(np.abs(grad)), err_msg=reduction)


@on_every_device
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 2, 3)], ids=["rows", "nchw"])
def test_cross_entropy_all_ignored(target, shape):
    logits = place(target, np.ones(shape))
    labels = place(target, np.full((shape[0],) + shape[2:], -100))
    loss, log_probs = caffe.cross_entropy_forward(logits, labels)
    assert np.isnan(host(loss))  # 0 / 0, as PyTorch
    assert host(caffe.cross_entropy_forward(logits, labels, reduction="sum")[0]) == 0
    np.testing.assert_array_equal(caffe.cross_entropy_backward(1.0, log_probs, labels), 0)


@on_every_device
def test_cross_entropy_ignored_positions_give_exact_zeros_even_over_inf(target):
    logits = np.array([[np.inf, 0.0, 1.0], [0.5, 2.0, -1.0], [np.nan, 1.0, 1.0]])
    labels = np.array([-100, 1, -100])
    on_logits, on_labels, ones = place(target, logits, labels, np.ones(3))
    loss, log_probs = caffe.cross_entropy_forward(on_logits, on_labels, reduction="none", label_smoothing=0.2)
    loss = host(loss)
    assert loss[0] == 0 and loss[2] == 0 and np.isfinite(loss[1])
    d = host(caffe.cross_entropy_backward(ones, log_probs, on_labels, reduction="none", label_smoothing=0.2))
    np.testing.assert_array_equal(d[[0, 2]], 0)
    want = ops.cross_entropy_backward(np.ones(3), devices.to_device(log_probs, devices.CPU), labels,
                                      reduction="none", label_smoothing=0.2)
    np.testing.assert_allclose(d, want, rtol=1e-15)


# ---- local response normalization ------------------------------------------------------

LRN_SHAPES = {"single": (1, 1, 1, 1), "odd_2x7x5x6": (2, 7, 5, 6), "n1_c3_window_wider_than_c": (1, 3, 4, 4),
              "alexnet_like_2x96x3x3": (2, 96, 3, 3)}
LRN_PARAMS = {"alexnet": dict(alpha=1e-4, beta=0.75, k=2.0),
              "strong": dict(alpha=2.0, beta=0.6, k=0.5)}  # scale far from k


def _lrn_backward_magnitude(dy, x, size, alpha, beta, k):
    """|dy| scale^-beta + 2 alpha beta / size |x| S: the two terms dx is the difference
    of, where S is the largest window sum of |dy y / scale| along the channels at that
    position. A sliding sum (Caffe's) subtracts what it added earlier, so its rounding
    error is relative to every window it slid through, not only the current one."""
    y, scale = lrn_ref(x, size, alpha, beta, k)
    ratio = np.abs(dy * y / scale)
    c = x.shape[1]
    sums = np.stack([ratio[:, max(0, ch - (size - 1) // 2):ch + size // 2 + 1].sum(axis=1) for ch in range(c)], 1)
    return np.abs(dy) * scale ** -beta + 2 * alpha * beta / size * np.abs(x) * sums.max(axis=1, keepdims=True)


@on_every_device
@pytest.mark.parametrize("params", LRN_PARAMS.values(), ids=LRN_PARAMS.keys())
@pytest.mark.parametrize("shape", LRN_SHAPES.values(), ids=LRN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_lrn_matches_reference(target, rng, dtype, shape, params):
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    on_x, on_dy = place(target, x, dy)
    for size in (1, 2, 5, 6):  # odd and even windows, wider than some of the channel counts
        y, scale = caffe.lrn_forward(on_x, size, **params)
        y_ref, scale_ref = lrn_ref(x, size, **params)
        _within(scale, scale_ref, scale_ref, dtype, f"scale, size {size}")
        _within(y, y_ref, np.abs(y_ref), dtype, f"y, size {size}")
        dx = caffe.lrn_backward(on_dy, on_x, y, scale, size, **params)
        assert_on(target, y, scale, dx)
        _within(dx, lrn_backward_ref(dy, x, size, **params), _lrn_backward_magnitude(dy, x, size, **params), dtype,
                f"dx, size {size}")


def test_lrn_keyword_size_as_the_functions_call_it(rng):
    x = rng.standard_normal((1, 4, 2, 2))
    y, scale = caffe.lrn_forward(x, size=3, alpha=1e-2, beta=0.75, k=1.0)
    np.testing.assert_allclose(y, lrn_ref(x, 3, 1e-2, 0.75, 1.0)[0], rtol=1e-14)
    assert caffe.lrn_backward(x, x, y, scale, size=3, alpha=1e-2, beta=0.75, k=1.0).shape == x.shape


# ---- batch normalization ---------------------------------------------------------------

BN_SHAPES = {"fc_n2_c1": (2, 1), "fc_odd_7x13": (7, 13), "nchw_n1_c3_5x7": (1, 3, 5, 7),
             "nchw_2x4x1x1": (2, 4, 1, 1), "nchw_2x3x9x11": (2, 3, 9, 11)}


def _bn_inputs(rng, shape, dtype, affine):
    c = shape[1]
    x = (2 * rng.standard_normal(shape) + 5).astype(dtype)  # mean far from 0: the mean must be subtracted first
    w = rng.standard_normal(c).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    return x, w, b


def _bn_dx_magnitude(dy, x, w, mean, invstd):
    """The terms of dx = w invstd (dy - mean(dy) - xhat mean(dy xhat)): with few values
    per channel they nearly cancel, and the rounding error is relative to them."""
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    gain = np.abs(np.ones_like(mean) if w is None else np.asarray(w, np.float64)) * invstd
    xhat = np.abs((x - mean.reshape(shape)) * invstd.reshape(shape))
    dy = np.abs(np.asarray(dy, np.float64))
    return gain.reshape(shape) * (dy + dy.mean(axis=axes, keepdims=True)
                                  + xhat * (dy * xhat).mean(axis=axes, keepdims=True))


@on_every_device
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "no_affine"])
@pytest.mark.parametrize("shape", BN_SHAPES.values(), ids=BN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_batch_norm_training_matches_reference(target, rng, dtype, shape, affine):
    x, w, b = _bn_inputs(rng, shape, dtype, affine)
    c = shape[1]
    rm0, rv0 = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    on_x, on_w, on_b, rm, rv = place(target, x, w, b, rm0, rv0)
    y, mean, invstd = caffe.batch_norm_forward_training(on_x, on_w, on_b, rm, rv, momentum=0.3, eps=1e-3)
    assert_on(target, y, mean, invstd, rm, rv)
    y_ref, mean_ref, invstd_ref, var_unbiased = batch_norm_training_ref(x, w, b, eps=1e-3)
    channel = (1, -1) + (1,) * (x.ndim - 2)
    _within(y, y_ref, np.abs(y_ref) + (np.abs(w).reshape(channel) if affine else 1), dtype, "y")  # O(|w|) + |b|
    _within(mean, mean_ref, np.abs(mean_ref), dtype, "save_mean")
    _within(invstd, invstd_ref, invstd_ref, dtype, "save_invstd")
    _within(rm, 0.7 * rm0 + 0.3 * mean_ref, 0.7 * np.abs(rm0) + 0.3 * np.abs(mean_ref), dtype, "running_mean")
    _within(rv, 0.7 * rv0 + 0.3 * var_unbiased, 0.7 * rv0 + 0.3 * var_unbiased, dtype, "running_var")
    dy = rng.standard_normal(shape).astype(dtype)
    dx, dw, db = caffe.batch_norm_backward(place(target, dy), on_x, on_w, mean, invstd)
    assert_on(target, dx, dw, db)
    dx_ref, dw_ref, db_ref = batch_norm_backward_ref(dy, x, w, eps=1e-3)
    _within(dx, dx_ref, _bn_dx_magnitude(dy, x, w, mean_ref, invstd_ref), dtype, "dx")
    m = x.size // c  # dweight, dbias: sums of m terms of O(1)
    _within(dw, dw_ref, np.full(c, m), dtype, "dweight")
    _within(db, db_ref, np.full(c, m), dtype, "dbias")


@on_every_device
@pytest.mark.parametrize("shape", BN_SHAPES.values(), ids=BN_SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_batch_norm_inference_matches_reference(target, rng, dtype, shape):
    x, w, b = _bn_inputs(rng, shape, dtype, affine=True)
    c = shape[1]
    rm, rv = rng.standard_normal(c).astype(dtype) + 5, rng.uniform(0.5, 2, c).astype(dtype)
    channel = (1, -1) + (1,) * (x.ndim - 2)
    for weight, bias in ((w, b), (None, None)):
        y = caffe.batch_norm_forward_inference(*place(target, x, weight, bias, rm, rv), eps=1e-4)
        assert_on(target, y)
        ref = batch_norm_inference_ref(x, weight, bias, rm, rv, eps=1e-4)
        # (x - mean) * invstd is O(10) here: x - mean rounds relative to |x| ~ 10
        _within(y, ref, np.abs(ref) + 10 * (1 if weight is None else np.abs(weight).reshape(channel)), dtype, "y")


def test_batch_norm_without_running_statistics(rng):
    x, w, b = _bn_inputs(rng, (4, 3, 2, 2), np.float64, affine=True)
    y, _, _ = caffe.batch_norm_forward_training(x, w, b, None, None)
    np.testing.assert_allclose(y, batch_norm_training_ref(x, w, b)[0], rtol=1e-12, atol=1e-12)


# ---- dropout ---------------------------------------------------------------------------

@on_every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(1,), (5, 7), (2, 3, 9, 11)], ids=["one", "fc_5x7", "nchw"])
def test_dropout_scales_the_kept_values_by_a_seeded_uint8_mask(target, rng, shape, dtype):
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    on_x, on_dy = place(target, x, dy)
    y, on_mask = caffe.dropout_forward(on_x, 0.3, seed=1234)
    dx = caffe.dropout_backward(on_dy, on_mask, 0.3)
    assert_on(target, y, on_mask, dx)
    mask = host(on_mask)
    assert mask.dtype == np.uint8 and mask.shape == shape and y.dtype == dtype
    assert set(np.unique(mask)) <= {0, 1}
    np.testing.assert_array_equal(caffe.dropout_forward(on_x, 0.3, seed=1234)[1], mask)  # deterministic
    # the kept values are x / (1 - p) rounded once, as the primitives
    np.testing.assert_array_equal(y, np.where(mask == 1, x * dtype(1 / 0.7), 0))
    np.testing.assert_array_equal(dx, np.where(mask == 1, dy * dtype(1 / 0.7), 0))


def test_dropout_of_zero_d_and_empty_inputs():
    y, mask = caffe.dropout_forward(np.full((), 2.0), 0.5, seed=0)
    assert isinstance(y, np.ndarray) and y.shape == mask.shape == () and mask.dtype == np.uint8
    assert y == 4.0 * mask and isinstance(caffe.dropout_backward(np.full((), 1.0), mask, 0.5), np.ndarray)
    assert caffe.dropout_forward(np.zeros((0, 5), np.float32), 0.5, seed=0)[1].shape == (0, 5)


def test_dropout_seeds_give_independent_masks():
    x = np.ones(4096, np.float32)
    a, b = caffe.dropout_forward(x, 0.5, seed=1)[1], caffe.dropout_forward(x, 0.5, seed=2)[1]
    assert 0.4 < np.mean(a != b) < 0.6
    assert caffe.dropout_forward(x, 0.5, seed=2 ** 64 - 1)[1].shape == x.shape


@on_every_device
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keep_fraction(target, p):
    n = 200_000
    _, mask = caffe.dropout_forward(place(target, np.ones(n, np.float32)), p, seed=7)
    # Binomial(n, 1 - p): 5 standard deviations leave a false failure below 1e-6
    assert abs(host(mask).mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)


@on_every_device
def test_dropout_p_zero_and_p_one(target, rng):
    x = rng.standard_normal((3, 70)).astype(np.float32)
    x[0, 0] = np.inf
    on_x, ones = place(target, x, np.ones_like(x))
    y, mask = caffe.dropout_forward(on_x, 0.0, seed=3)
    np.testing.assert_array_equal(y, x)
    assert np.all(host(mask) == 1)
    y, mask = caffe.dropout_forward(on_x, 1.0, seed=3)
    assert_on(target, y, mask)
    assert np.all(host(y) == 0) and np.all(host(mask) == 0)  # no inf / nan from 1 / (1 - p) or inf * 0
    assert np.all(host(caffe.dropout_backward(ones, mask, 1.0)) == 0)
    assert np.all(host(caffe.dropout_backward(ones, mask.astype(bool), 1.0)) == 0)


# ---- inner products and the SGD step (inner_product_layer, sgd_solver) -----------------

@on_every_device
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_gemm_and_bias_backward_match_reference(target, rng, dtype):
    a, b, c = (rng.standard_normal(shape).astype(dtype) for shape in ((5, 7), (3, 7), (5, 3)))
    dy = rng.standard_normal((2, 3, 4, 5)).astype(dtype)
    on_a, on_b, on_c, on_dy = place(target, a, b, c, dy)
    product = caffe.gemm(on_a, on_b, trans_b=True, alpha=0.5)
    assert caffe.gemm(on_a, on_b, on_c, trans_b=True, alpha=0.5, beta=2.0) is on_c
    db, db_rows = caffe.bias_backward(on_dy), caffe.bias_backward(on_dy[:, :, 0, 0])
    assert_on(target, product, on_c, db, db_rows)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    magnitude = 0.5 * np.abs(a64) @ np.abs(b64).T
    _within(product, 0.5 * a64 @ b64.T, magnitude, dtype, "gemm")
    _within(on_c, 0.5 * a64 @ b64.T + 2.0 * c, magnitude + 2.0 * np.abs(c), dtype, "gemm with c")
    _within(db, conv2d_backward_bias_ref(dy), conv2d_backward_bias_ref(np.abs(dy)), dtype, "bias_backward")
    _within(db_rows, dy[:, :, 0, 0].astype(np.float64).sum(0), np.abs(dy[:, :, 0, 0]).sum(0), dtype,
            "bias_backward of rows")


SGD_SETTINGS = {
    "plain": dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    "momentum_first_step": dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
                                first_step=True),
    "momentum_dampening_decay": dict(momentum=0.9, dampening=0.1, weight_decay=1e-2, nesterov=False, maximize=False),
    "nesterov_maximize": dict(momentum=0.8, dampening=0.0, weight_decay=1e-3, nesterov=True, maximize=True),
}


@on_every_device
@pytest.mark.parametrize("settings", SGD_SETTINGS.values(), ids=SGD_SETTINGS.keys())
def test_sgd_step_matches_the_primitives(target, rng, settings):
    p, grad, buf = (rng.standard_normal(40).astype(np.float32) for _ in range(3))
    settings = dict(dict(lr=0.1, first_step=False), **settings)
    want_p, want_buf = p.copy(), buf.copy()
    ops.sgd_step(want_p, grad, want_buf if settings["momentum"] else None, **settings)
    on_p, on_grad, on_buf = place(target, p, grad, buf)
    caffe.sgd_step(on_p, on_grad, on_buf if settings["momentum"] else None, **settings)
    assert_on(target, on_p, on_buf)
    # a few operations per element in another order: a few float32 ulp of the terms
    _within(on_p, want_p.astype(np.float64), np.abs(p) + np.abs(grad) + np.abs(buf), np.float32, "p")
    _within(on_buf, want_buf.astype(np.float64), np.abs(grad) + np.abs(buf), np.float32, "momentum_buffer")


# ---- bad input: what minifw.ops raises -------------------------------------------------

X4 = np.zeros((1, 2, 6, 6))
Y4 = np.zeros((1, 2, 3, 3))
IDX = np.zeros((1, 2, 3, 3), np.int64)
X2 = np.zeros((4, 3))
T1 = np.array([0, 1, 2, 1])
V3 = np.ones(3)
BAD_CALLS = {
    "pool_x_3d": lambda e: e.pool2d_forward(np.zeros((2, 6, 6)), 2),
    "pool_x_int": lambda e: e.pool2d_forward(np.zeros((1, 1, 4, 4), np.int32), 2),
    "pool_padding_over_half_kernel": lambda e: e.pool2d_forward(X4, 3, padding=2),
    "pool_kernel_larger_than_input": lambda e: e.pool2d_forward(X4, 7),
    "pool_bad_mode": lambda e: e.pool2d_forward(X4, 2, mode="min"),
    "pool_indices_for_avg": lambda e: e.pool2d_forward(X4, 2, mode="avg", return_indices=True),
    "pool_backward_without_indices": lambda e: e.pool2d_backward(Y4, X4.shape, 2),
    "pool_backward_indices_int32": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX.astype(np.int32)),
    "pool_backward_index_out_of_plane": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX + 36),
    "pool_backward_index_negative": lambda e: e.pool2d_backward(Y4, X4.shape, 2, indices=IDX - 1),
    "pool_backward_dy_shape": lambda e: e.pool2d_backward(Y4[:, :, :2], X4.shape, 2, indices=IDX),
    "act_unknown_mode": lambda e: e.activation_forward(np.ones(3), "gelu"),
    "act_alpha_nan": lambda e: e.activation_forward(np.ones(3), "elu", alpha=float("nan")),
    "act_inplace_on_a_view": lambda e: e.activation_forward(np.ones((4, 4))[:, ::2], "relu", inplace=True),
    "act_dy_dtype": lambda e: e.activation_backward(np.ones(3, np.float32), np.ones(3), "relu"),
    "act_x_shape": lambda e: e.activation_backward(np.ones(3), np.ones(3), "relu", x=np.ones(2)),
    "softmax_x_3d": lambda e: e.softmax_forward(np.ones((2, 3, 4))),
    "softmax_no_classes": lambda e: e.softmax_forward(np.ones((2, 0))),
    "ce_target_float": lambda e: e.cross_entropy_forward(X2, T1.astype(float)),
    "ce_target_shape": lambda e: e.cross_entropy_forward(X2, T1[:3]),
    "ce_target_out_of_range": lambda e: e.cross_entropy_forward(X2, np.array([0, 1, 3, 1])),
    "ce_smoothing_above_1": lambda e: e.cross_entropy_forward(X2, T1, label_smoothing=1.5),
    "ce_bad_reduction": lambda e: e.cross_entropy_forward(X2, T1, reduction="avg"),
    "ce_grad_array_for_mean": lambda e: e.cross_entropy_backward(np.ones(4), X2, T1),
    "ce_grad_shape_for_none": lambda e: e.cross_entropy_backward(np.ones(3), X2, T1, reduction="none"),
    "lrn_size_zero": lambda e: e.lrn_forward(X4, 0),
    "lrn_x_2d": lambda e: e.lrn_forward(X2, 3),
    "lrn_scale_shape": lambda e: e.lrn_backward(X4, X4, X4, X4[:, :1], 3),
    "bn_one_value_per_channel": lambda e: e.batch_norm_forward_training(np.ones((1, 3, 1, 1)), None, None,
                                                                          None, None),
    "bn_weight_length": lambda e: e.batch_norm_forward_training(X2, np.ones(4), None, None, None),
    "bn_only_running_mean": lambda e: e.batch_norm_forward_training(X2, None, None, np.zeros(3), None),
    "bn_running_var_read_only": lambda e: e.batch_norm_forward_training(
        X2, None, None, np.zeros(3), np.broadcast_to(np.ones(1), (3,))),
    "bn_inference_without_running_var": lambda e: e.batch_norm_forward_inference(X2, None, None, V3, None),
    "bn_backward_save_invstd_shape": lambda e: e.batch_norm_backward(X2, X2, None, V3, np.ones(2)),
    "dropout_p_above_1": lambda e: e.dropout_forward(X2, 1.5, seed=0),
    "dropout_seed_float": lambda e: e.dropout_forward(X2, 0.5, seed=1.0),
    "dropout_seed_negative": lambda e: e.dropout_forward(X2, 0.5, seed=-1),
    "dropout_mask_dtype": lambda e: e.dropout_backward(X2, np.ones((4, 3), np.int32), 0.5),
    "dropout_mask_shape": lambda e: e.dropout_backward(X2, np.ones((4, 2), np.uint8), 0.5),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_raises_what_the_primitives_raise(call):
    with pytest.raises((TypeError, ValueError)) as want:
        call(ops)
    with pytest.raises(want.type) as got:
        call(caffe)
    assert str(got.value) == str(want.value)
