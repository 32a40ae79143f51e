"""The NCCL process group: tensors on "cuda", collectives of NCCL through CuPy's bindings
(cupy.cuda.nccl), on CuPy's current stream. MPI starts the processes and carries NCCL's unique
id from rank 0 to the others; each process takes the GPU of its local rank on its machine.
A collective is done when an event recorded after it has fired, polled against the group's
timeout like the MPI requests (a stalled peer then aborts the communicator)."""
import numpy as np

from .. import devices
from .mpi import Work, check_dtype


class _EventRequest:
    """An MPI-request-like view of a CUDA event: Test() is whether the GPU has passed it."""

    def __init__(self, event):
        self.event = event

    def Test(self):
        return self.event.done


class NCCLGroup:
    backend = "nccl"

    def __init__(self, mpi_group):
        caller = "init_process_group"
        reason = devices.unavailable_reason("cuda")
        if reason is not None:
            raise RuntimeError(f"{caller}: backend 'nccl' needs a GPU: {reason}")
        import cupy
        try:
            from cupy.cuda import nccl
        except ImportError as e:
            raise RuntimeError(f"{caller}: backend 'nccl' needs CuPy's NCCL bindings, which failed "
                               f"to load ({e}); use backend='mpi' with 'cpu' tensors") from None
        self.cupy, self.nccl, self.mpi = cupy, nccl, mpi_group
        self.rank, self.size, self.timeout = mpi_group.rank, mpi_group.size, mpi_group.timeout
        self.local_rank, self.local_size = mpi_group.local_rank, mpi_group.local_size
        cupy.cuda.Device(self.local_rank % cupy.cuda.runtime.getDeviceCount()).use()
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = mpi_group.comm.bcast(uid, root=0)
        self.comm = nccl.NcclCommunicator(self.size, uid, self.rank)
        self._types = {np.dtype(np.float32): nccl.NCCL_FLOAT32, np.dtype(np.float64): nccl.NCCL_FLOAT64,
                       np.dtype(np.int32): nccl.NCCL_INT32,
                       np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.bool_): nccl.NCCL_UINT8}
        self._ops = {"sum": nccl.NCCL_SUM, "avg": nccl.NCCL_SUM, "max": nccl.NCCL_MAX,
                     "min": nccl.NCCL_MIN}

    @property
    def broken(self):
        return self.mpi.broken

    def _cuda(self, caller, a):
        if devices.of(a).type != "cuda":
            raise ValueError(f"{caller}: the 'nccl' backend takes tensors on 'cuda'; got a tensor on "
                             f"{devices.of(a)} (use backend='mpi' for host tensors)")
        check_dtype(caller, a.dtype)
        return self._types[a.dtype], self.cupy.cuda.get_current_stream()

    def _work(self, caller, stream, done=None):
        event = self.cupy.cuda.Event(disable_timing=True)
        event.record(stream)
        return Work(self, caller, _EventRequest(event), done)

    def poll(self, caller, request, timeout=None):
        try:
            self.mpi.poll(caller, request, timeout)
        except Exception:
            self.comm.abort()
            raise

    def progress(self, works):
        pass  # NCCL progresses on the GPU by itself

    def finish(self, work, async_op):
        return self.mpi.finish(work, async_op)

    def check_same(self, caller, a):
        self.mpi.check_same(caller, a)

    def start_all_reduce(self, caller, a, op):
        dtype, stream = self._cuda(caller, a)
        mpi_op = self.nccl.NCCL_MAX if a.dtype == np.bool_ and op == "sum" else self._ops[op]
        self.comm.allReduce(a.data.ptr, a.data.ptr, a.size, dtype, mpi_op, stream.ptr)
        if op == "avg":
            a /= self.size  # queued on the same stream, after the reduction
        return self._work(caller, stream)

    def start_broadcast(self, caller, a, src):
        dtype, stream = self._cuda(caller, a)
        self.comm.broadcast(a.data.ptr, a.data.ptr, a.size, dtype, src, stream.ptr)
        return self._work(caller, stream)

    def start_all_gather(self, caller, outs, a):
        dtype, stream = self._cuda(caller, a)
        a = self.cupy.ascontiguousarray(a)
        gathered = self.cupy.empty((self.size,) + a.shape, a.dtype)
        self.comm.allGather(a.data.ptr, gathered.data.ptr, a.size, dtype, stream.ptr)
        for r, o in enumerate(outs):
            o[...] = gathered[r]
        return self._work(caller, stream)

    def start_barrier(self, caller):
        self.cupy.cuda.get_current_stream().synchronize()
        return self.mpi.start_barrier(caller)

    def close(self):
        if self.broken is None:
            self.comm.destroy()
        self.mpi.close()

    def abort(self):
        self.mpi.abort()
