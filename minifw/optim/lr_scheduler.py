"""Learning-rate schedules, as torch.optim.lr_scheduler.

Call scheduler.step() after optimizer.step(): once per epoch, or once per batch for a schedule
counted in batches (OneCycleLR, a warm-up). Each schedule computes the lr as PyTorch's does:
get_lr() is the "chainable" form, the next lr from the lr each param group holds now, so that
schedules compose (ChainedScheduler, two schedules stepping one optimizer, an lr changed by
hand); _get_closed_form_lr(), where PyTorch has one, is the lr as a function of the epoch
alone, which step(epoch) and SequentialLR's milestones use. Both agree to rounding when
nothing else touches the lr.

An lr given to the optimizer as a one-element Tensor (PyTorch 2's form) stays that Tensor:
each step writes the new value into it in place (so every holder of it sees the change),
and the lrs a scheduler keeps or returns (base_lrs, get_last_lr()) are copies of it, never
the Tensor itself.
"""
import bisect
import math
import numbers
import types
import warnings
from collections import Counter

from ..tensor import Tensor
from .optimizer import Optimizer

_EPOCH_DEPRECATION = ("scheduler.step(epoch) is deprecated: call `scheduler.step()` with no "
                      "argument. While it lasts, a given epoch takes the schedule's closed form, "
                      "where it has one, rather than its chained form.")
# Its first words are PyTorch's, so that warning filters written for PyTorch's apply.
_STEP_ORDER = ("Detected call of `lr_scheduler.step()` before `optimizer.step()`: the schedule's "
               "first value was passed over before the optimizer used it. Step the optimizer "
               "first, then the scheduler.")


def _check_optimizer(scheduler, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(scheduler).__name__}: optimizer must be an Optimizer, got "
                        f"{type(optimizer).__name__}")


def _per_group(scheduler, name, value, optimizer):
    """value as one entry per param group: a list or tuple must have one per group; anything
    else is repeated (PyTorch's rule for max_lr, min_lr, momenta and lr_lambda). A Tensor
    entry is copied, so that no group shares it with the caller or another group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{type(scheduler).__name__}: {name} must have one value per param "
                             f"group ({n}), got {len(value)}")
        return [_copy(v) for v in value]
    return [_copy(value) for _ in range(n)]


def _copy(value):
    """value, or a copy of it if it is a Tensor (an lr held as a Tensor)."""
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer, key):
    """group[key] of every param group, Tensors copied: what a scheduler keeps must not change
    when the groups' Tensors are updated in place (nor change them if modified)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    """group[key] = value, except that a Tensor held there keeps its identity and takes the
    new value in place."""
    held = group[key]
    if isinstance(held, Tensor):
        held.fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


class LRScheduler:
    """Base class. A subclass defines get_lr(): the lrs of epoch self.last_epoch, one per param
    group, usually from each group's current lr (chainable) or from self.base_lrs (each group's
    'initial_lr'). The constructor takes the first step, which sets the lrs of epoch 0."""

    _is_initial = False  # true during the constructor's step: chainable forms keep the lr then

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(self, optimizer)
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            if last_epoch == -1:
                group.setdefault("initial_lr", _copy(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(f"{type(self).__name__}: param group has no 'initial_lr' to resume "
                               f"from (last_epoch={last_epoch})")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            del self._is_initial  # back to the class's False, and out of state_dict()

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self):
        """The lrs the last step() set, one per param group."""
        return list(self._last_lr)

    def step(self, epoch=None):
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            # the first step after the constructor's, with no optimizer step yet: as PyTorch's
            warnings.warn(_STEP_ORDER, UserWarning, stacklevel=2)
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def state_dict(self):
        """Everything but the optimizer (whose own state_dict holds the lrs)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """The base class's name before PyTorch 2.0, which older scripts subclass."""


