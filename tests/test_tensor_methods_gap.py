"""The Tensor methods PyTorch users call that minifw added last (mm, bmm, mv, addr, the
in-place shape changes, introspection, in-place comparisons and logic, random fills, fmax,
cov, histogram, index_put, the incomplete gamma and polygamma functions, the linalg
methods, ...): values against PyTorch (when installed) or a NumPy reference on "cpu" and
"cudasim", float64 finite-difference gradients, version bumps and bad arguments."""
import math
import warnings

import numpy as np
import pytest

import minifw
from minifw import devices
from test_tensor_ops_added import device_gradcheck, host, rand

F64 = minifw.float64
NAN = float("nan")


@pytest.fixture(params=["cpu", "cudasim"])
def dev(request):
    return devices.get(request.param)


def torch_or_skip():
    return pytest.importorskip("torch")


def t(a, dev="cpu", **kw):
    return minifw.tensor(a, device=dev, **kw)


def both(fn, *arrays, dev="cpu", rtol=1e-10, atol=1e-12, **kw):
    """fn of minifw tensors on dev and of torch tensors, compared (tuples element by element)."""
    torch = torch_or_skip()
    got = fn(*(t(a, dev, **kw) for a in arrays))
    want = fn(*(torch.tensor(a) for a in arrays))
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        w = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
        assert host(g).shape == w.shape
        np.testing.assert_allclose(host(g), w, rtol=rtol, atol=atol)


SHAPES_2D = [(3, 4), (1, 1), (0, 3), (5, 0), (7, 2)]


# ---- products and shapes -----------------------------------------------------------------

@pytest.mark.parametrize("m, k, n", [(3, 4, 2), (1, 1, 1), (0, 3, 2), (2, 0, 3), (5, 7, 1)])
def test_mm_bmm_mv_addr_match_pytorch(dev, m, k, n):
    a, b, v, w = rand((m, k)), rand((k, n), 1), rand((k,), 2), rand((n,), 3)
    both(lambda x, y: x.mm(y), a, b, dev=dev)
    both(lambda x, y: x.bmm(y), rand((2, m, k)), rand((2, k, n), 1), dev=dev)
    both(lambda x, y: x.mv(y), a, v, dev=dev)
    both(lambda c, x, y: c.addr(x, y, beta=0.5, alpha=2), rand((m, n), 4), rand((m,), 5), w, dev=dev)
    both(lambda x: x.reshape_as(x.T), a, dev=dev)


def test_products_gradients(dev):
    device_gradcheck(lambda x, y: x.mm(y), [rand((3, 4)), rand((4, 2), 1)], dev)
    device_gradcheck(lambda x, y: x.bmm(y), [rand((2, 3, 4)), rand((2, 4, 2), 1)], dev)
    device_gradcheck(lambda x, y: x.mv(y), [rand((3, 4)), rand((4,), 1)], dev)
    device_gradcheck(lambda c, x, y: c.addr(x, y, beta=0.5, alpha=2),
                     [rand((3, 1)), rand((3,), 1), rand((2,), 2)], dev)


def test_product_errors():
    with pytest.raises(ValueError, match="mm: mat1 and mat2 shapes"):
        minifw.ones(2, 3).mm(minifw.ones(2, 3))
    with pytest.raises(ValueError, match="mat2 must be a 2-D"):
        minifw.ones(2, 3).mm(minifw.ones(3))
    with pytest.raises(ValueError, match="bmm: batch1"):
        minifw.ones(2, 2, 3).bmm(minifw.ones(3, 3, 2))
    with pytest.raises(ValueError, match="mv: vec must be a 1-D"):
        minifw.ones(2, 3).mv(minifw.ones(3, 1))
    with pytest.raises(ValueError, match="addr: vec2"):
        minifw.ones(2, 3).addr(minifw.ones(2), minifw.ones(3, 1))


def test_adjoint_mH_H_are_transposes():
    x = minifw.tensor(rand((2, 3, 4)))
    assert np.array_equal(host(x.mH), host(x).swapaxes(-1, -2))
    assert np.array_equal(host(x.adjoint()), host(x).swapaxes(-1, -2))
    m = minifw.tensor(rand((3, 4)))
    assert np.array_equal(host(m.H), host(m).T)
    assert minifw.tensor(2.0).H.item() == 2.0
    with pytest.raises(ValueError, match="adjoint"):
        minifw.ones(3).adjoint()
    with pytest.raises(ValueError, match="H: only defined for matrices"):
        x.H


@pytest.mark.parametrize("name, args, shape", [
    ("squeeze_", (), (2, 3)), ("squeeze_", (1,), (2, 3)), ("unsqueeze_", (0,), (1, 2, 1, 3)),
    ("unsqueeze_", (-1,), (2, 1, 3, 1)), ("t_", (), None), ("transpose_", (0, 2), (3, 1, 2)),
    ("swapdims_", (0, 1), (1, 2, 3)), ("swapaxes_", (-1, 0), (3, 1, 2))])
