"""CyclicLR, CosineAnnealingWarmRestarts and PolynomialLR: sequences worked out by hand (closed
forms that hold without PyTorch), long sequences step by step against PyTorch's when it is
installed (lr and momentum), step(epoch) with fractional epochs, SequentialLR and
ChainedScheduler around them, state_dict through a checkpoint, and the argument checks."""
import inspect
import math
import warnings

import numpy as np
import pytest

import minifw
from minifw import optim
from minifw.optim import lr_scheduler as L

TOL = dict(rtol=1e-12, atol=1e-15)  # the same float formulas as PyTorch's: equal up to rounding


def make_optimizer(cls=optim.SGD, lr=1.0, groups=1, **kwargs):
    params = [{"params": [minifw.ones(1, requires_grad=True)]} for _ in range(groups)]
    return cls(params, lr=lr, **kwargs)


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def trace(scheduler, optimizer, steps):
    """(lr, momentum) of every group at epochs 0 .. steps - 1."""
    values = []
    for i in range(steps):
        if i:
            optimizer.step()
            scheduler.step()
        values.append([(g["lr"], momentum_of(g) if ("betas" in g or "momentum" in g) else 0.0)
                       for g in optimizer.param_groups])
    return np.array(values)


# ---- closed forms, without PyTorch ------------------------------------------------------------
def cosine(base, eta_min, t, period):
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * t / period)) / 2


@pytest.mark.parametrize("make, expected", [
    pytest.param(lambda o: L.PolynomialLR(o, total_iters=4), [1, 0.75, 0.5, 0.25, 0, 0], id="Polynomial-linear"),
    pytest.param(lambda o: L.PolynomialLR(o, total_iters=4, power=2.0),
                 [1, 0.5625, 0.25, 0.0625, 0, 0], id="Polynomial-squared"),
    # 0.1 -> 1 over 2 steps, back over 2: 0.1, 0.55, 1, 0.55, 0.1, ...
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2, cycle_momentum=False),
                 [0.1, 0.55, 1, 0.55, 0.1, 0.55, 1], id="Cyclic-triangular"),
    # second cycle at half the amplitude
    pytest.param(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=2, mode="triangular2", cycle_momentum=False),
                 [0, 0.5, 1, 0.5, 0, 0.25, 0.5, 0.25, 0, 0.125], id="Cyclic-triangular2"),
    # up in 1 step, down in 3
    pytest.param(lambda o: L.CyclicLR(o, 0.0, 0.9, step_size_up=1, step_size_down=3, cycle_momentum=False),
                 [0, 0.9, 0.6, 0.3, 0, 0.9], id="Cyclic-asymmetric"),
    # the amplitude times gamma ** step
    pytest.param(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=2, mode="exp_range", gamma=0.5,
                                      cycle_momentum=False),
                 [0, 0.5 * 0.5, 0.25, 0.5 * 0.125, 0, 0.5 * 0.5 ** 5], id="Cyclic-exp_range"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.1),
                 [cosine(1, 0.1, t % 3, 3) for t in range(8)], id="WarmRestarts"),
    # periods 2, 4, 8: restarts at epochs 2 and 6
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
                 [cosine(1, 0, t, 2) for t in range(2)] + [cosine(1, 0, t, 4) for t in range(4)]
                 + [cosine(1, 0, t, 8) for t in range(3)], id="WarmRestarts-T_mult"),
])
def test_lr_sequence(make, expected):
    optimizer = make_optimizer()
    scheduler = make(optimizer)
    lrs = trace(scheduler, optimizer, len(expected))[:, 0, 0]
    np.testing.assert_allclose(lrs, expected, **TOL)
    assert scheduler.get_last_lr() == [optimizer.param_groups[0]["lr"]]


