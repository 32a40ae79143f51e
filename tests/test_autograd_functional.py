"""minifw.autograd.functional against torch.autograd.functional: vjp, jvp, jacobian, hessian,
vhp and hvp on functions of one and of several inputs and outputs, with PyTorch's nesting of
the results, zeros (or strict mode's error) for an input an output does not depend on,
create_graph, and its errors; and the Jacobian and Hessian against finite differences where
PyTorch is not installed."""
import numpy as np
import pytest

import minifw
import minifw.autograd.functional as AF


def t(a, requires_grad=False):
    return minifw.tensor(np.asarray(a, dtype=np.float64), dtype=minifw.float64,
                         requires_grad=requires_grad)


RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (3,))
Y = RNG.uniform(-1, 1, (2, 3))
V3, V2 = RNG.uniform(-1, 1, (3,)), RNG.uniform(-1, 1, (2,))


def f_vec(lib, x):  # R^3 -> R^2
    return lib.stack([(x * x).sum(), (x.sin() * x[0]).sum()])


def f_two(lib, x, y):  # (R^3, R^{2x3}) -> (R^2, R)
    return (y @ x.exp(), (y * y).sum() * x[1])


def f_scalar(lib, x, y):
    return ((y @ x).tanh() ** 2).sum() + (x ** 3).sum()


def _numeric_jacobian(fn, x, eps=1e-6):
    base = np.asarray(fn(x))
    jac = np.zeros(base.shape + x.shape)
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += eps
        down[j] -= eps
        jac[(Ellipsis,) + j] = (np.asarray(fn(up)) - np.asarray(fn(down))) / (2 * eps)
    return jac


