"""minifw.func (torch.func): grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap and
functional_call. Every transform is checked in float64 against central differences of the
function (the transforms are compositions of autograd, so a wrong composition shows there),
against minifw.autograd, and against torch.func where torch is installed; nesting, results'
graphs, structured (dict/tuple) arguments and outputs, and argument errors."""
import warnings

import numpy as np
import pytest

import minifw
import minifw.func as func
from minifw import nn
from gradcheck import gradcheck

_rng = np.random.default_rng(3)
A = _rng.standard_normal((3, 4))
B = _rng.standard_normal(4)
EPS = 1e-6
TOL = dict(rtol=1e-7, atol=1e-9)  # central differences in float64 (see tests/gradcheck.py)


def t(x, requires_grad=False):
    return minifw.tensor(np.array(x, dtype=np.float64), requires_grad=requires_grad)


def scalar_f(lib):
    """A scalar function of two arguments with nonzero second and mixed derivatives."""
    def f(x, y):
        return (lib.sin(x) * y).sum() + (x ** 3).sum() * 0.1 + (y * y).sum() * x.sum()
    return f


def numeric_gradient(f, arrays, k):
    """Central differences of the scalar f(*arrays) with respect to arrays[k]."""
    base = [a.copy() for a in arrays]
    out = np.zeros_like(base[k])
    for idx in np.ndindex(base[k].shape):
        vals = []
        for sign in (1, -1):
            moved = [a.copy() for a in base]
            moved[k][idx] += sign * EPS
            vals.append(f(*moved))
        out[idx] = (vals[0] - vals[1]) / (2 * EPS)
    return out


def numeric_jacobian(f, arrays, k):
    """Central differences of the array-valued f(*arrays) w.r.t. arrays[k]: shape out + in."""
    out_shape = np.shape(f(*arrays))
    jac = np.zeros(out_shape + arrays[k].shape)
    for idx in np.ndindex(arrays[k].shape):
        moved_up = [a.copy() for a in arrays]
        moved_down = [a.copy() for a in arrays]
        moved_up[k][idx] += EPS
        moved_down[k][idx] -= EPS
        jac[(Ellipsis,) + idx] = (np.asarray(f(*moved_up)) - np.asarray(f(*moved_down))) / (2 * EPS)
    return jac


def as_numpy_fn(f):
    return lambda *arrays: f(*[t(a) for a in arrays]).numpy()


# ---- grad -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0)])
def test_grad_is_the_finite_difference_gradient(argnums):
    f = scalar_f(minifw)
    g = func.grad(f, argnums=argnums)(t(A), t(B))
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    got = g if isinstance(argnums, tuple) else (g,)
    for k, value in zip(positions, got):
        assert not value.requires_grad and value.grad_fn is None
        np.testing.assert_allclose(value.numpy(), numeric_gradient(as_numpy_fn(f), [A, B], k % 2),
                                   **TOL)


def test_grad_matches_autograd_and_torch():
    f = scalar_f(minifw)
    x, y = t(A, True), t(B, True)
    f(x, y).backward()
    gx, gy = func.grad(f, argnums=(0, 1))(t(A), t(B))
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gy.numpy(), y.grad.numpy(), rtol=1e-14)
    torch = pytest.importorskip("torch")
    want = torch.func.grad(scalar_f(torch), argnums=(0, 1))(torch.tensor(A), torch.tensor(B))
    np.testing.assert_allclose(gx.numpy(), want[0].numpy(), rtol=1e-13)
    np.testing.assert_allclose(gy.numpy(), want[1].numpy(), rtol=1e-13)


def test_grad_of_structured_arguments_has_their_structure():
    def f(params, x):
        return (params["w"] @ x + params["pair"][0]).tanh().sum() * params["pair"][1]
    params = {"w": t(A), "pair": (t(_rng.standard_normal(3)), t(2.0))}
    g = func.grad(f)(params, t(B))
    assert set(g) == {"w", "pair"} and isinstance(g["pair"], tuple)
    assert g["w"].shape == (3, 4) and g["pair"][0].shape == (3,) and g["pair"][1].shape == ()

    def f_w(w):
        return f({"w": t(w), "pair": params["pair"]}, t(B)).item()
    np.testing.assert_allclose(g["w"].numpy(), numeric_gradient(f_w, [A], 0), **TOL)


