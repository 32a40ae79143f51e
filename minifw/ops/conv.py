"""2-D convolution: describe, then choose, then execute (as in cuDNN).

    problem = ConvProblem(x.shape, w.shape, stride=1, padding=1)
    for perf in find_conv_algorithms(problem, "forward"):
        print(perf.algo, perf.time_ms, perf.workspace_bytes)
    y = conv2d_forward(x, w, b, padding=1, algo="winograd")

Algorithms (each a separate native implementation):

=================  ==========================  ============================================
algorithm          directions                  what it does
=================  ==========================  ============================================
``im2col_gemm``    all three                   lowers the whole batch into a matrix in the
                                               workspace, then one GEMM per group (Caffe);
                                               backward_data in chunks of images whose
                                               lowered gradient fits a quarter of the L2
``implicit_gemm``  all three                   the same GEMM, but tiles of the lowered
                                               matrix are formed while packing: workspace
                                               is only the GEMM's packing buffers (a small
                                               filter bank's backward_filter: one image
                                               lowered per thread, then dot products)
``winograd``       all three                   F(4x4, 3x3): 3x3 kernels, stride 1,
                                               dilation 1, padding <= 2 (backward_filter:
                                               the forward's steps taken back, its 36
                                               GEMMs summing over the tiles)
``gemm_1x1``       all three                   1x1, stride 1, no padding: the input is
                                               already the GEMM operand, no lowering
``direct``         all three (backward_data    the input (dY for backward_data) copied once
                   at stride 1)                into a padded layout where every tap of a
                                               channel is the same array shifted, read in
                                               place by register tiles (no lowering, no
                                               packing of the input). Where the channels it
                                               writes are whole vectors, a tile is a run of
                                               one output row by output channels; else a
                                               run of the layout by rows of channels, whose
                                               positions in the padding are computed too,
                                               then dropped. At a stride, one array per
                                               phase of the stride (space to depth), each
                                               tap read in its phase
``depthwise``      all three                   one input channel per group (groups = C,
                                               any multiplier K / C, stride, padding and
                                               dilation): each tap multiplies a run of an
                                               output row by an input row in place, no
                                               GEMM, no workspace (backward-filter: one
                                               output channel per thread, the images
                                               summed in order)
=================  ==========================  ============================================

Every algorithm gives the same bits from run to run at a given thread count;
with minifw.use_deterministic_algorithms(True) (or backends.cudnn.deterministic)
also for any thread count, and algo="auto" takes the heuristic's choice even
under backends.benchmark, so timings never pick the algorithm
(docs/determinism.md).

On the CUDA kernels (device "cuda", and "cudasim", the emulator) the
algorithms are the GPU's own: ``implicit_gemm`` (the lowered tiles gathered
into shared memory), ``im2col_gemm`` (image by image, one lowered image in the
workspace), ``gemm_1x1`` and ``direct`` (stride 1 only: the padded copy in the
workspace, the GEMM's tiles loaded from its shifted views), ``winograd``
(F(4x4, 3x3) as on the CPU: the transforms as kernels, the 36 products as batched
tiled GEMMs) and ``depthwise`` (a thread per output or input element, a block per
weight summing in a fixed tree for backward-filter). The
queries take the device (``device="cuda"``); the execution functions use the
device of their arrays.
On "cuda", find_conv_algorithms times each algorithm with CUDA events on CuPy's
current stream.
"""
import collections
import math
import threading

import numpy as np

from .. import backends, caches, devices
from .tensor_ops import bias_backward
from ..checks import (MAX_SIZE, check_choice, check_dtype_arg, check_float_array, check_int, check_pair,
                      check_no_zero_dims, check_same_device, check_shape, check_size, contiguous_for)

DIRECTIONS = ("forward", "backward_data", "backward_filter")
ALGORITHMS = {
    "forward": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct", "depthwise"),
    "backward_data": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct", "depthwise"),
    "backward_filter": ("im2col_gemm", "implicit_gemm", "winograd", "gemm_1x1", "direct", "depthwise"),
}
_NEEDS = {
    "winograd": "a 3x3 kernel, stride 1, dilation 1 and padding <= 2",
    "gemm_1x1": "a 1x1 kernel, stride 1 and padding 0",
    "direct": "stride 1 in backward_data",
    "depthwise": "one input channel per group (groups equal to the input channels)",
}

