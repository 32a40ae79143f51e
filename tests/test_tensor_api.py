"""The Tensor API as PyTorch documents it: dtype names and the default dtype, int32, type()
and the casts, new_*, comparisons, narrow and the splitting family, masked_fill, gather,
scatter, index_select, index_fill, topk, sort, argsort, cumsum, where, tril/triu, the
pointwise functions, repeat, in-place methods, and their functional forms in the minifw
namespace.

Values are hand-computed (or NumPy's where NumPy is the definition), gradients are checked by
finite differences in float64 (tests/gradcheck.py) on the CPU, and every operation runs on
"cpu", "cudasim" and "cuda" (the emulated GPU where there is none): results stay on the
device and equal the CPU's, gradients included."""
import numpy as np
import pytest

import minifw
from minifw import devices
from gradcheck import gradcheck
from targets import cuda_available, emulate_cuda

F32, F64, I64, I32, BOOL = minifw.float32, minifw.float64, minifw.int64, minifw.int32, minifw.bool_


@pytest.fixture(params=["cpu", "cudasim", "cuda"])
def dev(request, monkeypatch):
    """The device under test, as its tensors report it ('cpu', 'cudasim', 'cuda:0')."""
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return devices.get(request.param)


@pytest.fixture
def default_float64():
    minifw.set_default_dtype(minifw.float64)
    yield
    minifw.set_default_dtype(minifw.float32)


def on(dev, values, dtype=None, requires_grad=False):
    return minifw.tensor(values, dtype=dtype, device=dev, requires_grad=requires_grad)


def host(t):
    return t.detach().cpu().numpy()


def check(t, dev, expected, dtype=None):
    """t is on dev, of dtype (when given), with the expected values."""
    assert t.device == dev and devices.of(t._data) == dev, f"result on {t.device}, not {dev}"
    if dtype is not None:
        assert t.dtype == dtype
    np.testing.assert_array_equal(host(t), np.asarray(expected, dtype=host(t).dtype))


def leaf(values):
    return minifw.tensor(values, dtype=minifw.float64, requires_grad=True)


# ---- dtype names and the default dtype ---------------------------------------------------------

def test_dtype_names_as_torch():
    assert minifw.float is minifw.float32 and minifw.double is minifw.float64
    assert minifw.long is minifw.int64 and minifw.int is minifw.int32 and minifw.bool is minifw.bool_
    assert minifw.tensor([1, 2], dtype=minifw.int).dtype == I32
    assert minifw.zeros(2, dtype=minifw.bool).dtype == BOOL
    assert isinstance(1, int) and isinstance(1.0, float)  # the builtins are untouched elsewhere


def test_the_default_dtype_is_float32():
    assert minifw.get_default_dtype() == F32
    assert minifw.tensor([1.5]).dtype == F32 and minifw.zeros(2).dtype == F32


@pytest.mark.parametrize("make", [
    pytest.param(lambda: minifw.tensor([1.5, 2.0]), id="tensor_of_floats"),
    pytest.param(lambda: minifw.tensor(0.1), id="tensor_0d"),
    pytest.param(lambda: minifw.zeros(2), id="zeros"),
    pytest.param(lambda: minifw.ones(2), id="ones"),
    pytest.param(lambda: minifw.empty(2), id="empty"),
    pytest.param(lambda: minifw.full((2,), 1.5), id="full_float"),
    pytest.param(lambda: minifw.randn(2), id="randn"),
    pytest.param(lambda: minifw.rand(2), id="rand"),
    pytest.param(lambda: minifw.arange(0.0, 1.0, 0.5), id="arange_floats"),
    pytest.param(lambda: minifw.arange(3) / 2, id="int_true_division"),
    pytest.param(lambda: minifw.arange(3) + 0.5, id="int_plus_float"),
    pytest.param(lambda: minifw.arange(3).exp(), id="int_exp"),
    pytest.param(lambda: minifw.where(minifw.tensor([True]), 1.0, 0), id="where_numbers"),
])
def test_set_default_dtype_float64_is_followed(default_float64, make):
    assert minifw.get_default_dtype() == F64
    assert make().dtype == F64


def test_the_default_dtype_leaves_tensors_of_a_dtype_alone(default_float64):
    assert (minifw.ones(2, dtype=F32) * 2.5).dtype == F32  # numbers never widen a float tensor
    assert minifw.tensor([1, 2]).dtype == I64
    assert minifw.tensor(np.zeros(2, np.float32)).dtype == F32
    assert repr(minifw.tensor([1.0])) == "tensor([1.])"  # the default dtype is not shown
    assert repr(minifw.tensor([1.0], dtype=F32)) == "tensor([1.], dtype=minifw.float32)"


def test_set_default_dtype_takes_float_dtypes_only():
    with pytest.raises(TypeError, match="set_default_dtype: only floating point dtypes .* got int64"):
        minifw.set_default_dtype(minifw.int64)
    with pytest.raises(TypeError, match="set_default_dtype: dtype must be one of"):
        minifw.set_default_dtype("float16")
    assert minifw.get_default_dtype() == F32


# ---- int32 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    pytest.param(lambda: minifw.tensor([1, 2], dtype=minifw.int32), id="tensor_dtype"),
    pytest.param(lambda: minifw.tensor(np.array([1, 2], np.int32)), id="numpy_int32_kept"),
    pytest.param(lambda: minifw.from_numpy(np.array([1, 2], np.int32)), id="from_numpy"),
    pytest.param(lambda: minifw.zeros(2, dtype="int32") + minifw.tensor([1, 2], dtype=minifw.int),
                 id="zeros"),
    pytest.param(lambda: minifw.tensor([1.7, 2.2]).int(), id="int_cast_truncates"),
    pytest.param(lambda: minifw.arange(1, 3, dtype=minifw.int32), id="arange"),
    pytest.param(lambda: minifw.full((2,), 7, dtype=minifw.int32).fill_(1).add_(
        minifw.tensor([0, 1])), id="in_place_keeps_int32"),
])
def test_int32_tensors(make):
    t = make()
    assert t.dtype == I32 and t.tolist() == [1, 2]


@pytest.mark.parametrize("a, b, expected", [
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: minifw.tensor([2], dtype=I32), I32,
                 id="int32_int32"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: minifw.tensor([2]), I64,
                 id="int32_int64"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: 2, I32, id="int32_python_int"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: 2.5, F32, id="int32_python_float"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: minifw.tensor([2.0]), F32,
                 id="int32_float32"),
    pytest.param(lambda: minifw.tensor([1], dtype=I32), lambda: minifw.tensor([2.0], dtype=F64),
                 F64, id="int32_float64"),
    pytest.param(lambda: minifw.tensor([True]), lambda: minifw.tensor([2], dtype=I32), I32,
                 id="bool_int32"),
    pytest.param(lambda: minifw.tensor([True]), lambda: 2, I64, id="bool_python_int"),
])
def test_int32_promotes_as_pytorch(a, b, expected):
    assert (a() + b()).dtype == expected and (b() * a()).dtype == expected


