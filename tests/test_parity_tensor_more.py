"""PyTorch parity of Tensor indexing and operations found to differ: where an int or an
empty Ellipsis stands among index arrays (PyTorch selects first, so it does not separate
them), where a bool scalar stands among them (an index array for PyTorch, beside its
selects), a short list of lists as a tuple of indices, a 0-d integer tensor as an int,
`in`, atan2's gradient at the origin, broadcast_to's sizes as arguments and pow of two
bool operands.

Expectations are NumPy's or hand-computed; where torch is importable a companion test
compares with it too (it is not a dependency)."""
import numpy as np
import pytest

import minifw
from minifw import devices
from targets import cuda_available, emulate_cuda


@pytest.fixture(params=["cpu", "cuda"])
def dev(request, monkeypatch):
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


def host(t):
    return devices.to_device(t.detach()._data, devices.CPU)


def base(dev=None):
    return minifw.arange(120.0, device=dev).reshape(3, 4, 5, 2)


A = np.arange(120.0, dtype=np.float32).reshape(3, 4, 5, 2)


# ---- ints and index arrays ----------------------------------------------------------------

def test_int_before_a_slice_does_not_separate_index_arrays(dev):
    # PyTorch: x[0, :, [2, 1, 0]] is x[0][:, [2, 1, 0]] (NumPy would put the 3 first)
    got = base(dev)[0, :, [2, 1, 0]]
    assert got.shape == (4, 3, 2)
    np.testing.assert_array_equal(host(got), A[0][:, [2, 1, 0]])
    img = minifw.arange(24.0, device=dev).reshape(2, 3, 4)
    np.testing.assert_array_equal(host(img[0, ..., [2, 1, 0]]),
                                  np.arange(24.0).reshape(2, 3, 4)[0][..., [2, 1, 0]])


@pytest.mark.parametrize("index, expected", [
    ((0, slice(1, 3), [0, 3]), A[0][1:3, [0, 3]]),
    ((slice(None), 1, slice(None), [1, 0]), A[:, 1][:, :, [1, 0]]),
    ((None, [0, 1], None, 1), A[None, [0, 1], None][:, :, :, 1]),
    ((1, slice(None), [[0], [3]], [1, 0]), np.moveaxis(A[1, :, [[0], [3]], [1, 0]], 2, 0)),
    ((2, slice(None), np.array([True, False, True, False, True])), A[2][:, [0, 2, 4]]),
    # an Ellipsis that stands for no dims separates nothing either
    ((slice(None), [0, 2], Ellipsis, [1, 3], [0, 1]), np.moveaxis(A[:, [0, 2], ..., [1, 3], [0, 1]], 0, 1)),
])
def test_mixed_index_places_the_indexed_dims_as_pytorch(index, expected):
    got = base()[index]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(host(got), expected)


def test_mixed_index_assignment_and_gradient():
    x = base().requires_grad_()
    y = x * 1
    picked = y[0, :, [1, 0]]
    assert picked.shape == (4, 2, 2)
    weight = minifw.arange(16.0).reshape(4, 2, 2)
    (picked * weight).sum().backward()
    expected = np.zeros_like(A)
    expected[0][:, [1, 0]] = np.arange(16.0).reshape(4, 2, 2)
    np.testing.assert_array_equal(host(x.grad), expected)

    z = base()
    z[0, :, [1, 0]] = minifw.tensor([10.0, 20.0])  # broadcast over PyTorch's (4, 2, 2)
    want = A.copy()
    want[0][:, [1, 0]] = [10.0, 20.0]
    np.testing.assert_array_equal(host(z), want)

    v = minifw.zeros(4, 2, 2, requires_grad=True)
    w = (base() * 1)
    w[0, :, [1, 0]] = v * 3
    w.sum().backward()
    np.testing.assert_array_equal(host(v.grad), np.full((4, 2, 2), 3.0))


def test_mixed_index_checks_a_mask_against_its_dims():
    with pytest.raises(IndexError):
        base()[0, :, np.array([True, False, True])]  # dim 2 has 5 elements


