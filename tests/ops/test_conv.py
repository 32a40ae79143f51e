"""2-D convolution: every algorithm x direction x dtype against the float64
reference in tests/reference.py, on shapes chosen to hit every edge of the
index arithmetic; the reference itself; finite-difference gradients."""
import dataclasses
import zlib

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import (assert_within_bound, conv2d_backward_bias_ref, conv2d_backward_data_ref,
                       conv2d_backward_filter_ref, conv2d_forward_ref, conv_out_size, tolerance)
from targets import assert_on, host, kernel_devices, place

DTYPES = (np.float32, np.float64)
DIRECTIONS = ("forward", "backward_data", "backward_filter")
# The contract, written out here rather than read from the implementation, so
# that an algorithm that is missing or claims too little cannot pass silently.
ALGORITHMS = {
    "forward": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct"),
    "backward_data": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct"),
    "backward_filter": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct"),
}
# Results are held to tolerance(dtype, algo) from reference.py (the bound and its reason are there).


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    x_shape: tuple
    w_shape: tuple
    stride: object = 1
    padding: object = 0
    dilation: object = 1
    groups: int = 1

    @property
    def geometry(self):
        return dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)

    def problem(self, dtype=np.float32):
        return ops.ConvProblem(self.x_shape, self.w_shape, dtype=dtype, **self.geometry)

    def __str__(self):
        return self.id


CASES = [
    # batch / channel / spatial extremes
    Case("n1_c1_k1_odd7x9", (1, 1, 7, 9), (1, 1, 3, 3)),
    Case("c1_3x3_pad1", (2, 1, 8, 8), (4, 1, 3, 3), padding=1),
    Case("odd11x13_3x3_pad0", (2, 3, 11, 13), (5, 3, 3, 3)),
    Case("c7_3x3_pad1", (1, 7, 9, 10), (6, 7, 3, 3), padding=1),
    Case("c17_3x3_pad2", (2, 17, 6, 7), (9, 17, 3, 3), padding=2),
    Case("tiny_3x3_on_3x3", (1, 1, 3, 3), (1, 1, 3, 3)),
    Case("k3_c3_out1x1_wino", (1, 3, 3, 3), (2, 3, 3, 3)),
    Case("c17_k7_3x3_pad1_n3", (3, 17, 5, 5), (7, 17, 3, 3), padding=1),
    Case("winograd_tiles_plus_edge", (1, 16, 14, 11), (16, 16, 3, 3), padding=1),
    # 10 x 9 tiles per plane: Winograd's transforms run 64 tiles at a time, then 26
    Case("winograd_two_chunks_37x35", (2, 3, 37, 35), (5, 3, 3, 3), padding=1),
    # 16 tiles per image: the transforms' 64-tile passes span images, the last one short
    Case("winograd_images_n9_13x13", (9, 4, 13, 13), (6, 4, 3, 3), padding=1),
    # non-square kernels and per-axis geometry
    Case("kernel3x5_pad1x2", (2, 3, 10, 12), (4, 3, 3, 5), padding=(1, 2)),
    Case("kernel1x3_pad0x1", (1, 4, 6, 9), (5, 4, 1, 3), padding=(0, 1)),
    Case("kernel5x1_stride2x1", (2, 3, 11, 6), (4, 3, 5, 1), stride=(2, 1)),
    Case("mixed_stride2x3_pad3x0_dil1x2", (1, 3, 13, 17), (4, 3, 3, 4), stride=(2, 3), padding=(3, 0),
         dilation=(1, 2)),
    # stride and padding
    Case("stride2_pad1", (2, 3, 9, 9), (4, 3, 3, 3), stride=2, padding=1),
    Case("stride3_4x4_pad2", (1, 5, 14, 11), (6, 5, 4, 4), stride=3, padding=2),
    Case("stride4_5x5_pad3", (2, 2, 17, 19), (3, 2, 5, 5), stride=4, padding=3),
    Case("stride4_2x2_gaps", (1, 3, 11, 10), (2, 3, 2, 2), stride=4),
    Case("pad3_3x3", (1, 3, 5, 6), (4, 3, 3, 3), padding=3),
    Case("stride4_out1x1", (1, 2, 6, 6), (3, 2, 3, 3), stride=4),
    # dilation
    Case("dil2_3x3_pad2", (2, 3, 12, 11), (4, 3, 3, 3), padding=2, dilation=2),
    Case("dil2_stride2_pad1", (1, 4, 15, 15), (3, 4, 3, 3), stride=2, padding=1, dilation=2),
    # groups
    Case("groups2_3x3_pad1", (2, 4, 8, 9), (6, 2, 3, 3), padding=1, groups=2),
    Case("groups2_3x2_stride2", (1, 6, 11, 10), (4, 3, 3, 2), stride=2, groups=2),
    Case("groups3_dil2", (1, 9, 10, 9), (6, 3, 3, 3), padding=1, dilation=2, groups=3),
    Case("depthwise8_3x3_pad1", (2, 8, 9, 9), (8, 1, 3, 3), padding=1, groups=8),
    Case("depthwise6_5x5_stride2", (1, 6, 13, 12), (6, 1, 5, 5), stride=2, padding=2, groups=6),
    # the depthwise algorithm: a channel multiplier, dilation, strides 2 and 3, rows longer than its
    # 16 partial sums, a 1x1 filter, padding wider than the filter (rows and columns in the padding)
    Case("depthwise_mult3_dil2_pad3", (2, 4, 11, 10), (12, 1, 3, 3), padding=3, dilation=2, groups=4),
    Case("depthwise_stride3_5x3_pad2x1", (1, 5, 17, 16), (5, 1, 5, 3), stride=3, padding=(2, 1), groups=5),
    Case("depthwise_wide40_stride2", (2, 3, 6, 40), (6, 1, 3, 3), stride=2, padding=1, groups=3),
    Case("depthwise_wide37_stride1", (1, 2, 5, 37), (2, 1, 3, 3), padding=1, groups=2),
    Case("depthwise_1x1", (1, 6, 5, 7), (6, 1, 1, 1), groups=6),
    Case("depthwise_pad_beyond_filter", (1, 2, 3, 4), (4, 1, 3, 3), padding=4, groups=2),
    # kernel as large as the input: a single output pixel
    Case("kernel_eq_input_5x7", (2, 3, 5, 7), (4, 3, 5, 7)),
    # 1x1 kernels, with and without what gemm_1x1 needs
    Case("k1x1_c16", (2, 16, 7, 5), (8, 16, 1, 1)),
    Case("k1x1_groups2", (1, 6, 4, 5), (4, 3, 1, 1), groups=2),
    Case("k1x1_dil2", (1, 5, 3, 7), (3, 5, 1, 1), dilation=2),
    Case("k1x1_n1_c1", (1, 1, 9, 7), (3, 1, 1, 1)),
    Case("k1x1_stride2", (1, 4, 7, 7), (3, 4, 1, 1), stride=2),
    Case("k1x1_pad1", (1, 4, 5, 6), (3, 4, 1, 1), padding=1),
    # a long GEMM K against a small C, which the GEMM splits along K among threads
    Case("long_k_filter_bank", (8, 1, 28, 28), (20, 1, 5, 5)),
    Case("long_k_small_output", (2, 512, 3, 3), (6, 512, 3, 3), padding=1),
    # implicit_gemm's backward-filter of a small bank over long images: per image, dot
    # products, images in chunks of 4 (the last one short)
    Case("dot_filter_n9_groups2_stride2_dil2", (9, 2, 40, 40), (4, 1, 3, 3), stride=2, padding=1, dilation=2,
         groups=2),
    # im2col_gemm's backward-data over batches whose lowered gradient is lowered in chunks
    # of images that fit in the L2 (test_conv_api checks that they are)
    Case("lenet_conv2_n9_chunked_data", (9, 20, 12, 12), (50, 20, 5, 5)),
    Case("chunked_data_groups2_stride2", (7, 24, 19, 19), (16, 12, 5, 5), stride=2, padding=2, groups=2),
    # rows longer than the packers' 16-value vectors and 32-column panels, cut at both edges
    Case("wide37_5x5_pad2_groups2", (2, 4, 6, 37), (6, 2, 5, 5), padding=2, groups=2),
    Case("wide41_dil1x2_pad1x3", (1, 3, 7, 41), (4, 3, 3, 3), padding=(1, 3), dilation=(1, 2)),
    # the direct algorithm's row tiles (output channels along the vectors, a run of one
    # output row's positions): 48 channels per group are three vectors of 16 floats, 40
    # two and three of 8 floats or 8 doubles, 16 one of 16 floats; rows of 33 and 30
    # outputs take more than one tile of any width; at a stride; and backward-data's 48
    # channels
    Case("rows_k48_wide33_5x5_pad2_groups2", (2, 8, 9, 33), (96, 4, 5, 5), padding=2, groups=2),
    Case("rows_k40_stride2_pad1", (3, 5, 15, 13), (40, 5, 3, 3), stride=2, padding=1),
    Case("rows_data_c48_3x3_pad1", (2, 48, 7, 30), (16, 48, 3, 3), padding=1),
    # 12 output channels per group: three vectors of 4 floats (generic) or of 4 doubles
    # (AVX2), each row of 19 outputs in several tiles
    Case("rows_k12_groups2_wide19", (2, 8, 5, 19), (24, 4, 3, 3), padding=1, groups=2),
    # network layers at small batch (LeNet exact; AlexNet with full channel
    # counts, kernels, strides, padding and groups)
    Case("lenet_conv1", (2, 1, 28, 28), (20, 1, 5, 5)),
    Case("lenet_conv2", (2, 20, 12, 12), (50, 20, 5, 5)),
    Case("alexnet_conv1", (1, 3, 227, 227), (96, 3, 11, 11), stride=4),
    Case("alexnet_conv2", (1, 96, 27, 27), (256, 48, 5, 5), padding=2, groups=2),
    Case("alexnet_conv3", (2, 256, 13, 13), (384, 256, 3, 3), padding=1),
    Case("alexnet_conv4", (1, 384, 13, 13), (384, 192, 3, 3), padding=1, groups=2),
    Case("alexnet_conv5", (1, 384, 13, 13), (256, 192, 3, 3), padding=1, groups=2),
]
CASES_BY_ID = {c.id: c for c in CASES}
assert len(CASES_BY_ID) == len(CASES)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def expected_algorithms(case, direction):
    """Which algorithms the contract says support `case` in `direction`."""
    r, s = case.w_shape[2:]
    stride, padding, dilation = _pair(case.stride), _pair(case.padding), _pair(case.dilation)
    algos = {"im2col_gemm", "implicit_gemm"}
    if (r, s) == (3, 3) and stride == (1, 1) and dilation == (1, 1) and max(padding) <= 2:
        algos.add("winograd")
    if (r, s) == (1, 1) and stride == (1, 1) and padding == (0, 0):
        algos.add("gemm_1x1")
    if stride == (1, 1) or direction != "backward_data":
        algos.add("direct")
    if case.w_shape[1] == 1:  # one input channel per group
        algos.add("depthwise")
    return algos


