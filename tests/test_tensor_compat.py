"""PyTorch compatibility of the Tensor API's newer corners: type promotion with three
participant classes, the bitwise, floor-division and remainder operators, div's rounding
modes, maximum/minimum and clamp with tensor bounds, var/std's two signatures, dtype= of the
reductions and softmax, reductions of empty and 0-d tensors, __format__, the legacy Tensor
constructor, randint/randperm/arange arguments, cat's skipping of empty 1-D tensors, integer
overflow at creation, .grad assignment checks, the new functions (isnan ... multinomial,
linspace, eye, finfo, mm/bmm, as_tensor, ...) and minifw.amp.

Every expectation is hand-computed (or NumPy's where NumPy is the definition); where PyTorch
defines the behaviour a companion test also compares with torch when it is importable (it is
not a dependency). Gradients are checked by finite differences in float64
(tests/gradcheck.py); device-sensitive operations run on "cpu", "cudasim" and "cuda" (the
emulated GPU where there is none) and their results stay on the device."""
import math
import re
import warnings

import numpy as np
import pytest

import minifw
from minifw import devices
from gradcheck import gradcheck
from targets import cuda_available, emulate_cuda

F32, F64, I64, I32, BOOL = minifw.float32, minifw.float64, minifw.int64, minifw.int32, minifw.bool_
INF, NAN = math.inf, math.nan


@pytest.fixture(params=["cpu", "cudasim", "cuda"])
def dev(request, monkeypatch):
    """The device under test, as its tensors report it ('cpu', 'cudasim', 'cuda:0')."""
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


@pytest.fixture
def rng_state():
    """Tests that seed the global generator leave it as they found it."""
    before = minifw.get_rng_state()
    yield
    minifw.set_rng_state(before)


def on(dev, values, dtype=None, requires_grad=False):
    return minifw.tensor(values, dtype=dtype, device=dev, requires_grad=requires_grad)


def host(t):
    return t.detach().cpu().numpy()


def check(t, dev, expected, dtype=None):
    """t is on dev, of dtype (when given), with the expected values (and shape)."""
    assert isinstance(t, minifw.Tensor), f"got {type(t).__name__}, not a Tensor"
    assert t.device == dev and devices.of(t._data) == dev, f"result on {t.device}, not {dev}"
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    got = host(t)
    want = np.asarray(expected, dtype=got.dtype)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want)


def close(t, expected, dtype=None, rtol=1e-6, atol=1e-7):
    """t (a CPU or device tensor) is close to expected, of the same shape (NaN equals NaN)."""
    assert isinstance(t, minifw.Tensor), f"got {type(t).__name__}, not a Tensor"
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    got = host(t)
    want = np.asarray(expected, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol, equal_nan=True)


def leaf(values):
    return minifw.tensor(values, dtype=minifw.float64, requires_grad=True)


def backward(loss):
    loss.backward()


def grads_of(fn, *values, weights=None):
    """The gradients of sum(weights * fn(*leaves)) for float64 leaves of `values`."""
    leaves = [leaf(v) for v in values]
    out = fn(*leaves)
    w = np.ones(out.shape) if weights is None else np.asarray(weights, np.float64)
    backward((out * minifw.tensor(w, dtype=out.dtype)).sum())
    return [None if t.grad is None else t.grad.numpy() for t in leaves]


def tname(dtype):
    """A dtype's name, "float32", for minifw's (NumPy's) and torch's dtypes alike."""
    return str(dtype).split(".")[-1]


def as_numpy(x):
    """A minifw or torch result (or a number) as a NumPy array."""
    if isinstance(x, minifw.Tensor):
        return host(x)
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def same_as_torch(make, torch):
    """make(module) gives the same result (values, shape, dtype; each of a tuple's) with minifw
    and with torch."""
    ours, theirs = make(minifw), make(torch)
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), f"{ours!r} vs {theirs!r}"
    else:
        ours, theirs = (ours,), (theirs,)
    for o, t in zip(ours, theirs):
        assert tname(o.dtype) == tname(t.dtype), f"dtype {o.dtype}, torch's {t.dtype}"
        a, b = as_numpy(o), as_numpy(t)
        assert a.shape == b.shape, f"shape {a.shape}, torch's {b.shape}"
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-6,
                                   atol=1e-7, equal_nan=True)


def torch_grads(torch, fn, *values, weights=None):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(torch, *leaves)
    w = torch.ones(out.shape, dtype=out.dtype) if weights is None else \
        torch.tensor(weights, dtype=out.dtype)
    (out * w).sum().backward()
    return [None if t.grad is None else t.grad.numpy() for t in leaves]


# ---- 1. type promotion: dimensioned tensors > 0-d tensors > Python numbers ---------------------

def T(dtype, value=1):
    """A dimensioned operand: full((2,), value, dtype)."""
    return ("dims", dtype, value)


def Z(dtype, value=1):
    """A 0-d tensor operand."""
    return ("zero", dtype, value)


def make(m, spec):
    if not isinstance(spec, tuple):
        return spec
    kind, dtype, value = spec
    if kind == "dims":
        return m.full((2,), value, dtype=getattr(m, dtype))
    return m.tensor(value, dtype=getattr(m, dtype))


def _value(spec):
    return float(spec[2] if isinstance(spec, tuple) else spec)


PROMOTIONS = [
    pytest.param(T("float32"), Z("float64", 2.0), "float32", id="f32_dims__f64_0d"),
    pytest.param(T("int32"), Z("int64", 1), "int32", id="i32_dims__i64_0d"),
    pytest.param(T("int32"), Z("float64", 1.0), "float64", id="i32_dims__f64_0d"),
    pytest.param(Z("int64", 1), Z("float64", 2.0), "float64", id="i64_0d__f64_0d"),
    pytest.param(Z("bool", True), 1, "int64", id="bool_0d__int"),
    pytest.param(Z("int32", 1), 2.5, "float32", id="i32_0d__float"),
    pytest.param(T("int64"), 1.5, "float32", id="i64_dims__float"),
    pytest.param(T("bool", True), Z("int32", 1), "int32", id="bool_dims__i32_0d"),
    pytest.param(T("int32"), Z("bool", True), "int32", id="i32_dims__bool_0d"),
    pytest.param(Z("int32", 1), Z("int64", 1), "int64", id="i32_0d__i64_0d"),
    pytest.param(Z("int32", 1), 2, "int32", id="i32_0d__int"),
    pytest.param(Z("bool", True), True, "bool", id="bool_0d__bool"),
    pytest.param(T("float64"), Z("float32", 1.0), "float64", id="f64_dims__f32_0d"),
    pytest.param(T("bool", True), 2.5, "float32", id="bool_dims__float"),
    pytest.param(T("int32"), Z("float32", 2.5), "float32", id="i32_dims__f32_0d"),
    pytest.param(Z("float64", 1.0), 1, "float64", id="f64_0d__int"),
    pytest.param(Z("float64", 1.0), 2.5, "float64", id="f64_0d__float"),
    pytest.param(T("float32"), T("float64"), "float64", id="f32_dims__f64_dims"),
    pytest.param(T("int64"), T("float32"), "float32", id="i64_dims__f32_dims"),
    pytest.param(T("int32"), T("int64"), "int64", id="i32_dims__i64_dims"),
    pytest.param(T("bool", True), Z("float64", 2.0), "float64", id="bool_dims__f64_0d"),
    pytest.param(Z("bool", True), 1.5, "float32", id="bool_0d__float"),
    pytest.param(T("bool", True), 1, "int64", id="bool_dims__int"),
    pytest.param(T("int32"), 2, "int32", id="i32_dims__int"),
]


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_type_promotion_of_arithmetic(a, b, expected):
    x, y = make(minifw, a), make(minifw, b)
    for out in (x + y, y + x, x * y, y * x):
        assert tname(out.dtype) == expected, f"{out.dtype}, expected {expected}"
        assert out.shape == np.broadcast_shapes(np.shape(as_numpy(x)), np.shape(as_numpy(y)))
    if expected != "bool":
        np.testing.assert_array_equal(host(x + y), _value(a) + _value(b))
        np.testing.assert_array_equal(host(x - y), _value(a) - _value(b))


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_type_promotion_table_is_torch_result_type(a, b, expected):
    torch = pytest.importorskip("torch")
    assert tname(torch.result_type(make(torch, a), make(torch, b))) == expected
    same_as_torch(lambda m: make(m, a) + make(m, b), torch)


def test_type_promotion_named_in_the_brief():
    assert (minifw.ones(2) * minifw.tensor(2.0, dtype=F64)).dtype == F32
    assert (minifw.ones(2, dtype=I32) + minifw.tensor(1)).dtype == I32
    assert (minifw.ones(2, dtype=I32) + minifw.tensor(1.0, dtype=F64)).dtype == F64
    assert (minifw.tensor(1) + minifw.tensor(2.0, dtype=F64)).dtype == F64
    assert (minifw.tensor(True) + 1).dtype == I64
    assert (minifw.tensor(1, dtype=I32) + 2.5).dtype == F32
    assert (minifw.ones(2, dtype=I64) + 1.5).dtype == F32
    check(minifw.ones(2, dtype=I64) + 1.5, devices.CPU, [2.5, 2.5], F32)


def test_type_promotion_on_the_device(dev):
    check(minifw.ones(2, device=dev) * on(dev, 2.0, F64), dev, [2.0, 2.0], F32)
    check(minifw.ones(2, dtype=I32, device=dev) + on(dev, 1.5, F64), dev, [2.5, 2.5], F64)
    check(on(dev, True) + 1, dev, 2, I64)


WHERE_CASES = [
    pytest.param(T("int32"), Z("float64", 1.0), "float64", id="i32_dims__f64_0d"),
    pytest.param(T("float32"), Z("float64", 2.0), "float32", id="f32_dims__f64_0d"),
    pytest.param(T("int32"), 2.5, "float32", id="i32_dims__float"),
    pytest.param(T("int32"), 2, "int32", id="i32_dims__int"),
    pytest.param(T("int32"), T("int64"), "int64", id="i32_dims__i64_dims"),
    pytest.param(Z("int64", 1), Z("float64", 2.0), "float64", id="i64_0d__f64_0d"),
]


@pytest.mark.parametrize("a, b, expected", WHERE_CASES)
def test_where_promotes_as_arithmetic(a, b, expected):
    cond = minifw.tensor([True, False])
    out = minifw.where(cond, make(minifw, a), make(minifw, b))
    assert tname(out.dtype) == expected
    np.testing.assert_array_equal(host(out), [_value(a), _value(b)])
    out = minifw.where(cond, make(minifw, b), make(minifw, a))
    assert tname(out.dtype) == expected


@pytest.mark.parametrize("a, b, expected", WHERE_CASES)
def test_where_promotion_as_torch(a, b, expected):
    torch = pytest.importorskip("torch")
    same_as_torch(lambda m: m.where(m.tensor([True, False]), make(m, a), make(m, b)), torch)


@pytest.mark.parametrize("join", ["cat", "stack"])
@pytest.mark.parametrize("first, second, expected", [
    (I32, F64, F64), (I64, F32, F32), (I32, I64, I64), (BOOL, I32, I32), (F32, F64, F64),
])
def test_cat_and_stack_promote(join, first, second, expected):
    parts = [minifw.ones(2, dtype=first), minifw.full((2,), 2, dtype=second)]
    out = getattr(minifw, join)(parts)
    assert out.dtype == expected
    np.testing.assert_array_equal(host(out).reshape(-1), [1, 1, 2, 2])


def test_cat_and_stack_promote_as_torch():
    torch = pytest.importorskip("torch")
    for join in ("cat", "stack"):
        for first, second in (("int32", "float64"), ("int64", "float32"), ("bool", "int32")):
            same_as_torch(lambda m: getattr(m, join)([m.ones(2, dtype=getattr(m, first)),
                                                       m.full((2,), 2, dtype=getattr(m, second))]),
                          torch)


def test_comparisons_keep_bool_and_compare_in_the_promoted_dtype(dev):
    ints = on(dev, [1, 2], I32)
    check(ints < 1.5, dev, [True, False], BOOL)
    check(ints == 1.5, dev, [False, False], BOOL)  # not 1.5 truncated to 1
    check(ints > on(dev, 1.5, F64), dev, [False, True], BOOL)
    check(minifw.ones(2, device=dev) == on(dev, 1.0, F64), dev, [True, True], BOOL)
    check(on(dev, [True, False]) == 1, dev, [True, False], BOOL)
    check(on(dev, 2.0, F64) >= on(dev, [1, 3]), dev, [True, False], BOOL)


def test_comparisons_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([1, 2], dtype=m.int32) < 1.5,
                  lambda m: m.tensor([1, 2], dtype=m.int32) == 1.5,
                  lambda m: m.tensor([1, 2], dtype=m.int32) > m.tensor(1.5, dtype=m.float64),
                  lambda m: m.tensor(2.0, dtype=m.float64) >= m.tensor([1, 3])):
        same_as_torch(make_, torch)


# ---- 2. bitwise, floor division, remainder, div's rounding modes, logical functions --------------

def test_bitwise_operators_on_bools(dev):
    a, b = on(dev, [True, True, False, False]), on(dev, [True, False, True, False])
    check(a & b, dev, [True, False, False, False], BOOL)
    check(a | b, dev, [True, True, True, False], BOOL)
    check(a ^ b, dev, [False, True, True, False], BOOL)
    check(~a, dev, [False, False, True, True], BOOL)
    check(a & True, dev, [True, True, False, False], BOOL)
    check(False | b, dev, [True, False, True, False], BOOL)
    check(True ^ a, dev, [False, False, True, True], BOOL)
    check(on(dev, [True, False]) | 1, dev, [1, 1], I64)  # an int brings the integer category


def test_bitwise_operators_on_integers(dev):
    t = on(dev, [12, 10, -3])
    check(t & 6, dev, [4, 2, 4], I64)
    check(t | 6, dev, [14, 14, -1], I64)
    check(t ^ 6, dev, [10, 12, -5], I64)
    check(~t, dev, [-13, -11, 2], I64)
    check(6 & t, dev, [4, 2, 4], I64)
    check(1 | on(dev, [2, 3]), dev, [3, 3], I64)
    check(6 ^ t, dev, [10, 12, -5], I64)
    check(t & on(dev, [1, 2, 4]), dev, [0, 2, 4], I64)
    small = on(dev, [5, 6], I32)
    check(small & 3, dev, [1, 2], I32)
    check(small | on(dev, [1, 1]), dev, [5, 7], I64)
    check(~on(dev, [0, 5], I32), dev, [-1, -6], I32)
    check(on(dev, [5, 6]) & on(dev, [True, False]), dev, [1, 0], I64)


