"""DistributedDataParallel: one model replica per process, gradients averaged over the
process group (minifw.distributed) while backward still runs.

As PyTorch's DDP: the parameters are grouped into buckets in reverse registration order (the
order backward produces their gradients), the first bucket small (1 MiB) so that the first
all-reduce starts early, the rest up to bucket_cap_mb. A post-accumulate-grad hook on each
parameter copies its gradient into its bucket; when a bucket is full its all-reduce starts
(non-blocking, buckets launched in index order so every rank issues the same sequence), and
the hook of the last gradient waits for all of them and writes the averages back into .grad.
"""
import contextlib
import zlib

import numpy as np

from ... import distributed as dist
from ...autograd import no_grad
from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1 << 20  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES
_DEFAULT_BUCKET_CAP_MB = 25


class _Bucket:
    def __init__(self, params, dtype, device_array_module):
        self.params = params
        self.sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int)
        self.flat = device_array_module.empty(int(self.offsets[-1]), dtype)
        self.pending = len(params)
        self.ready = [False] * len(params)  # which gradients of this backward are in
        self.work = None


class DistributedDataParallel(Module):
    """Wrap `module` for data-parallel training over the initialized process group.

    At construction every rank checks that the others hold the same parameters (names,
    shapes, dtypes) and takes rank 0's parameters and buffers. Each backward averages the
    gradients over the ranks; inside `no_sync()` they only accumulate locally (the next
    backward outside it averages the sum). With broadcast_buffers (the default), buffers
    (batch-norm statistics) are copied from rank 0 at every forward. The wrapped module is
    `.module`; state_dict keys carry its "module." prefix, as PyTorch's.

    Not supported (ValueError): find_unused_parameters=True, static_graph=True,
    gradient_as_bucket_view=True; every parameter that requires grad must get a gradient in
    every synchronized backward, or the next forward raises, as PyTorch's does."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        caller = "DistributedDataParallel"
        if not isinstance(module, Module):
            raise TypeError(f"{caller}: module must be a minifw.nn.Module; got {type(module).__name__}")
        for name, value in (("find_unused_parameters", find_unused_parameters),
                            ("gradient_as_bucket_view", gradient_as_bucket_view),
                            ("static_graph", static_graph)):
            if value:
                raise ValueError(f"{caller}: {name}=True is not supported")
        if dim != 0:
            raise ValueError(f"{caller}: dim must be 0 (the batch is split by the sampler); got {dim!r}")
        if bucket_cap_mb is None:
            bucket_cap_mb = _DEFAULT_BUCKET_CAP_MB
        if isinstance(bucket_cap_mb, bool) or not isinstance(bucket_cap_mb, (int, float)) \
                or not bucket_cap_mb > 0:
            raise ValueError(f"{caller}: bucket_cap_mb must be a positive number; got {bucket_cap_mb!r}")
        group = dist._check_group(caller, process_group)
        self.module = module
        object.__setattr__(self, "_group", group)
        object.__setattr__(self, "device_ids", device_ids)
        object.__setattr__(self, "output_device", output_device)
        object.__setattr__(self, "broadcast_buffers", bool(broadcast_buffers))
        object.__setattr__(self, "require_backward_grad_sync", True)

        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        _verify_same_parameters(caller, group, named)
        with no_grad():
            for _, t in list(module.named_parameters()) + list(module.named_buffers()):
                group.start_broadcast(caller, t._data, 0).wait()

        buckets = _make_buckets([p for _, p in reversed(named)], bucket_cap_mb * (1 << 20))
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "_next_launch", 0)
        object.__setattr__(self, "_hook_handles", [])
        for b, bucket in enumerate(buckets):
            for i, p in enumerate(bucket.params):
                self._hook_handles.append(p.register_post_accumulate_grad_hook(self._hook(b, i)))

    def forward(self, *args, **kwargs):
        if any(b.pending != len(b.params) for b in self._buckets):
            waiting = [n for n, p in self.module.named_parameters()
                       if p.requires_grad and not self._got_gradient(p)]
            raise RuntimeError(
                "DistributedDataParallel: expected to have finished reduction in the prior iteration "
                "before starting a new one: some parameters received no gradient in the last "
                f"backward ({', '.join(waiting[:8])}{' ...' if len(waiting) > 8 else ''}). Every "
                "parameter that requires grad must contribute to the loss (find_unused_parameters "
                "is not supported)")
        if self.broadcast_buffers:
            with no_grad():
                for _, b in self.module.named_buffers():
                    self._group.start_broadcast("DistributedDataParallel.forward", b._data, 0).wait()
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside: backward accumulates gradients locally, without communication."""
        previous = self.require_backward_grad_sync
        object.__setattr__(self, "require_backward_grad_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "require_backward_grad_sync", previous)

    # ---- the reduction ------------------------------------------------------------------
    def _got_gradient(self, p):
        for bucket in self._buckets:
            for q, ready in zip(bucket.params, bucket.ready):
                if q is p:
                    return ready
        return True

    def _hook(self, b, i):
        def hook(p):
            if not self.require_backward_grad_sync:
                return
            bucket = self._buckets[b]
            lo, hi = bucket.offsets[i], bucket.offsets[i + 1]
            bucket.flat[lo:hi] = p.grad._data.reshape(-1)
            bucket.ready[i] = True
            bucket.pending -= 1
            self._launch_ready()
        return hook

    def _launch_ready(self):
        group, buckets = self._group, self._buckets
        while self._next_launch < len(buckets) and buckets[self._next_launch].pending == 0:
            bucket = buckets[self._next_launch]
            bucket.work = group.start_all_reduce("DistributedDataParallel", bucket.flat, "avg")
            object.__setattr__(self, "_next_launch", self._next_launch + 1)
        if self._next_launch < len(buckets):
            group.progress([b.work for b in buckets[:self._next_launch]])
            return
        for bucket in buckets:  # every gradient is in: wait, and write the averages back
            bucket.work.wait()
            for p, lo, hi in zip(bucket.params, bucket.offsets[:-1], bucket.offsets[1:]):
                p.grad._data[...] = bucket.flat[lo:hi].reshape(p.shape)
            bucket.pending, bucket.work = len(bucket.params), None
            bucket.ready = [False] * len(bucket.params)
        object.__setattr__(self, "_next_launch", 0)


def _make_buckets(params, cap_bytes):
    """Consecutive parameters of one dtype and device, the first bucket up to 1 MiB, the others
    up to cap_bytes (a parameter larger than the cap gets a bucket of its own)."""
    from ... import devices
    buckets, current, size = [], [], 0
    limit = min(_FIRST_BUCKET_BYTES, cap_bytes)
    for p in params:
        if current and (p.dtype != current[0].dtype or p.device != current[0].device
                        or size + p._data.nbytes > limit):
            buckets.append(current)
            current, size, limit = [], 0, cap_bytes
        current.append(p)
        size += p._data.nbytes
    if current:
        buckets.append(current)
    return [_Bucket(ps, ps[0].dtype, devices.array_module(ps[0].device)) for ps in buckets]


def _verify_same_parameters(caller, group, named):
    """Each rank's (count, elements, checksum of names, shapes and dtypes), gathered: a model
    built differently on some rank is named before any gradient is averaged wrongly."""
    text = ";".join(f"{n}:{tuple(p.shape)}:{p.dtype.name}" for n, p in named)
    mine = np.array([len(named), sum(p.numel() for _, p in named), zlib.crc32(text.encode())], np.int64)
    every = np.empty((group.size, 3), np.int64)
    request = group.mpi.comm.Iallgather(mine, every) if hasattr(group, "mpi") else \
        group.comm.Iallgather(mine, every)
    (group.mpi if hasattr(group, "mpi") else group).poll(caller, request)
    if not (every == mine).all():
        rows = ", ".join(f"rank {r}: {c} parameters, {n} elements" for r, (c, n, _) in enumerate(every))
        raise ValueError(f"{caller}: the ranks' models differ in their parameters' names, shapes or "
                         f"dtypes ({rows}); build the same model on every rank")
