"""minifw.optim: SGD, Adam and AdamW against numbers worked out by hand from PyTorch's
documented update rules, parameter groups, state_dict round trips, and the lr schedules.

Each optimizer case starts from one float64 parameter p = 1 and feeds it a fixed
gradient per step, so every expected value can be checked on paper."""
import math

import numpy as np
import pytest

import minifw
from minifw import optim
from minifw.optim import lr_scheduler
from minifw.optim import sgd as sgd_module

# The expected values are exact decimals or rounded to 12 significant digits.
RTOL = 1e-10


def run_steps(make_optimizer, grads, p0=1.0):
    """The parameter after each step, when step i sees gradient grads[i]."""
    p = minifw.tensor(np.array([p0], dtype=np.float64), requires_grad=True)
    opt = make_optimizer([p])
    values = []
    for g in grads:
        p.grad = minifw.tensor(np.array([g], dtype=np.float64))
        opt.step()
        values.append(p.item())
    return values


SGD_CASES = [
    # p -= lr * g: 1 - 0.05, + 0.1, - 0.2
    pytest.param(dict(lr=0.1), [0.5, -1.0, 2.0], [0.95, 1.05, 0.85], id="plain"),
    # buf = g on the first step, then buf = 0.9 buf + g: 1, 1.9, 2.71
    pytest.param(dict(lr=0.1, momentum=0.9), [1, 1, 1], [0.9, 0.71, 0.439], id="momentum"),
    # buf = g first (no dampening then), then 0.9 buf + 0.5 g: 1, 1.4, 1.76
    pytest.param(dict(lr=0.1, momentum=0.9, dampening=0.5), [1, 1, 1], [0.9, 0.76, 0.584],
                 id="dampening"),
    # step along g + 0.9 buf with buf as above: 1.9, 2.71, 3.439
    pytest.param(dict(lr=0.1, momentum=0.9, nesterov=True), [1, 1, 1], [0.81, 0.539, 0.1951],
                 id="nesterov"),
    # g + 0.1 p: 1.1, 1.089, 1.07811
    pytest.param(dict(lr=0.1, weight_decay=0.1), [1, 1, 1], [0.89, 0.7811, 0.673289],
                 id="weight_decay"),
    # the decayed gradient feeds the momentum buffer: 1.1, then 0.9 * 1.1 + 1.089 = 2.079
    pytest.param(dict(lr=0.1, momentum=0.9, weight_decay=0.1), [1, 1], [0.89, 0.6821],
                 id="momentum+weight_decay"),
    # ascends: p += lr * g
    pytest.param(dict(lr=0.1, maximize=True), [1, 1], [1.1, 1.2], id="maximize"),
]


@pytest.mark.parametrize("kwargs, grads, expected", SGD_CASES)
def test_sgd_steps_match_hand_computed_values(kwargs, grads, expected):
    got = run_steps(lambda params: optim.SGD(params, **kwargs), grads)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


ADAM_CASES = [
    # Gradients 1, -2, 0.5, lr 0.1, betas (0.9, 0.999), eps 1e-8. Step 1: m = 0.1, v = 0.001,
    # m^ = 1, v^ = 1, p = 1 - 0.1 / (1 + 1e-8). Step 2: m = 0.09 - 0.2 = -0.11,
    # v = 0.000999 + 0.004 = 0.004999; m^ = -0.11 / 0.19, v^ = 0.004999 / 0.001999,
    # p = 0.9 + 0.1 * 0.578947 / 1.581379 = 0.936610.
    pytest.param(optim.Adam, dict(lr=0.1), [1.0, -2.0, 0.5],
                 [0.900000001, 0.936610353472, 0.950279419674], id="adam"),
    # L2 decay enters the gradient: step 1 sees g = 1 + 0.1 * 1 = 1.1 (still m^/sqrt(v^) = 1)
    pytest.param(optim.Adam, dict(lr=0.1, weight_decay=0.1), [1.0, -2.0, 0.5],
                 [0.900000000909, 0.931064294839, 0.937642154937], id="adam+weight_decay"),
    # decoupled: p *= 1 - 0.1 * 0.1 before each Adam step: 0.99 - 0.1 / (1 + 1e-8)
    pytest.param(optim.AdamW, dict(lr=0.1, weight_decay=0.1), [1.0, -2.0, 0.5],
                 [0.890000001, 0.917710353462, 0.922202316129], id="adamw"),
    # beta2 = 0.5 so v shrinks after the large first gradient: v = 4.5, 2.255, 1.1325;
    # amsgrad divides by sqrt(max v) = sqrt(4.5) (bias-corrected by 1 - 0.5^t) instead
    pytest.param(optim.Adam, dict(lr=0.1, betas=(0.9, 0.5), amsgrad=True), [3.0, 0.1, 0.1],
                 [0.900000000333, 0.839837094616, 0.797205677614], id="amsgrad"),
    pytest.param(optim.Adam, dict(lr=0.1, betas=(0.9, 0.5)), [3.0, 0.1, 0.1],
                 [0.900000000333, 0.815011182875, 0.730031145492], id="same-without-amsgrad"),
    pytest.param(optim.AdamW, dict(lr=0.1, betas=(0.9, 0.5), weight_decay=0, amsgrad=True),
                 [3.0, 0.1, 0.1], [0.900000000333, 0.839837094616, 0.797205677614],
                 id="adamw-amsgrad-no-decay"),
]