def test_indices_numpy_places_alike_are_unchanged():
    x = base()
    for index in [(0, [1, 2]), ([1, 2], 0), (slice(None), 0, [1, 2]), ([0, 1], slice(None), 0),
                  ([0, 1], slice(None), [1, 0]), (0, slice(None), 1)]:
        np.testing.assert_array_equal(host(x[index]), A[index])
    for index in [(slice(None), [0, 1], 2, [1, 0]), (slice(0, 3, 2), [[0], [3]], 1, [1, 0])]:
        np.testing.assert_array_equal(host(x[index]), A[index])


def test_short_list_holding_lists_is_a_tuple_of_indices():
    x = base()
    with pytest.warns(UserWarning, match="is taken as a tuple of indices"):  # deprecated, as PyTorch warns
        np.testing.assert_array_equal(host(x[[[0, 1], [1, 0]]]), A[[0, 1], [1, 0]])
    with pytest.warns(UserWarning, match="is taken as a tuple of indices"):
        np.testing.assert_array_equal(host(x[[0, slice(1, 3)]]), A[0, 1:3])
    np.testing.assert_array_equal(host(x[[0, 1]]), A[[0, 1]])  # ints only: an index array
    y = base()
    with pytest.warns(UserWarning, match="is taken as a tuple of indices"):
        y[[[0, 2], [3, 1]]] = -1.0
    assert (host(y)[[0, 2], [3, 1]] == -1).all() and (host(y) == -1).sum() == 20


def test_zero_dim_integer_tensor_index_is_a_view():
    x = minifw.zeros(3, 2)
    x[minifw.tensor(1)].fill_(5.0)
    np.testing.assert_array_equal(host(x), [[0, 0], [5, 5], [0, 0]])
    np.testing.assert_array_equal(host(base()[minifw.tensor(0), :, [1, 0]]), A[0][:, [1, 0]])


# ---- bool scalars among the indices ---------------------------------------------------------
# For PyTorch a bool scalar (True, False, a 0-d bool tensor) is an index array over a new dim of
# size 1 (or 0): advanced like a mask, while an int stays a select; so neither an int nor a
# 0-d integer tensor separates it from the other advanced indices.

BOOL_SCALAR_INDICES = [
    # (index for minifw, with "T"/"F" for 0-d bool tensors; expected result from A)
    ((1, slice(None), "T"), A[1][:, None]),
    ((1, slice(None), True), A[1][:, None]),
    ((1, slice(None), "F"), A[1][:, None][:, :0]),
    ((slice(None), 1, None, np.zeros(5, bool), False), A[:, 1][:, None, :0]),
    ((0, slice(1, None), "T", 1, [1, 0]), A[0][1:, 1, [1, 0]]),
    ((None, [2, 2], "T", Ellipsis, 1), A[[2, 2], :, :, 1][None]),
    ((slice(None), 2, "T", np.array([False, True, True, False, False])), A[:, 2][:, [1, 2]]),
]


def _bool_scalar_index(index, lib, dev=None):
    def item(i):
        if isinstance(i, str):
            return lib.tensor(i == "T", device=dev) if dev is not None else lib.tensor(i == "T")
        if isinstance(i, np.ndarray):
            return lib.tensor(i, device=dev) if dev is not None else lib.tensor(i)
        return i
    return tuple(item(i) for i in index)


@pytest.mark.parametrize("index, expected", BOOL_SCALAR_INDICES)
def test_bool_scalar_among_indices_is_placed_as_pytorch(dev, index, expected):
    got = base(dev)[_bool_scalar_index(index, minifw, dev)]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(host(got), expected)


def test_bool_scalar_among_indices_assignment_and_gradient(dev):
    index = _bool_scalar_index((1, slice(None), "T", 0, [1, 0]), minifw, dev)
    x = base(dev).requires_grad_()
    picked = (x * 1)[index]  # PyTorch: x[1][:, None][:, [0], 0, [1, 0]], of shape (4, 2)
    assert picked.shape == (4, 2)
    np.testing.assert_array_equal(host(picked), A[1][:, 0, [1, 0]])
    weight = minifw.arange(8.0, device=dev).reshape(4, 2)
    (picked * weight).sum().backward()
    expected = np.zeros_like(A)
    expected[1][:, 0, [1, 0]] = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(host(x.grad), expected)

    v = minifw.zeros(4, 1, requires_grad=True, device=dev)
    w = base(dev) * 1
    w[index] = v * 3 + minifw.arange(4.0, device=dev).reshape(4, 1)  # broadcast over (4, 2)
    want = A.copy()
    want[1][:, 0, [1, 0]] = np.arange(4.0).reshape(4, 1)
    np.testing.assert_array_equal(host(w), want)
    w.sum().backward()
    np.testing.assert_array_equal(host(v.grad), np.full((4, 1), 6.0))


