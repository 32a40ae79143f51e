"""The convolution primitives API around the kernels: ConvProblem, which
algorithms support what, workspace queries, find, and the autotune cache."""
import numpy as np
import pytest

import minifw
from minifw import ops
from minifw.ops import conv as conv_module
from reference import assert_within_bound, conv2d_forward_ref, conv_out_size, tolerance

DIRECTIONS = ("forward", "backward_data", "backward_filter")


# ---- ConvProblem ---------------------------------------------------------------

@pytest.mark.parametrize("x_shape,w_shape,geometry,out_shape", [
    pytest.param((1, 1, 28, 28), (20, 1, 5, 5), {}, (1, 20, 24, 24), id="lenet_conv1"),
    pytest.param((16, 3, 227, 227), (96, 3, 11, 11), dict(stride=4), (16, 96, 55, 55), id="alexnet_conv1"),
    pytest.param((2, 96, 27, 27), (256, 48, 5, 5), dict(padding=2, groups=2), (2, 256, 27, 27),
                 id="alexnet_conv2"),
    pytest.param((1, 3, 10, 12), (4, 3, 3, 5), dict(padding=(1, 2)), (1, 4, 10, 12), id="pair_padding"),
    pytest.param((1, 3, 13, 17), (4, 3, 3, 4), dict(stride=(2, 3), padding=(3, 0), dilation=(1, 2)),
                 (1, 4, 9, 4), id="every_pair"),
    pytest.param((1, 2, 6, 6), (3, 2, 3, 3), dict(stride=4), (1, 3, 1, 1), id="stride_past_the_end"),
    pytest.param((1, 2, 5, 7), (3, 2, 5, 7), {}, (1, 3, 1, 1), id="kernel_eq_input"),
    pytest.param((1, 2, 7, 7), (3, 2, 3, 3), dict(dilation=3), (1, 3, 1, 1), id="dilated_kernel_eq_input"),
])
def test_out_shape(x_shape, w_shape, geometry, out_shape):
    p = ops.ConvProblem(x_shape, w_shape, **geometry)
    assert p.out_shape == out_shape
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    st, pd, dl = (pair(geometry.get(k, d)) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1)))
    assert out_shape[2:] == tuple(conv_out_size(x_shape[2 + i], w_shape[2 + i], st[i], pd[i], dl[i]) for i in (0, 1))


def test_problem_normalizes_ints_to_pairs_and_is_a_value():
    a = ops.ConvProblem((2, 4, 9, 9), (6, 2, 3, 3), stride=2, padding=1, dilation=1, groups=2)
    b = ops.ConvProblem([2, 4, 9, 9], [6, 2, 3, 3], stride=(2, 2), padding=[1, 1], dilation=(1, 1), groups=2,
                        dtype=np.float32)
    assert a.stride == (2, 2) and a.padding == (1, 1) and a.dilation == (1, 1) and a.groups == 2
    assert a.x_shape == (2, 4, 9, 9) and a.w_shape == (6, 2, 3, 3)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != ops.ConvProblem((2, 4, 9, 9), (6, 2, 3, 3), stride=2, padding=1, groups=2, dtype="float64")
    assert a.dtype == np.float32 and "ConvProblem" in repr(a)


@pytest.mark.parametrize("dtype", ["float32", "float64", np.float32, np.float64, np.dtype("float64")])
def test_problem_dtype_spellings(dtype):
    assert ops.ConvProblem((1, 1, 3, 3), (1, 1, 1, 1), dtype=dtype).dtype == np.dtype(dtype)


# ---- which algorithms support a problem ------------------------------------------