def test_int32_operations(dev):
    t = on(dev, [3, -1, 2], I32)
    check(t * 2 - 1, dev, [5, -3, 3], I32)
    check(t / 2, dev, [1.5, -0.5, 1.0], F32)
    check(t.sum(), dev, 4, I64)  # sums of integers are int64, as in PyTorch
    check(t.cumsum(0), dev, [3, 2, 4], I64)
    check(t.max(), dev, 3, I32)
    check(t.relu(), dev, [3, 0, 2], I32)
    assert t.exp().dtype == F32 and t.exp().device == dev  # the default float dtype
    check(t > 0, dev, [True, False, True], BOOL)
    check(on(dev, [10.0, 20.0, 30.0, 40.0])[on(dev, [3, 0], I32)], dev, [40.0, 10.0])
    check(t.abs().sort().values, dev, [1, 2, 3], I32)
    assert repr(minifw.tensor([1, 2], dtype=I32)) == "tensor([1, 2], dtype=minifw.int32)"
    assert [10, 20][minifw.tensor(1, dtype=I32)] == 20  # __index__
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype can require"):
        t.requires_grad_()


# ---- what a tensor is: type(), element_size, casts, new_*, size edge cases ----------------------

@pytest.mark.parametrize("dtype, name, size", [
    (F32, "FloatTensor", 4), (F64, "DoubleTensor", 8), (I64, "LongTensor", 8),
    (I32, "IntTensor", 4), (BOOL, "BoolTensor", 1),
])
def test_type_names_and_element_size(dev, dtype, name, size):
    t = minifw.zeros(2, dtype=dtype, device=dev)
    prefix = "minifw." if dev.type == "cpu" else f"minifw.{dev.type}."
    assert t.type() == prefix + name and t.element_size() == size


def test_type_casts(dev):
    t = on(dev, [1.5, -2.0])
    assert t.type(minifw.float32) is t and t.type("minifw.FloatTensor" if dev.type == "cpu" else
                                                   f"minifw.{dev.type}.FloatTensor") is t
    check(t.type(minifw.int64), dev, [1, -2], I64)
    check(t.type("float64"), dev, [1.5, -2.0], F64)
    moved = t.type("torch.DoubleTensor")  # PyTorch's names are understood; no device: the CPU
    assert moved.device == "cpu" and moved.dtype == F64
    back = minifw.tensor([1, 2]).type(f"minifw.{dev.type}.IntTensor" if dev.type != "cpu" else
                                      "minifw.IntTensor")
    assert back.device == dev and back.dtype == I32
    with pytest.raises(TypeError, match="type: unknown tensor type 'minifw.HalfTensor'"):
        t.type("minifw.HalfTensor")
    with pytest.raises(TypeError, match="type: dtype must be one of"):
        t.type("float16")


@pytest.mark.parametrize("convert, dtype, expected", [
    pytest.param(lambda t: t.float(), F32, [1.5, -2.0, 0.0], id="float"),
    pytest.param(lambda t: t.double(), F64, [1.5, -2.0, 0.0], id="double"),
    pytest.param(lambda t: t.long(), I64, [1, -2, 0], id="long"),
    pytest.param(lambda t: t.int(), I32, [1, -2, 0], id="int"),
    pytest.param(lambda t: t.bool(), BOOL, [True, True, False], id="bool"),
])
def test_casts(dev, convert, dtype, expected):
    check(convert(on(dev, [1.5, -2.0, 0.0])), dev, expected, dtype)


def test_a_float_cast_keeps_the_gradient():
    x = leaf([1.0, 2.0])
    y = x.float()
    assert y.dtype == F32 and y.requires_grad
    (y * minifw.tensor([2.0, 3.0])).sum().backward()  # float32 is too coarse for gradcheck
    assert x.grad.dtype == F64 and x.grad.tolist() == [2.0, 3.0]
    assert not x.int().requires_grad and not x.bool().requires_grad


@pytest.mark.parametrize("make, shape, dtype, fill", [
    pytest.param(lambda t: t.new_zeros(2, 3), (2, 3), F64, 0, id="new_zeros"),
    pytest.param(lambda t: t.new_zeros((2,)), (2,), F64, 0, id="new_zeros_tuple"),
    pytest.param(lambda t: t.new_ones(3, dtype=minifw.int32), (3,), I32, 1, id="new_ones_dtype"),
    pytest.param(lambda t: t.new_full((2, 2), 7), (2, 2), F64, 7, id="new_full"),
    pytest.param(lambda t: t.new_empty(4).fill_(2), (4,), F64, 2, id="new_empty"),
    pytest.param(lambda t: t.new_tensor([5, 5]), (2,), F64, 5, id="new_tensor"),
    pytest.param(lambda t: t.new_tensor([5, 5], dtype=minifw.long), (2,), I64, 5,
                 id="new_tensor_dtype"),
])
def test_new_tensors_take_this_ones_dtype_and_device(dev, make, shape, dtype, fill):
    t = minifw.ones(1, dtype=F64, device=dev)
    out = make(t)
    assert out.shape == shape and not out.requires_grad
    check(out, dev, np.full(shape, fill), dtype)
    assert minifw.ones(1, device=dev).new_zeros(2, device="cpu").device == "cpu"
    assert t.new_zeros(2, requires_grad=True).requires_grad


def test_new_tensor_copies():
    t = minifw.zeros(2)
    source = minifw.tensor([1.0, 2.0])
    copy = t.new_tensor(source)
    source.add_(1)
    assert copy.tolist() == [1.0, 2.0]


def test_size_dim_numel_item_tolist_edge_cases(dev):
    scalar, empty = on(dev, 2.5), minifw.zeros(0, 3, device=dev)
    assert scalar.dim() == 0 and scalar.numel() == 1 and scalar.size() == ()
    assert scalar.item() == 2.5 and scalar.tolist() == 2.5
    assert empty.numel() == 0 and empty.size(1) == 3 and empty.size(-2) == 0 and empty.tolist() == []
    assert on(dev, [[7]]).item() == 7 and type(on(dev, [[7]]).item()) is int
    with pytest.raises(IndexError, match="size: dimension specified as 0 but tensor has no "
                                         "dimensions"):
        scalar.size(0)
    with pytest.raises(IndexError, match="dimension out of range"):
        empty.size(2)
    with pytest.raises(ValueError, match="only a tensor with one element"):
        empty.item()


def test_expand_expand_as_and_contiguous(dev):
    t = on(dev, [[1.0], [2.0]])
    check(t.expand(2, 3), dev, [[1, 1, 1], [2, 2, 2]])
    check(t.expand_as(minifw.zeros(4, 2, 3)), dev, np.broadcast_to([[1.0], [2.0]], (4, 2, 3)))
    c = t.expand(2, 3).contiguous()
    assert c._data.flags.c_contiguous and c.contiguous() is c
    x = leaf([[1.0], [2.0]])
    gradcheck(lambda x: x.expand(2, 3) * minifw.arange(6.0, dtype=F64).reshape(2, 3), [x])


