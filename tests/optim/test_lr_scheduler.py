"""minifw.optim.lr_scheduler beyond the closed-form decays of test_optim.py: LambdaLR,
MultiplicativeLR, ConstantLR, LinearLR, OneCycleLR (with its momentum), ReduceLROnPlateau,
SequentialLR and ChainedScheduler against sequences worked out by hand; PyTorch's chainable
forms (schedules that compose, step(epoch)'s closed form); and state_dict round trips through
a checkpoint for every schedule."""
import math
import warnings

import numpy as np
import pytest

import minifw
from minifw import optim
from minifw.optim import lr_scheduler as L

TOL = dict(rtol=1e-12, atol=1e-15)  # chainable forms multiply: exact up to a few roundings


def make_optimizer(cls=optim.SGD, lr=1.0, **kwargs):
    return cls([minifw.ones(1, requires_grad=True)], lr=lr, **kwargs)


def sequence(scheduler, optimizer, steps, key="lr"):
    """group 0's `key` at epochs 0, 1, ..., steps - 1 (each after the step that starts it)."""
    values = [optimizer.param_groups[0][key]]
    for _ in range(steps - 1):
        optimizer.step()
        scheduler.step()
        values.append(optimizer.param_groups[0][key])
        assert scheduler.get_last_lr()[0] == optimizer.param_groups[0]["lr"]
    return values


C1, C3 = (1 + math.cos(math.pi / 4)) / 2, (1 + math.cos(3 * math.pi / 4)) / 2  # 0.8536, 0.1464


