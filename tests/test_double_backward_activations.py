"""Second derivatives (create_graph=True) of the activations, softmax and the losses, and the
normalizations: gradgradcheck in float64 over several shapes and arguments; at a zero vector
(where finite differences do not apply) the norm's second derivatives against PyTorch's
convention; a MAML step and a Hessian-vector product against PyTorch; and the emulated CUDA
device ("cudasim") against the CPU."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from gradcheck import gradgradcheck

# The formulas differ from PyTorch's only in rounding: float64 agrees to well under 1e-9.
TORCH_TOL = dict(rtol=1e-9, atol=1e-11)


def t64(shape, seed=0, low=-1.0, high=1.0):
    return minifw.tensor(np.random.default_rng(seed).uniform(low, high, shape), dtype=minifw.float64,
                         requires_grad=True)


def c64(values):
    return minifw.tensor(values, dtype=minifw.float64)


def targets(values):
    return minifw.tensor(values, dtype=minifw.int64)


def with_zero_row(shape=(3, 4)):
    x = np.random.default_rng(0).uniform(-1.0, 1.0, shape)
    x[1] = 0.0
    return x


# (id, fn, inputs): each multiplies by an input somewhere where the function is piecewise
# linear, so that its second derivatives in x are not all zero
CASES = [
    ("relu", lambda x: F.relu(x) * x, lambda: [t64((3, 5))]),
    ("relu_inplace", lambda x: F.relu(x * 1.0, inplace=True) * x, lambda: [t64((2, 3, 4))]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2) * x, lambda: [t64((3, 5))]),
    ("leaky_relu_negative_slope", lambda x: F.leaky_relu(x, -0.5) * x, lambda: [t64((4, 2))]),
    ("elu", lambda x: F.elu(x, 0.7), lambda: [t64((3, 5), 0, -3, 3)]),
    ("elu_inplace", lambda x: F.elu(x * 1.0, 1.5, inplace=True), lambda: [t64((6,), 0, -3, 3)]),
    ("elu_negative_alpha", lambda x: F.elu(x, -0.7), lambda: [t64((3, 5), 0, -3, 3)]),
    ("sigmoid", lambda x: F.sigmoid(x), lambda: [t64((3, 5), 0, -3, 3)]),
    ("tanh", lambda x: F.tanh(x), lambda: [t64((2, 3, 4), 0, -3, 3)]),
    ("tanh_of_tanh", lambda x: x.tanh().tanh(), lambda: [t64((5,), 0, -2, 2)]),
    ("gelu", lambda x: F.gelu(x), lambda: [t64((3, 5), 0, -4, 4)]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), lambda: [t64((3, 5), 0, -4, 4)]),
    ("silu", lambda x: F.silu(x), lambda: [t64((3, 5), 0, -4, 4)]),
    ("softplus", lambda x: F.softplus(x, 2.0, 3.0), lambda: [t64((3, 7), 0, -4, 4)]),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5) * x, lambda: [t64((3, 5))]),
    ("hardswish", lambda x: F.hardswish(x), lambda: [t64((3, 5), 0, -4, 4)]),
    ("hardsigmoid", lambda x: F.hardsigmoid(x) * x, lambda: [t64((3, 5), 0, -4, 4)]),
    ("mish", lambda x: F.mish(x), lambda: [t64((3, 5), 0, -4, 4)]),
    ("logsigmoid", lambda x: F.logsigmoid(x), lambda: [t64((3, 5), 0, -4, 4)]),
    ("selu_celu", lambda x: F.selu(x) + F.celu(x, 0.7), lambda: [t64((3, 5), 0, -2, 2)]),
    ("shrink", lambda x: (F.softshrink(x, 0.3) + F.hardshrink(x, 0.3)) * x, lambda: [t64((3, 5))]),
    ("threshold", lambda x: F.threshold(x, 0.1, -1.0) * x, lambda: [t64((3, 5))]),
    # softmax
    ("softmax_rows", lambda x: F.softmax(x, 1), lambda: [t64((3, 5), 0, -3, 3)]),
    ("softmax_dim0", lambda x: F.softmax(x, 0), lambda: [t64((3, 5), 0, -3, 3)]),
    ("softmax_channels", lambda x: F.softmax(x, 1), lambda: [t64((2, 3, 2, 2), 0, -3, 3)]),
    ("softmax_3d_last", lambda x: x.softmax(-1), lambda: [t64((2, 3, 4), 0, -3, 3)]),
    ("log_softmax_rows", lambda x: F.log_softmax(x, 1), lambda: [t64((3, 5), 0, -3, 3)]),
    ("log_softmax_4d_dim3", lambda x: x.log_softmax(3), lambda: [t64((1, 2, 3, 4), 0, -3, 3)]),
    # losses over classes
    ("cross_entropy_mean", lambda x: F.cross_entropy(x, targets([0, 3, 1, 3])), lambda: [t64((4, 5), 0, -2, 2)]),
    ("cross_entropy_sum_ignore", lambda x: F.cross_entropy(x, targets([0, -100, 1]), reduction="sum"),
     lambda: [t64((3, 4), 0, -2, 2)]),
    ("cross_entropy_none_smoothing", lambda x: F.cross_entropy(x, targets([0, 2, 1]), reduction="none",
                                                               label_smoothing=0.2),
     lambda: [t64((3, 4), 0, -2, 2)]),
    ("cross_entropy_spatial_ignore_smoothing", lambda x: F.cross_entropy(
        x, targets([[[0, 1, 2], [2, 2, 0]], [[1, 1, 0], [0, 0, 2]]]), ignore_index=2, label_smoothing=0.1),
     lambda: [t64((2, 3, 2, 3), 0, -2, 2)]),
    ("cross_entropy_weighted_smoothing_ignore", lambda x: F.cross_entropy(
        x, targets([0, -100, 1, 2]), c64([1.0, 2.0, 0.5]), label_smoothing=0.1), lambda: [t64((4, 3), 0, -2, 2)]),
    ("cross_entropy_1d", lambda x: F.cross_entropy(x, targets(2)), lambda: [t64((4,), 0, -2, 2)]),
    ("cross_entropy_every_target_ignored", lambda x: F.cross_entropy(x, targets([-100, -100]), reduction="sum"),
     lambda: [t64((2, 3))]),
    ("nll_loss_mean", lambda x: F.nll_loss(x, targets([1, 0, 2])) * x.sum(), lambda: [t64((3, 4))]),
    ("nll_loss_weighted_ignore", lambda x: F.nll_loss(x, targets([1, 0, 2, 0]), c64([1.0, 2.0, 0.5]),
                                                      ignore_index=0) * x.sum(), lambda: [t64((4, 3))]),
    ("nll_loss_spatial_none", lambda x: F.nll_loss(x, targets([[[0, 1], [2, 2]]]), reduction="none") ** 2,
     lambda: [t64((1, 3, 2, 2))]),
    ("mse_loss_mean", lambda a, b: F.mse_loss(a, b), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    ("mse_loss_sum_broadcast", lambda a, b: F.mse_loss(a, b, reduction="sum"), lambda: [t64((3, 4)), t64((4,), 1)]),
    ("mse_loss_none", lambda a, b: F.mse_loss(a, b, reduction="none"), lambda: [t64((5,)), t64((5,), 1)]),
    # elementwise losses
    ("l1_loss", lambda a, b: F.l1_loss(a, b) * a.sum(), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    ("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    ("huber_loss_broadcast", lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="sum"),
     lambda: [t64((3, 4)), t64((4,), 1)]),
    ("binary_cross_entropy", lambda x, t: F.binary_cross_entropy(x, t),
     lambda: [t64((3, 4), 0, 0.1, 0.9), t64((3, 4), 1, 0, 1)]),
    ("binary_cross_entropy_weighted", lambda x, t: F.binary_cross_entropy(
        x, t, weight=c64(np.linspace(0.5, 2, 4)), reduction="sum"),
     lambda: [t64((3, 4), 0, 0.1, 0.9), t64((3, 4), 1, 0, 1)]),
    ("binary_cross_entropy_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t),
     lambda: [t64((3, 4), 0, -3, 3), t64((3, 4), 1, 0, 1)]),
    ("binary_cross_entropy_with_logits_pos_weight", lambda x, t: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=c64([1.0, 2.0, 0.5, 3.0]), weight=c64(np.linspace(0.5, 2, 4))),
     lambda: [t64((3, 4), 0, -3, 3), t64((3, 4), 1, 0, 1)]),
    ("kl_div_batchmean", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
     lambda: [t64((3, 4)), t64((3, 4), 1, 0.1, 1)]),
    ("kl_div_log_target_broadcast", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
     lambda: [t64((3, 4)), t64((4,), 1)]),
    # norms and normalizations
    ("norm_2_dim1", lambda x: x.norm(2, dim=1), lambda: [t64((3, 4))]),
    ("norm_2_dim0_keepdim", lambda x: x.norm(dim=0, keepdim=True), lambda: [t64((3, 4))]),
    ("norm_2_all", lambda x: x.norm(), lambda: [t64((2, 3, 2))]),
    ("norm_2_dims", lambda x: x.norm(2, dim=(1, 2)), lambda: [t64((2, 3, 2))]),
    ("norm_1_dim1", lambda x: x.norm(1, dim=1) * x.sum(1), lambda: [t64((3, 4))]),
    ("norm_1_keepdim", lambda x: x.norm(1, dim=1, keepdim=True) * x, lambda: [t64((3, 4))]),
    ("norm_inf", lambda x: x.norm(float("inf"), dim=1) * x.sum(1), lambda: [t64((3, 4))]),
    ("norm_3", lambda x: x.norm(3, dim=1), lambda: [t64((3, 4))]),
    ("norm_1_5_all", lambda x: x.norm(1.5), lambda: [t64((3, 4))]),
    ("gradient_penalty", lambda x: (x.norm(2, dim=1) - 1.0) ** 2, lambda: [t64((4, 3))]),
    ("layer_norm_affine", lambda x, w, b: F.layer_norm(x, (4, 3), w, b),
     lambda: [t64((2, 4, 3)), t64((4, 3), 1), t64((4, 3), 2)]),
    ("layer_norm_plain", lambda x: F.layer_norm(x, (5,)), lambda: [t64((3, 5))]),
    ("batch_norm_training_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     lambda: [t64((3, 2, 2, 2)), t64((2,), 1), t64((2,), 2)]),
    ("batch_norm_training_2d_plain", lambda x: F.batch_norm(x, None, None, training=True), lambda: [t64((4, 3))]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(x, c64([0.1, -0.2]), c64([0.5, 2.0]), w, b) * x,
     lambda: [t64((3, 2)), t64((2,), 1), t64((2,), 2)]),
    ("normalize", lambda x: F.normalize(x), lambda: [t64((3, 4))]),
    ("normalize_p3_dim0", lambda x: F.normalize(x, p=3.0, dim=0), lambda: [t64((3, 4))]),
    ("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    ("cosine_similarity_broadcast", lambda a, b: F.cosine_similarity(a, b, dim=1),
     lambda: [t64((3, 4)), t64((4,), 1)]),
    ("cdist_2", lambda a, b: minifw.cdist(a, b), lambda: [t64((3, 4)), t64((2, 4), 1)]),
    ("cdist_1", lambda a, b: minifw.cdist(a, b, p=1) * a.sum(), lambda: [t64((3, 4)), t64((2, 4), 1)]),
    ("cdist_inf_batched", lambda a, b: minifw.cdist(a, b, p=float("inf")) * a.sum(),
     lambda: [t64((2, 3, 4)), t64((2, 4), 1)]),
]


@pytest.mark.parametrize("fn, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.filterwarnings("ignore:.*Using a target size:UserWarning")
def test_second_derivatives_match_finite_differences(fn, inputs):
    gradgradcheck(fn, inputs())


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf")])
def test_norm_at_a_zero_vector_follows_pytorch(p):
    """At a zero vector the norm is not differentiable: PyTorch's gradient is 0 there, and
    minifw's second derivatives there are 0 too (PyTorch's are nan for p = 2, 0 / 0 in its
    formula); the other rows are PyTorch's."""
    torch = pytest.importorskip("torch")
    x_np, v_np = with_zero_row(), np.random.default_rng(1).uniform(-1.0, 1.0, (3, 4))

    def hvp(lib, x, v):
        g = lib.autograd.grad((x.norm(p, dim=1) * x.sum(1)).sum(), x, create_graph=True)[0]
        return g, lib.autograd.grad((g * v).sum(), x)[0]

    g, h = hvp(minifw, minifw.tensor(x_np, requires_grad=True), minifw.tensor(v_np))
    tg, th = hvp(torch, torch.tensor(x_np, requires_grad=True), torch.tensor(v_np))
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), **TORCH_TOL)
    others = [0, 2]
    np.testing.assert_allclose(h.numpy()[others], th.numpy()[others], **TORCH_TOL)
    assert not h.numpy()[1].any()


