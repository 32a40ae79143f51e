"""prod, roll, diag, trace and masked_select as PyTorch's: values (hand-computed), gradients
by finite differences in float64 (the product's also where an element is zero), every device
("cpu", "cudasim" and the emulated "cuda"), bad arguments, and PyTorch's results when it is
installed."""
import numpy as np
import pytest

import minifw
from minifw import devices
from gradcheck import gradcheck
from targets import cuda_available, emulate_cuda

F64 = minifw.float64


@pytest.fixture(params=["cpu", "cudasim", "cuda"])
def dev(request, monkeypatch):
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


def host(t):
    return t.detach().cpu().numpy()


M = [[1.0, 2.0, 0.0, 4.0], [3.0, -1.0, 2.0, 0.5], [2.0, 2.0, 2.0, 2.0]]


def test_prod_values(dev):
    x = minifw.tensor(M, device=dev)
    assert x.prod().item() == 0.0
    assert host(x.prod(1)).tolist() == [0.0, -3.0, 16.0]
    assert host(x.prod(0, keepdim=True)).tolist() == [[6.0, -4.0, 0.0, 4.0]]
    assert x.prod(1).device == dev
    ints = minifw.tensor([[1, 2], [3, 4]], device=dev)
    assert ints.prod().item() == 24 and ints.prod().dtype == minifw.int64
    assert host(ints.prod(1)).tolist() == [2, 12]
    assert minifw.tensor([True, False]).prod().item() == 0
    assert minifw.tensor([1, 2], dtype=minifw.int32).prod(dtype=F64).dtype == F64


def test_prod_gradient_is_exact_where_elements_are_zero():
    x = minifw.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], dtype=F64, requires_grad=True)
    x.prod(1).sum().backward()
    # d(a b c)/da = b c: with one zero only its own entry is non-zero, with two none is
    assert host(x.grad).tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("fn", [lambda x: x.prod(), lambda x: x.prod(0), lambda x: x.prod(-1, True)],
                         ids=["all", "dim0", "last_keepdim"])
def test_prod_gradcheck(fn):
    gradcheck(fn, [minifw.tensor(np.random.default_rng(0).uniform(0.5, 1.5, (3, 4)), dtype=F64,
                                 requires_grad=True)])


def test_roll_values_and_gradient(dev):
    x = minifw.arange(6, device=dev).reshape(2, 3)
    assert host(x.roll(1)).tolist() == [[5, 0, 1], [2, 3, 4]]  # flattened, shape kept
    assert host(x.roll(-1, 1)).tolist() == [[1, 2, 0], [4, 5, 3]]
    assert host(x.roll((1, 1), (0, 1))).tolist() == [[5, 3, 4], [2, 0, 1]]
    w = minifw.tensor(np.arange(6.0).reshape(2, 3), dtype=F64, device=dev, requires_grad=True)
    (w.roll(1, 1) * minifw.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=F64, device=dev)).sum().backward()
    assert host(w.grad).tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]  # out[0, 0] is x[0, 2]
    gradcheck(lambda t: t.roll((2, -1), (1, 0)), [minifw.tensor(np.random.default_rng(1).normal(
        size=(3, 4)), dtype=F64, requires_grad=True)])


def test_roll_refuses_mismatched_shifts_and_dims():
    with pytest.raises(ValueError, match="roll: shifts and dims must have the same length"):
        minifw.ones(2, 3).roll((1, 2), 0)
    with pytest.raises(ValueError, match="without dims, shifts must be one int"):
        minifw.ones(2, 3).roll((1, 2))
    with pytest.raises(IndexError):
        minifw.ones(2, 3).roll(1, 2)


def test_diag_and_trace(dev):
    x = minifw.tensor(M, device=dev)
    assert host(x.diag()).tolist() == [1.0, -1.0, 2.0]
    assert host(x.diag(1)).tolist() == [2.0, 2.0, 2.0]
    assert host(x.diag(-1)).tolist() == [3.0, 2.0]
    v = minifw.tensor([1.0, 2.0], device=dev)
    assert host(v.diag()).tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert host(v.diag(1)).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    assert x.trace().item() == 2.0 and minifw.trace(x).device == dev
    g = minifw.tensor(M, dtype=F64, device=dev, requires_grad=True)
    g.diag(-1).sum().backward()
    assert host(g.grad).tolist() == [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]]


@pytest.mark.parametrize("offset, shape", [(0, (3, 4)), (2, (3, 4)), (-2, (4, 3)), (1, (3,)),
                                           (-2, (2,))])
def test_diag_gradcheck(offset, shape):
    gradcheck(lambda t: t.diag(offset), [minifw.tensor(np.random.default_rng(2).normal(size=shape),
                                                       dtype=F64, requires_grad=True)])


def test_diag_and_trace_refuse_other_ranks():
    with pytest.raises(ValueError, match="diag: input must be 1-D or 2-D"):
        minifw.ones(2, 2, 2).diag()
    with pytest.raises(ValueError, match="trace: input must be a matrix"):
        minifw.ones(3).trace()


def test_masked_select(dev):
    x = minifw.tensor(M, device=dev)
    assert host(x.masked_select(x > 1.5)).tolist() == [2.0, 4.0, 3.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    row = minifw.tensor([True, False, False, True], device=dev)  # broadcast over the rows
    assert host(minifw.masked_select(x, row)).tolist() == [1.0, 4.0, 3.0, 0.5, 2.0, 2.0]
    g = minifw.tensor(M, dtype=F64, device=dev, requires_grad=True)
    g.masked_select(row).sum().backward()
    assert host(g.grad).tolist() == [[1, 0, 0, 1]] * 3
    with pytest.raises(TypeError, match="masked_select: mask must be a bool tensor"):
        x.masked_select(x)
    with pytest.raises(ValueError, match="does not broadcast"):
        x.masked_select(minifw.tensor([True, False], device=dev))


def test_as_torch():
    torch = pytest.importorskip("torch")
    a = np.array(M)
    for make in (lambda m, t: t.prod(1), lambda m, t: t.prod(), lambda m, t: t.roll(3),
                 lambda m, t: t.roll((1, -1), (0, 1)), lambda m, t: t.diag(1),
                 lambda m, t: t[0].diag(-1), lambda m, t: t.trace(),
                 lambda m, t: t.masked_select(t > 1.5)):
        mine, theirs = make(minifw, minifw.tensor(a)), make(torch, torch.tensor(a))
        np.testing.assert_allclose(host(mine), theirs.numpy())
        assert tuple(mine.shape) == tuple(theirs.shape)