@pytest.mark.parametrize("make, expected", [
    pytest.param(lambda o: L.LambdaLR(o, lambda epoch: 0.5 ** epoch), [1, 0.5, 0.25, 0.125], id="LambdaLR"),
    pytest.param(lambda o: L.LambdaLR(o, lambda epoch: epoch // 2 + 1), [1, 1, 2, 2, 3], id="LambdaLR-rising"),
    # multiplies the current lr from the first step on: 1, 1 * 0.5 (f(1)), * 0.25 (f(2)), * 0.125
    pytest.param(lambda o: L.MultiplicativeLR(o, lambda epoch: 0.5 ** epoch), [1, 0.5, 0.125, 0.015625],
                 id="MultiplicativeLR"),
    pytest.param(lambda o: L.ConstantLR(o, factor=0.5, total_iters=2), [0.5, 0.5, 1, 1], id="ConstantLR"),
    # 1/3, then up by 2/15 a step for 5 steps
    pytest.param(lambda o: L.LinearLR(o), [1 / 3, 7 / 15, 9 / 15, 11 / 15, 13 / 15, 1, 1], id="LinearLR"),
    pytest.param(lambda o: L.LinearLR(o, start_factor=1.0, end_factor=0.5, total_iters=2),
                 [1, 0.75, 0.5, 0.5], id="LinearLR-decay"),
    pytest.param(lambda o: L.CosineAnnealingLR(o, T_max=2, eta_min=0.5), [1, 0.75, 0.5, 0.75, 1],
                 id="CosineAnnealingLR-past-T_max"),
])
def test_lr_sequence(make, expected):
    optimizer = make_optimizer()
    np.testing.assert_allclose(sequence(make(optimizer), optimizer, len(expected)), expected, **TOL)


def test_lambdas_per_param_group():
    a, b = minifw.ones(1, requires_grad=True), minifw.ones(1, requires_grad=True)
    optimizer = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
    scheduler = L.LambdaLR(optimizer, [lambda e: 0.5 ** e, lambda e: e + 1])
    scheduler.step()
    assert scheduler.get_last_lr() == [0.5, 0.2]
    with pytest.raises(ValueError, match=r"lr_lambda must have one value per param group \(2\), got 3"):
        L.LambdaLR(optimizer, [abs, abs, abs])
    with pytest.raises(TypeError, match="lr_lambda must be a function of the epoch"):
        L.MultiplicativeLR(optimizer, 0.5)


# ---- OneCycleLR ------------------------------------------------------------------------------
# max_lr 1, 10 steps, pct_start 0.3: the lr starts at 1/25 = 0.04, peaks at step 3 * 1 - 1 = 2,
# and falls over steps 2..9 to 0.04 / 1e4 = 4e-6; the momentum goes 0.95 -> 0.85 -> 0.95.
MIN_LR = 0.04 / 1e4


def cos_anneal(start, end, pct):
    return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2


ONE_CYCLE_LR = [0.04, 0.52, 1.0] + [cos_anneal(1.0, MIN_LR, k / 7) for k in range(1, 8)]
ONE_CYCLE_MOMENTUM = [0.95, 0.9, 0.85] + [cos_anneal(0.85, 0.95, k / 7) for k in range(1, 8)]


def test_one_cycle_lr_and_momentum():
    optimizer = make_optimizer(momentum=0.9)
    scheduler = L.OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
    group = optimizer.param_groups[0]
    assert (group["initial_lr"], group["max_lr"], group["min_lr"]) == (0.04, 1.0, MIN_LR)
    assert (group["max_momentum"], group["base_momentum"]) == (0.95, 0.85)
    lrs, momenta = [group["lr"]], [group["momentum"]]
    for _ in range(9):
        optimizer.step()
        scheduler.step()
        lrs.append(group["lr"])
        momenta.append(group["momentum"])
    np.testing.assert_allclose(lrs, ONE_CYCLE_LR, **TOL)
    np.testing.assert_allclose(momenta, ONE_CYCLE_MOMENTUM, **TOL)
    assert lrs[-1] == pytest.approx(MIN_LR, rel=1e-12)
    scheduler.step()  # one step past the end is allowed, as in PyTorch (the cosine goes on)
    with pytest.raises(ValueError, match="tried to step 11 times; the schedule has total_steps=10"):
        scheduler.step()


def test_one_cycle_linear_three_phase():
    # phases end at steps 2, 4 (= 2 * 0.3 * 10 - 2) and 9: up to 1, back down to 0.04, then
    # linearly to 4e-6 over the last 5 steps, the momentum held at 0.95
    optimizer = make_optimizer(momentum=0.9)
    scheduler = L.OneCycleLR(optimizer, max_lr=1.0, total_steps=10, anneal_strategy="linear",
                             three_phase=True)
    expected_lr = [0.04, 0.52, 1.0, 0.52, 0.04] + [0.04 + (MIN_LR - 0.04) * k / 5 for k in range(1, 6)]
    expected_momentum = [0.95, 0.9, 0.85, 0.9] + [0.95] * 6
    np.testing.assert_allclose(sequence(scheduler, optimizer, 10), expected_lr, **TOL)
    optimizer = make_optimizer(momentum=0.9)
    scheduler = L.OneCycleLR(optimizer, max_lr=1.0, total_steps=10, anneal_strategy="linear",
                             three_phase=True)
    np.testing.assert_allclose(sequence(scheduler, optimizer, 10, key="momentum"), expected_momentum, **TOL)


def test_one_cycle_cycles_adams_beta1_and_keeps_beta2():
    optimizer = make_optimizer(optim.Adam, betas=(0.9, 0.99))
    scheduler = L.OneCycleLR(optimizer, max_lr=1.0, epochs=2, steps_per_epoch=5)
    betas = sequence(scheduler, optimizer, 10, key="betas")
    np.testing.assert_allclose([b[0] for b in betas], ONE_CYCLE_MOMENTUM, **TOL)
    assert {b[1] for b in betas} == {0.99}


def test_one_cycle_per_group_max_lr_and_optimizers_without_momentum():
    a, b = minifw.ones(1, requires_grad=True), minifw.ones(1, requires_grad=True)
    optimizer = optim.RMSprop([{"params": [a]}, {"params": [b]}])
    scheduler = L.OneCycleLR(optimizer, max_lr=[1.0, 0.5], total_steps=10, base_momentum=[0.8, 0.7])
    assert scheduler.get_last_lr() == pytest.approx([0.04, 0.02], rel=1e-12)
    assert [g["momentum"] for g in optimizer.param_groups] == [0.95, 0.95]  # RMSprop's momentum
    with pytest.raises(ValueError, match="cycle_momentum=True needs an optimizer with momentum or betas"
                                         ".*Adadelta has neither"):
        L.OneCycleLR(optim.Adadelta([a]), max_lr=1.0, total_steps=10)
    scheduler = L.OneCycleLR(optim.Adadelta([a]), max_lr=1.0, total_steps=10, cycle_momentum=False)
    assert scheduler.get_last_lr() == pytest.approx([0.04], rel=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "give total_steps, or epochs and steps_per_epoch"),
    (dict(epochs=3), "give total_steps, or epochs and steps_per_epoch"),
    (dict(total_steps=0), "total_steps must be a positive integer, got 0"),
    (dict(epochs=2, steps_per_epoch=2.5), "steps_per_epoch must be a positive integer, got 2.5"),
    (dict(total_steps=10, pct_start=1.5), "pct_start must be a number between 0 and 1, got 1.5"),
    (dict(total_steps=10, anneal_strategy="exp"), "anneal_strategy must be 'cos' or 'linear', got 'exp'"),
    (dict(total_steps=10, max_momentum=[0.9, 0.9]), r"max_momentum must have one value per param group \(1\)"),
])
def test_one_cycle_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        L.OneCycleLR(make_optimizer(momentum=0.9), max_lr=1.0, **kwargs)