@pytest.mark.parametrize("index, expected", BOOL_SCALAR_INDICES)
def test_bool_scalar_among_indices_matches_torch(index, expected):
    torch = pytest.importorskip("torch")
    want = torch.tensor(A)[_bool_scalar_index(index, torch)]
    got = base()[_bool_scalar_index(index, minifw)]
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(host(got), want.numpy())


# ---- other operations ---------------------------------------------------------------------

def test_contains():
    x = minifw.arange(6).reshape(2, 3)
    assert 5 in x and 2.0 in x and 7 not in x
    assert minifw.tensor([0, 1, 2]) in x and minifw.tensor([9, 1, 9]) in x
    assert minifw.tensor([9, 9, 9]) not in x
    with pytest.raises(TypeError):
        "a" in x


def test_atan2_gradient_is_zero_at_the_origin():
    y = minifw.tensor([0.0, 0.0, 1.0, 3.0], dtype=minifw.float64, requires_grad=True)
    x = minifw.tensor([0.0, -0.0, 0.0, 4.0], dtype=minifw.float64, requires_grad=True)
    minifw.atan2(y, x).sum().backward()
    np.testing.assert_allclose(host(y.grad), [0.0, 0.0, 0.0, 4 / 25])
    np.testing.assert_allclose(host(x.grad), [0.0, 0.0, -1.0, -3 / 25])
    y2 = minifw.tensor([0.0, 3.0], dtype=minifw.float64, requires_grad=True)
    x2 = minifw.tensor([0.0, 4.0], dtype=minifw.float64, requires_grad=True)
    gy, = minifw.autograd.grad(minifw.atan2(y2, x2).sum(), y2, create_graph=True)
    np.testing.assert_allclose(host(gy), [0.0, 4 / 25])
    gy.sum().backward()  # finite: the origin's zero is a constant there
    assert np.isfinite(host(y2.grad)).all() and np.isfinite(host(x2.grad)).all()


def test_broadcast_to_takes_sizes_as_arguments():
    x = minifw.arange(4.0)
    assert x.broadcast_to(3, 4).shape == (3, 4)
    assert x.broadcast_to((3, 4)).shape == (3, 4)
    assert minifw.broadcast_to(x, (2, 4)).shape == (2, 4)
    with pytest.raises(ValueError):
        x.broadcast_to(3, 5)


def test_pow_of_two_bool_operands_is_refused():
    b = minifw.tensor([True, False])
    for f in (lambda: b ** b, lambda: True ** b, lambda: b.pow(b)):
        with pytest.raises(TypeError, match="bool"):
            f()
    assert (b ** 2).dtype == minifw.int64 and (b ** 2.5).dtype == minifw.float32
    np.testing.assert_array_equal(host(2 ** b), [2, 1])


# ---- against torch ------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
def test_mixed_indices_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    indices = [
        lambda T: (0, slice(None), [1, 0]), lambda T: (slice(None), 2, slice(1, 4), T.tensor([1, 0])),
        lambda T: (None, [0, 1], None, 1), lambda T: (T.tensor(1), slice(None), [[0], [2]], [1, 0]),
        lambda T: (slice(None), [0, 2], Ellipsis, [1, 3], [0, 1]),
        lambda T: (1, Ellipsis, T.tensor([True, False])), lambda T: [[0, 1], [1, 0]],
        lambda T: (-1, slice(None, None, 2), slice(None), [-1, 0]),
    ]
    data = rng.standard_normal((3, 4, 5, 2))
    for index in indices:
        t = torch.tensor(data)[index(torch)]
        m = minifw.tensor(data)[index(minifw)]
        assert tuple(t.shape) == m.shape
        np.testing.assert_array_equal(t.numpy(), host(m))
        tx, mx = torch.tensor(data), minifw.tensor(data)
        tx[index(torch)] = torch.arange(t.numel(), dtype=tx.dtype).reshape(t.shape)
        mx[index(minifw)] = minifw.arange(m.numel(), dtype=mx.dtype).reshape(m.shape)
        np.testing.assert_array_equal(tx.numpy(), host(mx))