@pytest.mark.parametrize("cls, kwargs, grads, expected", ADAM_CASES)
def test_adam_steps_match_hand_computed_values(cls, kwargs, grads, expected):
    got = run_steps(lambda params: cls(params, **kwargs), grads)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_defaults_are_pytorchs():
    p = minifw.zeros(1, requires_grad=True)
    assert optim.SGD([p]).defaults == dict(
        lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False,
        foreach=None, differentiable=False, fused=None)
    adam = optim.Adam([p]).defaults
    assert (adam["lr"], adam["betas"], adam["eps"], adam["weight_decay"], adam["amsgrad"]) == \
        (1e-3, (0.9, 0.999), 1e-8, 0, False)
    assert optim.AdamW([p]).defaults["weight_decay"] == 1e-2
    assert optim.AdamW([p]).defaults["decoupled_weight_decay"] is True


def test_float32_parameters_stay_float32():
    p = minifw.ones(3, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    p.grad = minifw.ones(3)
    opt.step()
    assert p.dtype == minifw.float32 and opt.state[p]["exp_avg"].dtype == np.float32


def test_parameters_without_grad_are_skipped():
    a = minifw.ones(2, requires_grad=True)
    b = minifw.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = minifw.ones(2)
    opt.step()
    assert a.tolist() == [0.5, 0.5] and b.tolist() == [1.0, 1.0]
    assert b not in opt.state


@pytest.mark.parametrize("set_to_none", [True, False], ids=["set_to_none", "zero_fill"])
def test_zero_grad(set_to_none):
    p = minifw.ones(2, requires_grad=True)
    (p * 3).sum().backward()
    optim.SGD([p], lr=0.1).zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert p.grad is None
    else:
        assert p.grad.tolist() == [0.0, 0.0]


# ---- the fused step ----------------------------------------------------------------------
# SGD updates a parameter with one native pass (ops.sgd_step) when its arrays allow and
# with NumPy operations otherwise; both must follow the same trajectory. A spy on
# ops.sgd_step says which path each update took.
FUSED_CASES = {
    "plain": dict(lr=0.1),
    "momentum": dict(lr=0.1, momentum=0.9),
    "dampening+weight_decay": dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01),
    "nesterov+weight_decay": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "maximize+momentum": dict(lr=0.05, momentum=0.8, weight_decay=0.01, maximize=True),
}
# The two paths round alike on x86-64; elsewhere (or with dampening in float32, where
# 1 - dampening is rounded once in double, once in float32) they may differ by an ulp
# a step, p being of order 1.
TRAJECTORY_TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-14)}
STEPS = 5


@pytest.fixture
def fused_calls(monkeypatch):
    """The number of ops.sgd_step calls so far, in a list that grows with each."""
    calls = []
    real = minifw.ops.sgd_step

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(minifw.ops, "sgd_step", spy)
    return calls


def run_sgd(kwargs, dtype, steps=STEPS):
    """The parameters after each step and the optimizer, for three parameters (a matrix,
    a vector, a scalar) of `dtype`, on fixed random gradients."""
    rng = np.random.default_rng(1)
    params = [minifw.from_numpy(rng.standard_normal(s).astype(dtype)).requires_grad_()
              for s in ((37, 53), (53,), ())]
    opt = optim.SGD(params, **kwargs)
    history = []
    for _ in range(steps):
        for p in params:
            p.grad = minifw.from_numpy(rng.standard_normal(p.shape).astype(dtype))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def assert_same_trajectory(a, b, dtype):
    for step, (params_a, params_b) in enumerate(zip(a, b)):
        for i, (x, y) in enumerate(zip(params_a, params_b)):
            np.testing.assert_allclose(x, y, **TRAJECTORY_TOL[dtype], err_msg=f"step {step}, parameter {i}")


