"""Autograd: backward with and without a gradient argument, accumulation across
calls, retain_graph and the error for a second backward through a freed
graph, no_grad / enable_grad, detach, deep graphs without recursion, shared
subexpressions, multiple outputs, user-defined Functions, in-place operations (recorded on
non-leaf tensors, refused on leaves that require grad) and version counters."""
import inspect
import re
import threading
import weakref

import numpy as np
import pytest

import minifw
from minifw.autograd import Function
from gradcheck import gradcheck

FREED = "backward through the graph a second time"


def leaf(values, dtype=minifw.float64):
    return minifw.tensor(values, dtype=dtype, requires_grad=True)


# ---- backward() and its gradient argument ---------------------------------------------

def test_scalar_backward_fills_leaf_grads():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_backward_on_a_leaf_itself():
    x = leaf(3.0)
    x.backward()
    assert x.grad.item() == 1.0


def test_non_scalar_backward_needs_a_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"implicitly created only for scalar outputs.*\(2,\)"):
        (x * 2).backward()


def test_gradient_argument_weights_each_output():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * x
    y.backward(minifw.tensor([[1.0, 0.0], [0.5, -1.0]], dtype=minifw.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 0.0], [3.0, -8.0]])


def test_gradient_argument_may_be_an_array():
    x = leaf([1.0, 2.0])
    (3 * x).backward(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 6.0])


def test_gradient_argument_of_the_wrong_shape_is_an_error():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"gradient has shape \(3,\).*shape \(2,\)"):
        (x * 2).backward(minifw.ones(3, dtype=minifw.float64))


def test_backward_of_a_tensor_without_grad_is_an_error():
    with pytest.raises(RuntimeError, match="does not require grad"):
        minifw.tensor([1.0, 2.0]).sum().backward()


def test_grad_has_the_leafs_dtype_and_shape():
    x = minifw.randn(3, 4, requires_grad=True)
    b = minifw.randn(4, requires_grad=True)
    (x * b).sum().backward()
    assert x.grad.dtype == minifw.float32 and x.grad.shape == (3, 4)
    assert b.grad.dtype == minifw.float32 and b.grad.shape == (4,)  # reduced over broadcasting


def test_grads_are_leaf_only_and_plain_tensors():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None  # as in PyTorch, no .grad on non-leaf tensors
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_backward_signature_is_pytorchs():
    assert str(inspect.signature(minifw.Tensor.backward)) == \
        "(self, gradient=None, retain_graph=None, create_graph=False, inputs=None)"


def test_create_graph_leaves_a_grad_with_a_history():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_of_several_roots_at_once():
    x = leaf([1.0, 2.0])
    a, b = x * 2, x * x
    minifw.autograd.backward([a, b], [minifw.ones(2, dtype=minifw.float64),
                                      minifw.tensor([1.0, 0.5], dtype=minifw.float64)])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0 + 2.0, 2.0 + 4.0 * 0.5])


# ---- accumulation and retain_graph -----------------------------------------------------

def test_grads_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    first = x.grad
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 7.0])
    assert x.grad is first  # accumulated in place, as PyTorch does


def test_grad_set_to_none_starts_over():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])


def test_second_backward_through_a_freed_graph_is_a_clear_error():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=FREED + r".*retain_graph=True"):
        loss.backward()
    # raised before any gradient was computed: the first result stands
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_saved_arrays_are_freed_after_backward():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn.ctx.saved_tensors


def test_saved_arrays_survive_with_retain_graph():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward(retain_graph=True)
    a, b = y.grad_fn.ctx.saved_tensors
    np.testing.assert_array_equal(a, [1.0, 2.0])


def test_nodes_that_saved_nothing_can_be_walked_again():
    # as in PyTorch: only nodes whose saved tensors were freed refuse a second backward
    x = leaf([1.0, 2.0])
    loss = (x + 1).sum()
    loss.backward()
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_a_new_graph_over_a_freed_one_fails_only_where_it_needs_saved_arrays():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        (y * 2).sum().backward()


# ---- grad mode ----------------------------------------------------------------------------

