"""einsum, meshgrid, cdist, median/nanmedian, unflatten, fill_diagonal_, index_add(_),
addcmul(_), addcdiv(_), lerp(_), the typed constructors (FloatTensor, ...) and Size, as
PyTorch's: values (hand-computed), gradients by finite differences in float64 on "cpu" and
"cudasim", results and gradients on every device equal to the CPU's, in-place bookkeeping,
bad arguments, and PyTorch's results when it is installed."""
import importlib
import math
import warnings

import numpy as np
import pytest

import minifw
from minifw import devices
from minifw.functions import distance, einsum, indexing, reductions
from gradcheck import functions_in_graph
from targets import cuda_available, emulate_cuda

F64 = minifw.float64
NAN, INF = float("nan"), float("inf")


@pytest.fixture(params=["cpu", "cudasim", "cuda"])
def dev(request, monkeypatch):
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


def host(t):
    return t.detach().cpu().numpy()


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


# ---- gradient checks: central differences of the function evaluated on the device ----------

# float64 central differences with eps 1e-6 are within ~1e-9 for these O(1) values (see
# tests/gradcheck.py); 1e-6 relative plus 1e-7 absolute leaves margin without hiding a
# wrong formula.
EPS, RTOL, ATOL = 1e-6, 1e-6, 1e-7


def device_gradcheck(fn, arrays, device, constants=()):
    """Assert that the gradients autograd gives for every array of `arrays` (float64 leaves
    on `device`) match central differences of sum(weights * fn(*leaves, *constants))."""
    device = devices.get(device)
    leaves = [minifw.tensor(a, dtype=F64, device=device, requires_grad=True) for a in arrays]
    consts = [minifw.tensor(c, device=device) if isinstance(c, np.ndarray) else c for c in constants]
    out = fn(*leaves, *consts)
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind == "f"]
    assert all(o.device == device for o in outs)
    weights = [rand(o.shape, 7 + k) for k, o in enumerate(outs)]
    minifw.autograd.backward(outs, [minifw.tensor(w, device=device) for w in weights])

    def objective(values):
        with minifw.no_grad():
            got = fn(*(minifw.tensor(v, device=device) for v in values), *consts)
            got = [o for o in (got if isinstance(got, tuple) else (got,)) if o.dtype.kind == "f"]
            return sum(float(np.sum(w * host(o))) for w, o in zip(weights, got))

    for i, (a, leaf) in enumerate(zip(arrays, leaves)):
        analytic = np.zeros(np.shape(a)) if leaf.grad is None else host(leaf.grad)
        numeric = np.zeros(np.shape(a))
        for j in np.ndindex(np.shape(a)):
            sides = []
            for step in (EPS, -EPS):
                values = [np.array(v, dtype=np.float64) for v in arrays]
                values[i][j] += step
                sides.append(objective(values))
            numeric[j] = (sides[0] - sides[1]) / (2 * EPS)
        np.testing.assert_allclose(analytic, numeric, rtol=RTOL, atol=ATOL,
                                   err_msg=f"input {i} on {device}")


A34, B42 = rand((3, 4)), rand((4, 2), 1)

