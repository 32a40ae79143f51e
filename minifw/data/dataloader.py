"""DataLoader: batches of a dataset in a seeded order, fetched by background threads, with
PyTorch's arguments (torch.utils.data.DataLoader).

The loop's thread decides everything random about an epoch: when iteration starts it draws the
epoch's base seed from `generator` (minifw's global generator when None), then pulls index
batches from the sampler as it goes, so the order does not depend on thread timing and a
checkpoint of the generators resumes it exactly. Threads only fetch and collate.

- num_workers=0 (the default): one background thread prepares `prefetch` batches ahead (2 by
  default; prefetch=0 fetches in the loop's own thread, as PyTorch does with num_workers=0).
- num_workers=N: N worker threads, batch k fetched by worker k % N, each prefetch_factor
  batches ahead, handed out in order. PyTorch's workers are processes; threads share the
  dataset (no copies) and run Python one at a time, so N threads pay off where the fetching
  releases the GIL: Pillow decoding and resizing images, NumPy on large arrays, file reads.
- Random transforms (minifw.data.transforms) draw from a generator of the thread that fetches,
  seeded base seed + worker id as PyTorch seeds a worker process (base seed with num_workers
  0), unless given one of their own: repeatable under minifw.manual_seed, and apart from the
  training loop's draws. Code in a dataset that draws from minifw's global generator itself
  still shares it with the loop; give it a Generator of its own.
- An exception in a thread is raised again in the loop, at the batch it broke; leaving the
  loop early stops the threads.
"""
import collections
import collections.abc
import numbers
import os
import queue
import threading
import weakref

import numpy as np

from .. import devices
from .. import random as _random
from ..tensor import Tensor, tensor
from . import worker as _worker
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import get_worker_info  # noqa: F401 (torch.utils.data.dataloader's name too)

_START_METHODS = ("fork", "spawn", "forkserver")


def default_collate(batch):
    """Stack a list of samples into a batch: Tensors and arrays are stacked along a new first
    dim (on the device of the first), numbers become a 1-D tensor, and tuples/lists/dicts are
    collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return Tensor._make(devices.to_device(np.stack([t._data for t in batch]), first.device))
    if isinstance(first, np.ndarray):
        return tensor(np.stack(batch))
    if isinstance(first, np.generic) and not isinstance(first, (np.str_, np.bytes_)):
        return tensor(np.asarray(batch))  # NumPy scalars keep their dtype (np.float32: float32)
    if isinstance(first, (bool, np.bool_)):
        return tensor(batch)
    if isinstance(first, numbers.Integral):
        return tensor(batch)  # int64, or the default float dtype where a later sample is a float
    if isinstance(first, numbers.Real):
        return tensor(np.asarray(batch, dtype=np.float64))
    if isinstance(first, str):
        return batch  # as PyTorch: a list at the top, a tuple as a field of tuple samples
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return type(first)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in batch):
            raise ValueError("default_collate: every sample in a batch must have the same length")
        return [default_collate(field) for field in zip(*batch)]
    raise TypeError(f"default_collate: don't know how to batch samples of type {type(first).__name__}")


def default_convert(sample):
    """One sample as batch_size=None hands it out: NumPy arrays (not of strings) and NumPy
    scalars become Tensors, inside tuples, lists and dicts too; a tuple (not a namedtuple)
    becomes a list, as PyTorch's; everything else is left as it is."""
    if isinstance(sample, np.ndarray):
        return sample if sample.dtype.kind in "USO" else tensor(sample)
    if isinstance(sample, np.generic) and not isinstance(sample, (np.str_, np.bytes_)):
        return tensor(sample)
    if isinstance(sample, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):  # namedtuple
        return type(sample)(*(default_convert(v) for v in sample))
    if isinstance(sample, (tuple, list)):
        return [default_convert(v) for v in sample]
    return sample


def max_num_workers():
    """The most worker threads a DataLoader takes: max(256, 4 x the CPU count), as
    minifw.set_num_threads bounds its threads. More gain nothing (threads run Python one at a
    time) and, past what the system can start, fail when iteration begins."""
    return max(256, 4 * (os.cpu_count() or 1))


def _int_at_least(name, value, low):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
        expected = "a positive int" if low == 1 else f"an int >= {low}"
        raise ValueError(f"DataLoader: {name} must be {expected}, got {value!r}")
    return int(value)


