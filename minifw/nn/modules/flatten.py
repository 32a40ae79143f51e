"""Flatten and Unflatten."""
import numpy as np

from ...checks import check_dim, is_int
from .module import Module


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim `dim` of the input split into unflattened_size (a tuple or list of ints, one of
    which may be -1: what the others leave): Unflatten(1, (C, H, W)) undoes Flatten()."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, size in enumerate(unflattened_size):
            if not is_int(size):
                raise TypeError(f"Unflatten: unflattened_size must be tuple of ints, but found "
                                f"element of type {type(size).__name__} at pos {i}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        fn = "Unflatten"
        if not is_int(self.dim):
            raise TypeError(f"{fn}: dim must be an int, got {type(self.dim).__name__} {self.dim!r}")
        dim = check_dim(fn, self.dim, input.ndim)
        sizes = [int(s) for s in self.unflattened_size]
        n = input.shape[dim]
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise ValueError(f"{fn}: unflattened_size may hold one -1 and sizes >= 0 otherwise, "
                             f"got {tuple(self.unflattened_size)}")
        known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
        if -1 in sizes:
            if known == 0 or n % known:
                raise ValueError(f"{fn}: unflattened_size {tuple(self.unflattened_size)} cannot "
                                 f"split dim {dim} of size {n} (input of shape "
                                 f"{tuple(input.shape)})")
            sizes[sizes.index(-1)] = n // known
        elif known != n:
            raise ValueError(f"{fn}: unflattened_size {tuple(self.unflattened_size)} must multiply "
                             f"up to the size of dim {dim}, {n}; got input of shape "
                             f"{tuple(input.shape)}")
        shape = tuple(input.shape)
        return input.reshape(shape[:dim] + tuple(sizes) + shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
