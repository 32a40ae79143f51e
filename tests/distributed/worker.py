"""What each rank runs in the tests of test_mpi.py: `mpiexec -n 2 python worker.py SCENARIO ARGS`.
Every scenario asserts on its own rank's results and prints "ok <scenario> rank <r>" at the end."""
import os
import sys
import time

import numpy as np

import minifw
import minifw.distributed as dist
from minifw import nn
from minifw.nn.parallel import DistributedDataParallel as DDP

# float32 sums in another order (the all-reduce's, the average of per-rank means against one
# mean): a few units in the last place of values of order 1
RTOL, ATOL = 2e-5, 1e-6


def collectives():
    dist.init_process_group("mpi", timeout=60)
    r, p = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and p == 2
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        base = np.arange(-3, 3, dtype=dtype).reshape(2, 3)
        ranks = [base * (k + 1) + k for k in range(p)]  # every rank's input, known to all
        expected = {"sum": sum(ranks), "max": np.maximum(*ranks), "min": np.minimum(*ranks)}
        if np.dtype(dtype).kind == "f":
            expected["avg"] = sum(ranks) / p
        for op, want in expected.items():
            t = minifw.from_numpy(ranks[r].copy())
            assert dist.all_reduce(t, op=op) is None
            assert t.dtype == np.dtype(dtype), (op, t.dtype)
            np.testing.assert_array_equal(t.numpy(), want.astype(dtype), err_msg=f"{op} {dtype}")
        t = minifw.from_numpy(ranks[r].copy())
        dist.broadcast(t, src=1)
        np.testing.assert_array_equal(t.numpy(), ranks[1])
        outs = [minifw.from_numpy(np.zeros_like(base)) for _ in range(p)]
        dist.all_gather(outs, minifw.from_numpy(ranks[r].copy()))
        for k in range(p):
            np.testing.assert_array_equal(outs[k].numpy(), ranks[k])
    flags = minifw.from_numpy(np.array([r == 0, r == 1, False]))
    dist.all_reduce(flags, op=dist.ReduceOp.SUM)  # a logical or, as PyTorch's
    np.testing.assert_array_equal(flags.numpy(), [True, True, False])
    work = dist.all_reduce(minifw.ones(3), async_op=True)
    assert work.wait() is True and work.is_completed()
    dist.barrier()
    try:
        dist.all_reduce(minifw.zeros(2 + r))
        raise AssertionError("ranks with different shapes were not refused")
    except ValueError as e:
        assert "rank 0: shape (2,) float32, rank 1: shape (3,) float32" in str(e), e
    try:
        dist.all_reduce(minifw.tensor([1, 2]), op=dist.ReduceOp.AVG)
        raise AssertionError("AVG of an int64 tensor was not refused")
    except TypeError as e:
        assert "AVG" in str(e)
    dist.destroy_process_group()
    assert not dist.is_initialized()


def _lenet_steps(model, batches, steps, ddp_rank=None, world=1, no_sync_every=None):
    """SGD steps of LeNet; with ddp_rank, each rank takes its half of every batch."""
    opt = minifw.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches[:steps]:
        if ddp_rank is not None:
            share = len(y) // world
            x, y = x[ddp_rank * share:(ddp_rank + 1) * share], y[ddp_rank * share:(ddp_rank + 1) * share]
        opt.zero_grad()
        loss_fn(model(minifw.from_numpy(x)), minifw.from_numpy(y)).backward()
        opt.step()