def test_grad_has_aux_kwargs_and_zeros_for_an_unused_argument():
    def f(x, y, scale=1.0):
        return (x * x).sum() * scale, {"mean": x.mean(), "y": y}
    g, aux = func.grad(f, argnums=(0, 1), has_aux=True)(t(A), t(B), scale=3.0)
    np.testing.assert_allclose(g[0].numpy(), 6 * A, rtol=1e-14)
    np.testing.assert_array_equal(g[1].numpy(), np.zeros(4))
    assert aux["mean"].item() == pytest.approx(A.mean()) and not aux["mean"].requires_grad
    (grads, (value, aux2)) = func.grad_and_value(f, has_aux=True)(t(A), t(B))
    assert value.item() == pytest.approx((A * A).sum()) and aux2["y"].shape == (4,)
    np.testing.assert_allclose(grads.numpy(), 2 * A, rtol=1e-14)


def test_grad_and_value_matches_torch():
    torch = pytest.importorskip("torch")
    g, v = func.grad_and_value(scalar_f(minifw), argnums=1)(t(A), t(B))
    tg, tv = torch.func.grad_and_value(scalar_f(torch), argnums=1)(torch.tensor(A), torch.tensor(B))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-13)
    assert v.item() == pytest.approx(tv.item(), rel=1e-14)


def test_grad_of_grad_is_the_second_derivative():
    def f(x):
        return (minifw.sin(x) * x * x).sum()

    # d/dx of sum(grad) = sum over j of the Hessian's row: numeric gradient of sum(grad f)
    gg = func.grad(lambda x: func.grad(f)(x).sum())(t(B))

    def sum_of_gradient(x):
        return func.grad(f)(t(x)).sum().item()
    np.testing.assert_allclose(gg.numpy(), numeric_gradient(sum_of_gradient, [B], 0), **TOL)
    np.testing.assert_allclose(gg.numpy(), 2 * np.sin(B) + 4 * B * np.cos(B) - B * B * np.sin(B),
                               rtol=1e-13)
    assert not gg.requires_grad


def test_grad_result_is_differentiable_from_outside():
    """As torch.func.grad composes with torch.autograd: an input that requires grad gives a
    gradient with a history back to it (checked by finite differences through the transform)."""
    gradcheck(lambda x: func.grad(lambda z: (z ** 3 * minifw.exp(z)).sum())(x),
              [t(B, True)])
    w = t(A, True)  # a captured tensor (a parameter, say) that requires grad
    gradcheck(lambda w: func.grad(lambda x: (w @ x).tanh().sum())(t(B)), [w])


def test_grad_results_keep_no_graph_when_nothing_outside_needs_one():
    x = t(B)
    g = func.grad(lambda z: (z * z).sum())(x)
    assert g.grad_fn is None and not g.requires_grad
    with minifw.no_grad():
        g2 = func.grad(lambda z: (z * z).sum())(t(B, True))
    assert g2.grad_fn is None and not g2.requires_grad
    np.testing.assert_allclose(g2.numpy(), 2 * B)


@pytest.mark.parametrize("call, error, words", [
    (lambda: func.grad(lambda x: x)(t(B)), RuntimeError, "scalar Tensor, got tensor with 1 dims"),
    (lambda: func.grad(lambda x: 1.0)(t(B)), RuntimeError, "to return a Tensor"),
    (lambda: func.grad(lambda x: x.sum(), argnums=2)(t(B)), RuntimeError, "argnum=2"),
    (lambda: func.grad(lambda x: x.sum(), argnums="a")(t(B)), RuntimeError, "argnums must be int"),
    (lambda: func.grad(lambda x: x.sum(), argnums=())(t(B)), RuntimeError, "non-empty"),
    (lambda: func.grad(lambda x, y: x.sum(), argnums=(0, -2))(t(B), t(B)), RuntimeError, "unique"),
    (lambda: func.grad(lambda x: x.sum(), has_aux=True)(t(B)), RuntimeError, r"\(output, aux\)"),
    (lambda: func.grad(lambda x: x.sum())(minifw.arange(3)), RuntimeError, "floating point"),
    (lambda: func.grad(lambda x: x.sum())([t(B), 3]), RuntimeError, "got int inside it"),
])
def test_grad_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ---- vjp and jvp ----------------------------------------------------------------------------
def vector_f(lib):
    def f(x, y):
        return lib.sin(x) @ y * y.sum(), (x * x).sum(0)
    return f


