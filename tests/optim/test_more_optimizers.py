"""NAdam, RAdam, Adamax, Rprop, ASGD and LBFGS: trajectories against PyTorch's optimizers (where
torch is installed) and against the update rules written out here in plain float64 NumPy,
state names and state_dict round trips (also of PyTorch's state dicts), parameter groups,
parameters without a gradient, hyper-parameter checks, and the GPU devices.

The element-wise optimizers run on a small problem whose gradient depends on the parameters,
g = A * (p - C) + 0.5 * sin(3 p), computed in NumPy from each framework's own parameters, so
that both frameworks see the same gradients without depending on autograd."""
import contextlib
import math

import numpy as np
import pytest

import minifw
from minifw import devices, nn, optim

# float64: the same operations in the same order (PyTorch's addcmul rounds scalar * a * b where
# minifw rounds scalar * (a * b)), so trajectories agree to a few ulps over 10 steps.
# float32: both frameworks round each operation to float32; a few ulps of difference per step
# compound over 10 steps.
TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-6)}
STEPS = 10

_rng = np.random.default_rng(7)
SHAPES = [(2, 3), (3,)]
START = [_rng.standard_normal(s) for s in SHAPES]
SCALE = [np.exp(_rng.uniform(-2, 2, s)) for s in SHAPES]  # curvatures from 0.14 to 7.4
CENTER = [_rng.standard_normal(s) for s in SHAPES]


def grad_at(i, p):
    """The problem's gradient for parameter i at p (a NumPy array), in p's dtype."""
    p64 = p.astype(np.float64)
    return (SCALE[i] * (p64 - CENTER[i]) + 0.5 * np.sin(3 * p64)).astype(p.dtype)


@contextlib.contextmanager
def torch_default_dtype(torch, dtype):
    """PyTorch keeps scalar state (NAdam's mu_product, ASGD's eta and mu) in its default dtype;
    minifw keeps it as a Python float, which is PyTorch's float64 default."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def trajectory(lib, name, kwargs, dtype, steps=STEPS, groups=None):
    """The parameters (NumPy arrays) after each step; lib is minifw or torch (the same calls)."""
    params = [lib.tensor(x.astype(dtype), requires_grad=True) for x in START]
    groups = [{"params": [p]} for p in params] if groups is None else [
        {**g, "params": [params[i] for i in g["params"]]} for g in groups]
    opt = getattr(lib.optim, name)(groups, **kwargs)
    history = []
    for _ in range(steps):
        for i, p in enumerate(params):
            p.grad = lib.tensor(grad_at(i, p.detach().numpy()))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt, params


CASES = [
    ("NAdam", {}),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.03, betas=(0.8, 0.95), eps=1e-3, momentum_decay=0.05, maximize=True)),
    ("RAdam", {}),  # rho_t passes 5 at step 6: both branches
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.03, betas=(0.8, 0.9), eps=1e-3, maximize=True)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("Adamax", dict(lr=0.03, betas=(0.8, 0.9), eps=1e-3, maximize=True)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.02, maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.6, t0=3, weight_decay=0.1)),  # averaging from step 4
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
]
CASE_IDS = [f"{name}-{'-'.join(sorted(kw)) or 'defaults'}" for name, kw in CASES]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kwargs", CASES, ids=CASE_IDS)
def test_trajectory_matches_pytorch(name, kwargs, dtype):
    torch = pytest.importorskip("torch")
    groups = [{"params": [0]}, {"params": [1], "lr": 0.5 * kwargs.get("lr", 0.01)}]
    ours, _, _ = trajectory(minifw, name, kwargs, dtype, groups=groups)
    with torch_default_dtype(torch, dtype):
        theirs, _, _ = trajectory(torch, name, kwargs, dtype, groups=groups)
    for step, (mine, ref) in enumerate(zip(ours, theirs), 1):
        for a, b in zip(mine, ref):
            assert a.dtype == np.dtype(dtype)
            np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=f"{name} step {step}")
    assert not np.allclose(ours[-1][0], START[0].astype(dtype)), "the parameters did not move"


# ---- the update rules written out in NumPy ----------------------------------------------------
def nadam_reference(p, i, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                    decoupled_weight_decay=False, maximize=False):
    (b1, b2), m, v, prod = betas, 0 * p, 0 * p, 1.0
    for t in range(1, 5):
        g = grad_at(i, p) * (-1 if maximize else 1)
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu_t = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        prod *= mu_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        v_hat = v / (1 - b2 ** t)
        p = p - lr * ((1 - mu_t) * g / (1 - prod) + mu_next * m / (1 - prod * mu_next)) / (np.sqrt(v_hat) + eps)
    return p


def radam_reference(p, i, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                    decoupled_weight_decay=False, maximize=False, steps=8):
    (b1, b2), m, v = betas, 0 * p, 0 * p
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, steps + 1):
        g = grad_at(i, p) * (-1 if maximize else 1)
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        m_hat = m / (1 - b1 ** t)
        rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho > 5:
            r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            p = p - lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
    return p


def adamax_reference(p, i, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    (b1, b2), m, u = betas, 0 * p, 0 * p
    for t in range(1, 5):
        g = grad_at(i, p) * (-1 if maximize else 1) + weight_decay * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
    return p


def rprop_reference(p, i, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    """Element by element, as Riedmiller & Braun's paper states it (without weight-backtracking)."""
    p, prev, size = p.copy(), np.zeros_like(p), np.full_like(p, lr)
    for _ in range(5):
        g = grad_at(i, p) * (-1 if maximize else 1)
        for k in np.ndindex(p.shape):
            if g[k] * prev[k] > 0:
                size[k] = min(size[k] * etas[1], step_sizes[1])
            elif g[k] * prev[k] < 0:
                size[k] = max(size[k] * etas[0], step_sizes[0])
                g[k] = 0
            p[k] -= np.sign(g[k]) * size[k]
            prev[k] = g[k]
    return p


