"""The DataLoader with PyTorch's arguments: samplers and batch samplers, num_workers threads
(order, which thread fetched what, get_worker_info, worker_init_fn, persistent workers, errors,
timeout), prefetch_factor, pin_memory and the arguments that exclude each other; iterable
datasets; the seeds random transforms get in each thread; ConcatDataset and random_split."""
import threading
import time

import numpy as np
import pytest

import minifw
from minifw.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                         RandomSampler, Sampler, SequentialSampler, Subset, SubsetRandomSampler,
                         TensorDataset, WeightedRandomSampler, default_convert, get_worker_info,
                         random_split)
from minifw.data import transforms as T


class Indexed(Dataset):
    """Sample i is (i, name of the thread that fetched it); `delay` seconds per sample."""

    def __init__(self, n, delay=0.0, fail_at=None):
        self.n, self.delay, self.fail_at = n, delay, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError(f"sample {i} is broken")
        if self.delay:
            time.sleep(self.delay)
        return i, threading.current_thread().name


class Range(IterableDataset):
    """0 .. n - 1, each worker yielding every num_workers-th value from its id on."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def indices(loader):
    return [batch[0].tolist() for batch in loader]


def live_threads(prefix="minifw-"):
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# ---- samplers ---------------------------------------------------------------------------------
def test_sequential_and_batch_samplers():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3 and len(BatchSampler(range(5), 2, True)) == 2


def test_random_sampler_is_a_seeded_permutation_each_pass():
    g = minifw.Generator().manual_seed(4)
    sampler = RandomSampler(range(10), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    expected = minifw.Generator().manual_seed(4).numpy
    assert first == expected.permutation(10).tolist() and second == expected.permutation(10).tolist()


def test_random_sampler_num_samples_and_replacement():
    more = list(RandomSampler(range(4), num_samples=10, generator=minifw.Generator()))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3]
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=200, generator=minifw.Generator()))
    assert len(drawn) == 200 and set(drawn) == {0, 1, 2}
    assert len(RandomSampler(range(3), num_samples=7)) == 7


def test_random_sampler_without_a_generator_follows_manual_seed():
    minifw.manual_seed(3)
    a = list(RandomSampler(range(20)))
    minifw.manual_seed(3)
    assert list(RandomSampler(range(20))) == a != list(range(20))


def test_subset_and_weighted_random_samplers():
    picked = list(SubsetRandomSampler([10, 20, 30], generator=minifw.Generator()))
    assert sorted(picked) == [10, 20, 30]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 400, generator=minifw.Generator()))
    counts = np.bincount(weighted, minlength=4)
    assert counts[0] == counts[2] == 0 and 60 < counts[1] < 140  # 100 expected
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: BatchSampler(range(3), 0, False), ValueError, "batch_size must be a positive int",
                 id="batch_size"),
    pytest.param(lambda: BatchSampler(range(3), 2, 1), TypeError, "drop_last must be a bool", id="drop_last"),
    pytest.param(lambda: RandomSampler(range(3), num_samples=0), ValueError, "num_samples must be a positive",
                 id="num_samples"),
    pytest.param(lambda: RandomSampler(range(3), replacement="yes"), TypeError, "replacement must be a bool",
                 id="replacement"),
    pytest.param(lambda: RandomSampler(range(3), generator=np.random.default_rng()), TypeError,
                 "minifw.Generator", id="generator"),
    pytest.param(lambda: WeightedRandomSampler([1, -1], 2), ValueError, ">= 0", id="negative-weight"),
    pytest.param(lambda: WeightedRandomSampler([1, 0], 2, replacement=False), ValueError,
                 r"must not exceed the number of nonzero weights \(1\)", id="too-many"),
])
def test_sampler_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ---- the DataLoader's sampler arguments --------------------------------------------------------
class EvensFirst(Sampler):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(list(range(0, self.n, 2)) + list(range(1, self.n, 2)))

    def __len__(self):
        return self.n


def test_sampler_argument_sets_the_order():
    loader = DataLoader(Indexed(7), batch_size=3, sampler=EvensFirst(7))
    assert indices(loader) == [[0, 2, 4], [6, 1, 3], [5]] and len(loader) == 3
    assert isinstance(DataLoader(Indexed(3)).sampler, SequentialSampler)
    assert isinstance(DataLoader(Indexed(3), shuffle=True).sampler, RandomSampler)


def test_batch_sampler_argument_sets_the_batches():
    loader = DataLoader(Indexed(6), batch_sampler=[[5, 0], [1, 2, 3], [4]])
    assert indices(loader) == [[5, 0], [1, 2, 3], [4]] and len(loader) == 3
    assert loader.batch_size is None and loader.drop_last is False


def test_batch_size_none_hands_out_converted_samples():
    data = [(np.arange(3), "a"), {"x": np.ones(2), "n": 5}]
    out = list(DataLoader(data, batch_size=None, shuffle=False))
    assert isinstance(out[0][0], minifw.Tensor) and out[0][0].tolist() == [0, 1, 2] and out[0][1] == "a"
    assert out[1]["x"].tolist() == [1.0, 1.0] and out[1]["n"] == 5
    assert default_convert([np.array(["s"]), 1.5]) == [np.array(["s"]), 1.5]


@pytest.mark.parametrize("kwargs, message", [
    pytest.param(dict(sampler=EvensFirst(4), shuffle=True), "sampler and shuffle=True exclude each other",
                 id="sampler-shuffle"),
    pytest.param(dict(batch_sampler=[[0]], batch_size=2), "batch_sampler excludes batch_size",
                 id="batch_sampler-batch_size"),
    pytest.param(dict(batch_sampler=[[0]], drop_last=True), "batch_sampler excludes",
                 id="batch_sampler-drop"),
    pytest.param(dict(batch_size=None, drop_last=True), "excludes drop_last", id="none-drop_last"),
    pytest.param(dict(num_workers=-1), "num_workers must be an int >= 0", id="num_workers"),
    pytest.param(dict(timeout=-1), "timeout must be a number of seconds >= 0", id="timeout"),
    pytest.param(dict(prefetch_factor=2), "prefetch_factor applies to worker threads",
                 id="prefetch_factor-0"),
    pytest.param(dict(num_workers=2, prefetch_factor=0), "prefetch_factor must be a positive int",
                 id="prefetch_factor-zero"),
    pytest.param(dict(num_workers=2, prefetch=3), "prefetch applies to num_workers=0", id="prefetch-workers"),
    pytest.param(dict(persistent_workers=True), "persistent_workers=True needs num_workers > 0",
                 id="persistent"),
    pytest.param(dict(multiprocessing_context="spawn"), "multiprocessing_context applies to num_workers > 0",
                 id="context-0"),
    pytest.param(dict(num_workers=1, multiprocessing_context="threads"), "one of .'fork', 'spawn'",
                 id="context-name"),
])
def test_arguments_that_exclude_each_other(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(Indexed(4), **kwargs)


def test_worker_init_fn_must_be_callable():
    with pytest.raises(TypeError, match="worker_init_fn must be callable, got int"):
        DataLoader(Indexed(4), num_workers=1, worker_init_fn=3)


def test_pytorch_positional_order():
    g = minifw.Generator().manual_seed(0)
    loader = DataLoader(Indexed(6), 4, True, None, None, 0, None, True, True, 0, None, None, g)
    assert loader.batch_size == 4 and loader.drop_last and loader.pin_memory and loader.generator is g
    assert len(indices(loader)) == 1


def test_pin_memory_and_in_order_change_nothing():
    plain = indices(DataLoader(Indexed(9), batch_size=2))
    assert indices(DataLoader(Indexed(9), batch_size=2, pin_memory=True, pin_memory_device="cuda")) == plain
    assert indices(DataLoader(Indexed(9), batch_size=2, num_workers=2, in_order=False)) == plain


# ---- worker threads ---------------------------------------------------------------------------
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_workers_fetch_batches_round_robin_handed_out_in_order(num_workers):
    loader = DataLoader(Indexed(20), batch_size=3, num_workers=num_workers)
    batches = list(loader)
    assert [b[0].tolist() for b in batches] == [list(range(i, min(i + 3, 20))) for i in range(0, 20, 3)]
    assert [set(b[1]) for b in batches] == [{f"minifw-worker-{k % num_workers}"} for k in range(7)]
    assert wait_until(lambda: not live_threads())


def test_workers_fetch_at_the_same_time():
    # 8 batches of 1 sample sleeping 0.05 s: 0.4 s in one thread, about 0.1 s in four
    start = time.perf_counter()
    assert len(list(DataLoader(Indexed(8, delay=0.05), num_workers=4))) == 8
    assert time.perf_counter() - start < 0.3


def test_prefetch_factor_bounds_the_batches_ahead_of_the_loop():
    fetched = []

    class Counting(Indexed):
        def __getitem__(self, i):
            fetched.append(i)
            return super().__getitem__(i)

    it = iter(DataLoader(Counting(100), batch_size=1, num_workers=2, prefetch_factor=3))
    next(it)
    # the batch handed out and prefetch_factor * num_workers = 6 asked for ahead of the loop
    assert wait_until(lambda: len(fetched) >= 7)
    time.sleep(0.1)
    assert len(fetched) == 7
    del it
    assert wait_until(lambda: not live_threads())


def test_get_worker_info_in_workers_only():
    seen = {}

    class Spy(Indexed):
        def __getitem__(self, i):
            info = get_worker_info()
            seen[i] = None if info is None else (info.id, info.num_workers, info.seed, info.dataset is self)
            return i

    base = minifw.Generator().manual_seed(9).random_seed()  # the epoch's base seed, drawn first
    list(DataLoader(Spy(4), num_workers=2, generator=minifw.Generator().manual_seed(9)))
    assert seen == {0: (0, 2, base, True), 1: (1, 2, base + 1, True), 2: (0, 2, base, True),
                    3: (1, 2, base + 1, True)}
    seen.clear()
    list(DataLoader(Spy(2)))
    list(DataLoader(Spy(2), prefetch=0))
    assert seen == {0: None, 1: None} and get_worker_info() is None
    with pytest.raises(RuntimeError, match="read-only"):
        minifw.data.WorkerInfo(0, 1, 0, None).id = 3


def test_worker_init_fn_runs_once_in_each_worker():
    calls = []
    loader = DataLoader(Indexed(6), num_workers=3,
                        worker_init_fn=lambda i: calls.append((i, threading.current_thread().name)))
    list(loader)
    assert sorted(calls) == [(i, f"minifw-worker-{i}") for i in range(3)]
    list(loader)
    assert len(calls) == 6  # new workers each epoch


def test_persistent_workers_live_across_epochs():
    calls = []
    loader = DataLoader(Indexed(6), batch_size=2, num_workers=2, persistent_workers=True,
                        worker_init_fn=calls.append)
    assert indices(loader) == [[0, 1], [2, 3], [4, 5]]
    workers = {t.ident for t in live_threads("minifw-worker")}
    for _ in range(2):
        assert indices(loader) == [[0, 1], [2, 3], [4, 5]]
    assert sorted(calls) == [0, 1] and {t.ident for t in live_threads("minifw-worker")} == workers
    assert len(workers) == 2
    it = iter(loader)
    next(it)  # an epoch left half-way: the next one gets only its own batches, and ends it
    assert indices(loader) == [[0, 1], [2, 3], [4, 5]]
    assert list(it) == []
    del loader, it
    assert wait_until(lambda: not live_threads())


@pytest.mark.parametrize("num_workers", [0, 2])
def test_an_error_in_a_thread_is_raised_at_its_batch(num_workers):
    loader = DataLoader(Indexed(10, fail_at=5), batch_size=2, num_workers=num_workers)
    received = []
    with pytest.raises(KeyError, match="sample 5 is broken"):
        for batch in loader:
            received.append(batch[0].tolist())
    assert received == [[0, 1], [2, 3]]
    assert wait_until(lambda: not live_threads())


def test_an_error_in_worker_init_fn_is_raised_in_the_loop():
    def init(worker_id):
        raise OSError(f"worker {worker_id} cannot open its file")

    with pytest.raises(OSError, match="worker 0 cannot open its file"):
        list(DataLoader(Indexed(4), num_workers=2, worker_init_fn=init))
    assert wait_until(lambda: not live_threads())


def test_timeout_raises_when_a_batch_takes_too_long():
    loader = DataLoader(Indexed(4, delay=0.5), num_workers=1, timeout=0.05)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.05 seconds"):
        list(loader)
    assert wait_until(lambda: not live_threads())


# ---- iterable datasets ------------------------------------------------------------------------
@pytest.mark.parametrize("num_workers, prefetch", [(0, 0), (0, 2), (2, None), (3, None)])
def test_iterable_dataset_each_worker_yields_its_share(num_workers, prefetch):
    loader = DataLoader(Range(10), batch_size=2, num_workers=num_workers, prefetch=prefetch)
    batches = [b.tolist() for b in loader]
    assert sorted(sum(batches, [])) == list(range(10))
    if num_workers == 2:  # workers' batches alternate: worker 0 has the evens, 1 the odds
        assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    if num_workers == 0:
        assert batches == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert len(loader) == 5


def test_iterable_dataset_drop_last_and_samples_one_by_one():
    assert [b.tolist() for b in DataLoader(Range(5), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert list(DataLoader(Range(4), batch_size=None, num_workers=2)) == [0, 1, 2, 3]


def test_iterable_dataset_refuses_an_order():
    for kwargs in (dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="IterableDataset decides its own order"):
            DataLoader(Range(4), **kwargs)
    with pytest.raises(TypeError, match="read it by iterating"):
        Range(4)[0]


# ---- random transforms in the threads ------------------------------------------------------------
class Crops(Dataset):
    """Random crops (no generator of their own) of one fixed image."""

    def __init__(self, n=24):
        self.n, self.crop = n, T.RandomCrop(2, padding=1)
        self.image = minifw.tensor(np.arange(9, dtype=np.float32).reshape(1, 3, 3))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.crop(self.image)


def epoch_of_crops(**kwargs):
    minifw.manual_seed(5)
    return np.concatenate([b.numpy() for b in DataLoader(Crops(), batch_size=4, **kwargs)])


def test_random_transforms_in_a_loader_are_repeatable_and_apart_from_the_loop():
    expected = epoch_of_crops()
    assert len({b.tobytes() for b in expected}) > 4  # crops vary
    for kwargs in (dict(prefetch=0), dict(prefetch=1), dict(num_workers=1)):
        np.testing.assert_array_equal(epoch_of_crops(**kwargs), expected)
    # draws from the global generator in the loop do not change the crops
    minifw.manual_seed(5)
    crops = []
    for batch in DataLoader(Crops(), batch_size=4):
        minifw.randn(100)
        crops.append(batch.numpy())
    np.testing.assert_array_equal(np.concatenate(crops), expected)


def test_random_transforms_in_workers_use_the_workers_seeds():
    first = epoch_of_crops(num_workers=3)
    np.testing.assert_array_equal(epoch_of_crops(num_workers=3), first)
    minifw.manual_seed(5)
    base = minifw.random.default_generator.random_seed()  # the epoch's base seed
    image = Crops().image
    # worker w draws from a generator seeded base + w, for its batches w, w + 3, ... in turn
    crops = [T.RandomCrop(2, padding=1, generator=minifw.Generator().manual_seed(base + w))
             for w in range(3)]
    expected = [np.stack([crops[k % 3](image).numpy() for _ in range(4)]) for k in range(6)]
    np.testing.assert_array_equal(first, np.concatenate(expected))


# ---- ConcatDataset, random_split, Subset ------------------------------------------------------------
def test_concat_dataset():
    a, b = TensorDataset(minifw.arange(3)), TensorDataset(minifw.arange(10, 12))
    both = ConcatDataset([a, b])
    assert len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11]
    assert both[-1][0].item() == 11 and (a + b)[3][0].item() == 10
    with pytest.raises(IndexError, match="index 5 is out of range for 5 samples"):
        both[5]
    with pytest.raises(ValueError, match="datasets must not be empty"):
        ConcatDataset([])


def test_random_split_by_counts_and_fractions():
    parts = random_split(range(10), [3, 7], generator=minifw.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7] and all(isinstance(p, Subset) for p in parts)
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    order = minifw.Generator().manual_seed(1).numpy.permutation(10).tolist()
    assert list(parts[0]) == order[:3]
    # floor(10 * 0.33) = 3 each, and the one left over goes to the first
    assert [len(p) for p in random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    with pytest.raises(ValueError, match="add up to 9, not to the dataset's length 10"):
        random_split(range(10), [4, 5])
    with pytest.raises(ValueError, match="fraction at index 0 is not between 0 and 1: 1.5"):
        random_split(range(10), [1.5, -0.5])


def test_subset_passes_a_list_of_indices_to_its_dataset():
    subset = Subset(TensorDataset(minifw.arange(10) * 10), [4, 8, 9])
    (values,) = subset[[0, 2]]
    assert values.tolist() == [40, 90] and subset[1][0].item() == 80