ConvAlgoPerf = collections.namedtuple("ConvAlgoPerf", "algo time_ms workspace_bytes")
ConvAlgoPerf.__doc__ = "One result of find_conv_algorithms: algorithm, median time, workspace."


class ConvProblem:
    """A convolution problem: shapes, geometry and dtype; no data.

    x_shape is (N, C, H, W), w_shape is (K, C // groups, R, S). stride,
    padding and dilation are ints or (height, width) pairs; padding is added
    equally on both sides. `out_shape` is (N, K, Ho, Wo).
    """

    __slots__ = ("x_shape", "w_shape", "stride", "padding", "dilation", "groups", "dtype",
                 "out_shape", "_args", "_key")

    def __init__(self, x_shape, w_shape, *, stride=1, padding=0, dilation=1, groups=1,
                 dtype="float32", _fn="ConvProblem"):
        x_shape = check_shape(_fn, "x_shape", x_shape, 4)
        w_shape = check_shape(_fn, "w_shape", w_shape, 4)
        stride = check_pair(_fn, "stride", stride, minimum=1)
        padding = check_pair(_fn, "padding", padding, minimum=0)
        dilation = check_pair(_fn, "dilation", dilation, minimum=1)
        groups = check_size(_fn, "groups", groups)
        dtype = check_dtype_arg(_fn, "dtype", dtype)
        n, c, h, w = x_shape
        k, cg, r, s = w_shape
        if c % groups:
            raise ValueError(f"{_fn}: input channels ({c}) must be divisible by groups ({groups})")
        if k % groups:
            raise ValueError(f"{_fn}: output channels w.shape[0] ({k}) must be divisible by "
                             f"groups ({groups})")
        if cg * groups != c:
            raise ValueError(f"{_fn}: weight of shape {w_shape} with groups={groups} expects "
                             f"{cg * groups} input channels, got x of shape {x_shape} with {c}")
        eff_h, eff_w = dilation[0] * (r - 1) + 1, dilation[1] * (s - 1) + 1
        if h + 2 * padding[0] < eff_h or w + 2 * padding[1] < eff_w:
            raise ValueError(
                f"{_fn}: output size would be < 1: padded input {h + 2 * padding[0]}x"
                f"{w + 2 * padding[1]} is smaller than the dilated kernel {eff_h}x{eff_w} "
                f"(x_shape={x_shape}, w_shape={w_shape}, padding={padding}, dilation={dilation})")
        ho = (h + 2 * padding[0] - eff_h) // stride[0] + 1
        wo = (w + 2 * padding[1] - eff_w) // stride[1] + 1
        # The native library bounds every buffer it indexes by these products.
        hp, wp = h + 2 * padding[0], w + 2 * padding[1]
        lowered = n * c * r * s * hp * wp
        if max(lowered, n * max(c, k) * hp * wp, k * cg * r * s) > MAX_SIZE:
            raise ValueError(
                f"{_fn}: problem too large to index: x_shape={x_shape} padded by padding={padding} "
                f"is {hp}x{wp}, and with w_shape={w_shape} the lowered matrix would have {lowered} "
                f"elements (at most 2**58, the largest array the native library indexes)")
        self.x_shape, self.w_shape = x_shape, w_shape
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.dtype = dtype
        self.out_shape = (n, k, ho, wo)
        self._args = (n, c, h, w, k, cg, r, s, stride[0], stride[1], padding[0], padding[1],
                      dilation[0], dilation[1], groups)
        self._key = (self._args, dtype.name)

    def __eq__(self, other):
        return isinstance(other, ConvProblem) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return (f"ConvProblem(x_shape={self.x_shape}, w_shape={self.w_shape}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
                f"dtype='{self.dtype.name}')")

    def flops(self):
        """Multiply-adds x 2 of the direct convolution (the same for every direction)."""
        n, k, ho, wo = self.out_shape
        _, cg, r, s = self.w_shape
        return 2 * n * k * ho * wo * cg * r * s