class _LambdaSchedule(LRScheduler):
    """A schedule driven by one function of the epoch per param group. Functions are not saved
    (state_dict keeps None for each); a callable object's attributes are, as in PyTorch."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(self, optimizer)
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(self, "lr_lambda", lr_lambda, optimizer)
        for i, fn in enumerate(self.lr_lambdas):
            if not callable(fn):
                raise TypeError(f"{type(self).__name__}: lr_lambda must be a function of the epoch "
                                f"(or a list of one per param group), got {type(fn).__name__} "
                                f"for group {i}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas", [])
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaSchedule):
    """lr = base_lr * lr_lambda(epoch)"""

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaSchedule):
    """lr = lr * lr_lambda(epoch) at each step after the first"""

    def get_lr(self):
        if self._is_initial:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)"""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch); a milestone given twice counts
    twice"""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect.bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.milestones = Counter(self.milestones)  # a checkpoint gives back a plain dict


class ConstantLR(LRScheduler):
    """lr = base_lr * factor until epoch total_iters, then base_lr"""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 < factor <= 1:  # the chainable form divides by it at total_iters
            raise ValueError(f"ConstantLR: factor must be > 0 and <= 1, got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = base_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters)
    / total_iters): a linear ramp over total_iters steps, then constant (a warm-up)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be > 0 and <= 1, got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be between 0 and 1, got {end_factor}")
        if total_iters < 1:
            raise ValueError(f"LinearLR: total_iters must be >= 1, got {total_iters}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in self.optimizer.param_groups]
        # the ratio of this epoch's factor to the last one's
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        fraction = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * fraction)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch"""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:  # also when resuming at last_epoch: the loaded lr is already it
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
    (Loshchilov & Hutter's SGDR without restarts; past T_max the cosine climbs back)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be > 0, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        epoch, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and epoch > 0:  # a first step past epoch 0: the closed form
            return [eta_min + (base - eta_min) * (1 + math.cos(epoch * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (epoch - 1 - T) % (2 * T) == 0:  # leaving the minimum, where the ratio below is 0/0
            return [group["lr"] + (base - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * epoch / T)) / (1 + math.cos(math.pi * (epoch - 1) / T))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2 for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """Smith & Topin's 1cycle policy, stepped once per batch: the lr rises from
    max_lr / div_factor to max_lr over the first pct_start of total_steps, then falls to
    max_lr / (div_factor * final_div_factor); the momentum (SGD's, RMSprop's) or Adam's beta1
    moves the other way, between max_momentum and base_momentum. With three_phase, the lr
    comes back down to its start symmetrically before the final fall. Each phase anneals
    by a half cosine (anneal_strategy='cos') or linearly ('linear')."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        _check_optimizer(self, optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            _check_positive_int("total_steps", total_steps)
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            _check_positive_int("epochs", epochs)
            _check_positive_int("steps_per_epoch", steps_per_epoch)
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, numbers.Real) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a number between 0 and 1, got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        # Each phase ends at a step (a float, as PyTorch's) and anneals the group's value
        # named start_* into the one named end_*.
        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * self.total_steps) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum", end_momentum="max_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        else:
            self._schedule_phases = [
                dict(end_step=up_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
            ]
        max_lrs = _per_group(self, "max_lr", max_lr, optimizer)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"OneCycleLR: cycle_momentum=True needs an optimizer with momentum "
                                 f"or betas (SGD, RMSprop, Adam, AdamW); {type(optimizer).__name__} "
                                 f"has neither: pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momenta = _per_group(self, "max_momentum", max_momentum, optimizer)
            base_momenta = _per_group(self, "base_momentum", base_momentum, optimizer)
            if last_epoch == -1:
                for high, low, group in zip(max_momenta, base_momenta, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the schedule has "
                             f"total_steps={self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start_step = end_step
        return lrs


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"OneCycleLR: {name} must be a positive integer, got {value!r}")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by `factor` when a metric has stopped improving: step(metric) once per
    epoch; after more than `patience` epochs without an improvement (beyond `threshold`,
    relative or absolute), the lr drops, never below min_lr, and no epoch counts as bad for
    the next `cooldown` epochs. A drop smaller than eps is skipped."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        _check_optimizer(self, optimizer)
        if not 0 <= factor < 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be >= 0 and < 1.0 (the lr is "
                             f"multiplied by it), got {factor}")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.min_lrs = _per_group(self, "min_lr", min_lr, optimizer)
            self.default_min_lr = None
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self._last_lr = _group_values(optimizer, "lr")
        self.patience, self.cooldown, self.cooldown_counter = patience, cooldown, 0
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = self.num_bad_epochs = self.mode_worse = None
        self.eps = eps
        self.last_epoch = 0
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics, epoch=None):
        current = float(metrics)  # a 0-d Tensor (a loss) as well as a number
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown are not counted
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer has {len(groups)} param "
                                   f"groups, min_lr has {len(self.min_lrs)} values (a group was "
                                   f"added after the scheduler was made): set min_lrs to one per "
                                   f"group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def _check_schedulers(owner, schedulers, optimizer):
    cls = type(owner).__name__
    if len(schedulers) < 1:
        raise ValueError(f"{cls} expects at least one scheduler, got none")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{cls}: the scheduler at index {i} has no optimizer attribute (got a "
                            f"{type(scheduler).__name__})")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{cls} does not support ReduceLROnPlateau (at index {i}): its step "
                             f"takes the metric")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{cls} expects all schedulers to step the same optimizer; the "
                             f"{type(scheduler).__name__} at index {i} steps another")


class SequentialLR(LRScheduler):
    """schedulers[0] until epoch milestones[0], then schedulers[1] from its epoch 0 (its closed
    form) until milestones[1], and so on."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_optimizer(self, optimizer)
        schedulers, milestones = list(schedulers), list(milestones)
        _check_schedulers(self, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Each scheduler took its first step when it was made; start again from the initial
        # lrs, with only the first scheduler's first step taken.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self._undo_first_steps(self)
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    @classmethod
    def _undo_first_steps(cls, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                cls._undo_first_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in the list, in order, at each step: with chainable schedules
    their factors multiply (e.g. a warm-up and a decay at once)."""

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler, got none")
        if optimizer is None:
            optimizer = getattr(schedulers[0], "optimizer", None)  # none: reported just below
        _check_schedulers(self, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(optimizer, "lr")

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self.optimizer, "lr")

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


def _check_number(owner, name, value, minimum=None, exclusive=False, integer=False):
    """value must be a real number (an int if `integer`), >= minimum (> minimum if exclusive)."""
    kind = numbers.Integral if integer else numbers.Real
    wanted = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{owner}: {name} must be {wanted}, got {type(value).__name__} {value!r}")
    if minimum is not None and (value <= minimum if exclusive else value < minimum):
        raise ValueError(f"{owner}: {name} must be {'>' if exclusive else '>='} {minimum}, got "
                         f"{value!r}")


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power: a polynomial decay
    to 0 over total_iters steps (power 1: linear), then constant."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        # PyTorch checks neither; total_iters 0 divides by zero and a negative power does at the end
        _check_number("PolynomialLR", "total_iters", total_iters, minimum=1, integer=True)
        _check_number("PolynomialLR", "power", power, minimum=0)
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        # the ratio of this epoch's factor to the last one's
        ratio = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * ratio for group in groups]

    def _get_closed_form_lr(self):
        fraction = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - fraction) ** self.power for base in self.base_lrs]


class CyclicLR(LRScheduler):
    """Smith's cyclical learning rates, stepped once per batch: the lr climbs linearly from
    base_lr to max_lr over step_size_up steps and falls back over step_size_down, the
    amplitude scaled by scale_fn of the cycle number (scale_mode 'cycle') or of the step
    ('iterations'): 'triangular' keeps it, 'triangular2' halves it each cycle, 'exp_range'
    multiplies it by gamma each step. With cycle_momentum the momentum (SGD's, RMSprop's) or
    Adam's beta1 moves the other way, from max_momentum down to base_momentum at the peak."""

    _MODES = ("triangular", "triangular2", "exp_range")

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(self, optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group(self, "base_lr", base_lr, optimizer)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group(self, "max_lr", max_lr, optimizer)
        _check_number("CyclicLR", "step_size_up", step_size_up, minimum=0, exclusive=True)
        if step_size_down is not None:
            _check_number("CyclicLR", "step_size_down", step_size_down, minimum=0)
        step_size_up = float(step_size_up)
        step_size_down = step_size_up if step_size_down is None else float(step_size_down)
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if scale_fn is None:
            if mode not in self._MODES:
                raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
                                 f"'exp_range' (or give scale_fn), got {mode!r}")
        else:
            if not callable(scale_fn):
                raise TypeError(f"CyclicLR: scale_fn must be a function of the cycle or step "
                                f"number, got {type(scale_fn).__name__}")
            if scale_mode not in ("cycle", "iterations"):  # PyTorch takes a typo as 'iterations'
                raise ValueError(f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got "
                                 f"{scale_mode!r}")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        # the built-in modes fix their own scale_mode, as in PyTorch
        self.scale_mode = scale_mode if scale_fn is not None else \
            ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"CyclicLR: cycle_momentum=True needs an optimizer with momentum "
                                 f"or betas (SGD, RMSprop, Adam, AdamW); {type(optimizer).__name__} "
                                 f"has neither: pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(self, "base_momentum", base_momentum, optimizer)
            self.max_momentums = _per_group(self, "max_momentum", max_momentum, optimizer)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums,
                                            optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs  # the first step above used each group's 'initial_lr', as PyTorch's

    _set_momentum = OneCycleLR._set_momentum

    def scale_fn(self, x):
        """The amplitude's scale at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # where in the cycle, 0 <= x < 1
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (high - base) * height * scale
               for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, high - (high - low) * height * scale)
        return lrs

    def state_dict(self):
        """As the base's, with a scale_fn saved as PyTorch saves it: None for a function, the
        attributes of a callable object."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_scale_fn_custom")}
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else dict(fn.__dict__))
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved_fn = state.pop("_scale_fn_custom", None)
        self.__dict__.update(state)
        if saved_fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(saved_fn)


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur /
    T_i)) / 2, where T_cur counts the epochs since the last restart and the i-th period T_i is
    T_0 * T_mult ** i. step() advances one epoch; step(epoch) jumps to any epoch, fractional
    ones included (epoch + batch / batches_per_epoch, to anneal within an epoch)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        _check_number("CosineAnnealingWarmRestarts", "T_0", T_0, minimum=1, integer=True)
        _check_number("CosineAnnealingWarmRestarts", "T_mult", T_mult, minimum=1, integer=True)
        _check_number("CosineAnnealingWarmRestarts", "eta_min", eta_min)
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i))
                / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Without an epoch, the next one; step(epoch) sets the epoch (no deprecation warning:
        PyTorch documents this form for fractional epochs)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            _check_number("CosineAnnealingWarmRestarts.step", "epoch", epoch, minimum=0)
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:  # the restart n before epoch: T_0 * (T_mult ** n - 1) / (T_mult - 1) <= epoch
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")