def test_bitwise_operators_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([12, 10, -3]) & 6, lambda m: m.tensor([12, 10, -3]) | 6,
                  lambda m: m.tensor([12, 10, -3]) ^ 6, lambda m: ~m.tensor([12, 10, -3]),
                  lambda m: 1 | m.tensor([2, 3]), lambda m: 6 ^ m.tensor([12, 10, -3]),
                  lambda m: m.tensor([True, False]) | 1, lambda m: m.tensor([True, False]) & True,
                  lambda m: ~m.tensor([True, False]), lambda m: m.tensor([5, 6], dtype=m.int32) & 3,
                  lambda m: m.bitwise_xor(m.tensor([True, False]), m.tensor([True, True])),
                  lambda m: m.bitwise_not(m.tensor([0, 5], dtype=m.int32))):
        same_as_torch(make_, torch)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.ones(2) & 1, id="float_and_int"),
    pytest.param(lambda: 1 | minifw.ones(2), id="int_or_float_reflected"),
    pytest.param(lambda: minifw.ones(2) ^ minifw.ones(2), id="float_xor_float"),
    pytest.param(lambda: minifw.tensor([1, 2]) & minifw.ones(2), id="int_and_float_tensor"),
    pytest.param(lambda: minifw.tensor([1, 2]) | 1.5, id="int_or_python_float"),
    pytest.param(lambda: ~minifw.ones(2), id="invert_float"),
    pytest.param(lambda: ~minifw.tensor(1.0, dtype=F64), id="invert_float64_0d"),
    pytest.param(lambda: minifw.bitwise_and(minifw.ones(2), minifw.ones(2)), id="bitwise_and"),
    pytest.param(lambda: minifw.bitwise_not(minifw.ones(2)), id="bitwise_not"),
])
def test_bitwise_operators_refuse_floats(call):
    with pytest.raises(TypeError):
        call()


