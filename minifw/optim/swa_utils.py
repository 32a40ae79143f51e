"""Weight averaging, as torch.optim.swa_utils: AveragedModel keeps a running average of a
model's parameters (stochastic weight averaging, Izmailov et al., 2018, or an exponential
moving average with get_ema_multi_avg_fn), SWALR anneals each group's lr to a constant SWA
lr, and update_bn recomputes batch-norm statistics for the averaged weights.

    swa_model = AveragedModel(model)                     # or multi_avg_fn=get_ema_multi_avg_fn(0.999)
    swa_model.update_parameters(model)                   # after some optimizer steps
    update_bn(loader, swa_model)                         # then evaluate swa_model
"""
import copy
import itertools
import math

from ..autograd import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..tensor import Tensor, int64, tensor
from .lr_scheduler import LRScheduler, _per_group


def _check_decay(fn, decay):
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay <= 1.0:
        raise ValueError(f"{fn}: decay must be a number in [0, 1], got {decay!r}")
    return float(decay)


def get_ema_multi_avg_fn(decay=0.999):
    """An update of many averages at once: avg = decay * avg + (1 - decay) * current."""
    decay = _check_decay("get_ema_multi_avg_fn", decay)

    @no_grad()
    def ema_update(averaged, current, num_averaged):
        for a, c in zip(averaged, current):
            if a.is_floating_point():
                a.lerp_(c, 1 - decay)
            else:
                a.copy_(a * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An update of many averages at once: the running mean, avg += (current - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged, current, num_averaged):
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        for a, c in zip(averaged, current):
            if a.is_floating_point():
                a.lerp_(c, 1 / (n + 1))
            else:
                a.copy_(a + (c - a) // int(n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """avg_fn(averaged, current, num_averaged) -> decay * averaged + (1 - decay) * current."""
    decay = _check_decay("get_ema_avg_fn", decay)

    @no_grad()
    def ema_update(averaged, current, num_averaged):
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_avg_fn():
    """avg_fn(averaged, current, num_averaged) -> the running mean with one more value."""
    @no_grad()
    def swa_update(averaged, current, num_averaged):
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        return averaged + (current - averaged) / (n + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` (self.module) whose parameters are an average of the model's over
    the calls of update_parameters(model): the running mean by default, else avg_fn (one
    tensor at a time) or multi_avg_fn (lists of tensors). With use_buffers=True the buffers
    are averaged too; else they are copied from the model at each update. `n_averaged`
    (a buffer) counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: model must be a minifw.nn.Module, got {type(model).__name__}")
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: give avg_fn or multi_avg_fn, not both")
        for name, fn in (("avg_fn", avg_fn), ("multi_avg_fn", multi_avg_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"AveragedModel: {name} must be callable, got {type(fn).__name__}")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, bool(use_buffers)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model):
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.module.parameters()), list(model.parameters())
        if len(mine) != len(theirs):
            raise ValueError(f"AveragedModel.update_parameters: the model has {len(theirs)} tensors to "
                             f"average, this average {len(mine)}: not the model it was made from")
        current = [t.detach().to(a.device) for a, t in zip(mine, theirs)]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, c in zip(mine, current):
                a.copy_(c)
        elif self.avg_fn is not None:
            for a, c in zip(mine, current):
                a.copy_(self.avg_fn(a.detach(), c, self.n_averaged))
        else:
            (self.multi_avg_fn or get_swa_multi_avg_fn())([a.detach() for a in mine], current,
                                                        self.n_averaged)
        if not self.use_buffers:  # the buffers follow the model's
            for b, c in zip(self.module.buffers(), model.buffers()):
                b.copy_(c.detach().to(b.device))
        self.n_averaged.add_(1)


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute every batch-norm layer's running statistics as the plain average over one
    pass of `loader` (its batches, or their first element) through `model` in training mode;
    the layers' momenta and the model's mode are restored after."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    try:
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    finally:
        for m, momentum in momenta.items():
            m.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value when the schedule starts to swa_lr over
    anneal_epochs steps ('cos' or 'linear'), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _per_group(self, "swa_lr", swa_lr, optimizer)
        for lr in swa_lrs:
            if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr < 0:
                raise ValueError(f"SWALR: swa_lr must be a finite number >= 0, got {lr!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"SWALR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0, got {anneal_epochs!r}")
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t):
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def get_lr(self):
        # the lr each group would start from, recovered from its current lr and the previous
        # step's mixing weight, then mixed with swa_lr at this step's weight
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        before = self._anneal(max(0.0, min(1.0, (step - 1) / span)))
        now = self._anneal(max(0.0, min(1.0, step / span)))
        lrs = []
        for group in self.optimizer.param_groups:
            swa_lr = group["swa_lr"]
            start = swa_lr if before == 1 else (group["lr"] - before * swa_lr) / (1 - before)
            lrs.append(swa_lr * now + start * (1 - now))
        return lrs
