"""Samplers: the order in which a DataLoader reads a map-style dataset (as torch.utils.data).

A sampler is an iterable of dataset indices, a batch sampler an iterable of lists of them. The
DataLoader iterates them in the thread that runs the loop, so their draws never depend on the
timing of the threads that fetch."""
import numbers

import numpy as np

from .. import random as _random


def _positive_int(owner, name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
    return int(value)


def _bool(owner, name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def _generator(owner, generator):
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"{owner}: generator must be a minifw.Generator or None, got "
                        f"{type(generator).__name__}")
    return generator


def _epoch_rng(generator):
    """The NumPy generator of one pass: `generator`'s own, or without one a fresh generator
    seeded by one draw from minifw's global generator (as PyTorch's RandomSampler does)."""
    if generator is not None:
        return generator.numpy
    return np.random.Generator(np.random.PCG64(_random.default_generator.random_seed()))


class Sampler:
    """Base class of samplers: subclass it and define __iter__ (indices) and, where the
    number is known, __len__."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices of `data_source` in a random order, a new one each pass: a permutation (as
    many as num_samples needs, the last one cut short), or with replacement=True num_samples
    independent draws. Draws come from `generator`, or, without one, from a generator seeded
    per pass by one draw from minifw's global generator."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = _bool("RandomSampler", "replacement", replacement)
        self._num_samples = (None if num_samples is None
                             else _positive_int("RandomSampler", "num_samples", num_samples))
        self.generator = _generator("RandomSampler", generator)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        rng = _epoch_rng(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, count).tolist())
        passes = [rng.permutation(n) for _ in range(-(-count // n))] if n else []
        return iter(np.concatenate(passes)[:count].tolist() if passes else [])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices` in a random order, a new one each pass, drawn from `generator` (or
    minifw's global generator)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = _generator("SubsetRandomSampler", generator)

    def __iter__(self):
        order = _random._numpy_rng(self.generator).permutation(len(self.indices))
        return (self.indices[i] for i in order.tolist())

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices in 0 .. len(weights) - 1, index i drawn with probability
    weights[i] / sum(weights); with replacement=False each index at most once."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        weights = np.asarray(weights.tolist() if hasattr(weights, "tolist") else weights,
                             dtype=np.float64)
        if weights.ndim != 1 or weights.size == 0:
            raise ValueError(f"WeightedRandomSampler: weights must be a non-empty sequence of "
                             f"numbers, got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, >= 0, and not all 0")
        self.weights = weights
        self.num_samples = _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        self.replacement = _bool("WeightedRandomSampler", "replacement", replacement)
        if not self.replacement and self.num_samples > np.count_nonzero(weights):
            raise ValueError(f"WeightedRandomSampler: without replacement, num_samples "
                             f"({self.num_samples}) must not exceed the number of nonzero weights "
                             f"({np.count_nonzero(weights)})")
        self.generator = _generator("WeightedRandomSampler", generator)

    def __iter__(self):
        rng = _random._numpy_rng(self.generator)
        drawn = rng.choice(len(self.weights), size=self.num_samples, replace=self.replacement,
                           p=self.weights / self.weights.sum())
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size consecutive indices of `sampler`; the last one shorter, or dropped
    with drop_last=True."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler = sampler
        self.batch_size = _positive_int("BatchSampler", "batch_size", batch_size)
        self.drop_last = _bool("BatchSampler", "drop_last", drop_last)

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