# ---- comparisons -------------------------------------------------------------------------------

COMPARISONS = {  # [1, 2, 3] against [2, 2, 2], and against the number 1
    "eq": ([False, True, False], [True, False, False]),
    "ne": ([True, False, True], [False, True, True]),
    "lt": ([True, False, False], [False, False, False]),
    "le": ([True, True, False], [True, False, False]),
    "gt": ([False, False, True], [False, True, True]),
    "ge": ([False, True, True], [True, True, True]),
}


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_with_a_tensor_or_a_number(dev, name):
    a, b = on(dev, [1.0, 2.0, 3.0]), on(dev, [2.0, 2.0, 2.0])
    with_tensor, with_number = COMPARISONS[name]
    check(getattr(a, name)(b), dev, with_tensor, BOOL)
    check(getattr(a, name)(1), dev, with_number, BOOL)
    check(getattr(minifw, name)(a, b), dev, with_tensor, BOOL)
    check(a.ge(on(dev, 2)) if name == "ge" else getattr(a, name)(on(dev, [2.0])), dev, with_tensor)


def test_comparison_aliases():
    a = minifw.tensor([1, 2])
    for alias, name in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                        ("less_equal", "le"), ("not_equal", "ne")):
        assert getattr(a, alias)(1).tolist() == getattr(a, name)(1).tolist()
        assert getattr(minifw, alias)(a, 1).tolist() == getattr(a, name)(1).tolist()


def test_equal(dev):
    a = on(dev, [[1.0, 2.0]])
    assert a.equal(on(dev, [[1.0, 2.0]])) is True and minifw.equal(a, a.clone())
    assert not a.equal(on(dev, [[1.0, 2.5]]))
    assert not a.equal(on(dev, [1.0, 2.0]))  # same values, another shape
    assert a.equal(on(dev, [[1, 2]]))  # values compare across dtypes
    with pytest.raises(TypeError, match="equal: other must be a Tensor, got list"):
        a.equal([1.0, 2.0])


def test_isclose_and_allclose(dev):
    a = on(dev, [1.0, 100.0, float("nan"), 0.0], F64)
    b = on(dev, [1.0 + 1e-4, 100.0 + 1e-4, float("nan"), 1e-9], F64)
    # |a - b| <= atol + rtol * |b|: 1e-4 is over 1e-8 + 1e-5 * 1 but within 1e-5 * 100
    check(a.isclose(b), dev, [False, True, False, True], BOOL)
    check(minifw.isclose(a, b, equal_nan=True), dev, [False, True, True, True])
    check(a.isclose(b, rtol=0, atol=1e-5), dev, [False, False, False, True])
    assert not a.allclose(b) and not a.allclose(b, rtol=1e-3, atol=1e-5)
    assert a.allclose(b, rtol=1e-3, atol=1e-5, equal_nan=True)
    assert minifw.allclose(on(dev, [1.0, 2.0]), on(dev, [1.0, 2.0 + 1e-6]))
    assert on(dev, [1.0, 2.0]).allclose(on(dev, 1.0) + on(dev, [0.0, 1.0]))


def test_comparisons_across_devices_raise(dev):
    if dev.type == "cpu":
        pytest.skip("needs two devices")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        on(dev, [1.0, 2.0]).eq(minifw.tensor([1.0, 2.0]))
    check(on(dev, [1.0, 2.0]).eq(minifw.tensor(2.0)), dev, [False, True])  # a 0-d CPU tensor joins


# ---- narrow, select, chunk, split, unbind ----------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    pytest.param((0, 0, 2), [[1, 2, 3], [4, 5, 6]], id="rows"),
    pytest.param((1, 1, 2), [[2, 3], [5, 6], [8, 9]], id="columns"),  # the PyTorch docs' example
    pytest.param((-1, -2, 2), [[2, 3], [5, 6], [8, 9]], id="negative_dim_and_start"),
    pytest.param((0, 3, 0), np.zeros((0, 3)), id="empty_at_the_end"),
])
def test_narrow(dev, args, expected):
    x = on(dev, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    check(x.narrow(*args), dev, expected, I64)
    check(minifw.narrow(x, *args), dev, expected)


def test_narrow_is_a_view_and_differentiates():
    x = minifw.zeros(3, 3)
    x.narrow(1, 1, 2).fill_(1.0)
    assert x.tolist() == [[0, 1, 1]] * 3 and x._version == 1
    gradcheck(lambda t: t.narrow(0, 1, 2) * 2.0, [leaf(np.arange(6.0).reshape(3, 2))])


@pytest.mark.parametrize("args, error, message", [
    pytest.param((0, 2, 2), ValueError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)",
                 id="too_long"),
    pytest.param((0, 4, 0), IndexError, r"start \(4\) is out of range for dimension 0 of size 3",
                 id="start_out_of_range"),
    pytest.param((0, 0, -1), ValueError, "length must be >= 0", id="negative_length"),
    pytest.param((2, 0, 1), IndexError, "dimension out of range", id="dim_out_of_range"),
])
def test_narrow_errors(args, error, message):
    with pytest.raises(error, match=message):
        minifw.zeros(3, 3).narrow(*args)


def test_select_and_unbind(dev):
    x = on(dev, [[1, 2, 3], [4, 5, 6]])
    check(x.select(1, -1), dev, [3, 6])
    rows = x.unbind()
    assert len(rows) == 2
    check(rows[1], dev, [4, 5, 6])
    assert [c.tolist() for c in minifw.unbind(x, 1)] == [[1, 4], [2, 5], [3, 6]]
    with pytest.raises(IndexError, match="select: index 2 is out of range for dimension 0"):
        x.select(0, 2)


@pytest.mark.parametrize("n, chunks, sizes", [
    pytest.param(11, 6, [2, 2, 2, 2, 2, 1], id="11_in_6"),  # the PyTorch docs' examples
    pytest.param(12, 6, [2, 2, 2, 2, 2, 2], id="12_in_6"),
    pytest.param(13, 6, [3, 3, 3, 3, 1], id="13_in_6_gives_5"),
    pytest.param(2, 4, [1, 1], id="fewer_elements_than_chunks"),
])
def test_chunk(dev, n, chunks, sizes):
    pieces = minifw.arange(n, device=dev).chunk(chunks)
    assert isinstance(pieces, tuple) and [p.numel() for p in pieces] == sizes
    check(minifw.cat(list(pieces)), dev, np.arange(n))
    assert [p.numel() for p in minifw.chunk(minifw.arange(n), chunks)] == sizes