GRADS = {
    "einsum_matmul": (lambda a, b: minifw.einsum("ij,jk->ik", a, b), [A34, B42]),
    "einsum_implicit_batched": (lambda a, b: minifw.einsum("bij,bjk", a, b),
                                [rand((2, 2, 3)), rand((2, 3, 2), 1)]),
    "einsum_ellipsis_broadcast": (lambda a, b: minifw.einsum("...ij,...jk->...ik", a, b),
                                  [rand((2, 2, 3)), rand((1, 3, 2), 1)]),
    "einsum_named_broadcast": (lambda a, b: minifw.einsum("ij,ij->ij", a, b),
                               [rand((3, 1)), rand((3, 4), 1)]),
    "einsum_diagonal": (lambda a: minifw.einsum("ii->i", a), [rand((3, 3))]),
    "einsum_trace_and_sum": (lambda a, b: minifw.einsum("ii", a) * minifw.einsum("ij->", b),
                             [rand((3, 3)), rand((2, 3), 1)]),
    "einsum_repeated_with_others": (lambda a, b: minifw.einsum("iij,jk->ik", a, b),
                                    [rand((2, 2, 3)), rand((3, 2), 1)]),
    "einsum_letters_of_one_operand": (lambda a, b: minifw.einsum("ij,k->i", a, b),
                                      [rand((2, 3)), rand((4,), 1)]),
    "einsum_three_operands": (lambda a, b, c: minifw.einsum("ij,jk,kl->il", a, b, c),
                              [rand((2, 3)), rand((3, 4), 1), rand((4, 2), 2)]),
    "einsum_permute": (lambda a: minifw.einsum("ijk->kij", a), [rand((2, 3, 2))]),
    "meshgrid_ij": (lambda a, b, c: minifw.meshgrid(a, b, c, indexing="ij"),
                    [rand((2,)), rand(()), rand((3,), 1)]),
    "meshgrid_xy": (lambda a, b, c: minifw.meshgrid([a, b, c], indexing="xy"),
                    [rand((2,)), rand((3,), 1), rand((2,), 2)]),
    "unflatten": (lambda a: a.unflatten(1, (2, -1)) * 2, [A34]),
    "median_all": (lambda a: a.median(), [A34]),
    "median_all_ties_share": (lambda a: (a * a).median(), [np.array([0.5, -0.5, 0.2, 0.9])]),
    "median_dim": (lambda a: a.median(1).values, [A34]),
    "median_dim_keepdim": (lambda a: minifw.median(a, 0, keepdim=True), [A34]),
    "nanmedian_dim": (lambda a, nan_mask: a.masked_fill(nan_mask, NAN).nanmedian(1).values,
                      [A34], [np.array([[True, False, False, False], [False] * 4,
                                        [True, True, False, True]])]),
    "nanmedian_all": (lambda a: a.nanmedian(), [A34]),
    "index_add": (lambda a, s, i: a.index_add(1, i, s, alpha=-1.5),
                  [A34, rand((3, 3), 1)], [np.array([2, 0, 2])]),
    "index_add_in_place": (lambda a, s, i: (a * 1).index_add_(0, i, s),
                           [A34, rand((2, 4), 1)], [np.array([1, 1])]),
    "addcmul": (lambda a, b, c: minifw.addcmul(a, b, c, value=0.5),
                [A34, rand((3, 4), 1), rand((4,), 2)]),
    "addcmul_in_place": (lambda a, b, c: (a * 1).addcmul_(b, c, value=-2), [A34, rand((1, 4), 1),
                                                                            rand((3, 4), 2)]),
    "addcdiv": (lambda a, b, c: a.addcdiv(b, c, value=2.0),
                [A34, rand((3, 4), 1), rand((3, 1), 2, 0.5, 1.5)]),
    "addcdiv_in_place": (lambda a, b, c: (a * 1).addcdiv_(b, c),
                         [A34, rand((3, 4), 1), rand((3, 4), 2, 0.5, 1.5)]),
    "lerp_number": (lambda a, b: a.lerp(b, 0.3) + a.lerp(b, 0.8) * 2, [A34, rand((3, 4), 1)]),
    "lerp_tensor": (lambda a, b, w: minifw.lerp(a, b, w), [A34, rand((4,), 1), rand((3, 4), 2, -0.5, 1.5)]),
    "lerp_in_place": (lambda a, b, w: (a * 1).lerp_(b, w), [A34, rand((3, 4), 1), rand((3, 1), 2)]),
    "fill_diagonal": (lambda a: (a * 1).fill_diagonal_(2.0), [A34]),
    "fill_diagonal_wrap": (lambda a: (a * 1).fill_diagonal_(-1, wrap=True), [rand((7, 2))]),
}
for _p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, INF):
    GRADS[f"cdist_p{_p}"] = (lambda a, b, p=_p: minifw.cdist(a, b, p=p),
                             [rand((3, 2)), rand((4, 2), 1)])
GRADS["cdist_batched"] = (lambda a, b: minifw.cdist(a, b), [rand((2, 3, 2)), rand((1, 4, 2), 1)])
GRADS["cdist_unbatched_by_batched"] = (lambda a, b: minifw.cdist(a, b, p=1.0),
                                       [rand((3, 2)), rand((2, 2, 2), 1)])


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name, device):
    fn, arrays, *constants = GRADS[name]
    device_gradcheck(fn, arrays, device, *constants)


def test_every_new_function_has_a_gradient_check():
    covered = set()
    for fn, arrays, *constants in GRADS.values():
        leaves = [minifw.tensor(a, dtype=F64, requires_grad=True) for a in arrays]
        out = fn(*leaves, *(minifw.tensor(c) for c in (constants[0] if constants else ())))
        covered |= functions_in_graph(out if isinstance(out, tuple) else (out,))
    new = {einsum.Einsum, distance.PairwiseDistance, reductions.Median, reductions.MedianDim,
           indexing.IndexAdd, indexing.IndexPut}
    assert not new - covered, sorted(f.__name__ for f in new - covered)


@pytest.mark.parametrize("name", ["einsum_ellipsis_broadcast", "einsum_repeated_with_others",
                                  "cdist_p3.0", "median_dim", "median_all", "index_add",
                                  "lerp_tensor", "fill_diagonal_wrap", "meshgrid_xy"])
