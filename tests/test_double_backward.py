"""create_graph=True: gradients of gradients.

Every gradient check case (the GRADS table of tests/nn/test_functional.py) whose graph holds only
Functions with second derivatives gets a second-order check (gradgradcheck: second
derivatives in every input and in the gradient fed in, against central differences of
first-order gradients, in float64); every Function with second derivatives is reached by
at least one such case, and docs/autograd.md lists exactly those Functions. The engine's
own semantics (what .grad holds, retain_graph's default, hooks, a user's Function,
once_differentiable, the error behind a Function without second derivatives) are tested
below against PyTorch's."""
import importlib.util
import pathlib
import re

import numpy as np
import pytest

import minifw
from minifw import functions
import minifw.nn.functional as F
from minifw.autograd import Function, Node, has_second_derivatives
from gradcheck import gradgradcheck

HERE = pathlib.Path(__file__).parent
TABLES = ["nn/test_functional.py"]  # its GRADS reach every Function (its census test)


def _load(relative):
    path = HERE / relative
    name = "double_backward_cases_" + re.sub(r"\W", "_", relative)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _every_function():
    found = set()
    for module in [F] + [getattr(functions, m) for m in dir(functions)
                         if not m.startswith("_") and hasattr(getattr(functions, m), "__file__")]:
        found |= {v for v in vars(module).values()
                  if isinstance(v, type) and issubclass(v, Function) and v is not Function}
    return found


def twice_differentiable(function):
    return getattr(function, "backward_graph", None) is not None