@pytest.mark.parametrize("split, dim, shapes", [
    pytest.param(2, 0, [(2, 3), (2, 3), (1, 3)], id="by_size"),
    pytest.param(2, 1, [(5, 2), (5, 1)], id="by_size_dim1"),
    pytest.param([1, 4], 0, [(1, 3), (4, 3)], id="by_sizes"),
    pytest.param([0, 3, 0], -1, [(5, 0), (5, 3), (5, 0)], id="with_empty_pieces"),
    pytest.param(10, 0, [(5, 3)], id="larger_than_the_dim"),
])
def test_split(dev, split, dim, shapes):
    x = minifw.arange(15, device=dev).reshape(5, 3)
    pieces = x.split(split, dim)
    assert [p.shape for p in pieces] == shapes and all(p.device == dev for p in pieces)
    check(minifw.cat(list(pieces), dim), dev, np.arange(15).reshape(5, 3))
    assert [p.shape for p in minifw.split(x, split, dim)] == shapes


def test_split_errors():
    x = minifw.zeros(5, 3)
    with pytest.raises(ValueError, match=r"split_sizes \[1, 2\] must add up to the size of dimension "
                                         r"0, 5"):
        x.split([1, 2])
    with pytest.raises(ValueError, match="split_size can be 0 only for a dimension of size 0"):
        x.split(0)
    with pytest.raises(ValueError, match="chunks must be >= 1, got 0"):
        x.chunk(0)


def test_pieces_are_views_with_one_gradient_node():
    x = leaf(np.arange(10.0).reshape(5, 2))
    pieces = (x * 1).split([2, 3])
    assert pieces[0].grad_fn is pieces[1].grad_fn  # one Split node for all of them
    gradcheck(lambda t: t.chunk(3)[0] * 2 + t.chunk(3)[2].sum(), [x])
    gradcheck(lambda t: t.split([1, 3, 1])[1] ** 2, [x])  # unused pieces get zero gradients
    gradcheck(lambda t: t.unbind(1)[1] * 3, [x])
    base = minifw.zeros(4)
    base.chunk(2)[1].fill_(1.0)
    assert base.tolist() == [0, 0, 1, 1]


# ---- masked_fill, gather, scatter, index_select, index_fill -----------------------------------

def test_masked_fill(dev):
    x = on(dev, [[1.0, -2.0], [3.0, -4.0]])
    check(x.masked_fill(x < 0, 0.0), dev, [[1, 0], [3, 0]], F32)
    check(x.masked_fill(on(dev, [True, False]), 9), dev, [[9, -2], [9, -4]])  # broadcast mask
    check(minifw.masked_fill(x, x > 2, on(dev, 5.0)), dev, [[1, -2], [5, -4]])
    check(on(dev, [1, 2, 3]).masked_fill(on(dev, [False, True, False]), 7.9), dev, [1, 7, 3], I64)
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got int64"):
        x.masked_fill(on(dev, [1, 0]), 0.0)
    with pytest.raises(ValueError, match="masked_fill: value must be a number or a 0-d tensor"):
        x.masked_fill(x > 0, on(dev, [1.0, 2.0]))


def test_masked_fill_gradients():
    mask = minifw.tensor([[True, False, False], [False, True, True]])
    gradcheck(lambda x, v: x.masked_fill(mask, v), [leaf(np.ones((2, 3))), leaf(2.0)])


GATHER_INPUT = [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("dim, index, expected", [
    pytest.param(1, [[0, 0], [1, 0]], [[1, 1], [4, 3]], id="dim1"),  # the PyTorch docs' example
    pytest.param(0, [[1, 0], [0, 0], [1, 1]], [[3, 2], [1, 2], [3, 4]], id="dim0_more_rows"),
    pytest.param(1, [[1]], [[2]], id="smaller_index"),
    pytest.param(-1, [[1, 1, 0], [0, 0, 0]], [[2, 2, 1], [3, 3, 3]], id="negative_dim"),
])
def test_gather(dev, dim, index, expected):
    x = on(dev, GATHER_INPUT)
    check(x.gather(dim, on(dev, index)), dev, expected, F32)
    check(minifw.gather(x, dim, on(dev, index)), dev, expected)


def test_gather_gradient_accumulates_repeated_picks():
    index = minifw.tensor([[0, 0, 2], [1, 1, 1]])
    gradcheck(lambda x: x.gather(1, index), [leaf(np.arange(6.0).reshape(2, 3))])
    x = leaf(np.arange(6.0).reshape(2, 3))
    x.gather(1, index).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2, 0, 1], [0, 3, 0]])


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda x: x.gather(1, minifw.tensor([0, 1])), ValueError,
                 "gather: index must have as many dimensions as the input", id="ndim"),
    pytest.param(lambda x: x.gather(1, minifw.tensor([[0], [1], [0]])), ValueError,
                 r"gather: index of shape \(3, 1\) is larger than the input \(2, 2\)", id="larger"),
    pytest.param(lambda x: x.gather(1, minifw.tensor([[0, 2]])), IndexError,
                 "gather: index 2 is out of bounds for dimension 1 with size 2", id="too_large"),
    pytest.param(lambda x: x.gather(1, minifw.tensor([[-1, 0]])), IndexError,
                 "gather: index -1 is out of bounds", id="negative"),
    pytest.param(lambda x: x.gather(1, minifw.tensor([[0.0]])), TypeError,
                 "gather: index must hold integers", id="float_index"),
    pytest.param(lambda x: x.gather(1, [[0]]), TypeError, "gather: index must be a Tensor",
                 id="list_index"),
])
def test_gather_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(minifw.tensor(GATHER_INPUT))


def test_index_tensors_must_be_on_the_data_s_device(dev):
    if dev.type == "cpu":
        pytest.skip("needs two devices")
    x = on(dev, GATHER_INPUT)
    for call in (lambda: x.gather(1, minifw.tensor([[0, 1], [1, 0]])),
                 lambda: x.index_select(0, minifw.tensor([0])),
                 lambda: x.masked_fill(minifw.tensor([True, False]), 0.0)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()


SRC = np.arange(1, 11).reshape(2, 5)


@pytest.mark.parametrize("make, expected", [
    # the PyTorch docs' examples of scatter_
    pytest.param(lambda d: minifw.zeros(3, 5, dtype=I64, device=d).scatter_(
        0, on(d, [[0, 1, 2, 0]]), on(d, SRC)),
        [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]], id="dim0"),
    pytest.param(lambda d: minifw.zeros(3, 5, dtype=I64, device=d).scatter_(
        1, on(d, [[0, 1, 2], [0, 1, 4]]), on(d, SRC)),
        [[1, 2, 3, 0, 0], [6, 7, 0, 0, 8], [0, 0, 0, 0, 0]], id="dim1"),
    pytest.param(lambda d: minifw.full((2, 4), 2.0, device=d).scatter_(
        1, on(d, [[2], [3]]), 1.25), [[2, 2, 1.25, 2], [2, 2, 2, 1.25]], id="value"),
    pytest.param(lambda d: minifw.full((2, 4), 2.0, device=d).scatter(
        1, on(d, [[2], [3]]), value=1.25), [[2, 2, 1.25, 2], [2, 2, 2, 1.25]], id="value_keyword"),
    pytest.param(lambda d: minifw.scatter(minifw.zeros(2, 3, device=d), 1, on(d, [[2, 0], [1, 1]]),
                                          on(d, [[5.0, 6.0], [7.0, 7.0]])),
                 [[6, 0, 5], [0, 7, 0]], id="functional"),
    pytest.param(lambda d: minifw.ones(3, dtype=I64, device=d).scatter_add_(
        0, on(d, [0, 2, 0, 0]), on(d, [1, 2, 3, 4])), [9, 1, 3], id="scatter_add_"),
    pytest.param(lambda d: minifw.scatter_add(minifw.zeros(2, 2, device=d), 0, on(d, [[1, 1]]),
                                              on(d, [[1.5, 2.5]])), [[0, 0], [1.5, 2.5]],
                 id="scatter_add"),
])
def test_scatter(dev, make, expected):
    check(make(dev), dev, expected)