class DataLoader:
    """Iterate over `dataset` in batches, as torch.utils.data.DataLoader.

    batch_size, shuffle, sampler, batch_sampler, drop_last, collate_fn and generator mean what
    they mean in PyTorch (and exclude each other where PyTorch's do): shuffle=True draws a new
    order each epoch from `generator`, or, without one, from a seed taken from minifw's
    global generator; batch_size=None hands out samples one by one (default_convert).

    num_workers: threads that fetch (see the module's docstring), at most max_num_workers()
    (max(256, 4 x the CPU count)); prefetch_factor: batches
    each of them prepares ahead (2 by default, only with num_workers > 0, as in PyTorch);
    prefetch (minifw's own, num_workers=0 only): batches the one background thread prepares
    ahead, 2 by default, 0 for none. persistent_workers=True keeps the worker threads, their
    generators and what worker_init_fn(worker_id) set up (called once, in each worker)
    across epochs (one epoch at a time: starting one ends the last). timeout > 0: seconds to
    wait for a batch from a thread before a RuntimeError (no effect without threads).

    Accepted for PyTorch's signature, with no effect: pin_memory and pin_memory_device (batches
    are ordinary host memory; Tensor.to("cuda") copies them synchronously),
    multiprocessing_context (workers are threads), in_order=False (batches always come in
    order, which in_order=False allows)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True, prefetch=None):
        num_workers = _int_at_least("num_workers", num_workers, 0)
        if num_workers > max_num_workers():
            raise ValueError(f"DataLoader: num_workers must be in [0, {max_num_workers()}] (worker threads: "
                             f"max(256, 4 x the CPU count)), got {num_workers}")
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout >= 0:
            raise ValueError(f"DataLoader: timeout must be a number of seconds >= 0, got {timeout!r}")
        if num_workers == 0:
            if prefetch_factor is not None:
                raise ValueError(f"DataLoader: prefetch_factor applies to worker threads "
                                 f"(num_workers > 0), got prefetch_factor={prefetch_factor!r} with "
                                 f"num_workers=0; there `prefetch` sets how far ahead the "
                                 f"background thread reads")
            if persistent_workers:
                raise ValueError("DataLoader: persistent_workers=True needs num_workers > 0")
            if multiprocessing_context is not None:
                raise ValueError(f"DataLoader: multiprocessing_context applies to num_workers > 0, "
                                 f"got {multiprocessing_context!r} with num_workers=0")
            prefetch = 2 if prefetch is None else _int_at_least("prefetch", prefetch, 0)
        else:
            if prefetch is not None:
                raise ValueError(f"DataLoader: prefetch applies to num_workers=0; with "
                                 f"num_workers={num_workers} set prefetch_factor (batches per "
                                 f"worker), got prefetch={prefetch!r}")
            prefetch_factor = 2 if prefetch_factor is None else _int_at_least(
                "prefetch_factor", prefetch_factor, 1)
            if not (multiprocessing_context is None or multiprocessing_context in _START_METHODS
                    or hasattr(multiprocessing_context, "get_start_method")):
                raise ValueError(f"DataLoader: multiprocessing_context must be None, one of "
                                 f"{_START_METHODS} or a multiprocessing context, got "
                                 f"{multiprocessing_context!r}")
        if generator is not None and not isinstance(generator, _random.Generator):
            raise TypeError(f"DataLoader: generator must be a minifw.Generator, got "
                            f"{type(generator).__name__}")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader: worker_init_fn must be callable, got "
                            f"{type(worker_init_fn).__name__}")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value is not None and value is not False:
                    raise ValueError(f"DataLoader: an IterableDataset decides its own order; "
                                     f"leave {name} unset, got {name}={value!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True exclude each other (the sampler "
                             "decides the order; use RandomSampler to shuffle)")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle, sampler "
                                 "and drop_last (the batch sampler decides them)")
            batch_size, drop_last = None, False
        elif batch_size is None:
            if drop_last:
                raise ValueError("DataLoader: batch_size=None hands out single samples; it "
                                 "excludes drop_last=True")
        else:
            batch_size = _int_at_least("batch_size", batch_size, 1)
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, bool(drop_last))
        auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)

        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, bool(drop_last)
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if auto_collation else default_convert)
        self.num_workers, self.prefetch_factor, self.prefetch = num_workers, prefetch_factor, prefetch
        self.persistent_workers, self.worker_init_fn = bool(persistent_workers), worker_init_fn
        self.timeout, self.pin_memory = timeout, bool(pin_memory)
        self.pin_memory_device = pin_memory_device
        self.multiprocessing_context, self.in_order = multiprocessing_context, bool(in_order)
        # the worker threads kept across epochs (persistent_workers=True), and their epoch
        self._pool, self._current, self._epochs = None, lambda: None, 0

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)  # a TypeError where the dataset has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def _fetcher(self):
        return _Fetcher(self.dataset, self._iterable, self.batch_size, self.drop_last,
                        self.collate_fn, self.batch_sampler is not None)

    def _tasks(self):
        """What each fetch is told: index lists (or single indices with batch_size=None) of a
        map-style dataset; for an iterable dataset, None forever (the next batch of the
        worker's own iterator)."""
        if self._iterable:
            return _forever_none()
        return iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        self._epochs += 1
        if self.persistent_workers and self._pool is not None and self._pool.alive():
            # one epoch at a time on kept workers, as in PyTorch: a new one ends the last
            previous = self._current()
            if previous is not None:
                previous.close()
            epoch = _ThreadedIterator(self._pool, self._epochs, self._tasks(), self._depth(),
                                      self.timeout, close_pool=False)
            epoch._length = self.__len__
            self._current = weakref.ref(epoch)
            return epoch
        base_seed = (self.generator or _random.default_generator).random_seed()
        if self.num_workers == 0 and self.prefetch == 0:
            return _Batches(_main_thread_batches(self._fetcher(), self._tasks(),
                                                 _random.Generator().manual_seed(base_seed)),
                            self.__len__)
        pool = _WorkerPool(self._fetcher(), max(self.num_workers, 1), self.num_workers, base_seed,
                           self.worker_init_fn)
        epoch = _ThreadedIterator(pool, self._epochs, self._tasks(), self._depth(), self.timeout,
                                  close_pool=not self.persistent_workers)
        epoch._length = self.__len__
        if self.persistent_workers:
            self._pool, self._current = pool, weakref.ref(epoch)
        return epoch

    def _depth(self):
        return self.prefetch if self.num_workers == 0 else self.prefetch_factor * self.num_workers

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()


def _forever_none():
    while True:
        yield None


class _Fetcher:
    """Turns a task into a batch. Holds what a fetch needs and not the DataLoader, so that
    threads kept across epochs do not keep the loader alive."""

    def __init__(self, dataset, iterable, batch_size, drop_last, collate_fn, batched):
        self.dataset, self.iterable, self.batch_size = dataset, iterable, batch_size
        self.drop_last, self.collate_fn, self.batched = drop_last, collate_fn, batched

    def fetch(self, task):
        if self.batched:
            getitems = getattr(self.dataset, "__getitems__", None)  # a batch in one call, as
            samples = getitems(task) if getitems else [self.dataset[i] for i in task]  # PyTorch's
            return self.collate_fn(samples)
        return self.collate_fn(self.dataset[task])

    def next_batch(self, source):
        """The next batch of the iterator `source` over an iterable dataset; None at its end."""
        if self.batch_size is None:
            sample = next(source, _END)
            return None if sample is _END else self.collate_fn(sample)
        samples = []
        for sample in source:
            samples.append(sample)
            if len(samples) == self.batch_size:
                break
        if not samples or (self.drop_last and len(samples) < self.batch_size):
            return None
        return self.collate_fn(samples)


_END = object()


class _Batches:
    """An epoch's batches fetched in the loop's own thread; len() is the loader's, as
    PyTorch's iterators have it."""

    def __init__(self, batches, length):
        self._batches, self._length = batches, length

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self):
        return self._length()