# ---- printing -----------------------------------------------------------------------------

@pytest.fixture
def print_options():
    from minifw.tensor import _PRINT_OPTIONS
    saved = dict(_PRINT_OPTIONS)
    yield
    _PRINT_OPTIONS.update(saved)


@pytest.mark.parametrize("make, text", [
    (lambda: minifw.tensor([1.0, 2.5, 3.0]), "tensor([1.0000, 2.5000, 3.0000])"),
    (lambda: minifw.tensor([0.1, 0.25]), "tensor([0.1000, 0.2500])"),
    (lambda: minifw.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: minifw.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: minifw.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
     "tensor([nan, inf, -inf, 1.])"),
    (lambda: minifw.tensor([-0.0, 0.0]), "tensor([-0., 0.])"),
    (lambda: minifw.tensor([1.23456789, 100.5]), "tensor([  1.2346, 100.5000])"),
    (lambda: minifw.tensor(2.5, dtype=minifw.float64), "tensor(2.5000, dtype=minifw.float64)"),
    (lambda: minifw.tensor(1e-8), "tensor(1.0000e-08)"),
    (lambda: minifw.tensor([True]), "tensor([True])"),
    (lambda: minifw.tensor([True, False]), "tensor([ True, False])"),
    (lambda: minifw.tensor([-3, 20]), "tensor([-3, 20])"),
    (lambda: minifw.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: minifw.ones(2, 2) / 3, "tensor([[0.3333, 0.3333],\n        [0.3333, 0.3333]])"),
    (lambda: minifw.arange(2000).reshape(40, 50),
     "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
     "        [  50,   51,   52,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
     "        ...,\n"
     "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
     "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
     "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])"),
    (lambda: minifw.arange(30.0),
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
])
def test_repr_as_pytorch(make, text):
    assert repr(make()) == text


def test_repr_follows_print_options_as_pytorch(print_options):
    minifw.set_printoptions(precision=2)
    assert repr(minifw.tensor([1.23456, 2.5])) == "tensor([1.23, 2.50])"
    minifw.set_printoptions(threshold=5)
    assert repr(minifw.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    minifw.set_printoptions(sci_mode=True, precision=1)
    assert repr(minifw.tensor([1.5, 200.0])) == "tensor([1.5e+00, 2.0e+02])"
    minifw.set_printoptions(profile="default", linewidth=20)
    assert repr(minifw.arange(6.0)) == "tensor([0., 1., 2.,\n        3., 4., 5.])"


def test_repr_against_torch(print_options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(7) * 1e6, rng.standard_normal(5) * 1e-6,
              rng.integers(-9, 9, (2, 3)).astype(float), rng.standard_normal((30, 40)),
              np.where(rng.random(6) < 0.5, np.nan, rng.standard_normal(6)), rng.integers(-500, 500, (4, 5)),
              rng.random((2, 3)) < 0.5, np.zeros((3, 2)), rng.standard_normal(1001)]
    try:
        for options in [dict(), dict(precision=2), dict(linewidth=40), dict(sci_mode=False)]:
            torch.set_printoptions(profile="default", **options)
            minifw.set_printoptions(profile="default", **options)
            for a in arrays:
                ours = repr(minifw.tensor(a, dtype=minifw.float32 if a.dtype == float else None))
                theirs = repr(torch.tensor(a, dtype=torch.float32 if a.dtype == float else None))
                assert ours == theirs
    finally:
        torch.set_printoptions(profile="default")


# ---- reductions ---------------------------------------------------------------------------

def test_logsumexp_of_integers_is_in_the_default_float_dtype():
    got = minifw.tensor([1, 2]).logsumexp(0)
    assert got.dtype == minifw.float32
    np.testing.assert_allclose(host(got), np.log(np.e + np.e ** 2), rtol=1e-6)
    got = minifw.logsumexp(minifw.tensor([[True, False]]), 1, keepdim=True)
    assert got.shape == (1, 1) and got.dtype == minifw.float32
    np.testing.assert_allclose(host(got), [[np.log(np.e + 1)]], rtol=1e-6)


def test_norm_nuc_is_the_nuclear_norm():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4))
    x = minifw.tensor(a[0], requires_grad=True)
    n = x.norm(p="nuc")
    np.testing.assert_allclose(n.item(), np.linalg.svd(a[0], compute_uv=False).sum(), rtol=1e-12)
    n.backward()
    u, _, vt = np.linalg.svd(a[0], full_matrices=False)
    np.testing.assert_allclose(host(x.grad), u @ vt, rtol=1e-10, atol=1e-12)  # d|A|_* / dA = U V^T
    batched = minifw.norm(minifw.tensor(a), p="nuc", dim=(1, 2))
    np.testing.assert_allclose(host(batched), np.linalg.svd(a, compute_uv=False).sum(-1), rtol=1e-12)
    assert minifw.tensor(a).norm(p="nuc", dim=(0, 2), keepdim=True).shape == (1, 3, 1)
    with pytest.raises(ValueError):
        minifw.tensor(a).norm(p="nuc")  # three dims: name the two


