"""Every optimizer refuses NaN, infinite and out-of-range hyper-parameters when it is built, when a
group is added and when a state dict is loaded, with PyTorch's words ("Invalid learning rate:
nan"): a NaN lr or eps used to be accepted and a step turned every parameter into NaN (SGD failed
only at step(), naming the native sgd_step). Adam's betas must be a pair, and a loaded state's
step a whole number >= 0."""
import math

import numpy as np
import pytest

import minifw
from minifw import optim

NAN, INF = float("nan"), float("inf")

# (optimizer, hyper-parameter, PyTorch's words for it)
HYPERS = [
    (optim.SGD, "lr", "learning rate"), (optim.SGD, "momentum", "momentum value"),
    (optim.SGD, "dampening", "dampening value"), (optim.SGD, "weight_decay", "weight_decay value"),
    (optim.Adam, "lr", "learning rate"), (optim.Adam, "eps", "epsilon value"),
    (optim.Adam, "weight_decay", "weight_decay value"),
    (optim.AdamW, "lr", "learning rate"), (optim.AdamW, "eps", "epsilon value"),
    (optim.AdamW, "weight_decay", "weight_decay value"),
    (optim.RMSprop, "lr", "learning rate"), (optim.RMSprop, "alpha", "alpha value"),
    (optim.RMSprop, "eps", "epsilon value"), (optim.RMSprop, "weight_decay", "weight_decay value"),
    (optim.RMSprop, "momentum", "momentum value"),
    (optim.Adagrad, "lr", "learning rate"), (optim.Adagrad, "lr_decay", "lr_decay value"),
    (optim.Adagrad, "eps", "epsilon value"), (optim.Adagrad, "weight_decay", "weight_decay value"),
    (optim.Adagrad, "initial_accumulator_value", "initial_accumulator_value value"),
    (optim.Adadelta, "lr", "learning rate"), (optim.Adadelta, "rho", "rho value"),
    (optim.Adadelta, "eps", "epsilon value"), (optim.Adadelta, "weight_decay", "weight_decay value"),
]
IDS = [f"{cls.__name__}-{name}" for cls, name, _ in HYPERS]


def _params():
    p = minifw.ones(3, requires_grad=True)
    p.grad = minifw.ones(3)
    return [p]


def _make(cls, **kwargs):
    return cls(_params(), **({"lr": 0.1} if cls is optim.SGD and "lr" not in kwargs else {}), **kwargs)


@pytest.mark.parametrize("value", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("cls, name, words", HYPERS, ids=IDS)
def test_non_finite_hyperparameters_are_refused_at_construction(cls, name, words, value):
    with pytest.raises(ValueError, match=rf"^{cls.__name__}: Invalid {words}: {value} \({name} must be a "
                                         rf"finite number >= 0.0"):
        _make(cls, **{name: value})


@pytest.mark.parametrize("cls, name, words", HYPERS, ids=IDS)
def test_a_non_finite_value_in_an_added_group_is_refused(cls, name, words):
    opt = _make(cls)
    group = {"params": [minifw.ones(2, requires_grad=True)], name: NAN}
    with pytest.raises(ValueError, match=rf"{cls.__name__}: Invalid {words}: nan"):
        opt.add_param_group(group)
    assert len(opt.param_groups) == 1


@pytest.mark.parametrize("cls, name, words", HYPERS, ids=IDS)
def test_a_non_finite_value_in_a_loaded_state_dict_is_refused_before_anything_changes(cls, name, words):
    opt = _make(cls)
    opt.step()
    state = opt.state_dict()
    before = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    state["param_groups"][0][name] = INF
    with pytest.raises(ValueError, match=rf"{cls.__name__}.load_state_dict \(parameter group 0\): "
                                         rf"Invalid {words}: inf"):
        opt.load_state_dict(state)
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == before


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad, optim.Adadelta])
def test_an_int_beyond_float_is_refused_without_overflow(cls):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: Invalid learning rate: an int of \d+ bits"):
        _make(cls, lr=10 ** 400)