def _main_thread_batches(fetcher, tasks, generator):
    """The batches fetched in the calling thread (num_workers=0, prefetch=0)."""
    source = iter(fetcher.dataset) if fetcher.iterable else None
    for task in tasks:
        with _worker.fetching(None, generator):
            batch = fetcher.next_batch(source) if fetcher.iterable else fetcher.fetch(task)
        if fetcher.iterable and batch is None:
            return
        yield batch


class _WorkerPool:
    """Threads that each take tasks from a queue of their own and put the results, in the same
    order, on a queue of their own. Messages carry the epoch they belong to, so an epoch
    abandoned half-way leaves nothing the next one could mistake for its own. The threads hold
    the queues and the stop flag but not this object, so dropping it (leaving the loop early)
    lets __del__ stop them."""

    def __init__(self, fetcher, threads, num_workers, base_seed, worker_init_fn):
        self.tasks = [queue.SimpleQueue() for _ in range(threads)]
        self.results = [queue.SimpleQueue() for _ in range(threads)]
        self._stop = threading.Event()
        self._threads = []
        for i in range(threads):
            info = (_worker.WorkerInfo(i, num_workers, base_seed + i, fetcher.dataset)
                    if num_workers else None)
            name = f"minifw-worker-{i}" if num_workers else "minifw-prefetch"
            thread = threading.Thread(
                target=_worker_loop, daemon=True, name=name,
                args=(fetcher, info, base_seed + i, worker_init_fn if num_workers else None,
                      self.tasks[i], self.results[i], self._stop))
            try:
                thread.start()
            except RuntimeError as e:  # "can't start new thread": the system's limit
                self.close()
                raise RuntimeError(f"DataLoader: could not start worker thread {i + 1} of {threads} ({e}); "
                                   f"use fewer num_workers") from None
            self._threads.append(thread)

    def alive(self):
        return not self._stop.is_set()

    def close(self):
        """Stop the threads and wait for them (a thread in the middle of a fetch finishes it)."""
        if self._stop.is_set():
            return
        self._stop.set()
        for q in self.tasks:
            q.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)

    def __del__(self):
        if hasattr(self, "_stop"):
            self.close()