def test_scatter_leaves_its_input_alone_and_scatter_underscore_changes_it():
    x = minifw.zeros(3)
    y = x.scatter(0, minifw.tensor([1]), 5.0)
    assert x.tolist() == [0, 0, 0] and y.tolist() == [0, 5, 0]
    assert x.scatter_(0, minifw.tensor([2]), minifw.tensor([4.0])) is x and x.tolist() == [0, 0, 4]


def test_scatter_gradients():
    index = minifw.tensor([[2, 0], [1, 2]])
    gradcheck(lambda x, s: x.scatter(1, index, s),
              [leaf(np.ones((2, 3))), leaf(np.arange(6.0).reshape(2, 3))])
    gradcheck(lambda x, s: x.scatter_add(1, minifw.tensor([[0, 0]]), s),
              [leaf(np.ones((2, 3))), leaf([[1.0, 2.0], [3.0, 4.0]])])


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda x: x.scatter(1, minifw.tensor([[0]]), minifw.ones(1, 1, dtype=F64)),
                 TypeError, "scatter: src must have this tensor's dtype float32, got float64",
                 id="src_dtype"),
    pytest.param(lambda x: x.scatter(1, minifw.tensor([[0, 1]]), minifw.ones(1, 1)), ValueError,
                 r"src of shape \(1, 1\) must have index's number of dimensions and be at least as "
                 r"large", id="src_too_small"),
    pytest.param(lambda x: x.scatter(1, minifw.tensor([[3]]), 1.0), IndexError,
                 "index 3 is out of bounds for dimension 1 with size 3", id="index_range"),
    pytest.param(lambda x: x.scatter(1, minifw.tensor([[0]])), TypeError,
                 "give one of src .* and value", id="no_source"),
    pytest.param(lambda x: x.scatter_(1, minifw.tensor([[0]]), 1.0, reduce="max"),
                 ValueError, "reduce must be None, 'add' or 'multiply', got 'max'", id="reduce"),
])
def test_scatter_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(minifw.zeros(2, 3))


def test_index_select(dev):
    x = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check(x.index_select(1, on(dev, [2, 0, 2])), dev, [[3, 1, 3], [6, 4, 6]])
    check(minifw.index_select(x, 0, on(dev, [1])), dev, [[4, 5, 6]])
    check(x.index_select(0, on(dev, [1], I32)), dev, [[4, 5, 6]])
    with pytest.raises(IndexError, match="index_select: index 2 is out of bounds for dimension 0"):
        x.index_select(0, on(dev, [2]))
    with pytest.raises(ValueError, match="index_select: index must be 1-D"):
        x.index_select(0, on(dev, [[0]]))


def test_index_select_gradient_adds_repeats():
    gradcheck(lambda x: x.index_select(0, minifw.tensor([2, 0, 2])), [leaf(np.arange(6.0).reshape(3, 2))])


def test_index_fill(dev):
    x = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check(x.index_fill(1, on(dev, [0, 2]), -1), dev, [[-1, 2, -1], [-1, 5, -1]])
    assert x.index_fill_(0, on(dev, [1]), on(dev, 0.5)) is x
    check(x, dev, [[1, 2, 3], [0.5, 0.5, 0.5]])
    gradcheck(lambda t, v: t.index_fill(1, minifw.tensor([1]), v), [leaf(np.ones((2, 3))), leaf(3.0)])


# ---- sorting -----------------------------------------------------------------------------------

def test_sort(dev):
    x = on(dev, [[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 0.0]])
    values, indices = x.sort()
    check(values, dev, [[1, 1, 2, 3], [-1, 0, 0, 5]], F32)
    check(indices, dev, [[1, 3, 2, 0], [1, 0, 3, 2]], I64)  # ties keep their order (stable)
    result = x.sort(dim=1, descending=True)
    check(result.values, dev, [[3, 2, 1, 1], [5, 0, 0, -1]])
    check(result.indices, dev, [[0, 2, 1, 3], [2, 0, 3, 1]])  # stable when descending too
    check(minifw.sort(x, 0).indices, dev, [[1, 1, 0, 1], [0, 0, 1, 0]])


def test_sort_places_nan_as_pytorch(dev):
    x = on(dev, [2.0, float("nan"), -1.0, float("inf"), float("nan")])
    check(x.sort().indices, dev, [2, 0, 3, 1, 4])  # NaN last
    check(x.sort(descending=True).indices, dev, [1, 4, 3, 0, 2])  # NaN first, above inf


def test_sort_of_integers_and_bools(dev):
    low = np.iinfo(np.int64).min
    check(on(dev, [3, low, 7]).sort(descending=True).values, dev, [7, 3, low], I64)
    check(on(dev, [True, False, True]).sort().indices, dev, [1, 0, 2])
    check(on(dev, [True, False, True]).sort(descending=True).indices, dev, [0, 2, 1])


def test_argsort(dev):
    x = on(dev, [[0.5, -1.0, 2.0], [3.0, 3.0, 1.0]])
    check(x.argsort(), dev, [[1, 0, 2], [2, 0, 1]], I64)
    check(x.argsort(dim=0, descending=True), dev, [[1, 1, 0], [0, 0, 1]])
    check(minifw.argsort(x, 1, True), dev, [[2, 0, 1], [0, 1, 2]])
    assert not x.argsort().requires_grad


@pytest.mark.parametrize("args, values, indices", [
    pytest.param((2,), [[5, 4], [9, 7]], [[1, 3], [0, 2]], id="largest_last_dim"),
    pytest.param((2, 1, False), [[1, 2], [3, 6]], [[0, 2], [3, 1]], id="smallest"),
    pytest.param((1, 0), [[9, 6, 7, 4]], [[1, 1, 1, 0]], id="dim0"),
    pytest.param((0,), np.zeros((2, 0)), np.zeros((2, 0)), id="k0"),
])
def test_topk(dev, args, values, indices):
    x = on(dev, [[1.0, 5.0, 2.0, 4.0], [9.0, 6.0, 7.0, 3.0]])
    result = x.topk(*args)
    check(result.values, dev, values, F32)
    check(result.indices, dev, indices, I64)
    v, i = minifw.topk(x, *args)
    check(v, dev, values)