# ---- ReduceLROnPlateau ---------------------------------------------------------------------
def plateau_lrs(metrics, **kwargs):
    """The lr after each step(metric)."""
    optimizer = make_optimizer()
    scheduler = L.ReduceLROnPlateau(optimizer, **kwargs)
    lrs = []
    for metric in metrics:
        scheduler.step(metric)
        lrs.append(optimizer.param_groups[0]["lr"])
        assert scheduler.get_last_lr() == [lrs[-1]]
    return lrs


@pytest.mark.parametrize("metrics, kwargs, expected", [
    # 9 improves on 10; then 3 epochs without improvement is more than patience 2: halve, count again
    pytest.param([10, 9, 9, 9, 9, 9, 9, 9], dict(patience=2, factor=0.5),
                 [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.25], id="patience"),
    pytest.param([10, 10, 10], dict(patience=0, factor=0.5), [1, 0.5, 0.25], id="patience-0"),
    # after a drop, 2 epochs of cooldown count as neither good nor bad
    pytest.param([10, 10, 10, 10, 10, 10, 10], dict(patience=0, factor=0.5, cooldown=2),
                 [1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25], id="cooldown"),
    # rel: 9.9995 is not below 10 * (1 - 1e-4) = 9.999, so it is no improvement
    pytest.param([10, 9.9995, 9.9995], dict(patience=1, factor=0.5), [1, 1, 0.5], id="threshold-rel"),
    # abs: 9.9995 is below 10 - 1e-4; the second 9.9995 is not below 9.9994
    pytest.param([10, 9.9995, 9.9995], dict(patience=0, factor=0.5, threshold_mode="abs"),
                 [1, 1, 0.5], id="threshold-abs"),
    pytest.param([10, 9.9995, 9.9995], dict(patience=0, factor=0.5, threshold=0.1, threshold_mode="abs"),
                 [1, 0.5, 0.25], id="threshold-abs-large"),
    # max: an accuracy must rise above best * (1 + 1e-4) (rel) or best + 0.01 (abs)
    pytest.param([0.5, 0.6, 0.60001, 0.7], dict(mode="max", patience=0, factor=0.5),
                 [1, 1, 0.5, 0.5], id="max-rel"),
    pytest.param([0.5, 0.505, 0.52], dict(mode="max", patience=0, factor=0.5, threshold=0.01,
                                         threshold_mode="abs"), [1, 0.5, 0.5], id="max-abs"),
    # never below min_lr; a drop smaller than eps is not taken
    pytest.param([1, 1, 1, 1], dict(patience=0, factor=0.5, min_lr=0.3), [1, 0.5, 0.3, 0.3], id="min_lr"),
    pytest.param([1, 1], dict(patience=0, factor=0.5, min_lr=1 - 1e-9), [1, 1], id="min_lr-within-eps"),
])
def test_reduce_lr_on_plateau(metrics, kwargs, expected):
    np.testing.assert_allclose(plateau_lrs(metrics, **kwargs), expected, **TOL)


def test_reduce_lr_on_plateau_takes_a_loss_tensor_and_per_group_min_lr():
    a, b = minifw.ones(1, requires_grad=True), minifw.ones(1, requires_grad=True)
    optimizer = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
    scheduler = L.ReduceLROnPlateau(optimizer, patience=0, min_lr=[0.5, 0.0])
    scheduler.step(minifw.tensor(2.0))
    scheduler.step(minifw.tensor(2.0))
    assert scheduler.get_last_lr() == [0.5, pytest.approx(0.01)]
    assert scheduler.last_epoch == 2 and scheduler.best == 2.0