def test_no_grad_records_nothing():
    x = leaf([1.0, 2.0])
    with minifw.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_no_grad_as_a_decorator_and_restored_after_an_exception():
    @minifw.no_grad()
    def double(t):
        assert not minifw.is_grad_enabled()
        return t * 2

    x = leaf([1.0])
    assert not double(x).requires_grad
    assert minifw.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):
        with minifw.no_grad():
            1 / 0
    assert minifw.is_grad_enabled()


def test_a_recursive_no_grad_function_restores_the_mode():
    @minifw.no_grad()
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(3) == 3 and minifw.is_grad_enabled()


def test_enable_grad_inside_no_grad_and_set_grad_enabled():
    x = leaf([1.0])
    with minifw.no_grad():
        with minifw.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    minifw.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        minifw.set_grad_enabled(True)
    assert (x * 2).requires_grad


@pytest.mark.parametrize("training", [True, False])
def test_set_grad_enabled_as_a_context_manager(training):
    x = leaf([1.0])
    with minifw.set_grad_enabled(training):
        assert (x * 2).requires_grad == training
    assert minifw.is_grad_enabled()
    with minifw.no_grad():
        with minifw.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not minifw.is_grad_enabled()


def test_grad_modes_used_as_bare_decorators():
    x = leaf([1.0])

    @minifw.no_grad
    def frozen(t):
        return t * 2

    @minifw.inference_mode
    def predict(t):
        return t * 3

    @minifw.enable_grad
    def recorded(t):
        return t * 4

    assert frozen.__name__ == "frozen"
    assert not frozen(x).requires_grad and not predict(x).requires_grad
    with minifw.no_grad():
        assert recorded(x).requires_grad
    assert minifw.is_grad_enabled()
    assert isinstance(minifw.no_grad(), minifw.no_grad)
    assert isinstance(minifw.enable_grad(), minifw.enable_grad)


def test_a_decorated_generator_runs_in_the_mode_and_its_caller_does_not():
    x = leaf([1.0])
    seen = []

    @minifw.no_grad()
    def doubles(t, n):
        for _ in range(n):
            got = yield t * 2
            seen.append(minifw.is_grad_enabled())
            if got is not None:
                t = got
        return "done"

    gen = doubles(x, 3)
    first = next(gen)
    assert not first.requires_grad and minifw.is_grad_enabled()
    assert (x * 2).requires_grad  # the caller records between the generator's steps
    assert gen.send(leaf([5.0])).tolist() == [10.0]
    with pytest.raises(StopIteration) as stop:
        next(gen)
        next(gen)
    assert stop.value.value == "done" and seen == [False, False, False]

    @minifw.inference_mode()
    def predictions(t):
        try:
            yield t * 3
        except KeyError:
            yield minifw.is_grad_enabled()

    gen = predictions(x)
    assert not next(gen).requires_grad
    assert gen.throw(KeyError("k")) is False  # the thrown-in exception is handled in the mode
    gen.close()

    @minifw.enable_grad()
    def recorded(t):
        yield t * 4

    with minifw.no_grad():
        assert next(recorded(x)).requires_grad
        assert not minifw.is_grad_enabled()


def test_set_grad_enabled_as_a_decorator_leaves_the_mode_alone():
    x = leaf([1.0])

    @minifw.set_grad_enabled(False)
    def frozen(t):
        return t * 2

    assert minifw.is_grad_enabled()
    assert not frozen(x).requires_grad and minifw.is_grad_enabled()


@pytest.mark.parametrize("mode", [1, 0, None, "no"])
def test_grad_mode_switches_refuse_a_mode_that_is_not_a_bool(mode):
    with pytest.raises(TypeError, match=r"set_grad_enabled: mode must be a bool, got"):
        minifw.set_grad_enabled(mode)
    assert minifw.is_grad_enabled()
    with pytest.raises(TypeError, match=r"inference_mode: mode must be a bool .*got"):
        minifw.inference_mode(mode)
    if mode is not None:
        with pytest.raises(TypeError, match=r"no_grad: takes no argument"):
            minifw.no_grad(mode)
    with pytest.raises(TypeError, match=r"no_grad: decorates a function, got int"):
        minifw.no_grad()(3)