def ddp():
    dist.init_process_group("mpi", timeout=60)
    r, p = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((16, 1, 28, 28)).astype(np.float32),
                rng.integers(0, 10, 16).astype(np.int64)) for _ in range(4)]

    minifw.manual_seed(1)
    reference = minifw.models.LeNet()
    _lenet_steps(reference, batches, 4)  # one process, the whole batch

    minifw.manual_seed(100 + r)  # different on each rank: DDP must take rank 0's
    model = minifw.models.LeNet()
    if r == 0:
        minifw.manual_seed(1)
        model = minifw.models.LeNet()
    # a small cap: several buckets, the first all-reduces started while backward runs on
    wrapped = DDP(model, bucket_cap_mb=0.05)
    assert len(wrapped._buckets) > 2, len(wrapped._buckets)
    assert list(wrapped.state_dict())[0].startswith("module."), list(wrapped.state_dict())[:2]
    group, launched_while_pending = wrapped._group, []
    start_all_reduce = group.start_all_reduce

    def recording(*args):  # how many gradients were still to come when a bucket started
        launched_while_pending.append(sum(b.pending for b in wrapped._buckets))
        return start_all_reduce(*args)
    group.start_all_reduce = recording
    _lenet_steps(wrapped, batches, 4, ddp_rank=r, world=p)
    group.start_all_reduce = start_all_reduce
    per_step = len(wrapped._buckets)
    assert len(launched_while_pending) == 4 * per_step
    # the first buckets started while backward still had gradients to produce
    assert launched_while_pending[0] > 0 and launched_while_pending[per_step - 1] == 0, launched_while_pending
    for (name, a), b in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg=name)

    # no_sync: two half-batches accumulated locally, averaged by the backward after them,
    # equal one synchronized backward on the full batch
    x, y = batches[0]
    loss_fn = nn.CrossEntropyLoss()
    share = len(y) // p
    xs, ys = x[r * share:(r + 1) * share], y[r * share:(r + 1) * share]
    wrapped.zero_grad()
    loss_fn(wrapped(minifw.from_numpy(xs)), minifw.from_numpy(ys)).backward()
    one_step = [q.grad.numpy().copy() for q in model.parameters()]
    wrapped.zero_grad()
    half = share // 2
    with wrapped.no_sync():
        (loss_fn(wrapped(minifw.from_numpy(xs[:half])), minifw.from_numpy(ys[:half])) / 2).backward()
    local = [q.grad.numpy().copy() for q in model.parameters()]
    (loss_fn(wrapped(minifw.from_numpy(xs[half:])), minifw.from_numpy(ys[half:])) / 2).backward()
    for g, want, mine in zip((q.grad.numpy() for q in model.parameters()), one_step, local):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-6)
    # inside no_sync nothing was exchanged: the ranks' local gradients differ
    gathered = [minifw.zeros(*local[0].shape) for _ in range(p)]
    dist.all_gather(gathered, minifw.from_numpy(local[0]))
    assert not np.allclose(gathered[0].numpy(), gathered[1].numpy())

    # a parameter that gets no gradient leaves the reduction unfinished: the next forward says so
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(4, 2), nn.Linear(4, 2)

        def forward(self, x):
            return self.used(x)
    heads = DDP(TwoHeads())
    heads(minifw.ones(3, 4)).sum().backward()
    try:
        heads(minifw.ones(3, 4))
        raise AssertionError("an unfinished reduction was not reported")
    except RuntimeError as e:
        assert "unused.weight" in str(e), e

    # different models on the ranks are refused at wrap time
    try:
        DDP(nn.Linear(3, 2 + r))
        raise AssertionError("different models were not refused")
    except ValueError as e:
        assert "rank 0: 2 parameters, 8 elements, rank 1: 2 parameters, 12 elements" in str(e), e


