"""DistributedSampler: every epoch's shares are disjoint and together the epoch, as PyTorch's."""
import pytest

from minifw.data import DistributedSampler
from minifw.utils.data import DistributedSampler as FromUtils


@pytest.mark.parametrize("n", [1, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True], ids=["pad", "drop_last"])
@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffle", "in_order"])
def test_shares_partition_every_epoch(n, replicas, drop_last, shuffle):
    if drop_last and n < replicas:
        pytest.skip("nothing to share")
    for epoch in range(3):
        shares = []
        for rank in range(replicas):
            s = DistributedSampler(list(range(n)), replicas, rank, shuffle=shuffle, seed=5,
                                   drop_last=drop_last)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert len(shares[-1]) == len(s)
        assert len({len(x) for x in shares}) == 1
        together = sorted(i for x in shares for i in x)
        if drop_last:  # n // replicas each, no index twice
            assert len(together) == (n // replicas) * replicas == len(set(together))
        elif n % replicas == 0:  # exactly the epoch
            assert together == list(range(n))
        else:  # every index, the first ones of the order repeated to fill the last shares
            assert set(together) == set(range(n)) and len(together) == -(-n // replicas) * replicas


def test_the_order_depends_on_seed_and_epoch_only():
    a, b = DistributedSampler(range(50), 2, 0, seed=1), DistributedSampler(range(50), 2, 0, seed=1)
    assert list(a) == list(b) and list(a) == list(a)
    b.set_epoch(1)
    assert list(a) != list(b)
    assert list(DistributedSampler(range(50), 2, 0, seed=2)) != list(a)


def test_same_indices_as_pytorch_without_shuffle():
    torch_data = pytest.importorskip("torch.utils.data")
    for n, replicas, drop_last in [(10, 3, False), (10, 3, True), (9, 4, False), (3, 4, False)]:
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
            theirs = torch_data.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                                   drop_last=drop_last)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_arguments_are_checked():
    assert FromUtils is DistributedSampler
    with pytest.raises(ValueError, match=r"invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), 2, 2)
    with pytest.raises(ValueError, match="num_replicas must be an int >= 1; got 0"):
        DistributedSampler(range(4), 0, 0)
    with pytest.raises(RuntimeError, match="process group's, which is not initialized"):
        DistributedSampler(range(4))
    with pytest.raises(ValueError, match="epoch must be an int >= 0; got -1"):
        DistributedSampler(range(4), 2, 0).set_epoch(-1)
