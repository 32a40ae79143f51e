"""Adafactor and Muon: trajectories against PyTorch's optimizers (where torch is installed) and
against the update rules written out here in plain float64 NumPy, state names and shapes,
state_dict round trips, signatures and argument checks."""
import inspect
import math

import numpy as np
import pytest

import minifw
from minifw import optim

STEPS = 6
# float32: both frameworks round each operation to float32; a few ulps per step compound
TOL32 = dict(rtol=2e-5, atol=2e-6)

_rng = np.random.default_rng(11)
SHAPES = [(5, 4), (3,), (2, 3, 4), (1,)]
START = [_rng.standard_normal(s) for s in SHAPES]
GRADS = [[_rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]


def trajectory(lib, cls, kwargs, dtype, shapes=range(len(SHAPES))):
    """The parameters (NumPy arrays) after each step; lib is minifw or torch."""
    params = [lib.tensor(START[i].astype(dtype), requires_grad=True) for i in shapes]
    opt = getattr(lib.optim, cls)(params, **kwargs)
    history = []
    for step in range(STEPS):
        for p, i in zip(params, shapes):
            p.grad = lib.tensor(GRADS[step][i].astype(dtype))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


# ---- Adafactor ------------------------------------------------------------------------------
def adafactor_reference(kwargs, shapes=range(len(SHAPES))):
    """Adafactor as PyTorch documents it, in float64 NumPy, one parameter at a time."""
    lr, decay = kwargs.get("lr", 1e-2), kwargs.get("beta2_decay", -0.8)
    eps1, eps2 = kwargs.get("eps", (None, 1e-3))
    eps1 = np.finfo(np.float64).eps if eps1 is None else eps1
    d, wd, sign = kwargs.get("d", 1.0), kwargs.get("weight_decay", 0.0), \
        -1.0 if kwargs.get("maximize") else 1.0
    params = [START[i].copy() for i in shapes]
    second = [None] * len(params)
    history = []
    for t in range(1, STEPS + 1):
        for k, i in enumerate(shapes):
            p, g = params[k], sign * GRADS[t - 1][i]
            beta = t ** decay
            alpha = max(eps2, np.sqrt(np.mean(p ** 2))) * min(lr, 1 / math.sqrt(t))
            p *= 1 - lr * wd
            if p.ndim > 1:
                if second[k] is None:
                    second[k] = [np.zeros(p.shape[:-1] + (1,)), np.zeros(p.shape[:-2] + (1, p.shape[-1]))]
                row, col = second[k]
                row[...] = (1 - beta) * row + beta * np.mean(g * g, axis=-1, keepdims=True)
                col[...] = (1 - beta) * col + beta * np.mean(g * g, axis=-2, keepdims=True)
                v = row * col / np.maximum(row.mean(axis=-2, keepdims=True), eps1)
            else:
                if second[k] is None:
                    second[k] = np.zeros(p.shape)
                second[k] = (1 - beta) * second[k] + beta * g * g
                v = second[k]
            u = g / np.sqrt(np.maximum(v, eps1 ** 2))
            p -= alpha / max(1.0, np.sqrt(np.mean(u * u)) / d) * u
        history.append([p.copy() for p in params])
    return history


ADAFACTOR_CASES = {
    "defaults": {},
    "weight_decay": dict(lr=0.05, weight_decay=0.1),
    "maximize_eps_d": dict(maximize=True, eps=(1e-4, 1e-3), d=2.0, beta2_decay=-0.5),
    "small_lr": dict(lr=1e-3, eps=(None, 1e-2)),
}


@pytest.mark.parametrize("case", ADAFACTOR_CASES)
def test_adafactor_matches_the_float64_reference(case):
    kwargs = ADAFACTOR_CASES[case]
    got, _ = trajectory(minifw, "Adafactor", kwargs, "float64")
    for step_got, step_want in zip(got, adafactor_reference(kwargs)):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ADAFACTOR_CASES)
def test_adafactor_matches_pytorch(case, dtype):
    torch = pytest.importorskip("torch")
    kwargs = ADAFACTOR_CASES[case]
    got, _ = trajectory(minifw, "Adafactor", kwargs, dtype)
    want, _ = trajectory(torch, "Adafactor", kwargs, dtype)
    tol = TOL32 if dtype == "float32" else dict(rtol=1e-11, atol=1e-13)
    for step_got, step_want in zip(got, want):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, **tol)


def test_adafactor_state_is_factored_for_matrices():
    _, opt = trajectory(minifw, "Adafactor", {}, "float32")
    params = opt.param_groups[0]["params"]
    assert set(opt.state[params[0]]) == {"step", "row_var", "col_var"}
    assert opt.state[params[0]]["row_var"].shape == (5, 1)
    assert opt.state[params[0]]["col_var"].shape == (1, 4)
    assert opt.state[params[2]]["row_var"].shape == (2, 3, 1)
    assert opt.state[params[2]]["col_var"].shape == (2, 1, 4)
    assert set(opt.state[params[1]]) == {"step", "variance"}
    assert opt.state[params[1]]["step"] == STEPS


