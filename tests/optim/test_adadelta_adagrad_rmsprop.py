"""Adadelta, Adagrad and RMSprop against numbers worked out from the algorithms in PyTorch's
documentation, the names of their state, and how that state starts and grows.

As in test_optim.py, each case starts from one float64 parameter p = 1 and feeds it a fixed
gradient per step; the hyper-parameters are picked so that the square roots come out exact
where possible, and each case's comment works out its first step(s)."""
import math

import numpy as np
import pytest

import minifw
from minifw import optim
from test_optim import run_steps  # the same one-parameter stepping

RTOL = 1e-10  # the expected values are exact or rounded to 12 significant digits


ADADELTA_CASES = [
    # rho 0.5, eps 0.25, g = 2: v = 0.5 * 4 = 2, delta = sqrt(0 + 0.25) / sqrt(2 + 0.25) * 2 = 2/3,
    # u = 0.5 * 4/9 = 2/9, p = 1 - 2/3. Then g = 1: v = 1.5, delta = sqrt(17/36) / sqrt(7/4)
    # = sqrt(17) / (3 sqrt(7)) = 0.519462..., p = 1/3 - 0.519462...
    pytest.param(dict(rho=0.5, eps=0.25), [2, 1, -1], [1 / 3, -0.186129148316, 0.388925484469],
                 id="plain"),
    # PyTorch's defaults (lr 1, rho 0.9, eps 1e-6): v = 0.1, delta = 1e-3 / sqrt(0.100001)
    pytest.param(dict(), [1, 1, 1], [0.996837738151, 0.993593326377, 0.990292537653], id="defaults"),
    # g = 2 + 0.5 * 1 = 2.5: v = 3.125, delta = 0.5 / sqrt(3.375) * 2.5 = 0.680414, p -= 0.5 delta
    pytest.param(dict(lr=0.5, rho=0.5, eps=0.25, weight_decay=0.5), [2, 1, -1],
                 [0.65979309128, 0.378828049648, 0.597306976043], id="lr+weight_decay"),
    # maximize negates the gradient first: the plain case's trajectory from negated gradients
    pytest.param(dict(rho=0.5, eps=0.25, maximize=True), [-2, -1, 1],
                 [1 / 3, -0.186129148316, 0.388925484469], id="maximize"),
]


@pytest.mark.parametrize("kwargs, grads, expected", ADADELTA_CASES)
def test_adadelta_steps_match_hand_computed_values(kwargs, grads, expected):
    got = run_steps(lambda params: optim.Adadelta(params, **kwargs), grads)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


ADAGRAD_CASES = [
    # eps 0 for exact numbers: s = 9, p = 1 - 0.1 * 3/3; s = 25, p -= 0.1 * 4/5; g = 0 moves nothing
    pytest.param(dict(lr=0.1, eps=0), [3, 4, 0], [0.9, 0.82, 0.82], id="plain"),
    # eps 1e-10 (the default) joins sqrt(s): 0.1 * 3 / (3 + 1e-10)
    pytest.param(dict(lr=0.1), [3, 4, 0], [0.900000000003, 0.820000000005, 0.820000000005],
                 id="default-eps"),
    # step 2's lr is 0.1 / (1 + 1 * 1) = 0.05: p = 0.9 - 0.05 * 4/5
    pytest.param(dict(lr=0.1, eps=0, lr_decay=1), [3, 4], [0.9, 0.86], id="lr_decay"),
    # s starts at 16: s = 25, p = 1 - 0.1 * 3/5
    pytest.param(dict(lr=0.1, eps=0, initial_accumulator_value=16), [3], [0.94],
                 id="initial_accumulator_value"),
    # g = 2 + 1 * 1 = 3, then g = 3.1 + 1 * 0.9 = 4: the plain case's steps
    pytest.param(dict(lr=0.1, eps=0, weight_decay=1), [2, 3.1], [0.9, 0.82], id="weight_decay"),
    pytest.param(dict(lr=0.1, eps=0, maximize=True), [-3, -4], [0.9, 0.82], id="maximize"),
]


@pytest.mark.parametrize("kwargs, grads, expected", ADAGRAD_CASES)
def test_adagrad_steps_match_hand_computed_values(kwargs, grads, expected):
    got = run_steps(lambda params: optim.Adagrad(params, **kwargs), grads)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