def test_floor_division_and_remainder_of_integers(dev):
    a, b = on(dev, [-7, 7, -7, 7]), on(dev, [2, 2, -2, -2])
    check(a // b, dev, [-4, 3, 3, -4], I64)
    check(a % b, dev, [1, 1, -1, -1], I64)  # the divisor's sign, as Python's
    check(a // 2, dev, [-4, 3, -4, 3], I64)
    check(a % 3, dev, [2, 1, 2, 1], I64)
    check(a % -3, dev, [-1, -2, -1, -2], I64)
    check(7 // on(dev, [-3, 3, 4]), dev, [-3, 2, 1], I64)
    check(7 % on(dev, [-3, 3, 4]), dev, [-2, 1, 3], I64)
    check(-7 % on(dev, [3]), dev, [2], I64)
    check(on(dev, [7, -7], I32) // 2, dev, [3, -4], I32)
    check(on(dev, [7, -7], I32) % 2, dev, [1, 1], I32)
    assert [x // y for x, y in zip([-7, 7, -7, 7], [2, 2, -2, -2])] == [-4, 3, 3, -4]
    assert [x % y for x, y in zip([-7, 7, -7, 7], [2, 2, -2, -2])] == [1, 1, -1, -1]


def test_floor_division_and_remainder_of_floats(dev):
    a = on(dev, [-7.5, 7.5, -7.5, 7.5])
    check(a // 2, dev, [-4.0, 3.0, -4.0, 3.0], F32)
    check(a % 2, dev, [0.5, 1.5, 0.5, 1.5], F32)
    check(a % -2, dev, [-1.5, -0.5, -1.5, -0.5], F32)
    check(a // -2, dev, [3.0, -4.0, 3.0, -4.0], F32)
    check(7.5 % on(dev, [2.0, -2.0]), dev, [1.5, -0.5], F32)
    check(7.5 // on(dev, [2.0, -2.0]), dev, [3.0, -4.0], F32)
    check(on(dev, [7]) % 2.5, dev, [2.0], F32)  # an int tensor with a float: the default float
    check(on(dev, [7]) // 2.5, dev, [2.0], F32)
    check(7.5 % on(dev, [2]), dev, [1.5], F32)
    check(on(dev, [1.0, -1.0]) // 0, dev, [INF, -INF], F32)  # float division by zero is IEEE's
    assert np.isnan(host(on(dev, [1.0]) % 0)).all()
    check(on(dev, [5.0], F64) % on(dev, [3], I32), dev, [2.0], F64)


def test_floor_division_and_remainder_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([-7, 7, -7, 7]) // m.tensor([2, 2, -2, -2]),
                  lambda m: m.tensor([-7, 7, -7, 7]) % m.tensor([2, 2, -2, -2]),
                  lambda m: 7 % m.tensor([-3, 3, 4]), lambda m: 7 // m.tensor([-3, 3, 4]),
                  lambda m: m.tensor([-7.5, 7.5]) % -2, lambda m: m.tensor([-7.5, 7.5]) // 2,
                  lambda m: 7.5 % m.tensor([2]), lambda m: m.tensor([7]) // 2.5,
                  lambda m: m.tensor([7, -7], dtype=m.int32) % 2,
                  lambda m: m.tensor([1.0, -1.0]) // 0, lambda m: m.tensor([1.0]) % 0,
                  lambda m: m.floor_divide(m.tensor([-7, 7]), 2),
                  lambda m: m.remainder(m.tensor([-7.5, 7.5]), 2)):
        same_as_torch(make_, torch)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.tensor([1, 2]) // 0, id="floordiv_number"),
    pytest.param(lambda: minifw.tensor([1, 2]) % 0, id="mod_number"),
    pytest.param(lambda: minifw.tensor([1, 2]) // minifw.tensor([1, 0]), id="floordiv_tensor"),
    pytest.param(lambda: minifw.tensor([1, 2]) % minifw.tensor([0, 1]), id="mod_tensor"),
    pytest.param(lambda: 7 % minifw.tensor([0]), id="reflected_mod"),
    pytest.param(lambda: 7 // minifw.tensor([3, 0]), id="reflected_floordiv"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32) // 0, id="int32"),
    pytest.param(lambda: minifw.tensor([1]).div(0, rounding_mode="trunc"), id="div_trunc"),
    pytest.param(lambda: minifw.div(minifw.tensor([1]), 0, rounding_mode="floor"), id="div_floor"),
    pytest.param(lambda: minifw.floor_divide(minifw.tensor([4]), 0), id="floor_divide"),
    pytest.param(lambda: minifw.remainder(minifw.tensor([4]), 0), id="remainder"),
])
def test_integer_division_by_zero_raises(call):
    with pytest.raises(ZeroDivisionError):
        call()


@pytest.mark.parametrize("call", [
    pytest.param(lambda b: b // b, id="floordiv"),
    pytest.param(lambda b: b % b, id="remainder"),
    pytest.param(lambda b: b.div(b, rounding_mode="trunc"), id="div_trunc"),
    pytest.param(lambda b: b.div(b, rounding_mode="floor"), id="div_floor"),
])
def test_floor_division_and_remainder_of_bools_are_refused(call):
    # as PyTorch's "not implemented for 'Bool'"; NumPy would give int8, not a minifw dtype
    with pytest.raises(TypeError, match="not implemented for bool tensors"):
        call(minifw.tensor([True, False]))


def test_norm_gradient_at_zero_for_any_p():
    for p in (3, 1.5, 0.5, -1, float("inf")):
        x = minifw.zeros(3, dtype=F64, requires_grad=True)
        x.norm(p).backward()
        assert host(x.grad).tolist() == [0.0, 0.0, 0.0], p


def test_view_of_a_layout_that_needs_a_copy_is_refused():
    t = minifw.arange(6).view(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(-1)
    assert t.reshape(-1).tolist() == [0, 3, 1, 4, 2, 5]
    assert minifw.ones(4, 6)[:, :3].view(4, 1, 3).shape == (4, 1, 3)  # still a view: allowed


def test_integer_division_by_zero_raises_on_the_device(dev):
    with pytest.raises(ZeroDivisionError):
        on(dev, [1, 2]) // on(dev, [1, 0])
    with pytest.raises(ZeroDivisionError):
        on(dev, [1, 2], I32) % 0
    with pytest.raises(ZeroDivisionError):
        on(dev, [4]).div(on(dev, [0]), rounding_mode="trunc")


def test_float_remainder_gradients_by_hand():
    ga, gb = grads_of(lambda a, b: a % b, [5.5, -5.5, 5.5], [2.0, 2.0, -2.0])
    np.testing.assert_array_equal(ga, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gb, [-2.0, 3.0, 3.0])  # -floor(a / b): floor(2.75, -2.75, -2.75)
    ga, gb = grads_of(lambda a, b: a % b, [[5.5, 1.0], [-3.0, 4.5]], [2.0])  # broadcast b
    np.testing.assert_array_equal(ga, np.ones((2, 2)))
    np.testing.assert_array_equal(gb, [-(2 + 0 - 2 + 2)])
    ga, = grads_of(lambda a: a % 2.0, [5.5, -1.5])
    np.testing.assert_array_equal(ga, [1.0, 1.0])
    gb, = grads_of(lambda b: 7.0 % b, [2.0, -3.0])  # 7 % b: -floor(7 / b)
    np.testing.assert_array_equal(gb, [-3.0, 3.0])


def test_float_remainder_gradcheck():
    a = leaf([[5.5, -5.3, 2.7], [0.4, -1.9, 3.3]])
    b = leaf([2.1, 1.7, -1.3])
    gradcheck(lambda a, b: a % b, [a, b])
    gradcheck(lambda a, b: minifw.remainder(a, b), [leaf([4.2, -0.7]), leaf([-1.1, 0.3])])
    gradcheck(lambda b: 3.3 % b, [leaf([1.4, -2.6, 0.7])])


def test_float_remainder_gradients_as_torch():
    torch = pytest.importorskip("torch")
    values = ([[5.5, -5.3, 2.7], [0.4, -1.9, 3.3]], [2.1, 1.7, -1.3])
    weights = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    ours = grads_of(lambda a, b: a % b, *values, weights=weights)
    theirs = torch_grads(torch, lambda m, a, b: a % b, *values, weights=weights)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12)


@pytest.mark.parametrize("mode, expected, dtype", [
    (None, [-3.5, 3.5, -3.0, 3.0], F32),
    ("trunc", [-3, 3, -3, 3], I64),
    ("floor", [-4, 3, -3, 3], I64),
])
def test_div_rounding_modes_of_integers(dev, mode, expected, dtype):
    t = on(dev, [-7, 7, -6, 6])
    check(t.div(2, rounding_mode=mode), dev, expected, dtype)
    check(minifw.div(t, 2, rounding_mode=mode), dev, expected, dtype)
    check(t.divide(on(dev, [2, 2, 2, 2]), rounding_mode=mode), dev, expected, dtype)
    check(minifw.divide(t, 2, rounding_mode=mode), dev, expected, dtype)


def test_div_rounding_modes_with_negative_divisors_and_reflected(dev):
    t = on(dev, [7, -7])
    check(t.div(-2, rounding_mode="trunc"), dev, [-3, 3], I64)
    check(t.div(-2, rounding_mode="floor"), dev, [-4, 3], I64)
    check(minifw.div(7, on(dev, [-2, 2]), rounding_mode="trunc"), dev, [-3, 3], I64)
    check(minifw.div(7, on(dev, [-2, 2]), rounding_mode="floor"), dev, [-4, 3], I64)
    check(on(dev, [7, -7], I32).div(2, rounding_mode="trunc"), dev, [3, -3], I32)
    big = -(2 ** 53) - 1  # exact: not through float64
    check(on(dev, [big]).div(1, rounding_mode="trunc"), dev, [big], I64)
    check(on(dev, [big]).div(-3, rounding_mode="trunc"), dev, [abs(big) // 3], I64)  # signs cancel
    check(on(dev, [big]).div(3, rounding_mode="trunc"), dev, [-(abs(big) // 3)], I64)


@pytest.mark.parametrize("mode, expected", [
    (None, [-3.75, 3.75, -3.0]),
    ("trunc", [-3.0, 3.0, -3.0]),
    ("floor", [-4.0, 3.0, -3.0]),
])
def test_div_rounding_modes_of_floats(dev, mode, expected):
    t = on(dev, [-7.5, 7.5, -6.0])
    check(t.div(2, rounding_mode=mode), dev, expected, F32)
    check(minifw.div(t, 2.0, rounding_mode=mode), dev, expected, F32)
    check(on(dev, [7.5, -7.5], F64).div(-2, rounding_mode=mode), dev,
          {None: [-3.75, 3.75], "trunc": [-3.0, 3.0], "floor": [-4.0, 3.0]}[mode], F64)


def test_div_rounding_modes_as_torch():
    torch = pytest.importorskip("torch")
    for mode in (None, "trunc", "floor"):
        for make_ in (lambda m: m.tensor([-7, 7, -6, 6]).div(2, rounding_mode=mode),
                      lambda m: m.tensor([7, -7]).div(-2, rounding_mode=mode),
                      lambda m: m.div(m.tensor([-7.5, 7.5, -6.0]), 2, rounding_mode=mode),
                      lambda m: m.tensor([7, -7], dtype=m.int32).div(2, rounding_mode=mode),
                      lambda m: m.tensor([-7, 7]).div(m.tensor(2.5), rounding_mode=mode)):
            same_as_torch(make_, torch)


@pytest.mark.parametrize("mode", ["round", "ceil", "TRUNC", ""])
def test_div_refuses_other_rounding_modes(mode):
    with pytest.raises(ValueError, match="rounding_mode"):
        minifw.tensor([7]).div(2, rounding_mode=mode)
    with pytest.raises(ValueError, match="rounding_mode"):
        minifw.div(minifw.tensor([7.0]), 2, rounding_mode=mode)


def test_logical_functions(dev):
    a, b = on(dev, [0, 1, 2, 0]), on(dev, [1, 0, 3, 0])
    check(minifw.logical_and(a, b), dev, [False, False, True, False], BOOL)
    check(minifw.logical_or(a, b), dev, [True, True, True, False], BOOL)
    check(minifw.logical_xor(a, b), dev, [True, True, False, False], BOOL)
    check(minifw.logical_not(a), dev, [True, False, False, True], BOOL)
    check(minifw.logical_not(on(dev, [0.0, 2.5, NAN])), dev, [True, False, False], BOOL)
    check(a.logical_and(on(dev, [0.5, 0.5, 0.0, 0.0])), dev, [False, True, False, False], BOOL)
    check(minifw.logical_xor(on(dev, [True, False]), on(dev, [True, True])), dev, [False, True], BOOL)


def test_bitwise_function_forms(dev):
    a, b = on(dev, [12, 10]), on(dev, [6, 3])
    check(minifw.bitwise_and(a, b), dev, [4, 2], I64)
    check(minifw.bitwise_or(a, b), dev, [14, 11], I64)
    check(minifw.bitwise_xor(a, b), dev, [10, 9], I64)
    check(minifw.bitwise_not(a), dev, [-13, -11], I64)
    check(minifw.bitwise_and(a, 8), dev, [8, 8], I64)
    check(minifw.floor_divide(a, b), dev, [2, 3], I64)
    check(minifw.remainder(a, b), dev, [0, 1], I64)
    check(a.bitwise_xor(b), dev, [10, 9], I64)


def test_logical_functions_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.logical_and(m.tensor([0, 1, 2, 0]), m.tensor([1, 0, 3, 0])),
                  lambda m: m.logical_or(m.tensor([0, 1, 2, 0]), m.tensor([1, 0, 3, 0])),
                  lambda m: m.logical_xor(m.tensor([0, 1, 2, 0]), m.tensor([1, 0, 3, 0])),
                  lambda m: m.logical_not(m.tensor([0.0, 2.5])),
                  lambda m: m.tensor([0, 1, 2, 0]).logical_and(m.tensor([0.5, 0.5, 0.0, 0.0]))):
        same_as_torch(make_, torch)


# ---- 3. maximum / minimum, torch.max(a, b), clamp with tensor bounds ------------------------------

def test_maximum_minimum_values(dev):
    a, b = on(dev, [1.0, 5.0, 3.0]), on(dev, [4.0, 2.0, 3.0])
    for out in (minifw.maximum(a, b), a.maximum(b), minifw.max(a, b), a.max(b)):
        check(out, dev, [4.0, 5.0, 3.0], F32)
    for out in (minifw.minimum(a, b), a.minimum(b), minifw.min(a, b), a.min(b)):
        check(out, dev, [1.0, 2.0, 3.0], F32)
    col = on(dev, [[0.0], [3.0]])
    check(minifw.maximum(col, on(dev, [1.0, 2.0, 4.0])), dev, [[1, 2, 4], [3, 3, 4]], F32)
    check(minifw.minimum(on(dev, [1.0, 2.0, 4.0]), col), dev, [[0, 0, 0], [1, 2, 3]], F32)
    check(minifw.maximum(on(dev, [1, 5], I32), on(dev, [2.5, 0.0])), dev, [2.5, 5.0], F32)
    check(minifw.maximum(on(dev, [1, 5], I32), on(dev, 3)), dev, [3, 5], I32)  # 0-d: lower class
    check(minifw.minimum(on(dev, [1, 5], I32), on(dev, [2, 2], I64)), dev, [1, 2], I64)
    check(minifw.maximum(on(dev, [True, False]), on(dev, [False, False])), dev, [True, False], BOOL)
    out = minifw.maximum(on(dev, [NAN, 1.0]), on(dev, [0.0, NAN]))
    assert out.device == dev and np.isnan(host(out)).all()  # NaN propagates, as PyTorch


def test_maximum_minimum_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.maximum(m.tensor([[0.0], [3.0]]), m.tensor([1.0, 2.0, 4.0])),
                  lambda m: m.minimum(m.tensor([1, 5], dtype=m.int32), m.tensor([2.5, 0.0])),
                  lambda m: m.maximum(m.tensor([1, 5], dtype=m.int32), m.tensor(3)),
                  lambda m: m.max(m.tensor([1.0, 5.0]), m.tensor([4.0, 2.0])),
                  lambda m: m.tensor([1.0, 5.0]).min(m.tensor([4.0, 2.0])),
                  lambda m: m.maximum(m.tensor([NAN, 1.0]), m.tensor([0.0, NAN]))):
        same_as_torch(make_, torch)


def test_maximum_minimum_split_the_gradient_at_ties():
    ga, gb = grads_of(minifw.maximum, [1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(ga, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.5, 0.0])
    ga, gb = grads_of(minifw.minimum, [1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(ga, [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(gb, [0.0, 0.5, 1.0])
    ga, gb = grads_of(lambda a, b: a.max(b), [2.0, 2.0], [2.0])  # broadcast: b collects both halves
    np.testing.assert_array_equal(ga, [0.5, 0.5])
    np.testing.assert_array_equal(gb, [1.0])
    ga, gb = grads_of(lambda a, b: minifw.min(a, b), [[1.0, 4.0], [2.0, 0.0]], [2.0, 3.0],
                      weights=[[1.0, 2.0], [4.0, 8.0]])
    np.testing.assert_array_equal(ga, [[1.0, 0.0], [2.0, 8.0]])
    np.testing.assert_array_equal(gb, [2.0, 2.0])


def test_maximum_minimum_tie_gradients_as_torch():
    torch = pytest.importorskip("torch")
    for name in ("maximum", "minimum"):
        values = ([[1.0, 2.0, 3.0], [2.0, 0.0, 5.0]], [2.0, 2.0, 5.0])
        weights = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        ours = grads_of(getattr(minifw, name), *values, weights=weights)
        theirs = torch_grads(torch, lambda m, a, b: getattr(m, name)(a, b), *values, weights=weights)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)


def test_maximum_minimum_gradcheck_away_from_ties():
    a = leaf([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]])
    b = leaf([0.5, -1.0, 0.2])
    gradcheck(minifw.maximum, [a, b])
    gradcheck(minifw.minimum, [a, b])
    gradcheck(lambda a, b: minifw.max(a, b), [leaf([0.3, -2.0]), leaf([[1.0, -1.0], [0.0, 0.5]])])


def test_maximum_gradients_on_the_device(dev):
    a = on(dev, [1.0, 2.0, 3.0], requires_grad=True)
    b = on(dev, [2.0, 2.0, 2.0], requires_grad=True)
    backward(minifw.maximum(a, b).sum())
    check(a.grad, dev, [0.0, 0.5, 1.0])
    check(b.grad, dev, [1.0, 0.5, 0.0])


def test_maximum_refuses_a_number():
    with pytest.raises(TypeError):
        minifw.maximum(minifw.ones(2), 1.0)


def test_clamp_with_tensor_bounds_values(dev):
    x = on(dev, [[0.0, 1.5, 3.0], [-1.0, 2.0, 5.0]])
    lo, hi = on(dev, [0.5, 1.0, 1.0]), on(dev, [[2.0], [4.0]])
    check(x.clamp(lo, hi), dev, [[0.5, 1.5, 2.0], [0.5, 2.0, 4.0]], F32)
    check(minifw.clamp(x, min=lo), dev, [[0.5, 1.5, 3.0], [0.5, 2.0, 5.0]], F32)
    check(x.clamp(max=hi), dev, [[0.0, 1.5, 2.0], [-1.0, 2.0, 4.0]], F32)
    check(on(dev, [0, 5, 9]).clamp(on(dev, [1, 1, 1]), on(dev, [8, 8, 8])), dev, [1, 5, 8], I64)
    check(on(dev, [0, 5], I32).clamp(on(dev, 0.5, F64)), dev, [0.5, 5.0], F64)
    out = on(dev, [[0.0, 1.0]]).clamp(on(dev, [[0.5], [2.0]]))  # bounds may broadcast the input
    check(out, dev, [[0.5, 1.0], [2.0, 2.0]], F32)
    check(on(dev, [0.0, 5.0]).clamp(on(dev, [3.0, 3.0]), on(dev, [1.0, 1.0])), dev, [1.0, 1.0], F32)


def test_clamp_with_tensor_bounds_gradient_at_ties():
    gx, glo, ghi = grads_of(lambda x, lo, hi: x.clamp(lo, hi), [0.0, 1.0, 2.0, 3.0],
                            [1.0, 1.0, 1.0, 1.0], 2.0)
    np.testing.assert_array_equal(gx, [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(glo, [1.0, 0.5, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, 1.5)
    gx, glo = grads_of(lambda x, lo: minifw.clamp(x, min=lo), [[1.0, 0.0], [3.0, 2.0]], [1.0, 2.0])
    np.testing.assert_array_equal(gx, [[0.5, 0.0], [1.0, 0.5]])
    np.testing.assert_array_equal(glo, [0.5, 1.5])


def _torch_with_clamps_bound_gradient():
    """PyTorch, where its clamp's gradient at a bound is 2.14's, which minifw follows: none to x
    at a number bound, shared between x and a tensor bound equal to it. 2.13 and earlier gave
    all of it to x."""
    torch = pytest.importorskip("torch")
    if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 14):
        pytest.skip(f"PyTorch {torch.__version__} gives clamp's gradient at a bound to x (2.14 does not)")
    return torch


def test_clamp_with_tensor_bounds_as_torch():
    torch = _torch_with_clamps_bound_gradient()
    values = ([[0.0, 1.0, 2.0, 3.0], [1.5, 2.0, -1.0, 1.0]], [1.0, 1.0, 0.0, 1.0], [[2.0], [1.5]])
    weights = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    ours = grads_of(lambda x, lo, hi: x.clamp(lo, hi), *values, weights=weights)
    theirs = torch_grads(torch, lambda m, x, lo, hi: x.clamp(lo, hi), *values, weights=weights)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)
    same_as_torch(lambda m: m.tensor([[0.0, 1.5, 3.0], [-1.0, 2.0, 5.0]]).clamp(
        m.tensor([0.5, 1.0, 1.0]), m.tensor([[2.0], [4.0]])), torch)
    same_as_torch(lambda m: m.tensor([0.0, 5.0]).clamp(m.tensor([3.0, 3.0]), m.tensor([1.0, 1.0])),
                  torch)  # min above max: max wins
    same_as_torch(lambda m: m.tensor([[0.0, 1.0]]).clamp(m.tensor([[0.5], [2.0]])), torch)


def test_clamp_with_tensor_bounds_gradcheck():
    gradcheck(lambda x, lo, hi: x.clamp(lo, hi),
              [leaf([[0.1, 1.3, 2.7], [-0.4, 0.9, 5.0]]), leaf([0.5, 1.0, 0.2]), leaf([[2.0], [0.7]])])


def test_clamp_with_number_bounds_passes_no_gradient_at_the_bounds():
    gx, = grads_of(lambda x: x.clamp(1.0, 2.0), [0.0, 1.0, 1.5, 2.0, 3.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0, 1.0, 0.0, 0.0])
    gx, = grads_of(lambda x: x.clamp(min=1.0), [0.0, 1.0, 1.5])
    np.testing.assert_array_equal(gx, [0.0, 0.0, 1.0])
    gx, = grads_of(lambda x: minifw.clamp(x, max=2.0), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0])
    gx, = grads_of(lambda x: x.clamp(minifw.tensor(1.0), minifw.tensor(2.0)), [1.0, 1.5, 2.0])
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.5])  # 0-d tensor bounds: the tensor rule


def test_clamp_with_number_bounds_gradient_as_torch():
    torch = _torch_with_clamps_bound_gradient()
    for fn in (lambda m, x: x.clamp(1.0, 2.0), lambda m, x: x.clamp(min=1.0),
               lambda m, x: x.clamp(max=2.0)):
        ours = grads_of(lambda x: fn(minifw, x), [0.0, 1.0, 1.5, 2.0, 3.0])
        theirs = torch_grads(torch, fn, [0.0, 1.0, 1.5, 2.0, 3.0])
        np.testing.assert_array_equal(ours[0], theirs[0])


# ---- 4. var / std -------------------------------------------------------------------------------

VAR_X = [[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0]]  # rows: SS 5 and 20; all: mean 3.75, SS 37.5


@pytest.mark.parametrize("call, expected", [
    pytest.param(lambda x: x.var(1), [5 / 3, 20 / 3], id="dim"),
    pytest.param(lambda x: x.var(1, True), [5 / 3, 20 / 3], id="dim_unbiased_true"),
    pytest.param(lambda x: x.var(1, False), [1.25, 5.0], id="dim_unbiased_false"),
    pytest.param(lambda x: x.var(), 37.5 / 7, id="all"),
    pytest.param(lambda x: x.var(False), 37.5 / 8, id="positional_false"),
    pytest.param(lambda x: x.var(True), 37.5 / 7, id="positional_true"),
    pytest.param(lambda x: x.var(unbiased=False), 37.5 / 8, id="unbiased_kw"),
    pytest.param(lambda x: x.var(1, correction=0), [1.25, 5.0], id="correction_0"),
    pytest.param(lambda x: x.var(dim=1, correction=2), [2.5, 10.0], id="correction_2"),
    pytest.param(lambda x: x.var(0, False), [0.25, 1.0, 2.25, 4.0], id="dim0"),
    pytest.param(lambda x: x.var(1, True, True), [[5 / 3], [20 / 3]], id="keepdim_positional"),
    pytest.param(lambda x: x.var((0, 1), keepdim=True, correction=0), [[37.5 / 8]], id="tuple_dim"),
    pytest.param(lambda x: minifw.var(x, 1, False), [1.25, 5.0], id="fn_positional"),
    pytest.param(lambda x: minifw.var(x, unbiased=False), 37.5 / 8, id="fn_unbiased"),
    pytest.param(lambda x: minifw.var(x, dim=1, correction=0), [1.25, 5.0], id="fn_correction"),
    pytest.param(lambda x: x.std(1, False), np.sqrt([1.25, 5.0]), id="std_dim_false"),
    pytest.param(lambda x: x.std(False), math.sqrt(37.5 / 8), id="std_positional_false"),
    pytest.param(lambda x: x.std(), math.sqrt(37.5 / 7), id="std_all"),
    pytest.param(lambda x: x.std(1, correction=0, keepdim=True), np.sqrt([[1.25], [5.0]]),
                 id="std_correction_keepdim"),
    pytest.param(lambda x: minifw.std(x, 1), np.sqrt([5 / 3, 20 / 3]), id="std_fn"),
    pytest.param(lambda x: minifw.std(x, unbiased=False), math.sqrt(37.5 / 8), id="std_fn_kw"),
])
def test_var_and_std_signatures(call, expected):
    close(call(minifw.tensor(VAR_X)), expected, F32, rtol=1e-6)
    close(call(minifw.tensor(VAR_X, dtype=F64)), expected, F64, rtol=1e-12)


def test_var_and_std_signatures_as_torch():
    torch = pytest.importorskip("torch")
    for call in (lambda m, x: x.var(1, False), lambda m, x: x.var(False),
                 lambda m, x: x.var(unbiased=False), lambda m, x: x.var(1, correction=0),
                 lambda m, x: x.var(1, True, True), lambda m, x: x.std(1, False),
                 lambda m, x: m.var(x, 1, False), lambda m, x: m.std(x, dim=1, correction=2),
                 lambda m, x: x.std(False), lambda m, x: m.var(x, unbiased=False)):
        same_as_torch(lambda m: call(m, m.tensor(VAR_X, dtype=m.float64)), torch)


@pytest.mark.parametrize("call", [
    pytest.param(lambda x: x.var(1, True, correction=1), id="var_positional"),
    pytest.param(lambda x: x.var(unbiased=False, correction=0), id="var_keywords"),
    pytest.param(lambda x: x.std(1, False, correction=0), id="std_positional"),
    pytest.param(lambda x: x.std(unbiased=True, correction=1), id="std_keywords"),
    pytest.param(lambda x: minifw.var(x, 1, True, correction=1), id="var_fn"),
    pytest.param(lambda x: minifw.std(x, unbiased=False, correction=0), id="std_fn"),
])
def test_var_and_std_refuse_unbiased_with_correction(call):
    with pytest.raises(TypeError):
        call(minifw.tensor(VAR_X))


def test_std_gradient_is_zero_where_std_is_zero():
    g, = grads_of(lambda x: x.std(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    g, = grads_of(lambda x: x.std(1), [[1.0, 1.0], [1.0, 3.0]])
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g, [[0.0, 0.0], [-1 / math.sqrt(2), 1 / math.sqrt(2)]], rtol=1e-12)
    g, = grads_of(lambda x: x.std(0, False), [[2.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(g, [[0.0, -0.5], [0.0, 0.5]], rtol=1e-12)
    g, = grads_of(lambda x: minifw.std(x, correction=0), [[5.0, 5.0]])
    np.testing.assert_array_equal(g, [[0.0, 0.0]])


def test_std_gradient_at_zero_as_torch():
    torch = pytest.importorskip("torch")
    for fn in (lambda m, x: x.std(), lambda m, x: x.std(1), lambda m, x: x.std(0, False)):
        values = [[1.0, 1.0], [1.0, 3.0]]
        np.testing.assert_allclose(grads_of(lambda x: fn(minifw, x), values)[0],
                                   torch_grads(torch, fn, values)[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("fn", [
    pytest.param(lambda x: x.std(), id="std"),
    pytest.param(lambda x: x.std(1), id="std_dim"),
    pytest.param(lambda x: x.std(0, False, True), id="std_dim0_biased_keepdim"),
    pytest.param(lambda x: x.std(1, correction=2), id="std_correction2"),
    pytest.param(lambda x: x.var(), id="var"),
    pytest.param(lambda x: x.var(0), id="var_dim0"),
    pytest.param(lambda x: x.var(1, False), id="var_biased"),
    pytest.param(lambda x: minifw.var(x, (0, 1), correction=0), id="var_fn_tuple"),
])
def test_var_and_std_gradcheck(fn):
    gradcheck(fn, [leaf([[0.3, -1.2, 0.8, 2.0], [1.4, 0.1, -0.6, 0.9]])])


def test_var_of_a_zero_d_tensor_is_nan():
    out = minifw.tensor(2.0).var(0)
    assert out.shape == () and math.isnan(out.item())
    out = minifw.tensor([2.0]).var()
    assert out.shape == () and math.isnan(out.item())
    assert minifw.tensor([2.0]).var(unbiased=False).item() == 0.0


# ---- 5. dtype= of sum / mean / softmax ----------------------------------------------------------

def test_sum_and_mean_dtype(dev):
    ints = on(dev, [1, 2, 4])
    check(ints.sum(dtype=F32), dev, 7.0, F32)
    check(minifw.sum(ints, dtype=F64), dev, 7.0, F64)
    check(ints.sum(0, dtype=F32), dev, 7.0, F32)
    check(ints.sum(), dev, 7, I64)
    check(on(dev, [1, 2], I32).sum(), dev, 3, I64)
    check(on(dev, [[1.5, 2.0]]).sum(1, keepdim=True, dtype=F64), dev, [[3.5]], F64)
    check(on(dev, [1.5, 2.5]).sum(dtype=I64), dev, 3, I64)  # the input is cast first: 1 + 2
    check(ints.mean(dtype=F64), dev, 7 / 3, F64)
    check(minifw.mean(ints, dtype=F32), dev, np.float32(7) / np.float32(3), F32)
    check(on(dev, [[1, 2], [3, 5]]).mean(1, dtype=F64), dev, [1.5, 4.0], F64)
    check(on(dev, [1.0, 2.0]).mean(dtype=F64), dev, 1.5, F64)


def test_sum_with_a_narrow_dtype_keeps_it(dev):
    check(on(dev, [1, 2], I32).sum(dtype=I32), dev, 3, I32)
    check(on(dev, [[1, 2]], I32).sum(1, dtype=I32), dev, [3], I32)
    check(on(dev, [1.5, 2.5]).sum(dtype=I32), dev, 3, I32)
    check(on(dev, [True, True]).sum(dtype=BOOL), dev, True, BOOL)


def test_sum_with_a_narrow_dtype_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([1, 2], dtype=m.int32).sum(dtype=m.int32),
                  lambda m: m.tensor([1.5, 2.5]).sum(dtype=m.int32),
                  lambda m: m.tensor([True, True]).sum(dtype=m.bool)):
        same_as_torch(make_, torch)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.tensor([1, 2]).mean(), id="method"),
    pytest.param(lambda: minifw.tensor([1, 2], dtype=I32).mean(0), id="int32_dim"),
    pytest.param(lambda: minifw.mean(minifw.tensor([True, False])), id="bool_fn"),
    pytest.param(lambda: minifw.tensor([1.0, 2.0]).mean(dtype=I64), id="cast_to_int"),
])
def test_mean_of_integers_without_a_float_dtype_raises(call):
    with pytest.raises(TypeError, match="mean"):
        call()


def test_sum_mean_dtype_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([1, 2, 4]).sum(dtype=m.float32),
                  lambda m: m.tensor([1, 2, 4]).mean(dtype=m.float64),
                  lambda m: m.tensor([1.5, 2.5]).sum(dtype=m.int64),
                  lambda m: m.tensor([1, 2], dtype=m.int32).sum(),
                  lambda m: m.sum(m.tensor([[1.5, 2.0]]), 1, keepdim=True, dtype=m.float64)):
        same_as_torch(make_, torch)


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_and_log_softmax_dtype(dev):
    values = [[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]]
    x = on(dev, values)
    want = _softmax(np.array(values, np.float64), 1)
    for out in (x.softmax(1, dtype=F64), minifw.softmax(x, 1, dtype=F64), x.softmax(-1, F64)):
        assert out.device == dev and out.dtype == F64
        np.testing.assert_allclose(host(out), want, rtol=1e-12)
    for out in (x.log_softmax(1, dtype=F64), minifw.log_softmax(x, 1, dtype=F64)):
        assert out.device == dev and out.dtype == F64
        np.testing.assert_allclose(host(out), np.log(want), rtol=1e-12)
    ints = on(dev, [1, 2, 3])
    out = ints.softmax(0, dtype=F32)
    assert out.dtype == F32 and out.device == dev
    np.testing.assert_allclose(host(out), _softmax(np.array([1.0, 2.0, 3.0]), 0), rtol=1e-6)
    assert on(dev, [1.0, 2.0], F64).softmax(0, dtype=F32).dtype == F32
    assert x.softmax(1).dtype == F32


def test_softmax_dtype_passes_the_gradient_back_in_the_input_dtype():
    x = minifw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.log_softmax(0, dtype=F64)
    backward((y * minifw.tensor([1.0, 0.0, 0.0], dtype=F64)).sum())
    assert x.grad.dtype == F32
    p = _softmax(np.array([1.0, 2.0, 3.0]), 0)
    np.testing.assert_allclose(host(x.grad), np.array([1.0, 0.0, 0.0]) - p, rtol=1e-6)


def test_softmax_dtype_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([[1.0, 2.0, 3.0]]).softmax(1, dtype=m.float64),
                  lambda m: m.softmax(m.tensor([1, 2, 3]), 0, dtype=m.float32),
                  lambda m: m.log_softmax(m.tensor([[1.0, 2.0], [0.0, 5.0]]), 0, dtype=m.float64)):
        same_as_torch(make_, torch)


@pytest.mark.parametrize("call", [
    pytest.param(lambda x: x.softmax((0,)), id="method_tuple"),
    pytest.param(lambda x: x.softmax((0, 1)), id="method_pair"),
    pytest.param(lambda x: minifw.softmax(x, (1,)), id="function"),
    pytest.param(lambda x: x.log_softmax([0]), id="log_softmax_list"),
    pytest.param(lambda x: minifw.log_softmax(x, (1,)), id="log_softmax_function"),
    pytest.param(lambda x: x.softmax(None), id="none"),
])
def test_softmax_refuses_a_tuple_dim(call):
    with pytest.raises(TypeError):
        call(minifw.ones(2, 3))


# ---- 6. reductions of empty and 0-d tensors -----------------------------------------------------

def test_reductions_over_a_non_empty_dim_of_an_empty_tensor(dev):
    e = minifw.ones(0, 3, device=dev)
    values, indices = e.max(1)
    check(values, dev, np.zeros(0), F32)
    check(indices, dev, np.zeros(0), I64)
    values, indices = e.min(1, keepdim=True)
    check(values, dev, np.zeros((0, 1)), F32)
    check(indices, dev, np.zeros((0, 1)), I64)
    check(e.argmax(1), dev, np.zeros(0), I64)
    check(e.argmin(1), dev, np.zeros(0), I64)
    check(e.sum(1), dev, np.zeros(0), F32)
    check(e.sum(0), dev, [0.0, 0.0, 0.0], F32)
    check(e.amax(1), dev, np.zeros(0), F32)
    check(e.mean(1), dev, np.zeros(0), F32)
    check(minifw.ones(3, 0, device=dev).sum(1), dev, [0.0, 0.0, 0.0], F32)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_reducing_an_empty_dim_raises_index_error(name):
    with pytest.raises(IndexError, match=name):
        getattr(minifw.ones(3, 0), name)(1)
    with pytest.raises(IndexError):
        getattr(minifw.ones(3, 0), name)(-1)


def test_empty_reductions_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: tuple(m.ones(0, 3).max(1)), lambda m: tuple(m.ones(0, 3).min(1, True)),
                  lambda m: m.ones(0, 3).argmax(1), lambda m: m.ones(0, 3).sum(1),
                  lambda m: m.ones(0, 3).sum(0), lambda m: m.ones(3, 0).sum(1),
                  lambda m: m.ones(0, 3).amax(1), lambda m: m.ones(0, 3).mean(1)):
        same_as_torch(make_, torch)


def test_reductions_of_a_zero_d_tensor(dev):
    t = on(dev, 2.0)
    check(t.sum(0), dev, 2.0, F32)
    check(t.sum(-1, keepdim=True), dev, 2.0, F32)
    values, indices = t.max(0)
    check(values, dev, 2.0, F32)
    check(indices, dev, 0, I64)
    values, indices = t.min(-1)
    check(values, dev, 2.0, F32)
    check(indices, dev, 0, I64)
    check(t.argmax(0), dev, 0, I64)
    check(t.argmin(-1), dev, 0, I64)
    check(t.mean(-1), dev, 2.0, F32)
    check(t.amax(0), dev, 2.0, F32)
    check(t.amin(-1), dev, 2.0, F32)
    out = t.var(0)
    assert out.device == dev and out.shape == () and math.isnan(out.item())
    check(on(dev, 5).sum(0), dev, 5, I64)


@pytest.mark.parametrize("call", [
    pytest.param(lambda t: t.sum(1), id="sum"),
    pytest.param(lambda t: t.max(1), id="max"),
    pytest.param(lambda t: t.argmax(-2), id="argmax"),
    pytest.param(lambda t: t.mean(1), id="mean"),
])
def test_zero_d_reductions_check_the_dim(call):
    with pytest.raises(IndexError):
        call(minifw.tensor(2.0))


def test_zero_d_reductions_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor(2.0).sum(0), lambda m: tuple(m.tensor(2.0).max(0)),
                  lambda m: m.tensor(2.0).argmax(0), lambda m: m.tensor(2.0).mean(-1),
                  lambda m: m.tensor(2.0).amax(0), lambda m: m.tensor(2.0).var(0),
                  lambda m: m.tensor(2.0).sum(0, keepdim=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's var warns of no degrees of freedom
            same_as_torch(make_, torch)


def test_an_empty_dim_tuple_reduces_everything(dev):
    x = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check(x.sum(dim=()), dev, 21.0, F32)
    check(minifw.sum(x, ()), dev, 21.0, F32)
    check(x.sum(dim=[]), dev, 21.0, F32)
    check(x.mean(dim=()), dev, 3.5, F32)
    check(x.amax(dim=()), dev, 6.0, F32)


def test_an_empty_dim_tuple_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.ones(2, 3).sum(dim=()), lambda m: m.ones(2, 3).mean(dim=()),
                  lambda m: m.arange(6.0).reshape(2, 3).amax(dim=())):
        same_as_torch(make_, torch)


# ---- 7. 0-d integer relu / sign -----------------------------------------------------------------

@pytest.mark.parametrize("name, value, dtype, expected", [
    ("relu", -3, I64, 0), ("relu", 4, I32, 4), ("sign", -3, I64, -1), ("sign", 0, I32, 0),
    ("sign", 7, I64, 1),
])
def test_zero_d_integer_relu_and_sign_are_tensors(dev, name, value, dtype, expected):
    out = getattr(on(dev, value, dtype), name)()
    check(out, dev, expected, dtype)
    out.add_(1)
    check(out, dev, expected + 1, dtype)
    if dev == devices.CPU:
        a = out.numpy()
        assert isinstance(a, np.ndarray) and a.shape == () and a == expected + 1
    vec = getattr(on(dev, [value, -value], dtype), name)()
    assert vec.device == dev and vec.dtype == dtype


def test_integer_relu_and_sign_functions(dev):
    check(minifw.relu(on(dev, -2)), dev, 0, I64)
    check(minifw.sign(on(dev, [-2, 0, 5])), dev, [-1, 0, 1], I64)


# ---- 8. __format__ ------------------------------------------------------------------------------

def test_format_of_a_zero_d_tensor():
    assert f"{minifw.tensor(1.23456):.2f}" == "1.23"
    assert f"{minifw.tensor(1.23456, dtype=F64):.3e}" == "1.235e+00"
    assert f"{minifw.tensor(3):>4}" == "   3"
    assert f"{minifw.tensor(3):d}" == "3"
    assert f"{minifw.tensor(0.5):%}" == "50.000000%"
    assert format(minifw.tensor(1.5)) == "1.5"


def test_format_of_a_tensor_with_dimensions():
    t = minifw.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        f"{t:.2f}"
    with pytest.raises(TypeError):
        format(minifw.ones(1), ">10")
    assert f"{t}" == str(t)
    assert format(t, "") == str(t)
    assert "{}".format(minifw.ones(2, 2)) == str(minifw.ones(2, 2))


def test_format_as_torch():
    torch = pytest.importorskip("torch")
    for spec in (".2f", ">8", "", ".1e"):
        assert format(minifw.tensor(1.23456), spec) == format(torch.tensor(1.23456), spec)
    assert format(minifw.tensor(3), ">4") == format(torch.tensor(3), ">4")
    with pytest.raises(TypeError):
        format(torch.tensor([1.0, 2.0]), ".2f")


# ---- 9. the legacy constructor, is_contiguous, is_cuda, mT ---------------------------------------

def test_legacy_constructor():
    t = minifw.Tensor([1, 2])
    assert isinstance(t, minifw.Tensor) and t.dtype == F32
    check(t, devices.CPU, [1.0, 2.0], F32)
    t = minifw.Tensor(2, 3)
    check(t, devices.CPU, np.zeros((2, 3)), F32)
    check(minifw.Tensor(3), devices.CPU, [0.0, 0.0, 0.0], F32)
    t = minifw.Tensor()
    assert t.shape == (0,) and t.dtype == F32
    check(minifw.Tensor((2, 3)), devices.CPU, [2.0, 3.0], F32)  # a tuple is data, not a size
    check(minifw.Tensor([[1, 2], [3, 4]]), devices.CPU, [[1.0, 2.0], [3.0, 4.0]], F32)
    check(minifw.Tensor(np.array([1, 2])), devices.CPU, [1.0, 2.0], F32)
    check(minifw.Tensor([1, 2], dtype=F64), devices.CPU, [1.0, 2.0], F64)
    check(minifw.Tensor(2, dtype=I64), devices.CPU, [0, 0], I64)
    assert not minifw.Tensor(2).requires_grad


def test_legacy_constructor_on_the_device(dev):
    check(minifw.Tensor(2, 2, device=dev), dev, np.zeros((2, 2)), F32)
    check(minifw.Tensor([1, 2], device=dev), dev, [1.0, 2.0], F32)


def test_legacy_constructor_follows_the_default_dtype():
    minifw.set_default_dtype(F64)
    try:
        assert minifw.Tensor([1, 2]).dtype == F64 and minifw.Tensor(2).dtype == F64
    finally:
        minifw.set_default_dtype(F32)


@pytest.mark.parametrize("args", [
    pytest.param((2, [3]), id="int_and_list"),
    pytest.param(([1], 2), id="list_and_int"),
    pytest.param((2, 3.0), id="int_and_float"),
    pytest.param(([1], [2]), id="two_lists"),
    pytest.param((2, "3"), id="int_and_str"),
])
def test_legacy_constructor_refuses_mixed_arguments(args):
    with pytest.raises(TypeError):
        minifw.Tensor(*args)


@pytest.mark.parametrize("data", [2.5, True, False, -1.0])
def test_legacy_constructor_refuses_a_number_as_data(data):
    with pytest.raises(TypeError):
        minifw.Tensor(data)  # torch: "new(): data must be a sequence (got float)"


def test_legacy_constructor_as_torch():
    torch = pytest.importorskip("torch")
    assert tname(torch.Tensor([1, 2]).dtype) == tname(minifw.Tensor([1, 2]).dtype)
    assert tuple(torch.Tensor(2, 3).shape) == minifw.Tensor(2, 3).shape
    assert tuple(torch.Tensor().shape) == minifw.Tensor().shape
    assert torch.Tensor((2, 3)).tolist() == minifw.Tensor((2, 3)).tolist()
    with pytest.raises(TypeError):
        torch.Tensor(2, [3])
    with pytest.raises(TypeError):
        torch.Tensor(2.5)
    with pytest.raises(TypeError):
        torch.Tensor(True)


def test_is_contiguous(dev):
    x = minifw.ones(2, 3, device=dev)
    assert x.is_contiguous() is True
    assert x.t().is_contiguous() is False
    assert x.t().contiguous().is_contiguous() is True
    assert x.transpose(0, 1).contiguous().is_contiguous()
    assert x[:, ::2].is_contiguous() is False
    assert x[1:].is_contiguous() is True
    assert x.reshape(3, 2).is_contiguous()


def test_is_cuda(dev):
    assert minifw.ones(2, device=dev).is_cuda is (dev.type == "cuda")
    assert minifw.ones(2).is_cuda is False
    assert minifw.ones(2, device="cudasim").is_cuda is False


def test_mT(dev):
    values = np.arange(24.0).reshape(2, 3, 4)
    x = on(dev, values, F32)
    check(x.mT, dev, values.transpose(0, 2, 1), F32)
    m = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check(m.mT, dev, [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], F32)
    w = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    backward((w.mT * on(dev, [[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])).sum())
    check(w.grad, dev, [[1.0, 0.0, 3.0], [0.0, 2.0, 0.0]])


def test_mT_gradcheck():
    gradcheck(lambda x: x.mT * minifw.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=F64),
              [leaf([[[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]]])])


# ---- 10. randint, randperm, creation that cannot be allocated, arange of a tensor ----------------

def test_randint_with_high_and_a_size(rng_state):
    minifw.manual_seed(0)
    a = minifw.randint(10, (3,))
    minifw.manual_seed(0)
    b = minifw.randint(0, 10, (3,))
    assert a.shape == (3,) and a.dtype == I64
    np.testing.assert_array_equal(host(a), host(b))
    minifw.manual_seed(1)
    many = host(minifw.randint(10, (1000,)))
    assert many.min() >= 0 and many.max() < 10 and len(set(many.tolist())) == 10
    many = host(minifw.randint(-3, 2, (500,)))
    assert many.min() == -3 and many.max() == 1
    assert minifw.randint(5, size=(2, 2)).shape == (2, 2)
    assert minifw.randint(3, [4]).shape == (4,)


@pytest.mark.parametrize("low, high", [(5, 2), (3, 3), (0, 0), (0, -1)])
def test_randint_refuses_an_empty_range(low, high):
    with pytest.raises(ValueError, match=r"low.*high|high.*low"):
        minifw.randint(low, high, (2,))
    with pytest.raises(ValueError, match=r"low.*high|high.*low"):
        minifw.randint(low, high)


def test_randint_of_nonpositive_high_alone_raises():
    with pytest.raises(ValueError):
        minifw.randint(0, (3,))


@pytest.mark.parametrize("n", [-1, -5])
def test_randperm_refuses_negative_n(n):
    with pytest.raises(ValueError, match="randperm"):
        minifw.randperm(n)


def test_randperm_values(rng_state):
    minifw.manual_seed(3)
    assert sorted(host(minifw.randperm(6)).tolist()) == list(range(6))
    assert minifw.randperm(0).shape == (0,) and minifw.randperm(0).dtype == I64


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_an_impossible_allocation_is_a_memory_error_naming_the_function(name):
    with pytest.raises(MemoryError, match=name):
        getattr(minifw, name)(2 ** 40, 2 ** 40)


def test_arange_of_a_zero_d_tensor():
    out = minifw.arange(minifw.tensor(3))
    check(out, devices.CPU, [0, 1, 2], I64)
    out = minifw.arange(minifw.tensor(1), minifw.tensor(7), minifw.tensor(2))
    check(out, devices.CPU, [1, 3, 5], I64)
    out = minifw.arange(minifw.tensor(3.0))
    assert out.dtype == F32
    np.testing.assert_array_equal(host(out), [0.0, 1.0, 2.0])


def test_arange_of_a_tensor_as_torch():
    torch = pytest.importorskip("torch")
    same_as_torch(lambda m: m.arange(m.tensor(3)), torch)
    same_as_torch(lambda m: m.arange(m.tensor(3.0)), torch)


# ---- 11. cat skips empty 1-D tensors ------------------------------------------------------------

def test_cat_skips_empty_one_d_tensors(dev):
    empty = on(dev, [])
    assert empty.shape == (0,) and empty.dtype == F32
    out = minifw.cat([empty, minifw.ones(2, 3, device=dev)])
    check(out, dev, np.ones((2, 3)), F32)
    check(minifw.cat([minifw.ones(2, 3, device=dev), empty], dim=1), dev, np.ones((2, 3)), F32)
    check(minifw.cat([empty, on(dev, [1, 2])]), dev, [1.0, 2.0], F32)  # the empty float promotes
    check(minifw.cat([on(dev, [1, 2]), empty, on(dev, [3])]), dev, [1.0, 2.0, 3.0], F32)
    check(minifw.cat([empty, empty]), dev, np.zeros(0), F32)
    check(minifw.cat([on(dev, [], F64), minifw.ones(1, 2, device=dev)]), dev, [[1.0, 1.0]], F64)


def test_cat_skipping_empties_passes_the_gradient():
    empty = minifw.tensor([], requires_grad=True)
    x = minifw.tensor([1.0, 2.0], requires_grad=True)
    out = minifw.cat([empty, x])
    backward((out * minifw.tensor([3.0, 4.0])).sum())
    np.testing.assert_array_equal(host(x.grad), [3.0, 4.0])
    assert empty.grad is None or empty.grad.shape == (0,)
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    out = minifw.cat([minifw.tensor([]), x, minifw.tensor([])], dim=1)
    assert out.dtype == F64 and out.shape == (2, 2)
    backward((out * minifw.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)).sum())
    np.testing.assert_array_equal(host(x.grad), [[1.0, 2.0], [3.0, 4.0]])
    gradcheck(lambda a, b: minifw.cat([minifw.tensor([], dtype=F64), a, b]),
              [leaf([0.3, -1.2]), leaf([0.8])])


def test_cat_with_empties_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.cat([m.tensor([]), m.ones(2, 3)]),
                  lambda m: m.cat([m.tensor([]), m.tensor([1, 2])]),
                  lambda m: m.cat([m.tensor([], dtype=m.float64), m.ones(1, 2)]),
                  lambda m: m.cat([m.ones(2, 3), m.tensor([])], dim=1)):
        same_as_torch(make_, torch)


def test_concat_and_concatenate_are_cat(dev):
    a, b = on(dev, [[1.0], [2.0]]), on(dev, [[3.0], [4.0]])
    check(minifw.concat([a, b], dim=1), dev, [[1.0, 3.0], [2.0, 4.0]], F32)
    check(minifw.concatenate([a, b]), dev, [[1.0], [2.0], [3.0], [4.0]], F32)
    check(minifw.concat((a, b), 0), dev, [[1.0], [2.0], [3.0], [4.0]], F32)


# ---- 12. integer overflow at creation -----------------------------------------------------------

@pytest.mark.parametrize("make_, value", [
    pytest.param(lambda: minifw.tensor(2 ** 64 - 1), str(2 ** 64 - 1), id="2**64-1"),
    pytest.param(lambda: minifw.tensor([2 ** 63]), str(2 ** 63), id="list_2**63"),
    pytest.param(lambda: minifw.tensor([1, -(2 ** 63) - 1]), str(-(2 ** 63) - 1), id="below_int64"),
    pytest.param(lambda: minifw.tensor(np.array([2 ** 63], np.uint64)), str(2 ** 63), id="uint64"),
    pytest.param(lambda: minifw.tensor(np.array([1, 2 ** 64 - 1], np.uint64)), str(2 ** 64 - 1),
                 id="uint64_max"),
    pytest.param(lambda: minifw.tensor(2 ** 40, dtype=I32), str(2 ** 40), id="int32"),
    pytest.param(lambda: minifw.tensor([2 ** 31], dtype=I32), str(2 ** 31), id="int32_edge"),
    pytest.param(lambda: minifw.tensor([-(2 ** 31) - 1], dtype=I32), str(-(2 ** 31) - 1),
                 id="int32_below"),
    pytest.param(lambda: minifw.tensor(2 ** 70), str(2 ** 70), id="2**70"),
    pytest.param(lambda: minifw.tensor([[1, 2], [3, -(2 ** 70)]]), str(-(2 ** 70)), id="nested"),
    pytest.param(lambda: minifw.tensor([1e30], dtype=I64), "1e+30", id="float_1e30"),
    pytest.param(lambda: minifw.tensor([INF], dtype=I64), "inf", id="inf"),
    pytest.param(lambda: minifw.tensor([-INF], dtype=I32), "-inf", id="minus_inf"),
    pytest.param(lambda: minifw.tensor(np.array([3e9]), dtype=I32), "3000000000", id="ndarray"),
])
def test_integer_overflow_is_refused_at_creation(make_, value):
    with pytest.raises(OverflowError, match=re.escape(value)):
        make_()


def test_integers_that_fit_are_fine():
    check(minifw.tensor(np.array([5, 2 ** 63 - 1], np.uint64)), devices.CPU, [5, 2 ** 63 - 1], I64)
    check(minifw.tensor(np.array([0], np.uint64)), devices.CPU, [0], I64)
    check(minifw.tensor(2 ** 63 - 1), devices.CPU, 2 ** 63 - 1, I64)
    check(minifw.tensor([-(2 ** 63)]), devices.CPU, [-(2 ** 63)], I64)
    check(minifw.tensor([2 ** 31 - 1, -(2 ** 31)], dtype=I32), devices.CPU,
          [2 ** 31 - 1, -(2 ** 31)], I32)
    check(minifw.tensor(np.array([7], np.int64), dtype=I32), devices.CPU, [7], I32)
    check(minifw.tensor([1.9, -1.9], dtype=I64), devices.CPU, [1, -1], I64)
    check(minifw.tensor([1e18], dtype=I64), devices.CPU, [10 ** 18], I64)


def test_big_python_ints_with_a_float_dtype_are_not_an_overflow():
    close(minifw.tensor(2 ** 64, dtype=F64), 2.0 ** 64, F64)
    close(minifw.tensor([2 ** 70, 1], dtype=F32), [2.0 ** 70, 1.0], F32)
    close(minifw.tensor(2 ** 63, dtype=F64), 2.0 ** 63, F64)


def test_big_python_ints_as_torch():
    torch = pytest.importorskip("torch")
    same_as_torch(lambda m: m.tensor(2 ** 64, dtype=m.float64), torch)
    same_as_torch(lambda m: m.tensor([2 ** 70, 1], dtype=m.float32), torch)
    with pytest.raises((RuntimeError, ValueError)):
        torch.tensor(2 ** 64 - 1)  # torch refuses it too


# ---- 13. assigning .grad ------------------------------------------------------------------------

def test_assigning_grad_checks_size_dtype_and_device(dev):
    x = minifw.ones(2, 3, device=dev, requires_grad=True)
    g = minifw.full((2, 3), 0.5, device=dev)
    x.grad = g
    assert x.grad is g
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = minifw.ones(3, 2, device=dev)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = minifw.ones(6, device=dev)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = minifw.ones(2, 3, dtype=F64, device=dev)
    other = "cudasim" if dev.type == "cpu" else "cpu"
    with pytest.raises(RuntimeError, match="assigned grad has data located on a different device"):
        x.grad = minifw.ones(2, 3, device=other)
    assert x.grad is g  # refused assignments leave .grad as it was
    with pytest.raises(TypeError):
        x.grad = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError):
        x.grad = [[1.0] * 3] * 2
    with pytest.raises(TypeError):
        x.grad = 1.0
    x.grad = None
    assert x.grad is None


def test_an_assigned_grad_is_accumulated_into():
    x = minifw.tensor([1.0, 2.0], requires_grad=True)
    x.grad = minifw.tensor([10.0, 20.0])
    backward((x * 3).sum())
    np.testing.assert_array_equal(host(x.grad), [13.0, 23.0])


def test_assigning_grad_errors_as_torch():
    torch = pytest.importorskip("torch")  # the same exception types (torch 2.14 words them otherwise)
    x = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.grad = torch.ones(3, 2)
    with pytest.raises(RuntimeError):
        x.grad = torch.ones(2, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = [1.0]
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        minifw.ones(2, 3, requires_grad=True).grad = [1.0]


# ---- 14. the new functions ----------------------------------------------------------------------

def test_isnan_isinf_isfinite(dev):
    x = on(dev, [1.0, NAN, INF, -INF, 0.0])
    for out in (x.isnan(), minifw.isnan(x)):
        check(out, dev, [False, True, False, False, False], BOOL)
    for out in (x.isinf(), minifw.isinf(x)):
        check(out, dev, [False, False, True, True, False], BOOL)
    for out in (x.isfinite(), minifw.isfinite(x)):
        check(out, dev, [True, False, False, False, True], BOOL)
    check(on(dev, [[NAN]], F64).isnan(), dev, [[True]], BOOL)
    for dtype in (I64, I32, BOOL):
        ints = minifw.zeros(2, 2, dtype=dtype, device=dev)
        check(ints.isnan(), dev, np.zeros((2, 2), bool), BOOL)
        check(ints.isinf(), dev, np.zeros((2, 2), bool), BOOL)
        check(minifw.isfinite(ints), dev, np.ones((2, 2), bool), BOOL)
    check(on(dev, 2.0).isfinite(), dev, True, BOOL)


def test_square(dev):
    check(on(dev, [-2.0, 3.0]).square(), dev, [4.0, 9.0], F32)
    check(minifw.square(on(dev, [-2, 3])), dev, [4, 9], I64)
    check(minifw.square(on(dev, [-2, 3], I32)), dev, [4, 9], I32)
    g, = grads_of(lambda x: x.square(), [-2.0, 3.0])
    np.testing.assert_array_equal(g, [-4.0, 6.0])
    gradcheck(minifw.square, [leaf([[0.3, -1.2], [1.4, 0.1]])])


def test_new_elementwise_functions_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.isnan(m.tensor([1.0, NAN, INF])), lambda m: m.tensor([1, 2]).isinf(),
                  lambda m: m.isfinite(m.tensor([1.0, NAN, -INF])), lambda m: m.tensor([1, 2]).isfinite(),
                  lambda m: m.square(m.tensor([-2, 3])), lambda m: m.tensor([-2.5]).square()):
        same_as_torch(make_, torch)


FLIP_X = np.arange(6).reshape(2, 3)


@pytest.mark.parametrize("call, expected", [
    pytest.param(lambda x: x.flip(0), FLIP_X[::-1], id="int"),
    pytest.param(lambda x: x.flip(1), FLIP_X[:, ::-1], id="dim1"),
    pytest.param(lambda x: x.flip(-1), FLIP_X[:, ::-1], id="negative"),
    pytest.param(lambda x: x.flip((0, 1)), FLIP_X[::-1, ::-1], id="tuple"),
    pytest.param(lambda x: x.flip([1]), FLIP_X[:, ::-1], id="list"),
    pytest.param(lambda x: x.flip(0, 1), FLIP_X[::-1, ::-1], id="varargs"),
    pytest.param(lambda x: minifw.flip(x, [0]), FLIP_X[::-1], id="function_list"),
    pytest.param(lambda x: minifw.flip(x, (0, 1)), FLIP_X[::-1, ::-1], id="function_tuple"),
    pytest.param(lambda x: minifw.flip(x, 1), FLIP_X[:, ::-1], id="function_int"),
    pytest.param(lambda x: x.flip(()), FLIP_X, id="no_dims"),
])
def test_flip(dev, call, expected):
    check(call(on(dev, FLIP_X)), dev, expected, I64)
    check(call(on(dev, FLIP_X, F32)), dev, expected, F32)


def test_flip_is_a_copy(dev):
    x = on(dev, [1.0, 2.0, 3.0])
    y = x.flip(0)
    y.add_(10)
    check(x, dev, [1.0, 2.0, 3.0])
    check(y, dev, [13.0, 12.0, 11.0])
    check(on(dev, 2.5).flip(0), dev, 2.5, F32)


def test_flip_gradients(dev):
    x = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    backward((x.flip(0, 1) * w).sum())
    check(x.grad, dev, [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]])
    gradcheck(lambda x: x.flip(1), [leaf([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]])])
    gradcheck(lambda x: minifw.flip(x, (0, 2)), [leaf(np.linspace(-1, 1, 12).reshape(2, 3, 2))])


def test_flip_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.arange(6).reshape(2, 3).flip(0),
                  lambda m: m.arange(6).reshape(2, 3).flip(0, 1),
                  lambda m: m.flip(m.arange(6.0).reshape(2, 3), [-1]),
                  lambda m: m.arange(6).reshape(2, 3).flip(())):
        same_as_torch(make_, torch)


def test_flip_refuses_a_dim_out_of_range():
    with pytest.raises(IndexError):
        minifw.ones(2, 3).flip(2)


NORM_V = [3.0, -4.0]


@pytest.mark.parametrize("call, expected", [
    pytest.param(lambda v: v.norm(), 5.0, id="default"),
    pytest.param(lambda v: v.norm("fro"), 5.0, id="fro"),
    pytest.param(lambda v: v.norm(2), 5.0, id="p2"),
    pytest.param(lambda v: v.norm(p=1), 7.0, id="p1"),
    pytest.param(lambda v: v.norm(INF), 4.0, id="inf"),
    pytest.param(lambda v: v.norm(-INF), 3.0, id="minus_inf"),
    pytest.param(lambda v: v.norm(0), 2.0, id="p0"),
    pytest.param(lambda v: v.norm(3), 91 ** (1 / 3), id="p3"),
    pytest.param(lambda v: minifw.norm(v, 1), 7.0, id="function"),
    pytest.param(lambda v: minifw.norm(v, p=2, dim=0), 5.0, id="function_dim"),
])
def test_norm_of_a_vector(dev, call, expected):
    out = call(on(dev, NORM_V))
    assert out.device == dev and out.dtype == F32 and out.shape == ()
    np.testing.assert_allclose(host(out), expected, rtol=1e-6)
    np.testing.assert_allclose(host(call(on(dev, NORM_V, F64))), expected, rtol=1e-14)


def test_norm_with_dim_and_keepdim(dev):
    m = on(dev, [[3.0, -4.0], [0.0, 1.0]])
    close(m.norm(dim=1), [5.0, 1.0], F32)
    close(m.norm(2, 1, True), [[5.0], [1.0]], F32)
    close(m.norm(1, 0), [3.0, 5.0], F32)
    close(m.norm(INF, dim=0, keepdim=True), [[3.0, 4.0]], F32)
    close(m.norm(0, 1), [2.0, 1.0], F32)
    close(m.norm(), math.sqrt(26.0), F32)
    close(minifw.norm(m, "fro", dim=(0, 1)), math.sqrt(26.0), F32)
    assert m.norm(dim=1).device == dev


def test_norm_as_torch():
    torch = pytest.importorskip("torch")
    for p in (2, "fro", 1, INF, -INF, 0, 3, 0.5):
        same_as_torch(lambda m: m.tensor([[3.0, -4.0], [0.0, 1.0]]).norm(p), torch)
        same_as_torch(lambda m: m.tensor([[3.0, -4.0], [0.0, 1.0]]).norm(p, 1), torch)
        same_as_torch(lambda m: m.norm(m.tensor([[3.0, -4.0], [0.5, 1.0]]), p, 0, True), torch)


def test_norm_dtype_casts_the_input_first():
    m = minifw.tensor([[3.0, -4.0], [0.5, 1.0]], requires_grad=True)
    out = m.norm(dtype=F64)
    assert out.dtype == F64 and out.item() == math.sqrt(26.25)
    out.backward()
    assert m.grad.dtype == F32
    np.testing.assert_allclose(m.grad.numpy(), m.detach().numpy() / math.sqrt(26.25), rtol=1e-6)
    close(minifw.norm(m, 1, 1, True, dtype=F64), [[7.0], [1.5]], F64)
    assert minifw.norm(m, "nuc", dtype=F64).dtype == F64
    with pytest.raises(TypeError, match="norm: dtype must be float32 or float64, got int64"):
        m.norm(dtype=minifw.int64)
    with pytest.raises(ValueError, match="norm: out must be None"):
        minifw.norm(m, out=m)
    torch = pytest.importorskip("torch")
    t = torch.tensor([[3.0, -4.0], [0.5, 1.0]])
    for p in (2, 1, 0.5):
        want = torch.norm(t, p, 1, dtype=torch.float64)
        got = minifw.norm(m.detach(), p, 1, dtype=F64)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_norm_gradient_at_a_zero_vector_is_zero():
    for fn in (lambda x: x.norm(), lambda x: x.norm("fro"), lambda x: x.norm(2), lambda x: x.norm(1)):
        g, = grads_of(fn, [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    g, = grads_of(lambda x: x.norm(dim=1), [[0.0, 0.0], [3.0, -4.0]])
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.6, -0.8]], rtol=1e-12)


def test_norm_gradient_at_zero_as_torch():
    torch = pytest.importorskip("torch")
    for fn in (lambda m, x: x.norm(), lambda m, x: x.norm(dim=1), lambda m, x: x.norm(1, 1)):
        values = [[0.0, 0.0], [3.0, -4.0]]
        np.testing.assert_allclose(grads_of(lambda x: fn(minifw, x), values)[0],
                                   torch_grads(torch, fn, values)[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("fn", [
    pytest.param(lambda x: x.norm(), id="p2"),
    pytest.param(lambda x: x.norm(1), id="p1"),
    pytest.param(lambda x: x.norm(3), id="p3"),
    pytest.param(lambda x: x.norm(INF), id="inf"),
    pytest.param(lambda x: x.norm(-INF, 1), id="minus_inf_dim"),
    pytest.param(lambda x: x.norm(dim=1, keepdim=True), id="p2_dim_keepdim"),
    pytest.param(lambda x: minifw.norm(x, 1.5, 0), id="p1_5_function"),
])
def test_norm_gradcheck(fn):
    gradcheck(fn, [leaf([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]])])


LSE_X = np.array([[0.0, 1.0, 2.0], [-1.0, 5.0, 3.0]])


def test_logsumexp_values(dev):
    x = on(dev, LSE_X, F32)
    want1 = np.log(np.exp(LSE_X).sum(axis=1))
    for out in (x.logsumexp(1), minifw.logsumexp(x, 1), x.logsumexp(-1)):
        assert out.device == dev and out.dtype == F32
        close(out, want1, rtol=1e-6)
    close(x.logsumexp(0), np.log(np.exp(LSE_X).sum(axis=0)), rtol=1e-6)
    close(x.logsumexp(1, keepdim=True), want1[:, None], rtol=1e-6)
    close(minifw.logsumexp(x, (0, 1)), np.log(np.exp(LSE_X).sum()), rtol=1e-6)
    close(on(dev, [[-INF, -INF], [0.0, -INF]]).logsumexp(1), [-INF, 0.0])
    close(on(dev, [1000.0, 1000.0]).logsumexp(0), 1000.0 + math.log(2.0), rtol=1e-7)
    close(on(dev, [-1000.0, -1000.0], F64).logsumexp(0), -1000.0 + math.log(2.0), rtol=1e-14)
    close(on(dev, [1e30, 0.0]).logsumexp(0), 1e30, rtol=1e-6)


def test_logsumexp_gradient():
    g, = grads_of(lambda x: x.logsumexp(1), LSE_X.tolist())
    np.testing.assert_allclose(g, _softmax(LSE_X, 1), rtol=1e-12)
    g, = grads_of(lambda x: x.logsumexp(0), [1000.0, 1000.0])
    np.testing.assert_allclose(g, [0.5, 0.5], rtol=1e-12)
    gradcheck(lambda x: x.logsumexp(1), [leaf(LSE_X)])
    gradcheck(lambda x: minifw.logsumexp(x, 0, keepdim=True), [leaf(LSE_X)])


def test_logsumexp_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor(LSE_X.tolist()).logsumexp(1),
                  lambda m: m.logsumexp(m.tensor(LSE_X.tolist()), 0, keepdim=True),
                  lambda m: m.tensor([[-INF, -INF], [1000.0, 1000.0]]).logsumexp(1),
                  lambda m: m.tensor(LSE_X.tolist()).logsumexp((0, 1))):
        same_as_torch(make_, torch)


def test_unique(dev):
    x = on(dev, [3, 1, 3, 2])
    check(x.unique(), dev, [1, 2, 3], I64)
    check(minifw.unique(x), dev, [1, 2, 3], I64)
    values, inverse = x.unique(return_inverse=True)
    check(values, dev, [1, 2, 3], I64)
    check(inverse, dev, [2, 0, 2, 1], I64)
    values, counts = minifw.unique(x, return_counts=True)
    check(values, dev, [1, 2, 3], I64)
    check(counts, dev, [1, 1, 2], I64)
    values, inverse, counts = x.unique(sorted=True, return_inverse=True, return_counts=True)
    check(inverse, dev, [2, 0, 2, 1], I64)
    check(counts, dev, [1, 1, 2], I64)
    values, inverse = on(dev, [[3, 1], [3, 2]]).unique(return_inverse=True)
    check(values, dev, [1, 2, 3], I64)
    check(inverse, dev, [[2, 0], [2, 1]], I64)
    check(on(dev, [2.5, -1.0, 2.5]).unique(), dev, [-1.0, 2.5], F32)
    check(on(dev, [True, True]).unique(), dev, [True], BOOL)
    np.testing.assert_array_equal(host(values[inverse]), [[3, 1], [3, 2]])


def test_unique_over_a_dim():
    values, counts = minifw.tensor([[1, 2], [1, 2]]).unique(dim=0, return_counts=True)
    assert values.tolist() == [[1, 2]] and counts.tolist() == [2]
    assert minifw.unique(minifw.tensor([2, 1, 2]), dim=0).tolist() == [1, 2]


def test_unique_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([3, 1, 3, 2]).unique(),
                  lambda m: m.unique(m.tensor([[3, 1], [3, 2]]), return_inverse=True),
                  lambda m: m.unique(m.tensor([3, 1, 3, 2]), return_counts=True),
                  lambda m: m.tensor([2.5, -1.0, 2.5]).unique(return_inverse=True,
                                                              return_counts=True)):
        same_as_torch(make_, torch)


def test_bincount(dev):
    x = on(dev, [0, 2, 2, 5])
    check(x.bincount(), dev, [1, 0, 2, 0, 0, 1], I64)
    check(minifw.bincount(x, minlength=8), dev, [1, 0, 2, 0, 0, 1, 0, 0], I64)
    check(x.bincount(minlength=3), dev, [1, 0, 2, 0, 0, 1], I64)  # only a minimum
    check(x.bincount(on(dev, [0.5, 1.0, 2.0, 0.25])), dev, [0.5, 0, 3.0, 0, 0, 0.25], F32)
    check(minifw.bincount(x, weights=on(dev, [1.0, 1.0, 1.0, 1.0], F64)), dev,
          [1, 0, 2, 0, 0, 1], F64)
    check(on(dev, [], I64).bincount(), dev, np.zeros(0), I64)
    check(on(dev, [], I64).bincount(minlength=3), dev, [0, 0, 0], I64)
    check(on(dev, [1, 1], I32).bincount(), dev, [0, 2], I64)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.tensor([0, -1, 2]).bincount(), id="negative"),
    pytest.param(lambda: minifw.bincount(minifw.tensor([-3])), id="function_negative"),
    pytest.param(lambda: minifw.tensor([0, 1]).bincount(minlength=-1), id="negative_minlength"),
])
def test_bincount_refuses_negatives(call):
    with pytest.raises(ValueError):
        call()


def test_bincount_refuses_non_integer_or_non_vector_input():
    with pytest.raises((TypeError, ValueError)):
        minifw.tensor([0.0, 1.0]).bincount()
    with pytest.raises((TypeError, ValueError)):
        minifw.tensor([[0, 1]]).bincount()


def test_bincount_as_torch():
    torch = pytest.importorskip("torch")
    for make_ in (lambda m: m.tensor([0, 2, 2, 5]).bincount(),
                  lambda m: m.bincount(m.tensor([0, 2, 2, 5]), minlength=8),
                  lambda m: m.tensor([0, 2, 2]).bincount(m.tensor([0.5, 1.0, 2.0])),
                  lambda m: m.bincount(m.tensor([], dtype=m.int64), minlength=3)):
        same_as_torch(make_, torch)


def test_multinomial_with_replacement_frequencies(rng_state):
    minifw.manual_seed(0)
    n = 20000
    for probs in ([0.1, 0.2, 0.7], [1.0, 2.0, 7.0]):  # weights need not sum to one
        draws = minifw.tensor(probs).multinomial(n, replacement=True)
        assert draws.shape == (n,) and draws.dtype == I64
        counts = np.bincount(host(draws), minlength=3)
        assert counts.sum() == n
        np.testing.assert_allclose(counts / n, [0.1, 0.2, 0.7], atol=0.02)
    draws = host(minifw.multinomial(minifw.tensor([0.0, 1.0, 1.0]), 1000, True))
    assert set(draws.tolist()) == {1, 2}  # never a zero-probability category


def test_multinomial_without_replacement(rng_state):
    minifw.manual_seed(0)
    probs = minifw.tensor([0.2, 0.0, 0.5, 0.3, 0.0])
    seen = set()
    for _ in range(50):
        draws = host(probs.multinomial(2)).tolist()
        assert len(draws) == 2 and len(set(draws)) == 2
        assert set(draws) <= {0, 2, 3}
        seen |= set(draws)
    assert seen == {0, 2, 3}
    assert sorted(host(probs.multinomial(3)).tolist()) == [0, 2, 3]
    firsts = [host(minifw.tensor([0.9, 0.1]).multinomial(1)).item() for _ in range(200)]
    assert 140 < firsts.count(0) < 200  # the heavier category comes first most often


def test_multinomial_of_rows(rng_state, dev):
    minifw.manual_seed(0)
    rows = on(dev, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    check(rows.multinomial(4, replacement=True), dev, [[1, 1, 1, 1], [0, 0, 0, 0]], I64)
    out = on(dev, [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]).multinomial(2)
    assert out.shape == (2, 2) and out.device == dev and out.dtype == I64
    got = host(out)
    assert sorted(got[0].tolist()) == [0, 1] and sorted(got[1].tolist()) == [1, 2]
    check(on(dev, [0.0, 0.0, 3.0]).multinomial(2, True), dev, [2, 2], I64)


def test_multinomial_is_reproducible_with_a_seed(rng_state):
    p = minifw.tensor([0.3, 0.3, 0.4])
    minifw.manual_seed(7)
    a = host(p.multinomial(50, True))
    minifw.manual_seed(7)
    b = host(p.multinomial(50, True))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.tensor([0.5, -0.1, 0.6]).multinomial(1), id="negative"),
    pytest.param(lambda: minifw.tensor([0.5, NAN]).multinomial(1, True), id="nan"),
    pytest.param(lambda: minifw.tensor([0.5, INF]).multinomial(1, True), id="inf"),
    pytest.param(lambda: minifw.tensor([0.0, 0.0]).multinomial(1, True), id="zero_vector"),
    pytest.param(lambda: minifw.tensor([[0.5, 0.5], [0.0, 0.0]]).multinomial(1), id="zero_row"),
    pytest.param(lambda: minifw.tensor([0.5, 0.5]).multinomial(3), id="too_many_without_replacement"),
    pytest.param(lambda: minifw.tensor([[1.0, 2.0, 3.0]]).multinomial(4, False), id="too_many_rows"),
])
def test_multinomial_errors(call):
    with pytest.raises(ValueError):
        call()