def test_vjp_matches_numeric_jacobians_and_can_be_called_twice():
    f = vector_f(minifw)
    (out0, out1), vjp_fn = func.vjp(f, t(A), t(B))
    u0, u1 = _rng.standard_normal(3), _rng.standard_normal(4)
    for _ in range(2):
        gx, gy = vjp_fn((t(u0), t(u1)))
        for k, g in enumerate((gx, gy)):
            j0 = numeric_jacobian(lambda *a: vector_f(np)(*a)[0], [A, B], k)
            j1 = numeric_jacobian(lambda *a: vector_f(np)(*a)[1], [A, B], k)
            want = np.tensordot(u0, j0, axes=1) + np.tensordot(u1, j1, axes=1)
            np.testing.assert_allclose(g.numpy(), want, **TOL)
    assert not out0.requires_grad


def test_vjp_and_jvp_match_torch():
    torch = pytest.importorskip("torch")
    u = (_rng.standard_normal(3), _rng.standard_normal(4))
    v = (_rng.standard_normal((3, 4)), _rng.standard_normal(4))
    out, vjp_fn = func.vjp(vector_f(minifw), t(A), t(B))
    tout, tvjp_fn = torch.func.vjp(vector_f(torch), torch.tensor(A), torch.tensor(B))
    for a, b in zip(vjp_fn(tuple(t(x) for x in u)), tvjp_fn(tuple(torch.tensor(x) for x in u))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)
    out, tangent = func.jvp(vector_f(minifw), (t(A), t(B)), tuple(t(x) for x in v))
    tout, ttangent = torch.func.jvp(vector_f(torch), (torch.tensor(A), torch.tensor(B)),
                                    tuple(torch.tensor(x) for x in v))
    for a, b in zip(out + tangent, tout + ttangent):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)


def test_jvp_is_the_directional_derivative():
    v = (_rng.standard_normal((3, 4)), _rng.standard_normal(4))
    _, (d0, d1) = func.jvp(vector_f(minifw), (t(A), t(B)), tuple(t(x) for x in v))
    for k, got in enumerate((d0, d1)):
        def along(s):
            return vector_f(np)(A + s * v[0], B + s * v[1])[k]
        np.testing.assert_allclose(got.numpy(), (along(EPS) - along(-EPS)) / (2 * EPS), **TOL)


def test_vjp_and_jvp_has_aux():
    out, vjp_fn, aux = func.vjp(lambda x: (x.exp(), x.sum()), t(B), has_aux=True)
    assert aux.item() == pytest.approx(B.sum())
    np.testing.assert_allclose(vjp_fn(t(np.ones(4)))[0].numpy(), np.exp(B))
    out, tangent, aux = func.jvp(lambda x: (x.exp(), {"n": 2}), (t(B),), (t(np.ones(4)),),
                                 has_aux=True)
    np.testing.assert_allclose(tangent.numpy(), np.exp(B), rtol=1e-14)
    assert aux == {"n": 2}


def test_vjp_gradients_are_differentiable_from_outside():
    def through_vjp(x):
        _, vjp_fn = func.vjp(lambda z: minifw.sin(z) * z, x)
        return vjp_fn(minifw.ones_like(x))[0]
    gradcheck(through_vjp, [t(B, True)])