def test_results_and_gradients_on_the_device_equal_the_cpus(dev, name):
    fn, arrays, *constants = GRADS[name]
    results = {}
    for device in ("cpu", dev):
        leaves = [minifw.tensor(a, dtype=minifw.float32, device=device, requires_grad=True)
                  for a in arrays]
        out = fn(*leaves, *(minifw.tensor(c, device=device) for c in (constants[0] if constants else ())))
        outs = [o for o in (out if isinstance(out, tuple) else (out,))]
        assert all(o.device == device for o in outs)
        minifw.autograd.backward(outs, [minifw.ones_like(o) for o in outs])
        results[device] = [host(o) for o in outs] + [host(t.grad) for t in leaves]
    for got, want in zip(results[dev], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- einsum ----------------------------------------------------------------------------------

def test_einsum_values(dev):
    m = minifw.arange(9.0, device=dev).reshape(3, 3)
    assert minifw.einsum("ii", m).item() == 12.0
    assert host(minifw.einsum("ii->i", m)).tolist() == [0.0, 4.0, 8.0]
    assert host(minifw.einsum("ij->j", m)).tolist() == [9.0, 12.0, 15.0]
    assert host(minifw.einsum("ba", m)).tolist() == host(m.t()).tolist()  # implicit: 'ab'
    assert host(minifw.einsum("i,j", m[0], m[1])).tolist() == [[0, 0, 0], [3, 4, 5], [6, 8, 10]]
    assert host(minifw.einsum(" i j , j k -> i k ", [m, m])).tolist() == host(m @ m).tolist()
    assert minifw.einsum("...i->i...", minifw.ones(2, 3, 4, device=dev)).shape == (4, 2, 3)
    assert minifw.einsum("i...i->...", minifw.ones(2, 3, 2, device=dev)).shape == (3,)
    assert minifw.einsum(m, [0, 1], m, [1, 2], [0, 2]).shape == (3, 3)
    assert minifw.einsum(m, [Ellipsis, 1], minifw.ones(3, 2, device=dev), [1, 2]).shape == (3, 2)
    ints = minifw.einsum("i,j->", minifw.arange(3, device=dev), minifw.arange(4, device=dev))
    assert ints.item() == 18 and ints.dtype == minifw.int64
    assert minifw.einsum("ij->ji", m).device == dev


def test_einsum_result_is_not_a_view_of_its_operand():
    m = minifw.ones(2, 3)
    out = minifw.einsum("ij->ji", m)
    out.add_(1)
    assert m.sum().item() == 6.0 and m._version == 0


@pytest.mark.parametrize("args, error, match", [
    (("i->ii", [3]), ValueError, "output subscript 'i' appears more than once"),
    (("i->j", [3]), ValueError, "output subscript 'j' does not appear"),
    (("ij->", [3]), ValueError, r"the number of subscripts in 'ij' \(2\) does not match"),
    (("i,i", [3], [4]), ValueError, "subscript 'i' has size 4 for operand 1"),
    (("ii->i", [2, 3]), ValueError, "subscript 'i' is repeated for operand 0"),
    (("i1", [2, 3]), ValueError, "invalid subscript '1'"),
    (("i.j", [2, 3]), ValueError, "found '.'"),
    (("ij", [2, 3], [2]), ValueError, "more operands were provided"),
    (("ij,jk,kl->il", [2, 3], [3, 4]), ValueError, "fewer operands were provided"),
    (("...i...", [2, 3]), ValueError, "an operand .* has more than one ellipsis"),
], ids=["repeated_output", "unknown_output", "too_many_subscripts", "sizes", "diagonal_sizes",
        "digit", "dot", "more_operands", "fewer_operands", "two_ellipses"])
def test_einsum_refuses_bad_equations(args, error, match):
    equation, *shapes = args
    with pytest.raises(error, match="einsum: " + match):
        minifw.einsum(equation, *(minifw.ones(*s) for s in shapes))


def test_einsum_refuses_bad_operands():
    with pytest.raises(TypeError, match="einsum: every operand must have one dtype; operand 0 is "
                                        "float32, operand 1 is float64"):
        minifw.einsum("i,i", minifw.ones(2), minifw.ones(2, dtype=F64))
    with pytest.raises(TypeError, match="einsum: operand 1 must be a Tensor, got list"):
        minifw.einsum("i,i", minifw.ones(2), [1.0, 2.0])
    with pytest.raises(TypeError, match="einsum: equation must be a string, got int"):
        minifw.einsum(3, minifw.ones(2))
    with pytest.raises(ValueError, match="einsum: at least one operand"):
        minifw.einsum("i")
    with pytest.raises(ValueError, match=r"einsum: a sublist holds ints in \[0, 52\)"):
        minifw.einsum(minifw.ones(2), [52])


# ---- meshgrid ----------------------------------------------------------------------------------

def test_meshgrid_values(dev):
    x, y = minifw.arange(3, device=dev), minifw.arange(2, device=dev) * 10
    gx, gy = minifw.meshgrid(x, y, indexing="ij")
    assert host(gx).tolist() == [[0, 0], [1, 1], [2, 2]] and host(gy).tolist() == [[0, 10]] * 3
    gx, gy = minifw.meshgrid([x, y], indexing="xy")
    assert host(gx).tolist() == [[0, 1, 2]] * 2 and host(gy).tolist() == [[0] * 3, [10] * 3]
    assert [g.shape for g in minifw.meshgrid(x, y, x, indexing="xy")] == [(2, 3, 3)] * 3
    assert minifw.meshgrid(minifw.tensor(5.0, device=dev), indexing="xy")[0].shape == (1,)


def test_meshgrid_warns_once_without_indexing(monkeypatch):
    monkeypatch.setattr(importlib.import_module("minifw.tensor"), "_meshgrid_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gx, _ = minifw.meshgrid(minifw.arange(2), minifw.arange(3))
        minifw.meshgrid(minifw.arange(2), minifw.arange(3))
    assert gx.shape == (2, 3)  # 'ij'
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert "it will be required to pass the indexing argument" in str(caught[0].message)


def test_meshgrid_refuses_bad_arguments():
    with pytest.raises(ValueError, match="meshgrid: expects 0-D or 1-D tensors, got tensor 1 of "
                                         r"shape \(2, 2\)"):
        minifw.meshgrid(minifw.ones(2), minifw.ones(2, 2), indexing="ij")
    with pytest.raises(TypeError, match="meshgrid: expects all tensors to have one dtype"):
        minifw.meshgrid(minifw.ones(2), minifw.ones(2, dtype=F64), indexing="ij")
    with pytest.raises(ValueError, match="meshgrid: indexing must be one of 'ij', 'xy'; got 'ji'"):
        minifw.meshgrid(minifw.ones(2), indexing="ji")
    with pytest.raises(ValueError, match="meshgrid: expects a non-empty list"):
        minifw.meshgrid(indexing="ij")


# ---- cdist -------------------------------------------------------------------------------------

def test_cdist_values(dev):
    a = minifw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=dev)
    b = minifw.tensor([[0.0, 2.0, 3.5]], device=dev)
    np.testing.assert_allclose(host(minifw.cdist(a, b)), [[math.sqrt(1.25)], [math.sqrt(31.25)]],
                               rtol=1e-6)
    assert host(minifw.cdist(a, b, p=1)).tolist() == [[1.5], [9.5]]
    assert host(minifw.cdist(a, b, p=0)).tolist() == [[2.0], [3.0]]
    assert host(minifw.cdist(a, b, p=INF)).tolist() == [[1.0], [4.0]]
    assert minifw.cdist(minifw.ones(2, 3, 2, device=dev), minifw.ones(1, 4, 2, device=dev)).shape \
        == (2, 3, 4)
    assert minifw.cdist(minifw.ones(3, 2, device=dev), minifw.ones(5, 4, 2, device=dev)).shape \
        == (5, 3, 4)
    empty = minifw.cdist(minifw.ones(3, 0, device=dev), minifw.ones(4, 0, device=dev), p=INF)
    assert host(empty).tolist() == [[0.0] * 4] * 3


def test_cdist_gradient_at_zero_distance_is_zero():
    x = minifw.tensor([[1.0, 2.0], [1.0, 2.0]], dtype=F64, requires_grad=True)
    y = minifw.tensor([[1.0, 2.0]], dtype=F64, requires_grad=True)
    minifw.cdist(x, y).sum().backward()
    assert host(x.grad).tolist() == [[0.0, 0.0]] * 2 and host(y.grad).tolist() == [[0.0, 0.0]]
    x = minifw.tensor([[1.0, 2.0], [3.0, 2.0]], requires_grad=True)  # inf: every tie gets all
    minifw.cdist(x, minifw.tensor([[1.0, 0.0]]), p=INF).sum().backward()
    assert host(x.grad).tolist() == [[0.0, 1.0], [1.0, 1.0]]


def test_cdist_refuses_bad_arguments():
    a = minifw.ones(2, 3)
    for call, error, match in [
        (lambda: minifw.cdist(a, a, p=-1), ValueError, "cdist: p must be >= 0, got -1.0"),
        (lambda: minifw.cdist(a, a, p=NAN), ValueError, "cdist: p must be >= 0, got nan"),
        (lambda: minifw.cdist(a, a, p="2"), TypeError, "cdist: p must be a real number"),
        (lambda: minifw.cdist(a, a.double()), TypeError, "cdist: x1 and x2 must have one dtype"),
        (lambda: minifw.cdist(a.long(), a.long()), TypeError, "cdist: x1 must be a floating point"),
        (lambda: minifw.cdist(a, a[:, :2]), ValueError, "cdist: x1 and x2 must have the same number "
                                                        "of columns"),
        (lambda: minifw.cdist(a[0], a), ValueError, r"cdist: x1 must have at least 2 dims"),
        (lambda: minifw.cdist(minifw.ones(2, 1, 3), minifw.ones(3, 1, 3)), ValueError,
         "cdist: the batch dims"),
        (lambda: minifw.cdist(a, a, compute_mode="x"), ValueError, "cdist: compute_mode must be "
                                                                   "one of"),
    ]:
        with pytest.raises(error, match=match):
            call()
    for mode in (None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        assert minifw.cdist(a, a, compute_mode=mode).shape == (2, 2)


# ---- median ------------------------------------------------------------------------------------

def test_median_values(dev):
    x = minifw.tensor([[3.0, 1.0, NAN, 4.0], [1.0, 2.0, 2.0, 0.0]], device=dev)
    values, indices = x.median(1)
    np.testing.assert_array_equal(host(values), [NAN, 1.0])
    assert host(indices).tolist() == [2, 0] and indices.dtype == minifw.int64
    result = minifw.nanmedian(x, 1, keepdim=True)
    assert host(result.values).tolist() == [[3.0], [1.0]] and host(result.indices).tolist() == [[0], [0]]
    assert minifw.tensor([3.0, 1.0, 2.0, 4.0], device=dev).median().item() == 2.0  # the lower one
    assert math.isnan(minifw.tensor([NAN, 1.0], device=dev).median().item())
    assert minifw.tensor([NAN, 1.0], device=dev).nanmedian().item() == 1.0
    all_nan = minifw.tensor([[NAN, NAN], [1.0, 2.0]], device=dev).nanmedian(1)
    np.testing.assert_array_equal(host(all_nan.values), [NAN, 1.0])
    assert host(all_nan.indices).tolist() == [0, 0]
    ints = minifw.tensor([[1, 5, 3]], device=dev).median(1, keepdim=True)
    assert host(ints.values).tolist() == [[3]] and host(ints.indices).tolist() == [[2]]
    scalar = minifw.tensor(3.0, device=dev).median(0)
    assert scalar.values.item() == 3.0 and scalar.indices.item() == 0 and scalar.values.ndim == 0
    assert math.isnan(minifw.tensor([]).median().item())
    assert minifw.ones(2, 0, device=dev).median(0).values.shape == (0,)


def test_median_gradients_follow_pytorch():
    x = minifw.tensor([1.0, 2.0, 2.0, 3.0, 2.0], dtype=F64, requires_grad=True)
    x.median().backward()  # median(): shared by every element equal to it
    np.testing.assert_allclose(host(x.grad), [0, 1 / 3, 1 / 3, 0, 1 / 3])
    x = minifw.tensor([1.0, NAN, 2.0, NAN], dtype=F64, requires_grad=True)
    x.median().backward()
    assert host(x.grad).tolist() == [0.0, 0.5, 0.0, 0.5]
    x = minifw.tensor([[1.0, 2.0, 2.0, 3.0, 2.0]], dtype=F64, requires_grad=True)
    values, indices = x.median(1)
    values.sum().backward()  # median(dim): to the element picked only (which of the ties
    # PyTorch picks is unspecified)
    assert host(x.grad).sum() == 1.0 and host(x.grad)[0, indices.item()] == 1.0
    assert x[0, indices.item()].item() == 2.0


def test_median_refuses_bad_arguments():
    with pytest.raises(IndexError, match="median: expected reduction dim 1 to have non-zero size"):
        minifw.ones(2, 0).median(1)
    with pytest.raises(IndexError, match="median: dim: dimension out of range"):
        minifw.ones(2).median(1)
    with pytest.raises(TypeError, match="median: not implemented for bool tensors"):
        minifw.tensor([True]).median()
    with pytest.raises(TypeError, match="nanmedian: keepdim must be a bool"):
        minifw.ones(2).nanmedian(0, keepdim=1)
    with pytest.raises(ValueError, match="median: the tensor is empty"):
        minifw.tensor([], dtype=minifw.int64).median()


# ---- unflatten, fill_diagonal_, index_add -------------------------------------------------------

def test_unflatten(dev):
    x = minifw.arange(12, device=dev).reshape(2, 6)
    assert x.unflatten(1, (3, -1)).shape == (2, 3, 2)
    assert minifw.unflatten(x, -1, [2, 3]).shape == (2, 2, 3)
    assert host(x.unflatten(0, minifw.Size([1, 2]))[0, 1]).tolist() == list(range(6, 12))
    for call, error, match in [
        (lambda: x.unflatten(1, (4, -1)), ValueError, r"unflatten: sizes \(4, -1\) don't multiply up "
                                                      r"to the size of dim 1 \(6\)"),
        (lambda: x.unflatten(1, ()), ValueError, "unflatten: sizes must be non-empty"),
        (lambda: x.unflatten(1, (-1, -1)), ValueError, "unflatten: sizes"),
        (lambda: x.unflatten(1, 6), TypeError, "unflatten: sizes must be a tuple or list"),
        (lambda: x.unflatten(1, (2.0, 3)), TypeError, "unflatten: sizes must be an int"),
        (lambda: x.unflatten(2, (2, 3)), IndexError, "unflatten: dim"),
        (lambda: minifw.tensor(1.0).unflatten(0, (1,)), IndexError, "unflatten: a 0-d tensor"),
    ]:
        with pytest.raises(error, match=match):
            call()


def test_fill_diagonal_(dev):
    x = minifw.zeros(5, 2, device=dev)
    assert x.fill_diagonal_(1.0, wrap=True) is x and x._version == 1
    assert host(x).tolist() == [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1]]
    assert host(minifw.zeros(5, 2, device=dev).fill_diagonal_(1.0)).tolist() == \
        [[1, 0], [0, 1], [0, 0], [0, 0], [0, 0]]
    assert host(minifw.zeros(2, 3, dtype=minifw.int64, device=dev).fill_diagonal_(7, wrap=True)) \
        .tolist() == [[7, 0, 0], [0, 7, 0]]
    cube = minifw.zeros(3, 3, 3, device=dev).fill_diagonal_(2.0)
    assert cube.sum().item() == 6.0 and cube[1, 1, 1].item() == 2.0
    with pytest.raises(ValueError, match=r"fill_diagonal_: all dimensions .* shape \(2, 3, 2\)"):
        minifw.zeros(2, 3, 2).fill_diagonal_(1)
    with pytest.raises(ValueError, match="fill_diagonal_: the tensor must have at least 2 dim"):
        minifw.zeros(3).fill_diagonal_(1)
    with pytest.raises(TypeError, match="fill_diagonal_: fill_value must be a number, got str"):
        minifw.zeros(2, 2).fill_diagonal_("1")
    with pytest.raises(TypeError, match="fill_diagonal_: wrap must be a bool"):
        minifw.zeros(2, 2).fill_diagonal_(1, wrap=1)


def test_index_add(dev):
    x = minifw.zeros(3, 2, device=dev)
    index = minifw.tensor([0, 2, 0], device=dev)
    source = minifw.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=dev)
    assert host(x.index_add(0, index, source, alpha=2)).tolist() == [[12, 16], [0, 0], [6, 8]]
    assert x._version == 0 and x.index_add_(0, index, source) is x and x._version == 1
    assert host(x).tolist() == [[6, 8], [0, 0], [3, 4]]
    ints = minifw.zeros(2, 2, dtype=minifw.int64, device=dev)
    ints.index_add_(1, minifw.tensor([1], device=dev), minifw.ones(2, 1, dtype=minifw.int64,
                                                                   device=dev), alpha=3)
    assert host(ints).tolist() == [[0, 3], [0, 3]]
    for call, error, match in [
        (lambda: x.index_add(0, index, source.double()), TypeError, "index_add: source must have "
                                                                    "this tensor's dtype float32"),
        (lambda: x.index_add(0, index, source[:2]), ValueError, r"index_add: source must have shape "
                                                                r"\(3, 2\)"),
        (lambda: x.index_add(0, minifw.tensor([3], device=dev), source[:1]), IndexError,
         "index_add: index 3 is out of bounds"),
        (lambda: x.index_add(0, index.float(), source), TypeError, "index_add: index must hold "
                                                                   "integers"),
        (lambda: ints.index_add_(0, minifw.tensor([0], device=dev), ints[:1], alpha=0.5), TypeError,
         "index_add_: alpha must be"),
        (lambda: x.index_add(0, index, [1.0]), TypeError, "index_add: source must be a Tensor"),
    ]:
        with pytest.raises(error, match=match):
            call()


