"""minifw.distributed, DistributedDataParallel and `minifw train` under `mpiexec -n 2` on this
machine (loopback). Each test launches worker.py (or the CLI) in 2 processes with a time limit;
they skip when mpi4py or its mpiexec is missing (pip install ".[distributed]")."""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import minifw
from minifw import distributed as dist
from childenv import child_env

WORKER = os.path.join(os.path.dirname(__file__), "worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _mpiexec():
    """The mpiexec of the MPI that mpi4py was built for: the mpich wheel puts it beside python."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="mpi4py or mpiexec is not installed "
                               "(pip install mpi4py mpich)")


def launch(*args, n=2, timeout=120, cwd=None):
    env = child_env(tests_importable=True)
    env.pop("PMI_RANK", None)
    # ranks x threads within the 2 cores of CI
    env["OMP_NUM_THREADS"] = "1"
    # a session of its own: on a timeout the launcher and every rank are killed together
    with subprocess.Popen([MPIEXEC, "-n", str(n), sys.executable, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                          start_new_session=True) as job:
        try:
            stdout, stderr = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
            raise
    return subprocess.CompletedProcess(job.args, job.returncode, stdout, stderr)


def run_worker(scenario, *args, n=2, timeout=120):
    done = launch(WORKER, scenario, *map(str, args), n=n, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    for rank in range(n):
        assert f"ok {scenario} rank {rank}" in done.stdout, done.stdout + done.stderr


@needs_mpi
def test_collectives_every_op_and_dtype():
    run_worker("collectives")


@needs_mpi
def test_ddp_equals_one_process_on_the_whole_batch():
    run_worker("ddp")


@needs_mpi
def test_rank_0_checkpoints_and_a_resumed_run_continues_bit_for_bit(tmp_path):
    run_worker("training_resume", tmp_path)


@needs_mpi
def test_a_stalled_rank_makes_the_others_raise_after_the_timeout():
    start = time.monotonic()
    done = launch(WORKER, "stall", "2", timeout=90)
    assert done.returncode != 0
    assert "DistBackendError: all_reduce on rank 0 of 2 timed out after 2 s" in done.stderr, done.stderr
    assert time.monotonic() - start < 60  # not rank 1's 120 s sleep: the abort ended it


@needs_mpi
def test_a_rank_that_dies_ends_the_job():
    done = launch(WORKER, "die", timeout=60)  # hangs (TimeoutExpired) if rank 0 waited forever
    assert done.returncode != 0
    assert "ok die" not in done.stdout


@needs_mpi
def test_minifw_train_under_mpiexec(tmp_path):
    """`mpiexec -n 2 minifw train lenet`: rank 0 prints and checkpoints; --resume continues."""
    from minifw.data import MNIST, write_idx
    train, test = MNIST(train=True), MNIST(train=False)
    data = tmp_path / "mnist"
    data.mkdir()
    write_idx(str(data / "train-images-idx3-ubyte"), train.data[:256])
    write_idx(str(data / "train-labels-idx1-ubyte"), train.targets[:256].astype(np.uint8))
    write_idx(str(data / "t10k-images-idx3-ubyte"), test.data[:100])
    write_idx(str(data / "t10k-labels-idx1-ubyte"), test.targets[:100].astype(np.uint8))
    common = ["-m", "minifw.cli", "train", "lenet", "--data-dir", str(data), "--batch-size", "32",
              "--lr-schedule", "constant"]
    done = launch(*common, "--epochs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("data-parallel on 2 processes x 1 thread: global batch 32 per "
                             "process x 2 = 64") == 1, done.stdout
    assert done.stdout.count("done: test accuracy") == 1, done.stdout
    assert (tmp_path / "lenet.npz").exists()
    done = launch(*common, "--epochs", "2", "--resume", "lenet.npz", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("resuming from lenet.npz after epoch 1") == 1, done.stdout
    assert done.stdout.count("epoch 2/2: train loss") == 1, done.stdout
    assert minifw.load(str(tmp_path / "lenet.npz"))["epoch"] == 2


def _nccl_ready():
    try:
        return MPIEXEC is not None and dist.is_nccl_available()
    except Exception:
        return False


@pytest.mark.skipif(not _nccl_ready(), reason="needs a GPU, CuPy with NCCL, and mpi4py")
def test_nccl_collectives_on_the_gpu():
    # one GPU: one rank (NCCL refuses two ranks of one communicator on the same GPU)
    run_worker("nccl", n=1)


# ---- in this process: no MPI job needed -------------------------------------------------------
def test_calls_before_init_are_refused():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(minifw.ones(2))):
        with pytest.raises(RuntimeError, match="has not been initialized; call "
                                               "minifw.distributed.init_process_group"):
            call()
    with pytest.raises(RuntimeError, match="DistributedDataParallel: the default process group has "
                                           "not been initialized"):
        minifw.nn.parallel.DistributedDataParallel(minifw.nn.Linear(2, 2))


def test_missing_mpi4py_is_explained(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(RuntimeError, match=r"needs mpi4py and an MPI library.*pip install "
                                           r"\"minifw\[distributed\]\""):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"backend": "gloo"}, ValueError, "backend must be 'mpi' or 'nccl'; got 'gloo'"),
    ({"init_method": "tcp://10.0.0.1:23456"}, ValueError, "init_method is not supported"),
    ({"timeout": -1}, ValueError, "timeout must be positive; got -1.0 s"),
    ({"timeout": "10"}, TypeError, "timeout must be a datetime.timedelta or a number of seconds"),
], ids=["backend", "init_method", "timeout", "timeout-type"])
def test_init_arguments_are_checked(kwargs, error, message):
    with pytest.raises(error, match=message):
        dist.init_process_group(**kwargs)


def test_post_accumulate_grad_hook_sees_the_whole_gradient_once():
    """The hook DDP starts its all-reduce from: after the last gradient into the leaf."""
    w = minifw.tensor(np.ones(3, np.float32), requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (w * 2 + (w * 3).exp().log()).sum().backward()  # two paths into w
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [5, 5, 5], rtol=1e-6)
    handle.remove()
    (w * 2).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (w * 2).register_post_accumulate_grad_hook(print)