@pytest.mark.parametrize("call, words", [
    (lambda: func.jvp(lambda x: x, t(B), (t(B),)), "Expected primals to be a tuple"),
    (lambda: func.jvp(lambda x: x, (t(B),), t(B)), "Expected tangents to be a tuple"),
    (lambda: func.jvp(lambda x: x, (t(B),), (t(A),)), "tangent 0"),
    (lambda: func.jvp(lambda x: x, (t(B),), (t(B), t(B))), "same python structure"),
    (lambda: func.vjp(lambda x: x, t(B))[1](t(A)), "Mismatch in shape"),
    (lambda: func.vjp(lambda x: (x, x), t(B))[1](t(B)), "pytree structure of cotangents"),
    (lambda: func.vjp(lambda x: 3, t(B)), "only Tensor outputs"),
])
def test_vjp_jvp_errors(call, words):
    with pytest.raises(RuntimeError, match=words):
        call()


# ---- jacobians and hessian ------------------------------------------------------------------
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_are_numeric_jacobians(transform):
    jac = getattr(func, transform)(vector_f(minifw), argnums=(0, 1))(t(A), t(B))
    assert isinstance(jac, tuple) and len(jac) == 2 and isinstance(jac[0], tuple)
    for i in range(2):
        for k in range(2):
            want = numeric_jacobian(lambda *a: vector_f(np)(*a)[i], [A, B], k)
            assert jac[i][k].shape == want.shape
            np.testing.assert_allclose(jac[i][k].numpy(), want, **TOL)
    single = getattr(func, transform)(lambda x: minifw.sin(x) * 2)(t(B))
    np.testing.assert_allclose(single.numpy(), np.diag(2 * np.cos(B)), rtol=1e-14)


def test_jacobians_and_hessian_match_torch_and_autograd():
    torch = pytest.importorskip("torch")
    for name in ("jacrev", "jacfwd", "hessian"):
        ours = getattr(func, name)(scalar_f(minifw) if name == "hessian" else vector_f(minifw),
                                   argnums=(0, 1))(t(A), t(B))
        theirs = getattr(torch.func, name)(scalar_f(torch) if name == "hessian" else vector_f(torch),
                                           argnums=(0, 1))(torch.tensor(A), torch.tensor(B))
        flat_ours = func._pytree.flatten(ours)[0]
        flat_theirs = torch.utils._pytree.tree_leaves(theirs)
        assert len(flat_ours) == len(flat_theirs)
        for a, b in zip(flat_ours, flat_theirs):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-14)
    h = func.hessian(scalar_f(minifw), argnums=(0, 1))(t(A), t(B))
    want = minifw.autograd.functional.hessian(scalar_f(minifw), (t(A), t(B)))
    for i in range(2):
        for k in range(2):
            np.testing.assert_allclose(h[i][k].numpy(), want[i][k].numpy(), rtol=1e-14)


def test_hessian_is_the_numeric_jacobian_of_the_gradient():
    f = scalar_f(minifw)
    h = func.hessian(f)(t(A), t(B))
    assert h.shape == (3, 4, 3, 4)

    def gradient(x):
        return func.grad(f)(t(x), t(B)).numpy()
    np.testing.assert_allclose(h.numpy(), numeric_jacobian(gradient, [A], 0), **TOL)


def test_jacrev_has_aux_and_structured_outputs():
    jac, aux = func.jacrev(lambda x: ({"a": x * 2, "b": x.sum()}, x.mean()), has_aux=True)(t(B))
    np.testing.assert_allclose(jac["a"].numpy(), 2 * np.eye(4))
    np.testing.assert_allclose(jac["b"].numpy(), np.ones(4))
    assert aux.item() == pytest.approx(B.mean())
    with pytest.raises(ValueError, match="chunk_size"):
        func.jacrev(lambda x: x, chunk_size=0)
    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(lambda x: x, randomness="sometimes")


