"""minifw.Tensor: creation functions, dtypes and promotion, devices, broadcasting
arithmetic, reductions over dims with keepdim, indexing and slicing, cat/stack,
the reshape family, conversions, in-place updates, printing and errors.
(Gradients of these operations are checked in test_functional.py.)"""
import numpy as np
import pytest

import minifw

F32, F64, I64, BOOL = minifw.float32, minifw.float64, minifw.int64, minifw.bool_


def values(t):
    return t.detach().numpy()


# ---- creation ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, dtype, expected", [
    pytest.param([1.0, 2.0], None, F32, id="python_floats_float32"),
    pytest.param([1, 2], None, I64, id="python_ints_int64"),
    pytest.param([1, 2.5], None, F32, id="mixed_float32"),
    pytest.param([True, False], None, BOOL, id="bools"),
    pytest.param(3.0, None, F32, id="scalar_0d"),
    pytest.param(np.array([1.0], np.float64), None, F64, id="ndarray_keeps_float64"),
    pytest.param(np.array([1], np.int32), None, minifw.int32, id="ndarray_int32_keeps_int32"),
    pytest.param(np.array([1], np.int16), None, I64, id="ndarray_int16_becomes_int64"),
    pytest.param(np.float64(1.5), None, F64, id="numpy_scalar_keeps_float64"),
    pytest.param(np.array([1.0], np.float16), None, F32, id="ndarray_float16_becomes_float32"),
    pytest.param([1, 2], minifw.float64, F64, id="dtype_argument"),
    pytest.param([1.7, -2.2], "int64", I64, id="dtype_by_name"),
])
def test_tensor_infers_dtypes_as_pytorch(data, dtype, expected):
    t = minifw.tensor(data, dtype=dtype)
    assert t.dtype == expected
    np.testing.assert_array_equal(t.numpy(), np.asarray(data).astype(expected))


def test_python_floats_go_straight_to_the_requested_dtype():
    # not through the default float32 first: 0.1 stays the nearest double
    assert minifw.tensor(0.1, dtype=minifw.float64).item() == 0.1
    assert minifw.tensor([0.1, 1e-40], dtype="float64").tolist() == [0.1, 1e-40]


def test_tensor_copies_its_data_and_from_numpy_shares_it():
    a = np.zeros(3, np.float32)
    t, s = minifw.tensor(a), minifw.from_numpy(a)
    a[0] = 5.0
    assert t[0].item() == 0.0 and s[0].item() == 5.0
    assert minifw.Tensor([1.0, 2.0]).shape == (2,)  # the class itself, as torch.Tensor(data)


def test_from_numpy_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="from_numpy: dtype must be one of .* got uint8"):
        minifw.from_numpy(np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match="expected a numpy.ndarray, got list"):
        minifw.from_numpy([1, 2])


@pytest.mark.parametrize("make, shape, dtype, fill", [
    pytest.param(lambda: minifw.zeros(2, 3), (2, 3), F32, 0.0, id="zeros_varargs"),
    pytest.param(lambda: minifw.zeros((2, 3)), (2, 3), F32, 0.0, id="zeros_tuple"),
    pytest.param(lambda: minifw.ones(4, dtype=minifw.int64), (4,), I64, 1, id="ones_int64"),
    pytest.param(lambda: minifw.full((2, 2), 7.5), (2, 2), F32, 7.5, id="full_float"),
    pytest.param(lambda: minifw.full((2,), 3), (2,), I64, 3, id="full_int_is_int64"),
    pytest.param(lambda: minifw.full((2,), True), (2,), BOOL, True, id="full_bool"),
    pytest.param(lambda: minifw.zeros(()), (), F32, 0.0, id="zeros_0d"),
    pytest.param(lambda: minifw.zeros(0, 3), (0, 3), F32, None, id="zeros_empty"),
    pytest.param(lambda: minifw.ones_like(minifw.zeros(2, dtype=minifw.float64)), (2,), F64, 1.0,
                 id="ones_like_keeps_dtype"),
    pytest.param(lambda: minifw.zeros_like(minifw.ones(3), dtype=minifw.int64), (3,), I64, 0,
                 id="zeros_like_dtype"),
    pytest.param(lambda: minifw.full_like(minifw.ones(2), 4.0), (2,), F32, 4.0, id="full_like"),
])
def test_filled_creation(make, shape, dtype, fill):
    t = make()
    assert t.shape == shape and t.dtype == dtype and not t.requires_grad
    if fill is not None:
        assert (t.numpy() == fill).all()


