"""Datasets: anything with __len__ and __getitem__(index) -> sample."""
from ..tensor import Tensor


class Dataset:
    """Base class of map-style datasets: subclass it and define __getitem__ and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


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
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)