# ---- vmap -----------------------------------------------------------------------------------
def test_vmap_is_the_stacked_loop():
    x, y = t(A), t(B)
    got = func.vmap(lambda r, v: (minifw.sin(r) * v).sum())(x, t(_rng.standard_normal((3, 4))))
    assert got.shape == (3,)
    cols = func.vmap(lambda c: c * c.sum(), in_dims=1, out_dims=1)(x)
    np.testing.assert_allclose(cols.numpy(), A * A.sum(axis=0), rtol=1e-14)
    outer = func.vmap(lambda r, v: r * v, in_dims=(0, None))(t(_rng.standard_normal(3)), y)
    assert outer.shape == (3, 4)
    nested = func.vmap(func.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(y, t(A[:, 0]))
    np.testing.assert_allclose(nested.numpy(), A[:, :1] * B, rtol=1e-14)
    pair = func.vmap(lambda r: {"s": r.sum(), "t": (r * 2, r.max())}, out_dims={"s": 0, "t": (1, 0)})(x)
    assert pair["s"].shape == (3,) and pair["t"][0].shape == (4, 3) and pair["t"][1].shape == (3,)
    kw = func.vmap(lambda r, scale=1.0: r * scale)(x, scale=2.0)
    np.testing.assert_allclose(kw.numpy(), 2 * A)
    neg = func.vmap(lambda r: r, in_dims=-1, out_dims=-1)(x)
    np.testing.assert_array_equal(neg.numpy(), A)
    constant = func.vmap(lambda r, c: (r.sum(), c), in_dims=(0, None), out_dims=(0, None))(x, t(B))
    np.testing.assert_array_equal(constant[1].numpy(), B)


def test_vmap_matches_torch():
    torch = pytest.importorskip("torch")
    C, D = _rng.standard_normal((2, 3, 4)), _rng.standard_normal(3)

    def f(lib):
        return lambda a, b: (lib.tanh(a) @ b, a.sum(0))
    ours = func.vmap(f(minifw), in_dims=(2, None), out_dims=(0, 1))(t(C), t(D))
    theirs = torch.func.vmap(f(torch), in_dims=(2, None), out_dims=(0, 1))(
        torch.tensor(C), torch.tensor(D))
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-14)


def test_per_example_gradients_with_vmap_of_grad():
    model = nn.Linear(4, 2).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    X, Y = t(_rng.standard_normal((5, 4))), t(_rng.standard_normal((5, 2)))

    def loss(p, x, y):
        return ((func.functional_call(model, p, (x,)) - y) ** 2).sum()
    per_example = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, X, Y)
    assert per_example["weight"].shape == (5, 2, 4) and per_example["bias"].shape == (5, 2)
    for i in range(5):
        model.zero_grad()
        ((model(X[i]) - Y[i]) ** 2).sum().backward()
        np.testing.assert_allclose(per_example["weight"][i].numpy(), model.weight.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(per_example["bias"][i].numpy(), model.bias.grad.numpy(), rtol=1e-13)
    torch = pytest.importorskip("torch")
    tmodel = torch.nn.Linear(4, 2).double()
    tparams = {k: torch.tensor(v.numpy()) for k, v in params.items()}

    def tloss(p, x, y):
        return ((torch.func.functional_call(tmodel, p, (x,)) - y) ** 2).sum()
    want = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(
        tparams, torch.tensor(X.numpy()), torch.tensor(Y.numpy()))
    for k in want:
        np.testing.assert_allclose(per_example[k].numpy(), want[k].numpy(), rtol=1e-13)


def test_gradients_flow_through_vmap():
    gradcheck(lambda x, w: func.vmap(lambda r: (r * w).tanh().sum(), in_dims=1)(x),
              [t(A, True), t(A[:, 0], True)])
    torch = pytest.importorskip("torch")
    x, tx = t(A, True), torch.tensor(A, requires_grad=True)
    (func.vmap(lambda r: minifw.exp(r).sum() ** 2)(x) * t([1.0, 2.0, 3.0])).sum().backward()
    weights = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    (torch.func.vmap(lambda r: torch.exp(r).sum() ** 2)(tx) * weights).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)