def test_grad_mode_is_per_thread():
    x = leaf([1.0])
    seen = []
    with minifw.no_grad():
        worker = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        worker.start()
        worker.join()
    assert seen == [True]


def test_outputs_require_grad_only_when_an_input_does():
    a, b = leaf([1.0]), minifw.tensor([2.0], dtype=minifw.float64)
    assert (a * b).requires_grad and not (b * b).requires_grad
    assert (a * b).grad_fn is not None and (b * b).grad_fn is None


# ---- detach, requires_grad_, the graph's public face -----------------------------------------

def test_detach_shares_data_and_stops_the_gradient():
    x = leaf([1.0, 2.0])
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None
    z = (x * d).sum()  # d is a constant here
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    x2 = leaf([1.0, 2.0])
    assert np.shares_memory(x2.detach().numpy(), x2.data.numpy())  # the same memory


def test_detach_in_place():
    x = leaf([1.0])
    y = x * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_requires_grad_toggles_on_leaves_only():
    x = minifw.tensor([1.0])
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad of leaf"):
        y.requires_grad_(False)


def test_grad_fn_names_and_edges():
    x = leaf([1.0, 2.0])
    y = (x * 2).sum()
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert type(y.grad_fn).__name__ == y.grad_fn.name() == "SumBackward0"  # as PyTorch names it
    ((mul, index),) = y.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and index == 0
    (acc, index), (none, none_index) = mul.next_functions  # the leaf's node, then the constant
    assert isinstance(acc, minifw.autograd.AccumulateGrad) and acc.variable is x and index == 0
    assert acc.name() == "AccumulateGrad" and acc.next_functions == ()
    assert none is None and none_index == 0
    assert (x * 3).grad_fn.next_functions[0][0] is acc  # one node per leaf, as PyTorch's
    assert x.is_leaf and not y.is_leaf


def test_next_functions_name_each_output_of_a_node_they_take():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    z = b * a
    (first, i), (second, j) = z.grad_fn.next_functions
    assert first is second is a.grad_fn and (i, j) == (1, 0)


def test_a_leafs_accumulate_grad_node_does_not_keep_it_alive():
    import gc
    x = leaf([1.0])
    acc = (x * 2).grad_fn.next_functions[0][0]
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None and acc.variable is None


# ---- graph shapes --------------------------------------------------------------------------

def test_deep_chain_has_no_recursion_limit():
    depth = 10_000
    x = leaf(1.0)
    y = x
    for _ in range(depth):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** depth, rtol=1e-12)
    del y  # freeing a 10,000-node chain must not overflow the C stack either


def test_deep_recurrent_unroll():
    # an RNN-like unroll: h_t = tanh(h_{t-1} @ W + x_t), 2,000 steps, gradient for W and h0
    steps = 2000
    rng = np.random.default_rng(0)
    w = minifw.tensor(rng.standard_normal((3, 3)) * 0.3, dtype=minifw.float64, requires_grad=True)
    h = minifw.zeros(1, 3, dtype=minifw.float64)
    xs = minifw.tensor(rng.standard_normal((steps, 1, 3)), dtype=minifw.float64)
    for t in range(steps):
        h = (h @ w + xs[t]).tanh()
    h.sum().backward()
    assert np.isfinite(w.grad.numpy()).all() and np.abs(w.grad.numpy()).sum() > 0


def test_shared_subexpressions_collect_every_contribution():
    x = leaf([0.5, -1.5])
    a = x * x            # used three times below
    z = a + a * a + a.exp()
    z.sum().backward()
    xv = np.array([0.5, -1.5])
    expected = 2 * xv + 4 * xv ** 3 + np.exp(xv ** 2) * 2 * xv
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)