def _nodes(outputs):
    found, stack = {}, [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if isinstance(node, Node) and id(node) not in found:
            found[id(node)] = node
            stack.extend(f for f, _ in node.next_functions)
    return found.values()


def t64(shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return minifw.tensor(rng.uniform(low, high, shape), dtype=minifw.float64, requires_grad=True)


def _gradient_of(fn):
    """x -> the gradient of fn(x).sum() with respect to x, recorded: a Function reached only
    by second derivatives (IndexScatter) gets its own first- and second-order checks."""
    def gradient(x, w):
        with minifw.enable_grad():  # gradcheck's finite differences run under no_grad
            return minifw.autograd.grad((fn(x) * w).sum(), x, create_graph=True)[0]
    return gradient


def _pointwise(name, low=-0.9, high=0.9, *args):
    return (f"pointwise_{name}", lambda a: getattr(a, name)(*args) * a, lambda: [t64((2, 3), 0, low, high)])


def _lstm_module():
    minifw.manual_seed(0)  # the same weights for every evaluation
    return minifw.nn.LSTM(3, 2, num_layers=2, dtype=minifw.float64)


def _index_put(a, v):
    b = a * 1.0
    b[1:, ::2] = v[:2] * v[1:3]  # recorded: __setitem__ on a tensor with history
    return b ** 3


def _rnn(mode, layers=1, bidirectional=False, bias=True, lengths=None, input_size=3, hidden=2):
    """A case of the fused recurrent Function itself: (x, h0[, c0], flat weights) in float64."""
    from minifw.functions.recurrent import RecurrentNetwork
    from minifw.ops.rnn import RNNDescriptor
    desc = RNNDescriptor(mode, input_size, hidden, num_layers=layers, bidirectional=bidirectional,
                         bias=bias, dtype=np.float64)
    states = layers * (2 if bidirectional else 1)
    lengths = None if lengths is None else np.asarray(lengths, np.int64)

    def fn(x, h0, c0, w):
        return RecurrentNetwork.apply(x, h0, c0, w, desc=desc, lengths=lengths)

    def inputs():
        c0 = t64((states, 2, hidden), 2) if mode == "lstm" else None
        return [t64((3, 2, input_size)), t64((states, 2, hidden), 1), c0, t64((desc.weight_count(),), 3)]
    return fn, inputs


class Case:
    def __init__(self, id, fn, inputs, kwargs=None):
        self.id, self.fn, self.inputs, self.kwargs = id, fn, inputs, kwargs or {}


# Functions whose checks in the GRADS table also reach a Function without second
# derivatives, or that the table reaches through other tables: cases of their own. Each
# multiplies by an input somewhere, so the second derivatives in x are not all zero.
EXTRA = [Case(*c) for c in [
    ("flip", lambda a: a.flip((0, 1)) * a, lambda: [t64((2, 3))]),
    ("roll", lambda a: a.roll(1, 1) * a, lambda: [t64((2, 3))]),
    ("cumsum", lambda a: a.cumsum(1) * a, lambda: [t64((2, 3))]),
    ("split", lambda a: a.split([1, 2], 1)[1] * a[:, :2], lambda: [t64((2, 3))]),
    ("repeat", lambda a: a.repeat(2, 1) ** 2, lambda: [t64((2, 3))]),
    ("maximum", lambda a, b: minifw.maximum(a, b) ** 2, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("remainder", lambda a, b: minifw.remainder(a, b) * a, lambda: [t64((2, 3), 0, 1, 3), t64((3,), 1, 0.5, 0.9)]),
    ("tril", lambda a: a.tril() ** 2, lambda: [t64((3, 3))]),
    ("kthvalue", lambda a: a.kthvalue(2, 1)[0] ** 2, lambda: [t64((2, 4))]),
    ("median_dim", lambda a: a.median(1, keepdim=True)[0] * a, lambda: [t64((2, 5))]),
    ("max_dim", lambda a: a.max(0)[0] ** 3, lambda: [t64((3, 4))]),
    ("index_scatter_repeated", _gradient_of(lambda x: x[[0, 2, 0]] ** 3), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    ("index_scatter_basic", _gradient_of(lambda x: x[1:, ::2] ** 3), lambda: [t64((3, 4)), t64((2, 2), 1)]),
    ("overwrite", lambda a, b: (a * 1.0).copy_(b * b) * a, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("to_device", lambda a: a.to("cudasim").exp().to("cpu") * a, lambda: [t64((2, 3))]),
    ("std", lambda a: a.std(1) * a.sum(1), lambda: [t64((2, 4))]),
    ("cast", lambda a: a.float().double() * a, lambda: [t64((2, 3))], dict(eps=1e-2, rtol=1e-4, atol=1e-4)),
    ("gather", lambda a: a.gather(1, minifw.tensor([[0, 0, 2], [1, 0, 1]])) ** 3, lambda: [t64((2, 3))]),
    ("index_select", lambda a: a.index_select(0, minifw.tensor([1, 1, 0])) ** 3, lambda: [t64((2, 3))]),
    ("topk", lambda a: a.topk(2, dim=1)[0] ** 3, lambda: [t64((2, 4))]),
    ("sort", lambda a: a.sort(0, descending=True)[0] * a, lambda: [t64((3, 2))]),
    ("embedding", lambda w: F.embedding(minifw.tensor([[0, 2, 0], [1, 3, 2]]), w, padding_idx=3) ** 3,
     lambda: [t64((4, 3))]),
    ("einsum_matmul_broadcast", lambda a, b: minifw.einsum("bij,jk->bik", a, b) ** 2,
     lambda: [t64((2, 2, 3)), t64((3, 2), 1)]),
    ("einsum_diagonal_and_sum", lambda a, b: minifw.einsum("ii,jk->ij", a, b) * a[:, :2],
     lambda: [t64((3, 3)), t64((2, 2), 1)]),
    ("pad_constant", lambda a: F.pad(a, (1, 2, 0, 1), value=0.5) ** 2, lambda: [t64((1, 2, 3))]),
    ("pad_reflect", lambda a: F.pad(a, (2, 1), mode="reflect") ** 3, lambda: [t64((1, 2, 4))]),
    ("pad_replicate_circular", lambda a: F.pad(F.pad(a, (1, 1, 1, 0), mode="replicate"), (1, 2),
                                                mode="circular") ** 3, lambda: [t64((1, 1, 2, 3))]),
    ("diag_of_vector", lambda a: minifw.diag(a, 1) * minifw.diag(a, 1).sum(), lambda: [t64((3,))]),
    ("diag_of_matrix", lambda a: minifw.diag(a, -1) ** 3, lambda: [t64((3, 4))]),
    ("diagonal_along", lambda a: a.diagonal(1, 0, 2) ** 3, lambda: [t64((3, 2, 4))]),
    ("diag_embed", lambda a: a.diag_embed(1, 0, 2) * a.sum(), lambda: [t64((2, 3))]),
    ("lrn", lambda a: F.local_response_norm(a, 3, alpha=0.5, beta=0.75, k=1.5) * a,
     lambda: [t64((2, 5, 2, 2))]),
    ("lrn_even_size_3d", lambda a: F.local_response_norm(a, 4, alpha=0.8, beta=0.6, k=0.5) ** 2,
     lambda: [t64((1, 3, 4))]),
    ("scatter", lambda a, s: a.scatter(1, minifw.tensor([[0, 2], [1, 0]]), s) ** 3,
     lambda: [t64((2, 3)), t64((2, 2), 1)]),
    ("scatter_add", lambda a, s: a.scatter_add(0, minifw.tensor([[1, 0, 1]]), s) ** 3,
     lambda: [t64((2, 3)), t64((1, 3), 1)]),
    ("index_fill", lambda a, v: a.index_fill(1, minifw.tensor([0, 2]), v) * a,
     lambda: [t64((2, 3)), t64((), 1)]),
    ("index_add", lambda a, s: a.index_add(0, minifw.tensor([1, 1, 0]), s, alpha=0.5) ** 3,
     lambda: [t64((2, 3)), t64((3, 3), 1)]),
    ("index_put", _index_put, lambda: [t64((3, 4)), t64((4,), 1)]),
    ("conv3d_and_pools", lambda x, w: F.avg_pool3d(F.max_pool3d(F.conv3d(x, w, padding=1, stride=(2, 1, 1)),
                                                                 2, ceil_mode=True), 1) ** 2,
     lambda: [t64((1, 2, 4, 3, 3)), t64((2, 2, 2, 2, 2), 1)]),
    ("prod_dim", lambda a: a.prod(1) * a.sum(1), lambda: [t64((2, 4))]),
    ("prod_all_with_a_zero", lambda a: (a * minifw.tensor([1.0, 0.0, 1.0], dtype=minifw.float64)).prod() * a,
     lambda: [t64((3,))]),
    ("prod_keepdim_single", lambda a: a.prod(0, keepdim=True) ** 2, lambda: [t64((1, 3))]),
    ("median_all", lambda a: a.median() * a, lambda: [t64((2, 3))]),
    ("cummax", lambda a: a.cummax(1)[0] ** 3, lambda: [t64((2, 4))]),
    ("linalg_diagonal", lambda a: minifw.linalg.diagonal(a, offset=-1, dim1=0, dim2=2) ** 3,
     lambda: [t64((3, 2, 4))]),
    ("inv", lambda a: minifw.linalg.inv(a + 3 * minifw.eye(3, dtype=minifw.float64)) ** 2, lambda: [t64((2, 3, 3))]),
    ("det", lambda a: minifw.linalg.det(a + 2 * minifw.eye(3, dtype=minifw.float64)) ** 2, lambda: [t64((3, 3))]),
    ("slogdet", lambda a: minifw.linalg.slogdet(a + 2 * minifw.eye(3, dtype=minifw.float64))[1] ** 2,
     lambda: [t64((2, 3, 3))]),
    ("solve", lambda a, b: minifw.linalg.solve(a + 3 * minifw.eye(3, dtype=minifw.float64), b) ** 2,
     lambda: [t64((3, 3)), t64((2, 3, 2), 1)]),
    ("cholesky", lambda a: minifw.linalg.cholesky(a @ a.transpose(-1, -2) + minifw.eye(3, dtype=minifw.float64))
     ** 2, lambda: [t64((3, 3))]),
    ("lstm_two_layers_bidirectional", *_rnn("lstm", layers=2, bidirectional=True)),
    ("gru_lengths", *_rnn("gru", lengths=[3, 1])),
    ("rnn_tanh_no_bias", *_rnn("rnn_tanh", bias=False)),
    ("rnn_relu_bidirectional_lengths", *_rnn("rnn_relu", bidirectional=True, lengths=[2, 3])),
    ("lstm_module_packed_weights", lambda x: _lstm_module()(x)[0] ** 2, lambda: [t64((3, 2, 3))]),
    ("interpolate_bilinear", lambda a: F.interpolate(a, size=(5, 3), mode="bilinear") ** 2,
     lambda: [t64((1, 2, 3, 4))]),
    ("interpolate_bicubic_align", lambda a: F.interpolate(a, scale_factor=1.5, mode="bicubic",
                                                           align_corners=True) ** 3, lambda: [t64((1, 1, 3, 4))]),
    ("interpolate_area", lambda a: F.interpolate(a, size=(2, 3), mode="area") * a[..., :2, :3],
     lambda: [t64((1, 2, 5, 6))]),
    ("interpolate_trilinear", lambda a: F.interpolate(a, size=(3, 2, 4), mode="trilinear") ** 2,
     lambda: [t64((1, 1, 2, 3, 2))]),
    ("unfold", lambda a: F.unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)) ** 2,
     lambda: [t64((1, 2, 4, 5))]),
    ("fold", lambda a: F.fold(a, (4, 5), (2, 2), padding=(1, 0), stride=2) ** 2, lambda: [t64((1, 8, 6))]),
    ("atan2", lambda a, b: minifw.atan2(a, b) * a, lambda: [t64((2, 3)), t64((3,), 1, 0.5, 1.0)]),
    ("hypot", lambda a, b: minifw.hypot(a, b) * b, lambda: [t64((2, 3)), t64((3,), 1, 0.5, 1.0)]),
    ("fmod", lambda a, b: minifw.fmod(a, b) * a, lambda: [t64((2, 3), 0, 1, 3), t64((3,), 1, 0.5, 0.9)]),
    ("xlogy", lambda a, b: minifw.xlogy(a, b) * a, lambda: [t64((2, 3)), t64((3,), 1, 0.5, 2.0)]),
    ("logaddexp", lambda a, b: minifw.logaddexp(a, b) ** 2, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("copysign", lambda a, b: minifw.copysign(a, b) * a, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("logaddexp2", lambda a, b: a.logaddexp2(b) ** 2, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("fmax", lambda a, b: a.fmax(b) * a * b, lambda: [t64((2, 3)), t64((3,), 1)]),
    ("igamma", lambda x: minifw.tensor([0.5, 2.0, 3.5], dtype=minifw.float64).igamma(x) * x,
     lambda: [t64((2, 3), 0, 0.5, 3.0)]),
    ("polygamma", lambda a: a.polygamma(2) * a, lambda: [t64((2, 3), 0, 0.5, 3.0)]),
] + [_pointwise(n) for n in ["sin", "cos", "tan", "atan", "exp2", "log1p", "expm1", "asin", "acos",
                              "asinh", "atanh", "erf", "erfc", "erfinv", "sinh", "cosh", "sign", "floor",
                              "ceil", "trunc", "round", "frac", "deg2rad", "rad2deg", "sinc", "nan_to_num"]]
  + [_pointwise(n, 0.5, 2.0) for n in ["rsqrt", "log2", "log10", "reciprocal", "lgamma"]]
  + [_pointwise("acosh", 1.5, 3.0), _pointwise("logit", 0.2, 0.8), _pointwise("logit", 0.05, 0.95, 0.1)]]


def _cases():
    """(id, case, Functions reached) of every GRADS case (and EXTRA case) whose recorded
    calls all have second derivatives."""
    cases = []
    for relative in TABLES + ["EXTRA"]:
        table = EXTRA if relative == "EXTRA" else getattr(_load(relative), "GRADS", [])
        for case in table:
            out = case.fn(*case.inputs())
            nodes = list(_nodes([o for o in (out if isinstance(out, tuple) else (out,))
                                 if isinstance(o, minifw.Tensor)]))
            if nodes and all(has_second_derivatives(n) for n in nodes):
                cases.append((f"{relative.split('/')[-1].removesuffix('.py')}::{case.id}", case,
                              {n.function for n in nodes}))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_second_derivatives_match_finite_differences(case):
    kwargs = {k: v for k, v in case.kwargs.items() if k in ("eps", "atol", "rtol")}
    gradgradcheck(case.fn, case.inputs(), **kwargs)


def test_every_extra_case_is_checked():
    """A case of EXTRA that reached a Function without second derivatives would silently
    drop out of CASES."""
    checked = {c[0] for c in CASES}
    assert not [c.id for c in EXTRA if f"EXTRA::{c.id}" not in checked]


def test_every_twice_differentiable_function_has_a_second_order_check():
    covered = set().union(*(c[2] for c in CASES))
    missing = {f for f in _every_function() if twice_differentiable(f)} - covered
    assert not missing, sorted(f.__name__ for f in missing)


def test_docs_list_the_twice_differentiable_functions():
    text = (HERE.parent / "docs" / "autograd.md").read_text()
    section = text.split("<!-- second derivatives -->")[1]
    listed = set(re.findall(r"`(\w+)`", section.split("<!-- end -->")[0]))
    have = {f.__name__ for f in _every_function() if twice_differentiable(f)}
    assert listed == have, (sorted(have - listed), sorted(listed - have))


# ---- the engine's semantics under create_graph=True, as PyTorch's ---------------------------

def leaf(values):
    return minifw.tensor(values, dtype=minifw.float64, requires_grad=True)


def test_grad_is_recorded_and_gives_the_second_derivative():
    x = leaf([0.5, -1.0, 2.0])
    g, = minifw.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)
    h, = minifw.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), 6 * np.array([0.5, -1.0, 2.0]))
    k, = minifw.autograd.grad(h.sum(), x)  # third order
    np.testing.assert_allclose(k.numpy(), [6.0, 6.0, 6.0])


def test_backward_with_create_graph_makes_grad_differentiable_and_accumulates_out_of_place():
    x = leaf([1.0, 2.0])
    (x ** 2).sum().backward(create_graph=True)
    first = x.grad
    assert first.grad_fn is not None
    (x ** 3).sum().backward(create_graph=True)  # .grad + g, recorded: a new tensor
    assert x.grad is not first and first.tolist() == [2.0, 4.0]
    np.testing.assert_allclose(x.grad.detach().numpy(), [2 + 3, 4 + 12])
    g2, = minifw.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(g2.numpy(), [2 + 6, 2 + 12])


def test_retain_graph_defaults_to_create_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    minifw.autograd.grad(y, x, create_graph=True)
    g, = minifw.autograd.grad(y, x)  # the graph was kept
    np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        minifw.autograd.grad(y, x)


def test_grad_outputs_keep_their_history():
    """The gradient fed in is differentiated too: a double-backward vector-Jacobian trick."""
    x = leaf([0.3, -0.7])
    v = leaf([2.0, 5.0])
    y = x.sin()
    g, = minifw.autograd.grad(y, x, grad_outputs=v, create_graph=True)  # v * cos x
    dv, = minifw.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(dv.numpy(), np.cos([0.3, -0.7]))


def test_hooks_see_recorded_gradients_and_may_replace_them():
    x = leaf([1.0, 3.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.grad_fn is not None) or g * 2)
    g, = minifw.autograd.grad((x ** 2).sum(), x, create_graph=True)
    assert seen == [True]
    np.testing.assert_allclose(g.detach().numpy(), [4.0, 12.0])
    h, = minifw.autograd.grad(g.sum(), x)  # d(4x)/dx, doubled again by the hook, as in PyTorch
    np.testing.assert_allclose(h.numpy(), [8.0, 8.0])
    assert seen == [True, False]


def test_retain_grad_of_a_non_leaf_under_create_graph():
    x = leaf([1.0, 2.0])
    y = x * x
    y.retain_grad()
    (y ** 2).sum().backward(create_graph=True)
    assert y.grad.grad_fn is not None
    np.testing.assert_allclose(y.grad.detach().numpy(), [2.0, 8.0])


class Cube(Function):
    """A user's Function in PyTorch's style: its backward on Tensors is recorded."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2


class CubeOnce(Cube):
    @staticmethod
    @minifw.autograd.once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2


def test_a_users_function_is_differentiated_twice_through_its_saved_tensors():
    x = leaf([0.5, -2.0])
    g, = minifw.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    h, = minifw.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.5, -2.0]))


def test_once_differentiable_gives_first_derivatives_and_refuses_second():
    x = leaf([0.5, -2.0])
    g, = minifw.autograd.grad(CubeOnce.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -2.0]) ** 2)
    with pytest.raises(RuntimeError, match="CubeOnceBackward is not differentiable twice"):
        g.sum().backward()


def test_a_function_without_second_derivatives_refuses_them_by_name():
    x = leaf([0.5, -2.0, 3.0])
    g, = minifw.autograd.grad(x.cumprod(0).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [1 - 2 - 6, 0.5 + 1.5, -1.0])  # first order: right
    with pytest.raises(RuntimeError, match="CumprodBackward0 is not differentiable twice"):
        g.sum().backward()


def test_batched_grads_with_create_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = x ** 3
    eye = minifw.tensor(np.eye(3), dtype=minifw.float64)
    jac, = minifw.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True, create_graph=True)
    np.testing.assert_allclose(jac.detach().numpy(), np.diag(3 * np.array([1.0, 2.0, 3.0]) ** 2))
    h, = minifw.autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0, 18.0])


def test_zero_dim_inputs_get_arrays_from_several_contributions():
    """Two contributions to a 0-d tensor's gradient sum to an array, not a NumPy scalar."""
    x = leaf(2.0)
    g, = minifw.autograd.grad(x * x + x, x)
    assert isinstance(g.numpy(), np.ndarray) and g.item() == 5.0


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_hessian_vector_product_of_a_small_mlp_matches_pytorch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x_np, w1_np, w2_np, v_np = (rng.standard_normal(s) for s in [(4, 3), (5, 3), (2, 5), (5, 3)])

    def loss(lib, x, w1, w2):
        h = lib.tanh(x @ w1.T)
        return ((h @ w2.T) ** 2).sum()

    x, w1, w2 = (minifw.tensor(a, dtype=minifw.float64, device=device) for a in (x_np, w1_np, w2_np))
    w1.requires_grad_()
    g, = minifw.autograd.grad(loss(minifw, x, w1, w2), w1, create_graph=True)
    hv, = minifw.autograd.grad((g * minifw.tensor(v_np, device=device)).sum(), w1)

    tw1 = torch.tensor(w1_np, requires_grad=True)
    tg, = torch.autograd.grad(loss(torch, torch.tensor(x_np), tw1, torch.tensor(w2_np)), tw1,
                              create_graph=True)
    thv, = torch.autograd.grad((tg * torch.tensor(v_np)).sum(), tw1)
    np.testing.assert_allclose(hv.cpu().numpy(), thv.numpy(), rtol=1e-10, atol=1e-12)


def test_second_derivatives_on_the_emulated_cuda_device_match_the_cpu(emulated_cuda):
    """A small CNN critic's gradient penalty on "cuda" (CuPy's stand-in), as on the CPU."""
    rng = np.random.default_rng(4)
    x_np = rng.standard_normal((2, 1, 6, 6))
    w_np, v_np = rng.standard_normal((3, 1, 3, 3)) * 0.5, rng.standard_normal((3 * 4 * 4, 1)) * 0.3

    def penalty_gradients(device):
        x = minifw.tensor(x_np, dtype=minifw.float64, device=device, requires_grad=True)
        w = minifw.tensor(w_np, dtype=minifw.float64, device=device, requires_grad=True)
        v = minifw.tensor(v_np, dtype=minifw.float64, device=device, requires_grad=True)
        score = F.leaky_relu(F.conv2d(x, w), 0.2).flatten(1) @ v
        g, = minifw.autograd.grad(score.sum(), x, create_graph=True)
        ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean().backward()
        return [t.grad.cpu().numpy() for t in (w, v)]

    for a, b in zip(penalty_gradients(emulated_cuda), penalty_gradients("cpu")):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_xlogy_gradient_at_x_zero_is_pytorchs():
    """log(y) in x where x is 0, except 0 there where y <= 0 (PyTorch 2.13's values)."""
    x = leaf([0.0, 0.0, 0.0, 2.0])
    minifw.xlogy(x, minifw.tensor([-1.0, 0.0, 5.0, 0.0], dtype=minifw.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, np.log(5.0), -np.inf])
    x.grad = None
    g, = minifw.autograd.grad(minifw.xlogy(x, minifw.tensor([-1.0, 0.0, 5.0, 0.5], dtype=minifw.float64)).sum(),
                              x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [0.0, 0.0, np.log(5.0), np.log(0.5)])


def test_the_second_order_benchmark_runs_and_agrees_with_pytorch(capsys):
    pytest.importorskip("torch")
    import runpy
    bench = runpy.run_path(str(HERE.parent / "benchmarks" / "double_backward.py"))
    bench["main"](["--repeats", "1", "--cases", "maml,hvp"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| maml")
            or line.startswith("| hvp")]
    assert len(rows) == 2
    for row in rows:  # the gradients the two frameworks computed agree to float32 rounding
        assert float(row.split("|")[-2]) < 1e-4, row


@pytest.mark.parametrize("fn", [F.relu, lambda t: F.leaky_relu(t, 0.1), F.hardtanh, lambda t: t + 1,
                                lambda t: t.clamp(0, 1), lambda t: F.max_pool1d(t.reshape(1, 1, 4), 2)])
def test_a_gradient_constant_in_the_inputs_differentiates_to_zeros(fn):
    """ones * mask is outside the graph, yet a function of x with a zero derivative: it is
    joined to x, so a second grad gives zeros (PyTorch: zeros for relu, leaky_relu, hardtanh
    and max pooling; an error for x + 1 and clamp, documented)."""
    x = leaf([1.0, -2.0, 0.5, 3.0])
    g, = minifw.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert g.requires_grad
    h, = minifw.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_array_equal(np.abs(h.detach().numpy()), np.zeros(4))
    k, = minifw.autograd.grad(h.sum(), x)  # and again
    np.testing.assert_array_equal(np.abs(k.numpy()), np.zeros(4))
