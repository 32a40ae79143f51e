"""minifw.utils.checkpoint (torch.utils.checkpoint): the same outputs and gradients as the
plain forward (dropout masks included), no graph kept inside the checkpointed piece, both
use_reentrant modes, checkpoint_sequential, and errors."""
import numpy as np
import pytest

import minifw
from minifw import nn
from minifw.utils.checkpoint import checkpoint, checkpoint_sequential
from gradcheck import functions_in_graph


def net():
    minifw.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 8), nn.Tanh(),
                         nn.Linear(8, 2))


def run(model, x, call):
    for p in model.parameters():
        p.grad = None
    x = x.detach().requires_grad_(x.requires_grad)
    minifw.manual_seed(1)  # the dropout mask
    y = call(model, x)
    y.pow(2).sum().backward()
    return y.detach().numpy(), [None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()], \
        None if x.grad is None else x.grad.numpy()


CALLS = {
    "reentrant": lambda m, x: checkpoint(m, x, use_reentrant=True),
    "non_reentrant": lambda m, x: checkpoint(m, x, use_reentrant=False),
    "sequential_2": lambda m, x: checkpoint_sequential(m, 2, x, use_reentrant=False),
    "sequential_3": lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=True),
}


@pytest.mark.parametrize("name", CALLS)
def test_the_same_outputs_and_gradients_as_without(name):
    model = net()
    x = minifw.randn(3, 4, requires_grad=True)
    want = run(model, x, lambda m, x: m(x))
    got = run(model, x, CALLS[name])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_nothing_inside_is_kept_for_backward():
    model = net()
    x = minifw.randn(3, 4, requires_grad=True)
    y = checkpoint(model, x, use_reentrant=False)
    assert [f.__name__ for f in functions_in_graph((y,))] == ["_Recompute"]
    assert "InnerProduct" in {f.__name__ for f in functions_in_graph((model(x),))}


def test_without_an_input_that_requires_grad():
    model = net()
    x = minifw.randn(3, 4)
    want = run(model, x, lambda m, x: m(x))
    got = run(model, x, CALLS["non_reentrant"])  # the parameters inside still learn
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    with pytest.warns(UserWarning, match="none of the inputs requires grad"):
        y = checkpoint(model, x, use_reentrant=True)
    assert not y.requires_grad  # as PyTorch's reentrant form: nothing inside gets a gradient


def test_tuples_keywords_and_other_arguments_pass_through():
    w = minifw.randn(3, 3, requires_grad=True)

    def block(a, scale, *, shift):
        return a @ w * scale + shift, a.sum()

    a = minifw.randn(2, 3, requires_grad=True)
    out, total = checkpoint(block, a, 2.0, use_reentrant=False, shift=1.0)
    (out.sum() + total).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * a.detach().numpy().sum(0)[:, None].repeat(3, 1), rtol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), 2 * w.detach().numpy().sum(1)[None].repeat(2, 0) + 1, rtol=1e-6)


def test_errors():
    x = minifw.randn(2, 4, requires_grad=True)
    with pytest.warns(UserWarning, match="pass use_reentrant explicitly"):
        checkpoint(nn.Linear(4, 2), x)
    with pytest.raises(ValueError, match="keyword arguments to the function need use_reentrant=False"):
        checkpoint(lambda a, b: a + b, x, use_reentrant=True, b=1.0)
    with pytest.raises(TypeError, match="function must be callable"):
        checkpoint(3, x, use_reentrant=False)
    with pytest.raises(TypeError, match="must return a Tensor or a tuple of Tensors, got a list"):
        checkpoint(lambda a: [a], x, use_reentrant=False)
    with pytest.raises(ValueError, match=r"segments must be an int in \[1, 6\], got 7"):
        checkpoint_sequential(net(), 7, x, use_reentrant=False)
    with pytest.raises(TypeError, match="use_reentrant must be a bool"):
        checkpoint(nn.Linear(4, 2), x, use_reentrant="yes")