def training_resume(folder):
    """Rank 0 alone writes the checkpoint, and a run resumed from it ends where the uninterrupted
    run ends, bit for bit (the sampler's order depends only on seed and epoch)."""
    from minifw import training
    from minifw.data import Subset
    dist.init_process_group("mpi", timeout=60)
    r = dist.get_rank()
    if r != 0:
        def refuse(*args, **kwargs):
            raise AssertionError("a rank other than 0 wrote a checkpoint")
        minifw.save = refuse

    def small_run(epochs):
        run = training.Run("lenet", {"epochs": epochs, "batch_size": 16})
        assert run.world_size == 2 and run.rank == r
        run.train_set = Subset(run.train_set, range(192))
        run.test_set = Subset(run.test_set, range(100))
        run.train_loader, run.test_loader = run.recipe.loaders(run)
        return run

    whole = small_run(2)
    assert len(whole.train_loader) == 192 // 2 // 16
    whole.fit(checkpoint_path=os.path.join(folder, "whole.npz"))
    def interrupt_at_epoch_2(epoch, samples):  # as Ctrl-C would, on every rank
        if epoch == 2:
            raise KeyboardInterrupt
    interrupted = small_run(2)
    try:
        interrupted.fit(checkpoint_path=os.path.join(folder, "first.npz"), progress=interrupt_at_epoch_2)
    except KeyboardInterrupt:
        pass
    dist.barrier()  # rank 0 has written it
    resumed = small_run(2)
    resumed.resume(minifw.load(os.path.join(folder, "first.npz")))
    assert resumed.epochs_done == 1
    resumed.fit()
    for (name, a), b in zip(whole.model.module.named_parameters(), resumed.model.module.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=name)
    for key in ("epoch_loss", "test_accuracy"):  # the same on every rank (averaged, or of one model)
        assert whole.history[key] == resumed.history[key], key
    if r == 0:  # rank 0's batch losses are the ones its checkpoint holds
        assert whole.history == resumed.history
    if r == 0:
        saved = minifw.load(os.path.join(folder, "whole.npz"))
        assert not any(k.startswith("module.") for k in saved["model"]), list(saved["model"])[:3]


def stall(timeout):
    """Rank 1 never joins the all-reduce: rank 0 must raise DistBackendError after `timeout` s."""
    dist.init_process_group("mpi", timeout=float(timeout))
    if dist.get_rank() == 1:
        time.sleep(120)
        return
    dist.all_reduce(minifw.ones(4))


def die():
    """Rank 1 exits in the middle of DDP training; rank 0 must not wait for it forever."""
    dist.init_process_group("mpi", timeout=5)
    model = DDP(minifw.models.LeNet())
    x = minifw.from_numpy(np.zeros((4, 1, 28, 28), np.float32))
    for step in range(3):
        if dist.get_rank() == 1 and step == 1:
            os._exit(3)
        model(x).sum().backward()


def nccl():
    import cupy
    dist.init_process_group("nccl", timeout=60)
    r, p = dist.get_rank(), dist.get_world_size()
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        base = np.arange(-3, 3, dtype=dtype)
        ranks = [base * (k + 1) + k for k in range(p)]
        for op, want in {"sum": sum(ranks), "max": np.max(ranks, 0), "min": np.min(ranks, 0)}.items():
            t = minifw.from_numpy(ranks[r].copy()).to("cuda")
            dist.all_reduce(t, op=op)
            np.testing.assert_array_equal(cupy.asnumpy(t._data), want)
        t = minifw.from_numpy(ranks[r].copy()).to("cuda")
        dist.broadcast(t, src=0)
        np.testing.assert_array_equal(cupy.asnumpy(t._data), ranks[0])
        outs = [minifw.from_numpy(np.zeros_like(base)).to("cuda") for _ in range(p)]
        dist.all_gather(outs, minifw.from_numpy(ranks[r].copy()).to("cuda"))
        for k in range(p):
            np.testing.assert_array_equal(cupy.asnumpy(outs[k]._data), ranks[k])
    t = minifw.from_numpy(np.full(5, 1.0 + r, np.float32)).to("cuda")
    dist.all_reduce(t, op="avg")
    np.testing.assert_allclose(cupy.asnumpy(t._data), np.full(5, sum(1.0 + k for k in range(p)) / p))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    scenario = sys.argv[1]
    globals()[scenario](*sys.argv[2:])
    print(f"ok {scenario} rank {os.environ.get('PMI_RANK', '?')}", flush=True)