RMSPROP_CASES = [
    # alpha 0.75, eps 0: v = 0.25 * 4 = 1, p = 1 - 0.1 * 2/1; v = 0.75 + 0.25 = 1, p -= 0.1 * 1/1
    pytest.param(dict(lr=0.1, alpha=0.75, eps=0), [2, 1, 1], [0.8, 0.7, 0.6], id="plain"),
    # PyTorch's defaults (lr 0.01, alpha 0.99, eps 1e-8): v = 0.01, p = 1 - 0.01 / (0.1 + 1e-8)
    pytest.param(dict(), [1, 1], [0.90000001, 0.829111894524], id="defaults"),
    # b starts at zero: b = 2/1, p = 0.8; b = 0.5 * 2 + 1/1 = 2, p = 0.6; again 2, p = 0.4
    pytest.param(dict(lr=0.1, alpha=0.75, eps=0, momentum=0.5), [2, 1, 1], [0.8, 0.6, 0.4],
                 id="momentum"),
    # v = 1, a = 0.25 * 2 = 0.5, avg = sqrt(1 - 0.25): p = 1 - 0.1 * 2 / sqrt(0.75)
    pytest.param(dict(lr=0.1, alpha=0.75, eps=0, centered=True), [2, 1, 1],
                 [1 - 0.2 / math.sqrt(0.75), 0.64095736928, 0.497128065288], id="centered"),
    # g = 1 + 1 * 1 = 2, then 0.2 + 1 * 0.8 = 1: the plain case's steps
    pytest.param(dict(lr=0.1, alpha=0.75, eps=0, weight_decay=1), [1, 0.2], [0.8, 0.7],
                 id="weight_decay"),
    pytest.param(dict(lr=0.1, alpha=0.75, eps=0, maximize=True), [-2, -1, -1], [0.8, 0.7, 0.6],
                 id="maximize"),
    # all at once: g = 2.1, v = 1.1025, a = 0.525, avg = sqrt(0.826875) + 1e-3, b = g / avg,
    # p = 1 - 0.1 b
    pytest.param(dict(lr=0.1, alpha=0.75, eps=1e-3, centered=True, momentum=0.5, weight_decay=0.1),
                 [2, 1, -1], [0.769313581592, 0.523269523056, 0.495187474992],
                 id="centered+momentum+weight_decay"),
]


@pytest.mark.parametrize("kwargs, grads, expected", RMSPROP_CASES)
def test_rmsprop_steps_match_hand_computed_values(kwargs, grads, expected):
    got = run_steps(lambda params: optim.RMSprop(params, **kwargs), grads)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_every_element_follows_the_algorithm():
    """A 2x3 parameter, each element its own scalar problem: the element-wise updates written
    out here in plain NumPy, straight from the algorithm boxes, for three steps."""
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal((2, 3))
    grads = [rng.standard_normal((2, 3)) for _ in range(3)]

    def adadelta(p, lr=0.7, rho=0.8, eps=1e-3, weight_decay=0.05):
        v, u = np.zeros_like(p), np.zeros_like(p)
        for g in grads:
            g = g + weight_decay * p
            v = v * rho + g ** 2 * (1 - rho)
            dx = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u = u * rho + dx ** 2 * (1 - rho)
            p = p - lr * dx
        return p

    def adagrad(p, lr=0.3, lr_decay=0.5, initial=0.2, eps=1e-4, weight_decay=0.05):
        s = np.full_like(p, initial)
        for t, g in enumerate(grads, 1):
            g = g + weight_decay * p
            s = s + g ** 2
            p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
        return p

    def rmsprop(p, lr=0.05, alpha=0.9, eps=1e-4, weight_decay=0.05, momentum=0.6):
        v, a, b = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
        for g in grads:
            g = -g + weight_decay * p  # maximize
            v = alpha * v + (1 - alpha) * g ** 2
            a = alpha * a + (1 - alpha) * g
            b = momentum * b + g / (np.sqrt(v - a ** 2) + eps)
            p = p - lr * b
        return p

    cases = [
        (lambda ps: optim.Adadelta(ps, lr=0.7, rho=0.8, eps=1e-3, weight_decay=0.05), adadelta(p0)),
        (lambda ps: optim.Adagrad(ps, lr=0.3, lr_decay=0.5, initial_accumulator_value=0.2, eps=1e-4,
                                  weight_decay=0.05), adagrad(p0)),
        (lambda ps: optim.RMSprop(ps, lr=0.05, alpha=0.9, eps=1e-4, weight_decay=0.05, momentum=0.6,
                                  centered=True, maximize=True), rmsprop(p0)),
    ]
    for make, expected in cases:
        p = minifw.tensor(p0.copy(), requires_grad=True)
        opt = make([p])
        for g in grads:
            p.grad = minifw.tensor(g)
            opt.step()
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, err_msg=type(opt).__name__)