# ---- data and references, computed once per (case, dtype) ----------------------

_data_cache = {}
_ref_cache = {}


def case_data(case, dtype):
    """Random x, w, bias, dy for `case` (deterministic per case)."""
    key = (case.id, np.dtype(dtype).name)
    if key not in _data_cache:
        rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
        out_shape = case.problem().out_shape
        _data_cache[key] = dict(
            x=rng.standard_normal(case.x_shape).astype(dtype),
            w=rng.standard_normal(case.w_shape).astype(dtype),
            b=rng.standard_normal(case.w_shape[0]).astype(dtype),
            dy=rng.standard_normal(out_shape).astype(dtype),
        )
    return _data_cache[key]


def reference(case, dtype, direction):
    """(ref, ref_abs) in float64 for `direction`, without bias."""
    key = (case.id, np.dtype(dtype).name, direction)
    if key not in _ref_cache:
        d, g = case_data(case, dtype), case.geometry
        if direction == "forward":
            f = lambda x, w, dy: conv2d_forward_ref(x, w, None, **g)
            args = (d["x"], d["w"], None)
        elif direction == "backward_data":
            f = lambda x, w, dy: conv2d_backward_data_ref(dy, w, case.x_shape, **g)
            args = (None, d["w"], d["dy"])
        else:
            f = lambda x, w, dy: conv2d_backward_filter_ref(x, dy, case.w_shape, **g)
            args = (d["x"], None, d["dy"])
        absolute = tuple(None if a is None else np.abs(a) for a in args)
        _ref_cache[key] = (f(*args), f(*absolute))
    return _ref_cache[key]


def run_direction(case, direction, algo, dtype, with_bias=False, device="cpu"):
    d, g = case_data(case, dtype), case.geometry
    if device != "cpu":
        d = dict(zip(d, place(device, *d.values())))
    if direction == "forward":
        return ops.conv2d_forward(d["x"], d["w"], d["b"] if with_bias else None, algo=algo, **g)
    if direction == "backward_data":
        return ops.conv2d_backward_data(d["dy"], d["w"], case.x_shape, algo=algo, **g)
    return ops.conv2d_backward_filter(d["x"], d["dy"], case.w_shape, algo=algo, **g)