@pytest.mark.parametrize("args, kwargs, expected, dtype", [
    pytest.param((5,), {}, [0, 1, 2, 3, 4], I64, id="end"),
    pytest.param((2, 8, 3), {}, [2, 5], I64, id="start_end_step"),
    pytest.param((0.0, 1.0, 0.25), {}, [0, 0.25, 0.5, 0.75], F32, id="float_steps_float32"),
    pytest.param((3,), {"dtype": minifw.float64}, [0, 1, 2], F64, id="dtype"),
    pytest.param((5, 0, -2), {}, [5, 3, 1], I64, id="negative_step"),
])
def test_arange(args, kwargs, expected, dtype):
    t = minifw.arange(*args, **kwargs)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), expected)


def test_arange_step_zero_is_an_error():
    with pytest.raises(ValueError, match="step must be nonzero"):
        minifw.arange(0, 5, 0)


def test_random_creation_follows_manual_seed():
    minifw.manual_seed(123)
    a, b = minifw.randn(3, 4), minifw.rand(5)
    minifw.manual_seed(123)
    np.testing.assert_array_equal(minifw.randn(3, 4).numpy(), a.numpy())
    np.testing.assert_array_equal(minifw.rand(5).numpy(), b.numpy())
    assert a.dtype == F32 and minifw.randn(2, dtype=minifw.float64).dtype == F64
    assert (b.numpy() >= 0).all() and (b.numpy() < 1).all()


def test_random_creation_from_its_own_generator():
    g1, g2 = minifw.Generator().manual_seed(7), minifw.Generator().manual_seed(7)
    np.testing.assert_array_equal(minifw.randn(4, generator=g1).numpy(),
                                  minifw.randn(4, generator=g2).numpy())
    r = minifw.randint(2, 5, (1000,), generator=g1)
    assert r.dtype == I64 and r.numpy().min() == 2 and r.numpy().max() == 4
    p = minifw.randperm(6, generator=g1)
    assert sorted(p.tolist()) == list(range(6))


def test_rng_state_round_trip_resumes_the_same_stream():
    minifw.manual_seed(3)
    minifw.randn(2)
    state = minifw.get_rng_state()
    a = minifw.randn(5).numpy()
    minifw.randn(7)
    minifw.set_rng_state(state)
    np.testing.assert_array_equal(minifw.randn(5).numpy(), a)
    assert minifw.random.initial_seed() == 3


def test_manual_seed_returns_the_global_generator_and_checks_the_seed():
    assert minifw.manual_seed(1) is minifw.random.default_generator
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        minifw.manual_seed(-1)
    with pytest.raises(TypeError, match="seed must be an int, got float"):
        minifw.manual_seed(1.5)
    with pytest.raises(ValueError, match="Generator: device must be 'cpu'"):
        minifw.Generator("cuda")
    with pytest.raises(TypeError, match="generator must be a minifw.Generator or None"):
        minifw.randn(2, generator=np.random.default_rng(0))


def test_randn_statistics():
    minifw.manual_seed(0)
    x = minifw.randn(100_000, dtype=minifw.float64).numpy()
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: minifw.zeros(2, -1), ValueError, r"sizes must be >= 0, got \(2, -1\)",
                 id="negative_size"),
    pytest.param(lambda: minifw.ones(2.5), TypeError, "size must be ints", id="float_size"),
    pytest.param(lambda: minifw.zeros(2, dtype="int8"), TypeError,
                 "dtype must be one of float32, float64, int64, int32, bool", id="unsupported_dtype"),
    pytest.param(lambda: minifw.randn(2, dtype=minifw.int64), TypeError,
                 "randn: dtype must be float32 or float64", id="randn_int"),
    pytest.param(lambda: minifw.tensor([[1, 2], [3]]), TypeError, "cannot make a tensor",
                 id="ragged_list"),
    pytest.param(lambda: minifw.tensor(["a"]), TypeError, "cannot make a tensor", id="strings"),
    pytest.param(lambda: minifw.zeros(2, device="tpu"), ValueError,
                 "zeros: device: type must be one of 'cpu', 'cudasim', 'cuda'; got 'tpu'",
                 id="unknown_device"),
])
def test_creation_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- dtypes, devices, conversions --------------------------------------------------------