def test_adafactor_state_dict_round_trip_continues_the_trajectory():
    kwargs = dict(lr=0.03, weight_decay=0.01)
    full, _ = trajectory(minifw, "Adafactor", kwargs, "float64")
    params = [minifw.tensor(START[i], requires_grad=True) for i in range(len(SHAPES))]
    first = optim.Adafactor(params, **kwargs)
    for step in range(3):
        for p, g in zip(params, GRADS[step]):
            p.grad = minifw.tensor(g)
        first.step()
    second = optim.Adafactor(params, lr=0.5)
    second.load_state_dict(first.state_dict())
    assert second.param_groups[0]["lr"] == 0.03 and second.param_groups[0]["eps"] == (None, 1e-3)
    for step in range(3, STEPS):
        for p, g in zip(params, GRADS[step]):
            p.grad = minifw.tensor(g)
        second.step()
    for p, want in zip(params, full[-1]):
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-13, atol=1e-15)


def test_adafactor_loads_pytorchs_state_dict():
    torch = pytest.importorskip("torch")
    kwargs = dict(lr=0.02)
    _, theirs = trajectory(torch, "Adafactor", kwargs, "float64")
    want, _ = trajectory(torch, "Adafactor", kwargs, "float64")  # the same, for the end point
    params = [minifw.tensor(p.detach().numpy(), requires_grad=True)
              for p in theirs.param_groups[0]["params"]]
    opt = optim.Adafactor(params, **kwargs)
    state = theirs.state_dict()
    opt.load_state_dict({"state": {k: {n: (minifw.tensor(v.numpy()) if hasattr(v, "numpy") else v)
                                       for n, v in s.items()} for k, s in state["state"].items()},
                         "param_groups": state["param_groups"]})
    assert opt.state[params[0]]["step"] == STEPS
    np.testing.assert_array_equal(opt.state[params[0]]["row_var"],
                                  theirs.state[theirs.param_groups[0]["params"][0]]["row_var"].numpy())


def test_adafactor_refuses_state_of_the_wrong_shape():
    p = minifw.zeros(4, 3, requires_grad=True)
    opt = optim.Adafactor([p])
    with pytest.raises(ValueError, match="row_var"):
        opt.load_state_dict({"state": {0: {"step": 1, "row_var": minifw.zeros(4, 3),
                                            "col_var": minifw.zeros(1, 3)}},
                             "param_groups": [dict(opt.param_groups[0], params=[0])]})


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(lr=-1.0), ValueError, "lr"),
    (dict(beta2_decay=0.5), ValueError, "beta2_decay"),
    (dict(eps=(-1.0, 1e-3)), ValueError, r"eps\[0\]"),
    (dict(eps=(None, -1e-3)), ValueError, r"eps\[1\]"),
    (dict(eps=1e-3), TypeError, "eps must be a tuple"),
    (dict(eps=(1e-3,)), ValueError, "two values"),
    (dict(d=0.5), ValueError, "d must be >= 1.0"),
    (dict(weight_decay=-0.1), ValueError, "weight_decay"),
    (dict(lr="0.1"), TypeError, "lr must be a real number"),
    (dict(foreach=True), ValueError, "foreach"),
])
def test_adafactor_argument_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        optim.Adafactor([minifw.zeros(2, requires_grad=True)], **kwargs)


def test_adafactor_without_gradient_is_untouched_and_zero_gradient_keeps_the_parameter():
    p, q = minifw.ones(3, 2, requires_grad=True), minifw.ones(2, requires_grad=True)
    opt = optim.Adafactor([p, q])
    p.grad = minifw.zeros(3, 2)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(q.detach().numpy(), np.ones(2))
    assert q not in opt.state


# ---- Muon -----------------------------------------------------------------------------------
def muon_reference(kwargs, shapes):
    """Muon as PyTorch documents it, Newton-Schulz in float64 NumPy."""
    lr, wd, mu = kwargs.get("lr", 1e-3), kwargs.get("weight_decay", 0.1), kwargs.get("momentum", 0.95)
    a, b, c = kwargs.get("ns_coefficients", (3.4445, -4.7750, 2.0315))
    steps, eps = kwargs.get("ns_steps", 5), kwargs.get("eps", 1e-7)
    params = [s.copy() for s in shapes]
    bufs = [np.zeros_like(p) for p in params]
    history = []
    for t in range(STEPS):
        for k, p in enumerate(params):
            g = MUON_GRADS[t][k]
            bufs[k] = mu * bufs[k] + (1 - mu) * g
            u = (1 - mu) * g + mu * bufs[k] if kwargs.get("nesterov", True) else bufs[k]
            x = u.T if u.shape[0] > u.shape[1] else u
            x = x / max(np.sqrt(np.sum(x * x)), eps)
            for _ in range(steps):
                gram = x @ x.T
                x = a * x + (b * gram + c * gram @ gram) @ x
            x = x.T if u.shape[0] > u.shape[1] else x
            rows, cols = p.shape
            if kwargs.get("adjust_lr_fn") == "match_rms_adamw":
                scaled = lr * 0.2 * math.sqrt(max(rows, cols))
            else:
                scaled = lr * math.sqrt(max(1, rows / cols))
            p *= 1 - lr * wd
            p -= scaled * x
        history.append([p.copy() for p in params])
    return history