def test_diamond_runs_each_node_once_after_all_consumers():
    calls = []

    class Count(Function):
        _on_arrays = True  # a minifw-internal style Function: arrays in and out
        @staticmethod
        def forward(ctx, a):
            return a.copy()

        @staticmethod
        def backward(ctx, g):
            calls.append(g.copy())
            return g

    x = leaf([1.0, 2.0])
    c = Count.apply(x)
    ((c * 2) + (c * 3) + c).sum().backward()
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0], [6.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_same_leaf_in_both_operands():
    x = leaf([3.0])
    (x * x * x).backward(minifw.ones(1, dtype=minifw.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [27.0])


def test_unused_outputs_of_a_node_get_zero_gradients():
    x = leaf([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = x.max(dim=1)
    assert indices.dtype == minifw.int64 and not indices.requires_grad
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])


def test_integer_outputs_pass_none_to_backward():
    seen = []

    class ValuesAndIndices(Function):
        _on_arrays = True  # a minifw-internal style Function: arrays in and out
        @staticmethod
        def forward(ctx, a):
            return a * 2, np.arange(a.size)

        @staticmethod
        def backward(ctx, g, g_indices):
            seen.append(g_indices)
            return 2 * g

    x = leaf([1.0, 2.0])
    values, indices = ValuesAndIndices.apply(x)
    values.sum().backward()
    assert seen == [None] and indices.grad_fn is None


def test_integer_results_never_require_grad():
    x = leaf([1.0, 3.0, 2.0])
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad and (x > 1).dtype == minifw.bool_


# ---- user-defined Functions -------------------------------------------------------------

class Cube(Function):
    _on_arrays = True  # a minifw-internal style Function: arrays in and out
    @staticmethod
    def forward(ctx, x, *, scale=1.0):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * ctx.scale * x ** 2 * g


class MulAdd(Function):
    """a * b + c, reporting which inputs need a gradient."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out

    last_needs = None

    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(a, b)
        ctx.seen_needs = MulAdd.last_needs = ctx.needs_input_grad
        return a * b + c

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a, g


def test_a_user_defined_function_differentiates():
    x = leaf([1.0, -2.0, 0.5])
    gradcheck(lambda t: Cube.apply(t, scale=2.0), [x])


def test_needs_input_grad_tells_which_inputs_matter():
    a, b = leaf([1.0]), minifw.tensor([2.0], dtype=minifw.float64)
    out = MulAdd.apply(a, b, 3.0)
    assert out.grad_fn.ctx.seen_needs == (True, False, False)
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0])
    assert b.grad is None


def test_under_no_grad_no_input_needs_a_gradient():
    a = leaf([1.0])
    with minifw.no_grad():
        out = MulAdd.apply(a, a, 3.0)
    assert MulAdd.last_needs == (False, False, False)  # so forward may skip saving
    assert out.grad_fn is None and not out.requires_grad


def test_a_function_returning_too_few_gradients_is_reported():
    class Broken(Function):
        _on_arrays = True  # a minifw-internal style Function: arrays in and out
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="BrokenBackward returned 1 gradients for 2 inputs"):
        Broken.apply(a, b).sum().backward()


# ---- in-place operations: PyTorch's rules, version counters ---------------------------

LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


@pytest.mark.parametrize("update", [
    pytest.param(lambda x: x.add_(1.0), id="add_"),
    pytest.param(lambda x: x.mul_(2.0), id="mul_"),
    pytest.param(lambda x: x.zero_(), id="zero_"),
    pytest.param(lambda x: x.copy_(minifw.ones(2, dtype=minifw.float64)), id="copy_"),
    pytest.param(lambda x: x.exp_(), id="exp_"),
    pytest.param(lambda x: x.__setitem__(0, 5.0), id="setitem"),
])
def test_in_place_on_a_leaf_that_requires_grad_is_refused_outside_no_grad(update):
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=LEAF_IN_PLACE):
        update(x)
    assert x._version == 0 and x.tolist() == [1.0, 2.0]
    with minifw.no_grad():
        update(x)  # the optimizer's way: allowed, counted, not recorded
    assert x._version == 1 and x.is_leaf and x.grad_fn is None


def test_in_place_on_a_view_of_such_a_leaf_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being "
                                           "used in an in-place operation"):
        x[0].add_(1.0)


def test_in_place_arithmetic_on_a_non_leaf_is_recorded():
    x = leaf([1.0, -2.0, 3.0])
    y = x * 3
    y.add_(1).mul_(x).sub_(x, alpha=2).div_(2)  # ((3x + 1) * x - 2x) / 2 = 1.5x^2 - 0.5x
    assert y.grad_fn.name() == "DivBackward0" and y._version == 4
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([1.0, -2.0, 3.0]) - 0.5)


def test_an_operand_that_requires_grad_makes_a_plain_tensor_part_of_the_graph():
    acc = minifw.zeros(2, dtype=minifw.float64)
    x = leaf([1.0, 2.0])
    acc += x
    acc *= x
    assert acc.requires_grad and not acc.is_leaf and acc.grad_fn.name() == "MulBackward0"
    acc.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # d(x * x)/dx


IN_PLACE = {  # name: (in place on a fresh non-leaf, the out-of-place reference)
    "add_": (lambda t, w: t.add_(w, alpha=0.5), lambda t, w: t + 0.5 * w),
    "sub_": (lambda t, w: t.sub_(w), lambda t, w: t - w),
    "mul_": (lambda t, w: t.mul_(w), lambda t, w: t * w),
    "div_": (lambda t, w: t.div_(w.exp()), lambda t, w: t / w.exp()),
    "pow_": (lambda t, w: t.abs_().pow_(w), lambda t, w: t.abs() ** w),
    "clamp_": (lambda t, w: t.clamp_(-0.5, 0.8).mul_(w), lambda t, w: t.clamp(-0.5, 0.8) * w),
    "clamp_min_max_": (lambda t, w: t.clamp_min_(-0.5).clamp_max_(0.8) * w,
                       lambda t, w: t.clamp(-0.5, 0.8) * w),
    "exp_log_": (lambda t, w: t.exp_().add_(w.abs()).log_(), lambda t, w: (t.exp() + w.abs()).log()),
    "sqrt_rsqrt_": (lambda t, w: t.abs_().add_(1).sqrt_().mul_(w) + (w * w).add_(1).rsqrt_(),
                    lambda t, w: (t.abs() + 1).sqrt() * w + (w * w + 1).rsqrt()),
    "neg_": (lambda t, w: t.neg_().mul_(w), lambda t, w: -t * w),
    "relu_sigmoid_tanh_": (lambda t, w: t.relu_().add_(w).sigmoid_().tanh_(),
                           lambda t, w: (t.relu() + w).sigmoid().tanh()),
    "sin_cos_": (lambda t, w: t.sin_().mul_(w).cos_(), lambda t, w: (t.sin() * w).cos()),
    "masked_fill_": (lambda t, w: t.masked_fill_(w > 0, 2.0).mul_(w),
                     lambda t, w: t.masked_fill(w > 0, 2.0) * w),
    "index_fill_": (lambda t, w: t.index_fill_(1, minifw.tensor([0, 2]), -1.0).mul_(w),
                    lambda t, w: t.index_fill(1, minifw.tensor([0, 2]), -1.0) * w),
    "scatter_": (lambda t, w: t.scatter_(1, minifw.tensor([[2, 0], [1, 2]]), w[:, 1:]),
                 lambda t, w: t.scatter(1, minifw.tensor([[2, 0], [1, 2]]), w[:, 1:])),
    "scatter_add_": (lambda t, w: t.scatter_add_(0, minifw.tensor([[1, 1, 0]]), w[:1]),
                     lambda t, w: t.scatter_add(0, minifw.tensor([[1, 1, 0]]), w[:1])),
    "fill_tensor_": (lambda t, w: t.fill_(w.sum()).mul_(w), lambda t, w: w.sum().expand(2, 3) * w),
    "copy_": (lambda t, w: t.copy_(w[0]).mul_(w), lambda t, w: w[0].expand(2, 3) * w),
    "zero_": (lambda t, w: t.zero_().add_(w), lambda t, w: t * 0 + w),
    "setitem": (lambda t, w: _assign(t, (slice(None), 1), w[:, 0] * 2), lambda t, w: minifw.stack(
        [t[:, 0], w[:, 0] * 2, t[:, 2]], 1)),
}


def _assign(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_operations_give_the_out_of_place_gradients(name):
    in_place, reference = IN_PLACE[name]
    rng = np.random.default_rng(1)
    x, w = (leaf(rng.uniform(-1.0, 1.0, (2, 3))) for _ in range(2))
    gradcheck(lambda x, w: in_place(x * 1, w), [x, w])  # x * 1: a non-leaf to change
    got = in_place(x * 1, w)
    want = reference(x * 1, w)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_a_tensor_saved_for_backward_and_changed_in_place_is_reported():
    x = leaf([1.0, 2.0, 3.0])
    y = x.exp()  # Exp saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[minifw.DoubleTensor \[3\]\], which is "
                       r"output 0 of ExpBackward0, is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_a_saved_leaf_changed_under_no_grad_is_reported():
    w = leaf([[1.0, 2.0], [3.0, 4.0]])
    loss = (w * w).sum()
    with minifw.no_grad():
        w.sub_(0.1)  # an optimizer step before backward
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[minifw.DoubleTensor \[2, 2\]\], is at "
                                                      r"version 1; expected version 0 instead"):
        loss.backward()


def test_changes_through_detach_are_seen_and_through_data_are_not():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.detach().zero_()  # detach() shares the version counter, as in PyTorch
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    y = x.exp()
    y.data.mul_(0)  # .data does not: the change is not tracked
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_changes_through_a_view_are_seen_by_the_base():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x.exp()
    with minifw.no_grad():
        y[0].mul_(2)  # a view shares its base's counter
    assert y._version == 1 and y[0]._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_an_operation_that_saved_nothing_is_not_affected():
    x = leaf([1.0, 2.0])
    y = x * 2  # saves nothing of y; the constant 2 for x's gradient
    y.add_(1)
    z = x + y
    z.mul_(3)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [9.0, 9.0])


def test_an_in_place_operation_keeps_what_its_own_node_saved():
    x = leaf([1.0, 2.0, 3.0])
    a = x * 1
    a.mul_(a)  # Mul saved a, which the result then overwrites: it keeps a copy
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_views_see_the_in_place_changes_of_their_base():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    first = y[:1].detach()
    y.add_(10)
    assert first.tolist() == [11.0]


def test_a_view_written_by_an_in_place_operation_on_its_base_is_refused():
    x = leaf([1.0, 2.0, 3.0])
    b = x * 1
    view = b[:2]
    b.mul_(2)  # recorded on b: view's values changed, its history (b's old one) did not
    with pytest.raises(RuntimeError, match="shares memory with another .* that an in-place "
                                           "operation recorded by autograd has changed"):
        view * 3
    (b[:2] * 3).sum().backward()  # a view taken afterwards is fine
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 0.0])


def test_views_of_other_elements_stay_usable_after_an_assignment():
    # the recurrent-loop pattern: out[t] = f(out[t - 1]) while out[t - 1] is used later
    x = leaf([1.0, 2.0])
    out = minifw.zeros(3, 2, dtype=minifw.float64)
    out[0] = x
    total = 0
    for t in range(1, 3):
        previous = out[t - 1]
        out[t] = previous * 2
        total = total + previous.sum()
    (total + out.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1 + 2 + 1 + 2 + 4, 10.0])


def test_a_recorded_in_place_operation_on_a_view_rebases_the_view():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    b = x * 1
    row = b[1]
    row.mul_(x[0])
    row.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0, 4.0], [1.0, 2.0]])
    with pytest.raises(RuntimeError, match="shares memory with another"):
        b.sum()  # its history knows nothing of the change to row: refused, not wrong


def test_in_place_changes_count_on_the_version_counter():
    t = minifw.zeros(3)
    assert t._version == 0
    t.add_(1)
    t[0] = 2.0
    t.fill_(3).clamp_(0, 1)
    assert t._version == 4
    minifw.autograd.increment_version(t)  # a change made to the array directly
    assert t._version == 5 and t.detach()._version == 5 and t.data._version == 0

# ---- a Function's gradient becomes the leaf's .grad when nothing else holds it -------------
def _doubling(keep):
    """A Function y = 2x whose backward returns a new array and records it: weakly (nothing
    else references the array) or, with keep, by a reference of its own."""

    class Doubling(Function):
        _on_arrays = True  # a minifw-internal style Function: arrays in and out
        made = []

        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, dy):
            g = 2 * dy
            Doubling.made.append(g if keep else weakref.ref(g))
            return g

    return Doubling


_Fresh, _Kept = _doubling(keep=False), _doubling(keep=True)


class _PassThrough(Function):
    _on_arrays = True  # a minifw-internal style Function: arrays in and out
    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, dy):
        return dy  # the gradient it was given, as an identity does


def test_a_new_unshared_gradient_becomes_the_leafs_grad():
    x = minifw.ones(3, requires_grad=True)
    _Fresh.made.clear()
    _Fresh.apply(x).sum().backward()
    assert x.grad._data is _Fresh.made[0]()  # taken over, not copied
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_a_gradient_held_elsewhere_is_copied():
    x = minifw.ones(3, requires_grad=True)
    _Kept.made.clear()
    _Kept.apply(x).sum().backward()
    assert x.grad._data is not _Kept.made[0]
    _Kept.made[0][...] = 7  # the Function's array changes; the leaf's gradient does not
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


class _SameForBoth(Function):
    """y = a + b; backward returns one new array for both inputs."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, dy):
        g = dy * 1
        return g, g


def test_the_callers_gradient_passed_through_is_copied():
    x = minifw.ones(3, requires_grad=True)
    given = minifw.tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    _PassThrough.apply(x).backward(given)
    x.grad._data += 1  # SGD-style in-place use of the gradient
    np.testing.assert_array_equal(given.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(x.grad.numpy(), [2, 3, 4])


def test_a_new_gradient_passed_through_becomes_the_leafs_grad():
    # _Fresh makes a new array, _PassThrough returns it as it was given: taken over, not copied
    x = minifw.ones(3, requires_grad=True)
    _Fresh.made.clear()
    _Fresh.apply(_PassThrough.apply(x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])
    assert x.grad._data is _Fresh.made[0]()


def test_a_passed_through_gradient_held_elsewhere_is_copied():
    # the Function keeps its result; a hook keeps the gradient on the way
    x = minifw.ones(3, requires_grad=True)
    _Kept.made.clear()
    _Kept.apply(_PassThrough.apply(x)).sum().backward()
    _Kept.made[0][...] = 7
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])
    seen = []
    x = minifw.ones(3, requires_grad=True)
    y = _PassThrough.apply(x)
    y.register_hook(lambda g: seen.append(g))
    (y * 3).sum().backward()
    seen[0]._data[...] = 7
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3])