@pytest.mark.parametrize("make", [
    pytest.param(lambda: minifw.tensor([1, 2], requires_grad=True), id="tensor"),
    pytest.param(lambda: minifw.zeros(2, dtype=minifw.int64, requires_grad=True), id="zeros"),
    pytest.param(lambda: minifw.arange(3).requires_grad_(), id="requires_grad_"),
])
def test_int64_tensors_never_require_grad(make):
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype can require "
                                           "gradients; this one is int64"):
        make()


def test_data_of_a_tensor_that_requires_grad_stays_floating_point():
    t = minifw.ones(2, requires_grad=True)
    t.data = minifw.zeros(3, dtype=F64)  # new storage of another shape or float dtype is fine
    assert t.shape == (3,) and t.dtype == F64 and t.requires_grad
    with pytest.raises(RuntimeError, match="must hold floating point data; got int64"):
        t.data = minifw.arange(2)
    with pytest.raises(TypeError, match="Tensor.data: expected a Tensor, got ndarray"):
        t.data = np.zeros(3)


def test_data_is_a_detached_tensor_sharing_storage():
    p = minifw.nn.Parameter(minifw.ones(3))
    d = p.data
    assert isinstance(d, minifw.Tensor) and not d.requires_grad and d.grad_fn is None
    p.data.add_(1)  # as PyTorch users update parameters by hand
    np.testing.assert_array_equal(p.detach().numpy(), [2.0, 2.0, 2.0])
    p.data.copy_(minifw.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(p.detach().numpy(), [1.0, 2.0, 3.0])
    assert np.shares_memory(p.data.numpy(), p.detach().numpy())  # x.data.numpy() needs no detach
    y = (p * 2).sum()
    p.data.mul_(10)  # not recorded: the graph still sees the storage it saved
    y.backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 2.0, 2.0])


def test_assigning_data_replaces_the_storage():
    p = minifw.nn.Parameter(minifw.ones(2, 2))
    optimizer = minifw.optim.SGD([p], lr=0.5)
    p.data = minifw.zeros_like(p)
    assert p.requires_grad and isinstance(p, minifw.nn.Parameter)
    (p * 3).sum().backward()
    optimizer.step()  # the optimizer still holds p and updates its new storage
    np.testing.assert_array_equal(p.detach().numpy(), np.full((2, 2), -1.5, np.float32))


def test_int_results_of_float_inputs_carry_no_graph():
    x = minifw.randn(3, requires_grad=True)
    assert not x.long().requires_grad and x.long().dtype == I64
    assert not x.argmax().requires_grad


@pytest.mark.parametrize("a, b, expected", [
    pytest.param(minifw.ones(2), 2, F32, id="f32_and_int"),
    pytest.param(minifw.ones(2), 2.5, F32, id="f32_and_float"),
    pytest.param(minifw.ones(2, dtype=minifw.float64), 2.5, F64, id="f64_and_float"),
    pytest.param(minifw.arange(2), 2, I64, id="i64_and_int"),
    pytest.param(minifw.arange(2), 2.5, F32, id="i64_and_float_is_float32"),
    pytest.param(minifw.arange(2), minifw.ones(2), F32, id="i64_and_f32"),
    pytest.param(minifw.ones(2), minifw.ones(2, dtype=minifw.float64), F64, id="f32_and_f64"),
    pytest.param(minifw.arange(2), np.float32(2.5), F32, id="i64_and_numpy_float"),
    pytest.param(minifw.arange(2), np.int32(2), I64, id="i64_and_numpy_int"),
    pytest.param(minifw.tensor([True]), 1, I64, id="bool_and_int"),
    pytest.param(minifw.tensor([True]), minifw.tensor([False]), BOOL, id="bool_and_bool"),
])
def test_binary_promotion_as_pytorch(a, b, expected):
    assert (a + b).dtype == expected
    assert (b + a).dtype == expected


def test_true_division_of_ints_is_float32():
    t = minifw.tensor([1, 3]) / 2
    assert t.dtype == F32
    np.testing.assert_array_equal(t.numpy(), [0.5, 1.5])


@pytest.mark.parametrize("convert, dtype", [
    pytest.param(lambda t: t.double(), F64, id="double"),
    pytest.param(lambda t: t.float(), F32, id="float"),
    pytest.param(lambda t: t.long(), I64, id="long"),
    pytest.param(lambda t: t.bool(), BOOL, id="bool"),
    pytest.param(lambda t: t.to(minifw.float64), F64, id="to_dtype"),
    pytest.param(lambda t: t.to("cpu", minifw.float64), F64, id="to_device_dtype"),
    pytest.param(lambda t: t.to(minifw.zeros(1, dtype=minifw.int64)), I64, id="to_other_tensor"),
    pytest.param(lambda t: t.type_as(minifw.zeros(1, dtype=minifw.float64)), F64, id="type_as"),
])
def test_conversions(convert, dtype):
    t = minifw.tensor([1.5, -2.0, 0.0])
    out = convert(t)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), t.numpy().astype(dtype))