def test_inplace_shape_changes(dev, name, args, shape):
    start = (2, 1, 3) if name != "t_" else (2, 3)
    a = rand(start)
    x = t(a, dev)
    before = x._version
    view_first = x.view(-1)
    assert getattr(x, name)(*args) is x
    assert x._version == before + 1
    torch = torch_or_skip()
    want = getattr(torch.tensor(a), name)(*args)
    assert x.shape == tuple(want.shape)
    assert np.array_equal(host(x), want.numpy())
    assert x.stride() == want.stride()
    with minifw.no_grad():
        view_first[0] = 5.0  # the memory is still the one earlier views share
    assert host(x).flat[0] == 5.0


def test_inplace_shape_change_autograd(dev):
    leaf = t(rand((2, 3)), dev, dtype=F64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.t_()
    y = leaf * 2
    y.t_().unsqueeze_(0)
    assert y.shape == (1, 3, 2)
    (y * t(rand((1, 3, 2), 3), dev)).sum().backward()
    np.testing.assert_allclose(host(leaf.grad), 2 * rand((1, 3, 2), 3)[0].T)
    # a graph that saved the tensor sees the version step, as PyTorch's
    z = leaf * 1
    w = z * z
    z.squeeze_()
    with pytest.raises(RuntimeError):
        w.sum().backward()
    device_gradcheck(lambda x: (x * 1).transpose_(0, 1).unsqueeze_(1), [rand((2, 3))], dev)


# ---- introspection -------------------------------------------------------------------------

def test_introspection_matches_pytorch():
    torch = torch_or_skip()
    a = np.arange(24.0).reshape(2, 3, 4)
    for f in (lambda x: x, lambda x: x.transpose(0, 2), lambda x: x[1:, ::2, 1:3],
              lambda x: x[1], lambda x: x.select(2, 3)):
        x, y = f(minifw.tensor(a)), f(torch.tensor(a))
        assert x.stride() == y.stride()
        assert x.stride(-1) == y.stride(-1)
        assert x.storage_offset() == y.storage_offset()
    x = minifw.tensor(a)
    assert x[1, 2:].data_ptr() - x.data_ptr() == 20 * 8
    assert (x.nbytes, x.itemsize) == (24 * 8, 8)
    assert x.is_cpu and x.get_device() == -1
    assert not x.is_complex() and x.is_signed() and not minifw.tensor([True]).is_signed()
    assert minifw.tensor([2.0]).is_nonzero() and not minifw.tensor(0).is_nonzero()
    with pytest.raises(ValueError, match="is_nonzero"):
        minifw.ones(2).is_nonzero()
    assert x.is_same_size(minifw.zeros(2, 3, 4)) and not x.is_same_size(minifw.zeros(2))
    assert not (x.is_inference() or x.is_sparse or x.is_quantized or x.is_meta or x.is_pinned())
    assert x.pin_memory() is x
    assert not x.is_shared() and x.share_memory_() is x and x.is_shared()
    assert minifw.tensor(3).stride() == ()
    with pytest.raises(IndexError, match="stride"):
        minifw.tensor(3).stride(0)
    cudasim = minifw.ones(2, device="cudasim")
    assert not cudasim.is_cpu and cudasim.get_device() == 0


def test_new_legacy_constructor(dev):
    x = minifw.ones(2, dtype=minifw.int64, device=dev)
    n = x.new(2, 3)
    assert (n.shape, n.dtype, n.device) == ((2, 3), minifw.int64, dev)
    assert x.new().shape == (0,)
    d = x.new([1, 2])
    assert d.dtype == minifw.int64 and host(d).tolist() == [1, 2]


def test_apply_and_map():
    x = minifw.tensor([1.0, 2.0, 3.0])
    v = x._version
    assert x.apply_(lambda e: e * e + 1) is x and host(x).tolist() == [2.0, 5.0, 10.0]
    assert x._version == v + 1
    x.map_(minifw.tensor([1.0]), lambda a, b: a - b)
    assert host(x).tolist() == [1.0, 4.0, 9.0]
    with pytest.raises(TypeError, match="only implemented on CPU"):
        minifw.ones(2, device="cudasim").apply_(abs)
    with pytest.raises(TypeError, match="callable"):
        x.apply_(3)


@pytest.mark.parametrize("name, dtype", [("byte", "uint8"), ("char", "int8"), ("short", "int16"),
                                         ("half", "float16"), ("bfloat16", "bfloat16")])
def test_missing_dtypes_refused(name, dtype):
    with pytest.raises(TypeError, match=f"minifw has no {dtype} tensors; its dtypes are .*float32"):
        getattr(minifw.ones(2), name)()


# ---- in-place comparisons, logic, arithmetic -----------------------------------------------

COMPARE = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
           "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("name", COMPARE)
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_inplace_comparisons_match_pytorch(dev, name, dtype):
    torch = torch_or_skip()
    a = np.array([[0, 1, 2], [2, 0, -1]]).astype(dtype)
    b = np.array([2, 1, 0]).astype(dtype)
    x = t(a, dev)
    v = x._version
    getattr(x, name)(t(b, dev))
    assert x._version == v + 1 and x.dtype == a.dtype
    want = getattr(torch.tensor(a), name)(torch.tensor(b))
    assert np.array_equal(host(x), want.numpy())
    if dtype != "bool" and not name.startswith("logical"):
        y = t(a, dev)
        getattr(y, name)(1)
        assert np.array_equal(host(y), getattr(torch.tensor(a), name)(1).numpy())


def test_inplace_logic_and_bits(dev):
    torch = torch_or_skip()
    a, b = np.array([5, -3, 0, 12]), np.array([3, 6, -1, 7])
    for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_"):
        x = t(a, dev)
        getattr(x, name)(t(b, dev))
        assert np.array_equal(host(x), getattr(torch.tensor(a), name)(torch.tensor(b)).numpy())
    for name in ("bitwise_not_", "logical_not_"):
        x = t(a, dev)
        getattr(x, name)()
        assert np.array_equal(host(x), getattr(torch.tensor(a), name)().numpy())
    shifts = np.array([0, 1, 63, 70])
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        for dtype in ("int64", "int32"):
            want = getattr(torch.tensor(a.astype(dtype)), name)(torch.tensor(shifts.astype(dtype)))
            got = getattr(t(a.astype(dtype), dev), name)(t(shifts.astype(dtype), dev))
            assert got.dtype == np.dtype(dtype)
            assert np.array_equal(host(got), want.numpy()), (name, dtype)
        x = t(a, dev)
        getattr(x, name + "_")(2)
        assert np.array_equal(host(x), getattr(torch.tensor(a), name)(2).numpy())
    assert host(t(a) << 1).tolist() == (a * 2).tolist()
    with pytest.raises(TypeError, match="bitwise_left_shift: only integer"):
        t([1.0]).bitwise_left_shift(1)
    with pytest.raises(TypeError, match="bitwise_and_: result type int64 can't be cast"):
        t([True]).bitwise_and_(t([3]))


@pytest.mark.parametrize("name, args", [
    ("remainder_", (1.5,)), ("square_", ()), ("subtract_", (0.25,)), ("multiply_", (3.0,)),
    ("divide_", (4.0,)), ("true_divide_", (2.0,)), ("floor_divide_", (0.7,)), ("fix_", ()),
    ("ldexp_", (None,)), ("i0_", ()), ("polygamma_", (1,)), ("mvlgamma_", (2,)),
    ("renorm_", (2, 0, 1.0)), ("nextafter_", (None,))])
def test_inplace_arithmetic_match_pytorch(dev, name, args):
    torch = torch_or_skip()
    a = rand((3, 4), 0, 1.0, 3.0) * np.array([1, -1, 1, -1])
    if name in ("polygamma_", "mvlgamma_"):
        a = np.abs(a)
    other = rand((3, 4), 1, -2, 2)
    x = t(a, dev, dtype=F64)
    v = x._version
    margs = tuple(t(other, dev, dtype=F64) if arg is None else arg for arg in args)
    targs = tuple(torch.tensor(other) if arg is None else arg for arg in args)
    assert getattr(x, name)(*margs) is x and x._version == v + 1
    want = getattr(torch.tensor(a), name)(*targs)
    np.testing.assert_allclose(host(x), want.numpy(), rtol=1e-8, atol=1e-12)


def test_divide_rounding_and_inplace_gradient(dev):
    x = t([7.0, -7.0], dev)
    x.divide_(2, rounding_mode="trunc")
    assert host(x).tolist() == [3.0, -3.0]
    device_gradcheck(lambda a, b: (a * 1).multiply_(b).subtract_(a).square_(), [rand((3,)), rand((3,), 1)],
                     dev)
    leaf = t([1.0], dev, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.square_()
    y = leaf * 1
    y.gt_(0.5)  # a comparison in place: zero gradient, as PyTorch's
    y.sum().backward()
    assert host(leaf.grad).tolist() == [0.0]


# ---- random fills ---------------------------------------------------------------------------

N = 200_000


def test_random_fills_statistics():
    g = minifw.Generator().manual_seed(3)
    x = minifw.empty(N, dtype=F64)
    v = x._version
    x.exponential_(2.0, generator=g)
    assert x._version == v + 1
    assert abs(float(x.mean()) - 0.5) < 0.01 and abs(float(x.var()) - 0.25) < 0.01
    assert float(x.min()) >= 0
    x.log_normal_(0.5, 0.25, generator=g)
    assert abs(float(x.log().mean()) - 0.5) < 0.005 and abs(float(x.log().std()) - 0.25) < 0.005
    x.cauchy_(1.0, 2.0, generator=g)
    assert abs(float(x.median()) - 1.0) < 0.05  # a Cauchy's median (its mean does not exist)
    assert abs(float(((x - 1.0).abs() < 2.0).double().mean()) - 0.5) < 0.01
    x.geometric_(0.25, generator=g)
    assert float(x.min()) == 1 and bool((x == x.round()).all())
    assert abs(float(x.mean()) - 4.0) < 0.05 and abs(float(x.var()) - 12.0) < 0.5
    x.bernoulli_(0.3, generator=g)
    assert set(np.unique(host(x))) <= {0.0, 1.0} and abs(float(x.mean()) - 0.3) < 0.005
    p = minifw.tensor([0.0, 1.0, 0.5], dtype=F64).expand(N // 4, 3)
    draws = p.bernoulli(generator=g)
    assert draws.dtype == F64
    np.testing.assert_allclose(host(draws.mean(0)), [0.0, 1.0, 0.5], atol=0.01)
    x.bernoulli_(minifw.tensor([0.0, 1.0]).repeat(N // 2), generator=g)
    assert host(x).tolist()[:4] == [0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("dtype, args, low, high", [
    ("int64", (10,), 0, 10), ("int64", (-5, 5), -5, 5), ("float32", (3, 7), 3, 7),
    ("int32", (), 0, 2 ** 31), ("float64", (), 0, 2 ** 53 + 1), ("bool", (), 0, 2)])
def test_random_ranges(dev, dtype, args, low, high):
    x = minifw.zeros(N // 10, dtype=getattr(minifw, dtype if dtype != "bool" else "bool_"), device=dev)
    minifw.manual_seed(0)
    x.random_(*args)
    values = host(x).astype(np.float64)
    assert values.min() >= low and values.max() < high and np.all(values == np.round(values))
    if high - low <= 10:
        assert len(np.unique(values)) == high - low
    if dtype != "bool":
        x.random_(to=3)
        assert set(np.unique(host(x)).tolist()) == {0, 1, 2}


def test_random_seeded_and_errors():
    a = minifw.empty(5).exponential_(generator=minifw.Generator().manual_seed(1))
    b = minifw.empty(5).exponential_(generator=minifw.Generator().manual_seed(1))
    assert np.array_equal(host(a), host(b))
    with pytest.raises(ValueError, match="random_: expects from < to"):
        minifw.empty(3).random_(5, 2)
    with pytest.raises(ValueError, match="out of int32's range"):
        minifw.zeros(3, dtype=minifw.int32).random_(0, 2 ** 40)
    with pytest.raises(ValueError, match="exponential_: lambd must be > 0"):
        minifw.empty(3).exponential_(0.0)
    with pytest.raises(TypeError, match="exponential_: only float"):
        minifw.zeros(3, dtype=minifw.int64).exponential_()
    with pytest.raises(ValueError, match="geometric_: p must be in"):
        minifw.empty(3).geometric_(0.0)
    with pytest.raises(ValueError, match="bernoulli: p must be in"):
        minifw.tensor([1.5]).bernoulli()
    with pytest.raises(ValueError, match="bernoulli_: p of shape"):
        minifw.empty(3).bernoulli_(minifw.tensor([0.5, 0.5]))


# ---- math -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fmax", "fmin", "logaddexp2", "nextafter", "ldexp"])
def test_binary_math_matches_pytorch(dev, name):
    a = np.array([[1.0, NAN, -2.0, 0.0], [NAN, 3.0, 5.0, -1.5]])
    b = np.array([NAN, NAN, 1.0, 0.0])
    both(lambda x, y: getattr(x, name)(y), a, b, dev=dev)
    both(lambda x, y: getattr(x, name)(y), rand((3, 1)), rand((2,), 1), dev=dev)
    both(lambda x, y: getattr(x, name)(y), rand(()), rand((0,), 1), dev=dev)
    if name in ("fmax", "fmin"):
        both(lambda x, y: getattr(x, name)(y), np.array([3, -1]), np.array([2, 2]), dev=dev)


def test_binary_math_gradients(dev):
    a, b = rand((3, 4)), rand((4,), 1)
    b[1] = a[0, 1]  # a tie: a gets the gradient, as PyTorch's
    for name in ("fmax", "fmin", "logaddexp2", "ldexp"):
        device_gradcheck(lambda x, y: getattr(x, name)(y), [a, b + 0.01], dev)  # no ties
    torch = torch_or_skip()
    x = minifw.tensor([1.0, NAN, 2.0], requires_grad=True)
    y = minifw.tensor([NAN, 1.0, 2.0], requires_grad=True)
    x.fmax(y).sum().backward()
    tx = torch.tensor([1.0, NAN, 2.0], requires_grad=True)
    ty = torch.tensor([NAN, 1.0, 2.0], requires_grad=True)
    tx.fmax(ty).sum().backward()
    assert np.array_equal(host(x.grad), tx.grad.numpy()) and np.array_equal(host(y.grad), ty.grad.numpy())


def test_frexp_of_a_0d_tensor_gives_0d_tensors(dev):
    # NumPy's frexp returns scalars for a 0-d array: the exponent must still be a usable tensor
    m, e = t(np.float64(-3.5), dev).frexp()
    assert m.shape == () and e.shape == () and e.dtype == minifw.int32
    assert host(e).tolist() == 2 and host(m).tolist() == -0.875
    assert e.item() == 2 and (m * 2.0 ** e).item() == -3.5


def test_frexp_and_unary_math(dev):
    torch = torch_or_skip()
    a = np.array([0.0, 1.0, -3.5, 1e-300, 7e10, 0.75])
    m, e = t(a, dev).frexp()
    tm, te = torch.tensor(a).frexp()
    assert e.dtype == minifw.int32 and np.array_equal(host(e), te.numpy())
    np.testing.assert_allclose(host(m), tm.numpy())
    device_gradcheck(lambda x: x.frexp()[0], [rand((5,), 0, 0.1, 3)], dev)
    x = rand((3, 4), 0, -25, 25)
    both(lambda v: v.i0(), x, dev=dev, rtol=1e-13)
    device_gradcheck(lambda v: v.i0(), [rand((2, 3), 0, -4, 4)], dev)
    for n in (0, 1, 2, 4):
        both(lambda v: v.polygamma(n), np.array([0.3, 1.0, 2.5, 7.0, 40.0, -0.5, -2.3]), dev=dev,
             rtol=1e-8 if n == 1 else 1e-12)
        device_gradcheck(lambda v: v.polygamma(n), [rand((4,), n, 0.5, 4)], dev)
    assert host(t([0.0, -2.0], dev).polygamma(1)).tolist() == [math.inf] * 2  # poles
    assert host(t([0.0, -2.0], dev).polygamma(2)).tolist() == [-math.inf] * 2
    for p in (1, 3):
        both(lambda v: v.mvlgamma(p), rand((2, 3), 0, 1.5, 5), dev=dev)
        device_gradcheck(lambda v: v.mvlgamma(p), [rand((2, 3), 0, 1.5, 5)], dev)
    with pytest.raises(ValueError, match="mvlgamma: all elements must be greater than"):
        t([0.5]).mvlgamma(3)
    with pytest.raises(ValueError, match="polygamma: n"):
        t([0.5]).polygamma(-1)
    both(lambda v: v.msort(), rand((4, 3)), dev=dev)
    both(lambda v: v.fix(), rand((4, 3), 0, -3, 3), dev=dev)
    both(lambda v: v.hardshrink(0.3), rand((4, 3)), dev=dev)
    device_gradcheck(lambda v: v.hardshrink(0.3), [rand((3, 4))], dev)
    both(lambda v: v.diagflat(), rand((2, 2)), dev=dev)
    both(lambda v: v.diagflat(-2), rand((3,)), dev=dev)


def test_igamma_matches_pytorch_and_grad_in_other_only(dev):
    a = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 0.1, 3.0, 30.0])
    x = np.array([0.2, 1.0, 3.0, 4.0, 15.0, 5.0, 0.001, 28.0])
    # PyTorch's own values are within 1e-9 of the exact ones (mpmath's, when installed)
    both(lambda p, q: p.igamma(q), a, x, dev=dev, rtol=1e-8, atol=1e-14)
    both(lambda p, q: p.igammac(q), a, x, dev=dev, rtol=1e-8, atol=1e-14)
    try:
        import mpmath
    except ImportError:
        mpmath = None
    if mpmath is not None:
        exact = [float(mpmath.gammainc(p, 0, q, regularized=True)) for p, q in zip(a, x)]
        np.testing.assert_allclose(host(t(a, dev).igamma(t(x, dev))), exact, rtol=1e-13, atol=1e-300)
    both(lambda p, q: p.igamma(q), np.array([0.0, 1.0, -1.0]), np.array([1.0, 0.0, 1.0]), dev=dev)
    device_gradcheck(lambda q, p: p.igamma(q), [x], dev, constants=(a,))
    device_gradcheck(lambda q, p: p.igammac(q), [x], dev, constants=(a,))
    p = t(a, dev, dtype=F64, requires_grad=True)
    with pytest.raises(RuntimeError, match="igamma: the derivative for 'input'"):
        p.igamma(t(x, dev, dtype=F64)).sum().backward()


def test_dist_renorm_prelu(dev):
    a, b = rand((3, 4)), rand((4,), 1)
    for p in (2, 1, 3.5, math.inf):
        both(lambda x, y: x.dist(y, p), a, b, dev=dev)
    device_gradcheck(lambda x, y: x.dist(y, 3), [a, b], dev)
    for dim in (0, 1, -1):
        both(lambda x: x.renorm(2, dim, 0.8), a, dev=dev, rtol=1e-9)
        device_gradcheck(lambda x: x.renorm(2, dim, 0.8), [a], dev)
    both(lambda x: x.renorm(1, 0, 0.5), rand((5, 1)), dev=dev, rtol=1e-9)
    with pytest.raises(ValueError, match="renorm: the input needs at least 2 dimensions"):
        t(rand((5,))).renorm(1, 0, 0.5)
    x, w = rand((2, 3, 4)), rand((3,), 2)
    both(lambda v, u: v.prelu(u), x, w, dev=dev)
    both(lambda v, u: v.prelu(u), x, np.array([0.25]), dev=dev)
    device_gradcheck(lambda v, u: v.prelu(u), [x, w], dev)
    with pytest.raises(ValueError, match="prelu: weight must have 1 element"):
        t(x).prelu(t(rand((2,))))
    with pytest.raises(ValueError, match="renorm: p must be > 0"):
        t(a).renorm(0, 0, 1.0)


@pytest.mark.parametrize("shape", [(3, 7), (1, 5), (2, 1), (7,), (4, 2)])
def test_cov_corrcoef_match_pytorch(dev, shape):
    torch = torch_or_skip()
    x = rand(shape)
    n = shape[-1]
    fw = np.arange(1, n + 1)
    aw = rand((n,), 3, 0.1, 1.0)
    for kw in ({}, {"correction": 0}, {"correction": 2}):
        with np.errstate(all="ignore"):
            both(lambda v: v.cov(**kw), x, dev=dev, rtol=1e-9, atol=1e-12) if n > kw.get("correction", 1) \
                else None
    with warnings.catch_warnings():  # one observation: no degrees of freedom left, as PyTorch warns
        warnings.simplefilter("ignore")
        got = t(x, dev).cov(fweights=t(fw, dev), aweights=t(aw, dev))
        want = torch.tensor(x).cov(fweights=torch.tensor(fw), aweights=torch.tensor(aw))
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-10)
    if n > 1:
        both(lambda v: v.corrcoef(), x, dev=dev, rtol=1e-9)
    device_gradcheck(lambda v, a: v.cov(aweights=a), [rand((3, 5)), rand((5,), 1, 0.2, 1)], dev)
    device_gradcheck(lambda v: v.corrcoef(), [rand((3, 5))], dev)


def test_cov_errors():
    with pytest.raises(ValueError, match="cov: expected a 1-D or 2-D"):
        minifw.ones(2, 2, 2).cov()
    with pytest.raises(TypeError, match="fweights must be an integer"):
        minifw.ones(2, 3).cov(fweights=minifw.ones(3))
    with pytest.raises(ValueError, match="aweights must be 1-D with one weight"):
        minifw.ones(2, 3).cov(aweights=minifw.ones(2))


@pytest.mark.parametrize("bins, kw", [(5, {}), (3, {"range": (-0.5, 0.5)}), (4, {"density": True}),
                                      (6, {"weight": True})])
def test_histogram_matches_pytorch(dev, bins, kw):
    torch = torch_or_skip()
    x = rand((40,))
    w = rand((40,), 1, 0, 1)
    tk = dict(kw, weight=torch.tensor(w)) if kw.get("weight") else kw
    mk = dict(kw, weight=t(w, dev)) if kw.get("weight") else kw
    hist, edges = t(x, dev).histogram(bins, **mk)
    th, te = torch.tensor(x).histogram(bins, **tk)
    np.testing.assert_allclose(host(hist), th.numpy(), rtol=1e-12)
    np.testing.assert_allclose(host(edges), te.numpy(), rtol=1e-12, atol=1e-15)
    edges_in = torch.tensor([-1.0, -0.2, 0.1, 1.0], dtype=torch.float64)
    hist, _ = t(x, dev).histogram(t(edges_in.numpy(), dev))
    assert np.array_equal(host(hist), torch.tensor(x).histogram(edges_in)[0].numpy())


@pytest.mark.parametrize("values, dim", [([1, 1, 2, 2, 3, 1, 1, 2], None), ([[1, 1], [2, 1], [2, 1]], None),
                                         ([], None), ([[1, 2], [1, 2], [3, 3], [1, 2]], 0),
                                         ([[1, 1, 2], [1, 1, 3]], 1), (5, None)])
def test_unique_consecutive_matches_pytorch(dev, values, dim):
    torch = torch_or_skip()
    a = np.array(values, dtype=np.int64)
    got = t(a, dev).unique_consecutive(return_inverse=True, return_counts=True, dim=dim)
    want = torch.tensor(a).unique_consecutive(return_inverse=True, return_counts=True, dim=dim)
    for g, w in zip(got, want):
        assert np.array_equal(host(g), w.numpy()) and host(g).shape == tuple(w.shape)
    assert np.array_equal(host(t(a, dev).unique_consecutive()), torch.tensor(a).unique_consecutive().numpy())


# ---- index_put, put, index_reduce, the *_scatter family ------------------------------------

def test_index_put_and_put_match_pytorch(dev):
    torch = torch_or_skip()
    a = rand((4, 3))
    idx = (np.array([0, 2, 0, -1]), np.array([1, 1, 1, 0]))
    v = rand((4,), 1)
    for acc in (False, True):
        if not acc:
            idx1 = (np.array([0, 2, -1]), np.array([1, 1, 0]))
            got = t(a, dev).index_put(tuple(t(i, dev) for i in idx1), t(v[:3], dev))
            want = torch.tensor(a).index_put(tuple(torch.tensor(i) for i in idx1), torch.tensor(v[:3]))
        else:
            got = t(a, dev).index_put(tuple(t(i, dev) for i in idx), t(v, dev), accumulate=True)
            want = torch.tensor(a).index_put(tuple(torch.tensor(i) for i in idx), torch.tensor(v),
                                             accumulate=True)
        np.testing.assert_allclose(host(got), want.numpy())
    rows = t(a, dev).index_put((t(np.array([1, 1]), dev),), t(rand((3,), 2), dev), accumulate=True)
    np.testing.assert_allclose(host(rows), torch.tensor(a).index_put(
        (torch.tensor([1, 1]),), torch.tensor(rand((3,), 2)), accumulate=True).numpy())
    x = t(a, dev)
    ver = x._version
    x.index_put_((t(np.array([True, False, True, False]), dev),), t(np.array(2.0), dev))
    assert x._version == ver + 1
    assert np.array_equal(host(x), torch.tensor(a).index_put_(
        (torch.tensor([True, False, True, False]),), torch.tensor(2.0, dtype=torch.float64)).numpy())
    for acc in (False, True):
        index = np.array([0, 11, -1, 4]) if acc else np.array([0, 11, 4])
        src = rand(index.shape, 4)
        got = t(a, dev).put(t(index, dev), t(src, dev), accumulate=acc)
        assert np.allclose(host(got), torch.tensor(a).put(torch.tensor(index), torch.tensor(src),
                                                          accumulate=acc).numpy())
    device_gradcheck(lambda x, v: x.index_put((minifw.tensor(idx[0], device=dev),
                                               minifw.tensor(idx[1], device=dev)), v, accumulate=True),
                     [a, v], dev)
    device_gradcheck(lambda x, s: x.put(minifw.tensor([5, 1], device=dev), s), [a, rand((2,), 3)], dev)
    with pytest.raises(TypeError, match="index_put: indices must be a tuple of tensors"):
        t(a).index_put([0], t([1.0]))
    with pytest.raises(ValueError, match="put: index and source need the same number"):
        t(a).put(t([0, 1]), t([1.0]))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_pytorch(dev, reduce, include_self):
    torch = torch_or_skip()
    a, src = rand((4, 3)), rand((5, 3), 1)
    index = np.array([0, 2, 0, 3, 2])
    got = t(a, dev).index_reduce(0, t(index, dev), t(src, dev), reduce, include_self=include_self)
    want = torch.tensor(a).index_reduce(0, torch.tensor(index), torch.tensor(src), reduce,
                                        include_self=include_self)
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12)
    got = t(a, dev).index_reduce_(1, t(np.array([2, 2]), dev), t(src[:4, :2], dev), reduce,
                                  include_self=include_self)
    want = torch.tensor(a).index_reduce_(1, torch.tensor([2, 2]), torch.tensor(src[:4, :2]), reduce,
                                         include_self=include_self)
    np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12)
    device_gradcheck(lambda x, s: x.index_reduce(0, minifw.tensor(index, device=dev), s, reduce,
                                                 include_self=include_self), [a, src], dev)


def test_index_reduce_errors():
    with pytest.raises(ValueError, match="index_reduce: reduce"):
        minifw.ones(3).index_reduce(0, minifw.tensor([0]), minifw.ones(1), "sum")
    with pytest.raises(ValueError, match="index_reduce: source of shape"):
        minifw.ones(3, 2).index_reduce(0, minifw.tensor([0]), minifw.ones(2, 2), "prod")


def test_scatter_family_matches_pytorch(dev):
    torch = torch_or_skip()
    a = rand((3, 4, 5))
    both(lambda x, s: x.select_scatter(s, 1, -1), a, rand((3, 5), 1), dev=dev)
    both(lambda x, s: x.slice_scatter(s, 2, 1, None, 2), a, rand((3, 4, 2), 1), dev=dev)
    both(lambda x, s: x.slice_scatter(s), a, rand((3, 4, 5), 1), dev=dev)
    for offset, d1, d2 in ((0, 0, 1), (1, 1, 2), (-2, 2, 0), (2, -1, 1), (9, 0, 1), (-1, 0, 2)):
        shape = tuple(torch.tensor(a).diagonal(offset, d1, d2).shape)
        both(lambda x, s: x.diagonal_scatter(s, offset, d1, d2), a, rand(shape, 2), dev=dev)
    device_gradcheck(lambda x, s: x.select_scatter(s, 0, 1), [rand((3, 2)), rand((2,), 1)], dev)
    device_gradcheck(lambda x, s: x.slice_scatter(s, 1, 0, 3, 2), [rand((2, 4)), rand((2, 2), 1)], dev)
    device_gradcheck(lambda x, s: x.diagonal_scatter(s, 1), [rand((3, 4)), rand((3,), 1)], dev)
    with pytest.raises(ValueError, match="select_scatter: src must have shape"):
        t(a).select_scatter(t(rand((3, 4))), 1, 0)
    with pytest.raises(ValueError, match="diagonal_scatter: dim1 and dim2 must differ"):
        t(a).diagonal_scatter(t(rand((3,))), 0, 1, 1)


# ---- linear algebra methods ---------------------------------------------------------------

def spd(n, seed=0, batch=()):
    m = rand(batch + (n, n), seed)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def test_linalg_methods_match_pytorch(dev):
    torch = torch_or_skip()
    A, B = spd(4), rand((4, 2), 1)
    for upper in (False, True):
        both(lambda a: a.cholesky(upper=upper), A, dev=dev)
        L = np.linalg.cholesky(A)
        f = L.T if upper else L
        both(lambda b, c: b.cholesky_solve(c, upper), B, f, dev=dev, rtol=1e-9)
        both(lambda c: c.cholesky_inverse(upper), f, dev=dev, rtol=1e-9)
    M = rand((5, 3), 2)
    for some in (True, False):
        q, r = t(M, dev).qr(some)
        tq, tr = torch.tensor(M).qr(some)
        np.testing.assert_allclose(np.abs(host(q)), np.abs(tq.numpy()), atol=1e-12)
        np.testing.assert_allclose(np.abs(host(r)), np.abs(tr.numpy()), atol=1e-12)
        U, S, V = t(M, dev).svd(some)
        tu, ts, tv = torch.tensor(M).svd(some)
        assert host(U).shape == tuple(tu.shape) and host(V).shape == tuple(tv.shape)
        np.testing.assert_allclose(host(S), ts.numpy(), rtol=1e-12)
        k = 3
        np.testing.assert_allclose(host(U)[:, :k] * host(S) @ host(V)[:, :k].T, M, atol=1e-12)
    U, S, V = t(M, dev).svd(compute_uv=False)
    assert not host(U).any() and host(U).shape == (5, 5) and host(V).shape == (3, 3)
    T = np.triu(rand((3, 3), 4)) + 3 * np.eye(3)
    for upper, transpose, unit in ((True, False, False), (False, True, False), (True, True, True)):
        Tm = T if upper else T.T
        X, C = t(B[:3], dev).triangular_solve(t(Tm, dev), upper, transpose, unit)
        tX, tC = torch.tensor(B[:3]).triangular_solve(torch.tensor(Tm), upper, transpose, unit)
        np.testing.assert_allclose(host(X), tX.numpy(), rtol=1e-10)
        assert np.array_equal(host(C), tC.numpy())
    for scale in (0.1, 1.0, 30.0):
        both(lambda a: a.matrix_exp(), rand((2, 3, 3), 5) * scale, dev=dev, rtol=1e-11, atol=1e-13)
    both(lambda a: a.matrix_exp(), rand((0, 2, 2)), dev=dev)


def test_linalg_methods_gradients(dev):
    device_gradcheck(lambda b, a: b.cholesky_solve(a), [rand((3, 2)), np.linalg.cholesky(spd(3))], dev)
    device_gradcheck(lambda a: a.matrix_exp(), [rand((3, 3)) * 2], dev)
    device_gradcheck(lambda b, a: b.triangular_solve(a)[0],
                     [rand((3, 2)), np.triu(rand((3, 3), 1)) + 3 * np.eye(3)], dev)
    with pytest.raises(ValueError, match="matrix_exp: expects square"):
        minifw.ones(2, 3).matrix_exp()


def test_extreme_values_of_frexp_ldexp_matrix_exp_renorm():
    torch = pytest.importorskip("torch")
    for dtype, tdtype, big in ((minifw.float32, torch.float32, 3e38), (minifw.float64, torch.float64, 1.7e308)):
        values = [big, -big, 1e-30, 0.3, 0.0]
        got = minifw.tensor(values, dtype=dtype).frexp()
        want = torch.tensor(values, dtype=tdtype).frexp()
        np.testing.assert_allclose(got.mantissa.numpy(), want.mantissa.numpy(), rtol=1e-7)
        assert got.exponent.numpy().tolist() == want.exponent.tolist()
    assert minifw.tensor([0.5]).ldexp(1024).item() == math.inf
    assert minifw.tensor([0.5], dtype=minifw.float64).ldexp(-1073).item() == 2.0 ** -1074
    assert minifw.tensor([3.0], dtype=minifw.float64).ldexp(-2).item() == 0.75
    m = minifw.tensor([[math.inf, 0.0], [0.0, 1.0]]).matrix_exp().numpy()
    assert np.isnan(m).all()
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4))
    np.testing.assert_allclose(minifw.tensor(x).renorm(math.inf, 0, 0.5).numpy(),
                               torch.tensor(x).renorm(math.inf, 0, 0.5).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="cholesky_inverse: input must be a \\(batch of\\) square"):
        minifw.ones(3).cholesky_inverse()