def test_a_gradient_passed_through_to_two_leaves_is_not_shared():
    # one incoming gradient reaches two identity nodes (y + y): neither leaf may take it
    a = minifw.ones(3, requires_grad=True)
    b = minifw.ones(3, requires_grad=True)
    (_PassThrough.apply(a) + _PassThrough.apply(b)).sum().backward()
    a.grad._data += 10
    np.testing.assert_array_equal(b.grad.numpy(), [1, 1, 1])
    c = minifw.ones(3, requires_grad=True)
    y = _PassThrough.apply(c)
    (y + y).sum().backward()  # both gradients into one leaf: summed, not aliased
    np.testing.assert_array_equal(c.grad.numpy(), [2, 2, 2])


def test_clone_then_in_place_relu_passes_its_gradient_on():
    # the bench's in-place layer: a leaf, its clone, ReLU in place on the clone
    x = minifw.tensor(np.array([-1.0, 2.0, 3.0], np.float32), requires_grad=True)
    out = minifw.nn.ReLU(inplace=True)(x.clone())
    given = minifw.tensor(np.array([5.0, 6.0, 7.0], np.float32))
    out.backward(given)
    np.testing.assert_array_equal(x.grad.numpy(), [0, 6, 7])
    x.grad._data += 1
    np.testing.assert_array_equal(given.numpy(), [5, 6, 7])
    out = minifw.nn.ReLU(inplace=True)(x.clone())
    out.backward(given)  # accumulates into the first gradient
    np.testing.assert_array_equal(x.grad.numpy(), [1, 13, 15])
    np.testing.assert_array_equal(given.numpy(), [5, 6, 7])


