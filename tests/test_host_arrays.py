"""The host array cache (minifw.devices.HostArrays, minifw.caches' "host.arrays"): a large
host array comes from a block that a freed array of its size gave back, the block goes back
only when the last view of the array has gone, the cache keeps within its limit, and
autograd hands such an array over as a gradient without copying it."""
import threading

import numpy as np
import pytest

import minifw
from minifw import caches, devices, nn

MiB = 1 << 20


@pytest.fixture
def cache():
    """The cache with small limits: arrays from 64 KiB (each in a block of 2 MiB or more),
    16 MiB kept; restored and emptied afterwards."""
    arrays = devices.host_arrays
    saved = arrays.min_bytes, arrays.max_cached_bytes
    arrays.clear()
    arrays.min_bytes, arrays.max_cached_bytes = 64 << 10, 16 * MiB
    yield arrays
    arrays.min_bytes, arrays.max_cached_bytes = saved
    arrays.clear()


def _address(a):
    return a.__array_interface__["data"][0]


def test_the_documented_defaults():
    assert devices.host_arrays is caches.get("host.arrays")
    assert devices.HostArrays.DEFAULT_MIN_BYTES == devices.MALLOC_MMAP_THRESHOLD == 32 * MiB
    assert devices.HostArrays.DEFAULT_MAX_CACHED_BYTES == 1 << 30


def test_a_freed_array_gives_its_block_to_the_next_of_its_size(cache):
    a = devices.empty((300, 500), np.float32)
    assert a.shape == (300, 500) and a.dtype == np.float32
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    assert not a.flags.owndata and devices.owns_memory(a)
    assert _address(a) % 64 == 0  # whole cache lines, for the GEMM's non-temporal stores
    a[...] = 2.5
    assert float(a.sum()) == 2.5 * 300 * 500
    where, hits = _address(a), cache.stats()["hits"]
    del a
    assert cache.stats()["entries"] == 1 and cache.current_bytes == 2 * MiB
    # another shape and dtype in a block of the same size: the same memory
    b = devices.empty((1000, 100), np.float64)
    assert _address(b) == where and b.shape == (1000, 100) and b.dtype == np.float64
    assert cache.stats()["entries"] == 0 and cache.stats()["hits"] == hits + 1
    c = devices.empty(3 * MiB, np.uint8)  # a block of 4 MiB: not the same one
    assert _address(c) != where and c.size == 3 * MiB


def test_small_arrays_and_the_caches_own_buffers_are_numpys(cache):
    before = cache.stats()
    small = devices.empty((10, 10), np.float32)
    kept = devices.empty((300, 500), np.float32, recycle=False)
    records = devices.empty(20000, np.dtype([("a", np.float64), ("b", np.int64)]))
    assert small.flags.owndata and kept.flags.owndata and records.flags.owndata
    assert devices.owns_memory(small) and devices.owns_memory(kept)
    del small, kept, records
    assert cache.stats() == before  # neither asked for, nor given back
    assert not devices.owns_memory(np.ones(4)[1:])


def test_the_block_goes_back_when_the_last_view_has_gone(cache):
    a = devices.empty((256, 512), np.float32)
    a[...] = np.arange(512, dtype=np.float32)
    transposed, rows, flat = a[1:].T, a[::3], a.reshape(-1)
    del a
    assert cache.stats()["entries"] == 0
    del rows, flat
    assert cache.stats()["entries"] == 0
    other = devices.empty((256, 512), np.float32)  # a new block: the old one is still in use
    other[...] = -1
    np.testing.assert_array_equal(transposed[:, 0], np.arange(512, dtype=np.float32))
    del transposed
    assert cache.stats()["entries"] == 1
    del other
    assert cache.stats()["entries"] == 2


def test_the_cache_keeps_within_its_limit(cache):
    arrays = [devices.empty(k * 2 * MiB - 100, np.uint8) for k in range(1, 7)]  # 2 .. 12 MiB blocks
    while arrays:  # 42 MiB given back, smallest first: the oldest given up to stay within 16
        del arrays[0]
    assert cache.current_bytes <= 16 * MiB
    assert sorted(size for size, blocks in cache._free.items() for _ in blocks) == [12 * MiB]
    too_big = devices.empty(20 * MiB, np.uint8)
    del too_big  # over the limit alone: freed
    assert cache.current_bytes == 12 * MiB
    cache.max_cached_bytes = 4 * MiB  # lowering the limit gives up blocks at once
    assert cache.current_bytes == 0 and cache.stats()["entries"] == 0
    cache.max_cached_bytes = 0
    a = devices.empty(MiB, np.uint8)
    del a
    assert cache.current_bytes == 0


def test_clear_and_caches_clear_empty_it(cache):
    a, b = devices.empty(MiB, np.uint8), devices.empty(3 * MiB, np.uint8)
    del a, b
    assert cache.current_bytes == 6 * MiB
    caches.clear()
    assert cache.stats()["entries"] == 0 and cache.current_bytes == 0


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), (True, TypeError),
                                        (None, TypeError)])