def test_cyclic_momentum_moves_against_the_lr():
    optimizer = make_optimizer(momentum=0.0)  # cycling sets the momentum, from max_momentum
    scheduler = L.CyclicLR(optimizer, 0.1, 1.0, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    np.testing.assert_allclose(trace(scheduler, optimizer, 5)[:, 0, 1], [0.9, 0.85, 0.8, 0.85, 0.9], **TOL)
    assert optimizer.param_groups[0]["max_momentum"] == 0.9
    assert optimizer.param_groups[0]["base_momentum"] == 0.8


def test_cyclic_cycles_adams_beta1_and_keeps_beta2():
    optimizer = make_optimizer(optim.Adam, betas=(0.5, 0.99))
    scheduler = L.CyclicLR(optimizer, 0.1, 1.0, step_size_up=1)
    assert optimizer.param_groups[0]["betas"] == (0.9, 0.99)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["betas"] == pytest.approx((0.8, 0.99))


def test_cyclic_custom_scale_fn_per_cycle_and_per_step():
    optimizer = make_optimizer()
    per_cycle = L.CyclicLR(optimizer, 0.0, 1.0, step_size_up=1, scale_fn=lambda c: 1 / c,
                           cycle_momentum=False)
    np.testing.assert_allclose(trace(per_cycle, optimizer, 6)[:, 0, 0], [0, 1, 0, 0.5, 0, 1 / 3], **TOL)
    optimizer = make_optimizer()
    per_step = L.CyclicLR(optimizer, 0.0, 1.0, step_size_up=1, scale_fn=lambda n: 0.5 ** n,
                          scale_mode="iterations", cycle_momentum=False)
    np.testing.assert_allclose(trace(per_step, optimizer, 4)[:, 0, 0], [0, 0.5, 0, 0.125], **TOL)


def test_cyclic_per_group_bounds():
    optimizer = make_optimizer(groups=2, momentum=0.9)
    scheduler = L.CyclicLR(optimizer, [0.1, 0.01], [1.0, 0.1], step_size_up=1,
                           base_momentum=[0.8, 0.5], max_momentum=0.9)
    values = trace(scheduler, optimizer, 3)
    np.testing.assert_allclose(values[:, 0], [[0.1, 0.9], [1.0, 0.8], [0.1, 0.9]], **TOL)
    np.testing.assert_allclose(values[:, 1], [[0.01, 0.9], [0.1, 0.5], [0.01, 0.9]], **TOL)


def test_warm_restarts_fractional_epochs():
    optimizer = make_optimizer()
    scheduler = L.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2, eta_min=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch documents this use: no deprecation warning
        for epoch, (t, period) in [(0.5, (0.5, 2)), (1.75, (1.75, 2)), (2.0, (0.0, 4)), (3.5, (1.5, 4)),
                                   (6.25, (0.25, 8)), (1.0, (1.0, 2))]:
            scheduler.step(epoch)
            assert optimizer.param_groups[0]["lr"] == pytest.approx(cosine(1, 0, t, period), abs=1e-15)
            assert scheduler.last_epoch == math.floor(epoch)
    scheduler.step()  # continues from epoch 1: epoch 2, a restart
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1.0)


def test_sequential_warm_up_then_polynomial_and_chained_with_restarts():
    optimizer = make_optimizer()
    warmup = L.LinearLR(optimizer, start_factor=0.5, total_iters=2)
    scheduler = L.SequentialLR(optimizer, [warmup, L.PolynomialLR(optimizer, total_iters=2)], milestones=[3])
    np.testing.assert_allclose(trace(scheduler, optimizer, 7)[:, 0, 0], [0.5, 0.75, 1, 1, 0.5, 0, 0], **TOL)

    optimizer = make_optimizer()
    scheduler = L.ChainedScheduler([L.CosineAnnealingWarmRestarts(optimizer, T_0=2),
                                    L.ExponentialLR(optimizer, gamma=0.5)])
    # warm restarts set the lr from base_lr, then the decay multiplies that step's value by 0.5
    np.testing.assert_allclose(trace(scheduler, optimizer, 4)[:, 0, 0], [1, 0.25, 0.5, 0.25], **TOL)


# ---- step by step against PyTorch -------------------------------------------------------------
def _cyclic(lib, o, **kw):
    return lib.CyclicLR(o, **kw)


