"""Data-parallel processes (as torch.distributed): a process group over MPI, or NCCL on GPUs.

    mpiexec -n 4 python train.py          # each process: init_process_group("mpi"), then DDP

Every collective is the engine's own: MPI's Iallreduce / Ibcast / Iallgather / Ibarrier through
mpi4py on host tensors ("cpu", "cudasim"), NCCL's through CuPy on "cuda" tensors. The MPI ones
are non-blocking requests polled against the group's `timeout`, so a rank that stops answering
makes the others raise DistBackendError instead of waiting forever (docs/distributed.md).
Rank and world size come from the MPI launcher; there is no TCP store and no init_method.
"""
import atexit
import datetime
import os
import sys
import time

import numpy as np

from .. import devices
from .mpi import DistBackendError

__all__ = ["Backend", "DistBackendError", "ReduceOp", "all_gather", "all_reduce", "barrier",
           "broadcast", "destroy_process_group", "get_backend", "get_rank", "get_world_size",
           "init_process_group", "is_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "launched_by_mpi", "local_world_size"]

# PyTorch's default for every backend but NCCL (whose default is 10 minutes)
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)

# What MPI launchers put into the environment of each process they start: MPICH/Hydra (and
# Intel MPI) set PMI_RANK, Open MPI OMPI_COMM_WORLD_SIZE, PMIx-based launchers PMIX_RANK.
_LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


class ReduceOp:
    """The reductions of all_reduce (as torch.distributed.ReduceOp)."""
    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"


_OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX, ReduceOp.MIN)


class Backend:
    MPI = "mpi"
    NCCL = "nccl"


_group = None  # the one process group (the default group of PyTorch); no subgroups
_failed_groups = []  # groups destroyed after a failure: the process aborts the job at exit


def launched_by_mpi():
    """True when an MPI launcher (mpiexec, mpirun, srun with PMI) started this process."""
    return any(v in os.environ for v in _LAUNCHER_VARIABLES)


def is_available():
    return True


def is_mpi_available():
    try:
        from mpi4py import MPI  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available():
    """CuPy with its NCCL bindings, and a GPU."""
    if devices.unavailable_reason("cuda") is not None:
        return False
    try:
        from cupy.cuda import nccl
    except ImportError:
        return False
    return nccl.available if hasattr(nccl, "available") else True


def _mpi(caller):
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"{caller}: the MPI backend needs mpi4py and an MPI library, which are not "
                           f"installed (pip install \"minifw[distributed]\", or pip install mpi4py "
                           f"mpich); import failed with: {e}") from None
    return MPI


def _seconds(caller, timeout):
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"{caller}: timeout must be a datetime.timedelta or a number of seconds; got "
                        f"{type(timeout).__name__}")
    if not seconds > 0:
        raise ValueError(f"{caller}: timeout must be positive; got {seconds} s")
    return seconds


def init_process_group(backend="mpi", init_method=None, timeout=None, world_size=-1, rank=-1):
    """Join the process group of every process the MPI launcher started.

    backend: "mpi" (host tensors; collectives of the MPI library through mpi4py) or "nccl"
    (tensors on "cuda"; NCCL through CuPy, bootstrapped over MPI, one GPU per process:
    device local_rank % GPUs). timeout (a timedelta or seconds, default 30 minutes) bounds
    every wait on the other ranks. world_size and rank, when given, must equal the launcher's;
    init_method is refused: the launcher is the rendezvous."""
    global _group
    caller = "init_process_group"
    if _group is not None:
        raise RuntimeError(f"{caller}: the default process group is already initialized "
                           f"(destroy_process_group() first)")
    if not isinstance(backend, str) or backend.lower() not in (Backend.MPI, Backend.NCCL):
        raise ValueError(f"{caller}: backend must be 'mpi' or 'nccl'; got {backend!r}")
    backend = backend.lower()
    if init_method is not None:
        raise ValueError(f"{caller}: init_method is not supported (the MPI launcher provides rank and "
                         f"world size; start the processes with mpiexec); got {init_method!r}")
    seconds = _seconds(caller, timeout)
    MPI = _mpi(caller)
    from .mpi import MPIGroup
    group = MPIGroup(MPI, seconds)
    for name, given, actual in (("world_size", world_size, group.size), ("rank", rank, group.rank)):
        if given is not None and given != -1 and given != actual:
            raise ValueError(f"{caller}: {name}={given} disagrees with the MPI launcher's {actual}")
    if backend == Backend.NCCL:
        from .nccl import NCCLGroup
        group = NCCLGroup(group)
    _group = group
    return None


def is_initialized():
    return _group is not None