# The memos below are bounded (minifw.caches: least recently used dropped first): a program
# that sees ever new shapes must not grow them without end.
_problems = caches.register("conv.problems", caches.LRUCache("conv.problems", 1024))


def _plain_ints(v):
    if type(v) is tuple:
        return all(type(i) is int for i in v)
    return type(v) is int


def _cached_problem(fn, x_shape, w_shape, stride, padding, dilation, groups, dtype):
    """ConvProblem for these arguments, memoized: a training loop asks for the
    same few problems every step, and building one (with all its checks) costs
    more than the rest of a small convolution's Python overhead."""
    # Only plain ints (and tuples of them) are memoized: 2.0 == 2 and True == 1
    # hash alike, and those must still reach ConvProblem's checks and be refused.
    args = (x_shape, w_shape, stride, padding, dilation, groups)
    if not all(_plain_ints(v) for v in args):
        return ConvProblem(x_shape, w_shape, stride=stride, padding=padding, dilation=dilation,
                           groups=groups, dtype=dtype, _fn=fn)
    key = (fn, *args, dtype)
    problem = _problems.get(key)
    if problem is not None:
        return problem
    problem = ConvProblem(x_shape, w_shape, stride=stride, padding=padding, dilation=dilation,
                          groups=groups, dtype=dtype, _fn=fn)
    _problems.put(key, problem)
    return problem


def conv_algorithms(problem, direction, device="cpu"):
    """Names of the algorithms that support `problem` in `direction` on `device`."""
    _check_problem("conv_algorithms", problem)
    check_choice("conv_algorithms", "direction", direction, DIRECTIONS)
    dev = devices.get(device, "conv_algorithms")
    return _supported(problem, direction, dev)


def _supported(problem, direction, dev):
    supports = devices.kernel("conv", "supports", problem.dtype, dev)
    return [a for a in ALGORITHMS[direction] if supports(a, direction, problem._args)]


def conv_workspace_size(problem, direction, algo, device="cpu"):
    """Bytes of memory `algo` needs on `device` beyond inputs and outputs: its workspace
    (e.g. the lowered matrix) plus, on the CPU, the GEMM packing buffers of every thread."""
    _check_problem("conv_workspace_size", problem)
    check_choice("conv_workspace_size", "direction", direction, DIRECTIONS)
    dev = devices.get(device, "conv_workspace_size")
    _check_algo("conv_workspace_size", problem, direction, algo, dev)
    explicit, packing = _query_workspace(problem, direction, algo, dev)
    return explicit + packing


# find_conv_algorithms times each algorithm at most this many times: a median of 1000
# runs is as steady as a timing gets, and a larger count would only keep the caller waiting.
MAX_REPEATS = 1000


def find_conv_algorithms(problem, direction, *, repeats=3, device="cpu"):
    """Time every algorithm that supports `problem` on `device` (and whose workspace is
    within the limit of minifw.devices.workspace(device)) on random data, `repeats`
    times each (1 to MAX_REPEATS = 1000) after a warm-up run; return ConvAlgoPerf
    results fastest first (like cudnnFindConvolutionForwardAlgorithm)."""
    _check_problem("find_conv_algorithms", problem)
    check_choice("find_conv_algorithms", "direction", direction, DIRECTIONS)
    repeats = check_int("find_conv_algorithms", "repeats", repeats, minimum=1, maximum=MAX_REPEATS)
    dev = devices.get(device, "find_conv_algorithms")
    rng = np.random.default_rng(0)
    x, w, dy = (devices.to_device(rng.standard_normal(shape).astype(problem.dtype), dev)
                for shape in (problem.x_shape, problem.w_shape, problem.out_shape))
    results = []
    workspace = devices.workspace(dev)
    for algo in _supported(problem, direction, dev):
        if not workspace.fits(_explicit_bytes(problem, direction, algo, dev)):
            continue  # over the workspace limit: not a candidate, as in cuDNN's find
        run = _runner(problem, direction, algo, x, w, dy)
        devices.time_ms(run, dev)  # warm-up: first touch of workspace and packing buffers
        times = [devices.time_ms(run, dev) for _ in range(repeats)]
        results.append(ConvAlgoPerf(algo, float(np.median(times)),
                                    conv_workspace_size(problem, direction, algo, dev)))
    results.sort(key=lambda p: p.time_ms)
    return results