MUON_START = [_rng.standard_normal((6, 3)), _rng.standard_normal((3, 5))]
MUON_GRADS = [[_rng.standard_normal(s.shape) for s in MUON_START] for _ in range(STEPS)]

MUON_CASES = {
    "defaults": {},
    "plain_momentum": dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.0),
    "match_rms_adamw": dict(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3),
    "coefficients": dict(lr=0.01, ns_coefficients=(2.0, -1.5, 0.5), ns_steps=8),
}


def muon_trajectory(lib, kwargs, dtype):
    params = [lib.tensor(s.astype(dtype), requires_grad=True) for s in MUON_START]
    opt = lib.optim.Muon(params, **kwargs)
    history = []
    for t in range(STEPS):
        for p, g in zip(params, MUON_GRADS[t]):
            p.grad = lib.tensor(g.astype(dtype))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


@pytest.mark.parametrize("case", MUON_CASES)
def test_muon_matches_the_float64_reference(case):
    kwargs = MUON_CASES[case]
    got, _ = muon_trajectory(minifw, kwargs, "float64")
    for step_got, step_want in zip(got, muon_reference(kwargs, MUON_START)):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", MUON_CASES)
def test_muon_matches_pytorch_to_bfloat16_rounding(case):
    """PyTorch orthogonalizes in bfloat16 (8 significant bits), minifw in the parameter's
    dtype: the paths agree to bfloat16's precision (rounding that five iterations amplify: up to
    5% here), relative to the distance the parameters have moved."""
    torch = pytest.importorskip("torch")
    kwargs = MUON_CASES[case]
    got, _ = muon_trajectory(minifw, kwargs, "float32")
    want, _ = muon_trajectory(torch, kwargs, "float32")
    before = [s.astype(np.float32) for s in MUON_START]
    for step_got, step_want in zip(got, want):
        for a, b, start in zip(step_got, step_want, before):
            moved = np.abs(b - start).max()
            assert np.abs(a - b).max() <= 0.1 * moved


def test_muon_orthogonalizes():
    """The Newton-Schulz result's singular values lie near 1 (the quintic's band) for a gradient
    whose singular values spread over a factor of about ten; its singular vectors are g's."""
    g = _rng.standard_normal((8, 5)) * np.array([3.0, 2.0, 1.0, 0.6, 0.4])
    x = optim.muon.zeropower_via_newtonschulz(g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    s = np.linalg.svd(x, compute_uv=False)
    assert x.shape == (8, 5) and s.min() > 0.5 and s.max() < 1.3
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    d = u.T @ x @ vt.T  # x = U f(S) V^T: diagonal in g's singular vectors
    assert np.abs(d - np.diag(np.diag(d))).max() < 1e-10


def test_muon_state_dict_round_trip():
    full, _ = muon_trajectory(minifw, {}, "float64")
    params = [minifw.tensor(s, requires_grad=True) for s in MUON_START]
    first = optim.Muon(params)
    for t in range(3):
        for p, g in zip(params, MUON_GRADS[t]):
            p.grad = minifw.tensor(g)
        first.step()
    second = optim.Muon(params, lr=1.0)
    second.load_state_dict(first.state_dict())
    assert set(second.state[params[0]]) == {"step", "momentum_buffer"}
    for t in range(3, STEPS):
        for p, g in zip(params, MUON_GRADS[t]):
            p.grad = minifw.tensor(g)
        second.step()
    for p, want in zip(params, full[-1]):
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(lr=-1.0), ValueError, "lr"),
    (dict(momentum=-0.5), ValueError, "momentum"),
    (dict(weight_decay=-0.1), ValueError, "weight_decay"),
    (dict(adjust_lr_fn="sqrt"), ValueError, "Adjust learning rate function"),
    (dict(ns_steps=100), ValueError, "less than 100"),
    (dict(ns_steps=2.5), ValueError, "ns_steps"),
    (dict(ns_coefficients=(1.0, 2.0)), ValueError, "exactly 3"),
])
def test_muon_argument_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        optim.Muon([minifw.zeros(2, 2, requires_grad=True)], **kwargs)


def test_muon_takes_only_matrices():
    with pytest.raises(ValueError, match=r"only supports 2D parameters.*\(3,\)"):
        optim.Muon([minifw.zeros(3, requires_grad=True)])


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_signatures_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    ours = inspect.signature(getattr(optim, name))
    theirs = inspect.signature(getattr(torch.optim, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.parameters.values()]
