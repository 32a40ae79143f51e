"""What a PyTorch training script expects of minifw.optim beyond the update rules: the
constructors' signatures, PyTorch's switches for other implementations (accepted where they
ask for nothing else, refused where they would be silently ignored), param groups that read
like PyTorch's, step(closure), zero_grad(set_to_none), and an everyday loop."""
import inspect

import numpy as np
import pytest

import minifw
from minifw import nn, optim
from minifw.nn import functional as F
from minifw.optim import lr_scheduler

# torch.optim's signatures, as inspect prints them
SIGNATURES = {
    optim.SGD: "(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, "
               "maximize=False, foreach=None, differentiable=False, fused=None)",
    optim.Adam: "(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=False, *, "
                "foreach=None, maximize=False, capturable=False, differentiable=False, fused=None, "
                "decoupled_weight_decay=False)",
    optim.AdamW: "(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01, amsgrad=False, *, "
                 "maximize=False, foreach=None, capturable=False, differentiable=False, fused=None)",
    optim.Adadelta: "(params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *, "
                    "capturable=False, maximize=False, differentiable=False)",
    optim.Adagrad: "(params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, "
                   "eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)",
    optim.RMSprop: "(params, lr=0.01, alpha=0.99, eps=1e-08, weight_decay=0, momentum=0, "
                   "centered=False, capturable=False, foreach=None, maximize=False, "
                   "differentiable=False)",
    lr_scheduler.LambdaLR: "(optimizer, lr_lambda, last_epoch=-1)",
    lr_scheduler.MultiplicativeLR: "(optimizer, lr_lambda, last_epoch=-1)",
    lr_scheduler.StepLR: "(optimizer, step_size, gamma=0.1, last_epoch=-1)",
    lr_scheduler.MultiStepLR: "(optimizer, milestones, gamma=0.1, last_epoch=-1)",
    lr_scheduler.ConstantLR: "(optimizer, factor=0.3333333333333333, total_iters=5, last_epoch=-1)",
    lr_scheduler.LinearLR: "(optimizer, start_factor=0.3333333333333333, end_factor=1.0, "
                           "total_iters=5, last_epoch=-1)",
    lr_scheduler.ExponentialLR: "(optimizer, gamma, last_epoch=-1)",
    lr_scheduler.CosineAnnealingLR: "(optimizer, T_max, eta_min=0.0, last_epoch=-1)",
    lr_scheduler.OneCycleLR: "(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, "
                             "pct_start=0.3, anneal_strategy='cos', cycle_momentum=True, "
                             "base_momentum=0.85, max_momentum=0.95, div_factor=25.0, "
                             "final_div_factor=10000.0, three_phase=False, last_epoch=-1)",
    lr_scheduler.ReduceLROnPlateau: "(optimizer, mode='min', factor=0.1, patience=10, threshold=0.0001, "
                                    "threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-08)",
    lr_scheduler.SequentialLR: "(optimizer, schedulers, milestones, last_epoch=-1)",
    lr_scheduler.ChainedScheduler: "(schedulers, optimizer=None)",
}


@pytest.mark.parametrize("cls", SIGNATURES, ids=lambda cls: cls.__name__)
def test_signature_is_pytorchs(cls):
    assert str(inspect.signature(cls)) == SIGNATURES[cls]


def test_step_signatures_are_pytorchs():
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.Adadelta, optim.Adagrad, optim.RMSprop):
        assert str(inspect.signature(cls.step)) == "(self, closure=None)", cls.__name__
    assert str(inspect.signature(lr_scheduler.StepLR.step)) == "(self, epoch=None)"
    assert str(inspect.signature(lr_scheduler.ReduceLROnPlateau.step)) == "(self, metrics, epoch=None)"


# ---- implementation switches ---------------------------------------------------------------
# (optimizer, the switches its PyTorch signature has)
SWITCHES = [
    (optim.SGD, ("foreach", "differentiable", "fused")),
    (optim.Adam, ("foreach", "capturable", "differentiable", "fused")),
    (optim.AdamW, ("foreach", "capturable", "differentiable", "fused")),
    (optim.Adadelta, ("foreach", "capturable", "differentiable")),
    (optim.Adagrad, ("foreach", "differentiable", "fused")),
    (optim.RMSprop, ("foreach", "capturable", "differentiable")),
]
DEFAULT = {"foreach": None, "fused": None, "capturable": False, "differentiable": False}
WHY = {"foreach": "one parameter at a time", "fused": "a fused kernel over all parameters",
       "capturable": "CUDA graph", "differentiable": "autograd through the optimizer step"}