@pytest.mark.parametrize("kwargs, message", [
    (dict(factor=1.0), r"factor must be >= 0 and < 1.0 \(the lr is multiplied by it\), got 1.0"),
    (dict(mode="lowest"), "mode must be 'min' or 'max', got 'lowest'"),
    (dict(threshold_mode="relative"), "threshold_mode must be 'rel' or 'abs', got 'relative'"),
    (dict(min_lr=[0, 0]), r"min_lr must have one value per param group \(1\), got 2"),
])
def test_reduce_lr_on_plateau_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        L.ReduceLROnPlateau(make_optimizer(), **kwargs)


# ---- SequentialLR, ChainedScheduler ---------------------------------------------------------
def test_sequential_lr_hands_over_at_the_milestone():
    # PyTorch's example: ConstantLR(0.1) until the milestone, then ExponentialLR from its epoch 0
    optimizer = make_optimizer()
    scheduler = L.SequentialLR(optimizer, [L.ConstantLR(optimizer, factor=0.1, total_iters=2),
                                           L.ExponentialLR(optimizer, gamma=0.9)], milestones=[2])
    np.testing.assert_allclose(sequence(scheduler, optimizer, 6), [0.1, 0.1, 1, 0.9, 0.81, 0.729], **TOL)


def test_sequential_lr_warm_up_then_cosine():
    optimizer = make_optimizer()
    warmup = L.LinearLR(optimizer, start_factor=0.5, total_iters=2)
    scheduler = L.SequentialLR(optimizer, [warmup, L.CosineAnnealingLR(optimizer, T_max=4)], milestones=[3])
    np.testing.assert_allclose(sequence(scheduler, optimizer, 8), [0.5, 0.75, 1, 1, C1, 0.5, C3, 0], **TOL)


def test_chained_scheduler_multiplies_the_factors():
    optimizer = make_optimizer()
    scheduler = L.ChainedScheduler([L.ConstantLR(optimizer, factor=0.1, total_iters=2),
                                    L.ExponentialLR(optimizer, gamma=0.9)])
    np.testing.assert_allclose(sequence(scheduler, optimizer, 5), [0.1, 0.09, 0.81, 0.729, 0.6561], **TOL)


def test_two_schedules_on_one_optimizer_compose_as_in_pytorch():
    optimizer = make_optimizer()
    step = L.StepLR(optimizer, step_size=2, gamma=0.1)
    decay = L.ExponentialLR(optimizer, gamma=0.5)
    lrs = []
    for _ in range(4):
        step.step()
        decay.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [0.5, 0.025, 0.0125, 0.000625], **TOL)


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda o, p: L.SequentialLR(o, [], milestones=[]), ValueError, "at least one scheduler",
                 id="no-schedulers"),
    pytest.param(lambda o, p: L.SequentialLR(o, [L.ExponentialLR(o, 0.9)], milestones=[3]), ValueError,
                 "one milestone fewer than schedulers, got 1 schedulers and 1 milestones", id="milestones"),
    pytest.param(lambda o, p: L.SequentialLR(o, [L.ExponentialLR(p, 0.9)], milestones=[]), ValueError,
                 "the ExponentialLR at index 0 steps another", id="other-optimizer"),
    pytest.param(lambda o, p: L.ChainedScheduler([L.ExponentialLR(o, 0.9), L.StepLR(p, 2)]), ValueError,
                 "the StepLR at index 1 steps another", id="chained-other-optimizer"),
    pytest.param(lambda o, p: L.ChainedScheduler([L.ReduceLROnPlateau(o)]), ValueError,
                 "does not support ReduceLROnPlateau", id="plateau"),
    pytest.param(lambda o, p: L.ChainedScheduler([o]), TypeError, "has no optimizer attribute",
                 id="not-a-scheduler"),
])
def test_combined_schedulers_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make(make_optimizer(), make_optimizer())


# ---- PyTorch's conventions -------------------------------------------------------------------
def test_step_with_an_epoch_uses_the_closed_form_and_warns():
    optimizer = make_optimizer()
    scheduler = L.StepLR(optimizer, step_size=2, gamma=0.1)
    with pytest.warns(UserWarning, match=r"scheduler.step\(epoch\) is deprecated"):
        scheduler.step(5)
    assert scheduler.last_epoch == 5 and optimizer.param_groups[0]["lr"] == pytest.approx(0.01)


