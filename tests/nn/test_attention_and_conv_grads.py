"""nn.grad's convolution gradients (against PyTorch and against minifw's own autograd, and
differentiable again) and nn.attention's sdpa_kernel (accepted, changes nothing)."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw.nn import grad as G
from minifw.nn.attention import SDPBackend, sdpa_kernel
from gradcheck import gradcheck

F64 = minifw.float64


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1)])
def test_conv_gradients_equal_autograds(rank, stride, padding, dilation, groups):
    x = minifw.tensor(rand(2, 4, *(6,) * rank), dtype=F64, requires_grad=True)
    w = minifw.tensor(rand(6, 4 // groups, *(3,) * rank, seed=1), dtype=F64, requires_grad=True)
    conv = getattr(F, f"conv{rank}d")
    out = conv(x, w, None, stride, padding, dilation, groups)
    go = minifw.tensor(rand(*out.shape, seed=2), dtype=F64)
    out.backward(go)
    gi = getattr(G, f"conv{rank}d_input")(x.shape, w.detach(), go, stride, padding, dilation, groups)
    gw = getattr(G, f"conv{rank}d_weight")(x.detach(), w.shape, go, stride, padding, dilation, groups)
    np.testing.assert_allclose(gi.numpy(), x.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), atol=1e-12)


def test_conv_gradients_match_torch_with_an_ambiguous_input_size():
    torch = pytest.importorskip("torch")
    x, w = rand(1, 2, 8, 8), rand(3, 2, 3, 3, seed=1)
    go = rand(1, 3, 3, 3, seed=2)  # stride 2 maps both 7 and 8 to 3: the size decides
    for size in ((1, 2, 7, 7), (1, 2, 8, 8)):
        got = G.conv2d_input(size, minifw.tensor(w), minifw.tensor(go), 2)
        want = torch.nn.grad.conv2d_input(size, torch.tensor(w), torch.tensor(go), 2)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    got = G.conv2d_weight(minifw.tensor(x), (3, 2, 3, 3), minifw.tensor(go), 2)
    want = torch.nn.grad.conv2d_weight(torch.tensor(x), (3, 2, 3, 3), torch.tensor(go), 2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_conv_gradients_are_differentiable():
    w = minifw.tensor(rand(3, 2, 3, 3, seed=3), dtype=F64, requires_grad=True)
    go = minifw.tensor(rand(1, 3, 3, 3, seed=4), dtype=F64, requires_grad=True)
    gradcheck(lambda weight, g: G.conv2d_input((1, 2, 5, 5), weight, g), [w, go])


def test_conv_gradient_errors():
    w, go = minifw.ones(3, 2, 3, 3), minifw.ones(1, 3, 3, 3)
    with pytest.raises(ValueError, match="conv2d_input: grad_output has shape"):
        G.conv2d_input((1, 2, 6, 6), w, go)
    with pytest.raises(ValueError, match="conv2d_input: input_size must be 4 sizes"):
        G.conv2d_input((2, 5, 5), w, go)
    with pytest.raises(TypeError, match="conv2d_weight: grad_output must be a Tensor"):
        G.conv2d_weight(minifw.ones(1, 2, 5, 5), (3, 2, 3, 3), np.ones((1, 3, 3, 3)))


def test_sdpa_kernel_accepts_backends_and_changes_nothing():
    q = minifw.tensor(rand(1, 2, 3, 4, seed=5))
    plain = F.scaled_dot_product_attention(q, q, q)
    for backends in (SDPBackend.MATH, [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        with sdpa_kernel(backends, set_priority=True):
            assert np.array_equal(F.scaled_dot_product_attention(q, q, q).numpy(), plain.numpy())
    with pytest.raises(TypeError, match="sdpa_kernel: backends must be an SDPBackend"):
        with sdpa_kernel("math"):
            pass
    with pytest.raises(TypeError, match="sdpa_kernel: backends must be an SDPBackend"):
        with sdpa_kernel([]):
            pass


def test_backend_names_are_torchs():
    torch = pytest.importorskip("torch")
    assert {b.name for b in SDPBackend} == set(torch.nn.attention.SDPBackend.__members__)