# ---- random -------------------------------------------------------------------------------

def test_fork_rng_puts_the_global_state_back():
    state = minifw.get_rng_state()
    try:
        minifw.manual_seed(0)
        first = minifw.rand(3)
        minifw.manual_seed(0)
        with minifw.random.fork_rng():
            minifw.rand(5)
            minifw.randn(2)
        np.testing.assert_array_equal(host(minifw.rand(3)), host(first))
        minifw.manual_seed(0)
        with minifw.random.fork_rng(devices=[], enabled=False):
            minifw.rand(3)
        assert not np.array_equal(host(minifw.rand(3)), host(first))
    finally:
        minifw.set_rng_state(state)


# ---- deprecated overloads -----------------------------------------------------------------

def test_deprecated_scalar_first_overloads_work_with_a_warning():
    ones = minifw.ones(3)
    p = minifw.zeros(3)
    with pytest.warns(UserWarning, match=r"add_\(alpha, other\) with the number first is deprecated; "
                                         r"write add_\(other, alpha=alpha\)"):
        p.add_(-0.5, ones)  # as older training loops write p.data.add_(-lr, p.grad)
    np.testing.assert_array_equal(host(p), [-0.5] * 3)
    with pytest.warns(UserWarning, match="sub_"):
        p.sub_(2, ones)
    np.testing.assert_array_equal(host(p), [-2.5] * 3)
    with pytest.warns(UserWarning, match="add"):
        np.testing.assert_array_equal(host(minifw.add(minifw.zeros(2), 3, minifw.ones(2))), [3, 3])
    with pytest.warns(UserWarning, match="addcmul_"):
        q = minifw.zeros(2).addcmul_(2, minifw.full((2,), 3.0), minifw.full((2,), 4.0))
    np.testing.assert_array_equal(host(q), [24, 24])
    with pytest.warns(UserWarning, match="addcdiv"):
        q = minifw.addcdiv(minifw.zeros(2), 2, minifw.ones(2), minifw.full((2,), 4.0))
    np.testing.assert_array_equal(host(q), [0.5, 0.5])
    with pytest.raises(TypeError):
        minifw.zeros(2).add(ones[:2], ones[:2])  # two tensors: not the old overload


def test_add_and_sub_of_a_number_and_a_tensor_apply_alpha():
    np.testing.assert_array_equal(host(minifw.add(2, minifw.ones(2), alpha=3)), [5, 5])
    np.testing.assert_array_equal(host(minifw.sub(2, minifw.ones(2), alpha=3)), [-1, -1])


