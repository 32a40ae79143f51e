"""The LU factorization (linalg.lu_factor, lu_factor_ex, lu, lu_solve, lu_unpack and the older
torch.lu / lu_solve / Tensor.lu): values against PyTorch where installed and by
reconstruction, gradients by finite differences in float64, singular matrices, devices and
bad arguments."""
import numpy as np
import pytest

import minifw
from minifw import linalg
from gradcheck import gradcheck

F64 = minifw.float64
SHAPES = [(1, 1), (3, 3), (5, 5), (2, 4, 4), (2, 1, 3, 3)]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


@pytest.mark.parametrize("shape", SHAPES)
def test_factors_rebuild_the_matrix(shape):
    a = rand(*shape)
    P, L, U = linalg.lu(minifw.tensor(a, dtype=F64))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-14)
    n = shape[-1]
    assert np.allclose(np.triu(L.numpy(), 1), 0) and np.allclose(np.diagonal(L.numpy(), 0, -2, -1), 1)
    assert np.allclose(np.tril(U.numpy(), -1), 0)
    assert np.abs(np.tril(L.numpy(), -1)).max(initial=0) <= 1  # partial pivoting: |multipliers| <= 1
    assert sorted(P.numpy().sum(-1).reshape(-1).tolist()) == [1.0] * (P.numpy().size // n)


@pytest.mark.parametrize("shape", SHAPES)
def test_factors_and_solutions_match_torch(shape):
    torch = pytest.importorskip("torch")
    a, b = rand(*shape), rand(*shape[:-1], 2, seed=1)
    LU, pivots = linalg.lu_factor(minifw.tensor(a))
    tLU, tpivots = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_allclose(LU.numpy(), tLU.numpy(), atol=1e-13)
    assert pivots.dtype == minifw.int32 and pivots.numpy().tolist() == tpivots.tolist()
    for got, want in zip(linalg.lu(minifw.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-13)
    for left in (True, False):
        for adjoint in (False, True):
            B = b if left else rand(*shape[:-2], 2, shape[-1], seed=2)
            got = linalg.lu_solve(LU, pivots, minifw.tensor(B), left=left, adjoint=adjoint)
            want = torch.linalg.lu_solve(tLU, tpivots, torch.tensor(B), left=left, adjoint=adjoint)
            np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    got = minifw.lu_solve(minifw.tensor(b), LU, pivots)
    np.testing.assert_allclose((minifw.tensor(a) @ got).numpy(), b, atol=1e-12)
    for g, w in zip(minifw.lu_unpack(LU, pivots), torch.lu_unpack(tLU, tpivots)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-13)


def test_singular_matrices():
    s = minifw.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=F64)
    LU, pivots, info = linalg.lu_factor_ex(s)
    assert info.item() == 3 and info.dtype == minifw.int32
    with pytest.raises(linalg.LinAlgError, match="U\\[2,2\\] is zero"):
        linalg.lu_factor(s)
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.lu_factor_ex(s, check_errors=True)
    P, L, U = linalg.lu(s)  # no error: the factors of a singular matrix exist
    np.testing.assert_allclose((P @ L @ U).numpy(), s.numpy(), atol=1e-14)
    zero = linalg.lu_factor_ex(minifw.zeros(2, 2)).info
    assert zero.item() == 1


def test_older_names_and_methods():
    a = minifw.tensor(rand(2, 3, 3), dtype=F64)
    LU, pivots = minifw.lu(a)
    LU2, pivots2, infos = a.lu(get_infos=True)
    assert np.array_equal(LU.numpy(), LU2.numpy()) and infos.numpy().tolist() == [0, 0]
    b = minifw.tensor(rand(2, 3, 1, seed=3), dtype=F64)
    x = b.lu_solve(LU, pivots)
    np.testing.assert_allclose((a @ x).numpy(), b.numpy(), atol=1e-13)
    P, L, U = minifw.lu_unpack(LU, pivots, unpack_data=False)
    assert L is None and U is None and P.shape == (2, 3, 3)


def test_gradients():
    a = rand(4, 4, seed=4) + 2 * np.eye(4)
    gradcheck(lambda m: linalg.lu_factor(m).LU, [minifw.tensor(a, dtype=F64, requires_grad=True)])
    gradcheck(lambda m: linalg.lu(m)[1:], [minifw.tensor(rand(2, 3, 3, seed=5), dtype=F64, requires_grad=True)])
    LU, pivots = linalg.lu_factor(minifw.tensor(a, dtype=F64))
    lu_leaf = LU.detach().requires_grad_(True)
    b = minifw.tensor(rand(4, 2, seed=6), dtype=F64, requires_grad=True)
    for adjoint in (False, True):
        gradcheck(lambda m, rhs: linalg.lu_solve(m, pivots, rhs, adjoint=adjoint), [lu_leaf, b])
    gradcheck(lambda m, rhs: linalg.lu_solve(m, pivots, rhs.mT, left=False), [lu_leaf, b])
    # through the whole solve: the gradient of A^-1 b in A
    gradcheck(lambda m, rhs: linalg.lu_solve(*linalg.lu_factor(m), rhs),
              [minifw.tensor(a, dtype=F64, requires_grad=True), b])


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    a, w = rand(2, 4, 4, seed=7), rand(2, 4, 4, seed=8)
    mine = minifw.tensor(a, dtype=F64, requires_grad=True)
    (linalg.lu_factor(mine).LU * minifw.tensor(w)).sum().backward()
    theirs = torch.tensor(a, requires_grad=True)
    (torch.linalg.lu_factor(theirs).LU * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_cudasim_equals_cpu():
    a = rand(3, 3, seed=9)
    cpu = linalg.lu_factor(minifw.tensor(a))
    sim = linalg.lu_factor(minifw.tensor(a, device="cudasim"))
    assert sim.LU.device == minifw.device("cudasim") and sim.pivots.device == minifw.device("cudasim")
    assert np.array_equal(sim.LU.cpu().numpy(), cpu.LU.numpy())
    b = minifw.tensor(rand(3, 2, seed=10), device="cudasim")
    x = linalg.lu_solve(sim.LU, sim.pivots, b)
    np.testing.assert_allclose(x.cpu().numpy(), np.linalg.solve(a, b.cpu().numpy()), atol=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="square"):
        linalg.lu_factor(minifw.ones(2, 3))
    with pytest.raises(ValueError, match="pivot must be True"):
        linalg.lu_factor(minifw.eye(2), pivot=False)
    LU, pivots = linalg.lu_factor(minifw.eye(3))
    with pytest.raises(ValueError, match="pivots must be \\(\\.\\.\\., 3\\) with values in \\[1, 3\\]"):
        linalg.lu_solve(LU, pivots + 5, minifw.ones(3, 1))
    with pytest.raises(TypeError, match="pivots must be an integer tensor"):
        linalg.lu_solve(LU, pivots.float(), minifw.ones(3, 1))
    with pytest.raises(ValueError, match="B needs 3 rows"):
        linalg.lu_solve(LU, pivots, minifw.ones(2, 1))
    with pytest.raises(TypeError, match="linalg.lu_factor_ex: pivot must be a bool"):
        linalg.lu_factor(minifw.eye(2), pivot=1)