def test_limits_must_be_ints(cache, bad, error):
    with pytest.raises(error, match="HostArrays: min_bytes must be an int >= 0, got"):
        cache.min_bytes = bad
    with pytest.raises(error, match="HostArrays: max_cached_bytes must be an int >= 0, got"):
        cache.max_cached_bytes = bad
    assert cache.min_bytes == 64 << 10 and cache.max_cached_bytes == 16 * MiB


def test_cudasim_arrays_are_recycled_too(cache):
    a = devices.empty((300, 500), np.float32, minifw.device("cudasim"))
    assert isinstance(a, devices.CudaSimArray) and devices.of(a) == "cudasim"
    where = _address(a)
    del a
    b = devices.empty((300, 500), np.float32, minifw.device("cudasim"))
    assert _address(b) == where and isinstance(b, devices.CudaSimArray)


def test_a_recycled_gradient_is_handed_over_and_its_block_used_again(cache, rng):
    layer = nn.Linear(400, 300)  # a weight gradient of 480,000 bytes
    x = minifw.tensor(rng.standard_normal((5, 400)).astype(np.float32))
    expected = np.broadcast_to(x.numpy().sum(0), (300, 400))
    layer(x).sum().backward()
    grad = layer.weight.grad.numpy()
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-4)
    assert devices.owns_memory(grad) and not grad.flags.owndata  # the GEMM's own array, not a copy
    where = _address(grad)
    del grad
    hits = cache.stats()["hits"]
    layer.zero_grad()  # the gradient dropped: its block is free for the next one
    layer(x).sum().backward()
    grad = layer.weight.grad.numpy()
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-4)
    assert _address(grad) == where and cache.stats()["hits"] > hits


def test_arrays_from_several_threads(cache):
    errors = []

    def work(seed):
        try:
            for i in range(50):
                a = devices.empty((64 << 10) + 4 * (i % 3), np.uint8)
                a[...] = seed
                b = a[::2]
                del a
                assert (b == seed).all()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cache.current_bytes <= 16 * MiB and cache.stats()["hits"] > 0


def test_an_impossible_size_is_numpys_error():
    with pytest.raises((MemoryError, ValueError), match="too big|Unable to allocate"):
        devices.empty((2 ** 40, 2 ** 40), np.float32)
    with pytest.raises(MemoryError, match="zeros"):
        minifw.zeros(2 ** 40, 2 ** 40)


def test_a_reused_block_leaves_the_older_ones_first_in_line(cache):
    # freed in order: A (2 MiB), B (4 MiB), C (2 MiB); taking a 2 MiB block takes C, the
    # most recent of its size, and A stays the first given up
    a, b, c = devices.empty(MiB, np.uint8), devices.empty(3 * MiB, np.uint8), devices.empty(MiB, np.uint8)
    first, third = _address(a), _address(c)
    del a, b, c
    taken = devices.empty(MiB, np.uint8)
    assert _address(taken) == third
    cache.max_cached_bytes = 4 * MiB  # 6 MiB kept: A, the least recently freed, goes
    assert cache.current_bytes == 4 * MiB
    del taken  # C back: over the limit again, B (older than C) goes
    assert cache.current_bytes == 2 * MiB
    again = devices.empty(MiB, np.uint8)
    assert _address(again) == third and _address(again) != first


def test_a_failed_allocation_gives_up_the_kept_blocks_and_tries_again(cache, monkeypatch):
    kept = devices.empty(3 * MiB, np.uint8)
    del kept
    assert cache.current_bytes == 4 * MiB
    real_empty, calls = np.empty, []

    def failing_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise MemoryError("no room")
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(devices.np, "empty", failing_once)
    a = devices.empty(MiB, np.uint8)  # a new 2 MiB block: fails, the kept 4 MiB go, then works
    monkeypatch.undo()
    assert len(calls) == 2 and a.size == MiB and cache.current_bytes == 0


def test_zero_d_and_empty_shapes(cache):
    cache.min_bytes = 1
    scalar = devices.empty((), np.float64)
    assert scalar.shape == () and devices.owns_memory(scalar)
    assert devices.empty((0, 5), np.float32).shape == (0, 5)


def test_current_bytes_while_other_threads_give_blocks_back(cache):
    stop, errors = threading.Event(), []

    def churn():
        i = 0
        while not stop.is_set():
            i += 1
            a = devices.empty(i % 5 * MiB + (64 << 10), np.uint8)  # blocks of 2, 4 and 6 MiB
            del a

    workers = [threading.Thread(target=churn) for _ in range(2)]
    for t in workers:
        t.start()
    try:
        for _ in range(2000):
            try:
                assert cache.current_bytes <= 16 * MiB
            except RuntimeError as e:  # a dict changing size under the sum
                errors.append(e)
    finally:
        stop.set()
        for t in workers:
            t.join()
    assert not errors
