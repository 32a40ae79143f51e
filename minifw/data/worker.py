"""What a DataLoader thread knows about itself (as torch.utils.data.get_worker_info), and the
generator that random transforms draw from while it fetches.

PyTorch's workers are processes, each with its own global generator seeded base_seed + id, so
their random transforms neither interleave with the training loop's draws nor depend on
timing. minifw's workers are threads sharing one global generator; to keep both properties,
every thread of a DataLoader (and the main thread while the loader fetches there) gets a
generator of its own, seeded the way PyTorch seeds a worker's, which the transforms of
minifw.data.transforms draw from when they were given no generator."""
import contextlib
import threading

from .. import random as _random

_local = threading.local()


class WorkerInfo:
    """id (0 .. num_workers - 1), num_workers, seed (the worker's generator's seed: the epoch's
    base seed + id) and dataset (the DataLoader's own: threads share it, processes would not)."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __setattr__(self, name, value):
        if hasattr(self, name):
            raise RuntimeError(f"WorkerInfo: cannot assign attribute {name!r}: it is read-only")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """The WorkerInfo of the DataLoader worker thread this runs in; None anywhere else (the
    main thread, and the prefetch thread of a loader with num_workers=0), as in PyTorch."""
    return getattr(_local, "info", None)


@contextlib.contextmanager
def fetching(info, generator):
    """Run the body as a DataLoader fetch: get_worker_info() gives `info` and generator-less
    random transforms draw from `generator` (restored afterwards: the main thread uses this
    around each batch it fetches itself)."""
    saved = getattr(_local, "info", None), getattr(_local, "generator", None)
    _local.info, _local.generator = info, generator
    try:
        yield
    finally:
        _local.info, _local.generator = saved


def enter_thread(info, generator):
    """Make a DataLoader thread's `info` and `generator` its own for the rest of its life."""
    _local.info, _local.generator = info, generator


def random_source(generator=None):
    """The NumPy generator a random transform draws from: its own `generator` when it has one,
    else the fetching DataLoader thread's, else minifw's global generator."""
    if generator is None:
        generator = getattr(_local, "generator", None)
    return _random._numpy_rng(generator)
