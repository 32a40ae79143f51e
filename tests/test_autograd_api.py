"""PyTorch's autograd API beyond Tensor.backward: Functions defined outside minifw (forward
and backward on Tensors, ctx.save_for_backward / saved_tensors / needs_input_grad /
mark_dirty / mark_non_differentiable / set_materialize_grads), minifw.autograd.grad,
backward(inputs=...), Tensor.register_hook, retain_grad and retains_grad. Values are
compared with PyTorch where it is installed, with hand-computed ones otherwise."""
import gc
import weakref

import numpy as np
import pytest

import minifw
from minifw import autograd
from minifw.autograd import Function
from gradcheck import gradcheck
from targets import cuda_available, emulate_cuda

FREED = "backward through the graph a second time"
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
UNUSED = (r"One of the differentiated Tensors appears to not have been used in the graph\. "
          r"Set allow_unused=True if this is the desired behavior\.")


@pytest.fixture(params=["cpu", "cudasim", "cuda"])
def dev(request, monkeypatch):
    """Where the device tests run: the CPU, the CUDA kernels' emulator, and "cuda" (CuPy's
    stand-in and the emulator where there is no GPU; see targets.emulate_cuda)."""
    if request.param == "cuda" and not cuda_available():
        emulate_cuda(monkeypatch)
    return request.param


def leaf(values, dev="cpu", dtype=minifw.float64):
    return minifw.tensor(values, dtype=dtype, device=dev, requires_grad=True)


def values(t):
    return None if t is None else np.asarray(t.detach().cpu().tolist())


def _counted(calls):
    """A user Function passing its input through that appends to `calls` when its backward runs."""
    class Counted(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g

    return Counted


def torch_values(t):
    return None if t is None else t.detach().numpy()


# ---- user-defined Functions: what PyTorch's documentation and tutorials write -------------

class MyReLU(Function):
    """PyTorch's tutorial ReLU: saves its input, backward zeroes the gradient where it was < 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[x < 0] = 0
        return grad_input


class MyExp(Function):
    """Saves its output (PyTorch's docs' example)."""

    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


class GradReverse(Function):
    """Gradient reversal (domain adaptation): identity forward, -alpha * g backward; alpha is a
    plain argument kept on ctx, so its gradient is None."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class SignSTE(Function):
    """Straight-through estimator of sign(): the gradient passes where |x| <= 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.passed = "forward ran"
        return x.sign()

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        assert ctx.passed == "forward ran"
        return grad_output * (x.abs() <= 1).to(grad_output.dtype)


class MulAdd(Function):
    """a * b + c with c a Tensor or a number; backward only computes what is needed."""

    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(a, b)
        return a * b + c

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        g_c = g if ctx.needs_input_grad[2] else None
        return ga, gb, g_c


def _run_custom(module, dev, x_values):
    """The tutorial Functions in one graph; returns the leaves' gradients."""
    x = module.tensor(x_values, dtype=module.float64, device=dev, requires_grad=True)
    w = module.tensor([0.5, -2.0, 1.5, 0.25], dtype=module.float64, device=dev, requires_grad=True)
    h = module_fns(module)
    out = (h["relu"](x * w) + h["exp"](x) * 0.5 + h["rev"](x, 0.3) * w + h["ste"](x * 0.5)) * w
    out = h["muladd"](out, x, 1.0)
    out.sum().backward()
    return x.grad, w.grad, out


def module_fns(module):
    if module is minifw:
        return {"relu": MyReLU.apply, "exp": MyExp.apply, "rev": GradReverse.apply,
                "ste": SignSTE.apply, "muladd": MulAdd.apply}
    import torch

    def as_torch(cls):
        return type(cls.__name__, (torch.autograd.Function,),
                    {"forward": staticmethod(cls.forward), "backward": staticmethod(cls.backward)})

    return {name: as_torch(cls).apply for name, cls in
            [("relu", MyReLU), ("exp", MyExp), ("rev", GradReverse), ("ste", SignSTE),
             ("muladd", MulAdd)]}


def test_user_functions_match_pytorch(dev):
    torch = pytest.importorskip("torch")
    xs = [-1.5, 0.3, 0.8, 2.0]
    gx, gw, out = _run_custom(minifw, dev, xs)
    tx, tw, tout = _run_custom(torch, "cpu", xs)
    np.testing.assert_allclose(values(out), torch_values(tout), rtol=1e-14)
    np.testing.assert_allclose(values(gx), torch_values(tx), rtol=1e-14)
    np.testing.assert_allclose(values(gw), torch_values(tw), rtol=1e-14)
    assert gx.device.type == minifw.device(dev).type


def test_custom_relu_by_hand(dev):
    x = leaf([-1.0, 2.0, 3.0], dev)
    y = MyReLU.apply(x)
    assert y.grad_fn.name() == "MyReLUBackward" and y.requires_grad and y.device == x.device
    assert values(y).tolist() == [0.0, 2.0, 3.0]
    (y * y).sum().backward()
    assert values(x.grad).tolist() == [0.0, 4.0, 6.0]


def test_gradient_reversal_and_straight_through_by_hand():
    x = leaf([-2.0, 0.5, 1.0])
    GradReverse.apply(x, 0.5).sum().backward()
    assert values(x.grad).tolist() == [-0.5, -0.5, -0.5]
    x.grad = None
    y = SignSTE.apply(x)
    assert values(y).tolist() == [-1.0, 1.0, 1.0]
    (y * minifw.tensor([1.0, 2.0, 3.0], dtype=minifw.float64)).sum().backward()
    assert values(x.grad).tolist() == [0.0, 2.0, 3.0]


def test_gradcheck_of_user_functions():
    x = leaf([-1.2, 0.4, 0.9, 1.7])
    gradcheck(MyExp.apply, [x])
    gradcheck(lambda t: MyReLU.apply(t) * t, [leaf([-1.2, 0.4, 0.9, 1.7])])
    a, b = leaf([[1.0, -2.0], [0.5, 3.0]]), leaf([[0.3, 0.7], [-1.1, 2.0]])
    c = leaf([[0.1, 0.2], [0.3, 0.4]])
    gradcheck(MulAdd.apply, [a, b, c])


def test_forward_gets_detached_tensors_under_no_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, n, y):
            seen.update(grad_enabled=minifw.is_grad_enabled(), types=(type(x), type(n), type(y)),
                        x_requires_grad=x.requires_grad, x_grad_fn=x.grad_fn)
            z = x * y * n  # not recorded: the output's only grad_fn is ProbeBackward
            seen["z_grad_fn"] = z.grad_fn
            return z

        @staticmethod
        def backward(ctx, g):
            seen["backward_grad_enabled"] = minifw.is_grad_enabled()
            seen["g_type"] = type(g)
            return g * 3, None, None

    x = leaf([1.0, 2.0])
    h = x * 1  # a non-leaf input: forward still gets a leaf view of it
    out = Probe.apply(h, 3, minifw.tensor([1.0, 1.0], dtype=minifw.float64))
    assert seen == {"grad_enabled": False, "types": (minifw.Tensor, int, minifw.Tensor),
                    "x_requires_grad": False, "x_grad_fn": None, "z_grad_fn": None}
    assert out.grad_fn.name() == "ProbeBackward"
    assert out.grad_fn.next_functions == ((h.grad_fn, 0), (None, 0), (None, 0))
    out.sum().backward()
    assert seen["backward_grad_enabled"] is False and seen["g_type"] is minifw.Tensor
    assert values(x.grad).tolist() == [3.0, 3.0]