def test_vmap_randomness():
    x = t(np.zeros((4, 3)))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(lambda r: r + minifw.rand(3, dtype=minifw.float64))(x)
    minifw.manual_seed(5)
    same = func.vmap(lambda r: r + minifw.rand(3, dtype=minifw.float64), randomness="same")(x)
    assert all(np.array_equal(same[i].numpy(), same[0].numpy()) for i in range(4))
    minifw.manual_seed(5)
    np.testing.assert_array_equal(same[0].numpy(), minifw.rand(3, dtype=minifw.float64).numpy())
    different = func.vmap(lambda r: r + minifw.rand(3, dtype=minifw.float64), randomness="different")(x)
    assert not np.array_equal(different[0].numpy(), different[1].numpy())
    assert func.vmap(lambda r: r * 2, chunk_size=2)(x).shape == (4, 3)


def test_vmap_over_a_mapped_size_of_zero_returns_empty_stacks():
    """As PyTorch's: func's outputs' shapes (learned from one stand-in entry) with a batch of 0,
    still connected to the inputs; a random draw is refused in 'error' mode and draws nothing
    otherwise."""
    x = t(np.zeros((0, 3)), True)
    cases = [
        (lambda lib: lambda a: a * 2, {}, [x]),
        (lambda lib: lambda a: (a.sum(), a.unsqueeze(0)), dict(out_dims=(0, 1)), [x]),
        (lambda lib: lambda a, b: a @ b, dict(in_dims=(0, None)), [x, t(np.ones((3, 2)))]),
        (lambda lib: lambda a: a.long(), dict(in_dims=1, out_dims=-1),
         [minifw.zeros(3, 0, 2, dtype=minifw.int32)]),
    ]
    torch = pytest.importorskip("torch")
    for f, kwargs, args in cases:
        ours = func.vmap(f(minifw), **kwargs)(*args)
        theirs = torch.func.vmap(f(torch), **kwargs)(*[torch.tensor(a.detach().numpy()) for a in args])
        ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
        for a, b in zip(ours, theirs):
            assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    y = func.vmap(lambda a: a * 2)(x)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.shape == (0, 3)
    out, five = func.vmap(lambda a: (a * 2, 5), out_dims=(0, None))(x)
    assert out.shape == (0, 3) and five == 5
    np.testing.assert_array_equal(func.vmap(lambda a: minifw.ones(2), out_dims=None)(x).numpy(), [1, 1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(lambda r: r + minifw.rand(3, dtype=minifw.float64))(x)
    minifw.manual_seed(5)
    empty = func.vmap(lambda r: r + minifw.rand(3, dtype=minifw.float64), randomness="different")(x)
    assert empty.shape == (0, 3)
    first = minifw.rand(3).numpy()
    minifw.manual_seed(5)
    np.testing.assert_array_equal(first, minifw.rand(3).numpy())


@pytest.mark.parametrize("call, error, words", [
    (lambda: func.vmap(lambda a, b: a)(t(A), t(B)), ValueError, r"same size.*\[3, 4\]"),
    (lambda: func.vmap(lambda a: 1)(t(A)), ValueError, "must only return Tensors"),
    (lambda: func.vmap(lambda a: a, in_dims=(0, 1))(t(A)), ValueError, "in_dims is not compatible"),
    (lambda: func.vmap(lambda a: a, in_dims=None)(t(A)), ValueError, "expected `in_dims` to be int"),
    (lambda: func.vmap(lambda a: a, in_dims=2)(t(A)), ValueError, "in_dim=2"),
    (lambda: func.vmap(lambda a, n: a, in_dims=(0, 0))(t(A), 3), ValueError, "non-Tensor"),
    (lambda: func.vmap(lambda a: a, in_dims=(None,))(t(A)), ValueError, "at least one input"),
    (lambda: func.vmap(lambda a: a.sum(), out_dims=None)(t(A)), ValueError, "out_dim is None"),
    (lambda: func.vmap(lambda a: a, out_dims=3)(t(A)), IndexError, "Dimension out of range"),
    (lambda: func.vmap(lambda a: a, randomness="foo"), RuntimeError, "randomness"),
    (lambda: func.vmap(lambda a: a, chunk_size=0), ValueError, "chunk_size"),
])
def test_vmap_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ---- functional_call ------------------------------------------------------------------------
def test_functional_call_uses_the_given_tensors_and_restores_the_module():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).double().eval()
    before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    values = {"0.weight": t(_rng.standard_normal((3, 4))), "0.bias": t(np.zeros(3)),
              "1.running_mean": t(np.ones(3))}
    x = t(_rng.standard_normal((2, 4)))
    out = func.functional_call(model, values, x)
    bn = model[1]
    want = (x.numpy() @ values["0.weight"].numpy().T - 1) / np.sqrt(bn.running_var.numpy() + bn.eps) \
        * bn.weight.detach().numpy() + bn.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    assert isinstance(model[0].weight, nn.Parameter)
    with pytest.raises(ValueError):  # an error inside the call still restores the module
        func.functional_call(model, {"0.weight": t(np.zeros((3, 5)))}, (x,))
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.shape == (3, 4)


def test_functional_call_matches_torch_with_two_dicts_and_kwargs():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Linear(4, 2).double(), torch.nn.Linear(4, 2).double()
    w, b = _rng.standard_normal((2, 4)), _rng.standard_normal(2)
    x = _rng.standard_normal((3, 4))
    got = func.functional_call(ours, ({"weight": t(w)}, {"bias": t(b)}), args=(), kwargs={"input": t(x)})
    want = torch.func.functional_call(theirs, ({"weight": torch.tensor(w)}, {"bias": torch.tensor(b)}),
                                      args=(), kwargs={"input": torch.tensor(x)})
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-14)