class _Reshaped(Function):
    """y = 2x; backward makes a new flat array and returns the whole of it in x's shape,
    recording the flat array weakly or (with keep) by a reference of its own."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out
    made, keep = [], False

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, dy):
        flat = np.empty(dy.size, dy.dtype)
        flat[:] = 2 * dy.reshape(-1)
        _Reshaped.made.append(flat if _Reshaped.keep else weakref.ref(flat))
        return flat.reshape(dy.shape)


def test_a_new_gradient_returned_as_a_reshaped_view_becomes_the_leafs_grad():
    x = minifw.ones((2, 3), requires_grad=True)
    _Reshaped.made.clear()
    _Reshaped.keep = False
    _Reshaped.apply(x).sum().backward()
    assert x.grad._data.base is _Reshaped.made[0]()  # taken over, not copied
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2))


def test_a_view_whose_memory_is_held_elsewhere_is_copied():
    x = minifw.ones((2, 3), requires_grad=True)
    _Reshaped.made.clear()
    _Reshaped.keep = True
    try:
        _Reshaped.apply(x).sum().backward()
    finally:
        _Reshaped.keep = False
    assert not np.shares_memory(x.grad._data, _Reshaped.made[0])
    _Reshaped.made[0][...] = 7
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2))


class _HalvesOfOne(Function):
    """y = a + b; backward returns the two halves of one new array."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, dy):
        both = np.concatenate([dy, dy])
        return both[:dy.size], both[dy.size:]