def test_topk_errors():
    with pytest.raises(ValueError, match=r"topk: k \(5\) is out of range for a dimension of size 4"):
        minifw.zeros(2, 4).topk(5)
    with pytest.raises(TypeError, match="topk: k must be an int"):
        minifw.zeros(4).topk(1.5)


def test_sort_and_topk_gradients():
    x = leaf([[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.4, 3.3]])
    gradcheck(lambda t: t.sort(dim=1)[0], [x])
    gradcheck(lambda t: t.sort(dim=0, descending=True).values, [x])
    gradcheck(lambda t: t.topk(2)[0], [x])
    gradcheck(lambda t: t.topk(1, dim=0, largest=False).values, [x])


# ---- cumsum, where, tril/triu -----------------------------------------------------------------

def test_cumsum(dev):
    x = on(dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check(x.cumsum(1), dev, [[1, 3, 6], [4, 9, 15]], F32)
    check(minifw.cumsum(x, dim=0), dev, [[1, 2, 3], [5, 7, 9]])
    check(on(dev, [1, 2, 3]).cumsum(0), dev, [1, 3, 6], I64)
    check(on(dev, [True, True, False]).cumsum(0), dev, [1, 2, 2], I64)
    check(x.cumsum(-1, dtype=minifw.float64), dev, [[1, 3, 6], [4, 9, 15]], F64)
    check(on(dev, 5.0).cumsum(0), dev, 5.0)


def test_cumsum_gradient():
    gradcheck(lambda t: t.cumsum(1), [leaf(np.arange(6.0).reshape(2, 3))])
    gradcheck(lambda t: t.cumsum(0, dtype=minifw.float64) * t, [leaf([1.0, 2.0, 3.0])])


def test_where_three_arguments(dev):
    c = on(dev, [[True, False], [False, True]])
    a, b = on(dev, [[1.0, 2.0], [3.0, 4.0]]), on(dev, [[-1.0, -2.0], [-3.0, -4.0]])
    check(minifw.where(c, a, b), dev, [[1, -2], [-3, 4]], F32)
    check(a.where(c, b), dev, [[1, -2], [-3, 4]])
    check(minifw.where(c, a, 0.0), dev, [[1, 0], [0, 4]], F32)
    check(minifw.where(c, 1, 0), dev, [[1, 0], [0, 1]], I64)
    check(minifw.where(c, 1.0, 0), dev, [[1, 0], [0, 1]], F32)
    check(minifw.where(on(dev, [True, False]), a, b), dev, [[1, -2], [3, -4]])  # broadcast
    gradcheck(lambda x, y: minifw.where(minifw.tensor([True, False]), x, y),
              [leaf([1.0, 2.0]), leaf([3.0, 4.0])])


def test_where_with_the_condition_alone_is_nonzero_as_a_tuple(dev):
    c = on(dev, [[True, False, True], [False, False, True]])
    rows, cols = minifw.where(c)
    check(rows, dev, [0, 0, 1], I64)
    check(cols, dev, [0, 2, 2], I64)
    check(c.nonzero(), dev, [[0, 0], [0, 2], [1, 2]], I64)
    check(on(dev, [0.0, 1.5, 0.0, -2.0]).nonzero(), dev, [[1], [3]])
    assert minifw.nonzero(c, as_tuple=True)[1].tolist() == [0, 2, 2]
    with pytest.raises(TypeError, match="where: give both input and other, or neither"):
        minifw.where(c, 1.0)


@pytest.mark.parametrize("name, diagonal, expected", [
    pytest.param("tril", 0, [[1, 0, 0, 0], [5, 6, 0, 0], [9, 10, 11, 0]], id="tril"),
    pytest.param("tril", 1, [[1, 2, 0, 0], [5, 6, 7, 0], [9, 10, 11, 12]], id="tril_above"),
    pytest.param("tril", -1, [[0, 0, 0, 0], [5, 0, 0, 0], [9, 10, 0, 0]], id="tril_below"),
    pytest.param("triu", 0, [[1, 2, 3, 4], [0, 6, 7, 8], [0, 0, 11, 12]], id="triu"),
    pytest.param("triu", 1, [[0, 2, 3, 4], [0, 0, 7, 8], [0, 0, 0, 12]], id="triu_above"),
    pytest.param("triu", -1, [[1, 2, 3, 4], [5, 6, 7, 8], [0, 10, 11, 12]], id="triu_below"),
])
def test_tril_triu(dev, name, diagonal, expected):
    x = minifw.arange(1, 13, device=dev).reshape(3, 4)
    check(getattr(x, name)(diagonal), dev, expected, I64)
    check(getattr(minifw, name)(x.float(), diagonal), dev, expected, F32)
    batched = getattr(minifw.stack([x, x * 2]), name)(diagonal)
    check(batched, dev, np.stack([expected, 2 * np.array(expected)]))


def test_tril_triu_gradients_and_errors():
    gradcheck(lambda t: t.tril(-1) + t.triu(2) * 3, [leaf(np.arange(12.0).reshape(3, 4))])
    with pytest.raises(ValueError, match="tril: input must have at least 2 dimensions"):
        minifw.ones(3).tril()


# ---- pointwise functions -------------------------------------------------------------------

POINTWISE = {  # name: NumPy's definition
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "atan": np.arctan, "exp2": np.exp2,
    "log1p": np.log1p, "expm1": np.expm1, "rsqrt": lambda a: 1 / np.sqrt(a), "sign": np.sign,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round,
}
POSITIVE = {"rsqrt", "log1p"}


@pytest.mark.parametrize("name", POINTWISE)
def test_pointwise_values(dev, name):
    a = np.array([[0.3, -1.7, 2.5], [0.5, -0.5, 1.2]])
    a = np.abs(a) if name in POSITIVE else a
    want = POINTWISE[name](a)
    out = getattr(on(dev, a, F64), name)()
    assert out.dtype == F64
    np.testing.assert_allclose(host(out), want, rtol=1e-14)
    np.testing.assert_allclose(host(getattr(minifw, name)(on(dev, a))), want.astype(np.float32),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "atan", "exp2", "log1p", "expm1", "rsqrt"])
def test_pointwise_gradients(name):
    a = np.array([0.3, 1.7, 0.9, 0.45])
    gradcheck(lambda t: getattr(t, name)(), [leaf(a)])


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "trunc", "round"])
def test_piecewise_constant_functions_have_zero_gradients(name):
    x = leaf([0.3, -1.7, 2.2])
    getattr(x, name)().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


def test_round_half_to_even_and_decimals(dev):
    check(on(dev, [0.5, 1.5, 2.5, -0.5, -1.5]).round(), dev, [0, 2, 2, -0.0, -2])
    check(on(dev, [1.2345, -2.5678], F64).round(decimals=2), dev, [1.23, -2.57])
    check(minifw.round(on(dev, [1234.0, 1250.0]), decimals=-2), dev, [1200.0, 1200.0])


