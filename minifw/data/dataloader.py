"""DataLoader: batches of samples in a seeded order, prepared by a background thread.

The order of every epoch is fixed in the calling thread when iteration starts
(drawn from `generator`, or from minifw's global generator when none is given),
so it does not depend on thread timing and a checkpoint of the generators
resumes it exactly. The prefetch thread only fetches and collates, `prefetch`
batches ahead, through a bounded queue; an exception there is re-raised in the
loop that consumes the batches, and abandoning the loop stops the thread.
"""
import collections.abc
import numbers
import queue
import threading

import numpy as np

from .. import devices
from .. import random as _random
from ..tensor import Tensor, tensor


def default_collate(batch):
    """Stack a list of samples into a batch: Tensors and arrays are stacked along a new first
    dim (on the device of the first), numbers become a 1-D tensor, and tuples/lists/dicts are
    collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return Tensor._make(devices.to_device(np.stack([t._data for t in batch]), first.device))
    if isinstance(first, np.ndarray):
        return tensor(np.stack(batch))
    if isinstance(first, (bool, np.bool_)):
        return tensor(batch)
    if isinstance(first, numbers.Integral):
        return tensor(np.asarray(batch, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return tensor(np.asarray(batch, dtype=np.float64))
    if isinstance(first, str):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in batch):
            raise ValueError("default_collate: every sample in a batch must have the same length")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: don't know how to batch samples of type {type(first).__name__}")


class DataLoader:
    """Iterate over `dataset` in batches.

    shuffle=True draws a new order each epoch from `generator` (a minifw.Generator), or,
    without one, from a seed taken from minifw's global generator. prefetch is how many
    batches the background thread prepares ahead (0: no thread)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, collate_fn=None, drop_last=False,
                 generator=None, prefetch=2):
        if batch_size is not None and (isinstance(batch_size, bool) or
                                       not isinstance(batch_size, numbers.Integral) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, numbers.Integral) or prefetch < 0:
            raise ValueError(f"DataLoader: prefetch must be an int >= 0, got {prefetch!r}")
        if generator is not None and not isinstance(generator, _random.Generator):
            raise TypeError(f"DataLoader: generator must be a minifw.Generator, got "
                            f"{type(generator).__name__}")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, bool(shuffle)
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.drop_last, self.generator, self.prefetch = bool(drop_last), generator, int(prefetch)

    def __len__(self):
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        if self.generator is not None:
            return self.generator.numpy.permutation(n)
        seed = _random.default_generator.random_seed()
        return np.random.Generator(np.random.PCG64(seed)).permutation(n)

    def batch_indices(self):
        """The index lists of one epoch (draws the epoch's order)."""
        order = self._order()
        if self.batch_size is None:
            return [[int(i)] for i in order]
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()
        return batches

    def _fetch(self, indices):
        if self.batch_size is None:
            return self.dataset[indices[0]]
        return self.collate_fn([self.dataset[int(i)] for i in indices])

    def __iter__(self):
        batches = self.batch_indices()
        if self.prefetch == 0:
            return (self._fetch(b) for b in batches)
        return _PrefetchIterator(self._fetch, batches, self.prefetch)


class _PrefetchIterator:
    """Runs fetch(batch) for each batch, in order, on a daemon thread, `depth` ahead.
    The thread holds the queue and the stop flag but not this object, so dropping the
    iterator (leaving the loop early) lets __del__ stop the thread."""

    def __init__(self, fetch, batches, depth):
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=_prefetch_worker, daemon=True, name="minifw-prefetch",
                                        args=(fetch, batches, self._queue, self._stop))
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == "batch":
            return value
        self.close()
        if kind == "error":
            raise value
        raise StopIteration

    def close(self):
        """Stop the worker and wait for it."""
        self._finished = True
        self._stop.set()
        try:
            while True:
                self._queue.get_nowait()  # unblock a worker waiting to put
        except queue.Empty:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __del__(self):
        if not getattr(self, "_finished", True):
            self.close()


def _prefetch_worker(fetch, batches, out, stop):
    def put(item):
        while not stop.is_set():  # wake up now and then to notice close()
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        for b in batches:
            if not put(("batch", fetch(b))):
                return
        put(("done", None))
    except BaseException as e:  # handed to the consumer, which re-raises it
        put(("error", e))