def test_functional_call_tie_weights_and_strict():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied().double()
    w = t(2 * np.eye(2))
    out = func.functional_call(m, {"a.weight": w}, (t(np.ones(2)),))
    np.testing.assert_allclose(out.numpy(), [4.0, 4.0])
    out = func.functional_call(m, {"a.weight": w}, (t(np.ones(2)),), tie_weights=False)
    assert not np.allclose(out.detach().numpy(), [4.0, 4.0])
    with pytest.raises(ValueError, match="tied"):
        func.functional_call(m, {"a.weight": w, "b.weight": t(np.eye(2))}, (t(np.ones(2)),))
    lin = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'foo'.*\n.*Missing key\(s\): 'bias'"):
        func.functional_call(lin, {"weight": minifw.zeros(2, 2), "foo": minifw.zeros(1)},
                             (minifw.ones(2),), strict=True)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        func.functional_call(lin, ({"weight": minifw.zeros(2, 2)}, {"weight": minifw.zeros(2, 2)}),
                             (minifw.ones(2),))
    with pytest.raises(TypeError, match="parameter_and_buffer_dicts"):
        func.functional_call(lin, [1], (minifw.ones(2),))
    with pytest.raises(TypeError, match="must be a Tensor or None"):
        func.functional_call(lin, {"weight": np.zeros((2, 2))}, (minifw.ones(2),))


def test_stateless_functional_call_is_the_older_name_and_warns():
    lin = nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        out = nn.utils.stateless.functional_call(lin, {"weight": minifw.ones(1, 2), "bias": minifw.zeros(1)},
                                                 (minifw.ones(2),))
    assert out.item() == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        func.functional_call(lin, {}, (minifw.ones(2),))


def test_functional_call_gradients_reach_the_given_tensors():
    model = nn.Linear(3, 2).double()
    w = t(_rng.standard_normal((2, 3)), True)
    gradcheck(lambda w: func.functional_call(model, {"weight": w}, (t(np.arange(3.0)),)), [w])
    assert model.weight.grad is None


def test_minifw_func_imports_on_its_own():
    """`import minifw.func` works first thing in a fresh interpreter (it loads minifw.nn, an
    upper layer, itself) and leaves minifw's lower layers importable without it."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    code = ("import minifw.func, minifw; "
            "x = minifw.tensor([1.0, 2.0]); "
            "print(minifw.func.grad(lambda z: (z * z).sum())(x).tolist())")
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.0, 4.0]"
