"""GEMM: C = alpha * op(A) @ op(B) + beta * C against NumPy in float64, on
odd sizes that leave partial register and cache blocks, every transpose,
every leading-dimension layout and every ISA the CPU supports."""
import numpy as np
import pytest

from minifw import _native, backends, ops
from reference import assert_within_bound, gemm_ref, tolerance
from targets import assert_on, host, kernel_devices, place

DTYPES = [np.float32, np.float64]
DTYPE_IDS = ["float32", "float64"]
TRANSPOSES = [(False, False), (True, False), (False, True), (True, True)]
TRANS_IDS = ["NN", "TN", "NT", "TT"]

# Error bound (tolerance() in reference.py): relative to the sum of |terms|
# of each output, |alpha| * |A| @ |B| + |beta * C|.

SIZES = [  # (M, N, K): odd, smaller and larger than every register tile and cache block
    (1, 1, 1),
    (1, 7, 1),
    (3, 5, 7),
    (17, 33, 9),
    (15, 31, 63),
    (64, 64, 64),
    (97, 113, 131),
    (1, 300, 5),
    (255, 1, 257),
    (5, 1031, 7),      # N past every nc
    (131, 37, 777),    # K past every kc, unequal blocks
    (45, 67, 363),     # past the kc of a 32 KiB L1d, within the table's: one K block there
    (521, 533, 401),   # M, N, K past every mc, nc, kc, with partial tiles at each edge
    (589, 301, 403),   # M past the AVX-512 float blocks' mc: the GotoBLAS order with their tall blocks
    # few rows (an inner product at a small batch): NT runs as dot products
    (3, 37, 200),      # partial row and column tiles, K past a vector multiple
    (16, 257, 1031),   # K past the dot kernel's 4 KiB chunk, partial last column tile
    (13, 9, 67),
    (1, 1, 64),
]


def size_id(s):
    return "x".join(map(str, s))


def operands(m, n, k, dtype, trans_a, trans_b, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    return a, b, c


def check(got, a, b, c, trans_a, trans_b, alpha, beta, dtype, what=""):
    a, b, c = host(a), host(b), host(c)
    ref = gemm_ref(a, b, c, trans_a, trans_b, alpha, beta)
    ref_abs = gemm_ref(np.abs(a), np.abs(b), None if c is None else np.abs(c), trans_a, trans_b, abs(alpha),
                       abs(beta))
    assert got.dtype == dtype and got.shape == ref.shape
    assert_within_bound(got, ref, ref_abs, *tolerance(dtype), what=what)


@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_gemm_matches_numpy(target, dtype, trans, size):
    a, b, _ = operands(*size, dtype, *trans)
    c = ops.gemm(*place(target, a, b), trans_a=trans[0], trans_b=trans[1])
    assert c.flags.c_contiguous
    assert_on(target, c)
    check(c, a, b, None, *trans, 1.0, 0.0, dtype, what=f"{target} {size}")


ALPHA_BETA = [(1.0, 0.0), (2.5, 0.0), (1.0, 1.0), (-0.5, 2.0), (0.0, 1.5), (0.0, 0.0), (3.0, -1.0)]


@pytest.mark.parametrize("alpha,beta", ALPHA_BETA, ids=[f"alpha{a}_beta{b}" for a, b in ALPHA_BETA])
@pytest.mark.parametrize("size", [(1, 1, 1), (17, 33, 9), (131, 37, 777), (97, 113, 131)], ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_alpha_beta_into_c(target, dtype, trans, size, alpha, beta):
    a, b, c0 = operands(*size, dtype, *trans)
    a, b, c = place(target, a, b, c0)
    out = ops.gemm(a, b, c, trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta)
    assert out is c  # written into c, as in BLAS
    check(out, a, b, c0, *trans, alpha, beta, dtype)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (-0.5, 2.0)], ids=["alpha1_beta0", "alpha-0.5_beta2"])