def test_same_dtype_and_device_conversion_returns_self():
    t = minifw.ones(2)
    assert t.float() is t and t.to("cpu") is t and t.cpu() is t
    assert t.to("cpu", copy=True) is not t


def test_device():
    t = minifw.ones(2, device="cpu")
    assert t.device == "cpu" and minifw.device("cpu") == "cpu"
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"):
        t.to("cuda")
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"):
        minifw.zeros(2, device="cuda")


@pytest.mark.parametrize("t, item", [
    pytest.param(minifw.tensor(2.5), 2.5, id="float_0d"),
    pytest.param(minifw.tensor([[7]]), 7, id="int_1x1"),
    pytest.param(minifw.tensor([True]), True, id="bool"),
])
def test_item(t, item):
    assert t.item() == item and type(t.item()) is type(item)


def test_item_of_many_elements_is_an_error():
    with pytest.raises(ValueError, match="only a tensor with one element.*has 3"):
        minifw.ones(3).item()


def test_numpy_tolist_and_python_numbers():
    t = minifw.tensor([[1.0, 2.0]])
    assert t.tolist() == [[1.0, 2.0]]
    assert float(minifw.tensor([2.5])) == 2.5 and int(minifw.tensor(3)) == 3
    assert np.asarray(t).shape == (1, 2)
    with pytest.raises(RuntimeError, match=r"detach\(\).numpy\(\)"):
        minifw.ones(2, requires_grad=True).numpy()
    with pytest.raises(ValueError, match="truth value of a tensor with 2 elements is ambiguous"):
        bool(minifw.ones(2))


def test_size_and_friends():
    t = minifw.zeros(2, 3, 4)
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == t.ndim == 3 and t.numel() == 24 and len(t) == 2
    with pytest.raises(TypeError, match="len"):
        len(minifw.tensor(1.0))


# ---- arithmetic with broadcasting ------------------------------------------------------------

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "pow": (lambda a, b: a.abs() ** b, lambda a, b: np.abs(a) ** b),
}
SHAPES = {
    "same": ((2, 3), (2, 3)),
    "row": ((4, 3), (3,)),
    "column": ((4, 1), (1, 5)),
    "leading": ((2, 1, 3), (4, 3)),
    "scalar_tensor": ((2, 3), ()),
}


@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("op", BINARY.values(), ids=BINARY.keys())
def test_broadcasting_arithmetic_matches_numpy(op, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(0.5, 2.0, s) for s in shapes)
    ours, ref = op
    out = ours(minifw.tensor(a, dtype=minifw.float64), minifw.tensor(b, dtype=minifw.float64))
    assert out.shape == np.broadcast_shapes(*shapes)
    np.testing.assert_allclose(out.numpy(), ref(a, b), rtol=1e-15)


@pytest.mark.parametrize("expression, expected", [
    pytest.param(lambda t: 1 + t, [2, 3], id="radd"),
    pytest.param(lambda t: 1 - t, [0, -1], id="rsub"),
    pytest.param(lambda t: 2 * t, [2, 4], id="rmul"),
    pytest.param(lambda t: 2 / t, [2, 1], id="rdiv"),
    pytest.param(lambda t: 2 ** t, [2, 4], id="rpow"),
    pytest.param(lambda t: -t, [-1, -2], id="neg"),
    pytest.param(lambda t: t ** 2, [1, 4], id="pow_number"),
    pytest.param(lambda t: np.array([1.0, 1.0]) + t, [2, 3], id="ndarray_on_the_left"),
])
def test_numbers_on_either_side(expression, expected):
    out = expression(minifw.tensor([1.0, 2.0]))
    assert isinstance(out, minifw.Tensor)
    np.testing.assert_allclose(out.numpy(), expected)


def test_incompatible_shapes_are_an_error():
    with pytest.raises(ValueError, match="broadcast"):
        minifw.ones(2, 3) + minifw.ones(4)