def test_pointwise_functions_of_integers(dev):
    t = on(dev, [-2, 0, 3])
    check(t.floor(), dev, [-2, 0, 3], I64)  # already whole: the same dtype
    check(t.round(), dev, [-2, 0, 3], I64)
    check(t.sign(), dev, [-1, 0, 1], I64)
    s = t.sin()  # the default dtype; a GPU's sinf may differ from the host's in the last bit
    check(s.round(decimals=5), dev, np.round(np.sin([-2.0, 0.0, 3.0]).astype(np.float32), 5), F32)


def test_functional_forms_of_existing_methods():
    x = minifw.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert minifw.neg(x).tolist() == (-x).tolist() and minifw.negative(x).tolist() == (-x).tolist()
    assert minifw.add(x, x, alpha=2).tolist() == (3 * x).tolist()
    assert minifw.sub(x, x, alpha=0.5).tolist() == (0.5 * x).tolist()
    assert minifw.mul(x, 2).tolist() == minifw.div(x, 0.5).tolist()
    assert minifw.argmin(x).item() == 1 and minifw.amax(x, 1).tolist() == [1.0, 3.0]
    assert minifw.clamp_min(x, 0).tolist() == [[1, 0], [3, 0.5]] == x.clamp_min(0).tolist()
    assert minifw.clamp_max(x, 0).tolist() == [[0, -2], [0, 0]]
    assert minifw.softmax(x, 1).sum(1).tolist() == pytest.approx([1.0, 1.0])
    assert minifw.all(x > -3).item() and not minifw.any(x > 3).item()
    assert (x > 0).all(dim=1).tolist() == [False, True] and (x > 0).any(0).tolist() == [True, True]
    assert minifw.is_tensor(x) and not minifw.is_tensor([1]) and minifw.numel(x) == 4
    assert minifw.is_floating_point(x) and not minifw.tensor([1]).is_floating_point()
    assert minifw.clone(x).tolist() == x.tolist() and minifw.select(x, 0, 1).tolist() == [3, 0.5]
    assert abs(minifw.var(x).item() - np.var(x.numpy(), ddof=1)) < 1e-6
    assert abs(x).tolist() == x.abs().tolist()


# ---- repeat ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sizes, shape", [
    pytest.param((4, 2), (4, 6), id="4_2"),  # the PyTorch docs' example
    pytest.param((4, 2, 1), (4, 2, 3), id="4_2_1"),
    pytest.param(((2, 1),), (2, 3), id="tuple"),
    pytest.param((1, 0), (1, 0), id="zero"),
])
def test_repeat(dev, sizes, shape):
    x = on(dev, [1, 2, 3])
    out = x.repeat(*sizes)
    reps = sizes[0] if isinstance(sizes[0], tuple) else sizes
    check(out, dev, np.tile([1, 2, 3], reps), I64)
    assert out.shape == shape


def test_repeat_gradient_and_errors():
    gradcheck(lambda t: t.repeat(2, 3), [leaf([[1.0, 2.0], [3.0, 4.0]])])
    gradcheck(lambda t: t.repeat(3, 1, 2), [leaf([1.0, -2.0])])
    with pytest.raises(ValueError, match=r"repeat: the number of sizes \(1\) must be >= the number "
                                         r"of dimensions \(2\)"):
        minifw.zeros(2, 2).repeat(2)


# ---- in-place methods --------------------------------------------------------------------------

IN_PLACE = {  # name: (call, values after it on [[1, -2], [3, -4]] as float32)
    "zero_": (lambda t, d: t.zero_(), [[0, 0], [0, 0]]),
    "fill_": (lambda t, d: t.fill_(2.5), [[2.5, 2.5], [2.5, 2.5]]),
    "fill_0d_tensor": (lambda t, d: t.fill_(on(d, 3)), [[3, 3], [3, 3]]),
    "copy_": (lambda t, d: t.copy_(on(d, [7.0, 8.0])), [[7, 8], [7, 8]]),
    "copy_from_cpu": (lambda t, d: t.copy_(minifw.tensor([[1, 1], [2, 2]])), [[1, 1], [2, 2]]),
    "add_": (lambda t, d: t.add_(on(d, [1.0, 2.0]), alpha=2), [[3, 2], [5, 0]]),
    "sub_": (lambda t, d: t.sub_(1), [[0, -3], [2, -5]]),
    "mul_": (lambda t, d: t.mul_(on(d, [[2.0], [0.5]])), [[2, -4], [1.5, -2]]),
    "div_": (lambda t, d: t.div_(2), [[0.5, -1], [1.5, -2]]),
    "pow_": (lambda t, d: t.pow_(2), [[1, 4], [9, 16]]),
    "clamp_": (lambda t, d: t.clamp_(-1, 2), [[1, -1], [2, -1]]),
    "clamp_min_": (lambda t, d: t.clamp_min_(0), [[1, 0], [3, 0]]),
    "clamp_max_": (lambda t, d: t.clamp_max_(0), [[0, -2], [0, -4]]),
    "abs_": (lambda t, d: t.abs_(), [[1, 2], [3, 4]]),
    "neg_": (lambda t, d: t.neg_(), [[-1, 2], [-3, 4]]),
    "relu_": (lambda t, d: t.relu_(), [[1, 0], [3, 0]]),
    "exp_log_": (lambda t, d: t.abs_().log_().exp_(), [[1, 2], [3, 4]]),
    "sqrt_": (lambda t, d: t.abs_().mul_(4).sqrt_(), [[2, 2 * 2 ** 0.5], [2 * 3 ** 0.5, 4]]),
    "sigmoid_tanh_": (lambda t, d: t.zero_().sigmoid_().tanh_(), np.full((2, 2), np.tanh(0.5))),
    "floor_": (lambda t, d: t.div_(3).floor_(), [[0, -1], [1, -2]]),
    "masked_fill_": (lambda t, d: t.masked_fill_(t < 0, 0.0), [[1, 0], [3, 0]]),
    "index_fill_": (lambda t, d: t.index_fill_(1, on(d, [1]), 9), [[1, 9], [3, 9]]),
    "scatter_": (lambda t, d: t.scatter_(1, on(d, [[1], [0]]), 5.0), [[1, 5], [5, -4]]),
    "setitem": (lambda t, d: t.__setitem__((slice(None), 0), on(d, [6.0, 7.0])) or t,
                [[6, -2], [7, -4]]),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_methods_change_the_tensor_itself(dev, name):
    call, expected = IN_PLACE[name]
    t = on(dev, [[1.0, -2.0], [3.0, -4.0]])
    memory, view = t._data, t[0]
    assert call(t, dev) is t
    assert t._data is memory and t.dtype == F32 and t._version >= 1
    np.testing.assert_allclose(host(t), np.asarray(expected, np.float32), rtol=1e-6)
    np.testing.assert_allclose(host(view), host(t)[0])  # views see the change
    assert view._version == t._version


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda t: t.long().add_(1.5), TypeError,
                 "add_: result type float32 can't be cast to this tensor's dtype int64", id="int_add_float"),
    pytest.param(lambda t: t.long().div_(2), TypeError, "div_: result type float32 can't be cast",
                 id="int_div"),
    pytest.param(lambda t: t.long().exp_(), TypeError, "exp_: result type float32 can't be cast",
                 id="int_exp"),
    pytest.param(lambda t: t.add_(minifw.ones(3, 2, 2)), ValueError,
                 r"add_: the result of shape \(3, 2, 2\) does not fit this tensor's shape \(2, 2\)",
                 id="broadcast_up"),
    pytest.param(lambda t: t.masked_fill_(minifw.tensor([[[True]]] * 2), 0.0), ValueError,
                 "masked_fill_: the result of shape", id="mask_too_large"),
    pytest.param(lambda t: t.fill_(minifw.ones(2)), ValueError,
                 "fill_: value must be a number or a 0-d tensor", id="fill_vector"),
    pytest.param(lambda t: t.add_("1"), TypeError, "add_: expected a Tensor or a number, got str",
                 id="add_string"),
    pytest.param(lambda t: t.copy_(minifw.ones(3)), ValueError,
                 r"copy_: a source of shape \(3,\) does not broadcast to \(2, 2\)", id="copy_shape"),
])
def test_in_place_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(minifw.ones(2, 2))