def test_a_subclass_written_for_pytorch_works():
    class Halving(L._LRScheduler):  # PyTorch < 2.0 spelling, still used by older scripts
        def get_lr(self):
            return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

    optimizer = make_optimizer(lr=0.8)
    np.testing.assert_allclose(sequence(Halving(optimizer), optimizer, 3), [0.8, 0.4, 0.2], **TOL)
    assert issubclass(L.ReduceLROnPlateau, L.LRScheduler)


def test_sequence_steps_emit_no_warning():
    optimizer = make_optimizer()
    scheduler = L.SequentialLR(optimizer, [L.ConstantLR(optimizer, factor=0.5, total_iters=1),
                                           L.StepLR(optimizer, step_size=1)], milestones=[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            optimizer.step()  # (a schedule stepped first warns, as PyTorch's)
            scheduler.step()


# ---- state_dict through a checkpoint --------------------------------------------------------
def _plateau(o):
    return L.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1)


SCHEDULES = {
    "LambdaLR": lambda o: L.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda o: L.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda o: L.StepLR(o, step_size=2, gamma=0.5),
    "MultiStepLR": lambda o: L.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5),
    "ConstantLR": lambda o: L.ConstantLR(o, factor=0.5, total_iters=6),
    "LinearLR": lambda o: L.LinearLR(o, total_iters=6),
    "ExponentialLR": lambda o: L.ExponentialLR(o, gamma=0.8),
    "CosineAnnealingLR": lambda o: L.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "OneCycleLR": lambda o: L.OneCycleLR(o, max_lr=2.0, total_steps=9),
    "ReduceLROnPlateau": _plateau,
    "SequentialLR": lambda o: L.SequentialLR(o, [L.LinearLR(o, start_factor=0.25, total_iters=3),
                                                 L.CosineAnnealingLR(o, T_max=4)], milestones=[3]),
    "ChainedScheduler": lambda o: L.ChainedScheduler([L.LinearLR(o, total_iters=3),
                                                      L.MultiStepLR(o, milestones=[6])]),
}
METRICS = [5, 4, 4, 4, 4, 3, 3, 3, 3]


def _advance(optimizer, scheduler, epoch):
    optimizer.step()
    if isinstance(scheduler, L.ReduceLROnPlateau):
        scheduler.step(METRICS[epoch])
    else:
        scheduler.step()
    return (optimizer.param_groups[0]["lr"], optimizer.param_groups[0]["momentum"])


@pytest.mark.parametrize("name", SCHEDULES)
def test_state_dict_round_trip_through_a_checkpoint_continues_identically(name, tmp_path):
    make = SCHEDULES[name]
    optimizer = make_optimizer(lr=0.5, momentum=0.9)
    scheduler = make(optimizer)
    for epoch in range(4):
        at_save = _advance(optimizer, scheduler, epoch)
    minifw.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
                tmp_path / "checkpoint.npz")
    uninterrupted = [_advance(optimizer, scheduler, epoch) for epoch in range(4, 8)]

    # resumed as PyTorch's docs say: make both afresh, then load both
    resumed_optimizer = make_optimizer(lr=0.5, momentum=0.9)
    resumed = make(resumed_optimizer)
    checkpoint = minifw.load(tmp_path / "checkpoint.npz")
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    resumed.load_state_dict(checkpoint["scheduler"])
    assert [_advance(resumed_optimizer, resumed, epoch) for epoch in range(4, 8)] == uninterrupted
    assert len({at_save, *uninterrupted}) > 1  # the schedule moves after the checkpoint


def test_lambda_state_dict_keeps_a_callable_objects_attributes():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate ** epoch

    optimizer = make_optimizer()
    scheduler = L.LambdaLR(optimizer, [Decay()])
    scheduler.lr_lambdas[0].rate = 0.25
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.25}] and "optimizer" not in state
    fresh = L.LambdaLR(make_optimizer(), [Decay()])
    fresh.load_state_dict(state)
    assert fresh.lr_lambdas[0].rate == 0.25
    assert L.LambdaLR(optimizer, lambda e: 1.0).state_dict()["lr_lambdas"] == [None]