def test_needs_input_grad_and_unneeded_gradients():
    a, b = leaf([2.0]), minifw.tensor([5.0], dtype=minifw.float64)
    needs = []

    class Record(MulAdd):
        @staticmethod
        def backward(ctx, g):
            needs.append(ctx.needs_input_grad)
            return g * 5, g * 2, None  # a gradient for b, which needs none: ignored, as PyTorch

    Record.apply(a, b, 1.0).sum().backward()
    assert needs == [(True, False, False)]
    assert values(a.grad).tolist() == [5.0] and b.grad is None
    with minifw.no_grad():
        out = Record.apply(a, a, 1.0)
    assert out.grad_fn is None and not out.requires_grad


def test_non_tensor_and_integer_outputs():
    got = []

    class Several(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, 5, a.argmax()

        @staticmethod
        def backward(ctx, g, g_number, g_index):
            got.append((values(g).tolist(), g_number, g_index.dtype, values(g_index).tolist()))
            return g * 2

    x = leaf([1.0, 3.0])
    doubled, five, index = Several.apply(x)
    assert five == 5 and index.item() == 1 and not index.requires_grad and doubled.requires_grad
    doubled.sum().backward()
    # as PyTorch: None for the number, zeros for the integer output
    assert got == [([1.0, 1.0], None, minifw.int64, 0)]
    assert values(x.grad).tolist() == [2.0, 2.0]


def test_mark_non_differentiable_and_materialized_zeros():
    got = []

    class SortWithIndices(Function):
        @staticmethod
        def forward(ctx, a):
            order = a.argsort()
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return a[order], order, a * 2

        @staticmethod
        def backward(ctx, g_sorted, g_order, g_doubled):
            got.append((values(g_order).tolist(), values(g_doubled).tolist()))
            order, = ctx.saved_tensors
            g = minifw.zeros_like(g_sorted)
            g[order] = g_sorted
            return g + 2 * g_doubled

    x = leaf([3.0, 1.0, 2.0])
    s, order, doubled = SortWithIndices.apply(x)
    assert not order.requires_grad and order.grad_fn is None and s.requires_grad and doubled.requires_grad
    (s * minifw.tensor([1.0, 10.0, 100.0], dtype=minifw.float64)).sum().backward()
    assert got == [([0, 0, 0], [0.0, 0.0, 0.0])]
    assert values(x.grad).tolist() == [100.0, 1.0, 10.0]


def test_set_materialize_grads_false_passes_none():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None))
            return (0 if g1 is None else g1) + (0 if g2 is None else 2 * g2)

    x = leaf([1.0])
    first, second = Two.apply(x)
    first.sum().backward()
    assert got == [(False, True)] and values(x.grad).tolist() == [1.0]