@pytest.mark.parametrize("a_shape, b_shape", [
    pytest.param((3, 4), (4, 5), id="matrix_matrix"),
    pytest.param((4,), (4, 5), id="vector_matrix"),
    pytest.param((3, 4), (4,), id="matrix_vector"),
    pytest.param((4,), (4,), id="dot"),
    pytest.param((2, 3, 4), (4, 5), id="batched_broadcast"),
])
def test_matmul_matches_numpy(a_shape, b_shape):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    out = minifw.tensor(a) @ minifw.tensor(b)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-14)
    assert minifw.matmul(minifw.tensor(a), minifw.tensor(b)).shape == np.shape(a @ b)


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4, 5\) cannot be multiplied"):
        minifw.ones(2, 3) @ minifw.ones(4, 5)


@pytest.mark.parametrize("name, ref", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("abs", np.abs),
    ("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("tanh", np.tanh), ("relu", lambda a: np.maximum(a, 0)),
])
def test_elementwise_functions(name, ref):
    a = np.array([[0.5, 1.5], [2.0, 3.0]])
    t = minifw.tensor(a)
    np.testing.assert_allclose(getattr(t, name)().numpy(), ref(a), rtol=1e-12)
    np.testing.assert_allclose(getattr(minifw, name)(t).numpy(), ref(a), rtol=1e-12)


def test_elementwise_functions_of_ints_give_float32():
    t = minifw.tensor([1, 4])
    assert t.sqrt().dtype == F32 and t.exp().dtype == F32
    np.testing.assert_allclose(t.sqrt().numpy(), [1, 2])


@pytest.mark.parametrize("kwargs, expected", [
    pytest.param(dict(min=-1.0, max=1.0), [-1, -0.5, 1], id="both"),
    pytest.param(dict(min=0.0), [0, 0, 2], id="min_only"),
    pytest.param(dict(max=0.0), [-3, -0.5, 0], id="max_only"),
])
def test_clamp(kwargs, expected):
    t = minifw.tensor([-3.0, -0.5, 2.0])
    np.testing.assert_array_equal(t.clamp(**kwargs).numpy(), expected)
    np.testing.assert_array_equal(minifw.clamp(t, **kwargs).numpy(), expected)


def test_clamp_needs_a_bound():
    with pytest.raises(ValueError, match="at least one of min and max"):
        minifw.ones(2).clamp()


def test_comparisons_give_bool_tensors():
    t = minifw.tensor([1.0, 2.0, 3.0])
    assert (t > 1.5).tolist() == [False, True, True]
    assert (t == minifw.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]
    assert (t <= 2).dtype == BOOL and (t != 2).tolist() == [True, False, True]


def test_where():
    c = minifw.tensor([True, False, True])
    out = minifw.where(c, minifw.tensor([1.0, 2.0, 3.0]), 0.0)
    np.testing.assert_array_equal(out.numpy(), [1, 0, 3])


# ---- reductions ------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": (lambda t, **k: t.sum(**k), np.sum),
    "mean": (lambda t, **k: t.mean(**k), np.mean),
    "max": (lambda t, **k: t.max(**k) if "dim" not in k else t.max(**k).values, np.max),
    "min": (lambda t, **k: t.min(**k) if "dim" not in k else t.min(**k).values, np.min),
    "amax": (lambda t, **k: t.amax(**k), np.max),
}
DIMS = {
    "all": {},
    "dim0": dict(dim=0),
    "dim_last_keepdim": dict(dim=-1, keepdim=True),
    "dim1": dict(dim=1),
    "dim1_keepdim": dict(dim=1, keepdim=True),
}


@pytest.mark.parametrize("kwargs", DIMS.values(), ids=DIMS.keys())
@pytest.mark.parametrize("op", REDUCTIONS.values(), ids=REDUCTIONS.keys())
def test_reductions_match_numpy(op, kwargs):
    a = np.random.default_rng(2).standard_normal((3, 4, 5))
    ours, ref = op
    out = ours(minifw.tensor(a), **kwargs)
    expected = ref(a, axis=kwargs.get("dim"), keepdims=kwargs.get("keepdim", False))
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-14)


