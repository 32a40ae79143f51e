"""An lr given as a one-element Tensor, as PyTorch 2 takes it: every optimizer steps with its
value exactly as with that value given as a number, the group keeps the Tensor itself (so a
change made to it in place is seen by the next step), bad Tensors are refused naming the lr,
and the schedulers write each new lr into the Tensor in place while what they keep and
return are copies of it."""
import math
import warnings

import numpy as np
import pytest

import minifw
from minifw import optim
from minifw.optim import lr_scheduler as L
from minifw.optim import swa_utils

OPTIMIZERS = ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam",
              "RMSprop", "Rprop", "LBFGS", "Adafactor", "Muon"]
INIT = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)


def run(fw, name, lr, steps=3):
    p = fw.nn.Parameter(fw.tensor(INIT.copy()))
    opt = getattr(fw.optim, name)([p], lr=lr)

    def closure():
        opt.zero_grad()
        loss = (p ** 2).sum() + p.sum()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return p.detach().numpy().copy(), opt


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_tensor_lr_steps_as_its_value(name):
    lr = minifw.tensor(0.01)
    with_tensor, opt = run(minifw, name, lr)
    with_number, _ = run(minifw, name, lr.item())  # the float32 value 0.01 rounds to
    assert opt.param_groups[0]["lr"] is lr
    assert not np.array_equal(with_tensor, INIT)
    np.testing.assert_array_equal(with_tensor, with_number)


@pytest.mark.parametrize("name", [n for n in OPTIMIZERS if n != "Muon"])  # Muon: bfloat16 there
def test_tensor_lr_against_torch(name):
    torch = pytest.importorskip("torch")
    ours, _ = run(minifw, name, minifw.tensor(0.01))
    theirs, _ = run(torch, name, torch.tensor(0.01))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_tensor_lr_of_shape_1_and_integer_dtype():
    p = minifw.nn.Parameter(minifw.ones(2))
    opt = optim.SGD([p], lr=minifw.tensor([0.5]))
    p.grad = minifw.ones(2)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), [0.5, 0.5])
    opt = optim.SGD([p], lr=minifw.tensor(1))
    p.grad = minifw.ones(2)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), [-0.5, -0.5])


def test_tensor_changed_in_place_is_seen_by_the_next_step():
    p = minifw.nn.Parameter(minifw.ones(3))
    lr = minifw.tensor(0.5)
    opt = optim.Adam([p], lr=lr)
    p.grad = minifw.ones(3)
    opt.step()
    after_one = p.detach().numpy().copy()
    lr.fill_(0.0)
    p.grad = minifw.ones(3)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), after_one)


@pytest.mark.parametrize("bad, error, words", [
    (minifw.tensor([0.1, 0.2]), ValueError, "shape (2,)"),
    (minifw.tensor(-0.1), ValueError, "lr must be >= 0"),
    (minifw.tensor(float("nan")), ValueError, "nan"),
    (minifw.tensor(float("inf")), ValueError, "inf"),
    (minifw.tensor(True), TypeError, "bool Tensor"),
])
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "LBFGS"])
def test_bad_tensor_lr_refused(name, bad, error, words):
    with pytest.raises(error, match="lr") as info:
        getattr(optim, name)([minifw.nn.Parameter(minifw.zeros(2))], lr=bad)
    assert name in str(info.value) and words in str(info.value)


def test_bad_tensor_lr_refused_in_a_group_and_when_loading():
    p, q = minifw.nn.Parameter(minifw.zeros(2)), minifw.nn.Parameter(minifw.zeros(2))
    opt = optim.SGD([p], lr=minifw.tensor(0.1))
    with pytest.raises(ValueError, match="lr"):
        opt.add_param_group({"params": [q], "lr": minifw.tensor([1.0, 2.0])})
    state = opt.state_dict()
    state["param_groups"][0]["lr"] = minifw.tensor(-1.0)
    with pytest.raises(ValueError, match="lr"):
        optim.SGD([p], lr=0.1).load_state_dict(state)


def test_state_dict_round_trip_and_shared_default():
    p = minifw.nn.Parameter(minifw.zeros(2))
    lr = minifw.tensor(0.25)
    opt = optim.SGD([p], lr=lr)
    other = optim.SGD([p], lr=1.0)
    other.load_state_dict(opt.state_dict())
    loaded = other.param_groups[0]["lr"]
    assert isinstance(loaded, minifw.Tensor) and loaded is not lr and loaded.item() == lr.item()
    opt.add_param_group({"params": [minifw.nn.Parameter(minifw.zeros(1))]})
    assert opt.param_groups[1]["lr"] is lr  # a group without an lr takes the default, as PyTorch's