def _runner(problem, direction, algo, x, w, dy):
    kw = dict(stride=problem.stride, padding=problem.padding, dilation=problem.dilation,
              groups=problem.groups, algo=algo)
    if direction == "forward":
        return lambda: conv2d_forward(x, w, **kw)
    if direction == "backward_data":
        return lambda: conv2d_backward_data(dy, w, problem.x_shape, **kw)
    return lambda: conv2d_backward_filter(x, dy, problem.w_shape, **kw)


# ---- choosing an algorithm -------------------------------------------------------

_autotune = caches.register("conv.autotune", caches.LRUCache("conv.autotune", 1024))
_autotune_lock = threading.Lock()  # one search at a time: concurrent timings would disturb each other


def autotune_cache():
    """A copy of the choices made under minifw.backends.benchmark = True:
    {(direction, problem, device, isa, threads): algorithm}. At most
    minifw.caches.get("conv.autotune").maxsize (1024 by default) are kept, the least
    recently used dropped first."""
    return dict(_autotune.items())


def clear_autotune_cache():
    """Forget every autotuned choice (the next call per problem times the algorithms again)."""
    _autotune.clear()


def _cuda_heuristic(problem, direction, supported):
    """The CUDA kernels' choice where gemm_1x1 does not apply, from AlexNet's layers at
    batch 128 on an H200 (ms, in RESULTS.md):

    - forward: direct at stride 1 (conv2 to conv5: 4.5, 3.4, 2.9, 1.7 against implicit
      GEMM's 7.4, 4.7, 5.1, 2.7), else implicit_gemm (conv1, stride 4: 4.4 against
      im2col's 6.5);
    - backward-data with fewer than 64 input channels per group: im2col_gemm, whose GEMM
      runs over the output channels, where implicit GEMM's has Cg rows (conv2, Cg 48:
      7.5 against direct 11.6 and implicit 27.5; conv1, Cg 3: 9.7 against 2,518);
      else direct at stride 1 (conv3 to conv5: 3.7, 3.3, 2.3 against im2col's 5.7, 6.1,
      4.9), else im2col_gemm;
    - backward-filter: implicit_gemm, one product split along the batch's pixels
      (fastest or within 1.5x of the fastest on every layer)."""
    cg = problem.w_shape[1]
    if direction == "backward_filter":
        return "implicit_gemm"
    if direction == "backward_data" and cg < 64:
        return "im2col_gemm"
    if "direct" in supported:
        return "direct"
    return "implicit_gemm" if direction == "forward" else "im2col_gemm"