def asgd_reference(p, i, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False):
    eta, mu, ax = lr, 1.0, 0 * p
    for t in range(1, 7):
        g = grad_at(i, p) * (-1 if maximize else 1) + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return p, ax


REFERENCES = {"NAdam": (nadam_reference, 4), "RAdam": (radam_reference, 8),
              "Adamax": (adamax_reference, 4), "Rprop": (rprop_reference, 5), "ASGD": (asgd_reference, 6)}


@pytest.mark.parametrize("name, kwargs", CASES, ids=CASE_IDS)
def test_steps_follow_the_update_rule(name, kwargs):
    reference, steps = REFERENCES[name]
    history, opt, params = trajectory(minifw, name, kwargs, "float64", steps=steps)
    for i, got in enumerate(history[-1]):
        expected = reference(START[i].copy(), i, **kwargs)
        if name == "ASGD":
            expected, average = expected
            np.testing.assert_allclose(opt.state[params[i]]["ax"], average, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=f"{name} parameter {i}")


def test_rprop_backs_off_on_a_sign_change_and_respects_the_step_size_bounds():
    # g = 1, 1, -1, -1, ...: the step grows by 1.2, then halves on the change and pauses one step
    p = minifw.tensor([0.0], dtype=minifw.float64, requires_grad=True)
    opt = optim.Rprop([p], lr=0.1, step_sizes=(0.07, 0.11))
    moves = []
    for g in [1, 1, -1, -1, -1]:
        before = p.item()
        p.grad = minifw.tensor([float(g)], dtype=minifw.float64)
        opt.step()
        moves.append(p.item() - before)
    # 0.1; 0.12 clipped to 0.11; the change: 0.055 clipped to 0.07 and no move; then sign(-1) x 0.07 (g
    # was forgotten, so no growth); then 0.084
    np.testing.assert_allclose(moves, [-0.1, -0.11, 0.0, 0.07, 0.084], rtol=1e-12, atol=1e-15)


# ---- state --------------------------------------------------------------------------------------
STATE_NAMES = {"NAdam": ["step", "mu_product", "exp_avg", "exp_avg_sq"],
               "RAdam": ["step", "exp_avg", "exp_avg_sq"], "Adamax": ["step", "exp_avg", "exp_inf"],
               "Rprop": ["step", "prev", "step_size"], "ASGD": ["step", "eta", "mu", "ax"]}