class Halving:
    """A callable scale_fn object (its attributes go into state_dict)."""

    def __init__(self):
        self.rate = 0.5

    def __call__(self, x):
        return self.rate ** (x - 1)


SCHEDULES = {
    "Polynomial": (dict(), lambda lib, o: lib.PolynomialLR(o, total_iters=37, power=0.9)),
    "Polynomial-int-power": (dict(), lambda lib, o: lib.PolynomialLR(o, total_iters=20, power=3)),
    "Cyclic-triangular": (dict(momentum=0.9), lambda lib, o: lib.CyclicLR(o, 0.01, 0.1, step_size_up=7)),
    "Cyclic-triangular2": (dict(momentum=0.9), lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, step_size_up=5, step_size_down=9, mode="triangular2")),
    "Cyclic-exp_range": (dict(momentum=0.9), lambda lib, o: lib.CyclicLR(
        o, [0.01, 0.002], [0.1, 0.03], step_size_up=6, mode="exp_range", gamma=0.99,
        base_momentum=[0.85, 0.7], max_momentum=[0.95, 0.9])),
    "Cyclic-fractional-steps": (dict(momentum=0.9), lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, step_size_up=2.5, step_size_down=4.5, mode="triangular2")),
    "Cyclic-scale_fn-iterations": (dict(momentum=0.9), lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, scale_fn=lambda n: 1 / (1 + 0.1 * n), scale_mode="iterations")),
    "Cyclic-Adam": ("Adam", lambda lib, o: lib.CyclicLR(o, 1e-4, 1e-3, step_size_up=8)),
    "Cyclic-no-momentum": ("Adagrad", lambda lib, o: lib.CyclicLR(
        o, 1e-3, 1e-2, step_size_up=3, cycle_momentum=False)),
    "WarmRestarts": (dict(), lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=1e-3)),
    "WarmRestarts-T_mult": (dict(), lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
    "Sequential-poly-cyclic": (dict(momentum=0.9), lambda lib, o: lib.SequentialLR(o, [
        lib.PolynomialLR(o, total_iters=10, power=2.0),
        lib.CyclicLR(o, 0.01, 0.1, step_size_up=4)], milestones=[12])),
    "Sequential-linear-restarts": (dict(), lambda lib, o: lib.SequentialLR(o, [
        lib.LinearLR(o, start_factor=0.1, total_iters=5),
        lib.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01)], milestones=[5])),
    "Chained-poly-step": (dict(), lambda lib, o: lib.ChainedScheduler([
        lib.PolynomialLR(o, total_iters=30, power=0.5), lib.StepLR(o, step_size=7, gamma=0.5)])),
    "Chained-restarts-exp": (dict(), lambda lib, o: lib.ChainedScheduler([
        lib.CosineAnnealingWarmRestarts(o, T_0=5), lib.ExponentialLR(o, gamma=0.9)])),
}


def _optimizers(torch, spec):
    if spec == "Adam":
        return (optim.Adam([minifw.ones(1, requires_grad=True)], lr=1.0),
                torch.optim.Adam([torch.ones(1, requires_grad=True)], lr=1.0))
    if spec == "Adagrad":
        return (optim.Adagrad([minifw.ones(1, requires_grad=True)], lr=1.0),
                torch.optim.Adagrad([torch.ones(1, requires_grad=True)], lr=1.0))
    ours = optim.SGD([{"params": [minifw.ones(1, requires_grad=True)]},
                      {"params": [minifw.ones(1, requires_grad=True)], "lr": 0.5}], lr=1.0, **spec)
    theirs = torch.optim.SGD([{"params": [torch.ones(1, requires_grad=True)]},
                              {"params": [torch.ones(1, requires_grad=True)], "lr": 0.5}], lr=1.0, **spec)
    return ours, theirs