def test_out_of_range_values_still_say_the_range():
    with pytest.raises(ValueError, match=r"Adadelta: rho must be >= 0.0 and <= 1.0, got 1.5 "
                                         r"\(Invalid rho value: 1.5\)"):
        optim.Adadelta(_params(), rho=1.5)
    with pytest.raises(ValueError, match=r"SGD: lr must be >= 0.0, got -0.1 \(Invalid learning rate: -0.1\)"):
        optim.SGD(_params(), lr=-0.1)


def test_a_valid_optimizer_still_steps_to_finite_values():
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad, optim.Adadelta):
        opt = _make(cls)
        opt.step()
        assert np.isfinite(opt.param_groups[0]["params"][0].detach().numpy()).all(), cls.__name__


# ---- Adam's betas -------------------------------------------------------------------------------

@pytest.mark.parametrize("betas, error, message", [
    ((NAN, 0.9), ValueError, r"Adam: Invalid beta parameter at index 0: nan"),
    ((0.9, INF), ValueError, r"Adam: Invalid beta parameter at index 1: inf"),
    ((0.9, 1.0), ValueError, r"Adam: betas\[1\] must be >= 0.0 and < 1.0, got 1.0"),
    ((0.9,), ValueError, r"Adam: betas must be a tuple of two numbers \(beta1, beta2\), got 1 values: \(0.9,\)"),
    ((0.9, 0.99, 0.999), ValueError, r"Adam: betas must be a tuple of two numbers \(beta1, beta2\), got 3 values"),
    (0.9, TypeError, r"Adam: betas must be a tuple of two numbers \(beta1, beta2\), got float 0.9"),
    ("ab", TypeError, r"Adam: betas must be a tuple of two numbers \(beta1, beta2\), got str 'ab'"),
    (("0.9", 0.99), TypeError, r"Adam: betas\[0\] must be a real number, got str '0.9'"),
], ids=["nan", "inf", "one", "one-value", "three-values", "float", "str", "str-element"])
def test_betas_must_be_a_pair_of_numbers_in_0_1(betas, error, message):
    with pytest.raises(error, match=message):
        optim.Adam(_params(), betas=betas)


def test_betas_given_as_a_list_are_kept_as_a_tuple():
    assert optim.AdamW(_params(), betas=[0.8, 0.9]).param_groups[0]["betas"] == (0.8, 0.9)


def test_betas_of_an_added_group_are_checked():
    opt = optim.Adam(_params())
    with pytest.raises(ValueError, match=r"Adam: betas must be a tuple of two numbers"):
        opt.add_param_group({"params": [minifw.ones(2, requires_grad=True)], "betas": (0.9,)})


# ---- the loaded state's step ----------------------------------------------------------------------

@pytest.mark.parametrize("step", [-5, 2.5, NAN, INF, "3", True, minifw.tensor(-1.0), np.array([-2])],
                         ids=["negative", "fraction", "nan", "inf", "str", "bool", "tensor-negative", "array-negative"])
@pytest.mark.parametrize("cls", [optim.Adam, optim.RMSprop, optim.Adagrad, optim.Adadelta])
def test_a_loaded_step_must_be_a_whole_number_at_least_0(cls, step):
    opt = _make(cls)
    opt.step()
    state = opt.state_dict()
    state["state"][0]["step"] = step
    with pytest.raises(ValueError, match=rf"{cls.__name__}.load_state_dict: state entry 'step' of parameter 0 "
                                         rf"must be a whole number >= 0"):
        opt.load_state_dict(state)


@pytest.mark.parametrize("step", [3, 3.0, minifw.tensor(3.0), np.array(3)], ids=["int", "float", "tensor", "array"])
def test_a_valid_loaded_step_resumes_the_bias_correction(step):
    opt = optim.Adam(_params())
    for _ in range(3):
        opt.step()
    state = opt.state_dict()
    state["state"][0]["step"] = step
    opt.load_state_dict(state)
    assert opt.state[opt.param_groups[0]["params"][0]]["step"] == 3
    opt.step()
    assert math.isfinite(float(opt.param_groups[0]["params"][0].sum().item()))