def _schedulers(L=L, swa_utils=swa_utils):
    """Constructors of each schedule, from the given lr_scheduler and swa_utils modules."""
    return {
        "StepLR": lambda o: L.StepLR(o, 2, 0.5),
        "MultiStepLR": lambda o: L.MultiStepLR(o, [1, 3], 0.5),
        "ExponentialLR": lambda o: L.ExponentialLR(o, 0.9),
        "CosineAnnealingLR": lambda o: L.CosineAnnealingLR(o, 4, 0.001),
        "LambdaLR": lambda o: L.LambdaLR(o, lambda e: 1 / (e + 1)),
        "MultiplicativeLR": lambda o: L.MultiplicativeLR(o, lambda e: 0.9),
        "ConstantLR": lambda o: L.ConstantLR(o, 0.5, 2),
        "LinearLR": lambda o: L.LinearLR(o, 0.25, 1.0, 3),
        "PolynomialLR": lambda o: L.PolynomialLR(o, 4, 2.0),
        "OneCycleLR": lambda o: L.OneCycleLR(o, 0.1, total_steps=10),
        "CyclicLR": lambda o: L.CyclicLR(o, 0.001, 0.1, step_size_up=2),
        "CosineAnnealingWarmRestarts": lambda o: L.CosineAnnealingWarmRestarts(o, 2, 2),
        "ReduceLROnPlateau": lambda o: L.ReduceLROnPlateau(o, patience=0),
        "SequentialLR": lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [2]),
        "ChainedScheduler": lambda o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)]),
        "SWALR": lambda o: swa_utils.SWALR(o, 0.05, anneal_epochs=3),
    }


def _lrs(fw, make, lr, steps=6):
    p = fw.nn.Parameter(fw.ones(2))
    opt = fw.optim.SGD([p], lr=lr, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = make(opt)
        seen = [opt.param_groups[0]["lr"]]
        lrs = [float(opt.param_groups[0]["lr"])]
        for _ in range(steps):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
            scheduler.step(1.0) if type(scheduler).__name__ == "ReduceLROnPlateau" else scheduler.step()
            seen.append(opt.param_groups[0]["lr"])
            last = scheduler.get_last_lr()[0]
            lrs.append(float(opt.param_groups[0]["lr"]))
            assert float(last) == lrs[-1]
    return lrs, seen, last, scheduler, opt


@pytest.mark.parametrize("name", list(_schedulers()))
def test_scheduler_updates_the_tensor_in_place(name):
    make = _schedulers()[name]
    lr = minifw.tensor(0.01)
    with_number, *_ = _lrs(minifw, make, lr.item())
    with_tensor, seen, last, scheduler, opt = _lrs(minifw, make, lr)
    assert all(s is lr for s in seen)  # never replaced
    assert lr.item() == with_tensor[-1]
    assert len(set(with_tensor)) > 1  # the schedule did change it
    np.testing.assert_allclose(with_tensor, with_number, rtol=1e-6)
    # what the scheduler hands out or keeps is a copy, never the optimizer's Tensor
    assert isinstance(last, minifw.Tensor) and last is not lr
    last.fill_(123.0)
    assert lr.item() != 123.0
    for base in getattr(scheduler, "base_lrs", []):
        assert base is not lr
    initial = opt.param_groups[0].get("initial_lr")
    assert initial is not lr


@pytest.mark.parametrize("name", list(_schedulers()))
def test_scheduler_with_tensor_lr_against_torch(name):
    torch = pytest.importorskip("torch")
    import torch.optim.lr_scheduler as TL
    import torch.optim.swa_utils as tswa

    ours, *_ = _lrs(minifw, _schedulers()[name], minifw.tensor(0.01))
    theirs, seen, last, *_ = _lrs(torch, _schedulers(TL, tswa)[name], torch.tensor(0.01))
    assert isinstance(last, torch.Tensor)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_cyclic_lr_copies_a_tensor_base_lr():
    p = minifw.nn.Parameter(minifw.ones(2))
    lr = minifw.tensor(0.5)
    opt = optim.SGD([p], lr=lr, momentum=0.9)
    base = minifw.tensor(0.1)
    scheduler = L.CyclicLR(opt, base, 1.0, step_size_up=2)
    assert opt.param_groups[0]["lr"] is lr and math.isclose(lr.item(), 0.1, rel_tol=1e-6)
    assert scheduler.base_lrs[0] is not base
    base.fill_(7.0)
    opt.step()
    scheduler.step()
    assert math.isclose(lr.item(), 0.1 + 0.9 / 2, rel_tol=1e-6)