def test_setup_context_style():
    class Cube(Function):
        @staticmethod
        def forward(x, scale):
            return x ** 3 * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, scale = inputs
            ctx.save_for_backward(x)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * ctx.scale * x ** 2 * g, None

    x = leaf([1.0, -2.0])
    Cube.apply(x, 2.0).sum().backward()
    assert values(x.grad).tolist() == [6.0, 24.0]
    gradcheck(lambda t: Cube.apply(t, 0.5), [leaf([0.3, -1.1])])


def test_an_input_returned_as_it_is_becomes_a_view():
    class Same(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf([1.0, 2.0])
    y = Same.apply(x)
    assert y is not x and y._base is x and y.grad_fn.name() == "SameBackward"
    assert np.shares_memory(y._data, x._data)
    y.sum().backward()
    assert values(x.grad).tolist() == [2.0, 2.0]


def test_mark_dirty_in_place_function():
    class MulTwoInPlace(Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = leaf([1.0, 3.0])
    y = x * 1
    version = y._version
    z = MulTwoInPlace.apply(y)
    assert z is y and y._version == version + 2  # the in-place op and mark_dirty, as PyTorch
    assert y.grad_fn.name() == "MulTwoInPlaceBackward" and values(y).tolist() == [2.0, 6.0]
    (y * y).sum().backward()
    assert values(x.grad).tolist() == [8.0, 24.0]  # d(4x^2)/dx
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an "
                                           "in-place operation"):
        MulTwoInPlace.apply(leaf([1.0]))
    with minifw.no_grad():
        w = leaf([1.0])
        assert MulTwoInPlace.apply(w) is w and values(w).tolist() == [2.0]


def test_mark_dirty_with_pytorch():
    torch = pytest.importorskip("torch")

    def run(module, function):
        x = module.tensor([1.0, -3.0, 0.5], dtype=module.float64, requires_grad=True)
        y = x * 3
        base = y._version
        z = function.apply(y)
        (z * x).sum().backward()
        return y._version - base, x.grad

    def forward(ctx, a):
        ctx.save_for_backward(a.clone())
        a.mul_(a)
        ctx.mark_dirty(a)
        return a

    def backward(ctx, g):
        old, = ctx.saved_tensors
        return 2 * old * g

    methods = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    ours = type("Square", (Function,), methods)
    theirs = type("Square", (torch.autograd.Function,), methods)
    (dv, g), (tdv, tg) = run(minifw, ours), run(torch, theirs)
    assert dv == tdv
    np.testing.assert_allclose(values(g), torch_values(tg), rtol=1e-14)


def test_a_dirty_input_not_returned_is_an_error():
    class Forgets(Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned"):
        Forgets.apply(leaf([1.0]) * 1)


def test_a_returned_gradient_held_by_the_user_is_not_taken_over():
    kept = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            grad = g * 2
            kept.append(grad)
            return grad

    x = leaf([1.0, 1.0])
    Keep.apply(x).sum().backward()
    kept[0].fill_(7)  # the user's tensor changes; the leaf's gradient does not
    assert values(x.grad).tolist() == [2.0, 2.0]


# ---- what a user's backward returns: PyTorch's checks --------------------------------------

def _with_backward(backward):
    """Custom.apply(a, n) = a * 2, with the given backward."""
    def forward(ctx, a, n=None):
        return a * 2
    return type("Custom", (Function,), {"forward": staticmethod(forward),
                                        "backward": staticmethod(backward)})


def test_too_few_gradients():
    f = _with_backward(lambda ctx, g: g)
    with pytest.raises(RuntimeError, match=r"^function CustomBackward returned an incorrect number of "
                                           r"gradients \(expected 2, got 1\)$"):
        f.apply(leaf([1.0, 2.0]), 3).sum().backward()


def test_too_many_gradients():
    f = _with_backward(lambda ctx, g: (g, None, g))
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 3\)"):
        f.apply(leaf([1.0, 2.0]), 3).sum().backward()


def test_extra_none_gradients_are_dropped():
    f = _with_backward(lambda ctx, g: (g * 2, None, None, None))
    x = leaf([1.0, 2.0])
    f.apply(x, 3).sum().backward()
    assert values(x.grad).tolist() == [2.0, 2.0]


def test_a_gradient_for_a_non_tensor_input():
    f = _with_backward(lambda ctx, g: (g, g))
    with pytest.raises(RuntimeError, match="function CustomBackward returned a gradient different than "
                                           "None at position 2, but the corresponding forward input was "
                                           "not a Variable"):
        f.apply(leaf([1.0, 2.0]), 3).sum().backward()


def test_a_gradient_that_is_not_a_tensor():
    f = _with_backward(lambda ctx, g: (3, None))
    with pytest.raises(RuntimeError, match=r"CustomBackward returned an invalid gradient at index 0: "
                                           r"expected Variable or None \(got int\)"):
        f.apply(leaf([1.0, 2.0]), 3).sum().backward()


def test_a_gradient_of_the_wrong_shape_names_the_function_and_the_input():
    f = _with_backward(lambda ctx, g: (minifw.ones(3, dtype=minifw.float64), None))
    with pytest.raises(RuntimeError, match=r"^Function CustomBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible with "
                                           r"\[2\]$"):
        f.apply(leaf([1.0, 2.0]), 3).sum().backward()


def test_a_broadcast_gradient_is_summed_and_another_dtype_cast():
    f = _with_backward(lambda ctx, g: (minifw.ones(3, 2, dtype=minifw.float32), None))
    x = leaf([1.0, 2.0])
    f.apply(x, 3).sum().backward()
    assert x.grad.dtype == minifw.float64 and values(x.grad).tolist() == [3.0, 3.0]


def test_save_for_backward_takes_tensors_only():
    class SavesANumber(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, None, 3)
            return a * 1

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 2 is of "
                                        "type int"):
        SavesANumber.apply(leaf([1.0]))