def test_multinomial_with_replacement_may_draw_more_than_the_categories(rng_state):
    minifw.manual_seed(0)
    out = minifw.tensor([0.5, 0.5]).multinomial(3, replacement=True)
    assert out.shape == (3,) and set(host(out).tolist()) <= {0, 1}


@pytest.mark.parametrize("args, kwargs, expected, dtype", [
    ((0, 1, 5), {}, [0.0, 0.25, 0.5, 0.75, 1.0], F32),
    ((1, -1, 3), {"dtype": F64}, [1.0, 0.0, -1.0], F64),
    ((2, 7, 1), {}, [2.0], F32),
    ((2, 7, 0), {}, np.zeros(0), F32),
    ((0, 5, 4), {"dtype": I64}, [0, 1, 3, 5], I64),  # 0, 1.67, 3.33, 5 truncated
    ((-5, 0, 4), {"dtype": I64}, [-5, -3, -1, 0], I64),  # toward zero, not down
    ((0, 10, 3), {"dtype": I32}, [0, 5, 10], I32),
])
def test_linspace(dev, args, kwargs, expected, dtype):
    out = minifw.linspace(*args, device=dev, **kwargs)
    assert out.device == dev and out.dtype == dtype and out.shape == np.shape(expected)
    np.testing.assert_allclose(host(out), expected, rtol=1e-7)