@pytest.mark.parametrize("cls, switch", [(cls, s) for cls, switches in SWITCHES for s in switches],
                         ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_implementation_switches_are_accepted_off_and_refused_on(cls, switch):
    p = minifw.ones(1, requires_grad=True)
    for off in {DEFAULT[switch], False}:
        opt = cls([p], **{switch: off})
        assert opt.param_groups[0][switch] is off  # param groups read like PyTorch's
    with pytest.raises(ValueError, match=f"{cls.__name__}: {switch}=True asks for .*({WHY[switch]})"):
        cls([p], **{switch: True})
    with pytest.raises(ValueError, match=f"{switch}=True"):  # also in a param group of its own
        cls([{"params": [p], switch: True}])


def test_a_loaded_state_dict_cannot_switch_an_implementation_on():
    p = minifw.ones(1, requires_grad=True)
    state = optim.Adam([p]).state_dict()
    state["param_groups"][0]["fused"] = True
    with pytest.raises(ValueError, match="fused=True"):
        optim.Adam([p]).load_state_dict(state)


def test_adam_with_decoupled_weight_decay_is_adamw():
    def trajectory(make):
        p = minifw.tensor([1.0, -2.0], dtype=minifw.float64, requires_grad=True)
        opt = make([p])
        for g in ([1.0, 0.5], [-2.0, 0.25]):
            p.grad = minifw.tensor(g, dtype=minifw.float64)
            opt.step()
        return p.tolist()

    decoupled = trajectory(lambda ps: optim.Adam(ps, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True))
    assert decoupled == trajectory(lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.1))
    assert decoupled != trajectory(lambda ps: optim.Adam(ps, lr=0.1, weight_decay=0.1))


# ---- step(closure), zero_grad ----------------------------------------------------------------
OPTIMIZERS = [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: optim.Adam(ps, lr=0.1),
    lambda ps: optim.AdamW(ps, lr=0.1),
    lambda ps: optim.Adadelta(ps),
    lambda ps: optim.Adagrad(ps, lr=0.1),
    lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True),
]
NAMES = ["SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop"]


@pytest.mark.parametrize("make", OPTIMIZERS, ids=NAMES)
def test_step_with_a_closure_records_the_graph_and_returns_the_loss(make):
    p = minifw.tensor([1.0, -2.0], requires_grad=True)
    q = minifw.tensor([1.0, -2.0], requires_grad=True)
    opt, reference = make([p]), make([q])

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()  # step runs under no_grad; the closure must run with autograd on
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(5.0)
    q.grad = minifw.tensor([2.0, -4.0])
    assert reference.step() is None
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("make", OPTIMIZERS, ids=NAMES)
def test_zero_grad_sets_gradients_to_none_by_default_and_step_skips_them(make):
    p = minifw.ones(2, requires_grad=True)
    opt = make([p])
    (p * 3).sum().backward()
    opt.step()
    after_one_step = p.detach().numpy().copy()
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no gradient: nothing moves, no state grows
    np.testing.assert_array_equal(p.detach().numpy(), after_one_step)
    state_steps = {k: v for k, v in opt.state[p].items() if k == "step"}
    assert state_steps in ({}, {"step": 1})
    (p * 3).sum().backward()  # a fresh gradient, not added to the old one
    assert p.grad.tolist() == [3.0, 3.0]
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]


def test_an_everyday_training_loop_with_adadelta_and_steplr():
    """The shape of PyTorch's MNIST example: Adadelta(lr=1.0), StepLR(step_size=1, gamma=0.7),
    zero_grad / backward / step per batch, scheduler.step() per epoch."""
    gen = minifw.Generator().manual_seed(0)
    x = minifw.randn(64, 4, generator=gen)
    y = (x.numpy()[:, 0] > 0).astype(np.int64) + (x.numpy()[:, 1] > 0).astype(np.int64)
    y = minifw.tensor(y)
    minifw.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(4):
        for start in range(0, 64, 16):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[start:start + 16]), y[start:start + 16])
            loss.backward()
            optimizer.step()
        scheduler.step()
        with minifw.no_grad():
            losses.append(F.cross_entropy(model(x), y).item())
    assert scheduler.get_last_lr() == pytest.approx([0.7 ** 4])
    assert losses[-1] < losses[0] < np.log(3) + 0.5