# ---- state ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make, names", [
    pytest.param(lambda ps: optim.Adadelta(ps), ["step", "square_avg", "acc_delta"], id="Adadelta"),
    pytest.param(lambda ps: optim.Adagrad(ps), ["step", "sum"], id="Adagrad"),
    pytest.param(lambda ps: optim.RMSprop(ps), ["step", "square_avg"], id="RMSprop"),
    pytest.param(lambda ps: optim.RMSprop(ps, momentum=0.9), ["step", "square_avg", "momentum_buffer"],
                 id="RMSprop-momentum"),
    pytest.param(lambda ps: optim.RMSprop(ps, momentum=0.9, centered=True),
                 ["step", "square_avg", "momentum_buffer", "grad_avg"], id="RMSprop-centered"),
])
def test_state_has_pytorchs_names_shapes_and_dtype(make, names):
    p = minifw.ones(2, 3, requires_grad=True)
    opt = make([p])
    for _ in range(2):
        p.grad = minifw.ones(2, 3)
        opt.step()
    assert list(opt.state[p]) == names
    assert opt.state[p]["step"] == 2
    for name in names[1:]:
        buf = opt.state[p][name]
        assert buf.shape == (2, 3) and buf.dtype == np.float32, name
    saved = opt.state_dict()["state"][0]
    assert list(saved) == names and isinstance(saved["step"], int)
    assert all(isinstance(saved[name], minifw.Tensor) for name in names[1:])


def test_adagrad_state_exists_before_the_first_step_as_in_pytorch():
    a = minifw.ones(2, requires_grad=True)
    b = minifw.ones(3, requires_grad=True)
    opt = optim.Adagrad([a], initial_accumulator_value=0.5)
    opt.add_param_group({"params": [b], "initial_accumulator_value": 2.0})
    assert opt.state[a]["step"] == 0 and opt.state[a]["sum"].tolist() == [0.5, 0.5]
    assert opt.state[b]["sum"].tolist() == [2.0, 2.0, 2.0]
    assert sorted(opt.state_dict()["state"]) == [0, 1]
    b.grad = minifw.full((3,), 2.0)
    opt.step()  # a has no gradient: its state stays as it was
    assert opt.state[a]["step"] == 0 and opt.state[b]["step"] == 1
    assert opt.state[b]["sum"].tolist() == [6.0, 6.0, 6.0]


def test_rmsprop_momentum_switched_on_later_starts_its_buffer_at_zero():
    # OneCycleLR sets a group's momentum; the buffer then starts as if from the first step
    p = minifw.tensor([1.0], dtype=minifw.float64, requires_grad=True)
    opt = optim.RMSprop([p], lr=0.1, alpha=0.75, eps=0)
    p.grad = minifw.tensor([2.0], dtype=minifw.float64)
    opt.step()
    opt.param_groups[0]["momentum"] = 0.5
    p.grad = minifw.tensor([1.0], dtype=minifw.float64)
    opt.step()  # v = 1, b = 0.5 * 0 + 1/1
    assert p.item() == pytest.approx(0.7, rel=RTOL)
    assert opt.state[p]["momentum_buffer"].tolist() == [1.0]


def test_float32_parameters_stay_float32():
    for make in (optim.Adadelta, optim.Adagrad, lambda ps: optim.RMSprop(ps, momentum=0.9, centered=True)):
        p = minifw.ones(3, requires_grad=True)
        opt = make([p])
        p.grad = minifw.ones(3)
        opt.step()
        assert p.dtype == minifw.float32
        assert all(v.dtype == np.float32 for v in opt.state[p].values() if hasattr(v, "dtype"))


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda p: optim.Adadelta(p, rho=1.5), ValueError, r"rho must be >= 0.0 and <= 1.0, got 1.5",
                 id="adadelta-rho"),
    pytest.param(lambda p: optim.Adadelta(p, lr=-1), ValueError, "Adadelta: lr must be >= 0", id="adadelta-lr"),
    pytest.param(lambda p: optim.Adadelta(p, eps=-1e-6), ValueError, "eps", id="adadelta-eps"),
    pytest.param(lambda p: optim.Adagrad(p, lr_decay=-0.1), ValueError, "lr_decay must be >= 0",
                 id="adagrad-lr_decay"),
    pytest.param(lambda p: optim.Adagrad(p, initial_accumulator_value=-1), ValueError,
                 "initial_accumulator_value", id="adagrad-initial"),
    pytest.param(lambda p: optim.Adagrad(p, weight_decay="0"), TypeError, "weight_decay must be a real number",
                 id="adagrad-weight_decay-str"),
    pytest.param(lambda p: optim.RMSprop(p, alpha=-0.5), ValueError, "RMSprop: alpha must be >= 0",
                 id="rmsprop-alpha"),
    pytest.param(lambda p: optim.RMSprop(p, momentum=-0.9), ValueError, "momentum", id="rmsprop-momentum"),
])
def test_bad_hyperparameters_raise_clear_errors(make, error, message):
    with pytest.raises(error, match=message):
        make([minifw.ones(1, requires_grad=True)])