def test_linspace_as_torch():
    torch = pytest.importorskip("torch")
    for args, kwargs in (((0, 1, 5), {}), ((1, -1, 3), {"dtype": "float64"}), ((2, 7, 1), {}),
                         ((2, 7, 0), {}), ((0, 5, 4), {"dtype": "int64"}),
                         ((-5, 0, 4), {"dtype": "int64"}), ((-3, 7, 6), {"dtype": "int32"})):
        same_as_torch(lambda m: m.linspace(*args, **{k: getattr(m, v) for k, v in kwargs.items()}),
                      torch)


def test_linspace_refuses_negative_steps():
    with pytest.raises(ValueError):
        minifw.linspace(0, 1, -1)


def test_eye(dev):
    check(minifw.eye(3, device=dev), dev, np.eye(3), F32)
    check(minifw.eye(2, 3, device=dev), dev, [[1, 0, 0], [0, 1, 0]], F32)
    check(minifw.eye(3, 2, dtype=I64, device=dev), dev, [[1, 0], [0, 1], [0, 0]], I64)
    check(minifw.eye(2, dtype=BOOL, device=dev), dev, [[True, False], [False, True]], BOOL)
    check(minifw.eye(0, device=dev), dev, np.zeros((0, 0)), F32)
    assert minifw.eye(2, requires_grad=True).requires_grad