def test_sum_over_several_dims_and_functional_forms():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = minifw.tensor(a)
    np.testing.assert_array_equal(t.sum(dim=(0, 2)).numpy(), a.sum(axis=(0, 2)))
    np.testing.assert_array_equal(minifw.sum(t, 1, True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_array_equal(minifw.mean(t, 0).numpy(), a.mean(0))


def test_max_with_dim_returns_values_and_first_indices():
    t = minifw.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 3.0]])
    values, indices = t.max(dim=1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype == I64
    assert t.min(dim=0, keepdim=True).indices.tolist() == [[0, 1, 1]]
    assert minifw.max(t).item() == 7.0 and minifw.min(t, 1).values.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("dim, keepdim, expected", [
    pytest.param(None, False, 3, id="flat"),
    pytest.param(1, False, [1, 0], id="dim1"),
    pytest.param(0, True, [[1, 0, 0]], id="dim0_keepdim"),
])
def test_argmax(dim, keepdim, expected):
    t = minifw.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 2.0]])
    out = t.argmax(dim, keepdim) if dim is not None else t.argmax()
    assert out.dtype == I64 and out.tolist() == expected
    assert minifw.argmax(t, dim, keepdim).tolist() == expected


def test_sum_of_bools_and_ints_is_int64():
    assert (minifw.tensor([1.0, 2.0, 3.0]) > 1).sum().item() == 2
    assert minifw.tensor([1, 2]).sum().dtype == I64


def test_var_and_std_use_bessels_correction():
    a = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    t = minifw.tensor(a)
    np.testing.assert_allclose(t.var().numpy(), a.var(ddof=1))
    np.testing.assert_allclose(t.std(dim=1).numpy(), a.std(axis=1, ddof=1))
    np.testing.assert_allclose(t.var(dim=0, correction=0).numpy(), a.var(axis=0))


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda t: t.sum(dim=3), IndexError, r"dimension out of range \(expected to be "
                 r"in range of \[-3, 2\], but got 3\)", id="dim_out_of_range"),
    pytest.param(lambda t: t.sum(dim=(0, -3)), ValueError, "names an axis twice", id="dim_twice"),
    pytest.param(lambda t: t.sum(dim=1.0), TypeError, "dim must be an int", id="float_dim"),
    pytest.param(lambda t: t.long().mean(), TypeError, "mean: input must be a floating point",
                 id="mean_of_ints"),
    pytest.param(lambda t: minifw.zeros(0).max(), ValueError, "max: the tensor is empty",
                 id="max_of_empty"),
])
def test_reduction_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(minifw.ones(2, 3, 4))


# ---- indexing and slicing ----------------------------------------------------------------------

INDICES = {
    "int": 1,
    "negative_int": -1,
    "slice": slice(1, 3),
    "step_slice": (slice(None), slice(None, None, 2)),
    "int_and_slice": (0, slice(1, None)),
    "ellipsis": (Ellipsis, 0),
    "none_new_axis": (None, 1),
    "int_list": [0, 2, 2],
    "int_tensor": minifw.tensor([2, 0]),
    "bool_mask": np.array([True, False, True]),
    "two_int_arrays": (np.array([0, 2]), np.array([1, 3])),
}


@pytest.mark.parametrize("index", INDICES.values(), ids=INDICES.keys())
def test_indexing_matches_numpy(index):
    a = np.arange(12.0).reshape(3, 4)
    out = minifw.tensor(a)[index]
    np_index = index.numpy() if isinstance(index, minifw.Tensor) else index
    np.testing.assert_array_equal(out.numpy(), a[np_index])


def test_indexing_with_a_bool_tensor():
    t = minifw.tensor([1.0, -2.0, 3.0])
    assert t[t > 0].tolist() == [1.0, 3.0]


@pytest.mark.parametrize("index, message", [
    pytest.param(5, "index 5 is invalid for a tensor of shape \\(3, 4\\)", id="out_of_range"),
    pytest.param((0, 0, 0), "invalid for a tensor of shape", id="too_many"),
    pytest.param(minifw.tensor([0.5]), "tensors used as indices must be int64 or bool",
                 id="float_tensor"),
])
def test_bad_indices(index, message):
    with pytest.raises(IndexError, match=message):
        minifw.zeros(3, 4)[index]


def test_setitem_without_a_graph():
    t = minifw.zeros(2, 3)
    t[0, 1:] = 5.0
    t[1] = minifw.tensor([1.0, 2.0, 3.0])
    assert t.tolist() == [[0, 5, 5], [1, 2, 3]]


def test_iteration_yields_rows():
    rows = list(minifw.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]


# ---- cat and stack -------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_numpy(dim):
    a, b = np.ones((2, 3)), np.zeros((2, 3))
    out = minifw.cat([minifw.tensor(a), minifw.tensor(b)], dim)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a, b], dim))