def test_part_of_an_array_is_copied():
    a = minifw.ones(3, requires_grad=True)
    b = minifw.ones(3, requires_grad=True)
    _HalvesOfOne.apply(a, b).sum().backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)
    a.grad._data += 10
    np.testing.assert_array_equal(b.grad.numpy(), [1, 1, 1])


def test_one_array_returned_for_two_inputs_is_not_taken_over():
    a = minifw.ones(3, requires_grad=True)
    b = minifw.ones(3, requires_grad=True)
    _SameForBoth.apply(a, b).sum().backward()
    a.grad._data += 10
    np.testing.assert_array_equal(b.grad.numpy(), [1, 1, 1])
    x = minifw.ones(3, requires_grad=True)
    _SameForBoth.apply(x, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_retained_graph_gradients_are_copied_and_accumulate():
    x = minifw.ones(3, requires_grad=True)
    _Fresh.made.clear()
    y = _Fresh.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4, 4, 4])


def test_augmented_assignment_into_an_index_is_recorded():
    # y[i] += v is Python's tmp = y[i]; tmp.add_(v); y[i] = tmp: the view is changed in place,
    # then assigned back over the same elements, as PyTorch computes it
    xs = np.arange(12, dtype=np.float64).reshape(4, 3) / 7
    vs = np.array([0.5, -1.0, 2.0])
    x, v = minifw.tensor(xs, requires_grad=True), minifw.tensor(vs, requires_grad=True)
    y = x * 1
    y[1] += v
    y[:, 0] *= 3
    (y ** 2).sum().backward()
    want = xs.copy()
    want[1] += vs
    scale = np.ones((4, 3))
    scale[:, 0] = 3
    want *= scale
    np.testing.assert_allclose(y.detach().numpy(), want)
    np.testing.assert_allclose(x.grad.numpy(), 2 * want * scale)
    np.testing.assert_allclose(v.grad.numpy(), (2 * want * scale)[1])


def test_a_leaf_whose_accumulate_grad_node_was_read_pickles_and_copies():
    import copy
    import pickle
    x = leaf([1.0, 2.0])
    acc = (x * 2).grad_fn.next_functions[0][0]
    y = pickle.loads(pickle.dumps(x))
    z = copy.deepcopy(x)
    assert y.tolist() == z.tolist() == [1.0, 2.0]
    assert (z * 2).grad_fn.next_functions[0][0].variable is z and acc.variable is x


def test_accumulate_grad_nodes_are_forgotten_with_their_leaves():
    import gc
    from minifw.autograd import _accumulators
    before = len(_accumulators)
    for _ in range(50):
        x = leaf([1.0])
        (x * 2).grad_fn.next_functions[0][0]
    del x
    gc.collect()
    assert len(_accumulators) == before