ELEMENTWISE = list(STATE_NAMES)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_state_names_and_group_keys_are_pytorchs(name):
    _, opt, params = trajectory(minifw, name, {}, "float32", steps=2)
    assert list(opt.state[params[0]]) == STATE_NAMES[name]
    assert opt.state[params[0]]["step"] == 2
    assert all(opt.state[params[0]][k].dtype == np.float32 for k in STATE_NAMES[name][1:]
               if devices.is_array(opt.state[params[0]][k]))
    torch = pytest.importorskip("torch")
    _, theirs, _ = trajectory(torch, name, {}, "float32", steps=2)
    assert list(theirs.state_dict()["state"][0]) == STATE_NAMES[name]
    assert set(opt.state_dict()["param_groups"][0]) == set(theirs.state_dict()["param_groups"][0])


def _continue(opt, params, steps=3):
    for _ in range(steps):
        for i, p in enumerate(params):
            p.grad = minifw.tensor(grad_at(i, p.detach().numpy()))
        opt.step()
    return [p.detach().numpy() for p in params]


@pytest.mark.parametrize("name, kwargs", [c for c in CASES if c[1]], ids=[i for c, i in zip(CASES, CASE_IDS) if c[1]])
def test_state_dict_round_trip_continues_alike(name, kwargs):
    _, opt, params = trajectory(minifw, name, kwargs, "float64", steps=3)
    saved = opt.state_dict()
    copies = [minifw.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    fresh = getattr(optim, name)([{"params": [c]} for c in copies], **kwargs)
    fresh.load_state_dict(saved)
    assert list(fresh.state[copies[0]]) == STATE_NAMES[name]
    expected = _continue(opt, params)
    for a, b in zip(_continue(fresh, copies), expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, kwargs", CASES[1::2], ids=CASE_IDS[1::2])
def test_a_pytorch_state_dict_loads_and_continues_as_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    with torch_default_dtype(torch, "float64"):
        _, theirs, their_params = trajectory(torch, name, kwargs, "float64", steps=3)
        saved = theirs.state_dict()
        converted = {"param_groups": saved["param_groups"],
                     "state": {i: {k: minifw.tensor(v.numpy()) if torch.is_tensor(v) else v
                                   for k, v in entry.items()} for i, entry in saved["state"].items()}}
        params = [minifw.tensor(p.detach().numpy().copy(), requires_grad=True) for p in their_params]
        ours = getattr(optim, name)([{"params": [p]} for p in params], **kwargs)
        ours.load_state_dict(converted)
        for _ in range(3):
            for i, p in enumerate(their_params):
                p.grad = torch.tensor(grad_at(i, p.detach().numpy()))
            theirs.step()
    for a, b in zip(_continue(ours, params), their_params):
        np.testing.assert_allclose(a, b.detach().numpy(), **TOL["float64"])


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_param_groups_keep_their_own_lr(name):
    together, _, _ = trajectory(minifw, name, {}, "float64", steps=4,
                                groups=[{"params": [0]}, {"params": [1], "lr": 0.1}])
    alone = [trajectory(minifw, name, {"lr": lr}, "float64", steps=4)[0][-1][i]
             for i, lr in enumerate([getattr(optim, name)([minifw.ones(1, requires_grad=True)]).defaults["lr"], 0.1])]
    for a, b in zip(together[-1], alone):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(together[-1][1], trajectory(minifw, name, {}, "float64", steps=4)[0][-1][1])


@pytest.mark.parametrize("name", ELEMENTWISE + ["LBFGS"])
def test_a_parameter_without_a_gradient_is_left_alone(name):
    moving = minifw.tensor(START[1].copy(), requires_grad=True)
    idle = minifw.tensor(START[0].copy(), requires_grad=True)
    opt = getattr(optim, name)([moving, idle])

    def closure():
        opt.zero_grad()
        moving.grad = minifw.tensor(grad_at(1, moving.detach().numpy()))
        return float(np.sum(moving.detach().numpy() ** 2))

    for _ in range(3):
        if name == "LBFGS":
            opt.step(closure)
        else:
            closure()
            opt.step()
    np.testing.assert_array_equal(idle.detach().numpy(), START[0])
    assert idle.grad is None and (name == "LBFGS" or idle not in opt.state)
    assert not np.array_equal(moving.detach().numpy(), START[1])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_dtypes_are_kept(dtype):
    for name in ELEMENTWISE:
        _, opt, params = trajectory(minifw, name, {}, dtype, steps=2)
        assert all(p.dtype == getattr(minifw, dtype) for p in params), name
        assert all(v.dtype == np.dtype(dtype) for v in opt.state[params[0]].values() if devices.is_array(v)), name


# ---- hyper-parameter checks ---------------------------------------------------------------------
BAD = [
    ("NAdam", dict(lr=-1e-3), r"NAdam: lr must be >= 0.0, got -0.001"),
    ("NAdam", dict(betas=(0.9, 1.0)), r"NAdam: betas\[1\] must be >= 0.0 and < 1.0, got 1.0"),
    ("NAdam", dict(momentum_decay=-0.1), r"NAdam: momentum_decay must be >= 0.0, got -0.1"),
    ("NAdam", dict(eps=float("nan")), r"NAdam: Invalid epsilon value: nan"),
    ("RAdam", dict(weight_decay=-1), r"RAdam: weight_decay must be >= 0.0, got -1"),
    ("RAdam", dict(betas=(-0.5, 0.9)), r"RAdam: betas\[0\] must be >= 0.0 and < 1.0, got -0.5"),
    ("Adamax", dict(eps=-1e-8), r"Adamax: eps must be >= 0.0, got -1e-08"),
    ("Adamax", dict(lr=float("inf")), r"Adamax: Invalid learning rate: inf"),
    ("Rprop", dict(etas=(1.5, 1.2)), r"Rprop: etas must be \(etaminus, etaplus\) with 0 < etaminus < 1 < "
                                     r"etaplus, got \(1.5, 1.2\)"),
    ("Rprop", dict(etas=(0.5, 0.9)), r"Rprop: .*Invalid eta values: 0.5, 0.9"),
    ("Rprop", dict(etas=0.5), r"Rprop: etas must be a pair \(etaminus, etaplus\), got 0.5"),
    ("Rprop", dict(step_sizes=(1.0, 0.1)), r"Rprop: step_sizes must be \(min, max\) with 0 <= min <= max, "
                                           r"got \(1.0, 0.1\)"),
    ("Rprop", dict(step_sizes=(-1e-6, 50)), r"Rprop: step_sizes .* got \(-1e-06, 50\)"),
    ("ASGD", dict(lambd=-1e-4), r"ASGD: lambd must be >= 0.0, got -0.0001"),
    ("ASGD", dict(t0=float("nan")), r"ASGD: Invalid t0 value: nan"),
    ("ASGD", dict(alpha=-0.75), r"ASGD: alpha must be >= 0.0, got -0.75"),
    ("LBFGS", dict(lr=-1), r"LBFGS: lr must be >= 0.0, got -1"),
    ("LBFGS", dict(max_iter=0), r"LBFGS: max_iter must be a whole number >= 1, got 0"),
    ("LBFGS", dict(max_eval=2.5), r"LBFGS: max_eval must be a whole number >= 1, got 2.5"),
    ("LBFGS", dict(history_size=0), r"LBFGS: history_size must be a whole number >= 1, got 0"),
    ("LBFGS", dict(tolerance_grad=-1), r"LBFGS: tolerance_grad must be >= 0.0, got -1"),
    ("LBFGS", dict(line_search_fn="armijo"), r"LBFGS: line_search_fn must be None or 'strong_wolfe', "
                                             r"got 'armijo'"),
]


@pytest.mark.parametrize("name, kwargs, message", BAD, ids=[f"{n}-{next(iter(k))}-{i}" for i, (n, k, _) in enumerate(BAD)])
def test_bad_hyperparameters_name_the_optimizer_argument_and_value(name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)([minifw.ones(2, requires_grad=True)], **kwargs)


@pytest.mark.parametrize("name, kwargs, message", [b for b in BAD if b[0] != "LBFGS"][::2],
                         ids=[f"{b[0]}-{next(iter(b[1]))}" for b in BAD if b[0] != "LBFGS"][::2])
def test_bad_hyperparameters_of_an_added_group_are_refused(name, kwargs, message):
    opt = getattr(optim, name)([minifw.ones(2, requires_grad=True)])
    with pytest.raises(ValueError, match=message):
        opt.add_param_group({"params": [minifw.ones(2, requires_grad=True)], **kwargs})
    assert len(opt.param_groups) == 1


def test_implementation_switches_as_the_other_optimizers():
    p = [minifw.ones(2, requires_grad=True)]
    optim.NAdam(p, foreach=False, capturable=False, differentiable=False)
    optim.ASGD(p, foreach=None, capturable=False)
    with pytest.raises(ValueError, match=r"RAdam: capturable=True asks for"):
        optim.RAdam(p, capturable=True)
    with pytest.raises(ValueError, match=r"Rprop: foreach=True asks for"):
        optim.Rprop(p, foreach=True)


def test_lbfgs_takes_one_group_and_needs_a_closure():
    a, b = minifw.ones(2, requires_grad=True), minifw.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(TypeError, match=r"LBFGS.step needs a closure"):
        optim.LBFGS([a]).step(None)


# ---- LBFGS ----------------------------------------------------------------------------------------
ROSENBROCK_START = np.array([-1.5, 2.0])


def rosenbrock(x, y):
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


def lbfgs_iterates(lib, dtype, kwargs, steps):
    """The Rosenbrock function of two parameters x and y (two parameters, so the flat vector
    spans both), minimized from (-1.5, 2): (x, y) after each step(closure), and the state."""
    x = lib.tensor(ROSENBROCK_START[:1].astype(dtype), requires_grad=True)
    y = lib.tensor(ROSENBROCK_START[1:].astype(dtype), requires_grad=True)
    opt = lib.optim.LBFGS([x, y], **kwargs)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x, y).sum()
        loss.backward()
        return loss

    iterates = []
    for _ in range(steps):
        opt.step(closure)
        iterates.append(np.concatenate([x.detach().numpy(), y.detach().numpy()]))
    return np.array(iterates), opt


LBFGS_CASES = [
    pytest.param(dict(lr=0.1, max_iter=5), id="fixed-step"),
    pytest.param(dict(lr=1, max_iter=5, history_size=3), id="fixed-step-short-history"),
    pytest.param(dict(line_search_fn="strong_wolfe", max_iter=5), id="strong_wolfe"),
    pytest.param(dict(line_search_fn="strong_wolfe", max_iter=8, history_size=2, max_eval=12),
                 id="strong_wolfe-few-evals"),
    # t = lr = 10 overshoots: the zoom's bisection guard ("insufficient progress") and swaps
    pytest.param(dict(line_search_fn="strong_wolfe", lr=10, max_iter=5), id="strong_wolfe-overshoot"),
    # t = lr = 0.01 is short: extrapolation, until the evaluations run out
    pytest.param(dict(line_search_fn="strong_wolfe", lr=0.01, max_iter=5), id="strong_wolfe-short"),
]


@pytest.mark.parametrize("kwargs", LBFGS_CASES)
def test_lbfgs_on_rosenbrock_matches_pytorchs_iterates(kwargs):
    torch = pytest.importorskip("torch")
    ours, opt = lbfgs_iterates(minifw, "float64", kwargs, steps=6)
    theirs, ref = lbfgs_iterates(torch, "float64", kwargs, steps=6)
    # the two autograds round Rosenbrock's gradient in other orders; its ill-conditioning (and
    # the line search's divisions) magnify those last digits to about 1e-9
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)
    state, their_state = opt.state[opt._params[0]], ref.state[ref._params[0]]
    assert (state["func_evals"], state["n_iter"]) == (their_state["func_evals"], their_state["n_iter"])
    assert list(opt.state_dict()["state"][0]) == list(ref.state_dict()["state"][0])
    # float32: PyTorch keeps the scalars (y.s, the step length) as float32 tensors, minifw as
    # Python floats; the iterates part in the last digits and the line search may then choose
    # slightly other points
    ours32, _ = lbfgs_iterates(minifw, "float32", kwargs, steps=2)
    theirs32, _ = lbfgs_iterates(torch, "float32", kwargs, steps=2)
    np.testing.assert_allclose(ours32, theirs32, rtol=1e-3, atol=1e-4)


