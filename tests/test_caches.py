"""Every cache minifw keeps is bounded and can be cleared (minifw.caches): fed many distinct
shapes, each stays under its limit, and the results stay right."""
import threading

import numpy as np
import pytest

import minifw
from minifw import caches, devices, ops
from minifw.caches import LRUCache
from minifw.engines import caffe

ENTRY_CACHES = ("conv.problems", "conv.heuristic", "conv.autotune", "pool.problems")


@pytest.fixture
def small_limits():
    """Every entry cache limited to 4 entries and the byte caches to 64 KiB, restored afterwards."""
    saved = {name: caches.get(name).maxsize for name in ENTRY_CACHES}
    ws, buffers = devices.workspace("cpu"), caches.get("caffe.buffers")
    saved_bytes = (ws.max_cached_bytes, buffers.max_cached_bytes)
    caches.clear()
    for name in ENTRY_CACHES:
        caches.get(name).maxsize = 4
    ws.max_cached_bytes = buffers.max_cached_bytes = 64 << 10
    yield
    for name, n in saved.items():
        caches.get(name).maxsize = n
    ws.max_cached_bytes, buffers.max_cached_bytes = saved_bytes
    caches.clear()


def test_the_documented_defaults():
    for name in ENTRY_CACHES:
        assert caches.get(name).maxsize == 1024
    assert devices.Workspace.DEFAULT_MAX_CACHED_BYTES == caches.get("caffe.buffers").max_cached_bytes \
        == 1 << 30
    assert devices.workspace("cpu") is caches.get("workspace:cpu")
    assert set(ENTRY_CACHES) | {"caffe.buffers", "workspace:cpu"} <= set(caches.names())


def test_lru_cache_keeps_the_most_recently_used():
    cache = LRUCache("test", 3)
    for k in "abc":
        cache.put(k, k.upper())
    assert cache.get("a") == "A"  # a is now the most recent: b goes next
    cache.put("d", "D")
    assert [k for k, _ in cache.items()] == ["c", "a", "d"] and "b" not in cache
    assert cache.get("b", "missing") == "missing"
    assert cache.stats() == {"entries": 3, "maxsize": 3, "hits": 1, "misses": 1, "evictions": 1}
    cache.maxsize = 1  # shrinking drops the oldest at once
    assert cache.items() == [("d", "D")]
    cache.maxsize = 0  # keeps nothing
    cache.put("e", "E")
    assert len(cache) == 0
    with pytest.raises(TypeError):
        cache.get(["unhashable"])


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), (True, TypeError),
                                        (None, TypeError)])
def test_limits_must_be_ints(bad, error):
    with pytest.raises(error, match=r"conv\.problems\.maxsize: maxsize must be an int >= 0, got"):
        caches.get("conv.problems").maxsize = bad
    with pytest.raises(error, match="Workspace: max_cached_bytes must be an int >= 0, got"):
        devices.workspace("cpu").max_cached_bytes = bad
    with pytest.raises(error, match="caffe buffers: max_cached_bytes must be an int >= 0, got"):
        caches.get("caffe.buffers").max_cached_bytes = bad
    assert caches.get("conv.problems").maxsize == 1024


def test_an_unknown_cache_names_the_known_ones():
    with pytest.raises(KeyError, match="no cache named 'conv'; known: caffe.buffers, conv.autotune"):
        caches.get("conv")


def _conv_shapes(count):
    """`count` distinct small convolutions: x (N, C, H, W), w (K, C, R, S)."""
    return [((1, 2, 6 + i, 5), (3, 2, 3, 3)) for i in range(count)]


def test_conv_memos_stay_bounded_over_many_shapes(small_limits, rng):
    # the counters run over the cache's life (clear() empties it only): earlier tests that
    # made more than the default 1024 problems have evicted some already
    evicted_before = caches.get("conv.problems").stats()["evictions"]
    for x_shape, w_shape in _conv_shapes(12):
        x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
        y = ops.conv2d_forward(x, w)
        ops.conv2d_backward_data(np.ones_like(y), w, x_shape)
        ops.conv2d_backward_filter(x, np.ones_like(y), w_shape)
        ops.pool2d_forward(x, 2)
        for name in ENTRY_CACHES:
            assert len(caches.get(name)) <= 4
    assert len(caches.get("conv.problems")) == len(caches.get("conv.heuristic")) == 4
    assert caches.get("conv.problems").stats()["evictions"] - evicted_before == 3 * 12 - 4
    assert len(caches.get("pool.problems")) == 4
    caches.clear()
    assert all(len(caches.get(name)) == 0 for name in ENTRY_CACHES)