def _current(caller):
    if _group is None:
        raise RuntimeError(f"{caller}: the default process group has not been initialized; call "
                           f"minifw.distributed.init_process_group() first")
    if _group.broken is not None:
        raise DistBackendError(f"{caller}: the process group is unusable after an earlier failure "
                               f"({_group.broken})")
    return _group


def get_rank():
    return _current("get_rank").rank


def get_world_size():
    return _current("get_world_size").size


def local_world_size():
    """How many ranks of the group run on this machine (MPI's shared-memory split)."""
    return _current("local_world_size").local_size


def get_backend():
    return _current("get_backend").backend


def destroy_process_group():
    """Leave the group. MPI itself is finalized at exit (mpi4py does it). After a failure the
    group is only forgotten: its requests in flight cannot be freed, so the process aborts the
    job when it exits, as it would have."""
    global _group
    if _group is None:
        _current("destroy_process_group")  # the "not initialized" error
    if _group.broken is None:
        _group.close()
    else:
        _failed_groups.append(_group)
    _group = None


def _check_tensor(caller, tensor, name="tensor"):
    from ..tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{caller}: {name} must be a minifw.Tensor; got {type(tensor).__name__}")
    a = tensor._data
    if not a.flags.c_contiguous:
        raise ValueError(f"{caller}: {name} must be contiguous; got a tensor of shape {tuple(a.shape)} "
                         f"with strides {a.strides} (call .contiguous() first)")
    return a


def _check_op(caller, op, dtype):
    if op not in _OPS:
        raise ValueError(f"{caller}: op must be one of ReduceOp.SUM, AVG, MAX, MIN ({', '.join(_OPS)}); "
                         f"got {op!r}")
    if op == ReduceOp.AVG and dtype.kind != "f":
        raise TypeError(f"{caller}: ReduceOp.AVG needs a floating-point tensor; got {dtype.name}")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over every rank, in place: afterwards each rank holds the sum (average,
    maximum, minimum). A bool tensor's SUM is a logical or, as in PyTorch."""
    caller = "all_reduce"
    g = _check_group(caller, group)
    a = _check_tensor(caller, tensor)
    _check_op(caller, op, a.dtype)
    g.check_same(caller, a)
    return g.finish(g.start_all_reduce(caller, a, op), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Overwrite `tensor` on every rank with rank `src`'s."""
    caller = "broadcast"
    g = _check_group(caller, group)
    a = _check_tensor(caller, tensor)
    src = _check_rank(caller, "src", src, g.size)
    g.check_same(caller, a)
    return g.finish(g.start_broadcast(caller, a, src), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's `tensor`, on every rank; tensor_list holds world_size tensors of
    `tensor`'s shape and dtype."""
    caller = "all_gather"
    g = _check_group(caller, group)
    a = _check_tensor(caller, tensor)
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.size:
        raise ValueError(f"{caller}: tensor_list must be a list of world_size={g.size} tensors; got "
                         f"{type(tensor_list).__name__} of length "
                         f"{len(tensor_list) if isinstance(tensor_list, (list, tuple)) else 'n/a'}")
    outs = []
    for i, t in enumerate(tensor_list):
        o = _check_tensor(caller, t, f"tensor_list[{i}]")
        if o.shape != a.shape or o.dtype != a.dtype or devices.of(o) != devices.of(a):
            raise ValueError(f"{caller}: tensor_list[{i}] must have tensor's shape {tuple(a.shape)}, "
                             f"dtype {a.dtype.name} and device; got {tuple(o.shape)}, {o.dtype.name}, "
                             f"{devices.of(o)}")
        outs.append(o)
    g.check_same(caller, a)
    return g.finish(g.start_all_gather(caller, outs, a), async_op)


def barrier(group=None, async_op=False):
    """Wait until every rank has reached its barrier (bounded by the group's timeout)."""
    caller = "barrier"
    g = _check_group(caller, group)
    return g.finish(g.start_barrier(caller), async_op)


def _check_group(caller, group):
    g = _current(caller)
    if group is not None and group is not g:
        raise ValueError(f"{caller}: only the default group (group=None) exists; got {group!r}")
    return g


def _check_rank(caller, name, value, size):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < size:
        raise ValueError(f"{caller}: {name} must be a rank in [0, {size}); got {value!r}")
    return int(value)


@atexit.register
def _abort_if_broken():
    """A timed-out collective cannot be cancelled, and MPI_Finalize would wait for it: a
    process leaving after such a failure aborts the job, so that no rank is left waiting."""
    for group in [_group] + _failed_groups:
        if group is not None and group.broken is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            # The launcher forwards each rank's output through a pipe, and the abort ends
            # the job at once: without a moment for it to read what is in the pipe, the
            # traceback saying why (already written) was lost in about 1 run of 12.
            time.sleep(0.5)
            group.abort()