def test_saved_none_and_freed_and_retained_graphs():
    class SavesNone(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, None)
            return a * 3

        @staticmethod
        def backward(ctx, g):
            a, nothing = ctx.saved_tensors
            assert nothing is None and isinstance(a, minifw.Tensor)
            return g * 3

    x = leaf([1.0])
    y = SavesNone.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert values(x.grad).tolist() == [6.0]
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


def test_version_counter_check_for_a_saved_input():
    x = leaf([1.0, -2.0])
    h = x * 1
    y = MyReLU.apply(h)
    h.add_(1)  # the tensor MyReLU saved
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_version_counter_check_for_a_saved_output():
    x = leaf([1.0, -2.0])
    y = MyExp.apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_array_convention_kept_for_minifw_functions_and_on_request():
    from minifw.functions import elementwise
    assert elementwise.Add._on_arrays and Function._on_arrays
    assert not MyReLU._on_arrays

    class OnArrays(Function):
        _on_arrays = True

        @staticmethod
        def forward(ctx, a):
            assert isinstance(a, np.ndarray)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            assert isinstance(g, np.ndarray)
            return g * 2

    x = leaf([1.0])
    OnArrays.apply(x).sum().backward()
    assert values(x.grad).tolist() == [2.0]


# ---- anomaly detection names a user's Function ------------------------------------------------