def test_in_place_float64_into_float32_casts_as_pytorch():
    t = minifw.ones(2)
    t.add_(minifw.tensor([0.5, 1e-10], dtype=F64))
    assert t.dtype == F32 and t.tolist() == [1.5, 1.0]
    i = minifw.tensor([1, 2], dtype=I32)
    i.add_(minifw.tensor([10, 20]))  # int64 into int32: same kind, allowed
    assert i.dtype == I32 and i.tolist() == [11, 22]


def test_an_in_place_update_with_a_cpu_scalar_tensor_on_a_device(dev):
    t = minifw.ones(2, device=dev)
    t.mul_(minifw.tensor(3.0))  # a 0-d CPU tensor joins, as in PyTorch
    check(t, dev, [3.0, 3.0])
    if dev.type != "cpu":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            minifw.tensor(1.0).add_(on(dev, [1.0, 2.0]))


@pytest.mark.parametrize("name", ["add_", "mul_", "masked_fill_", "index_fill_", "scatter_",
                                  "setitem", "copy_", "exp_log_", "clamp_"])
def test_recorded_in_place_operations_on_the_device_equal_the_cpus(dev, name):
    call, _ = IN_PLACE[name]
    grads = {}
    for device in ("cpu", dev):
        x = minifw.tensor([[1.0, -2.0], [3.0, -4.0]], device=device, requires_grad=True)
        w = minifw.tensor([[0.5, 1.5], [-1.0, 2.0]], device=device, requires_grad=True)
        y = x * w  # a non-leaf that requires grad
        out = call(y, device)
        assert out is y and y.device == device and (not y.is_leaf or name == "copy_")
        (y * y).sum().backward()
        grads[device] = [host(x.grad), host(w.grad)]
        assert x.grad.device == device
    for got, want in zip(grads[dev], grads["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


# ---- every differentiable operation on the device: the CPU's gradients ------------------------

DIFFERENTIABLE = {
    "gather": lambda t: t.gather(1, minifw.tensor([[0, 2, 2], [1, 0, 0]], device=t.device)),
    "scatter": lambda t: t.scatter(1, minifw.tensor([[2], [0]], device=t.device), t[:, :1] * 3),
    "scatter_add": lambda t: t.scatter_add(0, minifw.tensor([[1, 1, 0]], device=t.device), t[1:]),
    "index_select": lambda t: t.index_select(1, minifw.tensor([2, 2, 0], device=t.device)),
    "index_fill": lambda t: t.index_fill(0, minifw.tensor([1], device=t.device), 0.5),
    "masked_fill": lambda t: t.masked_fill(t > 0.5, 2.0),
    "topk": lambda t: t.topk(2, dim=1).values,
    "sort": lambda t: t.sort(dim=0, descending=True).values,
    "cumsum": lambda t: t.cumsum(1),
    "max_min_dim": lambda t: t.max(dim=1).values * 2 + t.min(0, keepdim=True).values.sum(),
    "where": lambda t: minifw.where(t > 0, t, t * t),
    "tril_triu": lambda t: t.tril() + t.triu(1) * 2,
    "pointwise": lambda t: t.sin() + t.cos() + t.atan() + t.exp2() + t.expm1() + t.tan()
    + t.abs().log1p() + (t * t + 1).rsqrt() + t.round(decimals=1),
    "chunk_split": lambda t: t.chunk(2, 1)[1].sum() + t.split([1, 1], 0)[0] * 2,
    "narrow": lambda t: t.narrow(1, 1, 2) * 3,
    "repeat": lambda t: t.repeat(2, 1, 2),
    "setitem": lambda t: _assigned(t),
}


def _assigned(t):
    out = minifw.zeros(3, 3, dtype=t.dtype, device=t.device)
    out[1:] = t * 2
    out[0, 1] = t[1, 2]
    return out


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_on_the_device_equal_the_cpus(dev, name):
    op = DIFFERENTIABLE[name]
    results = {}
    for device in ("cpu", dev):
        x = minifw.tensor([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]], device=device, requires_grad=True)
        out = op(x)
        assert out.device == device
        weights = minifw.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), device=device)
        (out * weights).sum().backward()
        results[device] = (host(out), host(x.grad))
    for got, want in zip(results[dev], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_by_finite_differences(name):
    op = DIFFERENTIABLE[name]
    gradcheck(op, [leaf([[0.3, -1.2, 0.8], [1.4, 0.1, -0.6]])])


def test_version_counters_and_views_on_the_device(dev):
    x = on(dev, [1.0, 2.0], requires_grad=True)
    out = minifw.zeros(3, 2, device=dev)
    out[0] = x
    total = 0
    for t in range(1, 3):
        previous = out[t - 1]  # a view of rows that out[t] = ... does not write
        out[t] = previous * 2
        total = total + previous.sum()
    (total + out.sum()).backward()
    check(x.grad, dev, [10.0, 10.0])
    stale = out[1:]
    out[2] = x * 0  # a recorded write into stale's rows
    with pytest.raises(RuntimeError, match="shares memory with another"):
        stale * 2
    y = x.exp()
    y.detach().mul_(2)
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation: "
                                           rf"\[{y.type()} \[2\]\], which is output 0 of ExpBackward0"):
        y.sum().backward()


def test_zero_dimensional_tensors(dev):
    t = on(dev, 3.0)
    values, indices = t.sort()
    check(values, dev, 3.0)
    check(indices, dev, 0, I64)
    check(t.topk(1).values, dev, 3.0)
    check(t.argsort(), dev, 0, I64)
    check(t.cumsum(0), dev, 3.0)
    check(t.gather(0, on(dev, 0)), dev, 3.0)
    check(t.nonzero(), dev, np.zeros((1, 0)), I64)
    check(minifw.where(on(dev, True))[0], dev, [0])
    with pytest.raises(ValueError, match="narrow: cannot be applied to a 0-d tensor"):
        t.narrow(0, 0, 1)