SUPPORT = [  # (id, x_shape, w_shape, geometry, {direction: the supported set})
    ("generic_5x5", (1, 3, 9, 9), (4, 3, 5, 5), {},
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("3x3_pad2_groups2", (1, 4, 9, 9), (4, 2, 3, 3), dict(padding=2, groups=2),
     dict(forward={"im2col_gemm", "implicit_gemm", "winograd", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "winograd", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "winograd", "direct"})),
    ("3x3_pad3", (1, 3, 9, 9), (4, 3, 3, 3), dict(padding=3),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("3x3_stride2", (1, 3, 9, 9), (4, 3, 3, 3), dict(stride=2, padding=1),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("3x3_dilation2", (1, 3, 9, 9), (4, 3, 3, 3), dict(dilation=2),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("3x3_stride1x2", (1, 3, 9, 9), (4, 3, 3, 3), dict(stride=(1, 2)),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("1x1", (1, 4, 5, 5), (8, 4, 1, 1), {},
     dict(forward={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"})),
    ("1x1_dilation3_groups2", (1, 4, 5, 5), (8, 2, 1, 1), dict(dilation=3, groups=2),
     dict(forward={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "gemm_1x1", "direct"})),
    ("1x1_pad1", (1, 4, 5, 5), (8, 4, 1, 1), dict(padding=1),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("1x1_stride2", (1, 4, 5, 5), (8, 4, 1, 1), dict(stride=2),
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
    ("3x1", (1, 4, 5, 5), (8, 4, 3, 1), {},
     dict(forward={"im2col_gemm", "implicit_gemm", "direct"},
          backward_data={"im2col_gemm", "implicit_gemm", "direct"},
          backward_filter={"im2col_gemm", "implicit_gemm", "direct"})),
]


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("x_shape,w_shape,geometry,expected",
                         [pytest.param(*c[1:], id=c[0]) for c in SUPPORT])
def test_conv_algorithms(x_shape, w_shape, geometry, expected, direction):
    for dtype in ("float32", "float64"):
        got = ops.conv_algorithms(ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry), direction)
        assert isinstance(got, list) and len(got) == len(set(got))
        assert set(got) == expected[direction]


# ---- workspace -------------------------------------------------------------------

# The layers at the batch sizes the benchmarks use (LeNet 64, AlexNet 16): the
# lowered matrix of im2col_gemm grows with the batch, implicit_gemm's packing
# buffers do not, which is the point of implicit GEMM.
NETWORK_LAYERS = [
    pytest.param((64, 1, 28, 28), (20, 1, 5, 5), {}, id="lenet_conv1"),
    pytest.param((64, 20, 12, 12), (50, 20, 5, 5), {}, id="lenet_conv2"),
    pytest.param((16, 3, 227, 227), (96, 3, 11, 11), dict(stride=4), id="alexnet_conv1"),
    pytest.param((16, 96, 27, 27), (256, 48, 5, 5), dict(padding=2, groups=2), id="alexnet_conv2"),
    pytest.param((16, 256, 13, 13), (384, 256, 3, 3), dict(padding=1), id="alexnet_conv3"),
    pytest.param((16, 384, 13, 13), (384, 192, 3, 3), dict(padding=1, groups=2), id="alexnet_conv4"),
    pytest.param((16, 384, 13, 13), (256, 192, 3, 3), dict(padding=1, groups=2), id="alexnet_conv5"),
]


@pytest.fixture(params=[1, 2], ids=lambda n: f"{n}threads")
def num_threads(request):
    before = minifw.get_num_threads()
    minifw.set_num_threads(request.param)
    yield request.param
    minifw.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("x_shape,w_shape,geometry", NETWORK_LAYERS)
def test_implicit_gemm_workspace_is_at_most_5_percent_of_the_lowered_matrix(x_shape, w_shape, geometry,
                                                                           direction, dtype, num_threads):
    # the whole batch's lowered matrix: the forward im2col's workspace (im2col's backward-data
    # may lower the batch in chunks)
    p = ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry)
    lowered = ops.conv_workspace_size(p, "forward", "im2col_gemm")
    implicit = ops.conv_workspace_size(p, direction, "implicit_gemm")
    assert implicit <= 0.05 * lowered, (implicit, lowered)


def _l2_bytes():
    return minifw.info()["caches"]["l2"] or 1 << 20  # the library's guess where unknown


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape,w_shape,geometry", [
    pytest.param((9, 20, 12, 12), (50, 20, 5, 5), {}, id="lenet_conv2_n9"),
    pytest.param((7, 24, 19, 19), (16, 12, 5, 5), dict(stride=2, padding=2, groups=2), id="groups2_stride2")])
def test_im2col_backward_data_lowers_a_batch_in_chunks_that_fit_the_l2(x_shape, w_shape, geometry, dtype,
                                                                        num_threads):
    # the shapes of test_conv's chunked cases: a quarter of the L2 holds at least one image's
    # lowered gradient, and the batch holds more images than the threads' chunks take
    p = ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry)
    n, c = x_shape[:2]
    r, s = w_shape[2:]
    per_image = c * r * s * p.out_shape[2] * p.out_shape[3] * np.dtype(dtype).itemsize
    if 4 * per_image > _l2_bytes():
        pytest.skip(f"one image's lowered gradient ({per_image} bytes) is over a quarter of this CPU's L2")
    images = min(n, _l2_bytes() // 4 // per_image)
    chunks = -(-n // images)
    assert chunks > 1
    explicit, _ = conv_module._query_workspace(p, "backward_data", "im2col_gemm", minifw.devices.CPU)
    assert explicit == per_image * images * min(num_threads, chunks)


def test_implicit_backward_filter_of_a_small_bank_runs_per_image_dot_products(num_threads):
    # 4 filters of 1 x 3 x 3 per group over 19 x 19 outputs of 9 images: a lowered image per
    # thread and a partial gradient per chunk of 4 images, as its workspace says
    p = ops.ConvProblem((9, 2, 40, 40), (4, 1, 3, 3), stride=2, padding=1, dilation=2, groups=2)
    chunks = 3
    lowered_image = 2 * 3 * 3 * 19 * 19
    expected = 4 * (min(num_threads, chunks) * lowered_image + chunks * 4 * 1 * 3 * 3)
    assert ops.conv_workspace_size(p, "backward_filter", "implicit_gemm") == expected


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("x_shape,w_shape,geometry", NETWORK_LAYERS + [
    pytest.param((2, 16, 7, 5), (8, 16, 1, 1), {}, id="1x1"),
    pytest.param((1, 4, 9, 9), (4, 2, 3, 3), dict(padding=2, groups=2), id="3x3_groups2")])
def test_workspace_is_a_nonnegative_int_for_every_supported_algorithm(x_shape, w_shape, geometry, direction):
    p = ops.ConvProblem(x_shape, w_shape, **geometry)
    for algo in ops.conv_algorithms(p, direction):
        size = ops.conv_workspace_size(p, direction, algo)
        assert isinstance(size, int) and size >= 0, (algo, size)


def test_im2col_workspace_holds_the_lowered_matrix():
    # Caffe's lowering: (C/groups * R * S) x (Ho * Wo) per image and group, at least
    p = ops.ConvProblem((16, 256, 13, 13), (384, 256, 3, 3), padding=1)
    assert ops.conv_workspace_size(p, "forward", "im2col_gemm") >= 256 * 9 * 13 * 13 * 4


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_gemm_1x1_needs_only_packing_buffers(direction):
    """conv_workspace_size reports the GEMM packing buffers too (they are real
    memory); gemm_1x1 asks the caller for nothing beyond them."""
    from minifw import _native
    p = ops.ConvProblem((2, 16, 7, 5), (8, 16, 1, 1))
    explicit, packing = _native.conv_workspace_f32("gemm_1x1", direction, p._args)
    assert explicit == 0
    assert ops.conv_workspace_size(p, direction, "gemm_1x1") == packing


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_gemm_1x1_lowers_nothing(direction):
    """Whatever it counts (packing buffers), gemm_1x1 holds no copy of the
    input: at a realistic batch its workspace is smaller than x itself."""
    for n in (16, 64):
        p = ops.ConvProblem((n, 256, 13, 13), (384, 256, 1, 1))
        assert ops.conv_workspace_size(p, direction, "gemm_1x1") < n * 256 * 13 * 13 * 4


# ---- find: time every supported algorithm, fastest first --------------------------

@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape,w_shape,geometry", [
    pytest.param((2, 16, 7, 5), (8, 16, 3, 3), dict(padding=1), id="3x3_pad1"),
    pytest.param((2, 16, 7, 5), (8, 16, 1, 1), {}, id="1x1"),
    pytest.param((1, 6, 11, 10), (4, 3, 3, 2), dict(stride=2, groups=2), id="strided_groups2"),
])
def test_find_conv_algorithms(x_shape, w_shape, geometry, dtype, direction):
    p = ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry)
    results = ops.find_conv_algorithms(p, direction)
    assert sorted(r.algo for r in results) == sorted(ops.conv_algorithms(p, direction))
    times = [r.time_ms for r in results]
    assert times == sorted(times) and all(t >= 0 for t in times)
    for r in results:
        assert r.workspace_bytes == ops.conv_workspace_size(p, direction, r.algo)


def test_find_on_cuda_times_each_run_with_cuda_events(emulated_cuda, monkeypatch):
    import cupy  # the emulated GPU's CuPy: its events time what the stream ran

    timed = []
    elapsed = cupy.cuda.get_elapsed_time
    monkeypatch.setattr(cupy.cuda, "get_elapsed_time", lambda s, e: timed.append(1) or elapsed(s, e))
    p = ops.ConvProblem((1, 3, 6, 5), (4, 3, 3, 3), padding=1)
    results = ops.find_conv_algorithms(p, "forward", repeats=2, device="cuda")
    assert sorted(r.algo for r in results) == sorted(ops.conv_algorithms(p, "forward", device="cuda"))
    assert len(timed) == 3 * len(results)  # a warm-up and two timed runs of each algorithm


# ---- algo="auto" and the autotune cache -------------------------------------------

@pytest.fixture
def benchmark_mode():
    """minifw.backends.benchmark = True on an empty cache; restored afterwards."""
    before = minifw.backends.benchmark
    minifw.backends.benchmark = True
    ops.clear_autotune_cache()
    try:
        yield
    finally:
        minifw.backends.benchmark = before
        ops.clear_autotune_cache()


AUTO_CASES = [
    pytest.param((2, 16, 9, 7), (16, 16, 3, 3), dict(padding=1), id="winograd_candidate"),
    pytest.param((2, 16, 7, 5), (8, 16, 1, 1), {}, id="1x1"),
    pytest.param((1, 6, 11, 10), (4, 3, 3, 2), dict(stride=2, dilation=(1, 2), groups=2), id="strided"),
]


def _run_all_directions(x, w, dy, geometry):
    y = ops.conv2d_forward(x, w, **geometry)
    dx = ops.conv2d_backward_data(dy, w, x.shape, **geometry)
    dw = ops.conv2d_backward_filter(x, dy, w.shape, **geometry)
    return y, dx, dw


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("x_shape,w_shape,geometry", AUTO_CASES)
def test_autotune_is_correct_and_cached(x_shape, w_shape, geometry, dtype, benchmark_mode, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    p = ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry)
    dy = rng.standard_normal(p.out_shape).astype(dtype)
    assert ops.autotune_cache() == {}

    y, dx, dw = _run_all_directions(x, w, dy, geometry)
    assert_within_bound(y, conv2d_forward_ref(x, w, None, **geometry),
                        conv2d_forward_ref(np.abs(x), np.abs(w), None, **geometry), *tolerance(dtype, "auto"),
                        what="autotuned forward")
    # the backward results must equal those of the algorithm that was cached for them
    cache = ops.autotune_cache()
    assert len(cache) == 3
    chosen = {}
    for key, algo in cache.items():
        direction = key[0]
        assert p in key, key  # keyed by the problem (plus direction, ISA and threads)
        assert algo in ops.conv_algorithms(p, direction)
        chosen[direction] = algo
    assert set(chosen) == set(DIRECTIONS)
    np.testing.assert_array_equal(dx, ops.conv2d_backward_data(dy, w, x.shape, algo=chosen["backward_data"],
                                                                **geometry))
    np.testing.assert_array_equal(dw, ops.conv2d_backward_filter(x, dy, w.shape, algo=chosen["backward_filter"],
                                                                  **geometry))

    # the same problem again: served from the cache (nothing is timed), same answers
    def no_timing(*args, **kwargs):
        raise AssertionError("autotuned again although the choice was cached")

    monkeypatch.setattr(conv_module, "find_conv_algorithms", no_timing)
    again = _run_all_directions(x, w, dy, geometry)
    monkeypatch.undo()
    assert ops.autotune_cache() == cache
    for a, b in zip((y, dx, dw), again):
        np.testing.assert_array_equal(a, b)

    # another problem (twice the batch) adds its own entry
    ops.conv2d_forward(np.concatenate([x, x]), w, **geometry)
    assert len(ops.autotune_cache()) == 4


def test_auto_without_benchmark_does_not_autotune():
    assert minifw.backends.benchmark is False  # the default
    ops.clear_autotune_cache()
    x = np.ones((1, 4, 6, 6), np.float32)
    ops.conv2d_forward(x, np.ones((2, 4, 3, 3), np.float32), padding=1)
    assert ops.autotune_cache() == {}


# ---- the lookups reject what they do not know -------------------------------------

def test_queries_validate_their_arguments():
    p = ops.ConvProblem((1, 3, 9, 9), (4, 3, 5, 5))
    with pytest.raises(ValueError, match=r"direction.*'sideways'"):
        ops.conv_algorithms(p, "sideways")
    with pytest.raises(ValueError, match=r"direction.*'backward'"):
        ops.find_conv_algorithms(p, "backward")
    with pytest.raises(ValueError, match=r"direction"):
        ops.conv_workspace_size(p, "upward", "im2col_gemm")
    with pytest.raises(ValueError, match=r"algo.*'fft'"):
        ops.conv_workspace_size(p, "forward", "fft")
    with pytest.raises(ValueError, match=r"'winograd'.*supported"):
        ops.conv_workspace_size(p, "forward", "winograd")
    with pytest.raises(ValueError, match=r"'winograd'.*supported"):
        ops.conv_workspace_size(ops.ConvProblem((1, 3, 9, 9), (4, 3, 3, 3), stride=2), "backward_filter",
                                "winograd")
    for query in (lambda q: ops.conv_algorithms(q, "forward"), lambda q: ops.find_conv_algorithms(q, "forward"),
                  lambda q: ops.conv_workspace_size(q, "forward", "im2col_gemm")):
        with pytest.raises(TypeError, match=r"problem must be a ConvProblem.*tuple"):
            query(((1, 3, 9, 9), (4, 3, 5, 5)))