@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_detection_with_user_functions(dev):
    class NaNBackward(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    class NaNForward(Function):
        @staticmethod
        def forward(ctx, a):
            return a, a * float("nan")

        @staticmethod
        def backward(ctx, g1, g2):
            return g1

    class Raises(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("a bug in backward")

    x = leaf([1.0, 2.0], dev)
    with autograd.detect_anomaly():
        y = NaNBackward.apply(x)
        with pytest.raises(RuntimeError, match=r"^Function 'NaNBackwardBackward' returned nan values in "
                                               r"its 0th output\.\nTraceback of forward call"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match=r"^Function 'NaNForward' returned nan values in its 1th "
                                               r"output during forward"):
            NaNForward.apply(x)
        y = Raises.apply(x)
        with pytest.warns(UserWarning, match=r"(?s)Error detected in RaisesBackward\..*y = Raises\.apply"):
            with pytest.raises(ValueError, match="a bug in backward"):
                y.sum().backward()
    assert not minifw.is_anomaly_enabled()


# ---- minifw.autograd.grad ---------------------------------------------------------------------

def _graph(module, dev="cpu"):
    kw = {"device": dev} if module is minifw else {}
    x = module.tensor([0.5, -1.0, 2.0], dtype=module.float64, requires_grad=True, **kw)
    w = module.tensor([1.5, 0.25, -0.5], dtype=module.float64, requires_grad=True, **kw)
    h = (x * w).exp()
    loss = (h * x).sum() + (w * w).sum()
    return x, w, h, loss


def test_grad_matches_pytorch(dev):
    torch = pytest.importorskip("torch")
    x, w, h, loss = _graph(minifw, dev)
    tx, tw, th, tloss = _graph(torch)
    ours = autograd.grad(loss, [x, w, h], retain_graph=True)
    theirs = torch.autograd.grad(tloss, [tx, tw, th], retain_graph=True)
    assert isinstance(ours, tuple) and len(ours) == 3
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(values(a), torch_values(b), rtol=1e-14)
        assert a.device.type == minifw.device(dev).type and not a.requires_grad
    # a non-scalar output with grad_outputs, a single tensor as inputs
    weights = [1.0, -2.0, 0.5]
    ours, = autograd.grad(h, x, grad_outputs=minifw.tensor(weights, dtype=minifw.float64, device=dev))
    theirs, = torch.autograd.grad(th, tx, grad_outputs=torch.tensor(weights, dtype=torch.float64))
    np.testing.assert_allclose(values(ours), torch_values(theirs), rtol=1e-14)


def test_grad_by_hand_and_leaves_grad_untouched():
    x = leaf([1.0, 2.0])
    x.grad = minifw.tensor([10.0, 10.0], dtype=minifw.float64)
    y = x * 3
    z = (y * y).sum()
    gx, gy = autograd.grad(z, (x, y))
    assert values(gx).tolist() == [18.0, 36.0] and values(gy).tolist() == [6.0, 12.0]
    assert values(x.grad).tolist() == [10.0, 10.0] and y.grad is None
    w = leaf([1.0])
    gw, = autograd.grad(w * 2, w)  # a scalar-sized output needs no grad_outputs
    assert values(gw).tolist() == [2.0] and w.grad is None


def test_grad_with_respect_to_an_output_itself():
    x = leaf([1.0, 2.0])
    y = x * 3
    g = minifw.tensor([1.0, 5.0], dtype=minifw.float64)
    assert values(autograd.grad(y, y, g)[0]).tolist() == [1.0, 5.0]
    assert values(autograd.grad(x, x, g)[0]).tolist() == [1.0, 5.0]


def test_grad_frees_the_graph_unless_retained():
    x = leaf([1.0, 2.0])
    z = (x * x).sum()
    autograd.grad(z, x, retain_graph=True)
    autograd.grad(z, x)
    with pytest.raises(RuntimeError, match=FREED):
        autograd.grad(z, x)


def test_grad_errors():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with pytest.raises(RuntimeError, match=UNUSED):
        autograd.grad((x * 2).sum(), [x, w])
    gx, gw = autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    assert values(gx).tolist() == [2.0, 2.0] and gw is None
    gx, gw = autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert values(gw).tolist() == [0.0, 0.0] and gw.dtype == minifw.float64
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when "
                                         "materialize_grads=True"):
        autograd.grad((x * 2).sum(), [x, w], allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not "
                                           "have a grad_fn"):
        autograd.grad(minifw.ones(2).sum(), [x])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        autograd.grad((x * 2).sum(), [minifw.ones(2)])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        autograd.grad(x * 2, [x])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\) "
                                           r"and output\[0\] has a shape of \(2,\)"):
        autograd.grad(x * 2, [x], grad_outputs=minifw.ones(3, dtype=minifw.float64))
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        autograd.grad([x.sum(), w.sum()], [x], grad_outputs=[None])
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty"):
        autograd.grad((x * 2).sum(), [])
    assert x.grad is None and w.grad is None


def test_grad_runs_only_what_leads_to_the_inputs():
    calls = []
    Counted = _counted(calls)
    x, w = leaf([1.0]), leaf([2.0])
    loss = (x * 3).sum() + Counted.apply(w).sum()
    gx, = autograd.grad(loss, x)
    assert calls == [] and values(gx).tolist() == [3.0] and w.grad is None


def test_grad_does_not_run_post_accumulate_hooks():
    x = leaf([1.0])
    ran = []
    x.register_post_accumulate_grad_hook(lambda t: ran.append(t))
    autograd.grad((x * 2).sum(), x)
    assert ran == [] and x.grad is None


def test_grad_is_grads_batched_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = leaf([1.0, 2.0, 3.0])
    tx = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    eye = np.eye(3)
    jac, = autograd.grad(x * x, x, minifw.tensor(eye, dtype=minifw.float64), is_grads_batched=True)
    tjac, = torch.autograd.grad(tx * tx, tx, torch.tensor(eye), is_grads_batched=True)
    np.testing.assert_array_equal(values(jac), torch_values(tjac))
    assert values(jac).tolist() == [[2, 0, 0], [0, 4, 0], [0, 0, 6]]


# ---- backward(inputs=...) ---------------------------------------------------------------------