def test_the_autotune_cache_stays_bounded_and_clears(small_limits, rng, monkeypatch):
    monkeypatch.setattr(minifw.backends, "benchmark", True)
    for x_shape, w_shape in _conv_shapes(6):
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        want = ops.conv2d_forward(x, w, algo="implicit_gemm")
        np.testing.assert_allclose(ops.conv2d_forward(x, w), want, rtol=1e-5, atol=1e-5)
        assert len(ops.autotune_cache()) <= 4
    kept = ops.autotune_cache()
    assert len(kept) == 4 and {key[1].x_shape for key in kept} == {s for s, _ in _conv_shapes(6)[2:]}
    ops.clear_autotune_cache()
    assert ops.autotune_cache() == {}


def test_workspace_keeps_at_most_max_cached_bytes(small_limits, rng):
    ws = devices.workspace("cpu")
    small = ws.get(40 << 10)
    assert ws.current_bytes == 40 << 10 and ws.get(1000) is small
    big = ws.get(100 << 10)  # over 64 KiB: a buffer of its own, not kept
    assert big.nbytes == 100 << 10 and ws.current_bytes == 0 and ws.get(100 << 10) is not big
    assert ws.peak_bytes == 100 << 10
    # convolutions whose lowered matrix is over the bound still compute right
    x = rng.standard_normal((2, 8, 24, 24)).astype(np.float32)
    w = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    problem = ops.ConvProblem(x.shape, w.shape)
    assert ops.conv_workspace_size(problem, "forward", "im2col_gemm") > 64 << 10
    np.testing.assert_allclose(ops.conv2d_forward(x, w, algo="im2col_gemm"),
                               ops.conv2d_forward(x, w, algo="implicit_gemm"), rtol=1e-5, atol=1e-4)
    assert ws.current_bytes <= 64 << 10
    ws.get(60 << 10)
    ws.max_cached_bytes = 16 << 10  # lowering the bound frees what is over it
    assert ws.current_bytes == 0
    ws.clear()
    assert ws.current_bytes == ws.peak_bytes == 0


def test_a_threads_workspace_goes_when_the_thread_has_ended(small_limits):
    ws = devices.workspace("cpu")
    threads = [threading.Thread(target=ws.get, args=(10 << 10,)) for _ in range(4)]
    for t in threads:
        t.start()
        t.join()  # one after another: each ended thread's buffer goes at the next one's request
    assert ws.current_bytes == 10 << 10
    ws.get(1 << 10)  # this thread's first request drops the last ended thread's buffer
    assert ws.current_bytes == 1 << 10


def test_caffe_buffers_stay_bounded_over_many_shapes(small_limits, rng):
    buffers = caches.get("caffe.buffers")
    for x_shape, w_shape in _conv_shapes(8) + [((4, 8, 24, 24), (4, 8, 3, 3))]:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        np.testing.assert_allclose(caffe.conv2d_forward(x, w), ops.conv2d_forward(x, w),
                                   rtol=1e-5, atol=1e-4)
        assert buffers.current_bytes <= 64 << 10
    assert buffers.current_bytes > 0  # the small shapes' buffers were kept
    buffers.clear()
    assert buffers.current_bytes == 0
    caffe.conv2d_forward(x[:, :, :8, :8], w)
    assert buffers.current_bytes > 0
    caffe.release_buffers()  # this thread's
    assert buffers.current_bytes == 0


def test_clear_empties_every_cache(rng):
    x = rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    ops.conv2d_forward(x, w, algo="im2col_gemm")
    caffe.conv2d_forward(x, w)
    assert len(caches.get("conv.problems")) > 0 and devices.workspace("cpu").current_bytes > 0
    caches.clear()
    for name, stats in caches.stats().items():
        assert stats.get("entries", 0) == 0 and stats.get("current_bytes", 0) == 0, name
