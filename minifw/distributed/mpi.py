"""The MPI process group: MPI_COMM_WORLD through mpi4py, every collective a non-blocking request
(MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Ibarrier) waited on by polling against a
deadline, since a blocking MPI call cannot be interrupted when a peer stops answering."""
import time

import numpy as np

from .. import devices

# the dtypes a collective takes, by position: the code exchanged by check_same
DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_))
_MAX_NDIM = 8


class DistBackendError(RuntimeError):
    """A collective failed or timed out (as torch.distributed.DistBackendError). The group
    cannot be used after it: the process should exit (the other ranks are stopped with it)."""


class Work:
    """A collective in flight (as torch.distributed.Work): wait() returns True once it is done
    on this rank, or raises DistBackendError when the group's timeout passes first."""

    def __init__(self, group, caller, request, done=None):
        self.group, self.caller, self.request, self.done = group, caller, request, done
        self.completed = False

    def is_completed(self):
        if not self.completed and self.request.Test():
            self._complete()
        return self.completed

    def wait(self, timeout=None):
        if not self.completed:
            self.group.poll(self.caller, self.request, timeout)
            self._complete()
        return True

    def _complete(self):
        self.completed = True
        if self.done is not None:
            self.done()


class MPIGroup:
    backend = "mpi"

    def __init__(self, MPI, timeout):
        if not MPI.Is_initialized():
            MPI.Init()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()  # minifw's traffic never matches a user's own messages
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.timeout = timeout
        local = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.local_rank, self.local_size = local.Get_rank(), local.Get_size()
        local.Free()
        self.broken = None
        self._ops = {"sum": MPI.SUM, "avg": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}

    # ---- waiting with a deadline --------------------------------------------------------
    def poll(self, caller, request, timeout=None):
        """Wait for `request`, polling MPI (which also drives the progress of every other
        request in flight); DistBackendError after `timeout` seconds (the group's by default)."""
        if request.Test():
            return
        limit = self.timeout if timeout is None else timeout
        start = time.monotonic()
        spins = 0
        while not request.Test():
            spins += 1
            if spins < 2000:
                continue  # a short spin: on loopback most collectives finish within it
            elapsed = time.monotonic() - start
            if elapsed > limit:
                self.broken = (f"{caller} on rank {self.rank} of {self.size} timed out after {limit:g} s "
                               f"waiting for the other ranks")
                raise DistBackendError(
                    f"{self.broken}: a rank died, stalled, or did not call the same collective "
                    f"(every rank must issue the same collectives in the same order). The group "
                    f"cannot be used any more; this process aborts the job when it exits")
            time.sleep(min(2e-4, elapsed / 100))

    def progress(self, works):
        """Let MPI advance the requests of `works` (called from gradient hooks while backward
        runs: without an asynchronous progress thread, MPI moves data only inside its calls)."""
        requests = [w.request for w in works if not w.completed]
        if requests:
            self.MPI.Request.Testall(requests)

    def finish(self, work, async_op):
        if async_op:
            return work
        work.wait()
        return None

    # ---- the collectives -----------------------------------------------------------------
    def check_same(self, caller, a):
        """Every rank passes the same shape and dtype: gather each rank's description (a
        collective of 10 integers) and name the ranks that differ."""
        mine = _describe(caller, a)
        every = np.empty((self.size, mine.size), np.int64)
        self.poll(caller, self.comm.Iallgather(mine, every))
        if (every == mine).all():
            return
        described = ", ".join(f"rank {r}: {_explain(row)}" for r, row in enumerate(every))
        raise ValueError(f"{caller}: the ranks disagree on the tensor's shape or dtype ({described}); "
                         f"every rank must pass a tensor of the same shape and dtype")

    def start_all_reduce(self, caller, a, op):
        _host(caller, a)
        buf = a.view(np.uint8) if a.dtype == np.bool_ else a
        mpi_op = self.MPI.MAX if a.dtype == np.bool_ and op == "sum" else self._ops[op]
        request = self.comm.Iallreduce(self.MPI.IN_PLACE, _buffer(buf), mpi_op)
        done = None
        if op == "avg":
            size = self.size

            def done():
                a[...] /= size
        return Work(self, caller, request, done)

    def start_broadcast(self, caller, a, src):
        _host(caller, a)
        buf = a.view(np.uint8) if a.dtype == np.bool_ else a
        return Work(self, caller, self.comm.Ibcast(_buffer(buf), root=src))

    def start_all_gather(self, caller, outs, a):
        _host(caller, a)
        view = (lambda x: x.view(np.uint8)) if a.dtype == np.bool_ else (lambda x: x)
        gathered = np.empty((self.size,) + a.shape, view(a).dtype)
        request = self.comm.Iallgather(_buffer(view(np.ascontiguousarray(a))), _buffer(gathered))

        def done():
            for r, o in enumerate(outs):
                view(o)[...] = gathered[r]
        return Work(self, caller, request, done)

    def start_barrier(self, caller):
        return Work(self, caller, self.comm.Ibarrier())

    def close(self):
        if self.broken is None:
            self.comm.Free()

    def abort(self):
        self.MPI.COMM_WORLD.Abort(1)


def _buffer(a):
    """The plain NumPy view of a host array ("cudasim" arrays are a NumPy subclass)."""
    return a.view(np.ndarray) if type(a) is not np.ndarray else a


def _host(caller, a):
    dev = devices.of(a)
    if dev.type not in ("cpu", "cudasim"):
        raise ValueError(f"{caller}: the 'mpi' backend takes tensors in host memory ('cpu', "
                         f"'cudasim'); got a tensor on {dev} (use backend='nccl' for 'cuda' tensors)")


def check_dtype(caller, dtype):
    if dtype not in DTYPES:
        raise TypeError(f"{caller}: dtype must be one of {', '.join(d.name for d in DTYPES)}; got "
                        f"{dtype.name}")


def _describe(caller, a):
    check_dtype(caller, a.dtype)
    if a.ndim > _MAX_NDIM:
        raise ValueError(f"{caller}: at most {_MAX_NDIM} dimensions; got {a.ndim}")
    d = np.full(2 + _MAX_NDIM, -1, np.int64)
    d[0], d[1] = DTYPES.index(a.dtype), a.ndim
    d[2:2 + a.ndim] = a.shape
    return d


def _explain(row):
    return f"shape {tuple(int(x) for x in row[2:2 + row[1]])} {DTYPES[row[0]].name}"