# ---- addcmul, addcdiv, lerp ----------------------------------------------------------------

def test_addcmul_addcdiv_lerp_values(dev):
    x = minifw.tensor([1.0, 2.0, 3.0], device=dev)
    t1, t2 = minifw.tensor([2.0, 4.0, 6.0], device=dev), minifw.tensor([4.0, 2.0, 1.0], device=dev)
    assert host(x.addcmul(t1, t2, value=0.5)).tolist() == [5.0, 6.0, 6.0]
    assert host(minifw.addcdiv(x, t1, t2, value=2)).tolist() == [2.0, 6.0, 15.0]
    assert host(x.lerp(t1, 0.5)).tolist() == [1.5, 3.0, 4.5]
    assert host(x.lerp(t1, 1.0)).tolist() == host(t1).tolist()  # the end exactly
    assert host(x.lerp(t1, minifw.tensor([0.0, 1.0, 0.25], device=dev))).tolist() == [1.0, 4.0, 3.75]
    assert host(x.lerp(t1, minifw.tensor(0.5, dtype=F64))).tolist() == [1.5, 3.0, 4.5]
    y = x.clone()
    for method, args in (("addcmul_", (t1, t2)), ("addcdiv_", (t1, t2)), ("lerp_", (t1, 0.5))):
        before = y._version
        assert getattr(y, method)(*args) is y and y._version == before + 1
    assert host(y).tolist() == [5.75, 8.0, 10.5]
    ints = minifw.tensor([1, 2], device=dev)
    assert host(ints.addcmul(ints, ints, value=2)).tolist() == [3, 10]