def check_direction(case, direction, algo, dtype, with_bias=False, device="cpu"):
    got = run_direction(case, direction, algo, dtype, with_bias, device)
    assert_on(device, got)
    assert got.dtype == dtype and got.flags.c_contiguous
    got = host(got)
    ref, ref_abs = reference(case, dtype, direction)
    if with_bias:
        b = case_data(case, dtype)["b"].astype(np.float64)[None, :, None, None]
        ref, ref_abs = ref + b, ref_abs + np.abs(b)
    assert isinstance(got, np.ndarray)
    assert_within_bound(got, ref, ref_abs, *tolerance(dtype, algo),
                        what=f"{direction} {algo} {np.dtype(dtype).name} {case.id}")


def algo_params(direction, cases=CASES, dtypes=DTYPES, device="cpu"):
    """(case, algo, dtype) for every algorithm that supports the case on `device` (as
    ops.conv_algorithms says; test_support_matches_contract checks it), plus "auto"."""
    params = []
    for case in cases:
        for dtype in dtypes:
            supported = ops.conv_algorithms(case.problem(dtype), direction, device)
            for algo in ALGORITHMS[direction] + ("auto",):
                if algo == "auto" or algo in supported:
                    params.append(pytest.param(case, algo, dtype,
                                               id=f"{case.id}-{algo}-{np.dtype(dtype).name}"))
    return params


# ---- which algorithm supports what ---------------------------------------------

@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_support_matches_contract(case, direction):
    for dtype in DTYPES:
        assert set(ops.conv_algorithms(case.problem(dtype), direction)) == expected_algorithms(case, direction)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_case_list_exercises_every_algorithm(direction):
    counts = {a: sum(a in expected_algorithms(c, direction) for c in CASES) for a in ALGORITHMS[direction]}
    assert all(n >= 3 for n in counts.values()), counts
    assert len(CASES) >= 30


# The CPU heuristic (minifw.ops.conv._heuristic), on the models' layers (batch 2, or 16
# where Winograd's 32 tiles need it) and a few others: winograd for 3x3 layers with >= 32
# output tiles, >= 128 channels per group in and out, or >= 32 on outputs of >= 16 x 16
# (backward-filter: >= 128, or >= 48 on outputs of >= 27 x 27);
# direct at stride 1 where at least 60% of the positions it computes are outputs (all on
# its row tiles) and its tiles' side has >= 8 channels per group (output channels
# forward, input channels backward).
@pytest.mark.parametrize("x_shape,w_shape,padding,groups,forward,backward_data,backward_filter", [
    ((2, 1, 32, 32), (32, 1, 5, 5), 2, 1, "direct", "im2col_gemm", "implicit_gemm"),  # AlexNetSmall conv1
    ((2, 32, 16, 16), (64, 16, 5, 5), 2, 2, "direct", "direct", "direct"),     # conv2: 256 of 18 x 18
    ((16, 64, 8, 8), (96, 64, 3, 3), 1, 1, "direct", "direct", "direct"),      # conv3: 64 < 128 on 8 x 8
    ((16, 128, 8, 8), (128, 128, 3, 3), 1, 1, "winograd", "winograd", "winograd"),  # 128 on 8 x 8
    ((2, 64, 8, 8), (96, 64, 3, 3), 1, 1, "direct", "direct", "direct"),       # conv3: 8 tiles
    ((2, 96, 8, 8), (96, 48, 3, 3), 1, 2, "direct", "direct", "direct"),       # conv4: 48 < 64
    ((2, 1, 28, 28), (20, 1, 5, 5), 0, 1, "direct", "im2col_gemm", "implicit_gemm"),  # LeNet conv1
    ((2, 20, 12, 12), (50, 20, 5, 5), 0, 1, "implicit_gemm", "im2col_gemm", "implicit_gemm"),  # 64 of 144
    ((2, 96, 27, 27), (256, 48, 5, 5), 2, 2, "direct", "direct", "direct"),    # AlexNet conv2
    ((2, 256, 13, 13), (384, 256, 3, 3), 1, 1, "winograd", "winograd", "winograd"),  # AlexNet conv3
    ((2, 7, 9, 9), (16, 7, 3, 3), 1, 1, "direct", "im2col_gemm", "implicit_gemm"),  # Cg 7 < 8
    ((2, 32, 28, 28), (32, 32, 3, 3), 1, 1, "winograd", "winograd", "direct"),    # 32 on 28 x 28
    ((2, 32, 14, 14), (32, 32, 3, 3), 1, 1, "direct", "direct", "direct"),        # 32 on 14 x 14
    ((2, 48, 27, 27), (48, 48, 3, 3), 1, 1, "winograd", "winograd", "winograd"),  # 48 on 27 x 27
    ((8, 128, 7, 7), (128, 128, 3, 3), 1, 1, "winograd", "winograd", "winograd"),  # 32 tiles
    ((1, 256, 13, 13), (384, 256, 3, 3), 1, 1, "direct", "direct", "direct"),      # 16 tiles
])
def test_cpu_heuristic(monkeypatch, x_shape, w_shape, padding, groups, forward, backward_data,
                       backward_filter):
    monkeypatch.setattr(minifw.backends, "benchmark", False)
    monkeypatch.setattr(minifw.backends, "get_isa", lambda: "avx512")
    problem = ops.ConvProblem(x_shape, w_shape, padding=padding, groups=groups)
    assert ops.conv_algorithm(problem, "forward") == forward
    assert ops.conv_algorithm(problem, "backward_data") == backward_data
    assert ops.conv_algorithm(problem, "backward_filter") == backward_filter