@pytest.mark.parametrize("kwargs", FUSED_CASES.values(), ids=FUSED_CASES.keys())
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_fused_sgd_follows_the_numpy_trajectory(monkeypatch, fused_calls, dtype, kwargs):
    fused, fused_opt = run_sgd(kwargs, dtype)
    assert len(fused_calls) == 3 * STEPS  # every update took the fused path
    monkeypatch.setattr(sgd_module, "_fused_step_applies", lambda p, g, buf: False)
    numpy_path, numpy_opt = run_sgd(kwargs, dtype)
    assert len(fused_calls) == 3 * STEPS  # and now none did
    assert_same_trajectory(fused, numpy_path, dtype)
    for p, q in zip(fused_opt.param_groups[0]["params"], numpy_opt.param_groups[0]["params"]):
        assert fused_opt.state.get(p, {}).keys() == numpy_opt.state.get(q, {}).keys()
        if "momentum_buffer" in fused_opt.state.get(p, {}):
            np.testing.assert_allclose(fused_opt.state[p]["momentum_buffer"], numpy_opt.state[q]["momentum_buffer"],
                                       **TRAJECTORY_TOL[dtype])


def test_fused_sgd_keeps_pytorchs_state_and_allocates_no_scratch(fused_calls):
    _, opt = run_sgd(dict(lr=0.1, momentum=0.9, weight_decay=0.01), np.float32, steps=2)
    assert len(fused_calls) == 6 and opt._scratch_buffers == {}
    for p in opt.param_groups[0]["params"]:
        buf = opt.state[p]["momentum_buffer"]
        assert list(opt.state[p]) == ["momentum_buffer"]
        assert buf.dtype == np.float32 and buf.shape == p.shape and buf.flags.c_contiguous
    saved = opt.state_dict()["state"]
    assert sorted(saved) == [0, 1, 2] and all(list(s) == ["momentum_buffer"] for s in saved.values())


@pytest.mark.parametrize("what", ["strided_parameter", "strided_grad"])
def test_sgd_takes_the_numpy_path_where_the_kernel_cannot(fused_calls, what):
    kwargs = dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    p = minifw.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4)).requires_grad_()
    if what == "strided_parameter":
        p = minifw.from_numpy(np.asfortranarray(p.detach().numpy())).requires_grad_()  # not C-contiguous
    opt = optim.SGD([p], **kwargs)
    for step in range(2):
        grad = np.full((3, 4), 0.5 + step, np.float32)
        p.grad = minifw.from_numpy({"strided_grad": np.asfortranarray(grad)}.get(what, grad))
        opt.step()
    assert not fused_calls
    q = minifw.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4)).requires_grad_()
    reference = optim.SGD([q], **kwargs)
    for step in range(2):
        q.grad = minifw.full((3, 4), 0.5 + step)
        reference.step()
    assert len(fused_calls) == 2  # the same on contiguous float32 arrays takes the fused path
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **TRAJECTORY_TOL[np.float32])


@pytest.mark.parametrize("kwargs", FUSED_CASES.values(), ids=FUSED_CASES.keys())
def test_sgd_step_does_not_write_the_gradient(kwargs):
    p = minifw.ones(4, 5, requires_grad=True)
    opt = optim.SGD([p], **kwargs)
    grad = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    p.grad = minifw.from_numpy(grad.copy())
    opt.step()
    opt.step()
    np.testing.assert_array_equal(p.grad.numpy(), grad)


# ---- parameter groups ------------------------------------------------------------------
def test_param_groups_have_their_own_hyperparameters_and_inherit_the_rest():
    a = minifw.ones(1, requires_grad=True)
    b = minifw.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in opt.param_groups] == [0.9, 0.9]
    a.grad, b.grad = minifw.ones(1), minifw.ones(1)
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)


def test_add_param_group():
    a = minifw.ones(1, requires_grad=True)
    b = minifw.ones(1, requires_grad=True)
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


# ---- state_dict ------------------------------------------------------------------------
OPTIMIZERS = [
    pytest.param(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True), id="sgd"),
    pytest.param(lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True), id="adam"),
    pytest.param(lambda ps: optim.AdamW(ps, lr=0.01), id="adamw"),
    pytest.param(lambda ps: optim.Adadelta(ps, lr=0.5, weight_decay=0.01), id="adadelta"),
    pytest.param(lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
                 id="adagrad"),
    pytest.param(lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True, weight_decay=0.01),
                 id="rmsprop"),
]