def test_backward_inputs_matches_pytorch(dev):
    torch = pytest.importorskip("torch")
    x, w, h, loss = _graph(minifw, dev)
    tx, tw, th, tloss = _graph(torch)
    loss.backward(inputs=[w, h])
    tloss.backward(inputs=[tw, th])
    assert x.grad is None and tx.grad is None
    np.testing.assert_allclose(values(w.grad), torch_values(tw.grad), rtol=1e-14)
    np.testing.assert_allclose(values(h.grad), torch_values(th.grad), rtol=1e-14)
    assert h.retains_grad and th.retains_grad  # PyTorch retains a non-leaf input


def test_backward_inputs_by_hand():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    loss = (x * w).sum()
    autograd.backward(loss, inputs=x, retain_graph=True)
    assert values(x.grad).tolist() == [3.0, 4.0] and w.grad is None
    autograd.backward([loss], [minifw.tensor(2.0, dtype=minifw.float64)], inputs=[x, w])
    assert values(x.grad).tolist() == [9.0, 12.0] and values(w.grad).tolist() == [2.0, 4.0]


def test_backward_inputs_through_tensor_backward():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * w
    (y * y).sum().backward(inputs=[y])
    assert values(y.grad).tolist() == [6.0, 16.0] and x.grad is None and w.grad is None


def test_backward_inputs_skips_other_branches():
    calls = []
    Counted = _counted(calls)
    x, w = leaf([1.0]), leaf([2.0])
    ran = []
    w.register_post_accumulate_grad_hook(lambda t: ran.append(t))
    ((x * 3).sum() + Counted.apply(w).sum()).backward(inputs=[x])
    assert calls == [] and ran == [] and w.grad is None and values(x.grad).tolist() == [3.0]


def test_backward_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty"):
        autograd.backward((x * 2).sum(), inputs=[])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        autograd.backward((x * 2).sum(), inputs=[minifw.ones(2)])
    with pytest.raises(RuntimeError, match="'grad_tensors' and 'grad_variables'"):
        autograd.backward((x * 2).sum(), grad_tensors=[None], grad_variables=[None])
    autograd.backward(x * 2, grad_variables=minifw.ones(2, dtype=minifw.float64))
    assert values(x.grad).tolist() == [2.0, 2.0]


# ---- hooks ------------------------------------------------------------------------------------

def _hooked(module, dev="cpu"):
    kw = {"device": dev} if module is minifw else {}
    seen = []
    x = module.tensor([1.0, -2.0, 3.0], dtype=module.float64, requires_grad=True, **kw)
    x.register_hook(lambda g: seen.append(("x", g.tolist())))
    x.register_hook(lambda g: g * 2)
    y = x * x + x  # x used twice: its hooks see the sum once
    y.register_hook(lambda g: seen.append(("y", g.tolist())) or g + 1)
    y.register_hook(lambda g: seen.append(("y after", g.tolist())))
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    first = (x.grad.tolist(), y.grad.tolist())
    z.backward()
    return seen, first, x.grad.tolist(), y.grad.tolist()


def test_hooks_match_pytorch(dev):
    torch = pytest.importorskip("torch")
    assert _hooked(minifw, dev) == _hooked(torch)


def test_hooks_by_hand():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(values(g).tolist()))
    x.register_hook(lambda g: g * 10)
    ran = []
    x.register_post_accumulate_grad_hook(lambda t: ran.append(values(t.grad).tolist()))
    (x * x + x).sum().backward()
    assert seen == [[3.0, 5.0]]  # once, with the whole gradient
    assert values(x.grad).tolist() == [30.0, 50.0] and ran == [[30.0, 50.0]]  # before accumulation

    a = leaf([1.0, 2.0])
    h = a * 3
    h.register_hook(lambda g: g * 0.5)  # on a non-leaf: before the gradient flows on
    (h * 2).sum().backward()
    assert values(a.grad).tolist() == [3.0, 3.0] and h.grad is None


def test_a_hook_on_a_root():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.backward(minifw.tensor([1.0, 2.0], dtype=minifw.float64))
    assert values(x.grad).tolist() == [20.0, 40.0]
    w = leaf(3.0)
    w.register_hook(lambda g: g + 1)
    w.backward()
    assert w.grad.item() == 2.0