# Under AVX2 and the generic kernels the direct tiles have 6 rows, not 14: Winograd keeps
# 3x3 layers from 16 channels per group (backward-filter from 64, or 32 on outputs of
# >= 16 x 16), and direct needs at most 64 channels per group unless its row tiles apply.
@pytest.mark.parametrize("isa", ["avx2", "generic"])
@pytest.mark.parametrize("x_shape,w_shape,padding,groups,forward,backward_data,backward_filter", [
    ((2, 32, 16, 16), (64, 16, 5, 5), 2, 2, "direct", "direct", "direct"),        # AlexNetSmall conv2
    ((16, 96, 8, 8), (96, 48, 3, 3), 1, 2, "winograd", "winograd", "direct"),     # conv4
    ((16, 64, 8, 8), (96, 64, 3, 3), 1, 1, "winograd", "winograd", "winograd"),   # conv3
    ((2, 32, 16, 16), (32, 32, 3, 3), 1, 1, "winograd", "winograd", "winograd"),  # 32 on 16 x 16
    ((2, 16, 32, 32), (16, 16, 3, 3), 1, 1, "winograd", "winograd", "direct"),    # 16
    ((2, 96, 27, 27), (256, 48, 5, 5), 2, 2, "direct", "direct", "direct"),  # AlexNet conv2: row tiles
    ((2, 80, 27, 27), (260, 40, 5, 5), 2, 2, "implicit_gemm", "direct", "implicit_gemm"),  # 130 not whole vectors
    ((2, 1, 28, 28), (20, 1, 5, 5), 0, 1, "direct", "im2col_gemm", "implicit_gemm"),  # LeNet conv1
])
def test_cpu_heuristic_with_narrower_vectors(monkeypatch, isa, x_shape, w_shape, padding, groups, forward,
                                             backward_data, backward_filter):
    monkeypatch.setattr(minifw.backends, "benchmark", False)
    monkeypatch.setattr(minifw.backends, "get_isa", lambda: isa)
    problem = ops.ConvProblem(x_shape, w_shape, padding=padding, groups=groups)
    assert [ops.conv_algorithm(problem, d) for d in DIRECTIONS] == [forward, backward_data, backward_filter]


# At a stride (the layers measured in benchmarks/RESULTS.md): direct forward for kernels
# of 5 x 5 or more on <= 16 channels per group, backward-filter for >= 64 (channel, tap)
# pairs on <= 128 channels under AVX-512, <= 16 under AVX2; never where a phase of the
# stride goes unread.
DIRECT_DATA_FILTER = ["direct", "im2col_gemm", "direct"]


@pytest.mark.parametrize("x_shape,w_shape,geometry,avx512,avx2", [
    ((2, 3, 227, 227), (96, 3, 11, 11), dict(stride=4), DIRECT_DATA_FILTER, DIRECT_DATA_FILTER),  # AlexNet conv1
    ((2, 3, 112, 112), (64, 3, 7, 7), dict(stride=2, padding=3), DIRECT_DATA_FILTER, DIRECT_DATA_FILTER),
    ((2, 64, 56, 56), (128, 64, 3, 3), dict(stride=2, padding=1), ["implicit_gemm", "implicit_gemm", "direct"],
     ["implicit_gemm"] * 3),
    ((2, 128, 28, 28), (256, 128, 3, 3), dict(stride=2, padding=1), ["implicit_gemm", "implicit_gemm", "direct"],
     ["implicit_gemm"] * 3),
    ((2, 256, 14, 14), (256, 256, 3, 3), dict(stride=2, padding=1), ["implicit_gemm"] * 3,  # 256 > 128
     ["implicit_gemm"] * 3),
    ((2, 64, 56, 56), (128, 64, 1, 1), dict(stride=2), ["implicit_gemm"] * 3, ["implicit_gemm"] * 3),  # phases unread
    ((2, 16, 32, 32), (32, 16, 5, 5), dict(stride=2, dilation=2, padding=4),  # even taps only
     ["implicit_gemm"] * 3, ["implicit_gemm"] * 3),
    ((2, 16, 32, 32), (32, 16, 5, 5), dict(stride=2), ["direct", "implicit_gemm", "direct"],
     ["direct", "implicit_gemm", "direct"]),
    ((2, 1, 28, 28), (20, 1, 5, 5), dict(stride=2), ["direct", "im2col_gemm", "implicit_gemm"],  # 25 pairs
     ["direct", "im2col_gemm", "implicit_gemm"]),
])
def test_cpu_heuristic_at_a_stride(monkeypatch, x_shape, w_shape, geometry, avx512, avx2):
    monkeypatch.setattr(minifw.backends, "benchmark", False)
    problem = ops.ConvProblem(x_shape, w_shape, **geometry)
    for isa, expected in (("avx512", avx512), ("avx2", avx2)):
        monkeypatch.setattr(minifw.backends, "get_isa", lambda isa=isa: isa)
        assert [ops.conv_algorithm(problem, d) for d in DIRECTIONS] == expected, isa


@pytest.mark.parametrize("dtype", DTYPES)
def test_direct_at_a_stride_past_the_image(dtype):
    # Phase arrays only where the padded image has positions (5 x 5 here, however large the
    # stride): the workspace is the same for every stride from 5 on, and does not overflow.
    x = np.arange(18, dtype=dtype).reshape(1, 2, 3, 3)
    w = np.arange(1, 17, dtype=dtype).reshape(2, 2, 2, 2)
    sizes = set()
    for stride in (5, 8, 2 ** 20, 2 ** 31, (2 ** 31, 3)):
        problem = ops.ConvProblem(x.shape, w.shape, stride=stride, padding=1, dtype=dtype)
        if stride != (2 ** 31, 3):
            sizes.add(ops.conv_workspace_size(problem, "forward", "direct"))
        geometry = dict(stride=stride, padding=1)
        y = ops.conv2d_forward(x, w, algo="direct", **geometry)
        np.testing.assert_array_equal(y, ops.conv2d_forward(x, w, algo="im2col_gemm", **geometry))
        dy = np.arange(1, y.size + 1, dtype=dtype).reshape(y.shape)
        np.testing.assert_array_equal(ops.conv2d_backward_filter(x, dy, w.shape, algo="direct", **geometry),
                                      ops.conv2d_backward_filter(x, dy, w.shape, algo="im2col_gemm", **geometry))
    assert len(sizes) == 1 and sizes.pop() < 1 << 16