def _quadratic_step(params, opt):
    opt.zero_grad()
    sum((p * p * (i + 1)).sum() for i, p in enumerate(params)).backward()
    opt.step()


@pytest.mark.parametrize("make", OPTIMIZERS)
def test_state_dict_round_trip_through_a_checkpoint_continues_identically(make, tmp_path):
    def params():
        return [minifw.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True),
                minifw.tensor([0.25, -1.5, 2.0], requires_grad=True)]

    first = params()
    opt = make([{"params": first[:1]}, {"params": first[1:], "lr": 0.02}])
    for _ in range(3):
        _quadratic_step(first, opt)
    minifw.save(opt.state_dict(), tmp_path / "opt.npz")

    second = [minifw.tensor(p.detach().numpy().copy(), requires_grad=True) for p in first]
    resumed = make([{"params": second[:1]}, {"params": second[1:], "lr": 0.5}])
    resumed.load_state_dict(minifw.load(tmp_path / "opt.npz"))
    assert resumed.param_groups[1]["lr"] == 0.02  # hyper-parameters come from the state dict
    for _ in range(2):
        _quadratic_step(first, opt)
        _quadratic_step(second, resumed)
    for p, q in zip(first, second):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_state_dict_numbers_parameters_in_group_order():
    a, b, c = (minifw.ones(1, requires_grad=True) for _ in range(3))
    opt = optim.SGD([{"params": [a, b]}, {"params": [c]}], lr=0.1, momentum=0.9)
    c.grad = minifw.ones(1)
    opt.step()
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0, 1], [2]]
    assert list(state["state"]) == [2]
    assert state["state"][2]["momentum_buffer"].tolist() == [1.0]


def test_state_dict_is_a_copy():
    p = minifw.ones(1, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = minifw.ones(1)
    opt.step()
    saved = opt.state_dict()
    opt.step()
    assert saved["state"][0]["momentum_buffer"].tolist() == [1.0]


def test_load_state_dict_rejects_a_different_layout():
    a = minifw.ones(2, requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = minifw.ones(2)
    opt.step()
    state = opt.state_dict()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.SGD([{"params": [minifw.ones(2, requires_grad=True)]},
                   {"params": [minifw.ones(2, requires_grad=True)]}], lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match="has 1 parameters, the optimizer's has 2"):
        optim.SGD([minifw.ones(2, requires_grad=True), minifw.ones(2, requires_grad=True)],
                  lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match=r"shape \(2,\) for a parameter of shape \(3,\)"):
        optim.SGD([minifw.ones(3, requires_grad=True)], lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match="expected a dict with 'state' and 'param_groups'"):
        optim.SGD([a], lr=0.1).load_state_dict({"momentum_buffer": 1})


# ---- bad arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda p: optim.SGD(p, lr=-0.1), ValueError, "lr must be >= 0", id="negative-lr"),
    pytest.param(lambda p: optim.SGD(p, lr="0.1"), TypeError, "lr must be a real number", id="lr-str"),
    pytest.param(lambda p: optim.SGD(p, lr=0.1, momentum=-1), ValueError, "momentum", id="momentum"),
    pytest.param(lambda p: optim.SGD(p, lr=0.1, nesterov=True), ValueError,
                 "Nesterov momentum requires momentum > 0", id="nesterov-no-momentum"),
    pytest.param(lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
                 ValueError, "dampening = 0", id="nesterov-dampening"),
    pytest.param(lambda p: optim.Adam(p, betas=(1.0, 0.999)), ValueError, r"betas\[0\]",
                 id="beta1-one"),
    pytest.param(lambda p: optim.Adam(p, eps=-1e-8), ValueError, "eps", id="negative-eps"),
    pytest.param(lambda p: optim.AdamW(p, weight_decay=-0.1), ValueError, "weight_decay",
                 id="negative-weight-decay"),
    pytest.param(lambda p: optim.SGD(p[0], lr=0.1), TypeError, "single Tensor", id="bare-tensor"),
    pytest.param(lambda p: optim.SGD([], lr=0.1), ValueError, "empty parameter list", id="empty"),
    pytest.param(lambda p: optim.SGD([1.0], lr=0.1), TypeError, "only optimize Tensors", id="float"),
    pytest.param(lambda p: optim.SGD([p[0] * 2], lr=0.1), ValueError, "non-leaf", id="non-leaf"),
])
def test_bad_arguments_raise_clear_errors(make, error, message):
    with pytest.raises(error, match=message):
        make([minifw.ones(1, requires_grad=True)])