def test_jacobian_and_hessian_match_finite_differences():
    jac = AF.jacobian(lambda x: f_vec(minifw, x), t(X))
    numeric = _numeric_jacobian(lambda x: f_vec(minifw, t(x)).numpy(), X)
    np.testing.assert_allclose(jac.numpy(), numeric, rtol=1e-6, atol=1e-8)
    hess = AF.hessian(lambda x: f_scalar(minifw, x, t(Y)), t(X))

    def gradient(x):
        xt = t(x, True)
        return minifw.autograd.grad(f_scalar(minifw, xt, t(Y)), xt)[0].numpy()
    np.testing.assert_allclose(hess.numpy(), _numeric_jacobian(gradient, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hess.numpy(), hess.numpy().T, rtol=1e-12, atol=1e-14)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _np(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_np(v) for v in value)
    return value.detach().numpy()


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert not isinstance(b, tuple) and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


CALLS = {
    "vjp_one": lambda af, lib, T: af.vjp(lambda x: f_vec(lib, x), T(X), T(V2)),
    "vjp_two": lambda af, lib, T: af.vjp(lambda x, y: f_two(lib, x, y), (T(X), T(Y)),
                                         (T(V2), T(1.5))),
    "vjp_scalar_no_v": lambda af, lib, T: af.vjp(lambda x: (x ** 2).sum(), T(X)),
    "jvp_one": lambda af, lib, T: af.jvp(lambda x: f_vec(lib, x), T(X), T(V3)),
    "jvp_two": lambda af, lib, T: af.jvp(lambda x, y: f_two(lib, x, y), (T(X), T(Y)),
                                         (T(V3), T(Y[::-1].copy()))),
    "jacobian_one": lambda af, lib, T: af.jacobian(lambda x: f_vec(lib, x), T(X)),
    "jacobian_two": lambda af, lib, T: af.jacobian(lambda x, y: f_two(lib, x, y), (T(X), T(Y))),
    "jacobian_unused_input": lambda af, lib, T: af.jacobian(lambda x, y: x * 2, (T(X), T(Y))),
    "hessian_one": lambda af, lib, T: af.hessian(lambda x: f_scalar(lib, x, T(Y)), T(X)),
    "hessian_two": lambda af, lib, T: af.hessian(lambda x, y: f_scalar(lib, x, y), (T(X), T(Y))),
    "vhp": lambda af, lib, T: af.vhp(lambda x, y: f_scalar(lib, x, y), (T(X), T(Y)),
                                     (T(V3), T(Y * 0.5))),
    "hvp": lambda af, lib, T: af.hvp(lambda x, y: f_scalar(lib, x, y), (T(X), T(Y)),
                                     (T(V3), T(Y * 0.5))),
    "hvp_one": lambda af, lib, T: af.hvp(lambda x: f_scalar(lib, x, T(Y)), T(X), T(V3)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_and_their_nesting_are_pytorchs(name, torch):
    import torch.autograd.functional as TF
    mine = CALLS[name](AF, minifw, lambda a: t(a))
    theirs = CALLS[name](TF, torch, lambda a: torch.tensor(np.asarray(a, dtype=np.float64)))
    _same(_np(mine), _np(theirs))


def test_strict_mode_refuses_an_independent_input_and_v_is_checked(torch):
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda x, y: x * 2, (t(X), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        AF.jacobian(lambda x: minifw.ones(2), t(X), strict=True)
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vjp(lambda x: x * 2, t(X))
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.jvp(lambda x: x * 2, t(X))
    with pytest.raises(RuntimeError, match="single element"):
        AF.hessian(lambda x: x * 2, t(X))
    with pytest.raises(RuntimeError, match=r"entry 0 of v has shape \(2,\)"):
        AF.vjp(lambda x: x * 2, t(X), t(V2))
    with pytest.raises(TypeError, match="inputs must be a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda x: x, X)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        AF.jacobian(lambda x: x, t(X), strategy="forward-mode")


def test_results_are_detached_unless_create_graph():
    x = t(X, requires_grad=True)
    jac = AF.jacobian(lambda a: a ** 3, x)
    assert not jac.requires_grad and x.grad is None
    jac = AF.jacobian(lambda a: a ** 3, x, create_graph=True)
    assert jac.requires_grad
    jac.trace().backward()  # d/dx sum_i 3 x_i^2 = 6 x
    np.testing.assert_allclose(x.grad.numpy(), 6 * X)


def test_inputs_that_do_not_require_grad_are_left_alone():
    x = t(X)
    out, v = AF.vjp(lambda a: (a * a).sum(), x)
    np.testing.assert_allclose(v.numpy(), 2 * X)
    assert not x.requires_grad and x.grad is None and not out.requires_grad


# ---- minifw.autograd.gradcheck and gradgradcheck ------------------------------------------------

class WrongSecondDerivative(minifw.autograd.Function):
    """x ** 3 whose backward is right in value but built so that its own derivative is not:
    3 x^2 computed as 3 * x * x.detach() (the detached factor drops half of 6x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x * x.detach()


def test_gradcheck_passes_right_gradients_and_names_a_wrong_one():
    x, w = t(X, True), t(Y, True)
    assert minifw.autograd.gradcheck(lambda a, b: (b @ a).tanh() * a[0], (x, w))
    wrong = lambda a: a * 2 + a.detach() * 0.01  # noqa: E731 (its gradient misses the 0.01)
    assert minifw.autograd.gradcheck(wrong, (x,), raise_exception=False) is False
    with pytest.raises(minifw.autograd.GradcheckError,
                       match="Jacobian mismatch for output 0 with respect to input 0"):
        minifw.autograd.gradcheck(wrong, (x,))
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        minifw.autograd.gradcheck(lambda a: a * 2, (t(X).float().requires_grad_(),), atol=0.1)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        minifw.autograd.gradcheck(lambda a: a * 2, (t(X),))


def test_gradgradcheck_checks_second_derivatives():
    x = t(X, True)
    assert minifw.autograd.gradcheck(WrongSecondDerivative.apply, (x,))  # first order: right
    assert minifw.autograd.gradgradcheck(lambda a: a ** 3, (x,))
    assert minifw.autograd.gradgradcheck(WrongSecondDerivative.apply, (x,), raise_exception=False) is False


def test_gradcheck_agrees_with_pytorchs(torch):
    cases = [lambda lib: (lambda a: a * 2 + a.detach() * 0.01), lambda lib: (lambda a: (a ** 3).sin())]
    for make in cases:
        mine = minifw.autograd.gradcheck(make(minifw), (t(X, True),), raise_exception=False)
        theirs = torch.autograd.gradcheck(make(torch), (torch.tensor(X, requires_grad=True),),
                                          raise_exception=False)
        assert mine == theirs