def test_direct_useful_fraction(monkeypatch):
    monkeypatch.setattr(minifw.backends, "get_isa", lambda: "avx512")
    # The positions the direct layout computes: (H + p) x (W + p) per image for a "same"
    # convolution, H x W with no padding; backward-data's source is dY padded by 2 - p.
    frac = ops.conv._direct_useful_fraction
    assert frac(ops.ConvProblem((2, 4, 16, 16), (4, 4, 5, 5), padding=2), "forward") == 256 / 18 ** 2
    # the row tiles compute only outputs: 16 output channels (or 16 input channels
    # backward) are whole vectors under every ISA, with K = 4 x 25 taps >= 32
    assert frac(ops.ConvProblem((2, 4, 16, 16), (16, 4, 5, 5), padding=2), "forward") == 1.0
    assert frac(ops.ConvProblem((2, 16, 12, 12), (4, 16, 5, 5)), "backward_data") == 1.0
    assert frac(ops.ConvProblem((2, 16, 12, 12), (4, 16, 5, 5)), "forward") == 64 / 144  # 4 channels
    assert frac(ops.ConvProblem((2, 1, 12, 12), (16, 1, 5, 5)), "forward") == 64 / 144  # K = 25 < 32
    assert frac(ops.ConvProblem((2, 4, 28, 28), (4, 4, 5, 5)), "forward") == 24 * 24 / 28 ** 2
    assert frac(ops.ConvProblem((2, 4, 12, 12), (4, 4, 5, 5)), "backward_data") == 64 / 144
    # padding beyond the kernel's reach: the layout's rows are as long as the output's;
    # backward-filter sums over the forward's layout, backward-data over cropped dY (4 x 5)
    beyond = ops.ConvProblem((1, 1, 2, 3), (1, 1, 3, 3), padding=4)
    assert frac(beyond, "forward") == frac(beyond, "backward_filter") == 1.0
    assert frac(beyond, "backward_data") == 8 * 9 / (4 * 5)
    assert frac(ops.ConvProblem((1, 1, 9, 9), (1, 1, 3, 3), padding=(1, 0), dilation=2),
                "backward_data") == 7 * 5 / (10 * 9)  # dY 7 x 5 padded by 3, 4: rows of 9, 10 per image
    # at a stride, each phase's array holds ceil((size + 2 p) / stride) per axis and image
    assert frac(ops.ConvProblem((2, 3, 227, 227), (96, 3, 11, 11), stride=4), "backward_filter") == 55 * 55 / 57 ** 2
    assert frac(ops.ConvProblem((1, 2, 9, 10), (4, 2, 3, 3), stride=(1, 2), padding=1),
                "backward_filter") == 9 * 5 / (11 * 6)


def test_direct_backward_filter_workspace_follows_the_threads_that_run():
    # A buffer of dY per thread, for no more threads than (group, chunk, block of output
    # channels) items: 2 groups x 2 chunks (90 output rows of 30, 68 a chunk) x 1 to 3
    # blocks of 32, 16 or 8 channels (24 per group, by the ISA) is at most 12 items.
    problem = ops.ConvProblem((3, 8, 30, 30), (48, 4, 3, 3), padding=1, groups=2)
    before = minifw.get_num_threads()
    try:
        sizes = {}
        for n in (1, 2, 16, 64):
            minifw.set_num_threads(n)
            sizes[n] = ops.conv_workspace_size(problem, "backward_filter", "direct")
    finally:
        minifw.set_num_threads(before)
    assert sizes[1] < sizes[2] <= sizes[16] == sizes[64]


@pytest.mark.parametrize("kg", [40, 48])
@pytest.mark.parametrize("direction,stride", [(d, 1) for d in DIRECTIONS]
                         + [("forward", 2), ("backward_filter", 2)])
def test_direct_gives_the_same_bits_for_any_thread_count(direction, stride, kg):
    # Backward-filter sums chunks of whole output rows, 2,048 positions or fewer: 3 images
    # of 30 x 30 outputs (pad 1) are 90 rows of 30, chunks of 68 rows; at stride 2, 12
    # images of 15 x 15 outputs are 180 rows of 15, chunks of 136. The forward's 40 output
    # channels per group (4 input channels x 9 taps) run on the tiles along the positions
    # under AVX-512 and on the row tiles under AVX2 and the generic kernels (blocks of two
    # vectors and three; five of two); 48 run on the row tiles everywhere.
    images = 3 if stride == 1 else 12
    case = Case(f"direct_threads_s{stride}_k{kg}", (images, 8, 30, 30), (2 * kg, 4, 3, 3), padding=1, groups=2,
                stride=stride)
    d = case_data(case, np.float32)
    geometry = case.geometry
    run = {"forward": lambda: ops.conv2d_forward(d["x"], d["w"], algo="direct", **geometry),
           "backward_data": lambda: ops.conv2d_backward_data(d["dy"], d["w"], case.x_shape, algo="direct",
                                                             **geometry),
           "backward_filter": lambda: ops.conv2d_backward_filter(d["x"], d["dy"], case.w_shape, algo="direct",
                                                                 **geometry)}[direction]
    before = minifw.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3, 5):
            minifw.set_num_threads(n)
            results.append(run())
    finally:
        minifw.set_num_threads(before)
    for n, got in zip((2, 3, 5), results[1:]):
        np.testing.assert_array_equal(got, results[0], err_msg=f"{direction} with {n} threads")
    check_direction(case, direction, "direct", np.float32)


# The CPU heuristic's backward-data rule where direct does not apply (stride 2):
# im2col_gemm below 64 input channels per group (Cg), unless the output channels per group
# (Kg) are at most 2 Cg and Cg >= 8.
@pytest.mark.parametrize("x_shape,w_shape,groups,algo", [
    ((64, 32, 16, 16), (64, 16, 5, 5), 2, "implicit_gemm"),  # AlexNetSmall conv2's channels: Cg 16, Kg 32
    ((64, 20, 12, 12), (50, 20, 5, 5), 1, "im2col_gemm"),    # LeNet conv2's: Kg 50 > 2 Cg
    ((16, 96, 27, 27), (256, 48, 5, 5), 2, "im2col_gemm"),   # AlexNet conv2's: Kg 128 > 2 Cg
    ((2, 4, 9, 9), (8, 4, 5, 5), 1, "im2col_gemm"),          # Cg 4 < 8
    ((2, 8, 9, 9), (16, 8, 5, 5), 1, "implicit_gemm"),       # Cg 8, Kg 16: the edge
    ((2, 8, 9, 9), (17, 8, 5, 5), 1, "im2col_gemm"),         # Kg 17 > 2 Cg
    ((2, 64, 9, 9), (256, 64, 5, 5), 1, "implicit_gemm"),    # Cg >= 64
])
def test_backward_data_heuristic(monkeypatch, x_shape, w_shape, groups, algo):
    monkeypatch.setattr(minifw.backends, "benchmark", False)
    monkeypatch.setattr(minifw.backends, "get_isa", lambda: "avx512")
    problem = ops.ConvProblem(x_shape, w_shape, stride=2, padding=2, groups=groups)
    assert ops.conv_algorithm(problem, "backward_data") == algo