# ---- lr schedules ------------------------------------------------------------------------
def lr_sequence(make_scheduler, epochs, lr=1.0):
    """The lr of epochs 0, 1, ..., each after the schedule's step() at the end of the last."""
    opt = optim.SGD([minifw.ones(1, requires_grad=True)], lr=lr)
    scheduler = make_scheduler(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(epochs - 1):
        opt.step()
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
        assert scheduler.get_last_lr() == [lrs[-1]]
    return lrs


C1, C3 = (1 + math.cos(math.pi / 4)) / 2, (1 + math.cos(3 * math.pi / 4)) / 2  # 0.8536, 0.1464


@pytest.mark.parametrize("make, expected", [
    pytest.param(lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.1),
                 [1, 1, 0.1, 0.1, 0.01, 0.01], id="StepLR"),
    pytest.param(lambda o: lr_scheduler.MultiStepLR(o, milestones=[4, 2], gamma=0.1),
                 [1, 1, 0.1, 0.1, 0.01, 0.01], id="MultiStepLR"),
    pytest.param(lambda o: lr_scheduler.MultiStepLR(o, milestones=[1, 1], gamma=0.5),
                 [1, 0.25, 0.25], id="MultiStepLR-repeated-milestone"),
    pytest.param(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.5),
                 [1, 0.5, 0.25, 0.125], id="ExponentialLR"),
    pytest.param(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4),
                 [1, C1, 0.5, C3, 0, C3, 0.5], id="CosineAnnealingLR"),
    pytest.param(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=2, eta_min=0.5),
                 [1, 0.75, 0.5], id="CosineAnnealingLR-eta_min"),
])
def test_schedule_lr_sequence(make, expected):
    np.testing.assert_allclose(lr_sequence(make, len(expected)), expected, rtol=1e-12, atol=1e-15)


def test_schedule_scales_each_group_from_its_own_initial_lr():
    a, b = minifw.ones(1, requires_grad=True), minifw.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.2}], lr=1.0)
    scheduler = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    scheduler.step()
    assert scheduler.get_last_lr() == [0.5, 0.1]
    assert [g["initial_lr"] for g in opt.param_groups] == [1.0, 0.2]


def test_schedule_state_dict_resumes_the_sequence(tmp_path):
    opt = optim.SGD([minifw.ones(1, requires_grad=True)], lr=1.0)
    scheduler = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    for _ in range(3):
        scheduler.step()
    minifw.save({"opt": opt.state_dict(), "sched": scheduler.state_dict()}, tmp_path / "s.npz")

    checkpoint = minifw.load(tmp_path / "s.npz")
    opt2 = optim.SGD([minifw.ones(1, requires_grad=True)], lr=1.0)
    scheduler2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.1)
    opt2.load_state_dict(checkpoint["opt"])
    scheduler2.load_state_dict(checkpoint["sched"])
    scheduler.step()
    scheduler2.step()
    assert scheduler2.last_epoch == 4
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.01) == opt.param_groups[0]["lr"]


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda o: lr_scheduler.StepLR(o, step_size=0), ValueError, "step_size must be >= 1",
                 id="step_size"),
    pytest.param(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=0), ValueError, "T_max must be > 0",
                 id="T_max"),
    pytest.param(lambda o: lr_scheduler.ExponentialLR("sgd", gamma=0.5), TypeError,
                 "optimizer must be an Optimizer", id="not-an-optimizer"),
    pytest.param(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.5, last_epoch=3), KeyError,
                 "initial_lr", id="resume-without-initial_lr"),
])
def test_schedule_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make(optim.SGD([minifw.ones(1, requires_grad=True)], lr=1.0))


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps),
                                  lambda ps: optim.Adadelta(ps), lambda ps: optim.RMSprop(ps)],
                         ids=["sgd", "adam", "adadelta", "rmsprop"])
def test_backward_through_a_graph_that_saved_parameters_before_the_step_is_refused(make):
    # as PyTorch: the step changed w in place, so the old graph's saved w is stale
    w = minifw.nn.Parameter(minifw.ones(3))
    opt = make([w])
    (w * w).sum().backward()
    loss = (w * w).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
