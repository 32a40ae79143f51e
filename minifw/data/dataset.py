"""Datasets (as torch.utils.data): map-style ones have __len__ and __getitem__(index) -> sample,
iterable-style ones __iter__; TensorDataset, Subset, ConcatDataset, StackDataset, ChainDataset and
random_split build them."""
import bisect
import math
import numbers

import numpy as np

from .. import random as _random
from ..tensor import Tensor


class Dataset:
    """Base class of map-style datasets: subclass it and define __getitem__ and __len__.
    `a + b` is ConcatDataset([a, b]). There is no __len__ here, as in PyTorch: len() of a
    dataset without one is a TypeError, which list() and DataLoader's len() expect of a
    dataset of unknown length (an IterableDataset's)."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of datasets read as a stream: subclass it and define __iter__. Each
    DataLoader worker iterates it on its own (get_worker_info() tells a worker which share
    to yield), as in PyTorch."""

    def __iter__(self):
        raise NotImplementedError

    def __getitem__(self, index):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: read it by iterating, "
                        f"not by index")

    def __add__(self, other):
        """The two streams one after the other, as PyTorch's: a ChainDataset."""
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors); every tensor has the same first dim."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, not a Tensor")
            if t.ndim == 0 or t.shape[0] != tensors[0].shape[0]:
                raise ValueError(f"TensorDataset: every tensor needs the same first dim; tensor 0 "
                                 f"has shape {tensors[0].shape}, tensor {i} has shape {t.shape}")
        self.tensors = tensors

    def __getitem__(self, index):
        # [index, ...] keeps a 0-d array (not a NumPy scalar) for an int index into a 1-D tensor
        return tuple(Tensor._make(t._data[index, ...]) for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):  # the dataset's own batch indexing, as PyTorch's Subset
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices):
        """The samples at `indices` (a list), as DataLoader fetches a batch: through the
        dataset's own __getitems__ where it has one, as PyTorch's Subset."""
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of each of `datasets`, one dataset after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets must not be empty")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ConcatDataset: dataset {i} is an IterableDataset; only map-style "
                                f"datasets can be concatenated")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise IndexError(f"ConcatDataset: index {index} is out of range for {len(self)} "
                                 f"samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for {len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class StackDataset(Dataset):
    """Several map-style datasets of one length side by side: sample i is
    (d[i] for d in datasets) for positional datasets, {name: d[i]} for keyword ones."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets either positionally (samples are "
                             "tuples) or by keyword (samples are dicts), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset should be passed")
        self.datasets = args if args else kwargs
        named = kwargs.items() if kwargs else enumerate(args)
        lengths = {name: len(d) for name, d in named}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"StackDataset: size mismatch between datasets: every dataset must "
                             f"have the same length; got lengths {lengths}")
        self._length = next(iter(lengths.values()))

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {name: d[index] for name, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ChainDataset(IterableDataset):
    """Iterable datasets read one after the other (the iterable counterpart of
    ConcatDataset); chaining happens as it is iterated."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for i, d in enumerate(self.datasets):
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: dataset {i} is a {type(d).__name__}; only "
                                f"IterableDatasets can be chained")
            yield from d

    def __len__(self):
        total = 0
        for i, d in enumerate(self.datasets):
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: dataset {i} is a {type(d).__name__}; only "
                                f"IterableDatasets can be chained")
            total += len(d)
        return total


def random_split(dataset, lengths, generator=None):
    """Subsets of `dataset` of the given lengths, over a random permutation of its indices
    drawn from `generator` (minifw's global generator when None). Lengths are counts adding up
    to len(dataset), or fractions adding up to 1: each fraction's floor, then what is left one
    by one to the first subsets, as PyTorch does."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral)
                       for x in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1: "
                                 f"{fraction}")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be ints >= 0 adding up to the dataset's "
                         f"length ({n}) or fractions adding up to 1, got {lengths!r}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths add up to {sum(lengths)}, not to the "
                         f"dataset's length {n}")
    order = _random._numpy_rng(generator).permutation(n).tolist()
    ends = np.cumsum(lengths).tolist()
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]