# The CUDA kernels' heuristic (minifw.ops.conv._cuda_heuristic): AlexNet's layers at batch
# 128, a strided layer with many channels and a 1x1 layer; forward, backward-data,
# backward-filter
@pytest.mark.parametrize("x_shape, w_shape, geometry, expected", [
    ((128, 3, 227, 227), (96, 3, 11, 11), dict(stride=4), ("implicit_gemm", "im2col_gemm", "implicit_gemm")),
    ((128, 96, 27, 27), (256, 48, 5, 5), dict(padding=2, groups=2), ("direct", "im2col_gemm", "implicit_gemm")),
    ((128, 256, 13, 13), (384, 256, 3, 3), dict(padding=1), ("direct", "direct", "implicit_gemm")),
    ((128, 384, 13, 13), (256, 192, 3, 3), dict(padding=1, groups=2), ("direct", "direct", "implicit_gemm")),
    ((4, 64, 15, 15), (64, 64, 3, 3), dict(stride=2, padding=1), ("implicit_gemm", "im2col_gemm", "implicit_gemm")),
    ((4, 64, 15, 15), (32, 64, 1, 1), {}, ("gemm_1x1",) * 3),
])
def test_cuda_heuristic(monkeypatch, x_shape, w_shape, geometry, expected):
    monkeypatch.setattr(minifw.backends, "benchmark", False)
    problem = ops.ConvProblem(x_shape, w_shape, **geometry)
    assert tuple(ops.conv_algorithm(problem, d, device="cudasim") for d in DIRECTIONS) == expected


# ---- every algorithm x direction x dtype x shape ---------------------------------