def test_hooks_in_grad_and_retain_grad_in_grad():
    torch = pytest.importorskip("torch")
    results = []
    for module in (minifw, torch):
        x = module.tensor([1.0, 2.0], dtype=module.float64, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 2
        y.retain_grad()
        gx, = module.autograd.grad((y * y).sum(), x)
        results.append((gx.tolist(), y.grad.tolist(), x.grad))
    assert results[0] == results[1]


def test_a_hook_on_a_dead_non_leaf_still_runs():
    # as PyTorch: the hook lives on the grad_fn
    seen = []

    def model(x):
        h = x * 2
        h.register_hook(lambda g: seen.append(values(g).tolist()))
        return (h * 3).sum()

    x = leaf([1.0])
    model(x).backward()
    assert seen == [[3.0]]


def test_handle_remove():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    handle.remove()  # twice is fine
    (x * 2).sum().backward()
    assert values(x.grad).tolist() == [2.0]
    y = x * 1
    with y.register_hook(lambda g: g * 100):
        pass  # leaving the block removes it
    y.sum().backward()
    assert values(x.grad).tolist() == [3.0]


def test_hook_errors():
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        (x * 2).sum().backward()
    handle.remove()
    y = x * 2
    y.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match="expected Tensor, but hook '<lambda>' returned 'int'"):
        (y * 2).sum().backward()
    y = x * 2
    y.register_hook(lambda g: g.float())
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the type of value"):
        (y * 2).sum().backward()
    no_grad = "cannot register a hook on a tensor that doesn't require gradient"
    with pytest.raises(RuntimeError, match=no_grad):
        minifw.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match=no_grad):
        autograd.register_hook(minifw.ones(2), lambda g: g)
    with pytest.raises(TypeError, match="must be callable"):
        autograd.register_hook(x, 3)


def test_retain_grad_accumulates_and_retains_grad():
    x = leaf([1.0, 2.0])
    assert not x.retains_grad
    x.retain_grad()  # a leaf: nothing to do
    assert not x.retains_grad
    y = x * 3
    assert not y.retains_grad
    y.retain_grad()
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    first = y.grad
    assert values(first).tolist() == [6.0, 12.0]
    z.backward()
    assert values(y.grad).tolist() == [12.0, 24.0]
    assert values(first).tolist() == [6.0, 12.0]  # out of place, as PyTorch
    assert values(x.grad).tolist() == [36.0, 72.0]
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        autograd.retain_grad(minifw.ones(2))


def test_retain_grad_follows_an_in_place_change():
    torch = pytest.importorskip("torch")
    results = []
    for module in (minifw, torch):
        x = module.tensor([1.0, 2.0], dtype=module.float64, requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.mul_(2)
        (y * y).sum().backward()
        results.append((y.retains_grad, y.grad.tolist(), x.grad.tolist()))
    assert results[0] == results[1]


def test_hooks_and_retain_grad_keep_no_tensor_alive():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g)
    y = x * 2
    y.register_hook(lambda g: g)
    y.retain_grad()
    refs = [weakref.ref(x), weakref.ref(y)]
    del x, y
    assert [r() for r in refs] == [None, None]
    assert not autograd._retained

    # a hook that refers to its own tensor: a cycle the collector frees
    w = leaf([1.0])
    w.register_hook(lambda g, w=w: g * w)
    ref = weakref.ref(w)
    del w
    gc.collect()
    assert ref() is None


def test_hooks_on_several_outputs_of_one_node():
    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2

    x = leaf([1.0, 5.0])
    first, second = Two.apply(x)
    first.register_hook(lambda g: g * 3)
    second.register_hook(lambda g: g * 10)
    (first.sum() + second.sum()).backward()
    assert values(x.grad).tolist() == [23.0, 23.0]  # 3 + 2 * 10


def test_apply_binds_defaults_and_keywords_as_pytorch():
    class Scale(Function):  # setup_context style: inputs holds the defaults too
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = minifw.ones(2, dtype=minifw.float64, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]

    class Product(Function):  # a Tensor passed by keyword is an input that gets its gradient
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    x = minifw.ones(2, dtype=minifw.float64, requires_grad=True)
    w = minifw.full((2,), 3.0, dtype=minifw.float64, requires_grad=True)
    Product.apply(x, w=w).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="Product.apply: missing a required argument: 'w'"):
        Product.apply(x)