def _heuristic(problem, direction, dev):
    """The algo="auto" choice without timing. A depthwise layer (one input channel per
    group, more than one group), on every device: depthwise, which computes no product of
    zeros (MobileNetV2's 3 x 3 depthwise layers at batch 16 on the CPU: 6-10x faster than
    implicit_gemm and im2col_gemm, which run one GEMM with one row per channel; see
    benchmarks/RESULTS.md). On the CUDA kernels (_cuda_heuristic),
    from the layer times on an H200 recorded in benchmarks/RESULTS.md. On the CPU, from
    the measurements recorded there:

    - 1x1 unpadded stride-1 layers need no lowering at all: gemm_1x1;
    - 3x3 stride-1 layers with enough channels per group, in and out (the fewer of the
      two, below), and at least 32 output tiles of 4 x 4 in the batch, for Winograd's 36
      GEMMs to outweigh its transforms (AlexNet conv3 at batch 1, 16 tiles, runs faster
      through implicit_gemm): winograd (_winograd_useful). Under AVX-512, where the
      direct algorithm's 14 x 32 tiles are the competition, forward and backward-data
      from 128 channels, or 32 on outputs of at least 16 x 16 (on 8 x 8 ones,
      AlexNetSmall conv3 to conv5, direct is faster: conv3's 64 channels ran 1.23 / 1.37
      ms through winograd against 1.42 / 1.45 alone, but 2.1-2.2 / 4.4 against 1.7-1.8 /
      3.5-3.7 forward / backward within the training step, where Winograd's transform
      domain, 6 MiB, is no longer in the caches);
      backward-filter, whose GEMMs transpose an operand, from 128 channels, or 48 on
      outputs of at least 27 x 27 (AlexNet conv3 to conv5 backward-filter: 19.1, 13.7,
      8.9 -> 15.4, 10.8, 8.4 ms). Under AVX2 and the generic kernels, whose direct tiles
      are 6 rows, forward and backward-data from 16 channels, backward-filter from 64,
      or 32 on outputs of at least 16 x 16;
    - stride-1 layers whose output positions are at least 60% of the positions the
      direct algorithm computes (all of them on its row tiles, _direct_rows; on its tiles
      along the positions the rest lie in the padding of its layout) and with at least 8
      channels per group where its tiles have them (output channels forward, input
      channels backward); under AVX2 and the generic kernels only with at most 64
      channels per group in and out, or where the row tiles apply (backward-filter:
      where the forward's do; AlexNet conv2 under AVX2: 37.6, 35.0 and 33.6 ms against
      the GEMMs' 39.1, 39.0 and 36.9): direct, which
      packs and lowers nothing (under AVX-512: AlexNetSmall conv2 to conv5 in every
      direction it is not winograd, conv1 forward; AlexNet conv2 in every direction;
      LeNet conv1 forward);
    - at a stride > 1 (forward and backward-filter; the direct algorithm's layout holds
      one array per phase of the stride), where every phase is read by some tap and at
      least 60% of the positions computed are outputs: direct forward for kernels of at
      least 5 x 5 taps with at most 16 input channels per group, backward-filter with at
      least 64 (channel, tap) pairs per group and at most 128 input channels per group
      under AVX-512, 16 under AVX2 and the generic kernels (AlexNet conv1, 11 x 11 at
      stride 4 on 3 channels, under AVX-512: forward 19.1 -> 17.1 ms, backward-filter
      22.8 -> 14.1; under AVX2: 20.0 -> 18.3 and 23.1 -> 19.8; a 3 x 3 stride-2 forward
      ran faster through implicit_gemm at 16 to 128 channels, its backward-filter faster
      through direct up to 128 under AVX-512 and through implicit_gemm from 64 under
      AVX2);
    - backward-data with fewer than 64 input channels per group (Cg), unless the
      output channels per group (Kg) are at most twice as many and Cg is at least 8:
      im2col_gemm. Implicit GEMM's gather is a GEMM with Cg rows, and its packing of dY
      feeds each packed value to only Cg multiply-adds; im2col's GEMM has Kg as its
      inner dimension, and its col2im costs the same for any Kg. LeNet conv2 (Cg 20,
      Kg 50) and AlexNet conv2 (48, 128) run faster through im2col_gemm, AlexNetSmall
      conv2 (16, 32) 1.6x faster through implicit_gemm;
    - otherwise implicit_gemm, which is fastest there and lowers nothing.
    """
    supported = _supported(problem, direction, dev)
    if "depthwise" in supported and problem.groups > 1:
        return "depthwise"
    if "gemm_1x1" in supported:
        return "gemm_1x1"
    if dev != devices.CPU:
        return _cuda_heuristic(problem, direction, supported)
    k, cg = problem.w_shape[0], problem.w_shape[1]
    kg = k // problem.groups
    wide = backends.get_isa() == "avx512"
    if "winograd" in supported and _winograd_useful(problem, direction, min(cg, kg), wide):
        return "winograd"
    rows = kg if direction == "forward" else cg
    if "direct" in supported and problem.stride != (1, 1):
        if _direct_strided(problem, direction, cg, kg, wide):
            return "direct"
    elif "direct" in supported and rows >= 8 \
            and (wide or max(cg, kg) <= 64 or _direct_rows(problem, direction)) \
            and _direct_useful_fraction(problem, direction) >= 0.6:
        return "direct"
    if direction == "backward_data" and cg < 64 and not (cg >= 8 and kg <= 2 * cg):
        return "im2col_gemm"
    return "implicit_gemm"


