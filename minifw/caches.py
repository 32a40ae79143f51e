"""Every cache minifw keeps between calls, each with a size limit and a clear().

    minifw.caches.stats()                       # {name: {...sizes and limit...}} of each
    minifw.caches.get("conv.autotune").maxsize = 64
    minifw.caches.clear()                       # empty every one

A training loop asks for the same few problems every step, so minifw remembers
what it worked out for each: problem descriptors, the algorithm it chose, scratch
buffers. A program that sees ever new shapes (variable-length batches, a sweep over
image sizes) must not grow them without end, so each is bounded:

=========================  ==============================================  ================
name                       what                                            default limit
=========================  ==============================================  ================
``conv.problems``          ConvProblem per call's arguments                1024 entries
``conv.heuristic``         algo="auto"'s choice per problem and direction  1024 entries
``conv.autotune``          benchmark=True's timed choice per problem       1024 entries
``pool.problems``          PoolProblem per call's arguments                1024 entries
``workspace:<device>``     the primitives' scratch memory (per thread)     1 GiB kept
``caffe.buffers``          the caffe engine's col buffer and the like      1 GiB kept
``rnn.reserves``           a spare training reserve per recurrent shape    1 GiB kept
``host.arrays``            freed host arrays of 32 MiB or more, for reuse  1 GiB kept
=========================  ==============================================  ================

The entry caches (`LRUCache`) drop the least recently used entry when full; their
`maxsize` is settable. The byte caches keep their buffers up to `max_cached_bytes`
and hand out a buffer of its own (freed when the caller lets go of it) for a request
that would take them over; see minifw.devices.Workspace, minifw.engines.caffe,
minifw.functions.recurrent.SpareReserves and minifw.devices.HostArrays (which frees
the least recently freed blocks first).
"""
import collections
import numbers
import threading

_registry = {}
_MISSING = object()


def register(name, cache):
    """Make `cache` (an object with stats() and clear()) known under `name`."""
    _registry[name] = cache
    return cache


def get(name):
    """The cache registered under `name` (see the table above)."""
    try:
        return _registry[name]
    except KeyError:
        raise KeyError(f"minifw.caches.get: no cache named {name!r}; known: "
                       f"{', '.join(sorted(_registry))}") from None


def names():
    return sorted(_registry)


def stats():
    """{name: that cache's stats()} for every cache."""
    return {name: _registry[name].stats() for name in sorted(_registry)}


def clear():
    """Empty every cache."""
    for cache in list(_registry.values()):
        cache.clear()


def check_size_limit(fn, name, value):
    """An int >= 0 (entries or bytes), as the limits take."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}: {name} must be an int >= 0, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{fn}: {name} must be an int >= 0, got {value!r}")
    return int(value)


class LRUCache:
    """A mapping of at most `maxsize` entries that drops the least recently used one when
    full (maxsize 0 keeps nothing). Safe to use from several threads."""

    def __init__(self, name, maxsize=1024):
        self.name = name
        self._maxsize = check_size_limit(f"LRUCache({name!r})", "maxsize", maxsize)
        self._data = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.evictions = 0

    @property
    def maxsize(self):
        return self._maxsize

    @maxsize.setter
    def maxsize(self, n):
        self._maxsize = check_size_limit(f"{self.name}.maxsize", "maxsize", n)
        with self._lock:
            self._trim()

    def get(self, key, default=None):
        """The value under `key` (now the most recently used), or `default`. An unhashable
        key raises TypeError, as a dict's."""
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                self.misses += 1
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key, value):
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            self._trim()

    def _trim(self):
        while len(self._data) > self._maxsize:
            self._data.popitem(last=False)
            self.evictions += 1

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def items(self):
        """A list of (key, value), least recently used first."""
        with self._lock:
            return list(self._data.items())

    def clear(self):
        with self._lock:
            self._data.clear()

    def stats(self):
        return {"entries": len(self._data), "maxsize": self._maxsize, "hits": self.hits,
                "misses": self.misses, "evictions": self.evictions}

    def __repr__(self):
        return f"LRUCache({self.name!r}, entries={len(self._data)}, maxsize={self._maxsize})"
