"""Bilinear / F.bilinear: y = x1^T A x2 + b over leading dims, against a float64 loop
reference, finite differences, PyTorch (when installed) and the CPU on the GPU devices."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu


def t64(shape, seed=0, requires_grad=True):
    return minifw.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), dtype=minifw.float64,
                         requires_grad=requires_grad)


@pytest.mark.parametrize("lead", [(1,), (4,), (2, 3), (0,)])
@pytest.mark.parametrize("bias", [True, False])
def test_values_match_the_loop_reference(lead, bias):
    x1, x2, w = t64(lead + (3,), 1, False), t64(lead + (2,), 2, False), t64((5, 3, 2), 3, False)
    b = t64((5,), 4, False) if bias else None
    got = F.bilinear(x1, x2, w, b).numpy()
    a1, a2, aw = x1.numpy().reshape(-1, 3), x2.numpy().reshape(-1, 2), w.numpy()
    want = np.zeros((a1.shape[0], 5))
    for n in range(a1.shape[0]):
        for o in range(5):
            want[n, o] = sum(a1[n, i] * aw[o, i, j] * a2[n, j] for i in range(3) for j in range(2))
            want[n, o] += 0 if b is None else b.numpy()[o]
    assert got.shape == lead + (5,)
    np.testing.assert_allclose(got.reshape(-1, 5), want, rtol=1e-12, atol=1e-14)


def test_gradients_match_finite_differences():
    gradcheck(lambda a, b, w, c: F.bilinear(a, b, w, c),
              [t64((2, 3, 4), 1), t64((2, 3, 2), 2), t64((5, 4, 2), 3), t64((5,), 4)])


def test_module_matches_pytorch():
    torch = pytest.importorskip("torch")
    minifw.manual_seed(0)
    m = nn.Bilinear(3, 4, 5, dtype=minifw.float64)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)"
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {"weight": (5, 3, 4), "bias": (5,)}
    assert m.weight.abs().max().item() <= 1 / np.sqrt(3)
    t = torch.nn.Bilinear(3, 4, 5, dtype=torch.float64)
    t.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in m.state_dict().items()})
    x1, x2 = np.random.default_rng(1).uniform(-1, 1, (2, 6, 3)), np.random.default_rng(2).uniform(-1, 1, (2, 6, 4))
    g = np.random.default_rng(3).uniform(-1, 1, (2, 6, 5))
    mine = [minifw.tensor(x1, requires_grad=True), minifw.tensor(x2, requires_grad=True)]
    theirs = [torch.tensor(x1, requires_grad=True), torch.tensor(x2, requires_grad=True)]
    m(*mine).backward(minifw.tensor(g))
    t(*theirs).backward(torch.tensor(g))
    for a, b in zip(mine + [m.weight, m.bias], theirs + [t.weight, t.bias]):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m(*mine).detach().numpy(), t(*theirs).detach().numpy(), rtol=1e-12)
    assert nn.Bilinear(2, 2, 1, bias=False).bias is None


def test_on_the_device_equal_the_cpus(dev):
    make = lambda: [minifw.tensor(np.random.default_rng(s).uniform(-1, 1, shape), dtype=minifw.float32)
                    for s, shape in ((1, (4, 3)), (2, (4, 2)), (3, (5, 3, 2)), (4, (5,)))]
    assert_ops_match_the_cpu(dev, make, lambda a, b, w, c: F.bilinear(a, b, w, c), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("args, match", [
    (((2, 3), (3, 2), (5, 3, 2), None), "same leading"),
    (((2, 4), (2, 2), (5, 3, 2), None), "input1's last dim must be 3"),
    (((2, 3), (2, 5), (5, 3, 2), None), "input2's last dim must be 2"),
    (((2, 3), (2, 2), (5, 3), None), "weight must be 3-D"),
    (((2, 3), (2, 2), (5, 3, 2), (4,)), r"bias must have shape \(5,\)"),
])
def test_errors_name_the_argument(args, match):
    tensors = [None if s is None else t64(s, requires_grad=False) for s in args]
    with pytest.raises(ValueError, match=match) as info:
        F.bilinear(*tensors)
    assert str(info.value).startswith("bilinear:")