def test_cat_of_different_lengths_and_promotion():
    out = minifw.cat((minifw.ones(2, 1), minifw.zeros(2, 3, dtype=minifw.float64)), dim=1)
    assert out.shape == (2, 4) and out.dtype == F64


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_matches_numpy(dim):
    a, b = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
    out = minifw.stack([minifw.tensor(a), minifw.tensor(b)], dim)
    np.testing.assert_array_equal(out.numpy(), np.stack([a, b], dim))


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: minifw.cat([minifw.ones(2, 3), minifw.ones(3, 3)], dim=1), ValueError,
                 r"sizes must match except along dim 1; tensor 0 has shape \(2, 3\), tensor 1 "
                 r"has shape \(3, 3\)", id="cat_mismatch"),
    pytest.param(lambda: minifw.cat([minifw.ones(2), minifw.ones(2, 1)]), ValueError,
                 "sizes must match", id="cat_ndim_mismatch"),
    pytest.param(lambda: minifw.cat([]), TypeError, "non-empty list", id="cat_empty"),
    pytest.param(lambda: minifw.cat(minifw.ones(2)), TypeError, "non-empty list or tuple",
                 id="cat_a_tensor"),
    pytest.param(lambda: minifw.cat([minifw.ones(2), [1.0]]), TypeError, "element 1 is a list",
                 id="cat_a_list"),
    pytest.param(lambda: minifw.cat([minifw.tensor(1.0), minifw.tensor(2.0)]), ValueError,
                 "zero-dimensional tensors cannot be concatenated", id="cat_0d"),
    pytest.param(lambda: minifw.stack([minifw.ones(2), minifw.ones(3)]), ValueError,
                 r"same shape; tensor 0 has shape \(2,\), tensor 1 has shape \(3,\)",
                 id="stack_mismatch"),
])
def test_cat_stack_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- the reshape family -------------------------------------------------------------------