@pytest.mark.parametrize("name", SCHEDULES)
def test_matches_pytorch_step_by_step(name):
    torch = pytest.importorskip("torch")
    spec, make = SCHEDULES[name]
    ours, theirs = _optimizers(torch, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's own deprecation notices
        expected = trace(make(torch.optim.lr_scheduler, theirs), theirs, 60)
    np.testing.assert_allclose(trace(make(L, ours), ours, 60), expected, **TOL)


def test_warm_restarts_step_epoch_matches_pytorch():
    torch = pytest.importorskip("torch")
    epochs = [0.3, 1.7, 2.0, 2.99, 3.0, 8.5, 20.25, 4.0, None, None, 44.9, None, 0.0, None]
    for T_0, T_mult in [(3, 1), (3, 2), (2, 3)]:
        ours, theirs = _optimizers(torch, {})
        mine = L.CosineAnnealingWarmRestarts(ours, T_0=T_0, T_mult=T_mult, eta_min=0.05)
        ref = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs, T_0=T_0, T_mult=T_mult,
                                                                   eta_min=0.05)
        for epoch in epochs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref.step(epoch)
            mine.step(epoch)
            assert (mine.last_epoch, mine.T_i) == (ref.last_epoch, ref.T_i)
            np.testing.assert_allclose(mine.get_last_lr(), ref.get_last_lr(), **TOL)


def test_polynomial_step_epoch_uses_the_closed_form_as_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _optimizers(torch, {})
    mine = L.PolynomialLR(ours, total_iters=10, power=1.5)
    ref = torch.optim.lr_scheduler.PolynomialLR(theirs, total_iters=10, power=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [3, None, 12, 7, None]:
            mine.step(epoch)
            ref.step(epoch)
            np.testing.assert_allclose(mine.get_last_lr(), ref.get_last_lr(), **TOL)


@pytest.mark.parametrize("name", ["PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts"])
def test_signature_is_pytorchs(name):
    expected = {
        "PolynomialLR": "(optimizer, total_iters=5, power=1.0, last_epoch=-1)",
        "CyclicLR": "(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, "
                    "mode='triangular', gamma=1.0, scale_fn=None, scale_mode='cycle', "
                    "cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1)",
        "CosineAnnealingWarmRestarts": "(optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1)",
    }[name]
    assert str(inspect.signature(getattr(L, name))) == expected
    assert getattr(optim.lr_scheduler, name) is getattr(L, name)


# ---- state_dict through a checkpoint ----------------------------------------------------------
ROUND_TRIP = {
    "PolynomialLR": lambda o: L.PolynomialLR(o, total_iters=9, power=2.0),
    "CyclicLR": lambda o: L.CyclicLR(o, 0.01, 0.5, step_size_up=3, mode="triangular2"),
    "CyclicLR-exp_range": lambda o: L.CyclicLR(o, 0.01, 0.5, step_size_up=2, mode="exp_range", gamma=0.9),
    "CyclicLR-scale_fn-object": lambda o: L.CyclicLR(o, 0.01, 0.5, step_size_up=2, scale_fn=Halving()),
    "CosineAnnealingWarmRestarts": lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01),
}


def _advance(optimizer, scheduler):
    optimizer.step()
    scheduler.step()
    return optimizer.param_groups[0]["lr"], optimizer.param_groups[0]["momentum"]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_state_dict_round_trip_through_a_checkpoint_continues_identically(name, tmp_path):
    make = ROUND_TRIP[name]
    optimizer = optim.SGD([minifw.ones(1, requires_grad=True)], lr=0.5, momentum=0.9)
    scheduler = make(optimizer)
    for _ in range(4):
        at_save = _advance(optimizer, scheduler)
    minifw.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
                tmp_path / "checkpoint.npz")
    uninterrupted = [_advance(optimizer, scheduler) for _ in range(5)]

    resumed_optimizer = optim.SGD([minifw.ones(1, requires_grad=True)], lr=0.5, momentum=0.9)
    resumed = make(resumed_optimizer)
    checkpoint = minifw.load(tmp_path / "checkpoint.npz")
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    resumed.load_state_dict(checkpoint["scheduler"])
    assert [_advance(resumed_optimizer, resumed) for _ in range(5)] == uninterrupted
    assert len({at_save, *uninterrupted}) > 1