@pytest.mark.parametrize("size", [(20, 25, 36864), (7, 3, 5000), (30, 40, 1601)], ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_long_k_split_among_threads(dtype, trans, size, alpha, beta, threads):
    # C with few tiles and a long K: the driver splits K among the threads and sums
    # their partial products (with threads > 1)
    a, b, c = operands(*size, dtype, *trans)
    c0 = c.copy()
    saved = backends.get_num_threads()
    backends.set_num_threads(threads)
    try:
        out = ops.gemm(a, b, c, trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta)
    finally:
        backends.set_num_threads(saved)
    check(out, a, b, c0, *trans, alpha, beta, dtype, what=f"{threads} threads")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_beta_zero_ignores_what_c_held(target, dtype):
    # BLAS convention: with beta = 0, c is output only (so np.empty is fine), NaN and all
    a, b, _ = operands(13, 29, 11, dtype, False, False)
    c = place(target, np.full((13, 29), np.nan, dtype))
    ops.gemm(*place(target, a, b), c, alpha=2.0, beta=0.0)
    check(c, a, b, None, False, False, 2.0, 0.0, dtype)


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("trans_b", [False, True], ids=["b", "bT"])
def test_cuda_kernel_with_more_column_tiles_than_grid_y_takes(device, trans_b):
    # 65,537 tiles of 64 columns: past the 65,535 blocks of grid y, so the kernel walks
    # columns along grid x (as in AlexNet conv1's data gradient, 3 x N*227*227)
    m, n, k = 3, 64 * 65536 + 1, 2
    a, b, c = operands(m, n, k, np.float32, False, trans_b, seed=3)
    c[:, ::7] = np.nan  # beta 0: C is not read
    out = place(device, c)
    ops.gemm(*place(device, a, b), out, trans_b=trans_b, alpha=1.5)
    check(out, a, b, None, False, trans_b, 1.5, 0.0, np.float32, what=f"{device} {m}x{n}x{k}")


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_cuda_kernel_of_128_tiles_on_many_tiles(device, dtype, trans):
    # 17 x 17 tiles of 128 (at least 256): the kernel with 8 x 8 results per thread, its
    # edges cut at 2,049 and K an odd number of its steps of 8
    a, b, c = operands(2049, 2049, 27, dtype, *trans, seed=13)
    out = place(device, c)
    ops.gemm(*place(device, a, b), out, trans_a=trans[0], trans_b=trans[1], alpha=0.5, beta=-1.0)
    check(out, a, b, c, *trans, 0.5, -1.0, dtype, what=f"{device} 2049x2049x27")


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (-2.0, 0.5)])
@pytest.mark.parametrize("size", [(5, 7, 5000), (1, 1, 4096), (70, 130, 4100), (3, 200, 9001)], ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_cuda_kernel_splits_few_tiles_over_a_long_k(device, dtype, trans, size, alpha, beta):
    # Fewer than 128 tiles of C and K of 4,096 or more: the GPU kernel sums K ranges computed
    # by separate blocks, then scales, adds beta * C and stores once per element
    a, b, c = operands(*size, dtype, *trans, seed=11)
    if beta == 0.0:
        c[:] = np.nan  # not read
    out = place(device, c)
    ops.gemm(*place(device, a, b), out, trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta)
    check(out, a, b, None if beta == 0.0 else c, *trans, alpha, beta, dtype, what=f"{device} {size}")


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (2.0, 0.5)])
@pytest.mark.parametrize("size", [(37, 25, 19), (300, 70, 130)], ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_any_leading_dimension(target, dtype, trans, size, alpha, beta):
    """Row-major views with a row stride longer than a row (sub-blocks of a
    larger matrix) and column-major views (x.T): read in place, same result."""
    m, n, k = size
    rng = np.random.default_rng(1)
    side = max(m, n, k) + 13  # room for every slice below, in either orientation
    big_a = rng.standard_normal((side, side + 3)).astype(dtype)
    big_b = rng.standard_normal((side + 5, side)).astype(dtype)
    big_a, big_b = place(target, big_a, big_b)
    a_shape = (k, m) if trans[0] else (m, k)
    b_shape = (n, k) if trans[1] else (k, n)
    views = {
        "a_slice": big_a[3:3 + a_shape[0], 5:5 + a_shape[1]],
        "a_transposed": big_a[:a_shape[1], :a_shape[0]].copy(order="C").T,
        "a_transposed_slice": big_a[4:4 + a_shape[1], 2:2 + a_shape[0]].T,
    }
    b_views = {
        "b_slice": big_b[7:7 + b_shape[0], 1:1 + b_shape[1]],
        "b_transposed": big_b[:b_shape[1], :b_shape[0]].copy(order="C").T,
        "b_transposed_slice": big_b[2:2 + b_shape[1], 6:6 + b_shape[0]].T,
    }
    c0 = place(target, rng.standard_normal((m, n)).astype(dtype))
    for a_name, a in views.items():
        for b_name, b in b_views.items():
            assert not a.flags.c_contiguous and not b.flags.c_contiguous
            a_before, b_before = a.copy(), b.copy()
            c = c0.copy()
            ops.gemm(a, b, c, trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta)
            check(c, a, b, c0, *trans, alpha, beta, dtype, what=f"{a_name} {b_name}")
            # the same values as contiguous arrays give the same answer, to the bit
            np.testing.assert_array_equal(c, ops.gemm(a.copy(order="C"), b.copy(order="C"), c0.copy(),
                                                      trans_a=trans[0], trans_b=trans[1], alpha=alpha, beta=beta))
            np.testing.assert_array_equal(a, a_before)
            np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize("layout", ["every_other_column", "reversed_rows", "fortran_read_only", "broadcast_row"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_other_layouts_are_copied(dtype, layout):
    """Views with no unit stride, negative strides, zero strides: still right."""
    rng = np.random.default_rng(2)
    base = rng.standard_normal((41, 58)).astype(dtype)
    a = {
        "every_other_column": base[:, ::2],
        "reversed_rows": base[::-1, :29],
        "fortran_read_only": np.asfortranarray(base[:, :29]),
        "broadcast_row": np.broadcast_to(base[0, :29], (41, 29)),
    }[layout]
    if layout == "fortran_read_only":
        a.setflags(write=False)
    b = rng.standard_normal((29, 23)).astype(dtype)
    check(ops.gemm(a, b), a, b, None, False, False, 1.0, 0.0, dtype)
    check(ops.gemm(b.T, a.T), b.T, a.T, None, False, False, 1.0, 0.0, dtype)


@pytest.mark.parametrize("m,n,k", [pytest.param(*s, id=size_id(s)) for s in
                                   [(0, 5, 3), (4, 0, 3), (0, 0, 0), (4, 5, 0), (1, 1, 0)]])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_empty_dimensions_follow_numpy(dtype, m, n, k):
    a, b = np.ones((m, k), dtype), np.ones((k, n), dtype)
    got = ops.gemm(a, b)
    np.testing.assert_array_equal(got, a @ b)  # K == 0: zeros of shape (M, N)
    assert got.shape == (m, n) and got.dtype == dtype
    c = np.full((m, n), 3.0, dtype)
    ops.gemm(a, b, c, alpha=2.0, beta=0.5)
    np.testing.assert_array_equal(c, 2.0 * (a @ b) + 0.5 * np.full((m, n), 3.0, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_every_register_block_is_exact(isa, dtype):
    # The row count of C picks the register block (the one that pads it the
    # least), so the sizes above may miss one: run each block the ISA has.
    by_kernel = {}
    for m in range(1, 64):
        by_kernel.setdefault(_native.gemm_kernel_name(np.dtype(dtype).name, m), m)
    for m in by_kernel.values():
        for trans in TRANSPOSES:
            a, b, c = operands(m, 45, 37, dtype, *trans, seed=m)
            got = c.copy()
            ops.gemm(a, b, got, trans_a=trans[0], trans_b=trans[1], alpha=1.5, beta=0.5)
            check(got, a, b, c, *trans, 1.5, 0.5, dtype, what=f"m={m}")


def test_isa_fixture_switches_the_kernel(isa):
    # guards the ISA tests above against running one kernel under three names
    assert backends.get_isa() == isa
    for dtype in ("float32", "float64"):
        assert _native.gemm_kernel_name(dtype).startswith(isa)


# ---- bad input: TypeError for types and dtypes, ValueError for shapes ---------------

def _ab(m=3, n=4, k=5, dtype=np.float32):
    return np.ones((m, k), dtype), np.ones((k, n), dtype)


def test_inner_dimension_mismatch_names_the_shapes():
    a, b = np.ones((3, 5), np.float32), np.ones((6, 4), np.float32)
    with pytest.raises(ValueError, match=r"inner dimensions.*\(3, 5\).*\(6, 4\)"):
        ops.gemm(a, b)
    with pytest.raises(ValueError, match=r"inner dimensions.*\(5, 3\).*\(6, 4\)"):
        ops.gemm(a, b, trans_a=True)
    with pytest.raises(ValueError, match=r"inner dimensions.*\(3, 5\).*\(4, 6\)"):
        ops.gemm(a, b, trans_b=True)


def test_beta_without_c():
    with pytest.raises(ValueError, match=r"beta must be 0 when c is None.*0\.5"):
        ops.gemm(*_ab(), beta=0.5)


@pytest.mark.parametrize("bad,exc,pattern", [
    pytest.param(np.ones((3, 4), np.float64), TypeError, r"c must have dtype float32.*float64", id="dtype"),
    pytest.param(np.ones((4, 3), np.float32), ValueError, r"c must have shape \(3, 4\).*\(4, 3\)", id="shape"),
    pytest.param(np.ones((12,), np.float32), ValueError, r"c must have shape \(3, 4\).*\(12,\)", id="flat"),
    pytest.param(np.ones((4, 3), np.float32).T, ValueError, r"c must be a C-contiguous", id="transposed"),
    pytest.param(np.ones((3, 8), np.float32)[:, ::2], ValueError, r"c must be a C-contiguous", id="strided"),
    pytest.param(np.broadcast_to(np.float32(1), (3, 4)), ValueError, r"c must be a C-contiguous, writable",
                 id="read_only"),
    pytest.param([[0.0] * 4] * 3, TypeError, r"c must be a numpy.ndarray .*got list", id="list"),
])
def test_bad_c(bad, exc, pattern):
    with pytest.raises(exc, match=pattern):
        ops.gemm(*_ab(), bad, beta=1.0)


@pytest.mark.parametrize("shared", ["a", "b"])
def test_c_sharing_memory_with_an_operand_is_refused(shared):
    buf = np.ones((8, 8), np.float32)
    a, b = (buf, np.ones((8, 8), np.float32)) if shared == "a" else (np.ones((8, 8), np.float32), buf)
    with pytest.raises(ValueError, match=f"gemm: c must not share memory with {shared}"):
        ops.gemm(a, b, buf)
    with pytest.raises(ValueError, match=f"c: must not share memory with {shared}"):
        _native.gemm_f32(a, b, buf[:, :8], False, False, 1.0, 0.0)


def test_read_only_contiguous_c_is_refused():
    c = np.zeros((3, 4), np.float32)
    c.setflags(write=False)
    with pytest.raises(ValueError, match=r"c must be a C-contiguous, writable"):
        ops.gemm(*_ab(), c)


@pytest.mark.parametrize("a,b,exc,pattern", [
    pytest.param(np.ones((3, 5), np.int32), np.ones((5, 4), np.float32), TypeError,
                 r"a must have dtype float32 or float64, got int32", id="int_a"),
    pytest.param(np.ones((3, 5), np.float32), np.ones((5, 4), np.float16), TypeError,
                 r"b must have dtype float32 or float64, got float16", id="half_b"),
    pytest.param(np.ones((3, 5), np.float32), np.ones((5, 4), np.float64), TypeError,
                 r"b must have dtype float32 to match.*got float64", id="mixed_dtypes"),
    pytest.param(np.ones((3, 5), np.complex64), np.ones((5, 4), np.complex64), TypeError,
                 r"a must have dtype float32 or float64, got complex64", id="complex"),
    pytest.param(np.ones(5, np.float32), np.ones((5, 4), np.float32), ValueError,
                 r"a must be 2-D.*got a 1-D array of shape \(5,\)", id="vector_a"),
    pytest.param(np.ones((3, 5), np.float32), np.ones((1, 5, 4), np.float32), ValueError,
                 r"b must be 2-D.*got a 3-D array of shape \(1, 5, 4\)", id="batched_b"),
    pytest.param([[1.0] * 5] * 3, np.ones((5, 4), np.float32), TypeError,
                 r"a must be a numpy.ndarray .*got list", id="list_a"),
    pytest.param(np.ones((3, 5), np.float32), 2.0, TypeError, r"b must be a numpy.ndarray .*got float",
                 id="scalar_b"),
])
def test_bad_operands(a, b, exc, pattern):
    with pytest.raises(exc, match=pattern):
        ops.gemm(a, b)


@pytest.mark.parametrize("kwargs,pattern", [
    pytest.param(dict(alpha="2"), r"alpha must be a real number, got str", id="alpha_str"),
    pytest.param(dict(alpha=1j), r"alpha must be a real number, got complex", id="alpha_complex"),
    pytest.param(dict(alpha=None), r"alpha must be a real number, got NoneType", id="alpha_none"),
    pytest.param(dict(beta=True), r"beta must be a real number, got bool", id="beta_bool"),
    pytest.param(dict(trans_a=1), r"trans_a must be a bool, got int", id="trans_a_int"),
    pytest.param(dict(trans_b="yes"), r"trans_b must be a bool, got str", id="trans_b_str"),
])
def test_bad_scalars(kwargs, pattern):
    with pytest.raises(TypeError, match=pattern):
        ops.gemm(*_ab(), **kwargs)


# ---- cache blocks follow the caches the CPU reports ------------------------------------------
TUNED_CACHES = (48 * 1024, 2 * 1024 * 1024)  # what the ISA tables were tuned on


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("caches", [TUNED_CACHES, (32 * 1024, 512 * 1024), (32 * 1024, 1024 * 1024),
                                    (48 * 1024, 1024 * 1024), (64 * 1024, 4 * 1024 * 1024),
                                    (16 * 1024, 256 * 1024), (4 * 1024, 32 * 1024)],
                         ids=lambda c: f"L1d{c[0] // 1024}K_L2{c[1] // 1024}K")
def test_cache_blocks_fit_the_caches(isa, dtype, caches):
    table = _native.gemm_blocking(dtype, 0, *TUNED_CACHES)
    k = _native.gemm_blocking(dtype, 0, *caches)
    itemsize = np.dtype(dtype).itemsize
    l1, l2 = caches
    assert (k["l1d_bytes"], k["l2_bytes"]) == caches
    assert (k["mr"], k["nr"]) == (table["mr"], table["nr"])
    assert k["kc"] % 8 == 0 and k["mc"] % k["mr"] == 0 and k["nc"] % k["nr"] == 0
    # never larger than the tuned blocks
    assert k["kc"] <= table["kc"] and k["mc"] <= table["mc"] and k["nc"] <= table["nc"]
    # the kc x nr micro-panel of B fits in the L1d (kc is at least 64), and kc is the
    # largest multiple of 8 that does, up to the table's
    assert k["kc"] * k["nr"] * itemsize <= l1 or k["kc"] == 64
    assert k["kc"] == table["kc"] or k["kc"] == 64 or (k["kc"] + 8) * k["nr"] * itemsize > l1
    # the mc x kc block of A fits in half the L2 (mc is at least one micro-tile)
    assert k["mc"] * k["kc"] * itemsize <= l2 / 2 or k["mc"] == k["mr"]
    assert k["mc"] == table["mc"] or k["mc"] == k["mr"] or (k["mc"] + k["mr"]) * k["kc"] * itemsize > l2 / 2
    # a K up to the table's kc still runs as one block where the L1d lowers kc
    assert table["kc_whole"] == table["kc"] and k["kc_whole"] == table["kc"]


def test_tuned_blocks_are_kept_on_the_cpu_they_were_tuned_on(isa):
    # on the caches the tables were tuned on, the caps leave every block as it is:
    # the same blocks as with caches too large to bind
    huge = (1 << 30, 1 << 32)
    for dtype in ("float32", "float64"):
        for m in (0, 8, 10, 14):
            assert _native.gemm_blocking(dtype, m, *TUNED_CACHES) == dict(
                _native.gemm_blocking(dtype, m, *huge), l1d_bytes=TUNED_CACHES[0], l2_bytes=TUNED_CACHES[1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("caches", [TUNED_CACHES, (48 * 1024, 1024 * 1024), (32 * 1024, 512 * 1024)],
                         ids=lambda c: f"L1d{c[0] // 1024}K_L2{c[1] // 1024}K")
def test_loop_order_follows_the_rows(isa, dtype, caches):
    # A kernel that packs each block of A once (a_outer) keeps that order while C's rows fit
    # in one block of A; past it, B would be packed again for every block of A, so the
    # product runs in the GotoBLAS order, on blocks that still fit the caches.
    table = _native.gemm_blocking(dtype, 0, *caches)
    itemsize = np.dtype(dtype).itemsize
    fits = _native.gemm_blocking(dtype, table["mc"], *caches)
    tall = _native.gemm_blocking(dtype, table["mc"] + 1, *caches)
    assert fits["a_outer"] == table["a_outer"] and fits["mc"] == table["mc"]
    if not table["a_outer"]:
        assert tall == fits
        return
    assert not tall["a_outer"]
    assert tall["name"] == fits["name"] and tall["kc"] == fits["kc"]
    assert tall["mc"] % tall["mr"] == 0 and tall["mc"] * tall["kc"] * itemsize <= caches[1] / 2
    assert tall["nc"] % tall["nr"] == 0 and tall["nc"] >= table["nc"]
    assert _native.gemm_blocking(dtype, 4096, *caches) == tall


def test_blocks_on_this_cpu_are_the_reported_caches():
    here = _native.gemm_blocking("float32")
    assert here == _native.gemm_blocking("float32", 0, here["l1d_bytes"], here["l2_bytes"]) \
        or 0 in (here["l1d_bytes"], here["l2_bytes"])


# ---- B packed once, reused by many products (a recurrent layer's W_hh) --------------
PREPACKED_SIZES = [
    (32, 2048, 512),   # the char-LSTM's recurrent GEMM: N batch rows, 4 gates x H
    (32, 512, 2048),   # its backward: dh = dgates * W_hh
    (17, 33, 9),
    (131, 37, 777),    # K past every kc, unequal blocks
    (45, 67, 363),     # past the kc of a 32 KiB L1d, within the table's: one K block there
    (521, 533, 401),   # M, N, K past every mc, nc, kc
    (589, 301, 403),   # M past the AVX-512 float blocks' mc: the GotoBLAS order over the packed B
    (5, 1031, 70),     # few rows: NT runs as dot products and B stays unpacked
]


@pytest.mark.parametrize("size", PREPACKED_SIZES, ids=size_id)
@pytest.mark.parametrize("trans", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_prepacked_b_matches_numpy(isa, dtype, trans, size):
    a, b, c = operands(*size, dtype, *trans)
    c0 = c.copy()
    fn = getattr(_native, f"gemm_prepacked_b_{'f32' if dtype == np.float32 else 'f64'}")
    fn(a, b, c, trans[0], trans[1], 0.5, 1.0, 1)
    check(c, a, b, c0, *trans, 0.5, 1.0, dtype, what=f"{isa} {size}")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_prepacked_b_reused_across_products(dtype, threads):
    # Three products from one packed B, into the same C: C = 0.5 A B + 0.5 C each time.
    a, b, c = operands(64, 300, 700, dtype, False, True, seed=3)
    want = c.astype(np.float64)
    for _ in range(3):
        want = 0.5 * (a.astype(np.float64) @ b.T.astype(np.float64)) + 0.5 * want
    fn = getattr(_native, f"gemm_prepacked_b_{'f32' if dtype == np.float32 else 'f64'}")
    saved = backends.get_num_threads()
    backends.set_num_threads(threads)
    try:
        fn(a, b, c, False, True, 0.5, 0.5, 3)
    finally:
        backends.set_num_threads(saved)
    tol = {np.float32: 1e-4, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol * np.abs(want).max())


# ---- a C of 32 MiB or more: full tiles written with non-temporal stores ------------------

LARGE_C = [  # M x N past 32 MiB with edge tiles; M past and within the AVX-512 float blocks' mc
    (np.float32, 1031, 8208, 7),
    (np.float32, 523, 16400, 9),
    (np.float64, 701, 6104, 5),
]


@pytest.mark.parametrize("placement", ["aligned", "offset", "odd_ldc"])
@pytest.mark.parametrize("dtype, m, n, k", LARGE_C, ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_large_c_in_every_placement(isa, dtype, m, n, k, placement):
    # "aligned": C and its rows on 64-byte boundaries, where full tiles stream; "offset":
    # C 16 bytes past one, "odd_ldc": rows of a length that is no multiple of 64 bytes,
    # where they cannot. beta = 0 never reads what C held (NaN here).
    item = np.dtype(dtype).itemsize
    n -= placement == "odd_ldc"
    assert m * n * item >= 32 << 20
    rng = np.random.default_rng(3)
    a = rng.standard_normal((k, m)).astype(dtype)  # read transposed, as a weight gradient's dY
    b = rng.standard_normal((k, n)).astype(dtype)
    raw = np.empty(m * n + 128 // item, dtype)
    start = (-raw.ctypes.data % 64) // item + (16 // item if placement == "offset" else 0)
    c = raw[start:start + m * n].reshape(m, n)
    c.fill(np.nan)
    ops.gemm(a, b, c, trans_a=True)
    check(c, a, b, None, True, False, 1.0, 0.0, dtype, what=placement)
    c[...] = 1.0
    ops.gemm(a, b, c, trans_a=True, alpha=2.0, beta=0.5)  # beta != 0: C read, plain stores
    check(c, a, b, np.ones((m, n), dtype), True, False, 2.0, 0.5, dtype, what=placement)