def test_a_subclass_of_a_minifw_function_keeps_its_convention():
    from minifw.functions.elementwise import Exp

    class MyExp(Exp):
        pass

    x = minifw.zeros(2, dtype=minifw.float64, requires_grad=True)
    MyExp.apply(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


# ---- node names ----------------------------------------------------------------------------
# Each node is named as PyTorch 2.13 names the node of the same operation: its class name,
# name() and repr; the expectations were read from PyTorch.

def _named_ops(lib, F):
    x = lib.tensor([[0.5, 1.5, 2.0, 0.25], [1.0, 0.75, 3.0, 2.5], [0.2, 0.4, 0.6, 0.8]],
                   requires_grad=True)
    y = x * 1
    w = lib.ones(5, 4, requires_grad=True)
    v = lib.ones(4, requires_grad=True)
    img = lib.ones(1, 2, 5, 5, requires_grad=True)
    k = lib.ones(3, 2, 3, 3, requires_grad=True)
    return {
        "add": (x + y, "AddBackward0"), "sub": (x - 1, "SubBackward0"),
        "rsub": (1 - x, "RsubBackward1"), "mul": (x * 2, "MulBackward0"),
        "div": (x / y, "DivBackward0"), "neg": (-x, "NegBackward0"), "pow": (x ** 2, "PowBackward0"),
        "pow_tensor": (x ** y, "PowBackward1"), "exp": (x.exp(), "ExpBackward0"),
        "log1p": (x.log1p(), "Log1PBackward0"), "sin": (x.sin(), "SinBackward0"),
        "tanh": (x.tanh(), "TanhBackward0"), "relu": (F.relu(x), "ReluBackward0"),
        "sum": (x.sum(), "SumBackward0"), "sum_dim": (x.sum(1), "SumBackward1"),
        "mean": (x.mean(), "MeanBackward0"), "mean_dim": (x.mean(0), "MeanBackward1"),
        "max": (x.max(), "MaxBackward1"), "max_dim": (x.max(1)[0], "MaxBackward0"),
        "mm": (x.mm(w.t()), "MmBackward0"), "mv": (x @ v, "MvBackward0"),
        "dot": (v @ v, "DotBackward0"), "view": (x.view(12), "ViewBackward0"),
        "t": (x.t(), "TBackward0"), "transpose": (x.transpose(0, 1), "TransposeBackward0"),
        "permute": (x.permute(1, 0), "PermuteBackward0"),
        "unsqueeze": (x.unsqueeze(0), "UnsqueezeBackward0"),
        "squeeze_dim": (x[None].squeeze(0), "SqueezeBackward1"),
        "expand": (v.expand(3, 4), "ExpandBackward0"), "select": (x[0], "SelectBackward0"),
        "slice": (x[1:], "SliceBackward0"), "slice_in_tuple": (x[0, 1:], "SliceBackward0"),
        "index": (x[[0, 1]], "IndexBackward0"), "cat": (lib.cat([x, y]), "CatBackward0"),
        "clone": (x.clone(), "CloneBackward0"), "softmax": (x.softmax(1), "SoftmaxBackward0"),
        "log_softmax": (x.log_softmax(1), "LogSoftmaxBackward0"),
        "linear": (F.linear(x, w), "MmBackward0"),
        "linear_bias": (F.linear(x, w, lib.ones(5)), "AddmmBackward0"),
        "conv2d": (F.conv2d(img, k), "ConvolutionBackward0"),
        "max_pool2d": (F.max_pool2d(img, 2), "MaxPool2DWithIndicesBackward0"),
        "mse_loss": (F.mse_loss(x, y.detach()), "MseLossBackward0"),
        "cross_entropy": (F.cross_entropy(x, lib.tensor([0, 1, 2])), "NllLossBackward0"),
        "layer_norm": (F.layer_norm(x, (4,)), "NativeLayerNormBackward0"),
        "clamp": (x.clamp(0.2, 0.8), "ClampBackward1"),
        "masked_fill": (x.masked_fill(x > 1, 0.0), "MaskedFillBackward0"),
        "to_double": (x.double(), "ToCopyBackward0"), "std": (x.std(), "StdBackward0"),
        "square": (x.square(), "PowBackward0"), "unbind": (x.unbind()[0], "UnbindBackward0"),
        "addmm": (lib.addmm(lib.ones(5), x, w.t()), "AddmmBackward0"),
        "bmm": (lib.bmm(x[None], w.t()[None]), "BmmBackward0"),
    }


def test_node_names_are_pytorch_s():
    import re
    from minifw.nn import functional as F
    for op, (out, expected) in _named_ops(minifw, F).items():
        node = out.grad_fn
        assert (type(node).__name__, node.name()) == (expected, expected), op
        assert re.fullmatch(rf"<{expected} object at 0x[0-9a-f]+>", repr(node)), op
        assert isinstance(node, autograd.Node)
    x = minifw.ones(2, requires_grad=True)
    y = x * 2
    assert repr(y).endswith("grad_fn=<MulBackward0>)")
    acc = y.grad_fn.next_functions[0][0]
    assert type(acc).__name__ == acc.name() == "AccumulateGrad"
    # a node is renamed only where it was made: squeeze() that squeezes nothing returns its input
    assert y.squeeze().grad_fn is y.grad_fn and y.grad_fn.name() == "MulBackward0"
    assert (y * 1).t().grad_fn.name() == "MulBackward0"  # t() of a 1-D tensor is the tensor


def test_a_user_function_s_node_has_no_suffix():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    node = Twice.apply(minifw.ones(2, requires_grad=True)).grad_fn
    assert type(node).__name__ == node.name() == "TwiceBackward"  # as PyTorch names it


def test_node_names_match_torch():
    torch = pytest.importorskip("torch")
    from minifw.nn import functional as F
    ours = _named_ops(minifw, F)
    for op, (out, expected) in _named_ops(torch, torch.nn.functional).items():
        assert type(out.grad_fn).__name__ == expected == type(ours[op][0].grad_fn).__name__, op