def test_addcmul_addcdiv_lerp_refuse_bad_arguments():
    x, i = minifw.ones(3), minifw.ones(3, dtype=minifw.int64)
    for call, error, match in [
        (lambda: x.addcdiv(i, i), TypeError, "addcdiv: integer division is not supported"),
        (lambda: i.addcmul(i, i, value=0.5), TypeError, "addcmul: value must be an int for integer"),
        (lambda: x.addcmul(x, 2.0), TypeError, "addcmul: tensor2 must be a Tensor, got float"),
        (lambda: x.addcmul(x, x, value="1"), TypeError, "addcmul: value must be a number"),
        (lambda: x.addcmul_(x, minifw.ones(2, 3)), ValueError, r"addcmul_: the result of shape "
                                                               r"\(2, 3\) does not fit"),
        (lambda: x.lerp(x.double(), 0.5), TypeError, "lerp: end must be a tensor of the input's "
                                                     "dtype float32, got float64"),
        (lambda: x.lerp(x, x.double()), TypeError, "lerp: weight must be a number or a tensor of "
                                                   "the input's dtype"),
        (lambda: i.lerp(i, 0.5), TypeError, "lerp: input must be a floating point tensor"),
        (lambda: x.lerp(x, "0.5"), TypeError, "lerp: weight must be a number or a tensor, got str"),
    ]:
        with pytest.raises(error, match=match):
            call()