def test_lbfgs_with_strong_wolfe_finds_rosenbrocks_minimum():
    iterates, opt = lbfgs_iterates(minifw, "float64", dict(line_search_fn="strong_wolfe"), steps=3)
    np.testing.assert_allclose(iterates[-1], [1.0, 1.0], atol=1e-5)


def test_lbfgs_fixed_steps_follow_the_two_loop_recursion():
    """Three iterations of lr-scaled L-BFGS on a quadratic f = x.Ax / 2 - b.x, written out."""
    rng = np.random.default_rng(1)
    m = rng.standard_normal((4, 4))
    A, b = m @ m.T + 4 * np.eye(4), rng.standard_normal(4)
    x0 = rng.standard_normal(4)
    lr = 0.5

    x, g = x0.copy(), A @ x0 - b
    pairs = []  # (s, y)
    for k in range(3):
        if k == 0:
            d, t = -g, min(1.0, 1.0 / np.abs(g).sum()) * lr
        else:
            q, alphas = -g, []
            for s, y in reversed(pairs):
                alphas.append(s @ q / (y @ s))
                q = q - alphas[-1] * y
            s_new, y_new = pairs[-1]
            d = q * (y_new @ s_new) / (y_new @ y_new)
            for (s, y), a in zip(pairs, reversed(alphas)):
                d = d + (a - y @ d / (y @ s)) * s
            t = lr
        x_new = x + t * d
        g_new = A @ x_new - b
        pairs.append((x_new - x, g_new - g))
        x, g = x_new, g_new

    p = minifw.tensor(x0.copy(), requires_grad=True)
    opt = optim.LBFGS([p], lr=lr, max_iter=3, max_eval=10)  # the default max_eval, 3, stops after 2
    Am, bm = minifw.tensor(A), minifw.tensor(b)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (p * (Am @ p)).sum() - (bm * p).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12, atol=1e-14)
    assert opt.state[p]["n_iter"] == 3 and opt.state[p]["func_evals"] == 3  # the last loss is not needed