def test_eye_as_torch():
    torch = pytest.importorskip("torch")
    same_as_torch(lambda m: m.eye(2, 3), torch)
    same_as_torch(lambda m: m.eye(3, dtype=m.int64), torch)


def test_finfo_and_iinfo():
    assert minifw.finfo(F32).eps == np.float32(2.0 ** -23)
    assert minifw.finfo().eps == np.float32(2.0 ** -23)  # the default dtype
    assert minifw.finfo(F64).eps == 2.0 ** -52
    assert minifw.finfo(F32).max == np.float32(3.4028235e38)
    assert minifw.finfo(F32).tiny == np.float32(2.0 ** -126)
    assert minifw.finfo(F64).min == -np.finfo(np.float64).max
    assert minifw.iinfo(I32).max == 2 ** 31 - 1 and minifw.iinfo(I32).min == -(2 ** 31)
    assert minifw.iinfo(I64).max == 2 ** 63 - 1 and minifw.iinfo(I64).bits == 64
    assert minifw.iinfo(minifw.int).bits == 32
    minifw.set_default_dtype(F64)
    try:
        assert minifw.finfo().eps == 2.0 ** -52
    finally:
        minifw.set_default_dtype(F32)


def test_finfo_and_iinfo_as_torch():
    torch = pytest.importorskip("torch")
    for name in ("float32", "float64"):
        ours, theirs = minifw.finfo(getattr(minifw, name)), torch.finfo(getattr(torch, name))
        for field in ("eps", "max", "min", "tiny", "bits"):
            assert float(getattr(ours, field)) == float(getattr(theirs, field)), field
    for name in ("int32", "int64"):
        ours, theirs = minifw.iinfo(getattr(minifw, name)), torch.iinfo(getattr(torch, name))
        assert (ours.max, ours.min, ours.bits) == (theirs.max, theirs.min, theirs.bits)