# ---- in-place operations and autograd ----------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda t: t.index_add_(0, minifw.tensor([0]), minifw.ones(1, 3)),
    lambda t: t.addcmul_(t.detach(), t.detach()),
    lambda t: t.addcdiv_(t.detach(), t.detach() + 1),
    lambda t: t.lerp_(t.detach() * 2, 0.5),
    lambda t: t.fill_diagonal_(1.0),
], ids=["index_add_", "addcmul_", "addcdiv_", "lerp_", "fill_diagonal_"])
def test_in_place_forms_follow_pytorchs_rules(call):
    leaf = minifw.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        call(leaf)
    with minifw.no_grad():
        assert call(leaf) is leaf and leaf._version == 1
    y = leaf.exp()  # saved by exp for its backward
    call(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_forms_record_their_gradient():
    x = minifw.tensor(rand((3, 3)), dtype=F64, requires_grad=True)
    s = minifw.tensor(rand((1, 3), 1), dtype=F64, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(0.0).index_add_(0, minifw.tensor([1]), s, alpha=3)
    assert y.grad_fn is not None and y._version == 2
    y.sum().backward()
    assert host(x.grad).tolist() == [[0, 2, 2], [2, 0, 2], [2, 2, 0]]
    assert host(s.grad).tolist() == [[3.0, 3.0, 3.0]]


# ---- typed constructors and Size ----------------------------------------------------------------

@pytest.mark.parametrize("name, dtype", [("FloatTensor", minifw.float32), ("DoubleTensor", F64),
                                         ("LongTensor", minifw.int64), ("IntTensor", minifw.int32),
                                         ("BoolTensor", minifw.bool)])
def test_typed_constructors(name, dtype):
    cls = getattr(minifw, name)
    t = cls([[1, 0], [3, 4]])
    assert t.dtype == dtype and t.shape == (2, 2) and t.type() == f"minifw.{name}"
    assert isinstance(t, cls) and isinstance(t, minifw.Tensor)
    assert not isinstance(t.to("cudasim"), cls) and not isinstance(minifw.ones(1, dtype=minifw.int32
                                                                               if dtype != minifw.int32
                                                                               else F64), cls)
    sized = cls(2, 3)
    assert sized.shape == (2, 3) and sized.dtype == dtype and not sized.any()
    assert cls(minifw.Size([4])).shape == (4,) and cls().shape == (0,)
    assert cls((2, 3)).shape == (2,)  # a tuple is data, a Size is sizes, as PyTorch
    with pytest.raises(TypeError, match=f"Tensor: data must be a sequence"):
        cls(2.5)
    with pytest.raises(ValueError, match=f"{name}: a legacy constructor makes tensors on the CPU"):
        cls([1], device="cudasim")


def test_typed_constructor_truncates_floats_to_integers():
    assert minifw.LongTensor([1.7, -2.5]).tolist() == [1, -2]


def test_type_takes_a_typed_constructor():
    t = minifw.tensor([1.5, 2.0]).type(minifw.LongTensor)
    assert t.dtype == minifw.int64 and t.tolist() == [1, 2]
    assert minifw.ones(2, device="cudasim").type(minifw.DoubleTensor).device == devices.CPU


def test_size():
    s = minifw.Size([2, 3])
    assert s == (2, 3) and isinstance(s, tuple) and s.numel() == 6 and minifw.Size().numel() == 1
    assert repr(s) == "minifw.Size([2, 3])" and isinstance(s[1:], minifw.Size) and s[0] == 2
    assert isinstance(s + (4,), minifw.Size) and s + (4,) == (2, 3, 4)
    assert minifw.zeros(s).shape == s and minifw.Tensor(s).shape == (2, 3)
    assert minifw.ones(2, 3).shape == s  # .shape stays a tuple, equal to a Size
    with pytest.raises(TypeError, match="Size: sizes must be ints, got float"):
        minifw.Size([2.5])
    with pytest.raises(TypeError, match="Size: expected a sequence of ints, got int"):
        minifw.Size(3)


# ---- PyTorch's results -------------------------------------------------------------------------

def test_as_torch():
    torch = pytest.importorskip("torch")
    a, b, c = rand((2, 3, 4)), rand((4, 3), 1), rand((3, 3), 2)
    cases = [
        lambda m, x, y, z: m.einsum("bij,jk->bik", x, y),
        lambda m, x, y, z: m.einsum("...jk,kl", x, y),
        lambda m, x, y, z: m.einsum("ii", z),
        lambda m, x, y, z: m.einsum("ij,ij->i", z, z),
        lambda m, x, y, z: m.cdist(x, x[:1]),
        lambda m, x, y, z: m.cdist(z, y, p=0.7),
        lambda m, x, y, z: m.cdist(z, y, p=float("inf")),
        lambda m, x, y, z: m.cdist(z, y, p=0),
        lambda m, x, y, z: m.median(x),
        lambda m, x, y, z: m.median(x, 1).values,
        lambda m, x, y, z: m.median(x, -1, keepdim=True).indices,
        lambda m, x, y, z: m.nanmedian(m.where(x > 0.5, x * float("nan"), x), 2).values,
        lambda m, x, y, z: m.nanmedian(m.where(x > 0.5, x * float("nan"), x), 2).indices,
        lambda m, x, y, z: m.meshgrid(z[0], y[0], indexing="xy")[1],
        lambda m, x, y, z: x.unflatten(2, (2, -1)),
        lambda m, x, y, z: z.clone().fill_diagonal_(5.0),
        lambda m, x, y, z: z.index_add(1, m.tensor([2, 2, 0]), y[:3], alpha=0.5),
        lambda m, x, y, z: m.addcmul(z, y[:3], z, value=-0.25),
        lambda m, x, y, z: m.addcdiv(z, y[:3], z + 2, value=3),
        lambda m, x, y, z: m.lerp(z, y[:3], 0.7),
        lambda m, x, y, z: m.lerp(z, y[:3], z),
    ]
    for make in cases:
        mine = make(minifw, *(minifw.tensor(v) for v in (a, b, c)))
        theirs = make(torch, *(torch.tensor(v) for v in (a, b, c)))
        np.testing.assert_allclose(host(mine), theirs.numpy(), rtol=1e-12, atol=1e-12)
        assert tuple(mine.shape) == tuple(theirs.shape)


def test_gradients_as_torch():
    torch = pytest.importorskip("torch")
    a, b = rand((3, 4)), rand((4, 4), 1)
    a.reshape(-1)[np.argmax(a)] = np.sort(a, axis=None)[5]  # a tie at median()
    cases = [
        lambda m, x, y: m.einsum("ij,jj->ij", x, y),
        lambda m, x, y: m.cdist(x, y, p=1.5) + m.cdist(x, x, p=2).sum(),  # x with itself: zeros
        lambda m, x, y: m.cdist(x, y.round(), p=float("inf")) + m.cdist(x, y, p=0.5),
        lambda m, x, y: x.median() + x.median(0).values.sum(),
        lambda m, x, y: m.lerp(x, y[:3], y[1:]) + x.addcdiv(y[:3], y[1:] + 2),
        lambda m, x, y: x.index_add(0, m.tensor([1, 1, 0, 2]), y, alpha=2),
    ]
    for make in cases:
        grads = []
        for m in (minifw, torch):
            x, y = (m.tensor(v, requires_grad=True) for v in (a, b))
            (make(m, x, y) * m.tensor(rand(make(m, x, y).shape, 3))).sum().backward()
            grads.append([np.zeros(t.shape) if t.grad is None else host(t.grad) if m is minifw
                          else t.grad.numpy() for t in (x, y)])
        for mine, theirs in zip(*grads):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
