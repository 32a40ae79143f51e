"""Hooks on autograd nodes (grad_fn.register_prehook, grad_fn.register_hook), as PyTorch's:
what they receive, replacing gradients, order, removal, their errors, and the same under
create_graph=True. grad_inputs has one entry per positional input of minifw's Function, a
number included (None), where PyTorch's node counts its tensor inputs only."""
import numpy as np
import pytest

import minifw


def leaf(values):
    return minifw.tensor(values, dtype=minifw.float64, requires_grad=True)


def _run(lib, double_in_prehook=True, add_in_hook=True):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    y = x * w
    seen = []

    def prehook(grad_outputs):
        seen.append(("pre", [g.tolist() for g in grad_outputs]))
        return (grad_outputs[0] * 2,) if double_in_prehook else None

    def hook(grad_inputs, grad_outputs):
        seen.append(("post", [g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs]))
        return (grad_inputs[0] + 1, grad_inputs[1]) if add_in_hook else None

    handles = [y.grad_fn.register_prehook(prehook), y.grad_fn.register_hook(hook)]
    (y * y).sum().backward()
    return seen, x.grad.tolist(), w.grad.tolist(), handles, x, w


def test_node_hooks_see_and_replace_the_gradients():
    seen, gx, gw, _, _, _ = _run(minifw)
    # d(y^2)/dy = 2y = [6, 16], doubled by the prehook; then x's gradient + 1
    assert seen == [("pre", [[6.0, 16.0]]), ("post", [[36.0, 128.0], [12.0, 64.0]], [[12.0, 32.0]])]
    assert gx == [37.0, 129.0] and gw == [12.0, 64.0]


def test_node_hooks_match_pytorch():
    torch = pytest.importorskip("torch")
    for flags in [(True, True), (False, False), (True, False)]:
        mine, theirs = _run(minifw, *flags), _run(torch, *flags)
        assert mine[:3] == theirs[:3], flags


def test_removed_node_hooks_do_not_run():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * w
    calls = []
    handle = y.grad_fn.register_hook(lambda gi, go: calls.append(1))
    with y.grad_fn.register_prehook(lambda go: calls.append(2)):
        pass  # removed at the end of the block
    handle.remove()
    y.sum().backward()
    assert calls == [] and x.grad.tolist() == [3.0, 4.0]


def test_several_prehooks_chain_in_registration_order():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    assert x.grad.tolist() == [60.0, 60.0]  # ((1 + 1) * 10) * 3


def test_node_hooks_under_create_graph_get_recorded_gradients():
    x = leaf([1.0, 2.0])
    y = x ** 3
    flags = []
    # one gradient per positional input of minifw's Pow: x's, and None for the exponent
    y.grad_fn.register_hook(lambda gi, go: flags.append(gi[0].grad_fn is not None) or (gi[0] * 2, gi[1]))
    g, = minifw.autograd.grad(y.sum(), x, create_graph=True)
    assert flags == [True]
    np.testing.assert_allclose(g.detach().numpy(), [6.0, 24.0])
    h, = minifw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [12.0, 24.0])  # d(6 x^2)/dx


def test_bad_hook_results_are_refused():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.grad_fn.register_prehook(lambda go: go[0])  # a Tensor, not a tuple
    with pytest.raises(RuntimeError, match="expected a tuple of 1 gradients"):
        y.sum().backward(retain_graph=True)
    z = x * 4
    z.grad_fn.register_hook(lambda gi, go: (gi[0][:1], None))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        z.sum().backward()
    with pytest.raises(TypeError, match="hook must be callable"):
        (x * 2).grad_fn.register_hook(3)