def test_cyclic_state_dict_keeps_a_scale_fn_objects_attributes_and_drops_a_function():
    optimizer = make_optimizer(momentum=0.9)
    fn = Halving()
    scheduler = L.CyclicLR(optimizer, 0.1, 1.0, step_size_up=2, scale_fn=fn)
    fn.rate = 0.25
    state = scheduler.state_dict()
    assert state["_scale_fn_custom"] == {"rate": 0.25}
    other = Halving()
    L.CyclicLR(make_optimizer(momentum=0.9), 0.1, 1.0, scale_fn=other).load_state_dict(state)
    assert other.rate == 0.25
    with_lambda = L.CyclicLR(optimizer, 0.1, 1.0, scale_fn=lambda c: 1.0)
    assert with_lambda.state_dict()["_scale_fn_custom"] is None


# ---- argument checks --------------------------------------------------------------------------
@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda o: L.PolynomialLR(o, total_iters=0), ValueError,
                 "PolynomialLR: total_iters must be >= 1, got 0", id="poly-total_iters"),
    pytest.param(lambda o: L.PolynomialLR(o, total_iters=2.5), ValueError,
                 "PolynomialLR: total_iters must be an integer, got float 2.5", id="poly-total_iters-float"),
    pytest.param(lambda o: L.PolynomialLR(o, power=-1), ValueError,
                 "PolynomialLR: power must be >= 0, got -1", id="poly-power"),
    pytest.param(lambda o: L.PolynomialLR(o, power="2"), ValueError,
                 "PolynomialLR: power must be a number, got str '2'", id="poly-power-str"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, mode="triangle"), ValueError,
                 "CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' .*got 'triangle'",
                 id="cyclic-mode"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=0), ValueError,
                 "CyclicLR: step_size_up must be > 0, got 0", id="cyclic-step_size_up"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_down=-2), ValueError,
                 "CyclicLR: step_size_down must be >= 0, got -2", id="cyclic-step_size_down"),
    pytest.param(lambda o: L.CyclicLR(o, [0.1, 0.2], 1.0), ValueError,
                 r"CyclicLR: base_lr must have one value per param group \(1\), got 2", id="cyclic-base_lr"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, [1.0, 2.0]), ValueError,
                 r"CyclicLR: max_lr must have one value per param group \(1\), got 2", id="cyclic-max_lr"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, scale_fn=abs, scale_mode="iteration"), ValueError,
                 "CyclicLR: scale_mode must be 'cycle' or 'iterations', got 'iteration'", id="cyclic-scale_mode"),
    pytest.param(lambda o: L.CyclicLR(o, 0.1, 1.0, scale_fn=0.5), TypeError,
                 "CyclicLR: scale_fn must be a function", id="cyclic-scale_fn"),
    pytest.param(lambda o: L.CyclicLR(optim.Adagrad([minifw.ones(1, requires_grad=True)]), 0.1, 1.0),
                 ValueError, "CyclicLR: cycle_momentum=True needs an optimizer with momentum or betas.*"
                 "Adagrad has neither", id="cyclic-momentum"),
    pytest.param(lambda o: L.CyclicLR("sgd", 0.1, 1.0), TypeError,
                 "CyclicLR: optimizer must be an Optimizer, got str", id="cyclic-optimizer"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
                 "CosineAnnealingWarmRestarts: T_0 must be >= 1, got 0", id="restarts-T_0"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2.0), ValueError,
                 "CosineAnnealingWarmRestarts: T_0 must be an integer, got float 2.0", id="restarts-T_0-float"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError,
                 "CosineAnnealingWarmRestarts: T_mult must be >= 1, got 0", id="restarts-T_mult"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError,
                 "CosineAnnealingWarmRestarts: eta_min must be a number, got str", id="restarts-eta_min"),
    pytest.param(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2).step(-1), ValueError,
                 r"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got -1", id="restarts-epoch"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make(make_optimizer(momentum=0.9))


def test_resuming_without_initial_lr_is_refused():
    with pytest.raises(KeyError, match="no 'initial_lr' to resume from"):
        L.PolynomialLR(make_optimizer(), last_epoch=3)