@pytest.mark.parametrize("with_bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("case,algo,dtype", algo_params("forward"))
def test_forward(case, algo, dtype, with_bias):
    check_direction(case, "forward", algo, dtype, with_bias)


@pytest.mark.parametrize("case,algo,dtype", algo_params("backward_data"))
def test_backward_data(case, algo, dtype):
    check_direction(case, "backward_data", algo, dtype)


@pytest.mark.parametrize("case,algo,dtype", algo_params("backward_filter"))
def test_backward_filter(case, algo, dtype):
    check_direction(case, "backward_filter", algo, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_backward_bias(case, dtype):
    dy = case_data(case, dtype)["dy"]
    db = ops.conv2d_backward_bias(dy)
    assert db.dtype == dtype and db.shape == (case.w_shape[0],)
    rtol, atol = tolerance(dtype, "im2col_gemm")
    assert_within_bound(db, conv2d_backward_bias_ref(dy), conv2d_backward_bias_ref(np.abs(dy)), rtol, atol,
                        what="backward_bias")


# A few shapes that between them need every algorithm and every geometry
# feature, run under every instruction set the CPU supports.
ISA_CASES = [CASES_BY_ID[i] for i in ("odd11x13_3x3_pad0", "c17_3x3_pad2", "winograd_tiles_plus_edge",
                                      "winograd_two_chunks_37x35", "winograd_images_n9_13x13",
                                      "mixed_stride2x3_pad3x0_dil1x2", "groups3_dil2",
                                      "depthwise6_5x5_stride2", "k1x1_c16", "k1x1_groups2", "lenet_conv2",
                                      "dot_filter_n9_groups2_stride2_dil2", "lenet_conv2_n9_chunked_data",
                                      "wide37_5x5_pad2_groups2", "wide41_dil1x2_pad1x3",
                                      "rows_k48_wide33_5x5_pad2_groups2", "rows_k40_stride2_pad1",
                                      "rows_data_c48_3x3_pad1", "rows_k12_groups2_wide19")]


@pytest.mark.parametrize("direction,case,algo,dtype", [
    pytest.param(direction, *p.values, id=f"{direction}-{p.id}")
    for direction in DIRECTIONS for p in algo_params(direction, ISA_CASES) if p.values[1] != "auto"])
def test_every_isa(isa, direction, case, algo, dtype):
    check_direction(case, direction, algo, dtype, with_bias=direction == "forward")


# ---- the CUDA kernels, on the emulator ----------------------------------------------
# The GPU's algorithms are the CPU's less direct at a stride (its CUDA kernel is stride 1
# only). Every case small enough for the emulator
# (which runs each CUDA thread as a fiber) runs every direction, algorithm and dtype;
# AlexNet's full-size layers are left to a real GPU.

def expected_cuda_algorithms(case, direction):
    strided = _pair(case.stride) != (1, 1)
    return expected_algorithms(case, direction) - ({"direct"} if strided else set())


SIM_CASES = [c for c in CASES if c.problem().flops() <= 2e7]


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_cuda_support_matches_contract(case, direction):
    for dtype in DTYPES:
        got = set(ops.conv_algorithms(case.problem(dtype), direction, device="cudasim"))
        assert got == expected_cuda_algorithms(case, direction)


def test_emulator_cases_cover_every_geometry():
    ids = {c.id for c in SIM_CASES}
    assert {"mixed_stride2x3_pad3x0_dil1x2", "groups3_dil2", "depthwise6_5x5_stride2", "k1x1_groups2",
            "stride4_2x2_gaps", "kernel_eq_input_5x7", "lenet_conv2"} <= ids


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("direction,case,algo,dtype", [
    pytest.param(direction, *p.values, id=f"{direction}-{p.id}")
    for direction in DIRECTIONS for p in algo_params(direction, SIM_CASES, device="cudasim")])
def test_cuda_kernels(direction, case, algo, dtype, device):
    check_direction(case, direction, algo, dtype, with_bias=direction == "forward", device=device)


# Many output pixels over few FLOPs: forward and data gradient are products of over 256
# tiles of 128 (the GPU's kernel with 8 x 8 results per thread), the filter gradient a
# product of a few tiles over K = 33,282 (split along K)
WIDE_CASE = Case("wide_129x129_pad1", (2, 2, 129, 129), (3, 2, 3, 3), padding=1)


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("dtype", [np.float32], ids=["float32"])
@pytest.mark.parametrize("algo", ["implicit_gemm", "direct", "im2col_gemm"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_cuda_kernels_on_many_tiles(direction, algo, dtype, device):
    check_direction(WIDE_CASE, direction, algo, dtype, with_bias=direction == "forward", device=device)


# 128 output channels over 33,282 output pixels: the forward's product (and Winograd's
# 36 of 128 x 2,178) take the GPU's kernel of 128 x 128 tiles
WIDE_K128_CASE = Case("wide_k128_129x129_pad1", (2, 1, 129, 129), (128, 1, 3, 3), padding=1)


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("dtype", [np.float32], ids=["float32"])
@pytest.mark.parametrize("algo", ["implicit_gemm", "direct", "winograd"])
def test_cuda_kernels_on_many_tiles_of_128(algo, dtype, device):
    check_direction(WIDE_K128_CASE, "forward", algo, dtype, with_bias=True, device=device)


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("dtype", [np.float32], ids=["float32"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_cuda_kernels_on_many_tiles_winograd(direction, dtype, device):
    # 33 x 33 tiles of 4 x 4 per plane, the last row and column of tiles cut at 129
    check_direction(WIDE_CASE, direction, "winograd", dtype, with_bias=direction == "forward", device=device)


def test_mixed_devices_are_refused():
    d = case_data(CASES_BY_ID["c1_3x3_pad1"], np.float32)
    x = place("cudasim", d["x"])
    with pytest.raises(ValueError, match=r"conv2d_forward: expected every array on one device, got x on "
                                         r"'cudasim', w on 'cpu'"):
        ops.conv2d_forward(x, d["w"], padding=1)


def test_strided_direct_on_the_emulator_is_refused():
    d = place("cudasim", *case_data(CASES_BY_ID["c1_3x3_pad1"], np.float32).values())
    with pytest.raises(ValueError, match="algo 'direct' does not support this problem .* on device "
                                         "'cudasim'; it needs stride 1 on the CUDA kernels"):
        ops.conv2d_forward(d[0], d[1], padding=1, stride=2, algo="direct")


# ---- inputs that are views, read-only or Fortran-ordered: copied, not refused ----

def _noncontiguous(a, how):
    """The same values as `a`, in an array that is not C-contiguous."""
    if how == "transposed":  # stored with two axes swapped (e.g. channels last), viewed back
        if a.ndim == 1:
            return np.ascontiguousarray(a[::-1])[::-1]
        for axes in ((1, 3), (2, 3), (0, 1)):  # the first that is not contiguous in disguise
            v = np.ascontiguousarray(np.swapaxes(a, *axes)).swapaxes(*axes)
            if not v.flags.c_contiguous:
                break
        return v
    if how == "sliced":
        big = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
        big[(slice(None, None, 2),) * a.ndim] = a
        return big[(slice(None, None, 2),) * a.ndim]
    if how == "fortran":
        return np.asfortranarray(a)
    raise ValueError(how)


@pytest.mark.parametrize("how", ["transposed", "sliced", "fortran"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("case_id", ["groups2_3x3_pad1", "k1x1_c16", "stride3_4x4_pad2"])
def test_noncontiguous_inputs_equal_contiguous(case_id, dtype, how):
    case = CASES_BY_ID[case_id]
    d, g = case_data(case, dtype), case.geometry
    v = {name: _noncontiguous(a, how) for name, a in d.items()}
    for name in v:
        if sum(n > 1 for n in v[name].shape) > 1:  # else any layout is also C-contiguous
            assert not v[name].flags.c_contiguous, name
        np.testing.assert_array_equal(v[name], d[name])
    for algo in ops.conv_algorithms(case.problem(dtype), "forward"):
        np.testing.assert_array_equal(ops.conv2d_forward(v["x"], v["w"], v["b"], algo=algo, **g),
                                      ops.conv2d_forward(d["x"], d["w"], d["b"], algo=algo, **g))
    for algo in ops.conv_algorithms(case.problem(dtype), "backward_data"):
        np.testing.assert_array_equal(ops.conv2d_backward_data(v["dy"], v["w"], case.x_shape, algo=algo, **g),
                                      ops.conv2d_backward_data(d["dy"], d["w"], case.x_shape, algo=algo, **g))
    for algo in ops.conv_algorithms(case.problem(dtype), "backward_filter"):
        np.testing.assert_array_equal(ops.conv2d_backward_filter(v["x"], v["dy"], case.w_shape, algo=algo, **g),
                                      ops.conv2d_backward_filter(d["x"], d["dy"], case.w_shape, algo=algo, **g))
    np.testing.assert_array_equal(ops.conv2d_backward_bias(v["dy"]), ops.conv2d_backward_bias(d["dy"]))


def test_inputs_are_not_modified_and_may_be_read_only():
    case = CASES_BY_ID["winograd_tiles_plus_edge"]
    d = {k: a.copy() for k, a in case_data(case, np.float32).items()}
    for a in d.values():
        a.setflags(write=False)
    g = case.geometry
    for algo in ALGORITHMS["forward"]:
        if algo in ops.conv_algorithms(case.problem(), "forward"):
            ops.conv2d_forward(d["x"], d["w"], d["b"], algo=algo, **g)
            ops.conv2d_backward_data(d["dy"], d["w"], case.x_shape, algo=algo, **g)
    for algo in ops.conv_algorithms(case.problem(), "backward_filter"):
        ops.conv2d_backward_filter(d["x"], d["dy"], case.w_shape, algo=algo, **g)
    ops.conv2d_backward_bias(d["dy"])
    for k, a in case_data(case, np.float32).items():
        np.testing.assert_array_equal(d[k], a)


def test_ints_and_pairs_mean_the_same():
    case = CASES_BY_ID["dil2_stride2_pad1"]
    d = case_data(case, np.float64)
    as_ints = ops.conv2d_forward(d["x"], d["w"], stride=2, padding=1, dilation=2, algo="im2col_gemm")
    as_pairs = ops.conv2d_forward(d["x"], d["w"], stride=(2, 2), padding=[1, 1], dilation=(2, 2),
                                  algo="im2col_gemm")
    np.testing.assert_array_equal(as_ints, as_pairs)


# ---- finite differences through the ops API (float64) ---------------------------

# f(x, w, b) = sum(conv2d_forward(x, w, b) * dy) is linear in each of x, w and
# b, so a central difference is exact up to rounding for any step; a step of
# 0.5 keeps that rounding (~eps * sum|terms| / step) near 1e-14.
FD_STEP = 0.5
FD_RTOL, FD_ATOL = 1e-9, 1e-10
FD_CASES = [
    Case("fd_stride2_pad1", (2, 3, 7, 6), (4, 3, 3, 3), stride=2, padding=1),
    Case("fd_dil2_pad2_3x2", (1, 2, 7, 8), (3, 2, 3, 2), padding=2, dilation=2),
    Case("fd_groups2_stride3x2", (1, 4, 8, 7), (6, 2, 2, 3), stride=(3, 2), padding=(0, 1), groups=2),
    Case("fd_depthwise_3x3_pad1", (2, 3, 5, 5), (3, 1, 3, 3), padding=1, groups=3),
    Case("fd_1x1", (2, 3, 4, 3), (2, 3, 1, 1)),
]


def _central_difference(f, a):
    grad = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        orig = a[idx]
        a[idx] = orig + FD_STEP
        up = f()
        a[idx] = orig - FD_STEP
        down = f()
        a[idx] = orig
        grad[idx] = (up - down) / (2 * FD_STEP)
    return grad


@pytest.mark.parametrize("case", FD_CASES, ids=str)
def test_gradients_match_finite_differences(case):
    rng = np.random.default_rng(7)
    g = case.geometry
    x, w = rng.standard_normal(case.x_shape), rng.standard_normal(case.w_shape)
    b = rng.standard_normal(case.w_shape[0])
    dy = rng.standard_normal(case.problem().out_shape)
    f = lambda: float(np.sum(ops.conv2d_forward(x, w, b, algo="im2col_gemm", **g) * dy))
    # Hundreds of tiny forward calls: on one thread, because a parallel region
    # per call costs ~1 ms each when another process holds a core (thread
    # counts are tested in test_threads_isa.py).
    threads = minifw.get_num_threads()
    minifw.set_num_threads(1)
    try:
        fd = {"x": _central_difference(f, x), "w": _central_difference(f, w), "b": _central_difference(f, b)}
    finally:
        minifw.set_num_threads(threads)
    problem = case.problem(np.float64)

    def close(got, want, what):
        np.testing.assert_allclose(got, want, rtol=FD_RTOL, atol=FD_ATOL, err_msg=f"{case.id} {what}")

    for algo in ops.conv_algorithms(problem, "backward_data") + ["auto"]:
        close(ops.conv2d_backward_data(dy, w, case.x_shape, algo=algo, **g), fd["x"], f"dx {algo}")
    for algo in ops.conv_algorithms(problem, "backward_filter") + ["auto"]:
        close(ops.conv2d_backward_filter(x, dy, case.w_shape, algo=algo, **g), fd["w"], f"dw {algo}")
    close(ops.conv2d_backward_bias(dy), fd["b"], "db")


# ---- the reference itself ---------------------------------------------------

def test_reference_hand_computed_example():
    # y[i, j] = x[i, j] - x[i + 1, j + 1] = -5 on a 4x4 ramp (rows step by 4)
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = np.array([[[[1.0, 0.0], [0.0, -1.0]]]])
    np.testing.assert_array_equal(conv2d_forward_ref(x, w), np.full((1, 1, 3, 3), -5.0))
    np.testing.assert_array_equal(conv2d_forward_ref(x, w, np.array([2.0])), np.full((1, 1, 3, 3), -3.0))
    np.testing.assert_array_equal(conv2d_forward_ref(x, w, stride=2), np.full((1, 1, 2, 2), -5.0))
    padded = conv2d_forward_ref(x, w, padding=1)
    assert padded.shape == (1, 1, 5, 5)
    assert padded[0, 0, 0, 0] == -x[0, 0, 0, 0] and padded[0, 0, 4, 4] == x[0, 0, 3, 3]
    # dilation 2 reaches x[i + 2, j + 2]: -10 on the 2x2 output
    np.testing.assert_array_equal(conv2d_forward_ref(x, w, dilation=2), np.full((1, 1, 2, 2), -10.0))
    assert conv_out_size(227, 11, stride=4) == 55 and conv_out_size(27, 5, padding=2) == 27


def test_reference_matches_scipy_correlate():
    signal = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((4, 3, 3, 2))
    want = np.array([[sum(signal.correlate2d(x[n, c], w[k, c], mode="valid") for c in range(3))
                      for k in range(4)] for n in range(2)])
    np.testing.assert_allclose(conv2d_forward_ref(x, w), want, rtol=1e-13, atol=1e-13)


def test_reference_geometry_identities():
    """stride = subsampling, dilation = a kernel with zeros between taps,
    padding = explicit zero border, groups = separate convolutions stacked."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 4, 13, 11)), rng.standard_normal((6, 4, 3, 2))
    plain = conv2d_forward_ref(x, w)
    np.testing.assert_allclose(conv2d_forward_ref(x, w, stride=(3, 2)), plain[:, :, ::3, ::2], rtol=1e-14)
    dilated_w = np.zeros((6, 4, 5, 4))
    dilated_w[:, :, ::2, ::3] = w
    np.testing.assert_allclose(conv2d_forward_ref(x, w, dilation=(2, 3)), conv2d_forward_ref(x, dilated_w),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(conv2d_forward_ref(x, w, padding=(2, 1)),
                               conv2d_forward_ref(np.pad(x, ((0, 0), (0, 0), (2, 2), (1, 1))), w), rtol=1e-14)
    wg = rng.standard_normal((6, 2, 3, 2))
    stacked = np.concatenate([conv2d_forward_ref(x[:, :2], wg[:3]), conv2d_forward_ref(x[:, 2:], wg[3:])], axis=1)
    np.testing.assert_allclose(conv2d_forward_ref(x, wg, groups=2), stacked, rtol=1e-14)


@pytest.mark.parametrize("case", CASES + FD_CASES, ids=str)
def test_reference_backward_is_the_adjoint(case):
    """<conv(x, w), dy> == <x, backward_data(dy, w)> == <w, backward_filter(x, dy)>:
    the backward references are the exact transposes of the forward one."""
    d, g = case_data(case, np.float64), case.geometry
    y, _ = reference(case, np.float64, "forward")
    dx, _ = reference(case, np.float64, "backward_data")
    dw, _ = reference(case, np.float64, "backward_filter")
    scale = np.vdot(np.abs(reference(case, np.float64, "forward")[1]), np.abs(d["dy"]))
    dot_y = np.vdot(y, d["dy"])
    assert abs(np.vdot(d["x"], dx) - dot_y) <= 1e-13 * scale
    assert abs(np.vdot(d["w"], dw) - dot_y) <= 1e-13 * scale
    np.testing.assert_allclose(conv2d_backward_bias_ref(d["dy"]), d["dy"].sum(axis=(0, 2, 3)), rtol=1e-14)


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_the_heuristic_takes_depthwise_for_one_input_channel_per_group(device):
    for x_shape, w_shape, groups, stride in (((16, 32, 112, 112), (32, 1, 3, 3), 32, 1),
                                             ((16, 96, 112, 112), (96, 1, 3, 3), 96, 2),
                                             ((2, 8, 9, 9), (24, 1, 5, 5), 8, 1)):
        problem = ops.ConvProblem(x_shape, w_shape, stride=stride, padding=1, groups=groups)
        assert [ops.conv_algorithm(problem, d, device=device) for d in DIRECTIONS] == ["depthwise"] * 3
    # one input channel and one group is an ordinary convolution (LeNet's conv1): no depthwise pick
    lenet_conv1 = ops.ConvProblem((64, 1, 28, 28), (20, 1, 5, 5))
    assert "depthwise" in ops.conv_algorithms(lenet_conv1, "forward", device=device)
    assert "depthwise" not in [ops.conv_algorithm(lenet_conv1, d, device=device) for d in DIRECTIONS]
