"""DistributedSampler (as torch.utils.data.distributed): each rank of a data-parallel job reads
its own share of the dataset, the shares disjoint and together the whole epoch."""
import math
import numbers

import numpy as np

from .sampler import Sampler, _bool


def _int(name, value, low):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"DistributedSampler: {name} must be an int >= {low}; got {value!r}")
    return int(value)


class DistributedSampler(Sampler):
    """The indices of rank `rank` out of `num_replicas` (default: the process group's rank and
    world size): every num_replicas-th index of the epoch's order, starting at `rank`.

    The order is a permutation drawn from seed + epoch (every rank draws the same one; call
    set_epoch(e) before each epoch for a new one) or, with shuffle=False, 0 .. n-1. When n is
    not a multiple of num_replicas, the order is padded by repeating its first indices so that
    every rank gets ceil(n / num_replicas) samples, or with drop_last=True cut to
    floor(n / num_replicas) per rank, as PyTorch does. The permutation is NumPy's (PCG64 seeded
    with seed + epoch), not torch.randperm's: the same seed gives another order than PyTorch's."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from .. import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: num_replicas and rank default to the process "
                                   "group's, which is not initialized; call "
                                   "minifw.distributed.init_process_group() or pass both")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        self.num_replicas = _int("num_replicas", num_replicas, 1)
        self.rank = _int("rank", rank, 0)
        if self.rank >= self.num_replicas:
            raise ValueError(f"DistributedSampler: invalid rank {self.rank}, rank should be in the "
                             f"interval [0, {self.num_replicas - 1}]")
        self.dataset = dataset
        self.shuffle = _bool("DistributedSampler", "shuffle", shuffle)
        self.drop_last = _bool("DistributedSampler", "drop_last", drop_last)
        self.seed = _int("seed", seed, 0)
        self.epoch = 0
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.Generator(np.random.PCG64(self.seed + self.epoch)).permutation(n)
        else:
            order = np.arange(n)
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:
            order = np.resize(order, self.total_size)  # repeats the order from its start
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose order the next pass draws (seed + epoch)."""
        self.epoch = _int("epoch", epoch, 0)