def test_mm_and_bmm(dev):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4) - 5
    check(minifw.mm(on(dev, a, F32), on(dev, b, F32)), dev, a @ b, F32)
    A = np.arange(12.0).reshape(2, 2, 3)
    B = np.arange(24.0).reshape(2, 3, 4) / 4
    check(minifw.bmm(on(dev, A, F32), on(dev, B, F32)), dev, A @ B, F32)
    gradcheck(minifw.mm, [leaf(a / 5), leaf(b / 7)])
    gradcheck(minifw.bmm, [leaf(A / 5), leaf(B / 3)])


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.mm(minifw.ones(3), minifw.ones(3, 2)), id="mm_1d"),
    pytest.param(lambda: minifw.mm(minifw.ones(2, 3), minifw.ones(2, 3, 2)), id="mm_3d"),
    pytest.param(lambda: minifw.mm(minifw.ones(2, 3), [[1.0]] * 3), id="mm_list"),
    pytest.param(lambda: minifw.bmm(minifw.ones(2, 3), minifw.ones(3, 2)), id="bmm_2d"),
    pytest.param(lambda: minifw.bmm(minifw.ones(2, 2, 3), minifw.ones(3, 2)), id="bmm_mixed"),
    pytest.param(lambda: minifw.bmm(minifw.ones(2, 2, 3), minifw.ones(3, 3, 2)), id="bmm_batch"),
])
def test_mm_and_bmm_refuse_the_wrong_shapes(call):
    with pytest.raises(ValueError):
        call()


def test_mm_and_bmm_as_torch():
    torch = pytest.importorskip("torch")
    same_as_torch(lambda m: m.mm(m.arange(6.0).reshape(2, 3), m.arange(12.0).reshape(3, 4)), torch)
    same_as_torch(lambda m: m.bmm(m.arange(12.0).reshape(2, 2, 3), m.arange(24.0).reshape(2, 3, 4)),
                  torch)


def test_as_tensor_shares_memory_with_an_ndarray_of_its_dtype():
    a = np.zeros(3, np.float32)
    t = minifw.as_tensor(a)
    assert t.dtype == F32 and t.shape == (3,)
    a[0] = 5.0
    assert t.tolist() == [5.0, 0.0, 0.0]
    t.add_(1)
    assert a.tolist() == [6.0, 1.0, 1.0]
    same = minifw.as_tensor(a, dtype=F32)
    a[1] = 7.0
    assert same.tolist()[1] == 7.0
    d = np.ones(2, np.float64)
    td = minifw.as_tensor(d)
    d[0] = 3.0
    assert td.dtype == F64 and td.tolist() == [3.0, 1.0]