def test_lbfgs_state_dict_round_trip_continues_alike():
    kwargs = dict(line_search_fn="strong_wolfe", max_iter=3, history_size=4)
    _, opt = lbfgs_iterates(minifw, "float64", kwargs, steps=2)
    x, y = opt._params
    x2 = minifw.tensor(x.detach().numpy().copy(), requires_grad=True)
    y2 = minifw.tensor(y.detach().numpy().copy(), requires_grad=True)
    fresh = optim.LBFGS([x2, y2], **kwargs)
    saved = opt.state_dict()
    assert isinstance(saved["state"][0]["d"], minifw.Tensor)
    assert all(isinstance(v, minifw.Tensor) for v in saved["state"][0]["old_dirs"])
    fresh.load_state_dict(saved)
    for o, a, b in ((opt, x, y), (fresh, x2, y2)):
        def closure(o=o, a=a, b=b):
            o.zero_grad()
            loss = rosenbrock(a, b).sum()
            loss.backward()
            return loss
        o.step(closure)
    np.testing.assert_array_equal(x2.detach().numpy(), x.detach().numpy())
    np.testing.assert_array_equal(y2.detach().numpy(), y.detach().numpy())


# ---- GPU devices --------------------------------------------------------------------------------
DEVICE_CASES = {"NAdam": dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
                "RAdam": dict(lr=0.05, weight_decay=0.1), "Adamax": dict(lr=0.05, maximize=True),
                "Rprop": dict(lr=0.05), "ASGD": dict(lr=0.05, t0=2, weight_decay=0.1)}


