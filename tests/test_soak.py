"""A bounded soak: 300 LeNet training iterations, with resident memory sampled after a
warm-up. A leak of anything per iteration (a graph kept alive, a gradient or buffer not
freed, a cache growing by a key per step) shows as a slope; allocator noise does not.

Three views of memory, each with a bound it can keep without flaking:
- resident memory (RSS), the user's view: it also grows, without any leak, while the C
  heap fragments (freed blocks of many sizes not yet reusable), about 1-2 KiB per
  iteration here for the first few hundred iterations, then flat;
- the C heap's bytes in use (glibc's mallinfo2, where there is one): flat but for noise,
  so a tight bound catches small native or array leaks the RSS bound lets pass;
- the number of objects the garbage collector tracks (nodes, contexts, dicts, lists): catches
  a leaked graph or container however small.
"""
import ctypes
import ctypes.util
import gc
import resource

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import caches
from minifw.data import DataLoader, TensorDataset
from minifw.models import LeNet

ITERATIONS = 300
WARM_UP = 60      # iterations before the first sample: buffers, caches and the allocator settle
EVERY = 10        # iterations between samples: 25 samples after the warm-up
BATCH = 8

# Bounds. One LeNet iteration at batch 8 allocates about 1.5 MiB of arrays (activations,
# gradients, lowered matrices); of what a leak would keep, one iteration's graph holds
# ~600 KiB of activations, a weight gradient 20-1600 KiB, a bias gradient 40-2000 bytes.
# RSS: under 4 KiB (one page) per iteration of fitted slope, which the heap's fragmentation
# (above) stays under, and any leak of an activation or a weight gradient goes over; and
# under 4 MiB from the first sample to the highest. Heap bytes in use: under 256 bytes per
# iteration (samples move by ~50 KiB either way; fitted over 25 samples and 240 iterations
# that is well under it), so even a leaked bias gradient of 64 floats shows.
MAX_RSS_SLOPE = 4096            # bytes per iteration
MAX_RSS_GROWTH = 4 << 20        # bytes
MAX_HEAP_SLOPE = 256            # bytes per iteration
MAX_NEW_OBJECTS = 1000          # Python objects alive at the end that were not after the warm-up


def resident_bytes():
    """This process's resident set size now, or None where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


def _heap_in_use():
    """Bytes the C heap has handed out and not had back (glibc), or None elsewhere."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError, TypeError):
        return None

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

    mallinfo2.restype = MallInfo2

    def in_use():
        info = mallinfo2()
        return info.uordblks + info.hblkhd  # blocks in use in the heap + mmapped blocks
    return in_use


heap_in_use = _heap_in_use()


def lenet_batches():
    """An endless stream of shuffled batches of 64 fixed random 28x28 'digits'."""
    g = minifw.Generator().manual_seed(0)
    images = minifw.randn(64, 1, 28, 28, generator=g)
    labels = minifw.randint(0, 10, (64,), generator=g)
    loader = DataLoader(TensorDataset(images, labels), batch_size=BATCH, shuffle=True, generator=g)
    while True:
        yield from loader


@pytest.fixture(scope="module")
def soak():
    """Train LeNet for ITERATIONS steps; return the (iteration, RSS, heap in use) samples, the
    number of Python objects after the warm-up and at the end, and the losses."""
    if resident_bytes() is None:
        pytest.skip("resident memory cannot be read here (no /proc/self/statm)")
    # One thread: the soak is about memory, and one thread keeps its time (~5 s) the same on
    # a loaded machine, where threads waiting for each other slow a step tenfold.
    threads = minifw.get_num_threads()
    minifw.set_num_threads(1)
    caches.clear()  # what earlier tests left; the soak's own entries are counted afterwards
    try:
        minifw.manual_seed(0)
        model = LeNet()
        optimizer = minifw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        batches = lenet_batches()
        samples, losses, objects = [], [], []
        for i in range(ITERATIONS):
            x, y = next(batches)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if i + 1 == WARM_UP:
                gc.collect()
                objects.append(len(gc.get_objects()))
            if i + 1 >= WARM_UP and (i + 1 - WARM_UP) % EVERY == 0:
                samples.append((i + 1, resident_bytes(), heap_in_use() if heap_in_use else 0))
        del x, y, loss
        gc.collect()
        objects.append(len(gc.get_objects()))
    finally:
        minifw.set_num_threads(threads)
    return samples, objects, losses


def _slope(samples, column):
    steps, values = np.array([(s[0], s[column]) for s in samples], dtype=np.float64).T
    return np.polyfit(steps, values, 1)[0], values


def _report(samples, column):
    return ", ".join(f"{s[0]}: {s[column] / 2 ** 20:.3f} MiB" for s in samples)


def test_training_learns_something(soak):
    _, _, losses = soak
    assert np.isfinite(losses).all() and np.mean(losses[-30:]) < np.mean(losses[:30])


def test_resident_memory_is_flat_after_warm_up(soak):
    samples, _, _ = soak
    slope, rss = _slope(samples, 1)
    growth = rss.max() - rss[0]
    assert slope < MAX_RSS_SLOPE, f"RSS grows {slope:.0f} B/iteration ({_report(samples, 1)})"
    assert growth < MAX_RSS_GROWTH, f"RSS grew {growth / 2 ** 20:.2f} MiB ({_report(samples, 1)})"


def test_heap_in_use_is_flat_after_warm_up(soak):
    if heap_in_use is None:
        pytest.skip("no glibc mallinfo2 here to read the C heap's bytes in use")
    samples, _, _ = soak
    slope, _ = _slope(samples, 2)
    assert slope < MAX_HEAP_SLOPE, f"heap in use grows {slope:.0f} B/iteration ({_report(samples, 2)})"


def test_no_python_objects_accumulate(soak):
    _, (after_warm_up, at_end), _ = soak
    assert at_end - after_warm_up < MAX_NEW_OBJECTS


def test_caches_are_within_bounds_after_the_soak(soak):
    for name, stats in caches.stats().items():
        if "maxsize" in stats:
            assert stats["entries"] <= stats["maxsize"], name
        if "max_cached_bytes" in stats:
            assert stats["current_bytes"] <= stats["max_cached_bytes"], name
    # a training loop of one shape asks for a handful of problems, not one per iteration
    assert len(caches.get("conv.problems")) <= 12
    assert len(caches.get("conv.heuristic")) <= 12
    assert len(caches.get("pool.problems")) <= 8