def _worker_loop(fetcher, info, seed, worker_init_fn, tasks, results, stop):
    _worker.enter_thread(info, _random.Generator().manual_seed(seed))
    failure = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(info.id)
    except BaseException as e:  # handed to the loop with the first task, which re-raises it
        failure = e
    epoch, source = None, None  # an iterable dataset's iterator in this worker, per epoch
    while True:
        task = tasks.get()
        if task is None or stop.is_set():
            return
        task_epoch, payload = task
        try:
            if failure is not None:
                raise failure
            if not fetcher.iterable:
                results.put((task_epoch, "batch", fetcher.fetch(payload)))
                continue
            if task_epoch != epoch:
                epoch, source = task_epoch, iter(fetcher.dataset)
            batch = None if source is None else fetcher.next_batch(source)
            if batch is None:
                source = None  # stays exhausted, whatever the dataset's iterator would do next
                results.put((task_epoch, "exhausted", None))
            else:
                results.put((task_epoch, "batch", batch))
        except BaseException as e:
            results.put((task_epoch, "error", e))


class _ThreadedIterator:
    """One epoch over a _WorkerPool: keeps `depth` tasks out, round-robin over the workers
    still running (an iterable dataset's worker drops out when its iterator ends), and hands
    the results out in the order the tasks went out."""

    def __init__(self, pool, epoch, tasks, depth, timeout, close_pool):
        self._pool, self._epoch, self._tasks, self._timeout = pool, epoch, tasks, timeout
        self._close_pool, self._finished = close_pool, False
        self._active = list(range(len(pool.tasks)))
        self._next_worker = 0
        self._pending = collections.deque()  # the worker of each task out, oldest first
        for _ in range(depth):
            self._send()

    def _send(self):
        if not self._active:
            return
        task = next(self._tasks, _END)
        if task is _END:
            return
        worker_id = self._active[self._next_worker % len(self._active)]
        self._next_worker += 1
        self._pool.tasks[worker_id].put((self._epoch, task))
        self._pending.append(worker_id)

    def _receive(self, worker_id):
        while True:
            try:
                epoch, kind, value = self._pool.results[worker_id].get(
                    timeout=self._timeout if self._timeout > 0 else None)
            except queue.Empty:
                self.close()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds waiting "
                                   f"for a batch from its worker thread {worker_id}") from None
            if epoch == self._epoch:  # else left over from an abandoned epoch
                return kind, value

    def __iter__(self):
        return self

    def __len__(self):
        """The loader's length (set by DataLoader), as PyTorch's iterators have it."""
        return self._length()

    def __next__(self):
        while not self._finished and self._pending:
            worker_id = self._pending.popleft()
            kind, value = self._receive(worker_id)
            if kind == "batch":
                self._send()
                return value
            if kind == "error":
                self.close()
                raise value
            if worker_id in self._active:  # "exhausted": its iterator has ended
                self._active.remove(worker_id)
            self._send()
        self.close()
        raise StopIteration

    def close(self):
        """End the epoch; stop the threads unless they are kept for the next one."""
        self._finished = True
        if self._close_pool:
            self._pool.close()

    def __del__(self):
        if not getattr(self, "_finished", True):
            self.close()