# ---- unfold: a view of overlapping windows ------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "cudasim", "cuda"])
def test_unfold_is_a_view(device, monkeypatch):
    if device == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    x = minifw.arange(12.0, device=device).reshape(3, 4)
    windows = x.unfold(1, 2, 2)
    assert windows.shape == (3, 2, 2) and windows.stride() == (4, 2, 1) and windows.is_contiguous()
    assert windows.device == x.device
    windows.mul_(-1)  # written through the view: the tensor changes, as in PyTorch
    np.testing.assert_array_equal(host(x), -np.arange(12.0).reshape(3, 4))
    overlapping = x.unfold(0, 2, 1)  # windows share elements
    assert overlapping.shape == (2, 4, 2) and overlapping.stride() == (4, 1, 4)
    x.add_(100)
    np.testing.assert_array_equal(host(overlapping)[1, :, 0], host(x)[1])
    assert overlapping._version == x._version and overlapping._base is x._base  # arange's
    b = minifw.arange(6.0, device=device, requires_grad=True) * 1
    v = b.unfold(0, 2, 2)
    w = v * v  # saves v
    b.mul_(2)  # changes v's memory
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


def test_unfold_gradient_adds_every_window_an_element_is_in():
    from gradcheck import gradcheck
    x = minifw.tensor(np.random.default_rng(0).standard_normal((2, 7, 3)), requires_grad=True)
    gradcheck(lambda t: t.unfold(1, 3, 2).sin(), [x])
    gradcheck(lambda t: t.unfold(1, 3, 1) * 2, [x])
    gradcheck(lambda t: t.unfold(-1, 2, 3), [x])
    y = minifw.ones(5, requires_grad=True)
    y.unfold(0, 3, 1).sum().backward()  # element i is in min(i + 1, 3, 5 - i) windows
    np.testing.assert_array_equal(host(y.grad), [1, 2, 3, 2, 1])


def test_unfold_in_place_on_a_saved_input_is_caught():
    x = minifw.arange(6.0, requires_grad=True) * 1
    y = x * x
    x.unfold(0, 2, 2).mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- scatter's reduce='multiply', unique over a dim -------------------------------------------

def test_scatter_multiply_multiplies_every_value_sent_to_a_place():
    x = minifw.full((2, 4), 2.0)
    index = minifw.tensor([[0, 1, 2, 0]])
    got = x.scatter(1, index, minifw.tensor([[3.0, 4.0, 5.0, 6.0]]), reduce="multiply")
    np.testing.assert_array_equal(host(got), [[2 * 3 * 6, 8, 10, 2], [2, 2, 2, 2]])
    np.testing.assert_array_equal(host(x.scatter(1, index, 1.5, reduce="multiply")),
                                  [[4.5, 3, 3, 2], [2, 2, 2, 2]])
    y = x.clone()
    y.scatter_(0, minifw.tensor([[1, 1]]), minifw.tensor([[10.0, 10.0, 9.0]]), reduce="multiply")
    np.testing.assert_array_equal(host(y), [[2, 2, 2, 2], [20, 20, 2, 2]])  # src beyond index unused
    w = minifw.tensor([[1.0, 2.0, 3.0]], dtype=minifw.float64, requires_grad=True)
    from gradcheck import gradcheck
    gradcheck(lambda s: minifw.ones(2, 3, dtype=minifw.float64).scatter(
        0, minifw.tensor([[1, 0, 1]]), s, reduce="multiply"), [w])


def test_unique_over_a_dim_gives_the_distinct_slices():
    a = np.array([[1, 2, 3], [1, 2, 3], [0, 5, 1], [1, 2, 3]])
    values, inverse, counts = minifw.tensor(a).unique(dim=0, return_inverse=True, return_counts=True)
    assert values.tolist() == [[0, 5, 1], [1, 2, 3]]
    assert inverse.tolist() == [1, 1, 0, 1] and counts.tolist() == [1, 3]
    values, inverse = minifw.unique(minifw.tensor(a.T), dim=-1, return_inverse=True)
    assert values.tolist() == [[0, 1], [5, 2], [1, 3]] and inverse.tolist() == [1, 1, 0, 1]
    assert minifw.zeros(0, 3).unique(dim=0).shape == (0, 3)
    with pytest.raises(ValueError, match="slices along dim 0 of a tensor of shape \\(2, 0\\) are empty"):
        minifw.zeros(2, 0).unique(dim=0)
    with pytest.raises(IndexError, match="a 0-d tensor has no dimension 0"):
        minifw.tensor(3.0).unique(dim=0)