def test_a_norm_that_vanishes_has_no_nan_second_derivatives():
    x = minifw.tensor(with_zero_row(), requires_grad=True)
    g, = minifw.autograd.grad(x.norm(2, dim=1).sum(), x, create_graph=True)
    h, = minifw.autograd.grad((g * g).sum(), x)
    assert np.isfinite(h.numpy()).all() and not h.numpy()[1].any()


def test_a_p_below_one_refuses_second_derivatives_by_name():
    x = t64((2, 3), 0, 0.5, 1.0)
    g, = minifw.autograd.grad(x.norm(0.5, dim=1).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="LinalgVectorNormBackward0 is not differentiable twice"):
        g.sum().backward()


def _mlp(lib, params, x, activation):
    w1, b1, w2, b2 = params
    return activation(lib, x @ w1.T + b1) @ w2.T + b2


ACTIVATIONS = {"tanh": lambda lib, h: h.tanh(), "relu": lambda lib, h: h.relu()}


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("loss", ["mse", "cross_entropy"])
def test_maml_step_matches_pytorch(activation, loss):
    """One MAML meta-gradient: an inner SGD step on the support set taken with
    create_graph=True, the query loss at the adapted parameters differentiated back to the
    initial ones, through the inner gradient."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    shapes = [(6, 3), (6,), (4, 6), (4,)]
    init = [rng.standard_normal(s) * 0.7 for s in shapes]
    xs, xq = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    ys, yq = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    cs, cq = rng.integers(0, 4, 5), rng.integers(0, 4, 5)

    def meta_gradient(lib, functional, tensor, classes):
        params = [tensor(p, requires_grad=True) for p in init]

        def objective(ps, x, y, c):
            out = _mlp(lib, ps, tensor(x), ACTIVATIONS[activation])
            return (functional.mse_loss(out, tensor(y)) if loss == "mse" else
                    functional.cross_entropy(out, classes(c)))

        grads = lib.autograd.grad(objective(params, xs, ys, cs), params, create_graph=True)
        adapted = [p - 0.4 * g for p, g in zip(params, grads)]
        return [g.numpy() for g in lib.autograd.grad(objective(adapted, xq, yq, cq), params)]

    ours = meta_gradient(minifw, F, lambda a, **kw: minifw.tensor(a, dtype=minifw.float64, **kw),
                         targets)
    theirs = meta_gradient(torch, torch.nn.functional,
                           lambda a, **kw: torch.tensor(a, dtype=torch.float64, **kw),
                           lambda c: torch.tensor(c, dtype=torch.int64))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **TORCH_TOL)


HVP_LOSSES = {
    "softmax_cross_entropy": lambda lib, F_, out, c: F_.cross_entropy(out, c, label_smoothing=0.1),
    "log_softmax_nll": lambda lib, F_, out, c: F_.nll_loss(F_.log_softmax(out, 1), c),
    "sigmoid_gelu_layer_norm": lambda lib, F_, out, c: (F_.layer_norm(F_.gelu(out), (4,)).sigmoid() ** 2).sum(),
    "elu_softplus_silu": lambda lib, F_, out, c: (F_.elu(out, 0.5) * F_.softplus(out) + F_.silu(out)).sum(),
    "leaky_relu_gradient_penalty": lambda lib, F_, out, c: ((F_.leaky_relu(out, 0.1).norm(2, dim=1) - 1) ** 2).mean(),
}


@pytest.mark.parametrize("loss", list(HVP_LOSSES))
def test_hessian_vector_product_matches_pytorch(loss):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x_np, w_np, v_np = rng.standard_normal((6, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    c_np = rng.integers(0, 4, 6)

    def hvp(lib, F_, tensor, c):
        w = tensor(w_np)
        w.requires_grad_()
        value = HVP_LOSSES[loss](lib, F_, tensor(x_np) @ w.T, c)
        g, = lib.autograd.grad(value, w, create_graph=True)
        return lib.autograd.grad((g * tensor(v_np)).sum(), w)[0].numpy()

    ours = hvp(minifw, F, lambda a: minifw.tensor(a, dtype=minifw.float64), targets(c_np))
    theirs = hvp(torch, torch.nn.functional, lambda a: torch.tensor(a, dtype=torch.float64),
                 torch.tensor(c_np))
    np.testing.assert_allclose(ours, theirs, **TORCH_TOL)


DEVICE_CASES = ["relu", "leaky_relu", "elu", "sigmoid", "tanh", "softmax_channels", "log_softmax_rows",
                "batch_norm_training_4d", "layer_norm_affine", "norm_2_dim1"] + [
    # constants made on the inputs' device
    ("cross_entropy_spatial_ignore_smoothing", lambda x: F.cross_entropy(
        x, targets([[[0, 1, 2], [2, 2, 0]], [[1, 1, 0], [0, 0, 2]]]).to(x.device), ignore_index=2,
        label_smoothing=0.1), lambda: [t64((2, 3, 2, 3), 0, -2, 2)]),
    ("nll_loss_mean", lambda x: F.nll_loss(x, targets([1, 0, 2]).to(x.device)) * x.sum(), lambda: [t64((3, 4))]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(
        x, c64([0.1, -0.2]).to(x.device), c64([0.5, 2.0]).to(x.device), w, b) * x,
     lambda: [t64((3, 2)), t64((2,), 1), t64((2,), 2)]),
]


@pytest.mark.parametrize("case", DEVICE_CASES, ids=[c if isinstance(c, str) else c[0] for c in DEVICE_CASES])
def test_second_derivatives_on_cudasim_match_the_cpu(case):
    """The emulated CUDA kernels (activation, softmax, cross-entropy, batch norm primitives)
    under a recorded backward give the CPU's second derivatives."""
    _, fn, inputs = next(c for c in CASES if c[0] == case) if isinstance(case, str) else case

    def second(device):
        xs = [x.detach().to(device).requires_grad_() for x in inputs()]
        out = fn(*xs)
        r = minifw.tensor(np.random.default_rng(3).uniform(-1, 1, out.shape), dtype=minifw.float64,
                          device=device)
        grads = minifw.autograd.grad((out * r).sum(), xs, create_graph=True)
        total = sum(((g * g).sum() for g in grads), minifw.tensor(0.0, dtype=minifw.float64, device=device))
        return [np.zeros(x.shape) if g is None else g.cpu().numpy()  # a bias: no second derivative
                for x, g in zip(xs, minifw.autograd.grad(total, xs, allow_unused=True))]

    for a, b in zip(second("cudasim"), second("cpu")):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