def _winograd_useful(problem, direction, channels, wide):
    """The heuristic's choice of winograd for a 3x3 stride-1 layer with `channels` per
    group (the fewer of input and output; see _heuristic): its 4 x 4 output tiles in the
    batch, the channels and the output's size."""
    n, _, ho, wo = problem.out_shape
    if n * -(-ho // 4) * -(-wo // 4) < 32:
        return False
    outputs = ho * wo
    if direction == "backward_filter":
        if wide:
            return channels >= 128 or (channels >= 48 and outputs >= 27 * 27)
        return channels >= 64 or (channels >= 32 and outputs >= 16 * 16)
    if wide:
        return channels >= 128 or (channels >= 32 and outputs >= 16 * 16)
    return channels >= 16


def _direct_strided(problem, direction, cg, kg, wide):
    """The heuristic's choice of direct at a stride > 1 (see _heuristic)."""
    taps = problem.w_shape[2:]
    # taps r * dil reach every residue mod the stride
    every_phase = all(math.gcd(dil, stride) == 1 and tap >= stride
                      for tap, dil, stride in zip(taps, problem.dilation, problem.stride))
    if not every_phase or _direct_useful_fraction(problem, direction) < 0.6:
        return False
    if direction == "forward":
        return kg >= 8 and taps[0] * taps[1] >= 25 and cg <= 16
    return cg * taps[0] * taps[1] >= 64 and cg <= (128 if wide else 16)


# Bytes per vector of the CPU kernels under each instruction set (generic: 16-byte vectors).
_VECTOR_BYTES = {"avx512": 64, "avx2": 32, "generic": 16}


def _direct_rows(problem, direction):
    """Whether the direct algorithm runs `direction` on its row tiles, output channels
    along the vectors and positions along an output row, which compute only outputs:
    where the channels per group it writes (output channels forward, input channels
    backward) are a multiple of the vector and its K (the other side's channels x taps)
    is at least 32. native/cpu/conv_direct.cpp's rows_path holds the same rule.
    Backward-filter has no row tiles; for it, the forward's rule (the heuristic admits
    its direct backward-filter past 64 channels under AVX2 where the forward has them,
    as measured on AlexNet conv2)."""
    k, cg, r, s = problem.w_shape
    kg = k // problem.groups
    m, inner = (cg, kg) if direction == "backward_data" else (kg, cg)
    lanes = _VECTOR_BYTES.get(backends.get_isa(), 16) // np.dtype(problem.dtype).itemsize
    return m % lanes == 0 and inner * r * s >= 32


def _direct_useful_fraction(problem, direction):
    """The output positions of the convolution over the positions the direct algorithm
    computes (1 on its row tiles, _direct_rows): its tiles along the positions run over a
    layout (native/cpu/conv_direct.cpp) that stacks the padded images with the padding
    shared between neighbours, and compute every position of it; at a stride > 1, each
    phase of the stride is an array of ceil((size + 2 * padding) / stride) per axis and
    image. Backward-data (stride 1) is a forward convolution of dY padded by (R - 1) *
    dilation - padding. Backward-filter skips the padding's positions, but copies the
    input into the same layout and its fraction is kept as a bound (LeNet conv2, 64 outputs
    of 144 positions, ran as fast through implicit_gemm: 0.92 against 0.94 ms)."""
    if direction != "backward_filter" and _direct_rows(problem, direction):
        return 1.0
    n, c, h, w = problem.x_shape
    _, _, ho, wo = problem.out_shape
    taps = problem.w_shape[2:]
    data = direction == "backward_data"
    source = (ho, wo) if data else (h, w)
    strided = not data and problem.stride != (1, 1)
    computed = 1
    for size, pad, tap, dil, stride in zip(source, problem.padding, taps, problem.dilation,
                                           problem.stride):
        if data:
            pad = (tap - 1) * dil - pad
        extent = size + 2 * pad
        if strided:
            computed *= -(-extent // stride)
        else:
            computed *= max(size + pad + min(pad, 0), extent - max(pad, 0), extent - (tap - 1) * dil)
    return ho * wo / computed


_heuristic_choice = caches.register("conv.heuristic", caches.LRUCache("conv.heuristic", 1024))


def conv_algorithm(problem, direction, device="cpu"):
    """The algorithm algo="auto" runs for `problem` in `direction` on `device` now: the
    heuristic's, or with minifw.backends.benchmark = True the autotuned one (the heuristic's
    again in deterministic mode, where timings must not choose)."""
    _check_problem("conv_algorithm", problem)
    check_choice("conv_algorithm", "direction", direction, DIRECTIONS)
    return _choose(problem, direction, devices.get(device, "conv_algorithm"))


def _choose(problem, direction, dev):
    if not backends.benchmark or backends.deterministic_choice():
        key = (problem, direction, dev, backends.get_isa())  # the CPU's choice depends on the ISA
        algo = _heuristic_choice.get(key)
        if algo is None:
            algo = _heuristic(problem, direction, dev)
            _heuristic_choice.put(key, algo)
        return algo
    key = (direction, problem, str(dev), backends.get_isa(), backends.get_num_threads())
    algo = _autotune.get(key)
    if algo is None:
        with _autotune_lock:
            algo = _autotune.get(key)
            if algo is None:
                algo = find_conv_algorithms(problem, direction, device=dev)[0].algo
                _autotune.put(key, algo)
    return algo


# ---- execution -------------------------------------------------------------------

def _check_problem(fn, problem):
    if not isinstance(problem, ConvProblem):
        raise TypeError(f"{fn}: problem must be a ConvProblem, got {type(problem).__name__}")


def _check_algo(fn, problem, direction, algo, dev):
    if algo not in ALGORITHMS[direction]:
        raise ValueError(f"{fn}: algo must be 'auto' or one of {', '.join(map(repr, ALGORITHMS[direction]))}"
                         f" for {direction}; got {algo!r}")
    supported = _supported(problem, direction, dev)
    if algo not in supported:
        needs = _NEEDS.get(algo, "nothing more")
        if dev != devices.CPU and algo == "direct":
            needs = 'stride 1 on the CUDA kernels'
        raise ValueError(f"{fn}: algo {algo!r} does not support this problem ({problem}) on device "
                         f"{str(dev)!r}; it needs {needs}; supported here: {supported}")


def _resolve(fn, problem, direction, algo, dev):
    if algo == "auto":
        return _choose(problem, direction, dev)
    if not isinstance(algo, str):
        raise TypeError(f"{fn}: algo must be a string, got {type(algo).__name__}")
    _check_algo(fn, problem, direction, algo, dev)
    return algo


def _query_workspace(problem, direction, algo, dev):
    """(workspace bytes the caller provides, GEMM packing bytes the kernel allocates)."""
    return devices.kernel("conv", "workspace", problem.dtype, dev)(algo, direction, problem._args)


def _explicit_bytes(problem, direction, algo, dev):
    return _query_workspace(problem, direction, algo, dev)[0]


def _run(direction, problem, algo, auto, *arrays):
    """Run `algo` with its workspace from the device's allocator. An algorithm chosen
    automatically whose workspace is over the allocator's limit gives way to the
    supported one that needs the least (implicit_gemm needs none)."""
    dev = devices.of(arrays[0])
    workspace = devices.workspace(dev)
    explicit = _explicit_bytes(problem, direction, algo, dev)
    if auto and not workspace.fits(explicit):
        algo = min(_supported(problem, direction, dev),
                   key=lambda a: _explicit_bytes(problem, direction, a, dev))
        explicit = _explicit_bytes(problem, direction, algo, dev)
    devices.kernel("conv", direction, problem.dtype, dev)(algo, problem._args, *arrays,
                                                          workspace.get(explicit))


def conv2d_forward(x, w, bias=None, *, stride=1, padding=0, dilation=1, groups=1, algo="auto"):
    """y = conv2d(x, w) + bias, NCHW. x: (N, C, H, W); w: (K, C // groups, R, S); bias: (K,)."""
    fn = "conv2d_forward"
    w = check_float_array(fn, "w", w, ndim=4, ndim_desc="4-D (K, C/groups, R, S)", copy=False)
    x = check_float_array(fn, "x", x, ndim=4, dtype=w.dtype, copy=False,
                          ndim_desc=f"4-D (N, C, H, W) to match weight of shape {w.shape}")
    check_no_zero_dims(fn, "x", x)
    check_no_zero_dims(fn, "w", w)
    problem = _cached_problem(fn, x.shape, w.shape, stride, padding, dilation, groups, w.dtype)
    w, x = contiguous_for(fn, "w", w), contiguous_for(fn, "x", x)
    if bias is not None:
        bias = check_float_array(fn, "bias", bias, ndim=1, dtype=w.dtype)
        if bias.shape[0] != w.shape[0]:
            raise ValueError(f"{fn}: bias must have shape ({w.shape[0]},) to match weight of shape "
                             f"{w.shape}, got {bias.shape}")
    dev = check_same_device(fn, x=x, w=w, bias=bias)
    auto = algo == "auto"
    algo = _resolve(fn, problem, "forward", algo, dev)
    y = devices.empty(problem.out_shape, w.dtype, dev)
    _run("forward", problem, algo, auto, x, w, bias, y)
    return y


def conv2d_backward_data(dy, w, x_shape, *, stride=1, padding=0, dilation=1, groups=1, algo="auto"):
    """dx: the gradient of conv2d_forward with respect to x, of shape x_shape."""
    fn = "conv2d_backward_data"
    w = check_float_array(fn, "w", w, ndim=4, ndim_desc="4-D (K, C/groups, R, S)", copy=False)
    dy = check_float_array(fn, "dy", dy, ndim=4, dtype=w.dtype, ndim_desc="4-D (N, K, Ho, Wo)",
                           copy=False)
    check_no_zero_dims(fn, "w", w)
    problem = _cached_problem(fn, x_shape, w.shape, stride, padding, dilation, groups, w.dtype)
    _check_dy(fn, dy, problem)
    w, dy = contiguous_for(fn, "w", w), contiguous_for(fn, "dy", dy)
    dev = check_same_device(fn, dy=dy, w=w)
    auto = algo == "auto"
    algo = _resolve(fn, problem, "backward_data", algo, dev)
    dx = devices.empty(problem.x_shape, w.dtype, dev)
    _run("backward_data", problem, algo, auto, dy, w, dx)
    return dx


def conv2d_backward_filter(x, dy, w_shape, *, stride=1, padding=0, dilation=1, groups=1, algo="auto"):
    """dw: the gradient of conv2d_forward with respect to w, of shape w_shape."""
    fn = "conv2d_backward_filter"
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)", copy=False)
    dy = check_float_array(fn, "dy", dy, ndim=4, dtype=x.dtype, ndim_desc="4-D (N, K, Ho, Wo)",
                           copy=False)
    check_no_zero_dims(fn, "x", x)
    problem = _cached_problem(fn, x.shape, w_shape, stride, padding, dilation, groups, x.dtype)
    _check_dy(fn, dy, problem)
    x, dy = contiguous_for(fn, "x", x), contiguous_for(fn, "dy", dy)
    dev = check_same_device(fn, x=x, dy=dy)
    auto = algo == "auto"
    algo = _resolve(fn, problem, "backward_filter", algo, dev)
    dw = devices.empty(problem.w_shape, x.dtype, dev)
    _run("backward_filter", problem, algo, auto, x, dy, dw)
    return dw


def conv2d_backward_bias(dy):
    """db[k] = sum of dy[:, k] over N, H, W: the bias primitive's gradient (ops.bias_backward)."""
    fn = "conv2d_backward_bias"
    check_float_array(fn, "dy", dy, ndim=4, ndim_desc="4-D (N, K, Ho, Wo)", copy=False)
    return bias_backward(dy, _fn=fn)


def _check_dy(fn, dy, problem):
    if dy.shape != problem.out_shape:
        raise ValueError(f"{fn}: dy must have the output shape {problem.out_shape} of this problem "
                         f"({problem}), got {dy.shape}")