RESHAPES = {
    "reshape": (lambda t: t.reshape(6, 4), lambda a: a.reshape(6, 4)),
    "reshape_tuple_minus_one": (lambda t: t.reshape((-1, 3)), lambda a: a.reshape(-1, 3)),
    "view": (lambda t: t.view(4, -1), lambda a: a.reshape(4, -1)),
    "flatten": (lambda t: t.flatten(), lambda a: a.reshape(-1)),
    "flatten_1": (lambda t: t.flatten(1), lambda a: a.reshape(2, -1)),
    "flatten_0_1": (lambda t: t.flatten(0, 1), lambda a: a.reshape(6, 4)),
    "permute": (lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "permute_tuple": (lambda t: t.permute((1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    "transpose": (lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    "transpose_negative": (lambda t: t.transpose(-1, -2), lambda a: a.swapaxes(-1, -2)),
    "unsqueeze_0": (lambda t: t.unsqueeze(0), lambda a: a[None]),
    "unsqueeze_last": (lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    "squeeze_all": (lambda t: t.unsqueeze(1).unsqueeze(0).squeeze(), lambda a: a),
    "squeeze_dim": (lambda t: t.unsqueeze(1).squeeze(1), lambda a: a),
    "squeeze_non_one_is_a_no_op": (lambda t: t.squeeze(0), lambda a: a),
    "T": (lambda t: t.T, lambda a: a.T),
    "expand": (lambda t: t[:, :1].expand(5, 2, 3, 4), lambda a: np.broadcast_to(a[:, :1], (5, 2, 3, 4))),
    "expand_minus_one": (lambda t: t[:1].expand(5, -1, -1), lambda a: np.broadcast_to(a[:1], (5, 3, 4))),
}


@pytest.mark.parametrize("op", RESHAPES.values(), ids=RESHAPES.keys())
def test_reshape_family_matches_numpy(op):
    a = np.arange(24.0).reshape(2, 3, 4)
    ours, ref = op
    out = ours(minifw.tensor(a))
    assert out.shape == ref(a).shape
    np.testing.assert_array_equal(out.numpy(), ref(a))


def test_functional_forms_of_shape_ops():
    t = minifw.zeros(2, 3, 1)
    assert minifw.reshape(t, (3, 2)).shape == (3, 2)
    assert minifw.flatten(t).shape == (6,)
    assert minifw.permute(t, (2, 0, 1)).shape == (1, 2, 3)
    assert minifw.transpose(t, 0, 1).shape == (3, 2, 1)
    assert minifw.unsqueeze(t, 0).shape == (1, 2, 3, 1)
    assert minifw.squeeze(t).shape == (2, 3)
    assert minifw.tensor(5.0).flatten().shape == (1,)


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda t: t.reshape(5, -1), ValueError,
                 r"shape \(5, -1\) is invalid for a tensor of shape \(2, 3, 4\) \(24 elements\)",
                 id="reshape_indivisible"),
    pytest.param(lambda t: t.reshape(-1, -1), ValueError, "invalid", id="reshape_two_unknowns"),
    pytest.param(lambda t: t.view(25), ValueError, "invalid", id="view_wrong_count"),
    pytest.param(lambda t: t.permute(0, 1), ValueError, "got 2 dims", id="permute_too_few"),
    pytest.param(lambda t: t.permute(0, 1, 1), ValueError, "names an axis twice",
                 id="permute_repeated"),
    pytest.param(lambda t: t.transpose(0, 3), IndexError, "dimension out of range",
                 id="transpose_out_of_range"),
    pytest.param(lambda t: t.unsqueeze(4), IndexError, "dimension out of range",
                 id="unsqueeze_out_of_range"),
    pytest.param(lambda t: t.flatten(2, 1), ValueError, "start_dim .* must not come after end_dim",
                 id="flatten_reversed"),
    pytest.param(lambda t: t.expand(2, 5, 4), ValueError, "cannot expand shape", id="expand_bad"),
    pytest.param(lambda t: t.expand(2, 1, 4), ValueError, r"cannot expand shape \(2, 3, 4\) to "
                 r"\(2, 1, 4\)", id="expand_cannot_shrink"),
    pytest.param(lambda t: t.t(), ValueError, "<= 2 dimensions", id="t_of_3d"),
])
def test_shape_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(minifw.zeros(2, 3, 4))


# ---- in-place updates (outside the graph) ---------------------------------------------------

def test_in_place_arithmetic():
    t = minifw.ones(2, 2)
    t += 1
    t *= minifw.tensor([1.0, 3.0])
    t.sub_(minifw.ones(2), alpha=0.5)
    t /= 2
    np.testing.assert_array_equal(t.numpy(), [[0.75, 2.75], [0.75, 2.75]])
    t.zero_()
    assert (t.numpy() == 0).all() and t.fill_(2.0).tolist() == [[2, 2], [2, 2]]
    t.copy_(minifw.tensor([5.0, 6.0]))
    assert t.tolist() == [[5, 6], [5, 6]]


def test_in_place_cannot_change_dtype_or_shape():
    with pytest.raises(TypeError, match="result type float32 can't be cast to this tensor's "
                                        "dtype int64"):
        minifw.tensor([1, 2]).add_(1.5)
    with pytest.raises(ValueError, match=r"result of shape \(2, 2\) does not fit"):
        minifw.ones(2).add_(minifw.ones(2, 1))


def test_uniform_and_normal_fill_in_place():
    minifw.manual_seed(0)
    t = minifw.empty(1000, dtype=minifw.float64).uniform_(-2.0, 3.0)
    assert t.numpy().min() >= -2 and t.numpy().max() < 3
    t.normal_(5.0, 0.1)
    assert abs(t.numpy().mean() - 5) < 0.02


# ---- printing -----------------------------------------------------------------------------------

@pytest.mark.parametrize("t, text", [
    pytest.param(minifw.tensor([1.0, 2.5]), "tensor([1.0000, 2.5000])", id="float32"),
    pytest.param(minifw.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])", id="int64_2d"),
    pytest.param(minifw.tensor(3.5), "tensor(3.5000)", id="scalar"),
    pytest.param(minifw.tensor([1.0], dtype=minifw.float64), "tensor([1.], dtype=minifw.float64)",
                 id="float64_shows_dtype"),
    pytest.param(minifw.tensor([True]), "tensor([True])", id="bool"),
    pytest.param(minifw.tensor([1.0], requires_grad=True), "tensor([1.], requires_grad=True)",
                 id="requires_grad"),
    pytest.param(minifw.tensor([1.0], requires_grad=True) * 2, "tensor([2.], grad_fn=<MulBackward0>)",
                 id="grad_fn"),
    pytest.param(minifw.tensor([0.123456789]), "tensor([0.1235])", id="four_decimals"),
    pytest.param(minifw.zeros(0, dtype=minifw.int64), "tensor([], dtype=minifw.int64)",
                 id="empty_int"),
])
def test_repr_like_pytorch(t, text):
    assert repr(t) == text


def test_repr_of_a_large_tensor_is_summarized():
    text = repr(minifw.arange(5000))
    assert "..." in text and len(text) < 200