def test_as_tensor_copies_for_another_dtype_or_device():
    a = np.zeros(3, np.float32)
    t = minifw.as_tensor(a, dtype=F64)
    a[0] = 5.0
    assert t.dtype == F64 and t.tolist() == [0.0, 0.0, 0.0]
    c = minifw.as_tensor(a, device="cudasim")
    a[1] = 2.0
    assert c.device == devices.get("cudasim") and host(c).tolist() == [5.0, 0.0, 0.0]
    x = minifw.tensor([1.0, 2.0])
    assert minifw.as_tensor(x) is x
    assert minifw.as_tensor(x, dtype=F64).dtype == F64 and x.dtype == F32
    lst = minifw.as_tensor([1, 2])
    assert lst.dtype == I64 and lst.tolist() == [1, 2]
    f = minifw.as_tensor([1.5])
    assert f.dtype == F32


@pytest.fixture
def matmul_precision():
    before = minifw.get_float32_matmul_precision()
    yield
    minifw.set_float32_matmul_precision(before)


def test_float32_matmul_precision(matmul_precision):
    assert minifw.get_float32_matmul_precision() == "highest"
    for precision in ("high", "medium", "highest"):
        minifw.set_float32_matmul_precision(precision)
        assert minifw.get_float32_matmul_precision() == precision
    for bad in ("low", "HIGH", "", None, 1):
        with pytest.raises(ValueError):
            minifw.set_float32_matmul_precision(bad)
    assert minifw.get_float32_matmul_precision() == "highest"


def test_initial_seed(rng_state):
    minifw.manual_seed(5)
    assert minifw.initial_seed() == 5
    minifw.manual_seed(123)
    assert minifw.initial_seed() == 123
    s = minifw.seed()
    assert minifw.initial_seed() == s and isinstance(s, int)


# ---- 15. minifw.amp ------------------------------------------------------------------------------

def test_disabled_autocast_as_a_context_manager_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with minifw.amp.autocast(device_type="cpu", enabled=False):
            out = minifw.ones(2) * 3
        assert out.dtype == F32 and out.tolist() == [3.0, 3.0]
        with minifw.autocast("cpu", enabled=False, dtype=None):
            pass
        with minifw.amp.autocast(device_type="cuda", enabled=False):
            pass


def test_disabled_autocast_as_a_decorator():
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @minifw.amp.autocast(device_type="cpu", enabled=False)
        def double(x):
            return x * 2

        assert double(minifw.ones(2)).tolist() == [2.0, 2.0]
        assert double(minifw.tensor([3.0])).tolist() == [6.0]  # the decorator is reusable
    with pytest.raises(ZeroDivisionError):
        with minifw.amp.autocast(device_type="cpu", enabled=False):
            1 / 0  # exceptions pass through


def test_enabled_autocast_warns_once_per_construction():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx = minifw.amp.autocast(device_type="cpu")
        assert [w.category for w in caught] == [UserWarning]
        with ctx:
            minifw.ones(2) + 1
        assert len(caught) == 1
        minifw.amp.autocast(device_type="cpu", enabled=True)
        assert [w.category for w in caught] == [UserWarning, UserWarning]
    with pytest.warns(UserWarning):
        minifw.autocast("cpu")


@pytest.mark.parametrize("call", [
    pytest.param(lambda: minifw.amp.autocast(device_type="tpu", enabled=False), id="autocast"),
    pytest.param(lambda: minifw.amp.autocast("xpu", enabled=False), id="autocast_positional"),
    pytest.param(lambda: minifw.amp.GradScaler("tpu", enabled=False), id="grad_scaler"),
])
def test_amp_refuses_unknown_device_types(call):
    with pytest.raises(ValueError, match="device_type"):
        call()


def _sgd_setup():
    w = minifw.tensor([1.0, 2.0], requires_grad=True)
    return w, minifw.optim.SGD([w], lr=0.1)


def test_disabled_grad_scaler_is_transparent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = minifw.amp.GradScaler(enabled=False)
    w, opt = _sgd_setup()
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    outputs = [loss, loss * 2]
    assert scaler.scale(outputs) is outputs
    backward(scaler.scale(loss))
    np.testing.assert_array_equal(host(w.grad), [2.0, 4.0])
    assert scaler.unscale_(opt) is None
    np.testing.assert_array_equal(host(w.grad), [2.0, 4.0])  # unscale_ changes nothing
    scaler.step(opt)
    np.testing.assert_allclose(host(w), [0.8, 1.6], rtol=1e-7)  # optimizer.step ran
    assert scaler.update() is None
    assert scaler.update(1024.0) is None
    assert scaler.get_scale() == 1.0
    assert scaler.state_dict() == {}
    assert scaler.is_enabled() is False
    scaler.load_state_dict({})


def test_grad_scaler_step_passes_arguments_and_returns_the_result():
    calls = []

    class Recorder:
        def step(self, *args, **kwargs):
            calls.append((args, kwargs))
            return "stepped"

    scaler = minifw.amp.GradScaler(enabled=False)
    assert scaler.step(Recorder()) == "stepped"
    closure = lambda: 0.0  # noqa: E731
    scaler.step(Recorder(), closure)
    assert calls == [((), {}), ((closure,), {})]


def test_enabled_grad_scaler_warns_and_still_steps():
    with pytest.warns(UserWarning):
        scaler = minifw.amp.GradScaler()
    w, opt = _sgd_setup()
    backward(scaler.scale((w * w).sum()))
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(host(w), [0.8, 1.6], rtol=1e-7)


def test_cuda_amp_forms():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = minifw.cuda.amp.GradScaler(enabled=False)
        with minifw.cuda.amp.autocast(enabled=False):
            out = minifw.ones(2) + 1

        @minifw.cuda.amp.autocast(enabled=False)
        def f(x):
            return x * 2

        assert f(minifw.ones(1)).tolist() == [2.0]
    assert out.tolist() == [2.0, 2.0]
    assert scaler.get_scale() == 1.0 and scaler.is_enabled() is False
    w, opt = _sgd_setup()
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    backward(loss)
    scaler.step(opt)
    np.testing.assert_allclose(host(w), [0.8, 1.6], rtol=1e-7)
    with pytest.warns(UserWarning):
        minifw.cuda.amp.autocast()
    with pytest.warns(UserWarning):
        minifw.cuda.amp.GradScaler()


def test_amp_as_torch():
    torch = pytest.importorskip("torch")
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    loss = torch.ones(())
    assert scaler.scale(loss) is loss and minifw.amp.GradScaler(enabled=False).scale(loss) is loss
    assert scaler.get_scale() == minifw.amp.GradScaler(enabled=False).get_scale()
    assert scaler.state_dict() == minifw.amp.GradScaler(enabled=False).state_dict()
    assert scaler.is_enabled() == minifw.amp.GradScaler(enabled=False).is_enabled()


# ---- one dim, not a tuple (checks.check_dim) ----------------------------------------------------

@pytest.mark.parametrize("call", [
    pytest.param(lambda x: x.cumsum((0,)), id="cumsum"),
    pytest.param(lambda x: x.argmax((0,)), id="argmax"),
    pytest.param(lambda x: x.max((0,)), id="max"),
    pytest.param(lambda x: x.min([1]), id="min"),
    pytest.param(lambda x: x.sort((0,)), id="sort"),
    pytest.param(lambda x: x.argsort((0,)), id="argsort"),
    pytest.param(lambda x: x.topk(1, (0,)), id="topk"),
    pytest.param(lambda x: x.unsqueeze((0,)), id="unsqueeze"),
    pytest.param(lambda x: x.select((0,), 0), id="select"),
    pytest.param(lambda x: x.narrow((0,), 0, 1), id="narrow"),
    pytest.param(lambda x: x.chunk(2, (0,)), id="chunk"),
    pytest.param(lambda x: x.gather((0,), minifw.zeros(1, 3, dtype=I64)), id="gather"),
    pytest.param(lambda x: x.index_select((0,), minifw.tensor([0])), id="index_select"),
    pytest.param(lambda x: x.transpose((0,), 1), id="transpose"),
    pytest.param(lambda x: minifw.cat([x, x], (0,)), id="cat"),
    pytest.param(lambda x: minifw.stack([x, x], (0,)), id="stack"),
])
def test_single_dim_arguments_refuse_tuples(call):
    with pytest.raises(TypeError, match="dim"):
        call(minifw.ones(2, 3))


# ---- the new differentiable operations on the device equal the CPU's -----------------------------

DIFFERENTIABLE = {
    # quotients away from whole numbers, where float32's rounding may go either way
    "remainder": lambda x, y: x % (y * 1.75),
    "remainder_reflected": lambda x, y: 2.45 % x,
    "maximum": lambda x, y: minifw.maximum(x, y),
    "minimum_ties": lambda x, y: minifw.minimum(x, x.detach().clamp(max=0.5)),
    "clamp_tensors": lambda x, y: x.clamp(y, y + 1.0),
    "clamp_numbers": lambda x, y: x.clamp(-0.6, 0.8),
    "std": lambda x, y: x.std(1),
    "std_zero": lambda x, y: (x * 0 + y).std(0, False) + x.sum(),
    "var": lambda x, y: x.var(0, correction=0),
    "norm": lambda x, y: x.norm(dim=1),
    "norm_zero": lambda x, y: (x * 0).norm() + x.sum(),
    "norm_1": lambda x, y: x.norm(1),
    "norm_3": lambda x, y: x.norm(3, 0, True),
    "norm_inf": lambda x, y: x.norm(INF),
    "logsumexp": lambda x, y: x.logsumexp(1),
    "flip": lambda x, y: x.flip(0, 1),
    "square": lambda x, y: x.square(),
    "mT": lambda x, y: x.mT,
    "softmax_dtype": lambda x, y: x.softmax(1, dtype=F64),
    "cat_empty": lambda x, y: minifw.cat([minifw.tensor([], device=x.device), x, y.reshape(1, 3)]),
}


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_on_the_device_equal_the_cpus(dev, name):
    op = DIFFERENTIABLE[name]
    results = {}
    for device in ("cpu", dev):
        x = minifw.tensor([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]], device=device, requires_grad=True)
        y = minifw.tensor([0.5, -1.0, 0.2], device=device)
        out = op(x, y)
        assert out.device == device
        weights = minifw.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), dtype=out.dtype,
                                device=device)
        backward((out * weights).sum())
        assert x.grad is not None and x.grad.device == device
        results[device] = (host(out), host(x.grad))
    for got, want in zip(results[dev], results["cpu"]):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_arguments_that_are_not_what_they_name_are_refused():
    # np.dtype reads any object's dtype attribute: a tensor or an array passed as dtype (as
    # zeros_like(x, y) does) is refused rather than taken for its dtype
    x = minifw.tensor([[1.0, 2.0]])
    for call in (lambda: minifw.zeros(2, dtype=x), lambda: minifw.zeros_like(x, x),
                 lambda: minifw.ones(2, dtype=np.zeros(2)), lambda: x.to(dtype=x)):
        with pytest.raises(TypeError, match="dtype must be one of float32, float64"):
            call()
    assert minifw.zeros(2, dtype=np.float64).dtype == F64 and x.to(x.double()).dtype == F64
    assert x.to(minifw.DoubleTensor).dtype == F64 and minifw.zeros(1, dtype="int32").dtype == I32
    # type() takes no keyword but non_blocking's older name
    with pytest.raises(TypeError, match="type: unexpected keyword argument 'dim'"):
        x.type(dim=0)
    assert x.type(F64, **{"async": False}).dtype == F64
    # requires_grad_ takes a bool, as PyTorch's (2.5 used to mean True)
    for bad in (2.5, 1, "yes", None):
        with pytest.raises(TypeError, match="requires_grad_: requires_grad must be a bool"):
            x.requires_grad_(bad)
    assert not x.requires_grad and x.requires_grad_(np.True_).requires_grad


def test_view_as_another_dtype_shares_the_memory():
    x = minifw.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    bits = x.view(I32)
    assert bits.dtype == I32 and bits.shape == (2, 2) and not bits.requires_grad
    assert bits.tolist() == np.array([[1.0, 2.0], [3.0, 4.0]], np.float32).view(np.int32).tolist()
    wide = x.view(dtype=F64)
    assert wide.shape == (2, 1) and wide.numpy().tolist() == \
        np.array([[1.0, 2.0], [3.0, 4.0]], np.float32).view(np.float64).tolist()
    assert x.view(BOOL).shape == (2, 8) and x.view("float32").shape == (2, 2)
    y = minifw.zeros(2)
    before = y._version
    y.view(I32)[0] = 1065353216  # the bits of 1.0f: the write shows in y, counted by its version
    assert y.tolist() == [1.0, 0.0] and y._version == before + 1
    with pytest.raises(ValueError, match="0-d tensor cannot be viewed"):
        minifw.tensor(1.0).view(F64)
    with pytest.raises(ValueError, match="needs a contiguous last dimension"):
        x.detach().t().view(F64)
    with pytest.raises(ValueError, match="not a whole number of float64 elements"):
        minifw.zeros(3).view(F64)
    with pytest.raises(TypeError, match="view: takes a shape or a dtype, not both"):
        x.view(4, dtype=F32)
    with pytest.raises(TypeError, match="view: size must be ints"):
        x.view(F32, 4)


def test_rmatmul_called_directly_is_the_reversed_product():
    a = minifw.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = minifw.tensor([[0.5, -1.0], [2.0, 1.0]])
    assert a.__rmatmul__(b).tolist() == (b @ a).tolist()
    assert a.__rmatmul__(np.eye(2, dtype=np.float32)).tolist() == a.tolist()
    assert a.__rmatmul__("x") is NotImplemented


def test_several_dims_or_indices_as_separate_arguments():
    # PyTorch takes squeeze(0, 1), count_nonzero(0, 1) and hsplit(1, 3) as the tuple forms
    a = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6) % 3
    x = minifw.tensor(a)
    assert x.squeeze(0, 1).shape == (4, 6) == x.squeeze((0, 1)).shape
    assert x.clone().squeeze_(0, 1).shape == (4, 6)
    assert type(x.requires_grad_().squeeze(0, 1).grad_fn).__name__ == "SqueezeBackward2"
    assert x.count_nonzero(0, 1).tolist() == np.count_nonzero(a, axis=(0, 1)).tolist()
    assert [p.shape for p in x[0].hsplit(1, 3)] == [(1, 1, 6), (1, 2, 6), (1, 1, 6)]
    assert [p.shape for p in x[0, 0].vsplit(1, 3)] == [(1, 6), (2, 6), (1, 6)]
    assert [p.shape for p in x[0].dsplit(2, 4)] == [(1, 4, 2)] * 3
    with pytest.raises(TypeError, match="squeeze: dim must be an int or a tuple of ints"):
        x.squeeze(0, "a")