@pytest.mark.parametrize("name", DEVICE_CASES)
def test_steps_on_the_device_equal_the_cpus(dev, name):
    results = {}
    for device in ("cpu", dev):
        params = [nn.Parameter(minifw.tensor(x.astype(np.float32)).to(device)) for x in START]
        opt = getattr(optim, name)(params, **DEVICE_CASES[name])
        for _ in range(STEPS):
            for i, p in enumerate(params):
                p.grad = minifw.tensor(grad_at(i, p.detach().cpu().numpy())).to(device)
            opt.step()
        assert all(devices.of(v) == device for v in opt.state[params[0]].values() if devices.is_array(v))
        results[str(device)] = [p.detach().cpu().numpy() for p in params]
    for a, b in zip(results[str(dev)], results["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_lbfgs_on_the_device_equals_the_cpu(dev):
    results = []
    for device in ("cpu", dev):
        x = nn.Parameter(minifw.tensor(ROSENBROCK_START[:1]).to(device))
        y = nn.Parameter(minifw.tensor(ROSENBROCK_START[1:]).to(device))
        opt = optim.LBFGS([x, y], line_search_fn="strong_wolfe", max_iter=6)

        def closure():
            opt.zero_grad()
            loss = rosenbrock(x, y).sum()
            loss.backward()
            return loss

        opt.step(closure)
        assert devices.of(opt.state[x]["d"]) == device
        results.append(np.concatenate([x.detach().cpu().numpy(), y.detach().cpu().numpy()]))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
