"""The activations Hardswish, Hardsigmoid, Mish, SELU, CELU, GLU, LogSigmoid, Softsign,
Tanhshrink, Hardshrink, Softshrink and Threshold; RMSNorm and InstanceNorm1d/2d; the padding
layers (Zero, Constant, Reflection, Replication and Circular, 1d and 2d); PixelShuffle,
PixelUnshuffle and ChannelShuffle; and the losses TripletMargin, MarginRanking,
CosineEmbedding, PoissonNLL, GaussianNLL, SoftMargin, MultiLabelSoftMargin and HingeEmbedding
(each module with its nn.functional form).

Each: values against a float64 NumPy reference written here, float64 gradients against finite
differences (near the kinks too) and, at the kinks themselves, PyTorch's one-sided choices;
values and gradients against PyTorch's (when torch is installed; it is not a dependency);
signatures, reprs, parameter and buffer names as PyTorch's; the same results on cudasim and
the emulated cuda as on the CPU; the in-place forms; and errors that name the function, the
argument, what was expected and what arrived."""
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu

# float64 results against PyTorch's float64 ones, computed in another order: a few ulp.
TOL64 = dict(rtol=1e-10, atol=1e-12)
# against the NumPy references here, which take other (equally exact) formulas
REF = dict(rtol=1e-12, atol=1e-14)


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(shape, seed=0, low=-1.0, high=1.0):
    """A float64 leaf that requires grad, for gradcheck."""
    return minifw.tensor(rand(shape, seed, low, high), dtype=minifw.float64, requires_grad=True)


def c64(values):
    return minifw.tensor(np.asarray(values, dtype=np.float64))


def signs(shape, seed):
    return c64(np.where(rand(shape, seed) > 0, 1.0, -1.0))


# ---- signatures and reprs --------------------------------------------------------------------

SIGNATURES = {
    nn.Hardswish: "(inplace=False)", nn.Hardsigmoid: "(inplace=False)", nn.Mish: "(inplace=False)",
    nn.SELU: "(inplace=False)", nn.CELU: "(alpha=1.0, inplace=False)", nn.GLU: "(dim=-1)",
    nn.Hardshrink: "(lambd=0.5)", nn.Softshrink: "(lambd=0.5)",
    nn.Threshold: "(threshold, value, inplace=False)",
    nn.RMSNorm: "(normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None)",
    nn.InstanceNorm1d: "(num_features, eps=1e-05, momentum=0.1, affine=False, "
                       "track_running_stats=False, device=None, dtype=None, *, bias=True)",
    nn.InstanceNorm2d: "(num_features, eps=1e-05, momentum=0.1, affine=False, "
                       "track_running_stats=False, device=None, dtype=None, *, bias=True)",
    nn.ZeroPad1d: "(padding)", nn.ZeroPad2d: "(padding)", nn.ConstantPad1d: "(padding, value)",
    nn.ConstantPad2d: "(padding, value)", nn.ReflectionPad1d: "(padding)",
    nn.ReflectionPad2d: "(padding)", nn.ReplicationPad1d: "(padding)",
    nn.ReplicationPad2d: "(padding)", nn.CircularPad1d: "(padding)", nn.CircularPad2d: "(padding)",
    nn.PixelShuffle: "(upscale_factor)", nn.PixelUnshuffle: "(downscale_factor)",
    nn.ChannelShuffle: "(groups)",
    nn.TripletMarginLoss: "(margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None, "
                          "reduce=None, reduction='mean')",
    nn.MarginRankingLoss: "(margin=0.0, size_average=None, reduce=None, reduction='mean')",
    nn.CosineEmbeddingLoss: "(margin=0.0, size_average=None, reduce=None, reduction='mean')",
    nn.PoissonNLLLoss: "(log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, "
                       "reduction='mean')",
    nn.GaussianNLLLoss: "(*, full=False, eps=1e-06, reduction='mean')",
    nn.SoftMarginLoss: "(size_average=None, reduce=None, reduction='mean')",
    nn.MultiLabelSoftMarginLoss: "(weight=None, size_average=None, reduce=None, reduction='mean')",
    nn.HingeEmbeddingLoss: "(margin=1.0, size_average=None, reduce=None, reduction='mean')",
    F.hardswish: "(input, inplace=False)", F.hardsigmoid: "(input, inplace=False)",
    F.mish: "(input, inplace=False)", F.selu: "(input, inplace=False)",
    F.celu: "(input, alpha=1.0, inplace=False)", F.glu: "(input, dim=-1)",
    F.logsigmoid: "(input)", F.softsign: "(input)", F.tanhshrink: "(input)",
    F.hardshrink: "(input, lambd=0.5)", F.softshrink: "(input, lambd=0.5)",
    F.threshold: "(input, threshold, value, inplace=False)",
    F.rms_norm: "(input, normalized_shape, weight=None, eps=None)",
    F.instance_norm: "(input, running_mean=None, running_var=None, weight=None, bias=None, "
                     "use_input_stats=True, momentum=0.1, eps=1e-05)",
    F.pixel_shuffle: "(input, upscale_factor)", F.pixel_unshuffle: "(input, downscale_factor)",
    F.channel_shuffle: "(input, groups)",
    F.triplet_margin_loss: "(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, "
                           "size_average=None, reduce=None, reduction='mean')",
    F.margin_ranking_loss: "(input1, input2, target, margin=0, size_average=None, reduce=None, "
                           "reduction='mean')",
    F.cosine_embedding_loss: "(input1, input2, target, margin=0, size_average=None, reduce=None, "
                             "reduction='mean')",
    F.poisson_nll_loss: "(input, target, log_input=True, full=False, size_average=None, eps=1e-08, "
                        "reduce=None, reduction='mean')",
    F.gaussian_nll_loss: "(input, target, var, full=False, eps=1e-06, reduction='mean')",
    F.soft_margin_loss: "(input, target, size_average=None, reduce=None, reduction='mean')",
    F.multilabel_soft_margin_loss: "(input, target, weight=None, size_average=None, reduce=None, "
                                   "reduction='mean')",
    F.hinge_embedding_loss: "(input, target, margin=1.0, size_average=None, reduce=None, "
                            "reduction='mean')",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


def test_signatures_agree_with_torchs_own():
    torch = pytest.importorskip("torch")
    checked = 0
    for fn in SIGNATURES:
        functional = not isinstance(fn, type)
        theirs = getattr(torch.nn.functional if functional else torch.nn, fn.__name__)
        try:
            params = inspect.signature(theirs).parameters
        except ValueError:  # a builtin (logsigmoid, hardshrink, pixel_shuffle, ...)
            continue
        mine = inspect.signature(fn).parameters
        assert list(mine) == list(params), fn.__name__
        assert [p.default for p in mine.values()] == [p.default for p in params.values()], fn.__name__
        assert [p.kind for p in mine.values()] == [p.kind for p in params.values()], fn.__name__
        checked += 1
    assert checked > 30


REPRS = [  # source text, run against minifw here and against torch below
    ("nn.Hardswish(True)", "Hardswish()"), ("nn.Hardsigmoid()", "Hardsigmoid()"),
    ("nn.Mish()", "Mish()"), ("nn.Mish(inplace=True)", "Mish(inplace=True)"),
    ("nn.SELU(True)", "SELU(inplace=True)"), ("nn.CELU()", "CELU(alpha=1.0)"),
    ("nn.CELU(2.0, True)", "CELU(alpha=2.0, inplace=True)"), ("nn.GLU()", "GLU(dim=-1)"),
    ("nn.LogSigmoid()", "LogSigmoid()"), ("nn.Softsign()", "Softsign()"),
    ("nn.Tanhshrink()", "Tanhshrink()"), ("nn.Hardshrink()", "Hardshrink(0.5)"),
    ("nn.Softshrink(1)", "Softshrink(1)"), ("nn.Threshold(0.1, 20)", "Threshold(threshold=0.1, value=20)"),
    ("nn.Threshold(0.1, 20, True)", "Threshold(threshold=0.1, value=20, inplace=True)"),
    ("nn.RMSNorm(4)", "RMSNorm((4,), eps=None, elementwise_affine=True)"),
    ("nn.RMSNorm([3, 4], eps=1e-3, elementwise_affine=False)",
     "RMSNorm((3, 4), eps=0.001, elementwise_affine=False)"),
    ("nn.InstanceNorm1d(3)", "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                             "track_running_stats=False)"),
    ("nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=None)",
     "InstanceNorm2d(3, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)"),
    ("nn.InstanceNorm2d(2, affine=True, bias=False)",
     "InstanceNorm2d(2, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=False)"),
    ("nn.ZeroPad1d(2)", "ZeroPad1d((2, 2))"), ("nn.ZeroPad2d((1, 2, 3, 4))", "ZeroPad2d((1, 2, 3, 4))"),
    ("nn.ConstantPad1d(2, 3.5)", "ConstantPad1d(padding=(2, 2), value=3.5)"),
    ("nn.ConstantPad2d((1, 2, 3, 4), 1)", "ConstantPad2d(padding=(1, 2, 3, 4), value=1)"),
    ("nn.ReflectionPad1d(2)", "ReflectionPad1d((2, 2))"),
    ("nn.ReflectionPad2d(1)", "ReflectionPad2d((1, 1, 1, 1))"),
    ("nn.ReplicationPad1d((1, 2))", "ReplicationPad1d((1, 2))"),
    ("nn.ReplicationPad2d(2)", "ReplicationPad2d((2, 2, 2, 2))"),
    ("nn.CircularPad1d(2)", "CircularPad1d((2, 2))"),
    ("nn.CircularPad2d([1, 2, 3, 4])", "CircularPad2d((1, 2, 3, 4))"),
    ("nn.PixelShuffle(2)", "PixelShuffle(upscale_factor=2)"),
    ("nn.PixelUnshuffle(3)", "PixelUnshuffle(downscale_factor=3)"),
    ("nn.ChannelShuffle(2)", "ChannelShuffle(groups=2)"),
    ("nn.TripletMarginLoss(margin=2.0, swap=True)", "TripletMarginLoss()"),
    ("nn.GaussianNLLLoss(full=True)", "GaussianNLLLoss()"),
    ("nn.MultiLabelSoftMarginLoss()", "MultiLabelSoftMarginLoss()"),
]


@pytest.mark.parametrize("source, text", REPRS, ids=[s for s, _ in REPRS])
def test_reprs_are_pytorchs(source, text):
    assert repr(eval(source, {"nn": nn})) == text


def test_reprs_equal_torchs():
    torch = pytest.importorskip("torch")
    for source, _ in REPRS:
        assert repr(eval(source, {"nn": nn})) == repr(eval(source, {"nn": torch.nn})), source


def test_parameter_and_buffer_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    for source in ("nn.RMSNorm((2, 3))", "nn.RMSNorm(3, elementwise_affine=False)",
                   "nn.InstanceNorm1d(3)", "nn.InstanceNorm2d(3, affine=True)",
                   "nn.InstanceNorm2d(3, track_running_stats=True)",
                   "nn.InstanceNorm1d(3, affine=True, track_running_stats=True, bias=False)",
                   "nn.MultiLabelSoftMarginLoss(weight=lib.ones(3))", "nn.Mish()"):
        mine = eval(source, {"nn": nn, "lib": minifw})
        theirs = eval(source, {"nn": torch.nn, "lib": torch})
        assert list(mine.state_dict()) == list(theirs.state_dict()), source
        assert list(mine._parameters) == list(theirs._parameters), source
        assert list(mine._buffers) == list(theirs._buffers), source
        for name, t in theirs.state_dict().items():
            assert mine.state_dict()[name].shape == tuple(t.shape), (source, name)
            np.testing.assert_array_equal(mine.state_dict()[name].numpy(), t.numpy())


# ---- values against NumPy references ---------------------------------------------------------------

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _glu0(x):
    return x[:x.shape[0] // 2] * _sigmoid(x[x.shape[0] // 2:])


ACTIVATIONS = {  # name: (minifw call, NumPy reference); inputs in [-5, 5] (no overflow here)
    "hardswish": (F.hardswish, lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6),
    "mish": (F.mish, lambda x: x * np.tanh(np.log(1 + np.exp(x)))),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1))),
    "celu": (F.celu, lambda x: np.maximum(0, x) + np.minimum(0, np.exp(x) - 1)),
    "celu_alpha": (lambda x: F.celu(x, 2.5),
                   lambda x: np.maximum(0, x) + np.minimum(0, 2.5 * (np.exp(x / 2.5) - 1))),
    "logsigmoid": (F.logsigmoid, lambda x: np.log(_sigmoid(x))),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "hardshrink": (F.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0.0)),
    "hardshrink_lambd": (lambda x: F.hardshrink(x, 2.0), lambda x: np.where(np.abs(x) > 2, x, 0.0)),
    "softshrink": (F.softshrink, lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0))),
    "softshrink_lambd": (lambda x: F.softshrink(x, 1.5),
                         lambda x: np.where(x > 1.5, x - 1.5, np.where(x < -1.5, x + 1.5, 0.0))),
    "threshold": (lambda x: F.threshold(x, 0.25, -7.0), lambda x: np.where(x > 0.25, x, -7.0)),
    "glu": (F.glu, lambda x: x[..., :x.shape[-1] // 2] * _sigmoid(x[..., x.shape[-1] // 2:])),
    "glu_dim0": (lambda x: F.glu(x.transpose(0, -1), 0),  # a strided view, halved along dim 0
                 lambda x: _glu0(np.swapaxes(x, 0, -1))),
}
SHAPES = [(1, 6), (3, 2, 5, 4), (6,), (2, 7, 6)]  # odd sizes, N = 1, 1-D; GLU halves the last dim


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_equal_numpy(name):
    fn, reference = ACTIVATIONS[name]
    for i, shape in enumerate(SHAPES):
        x = rand(shape, i, -5, 5)
        x.reshape(-1)[:4] = [0.0, -3.0, 3.0, 0.5]  # kinks of several of them
        got = fn(c64(x))
        assert got.dtype == minifw.float64 and got.shape == reference(x).shape
        np.testing.assert_allclose(got.numpy(), reference(x), **REF, err_msg=f"{name} {shape}")
        assert fn(c64(x).float()).dtype == minifw.float32


def test_logsigmoid_and_mish_are_finite_for_large_inputs():
    x = c64([-800.0, -40.0, 40.0, 800.0]).requires_grad_()
    y = F.logsigmoid(x)
    np.testing.assert_allclose(y.detach().numpy(), [-800.0, -40.0, -math.exp(-40.0), 0.0], rtol=1e-15)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, math.exp(-40.0), 0.0], rtol=1e-12)
    x.grad = None
    m = F.mish(x)
    np.testing.assert_allclose(m.detach().numpy(), [-0.0, -40.0 * math.exp(-40.0), 40.0, 800.0],
                               rtol=1e-12, atol=1e-300)
    m.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(x.grad.numpy()[2:], [1.0, 1.0], rtol=1e-12)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # float32: no overflow either
        assert np.isfinite(F.logsigmoid(x.detach().float()).numpy()).all()
        assert np.isfinite(F.selu(x.detach().float()).numpy()).all()


def test_nan_passes_through_shrinks_and_threshold():
    x = c64([math.nan, 0.2, 3.0])
    for y in (F.hardshrink(x), F.softshrink(x), F.threshold(x, 0.5, 9.0)):
        assert math.isnan(y.numpy()[0])


def _rms_reference(x, k, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - k, x.ndim))
    y = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


def _instance_reference(x, w=None, b=None, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))


def test_rms_norm_equals_numpy():
    for i, (shape, k) in enumerate([((1, 5), 1), ((3, 4, 5), 2), ((7,), 1), ((2, 3, 1), 1)]):
        x = rand(shape, i, -3, 3)
        w = rand(shape[len(shape) - k:], i + 10)
        np.testing.assert_allclose(F.rms_norm(c64(x), shape[len(shape) - k:]).numpy(),
                                   _rms_reference(x, k), **REF)
        np.testing.assert_allclose(F.rms_norm(c64(x), list(shape[len(shape) - k:]), c64(w), 0.1).numpy(),
                                   _rms_reference(x, k, w, 0.1), **REF)
    x32 = rand((2, 3), 4).astype(np.float32)  # eps=None: float32's own epsilon
    np.testing.assert_allclose(F.rms_norm(minifw.tensor(x32), (3,)).numpy(), _rms_reference(x32, 1),
                               rtol=1e-6)
    zero = F.rms_norm(c64(np.zeros((2, 3))), (3,))
    assert (zero.numpy() == 0).all()  # eps keeps a zero row finite


def test_instance_norm_equals_numpy():
    for i, shape in enumerate([(1, 3, 5), (2, 4, 3, 3), (3, 1, 7)]):
        x = rand(shape, i, -3, 3)
        w, b = rand(shape[1], i + 1), rand(shape[1], i + 2)
        np.testing.assert_allclose(F.instance_norm(c64(x)).numpy(), _instance_reference(x), **REF)
        np.testing.assert_allclose(F.instance_norm(c64(x), weight=c64(w), bias=c64(b), eps=0.1).numpy(),
                                   _instance_reference(x, w, b, 0.1), **REF)


def test_instance_norm_running_statistics():
    x = rand((3, 2, 5), 1, -2, 2)
    mean, var = c64([0.5, -1.0]), c64([2.0, 0.5])
    F.instance_norm(c64(x), mean, var, momentum=0.25)
    per_instance_var = x.var(axis=2, ddof=1)  # unbiased, as batch norm's running variance
    np.testing.assert_allclose(mean.numpy(), 0.75 * np.array([0.5, -1.0])
                               + 0.25 * x.mean(axis=2).mean(0), **REF)
    np.testing.assert_allclose(var.numpy(), 0.75 * np.array([2.0, 0.5])
                               + 0.25 * per_instance_var.mean(0), **REF)
    # use_input_stats=False: normalized by the running statistics, which stay as they are
    before = mean.numpy().copy()
    y = F.instance_norm(c64(x), mean, var, use_input_stats=False, eps=0.0)
    np.testing.assert_allclose(y.numpy(), (x - before[:, None]) / np.sqrt(var.numpy()[:, None]), **REF)
    np.testing.assert_array_equal(mean.numpy(), before)


def test_pixel_shuffles_equal_numpy():
    for i, (shape, r) in enumerate([((1, 4, 3, 5), 2), ((2, 9, 2, 1), 3), ((2, 3, 8, 1, 1), 2),
                                    ((4, 3, 3), 2)]):
        x = rand(shape, i)
        *batch, c, h, w = shape
        want = x.reshape(*batch, c // (r * r), r, r, h, w)
        k = len(batch)
        want = want.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2).reshape(
            *batch, c // (r * r), h * r, w * r)
        got = F.pixel_shuffle(c64(x), r)
        np.testing.assert_array_equal(got.numpy(), want)
        # out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w]
        assert got.numpy()[(0,) * k + (0, r - 1, 0)] == x[(0,) * k + (r * (r - 1), 0, 0)]
        np.testing.assert_array_equal(F.pixel_unshuffle(got, r).numpy(), x)
    x = rand((2, 6, 3), 5)
    got = F.channel_shuffle(c64(x), 3).numpy()
    np.testing.assert_array_equal(got, x[:, [0, 2, 4, 1, 3, 5]])


def _cosine(a, b):
    """The cosine along dim 1, each squared norm plus 1e-12 (PyTorch's guard against a zero
    vector, which cosine_embedding_loss keeps)."""
    return (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))


LOSS_REFERENCES = {  # name: (minifw call over reduction, NumPy reference of the unreduced loss, inputs)
    "triplet_margin_loss": (
        lambda a, p, n, r: F.triplet_margin_loss(a, p, n, margin=1.5, reduction=r),
        lambda a, p, n: np.maximum(np.linalg.norm(a - p + 1e-6, axis=-1)
                                   - np.linalg.norm(a - n + 1e-6, axis=-1) + 1.5, 0),
        lambda: [rand((5, 3), 1), rand((5, 3), 2), rand((5, 3), 3)]),
    "triplet_margin_loss_p1_swap": (
        lambda a, p, n, r: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r),
        lambda a, p, n: np.maximum(np.abs(a - p + 1e-6).sum(-1) - np.minimum(
            np.abs(a - n + 1e-6).sum(-1), np.abs(p - n + 1e-6).sum(-1)) + 1.0, 0),
        lambda: [rand((1, 4), 1), rand((1, 4), 2), rand((1, 4), 3)]),
    "margin_ranking_loss": (
        lambda a, b, t, r: F.margin_ranking_loss(a, b, t, 0.2, reduction=r),
        lambda a, b, t: np.maximum(-t * (a - b) + 0.2, 0),
        lambda: [rand(7, 1), rand(7, 2), np.sign(rand(7, 3))]),
    "cosine_embedding_loss": (
        lambda a, b, t, r: F.cosine_embedding_loss(a, b, t, 0.1, reduction=r),
        lambda a, b, t: np.where(t == 1, 1 - _cosine(a, b), np.maximum(_cosine(a, b) - 0.1, 0)),
        lambda: [rand((6, 3), 1), rand((6, 3), 2), np.sign(rand(6, 3))]),
    "poisson_nll_loss": (
        lambda x, t, r: F.poisson_nll_loss(x, t, reduction=r),
        lambda x, t: np.exp(x) - t * x,
        lambda: [rand((3, 5), 1), np.floor(rand((3, 5), 2, 0, 5))]),
    "poisson_nll_loss_rate_full": (
        lambda x, t, r: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction=r),
        lambda x, t: x - t * np.log(x + 1e-8) + np.where(
            t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0),
        lambda: [rand((3, 5), 1, 0.1, 3), np.floor(rand((3, 5), 2, 0, 5))]),
    "gaussian_nll_loss": (
        lambda x, t, v, r: F.gaussian_nll_loss(x, t, v, full=True, reduction=r),
        lambda x, t, v: 0.5 * (np.log(v) + (x - t) ** 2 / v) + 0.5 * np.log(2 * np.pi),
        lambda: [rand((4, 3), 1), rand((4, 3), 2), rand((4, 3), 3, 0.1, 2)]),
    "gaussian_nll_loss_clamped_var": (
        lambda x, t, v, r: F.gaussian_nll_loss(x, t, v, eps=0.5, reduction=r),
        lambda x, t, v: 0.5 * (np.log(np.maximum(v, 0.5)) + (x - t) ** 2 / np.maximum(v, 0.5)),
        lambda: [rand((4, 3), 1), rand((4, 3), 2), rand((4, 1), 3, 0.0, 1)]),
    "soft_margin_loss": (
        lambda x, t, r: F.soft_margin_loss(x, t, reduction=r),
        lambda x, t: np.log1p(np.exp(-t * x)),
        lambda: [rand((2, 5), 1, -3, 3), np.sign(rand((2, 5), 2))]),
    "multilabel_soft_margin_loss": (
        lambda x, t, w, r: F.multilabel_soft_margin_loss(x, t, w, reduction=r),
        lambda x, t, w: -(w * (t * np.log(_sigmoid(x)) + (1 - t) * np.log(_sigmoid(-x)))).mean(-1),
        lambda: [rand((4, 3), 1, -3, 3), (rand((4, 3), 2) > 0).astype(float), rand(3, 3, 0.5, 2)]),
    "hinge_embedding_loss": (
        lambda x, t, r: F.hinge_embedding_loss(x, t, 0.7, reduction=r),
        lambda x, t: np.where(t == 1, x, np.maximum(0.7 - x, 0)),
        lambda: [rand((3, 4), 1, 0, 1.5), np.sign(rand((3, 4), 2))]),
}


@pytest.mark.parametrize("name", LOSS_REFERENCES)
def test_losses_equal_numpy_in_each_reduction(name):
    fn, reference, inputs = LOSS_REFERENCES[name]
    arrays = inputs()
    want = reference(*arrays)
    for reduction, reduce in (("none", lambda a: a), ("sum", np.sum), ("mean", np.mean)):
        got = fn(*map(c64, arrays), reduction)
        assert got.shape == np.shape(reduce(want)), (name, reduction)
        np.testing.assert_allclose(got.numpy(), reduce(want), **REF, err_msg=f"{name} {reduction}")


def test_gaussian_nll_loss_takes_a_number_as_var():
    x, t = rand((3, 2), 1), rand((3, 2), 2)
    got = F.gaussian_nll_loss(c64(x), c64(t), 0.25, reduction="none").numpy()
    np.testing.assert_allclose(got, 0.5 * (np.log(0.25) + (x - t) ** 2 / 0.25), **REF)


def test_loss_modules_call_their_functions():
    x, y, z = rand((4, 3), 1), rand((4, 3), 2), rand((4, 3), 3, 0.1, 1)
    t = np.sign(rand(4, 4))
    pairs = [
        (nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True, reduction="sum")(c64(x), c64(y), c64(z)),
         F.triplet_margin_loss(c64(x), c64(y), c64(z), 0.5, 1.0, swap=True, reduction="sum")),
        (nn.MarginRankingLoss(0.3)(c64(x[:, 0]), c64(y[:, 0]), c64(t)),
         F.margin_ranking_loss(c64(x[:, 0]), c64(y[:, 0]), c64(t), 0.3)),
        (nn.CosineEmbeddingLoss(0.2, reduction="none")(c64(x), c64(y), c64(t)),
         F.cosine_embedding_loss(c64(x), c64(y), c64(t), 0.2, reduction="none")),
        (nn.PoissonNLLLoss(False, True, eps=0.1)(c64(z), c64(np.abs(y) * 4)),
         F.poisson_nll_loss(c64(z), c64(np.abs(y) * 4), False, True, eps=0.1)),
        (nn.GaussianNLLLoss(full=True, eps=0.2)(c64(x), c64(y), c64(z)),
         F.gaussian_nll_loss(c64(x), c64(y), c64(z), True, 0.2)),
        (nn.SoftMarginLoss(reduction="sum")(c64(x), c64(np.sign(y))),
         F.soft_margin_loss(c64(x), c64(np.sign(y)), reduction="sum")),
        (nn.MultiLabelSoftMarginLoss(c64([1.0, 2.0, 0.5]))(c64(x), c64(y > 0)),
         F.multilabel_soft_margin_loss(c64(x), c64(y > 0), c64([1.0, 2.0, 0.5]))),
        (nn.HingeEmbeddingLoss(0.4, size_average=False)(c64(z), c64(np.sign(y))),
         F.hinge_embedding_loss(c64(z), c64(np.sign(y)), 0.4, reduction="sum")),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- gradient checks (float64 finite differences) ----------------------------------------------

def _kinks(seed, *points, n=9):
    """Random points plus ones 1e-3 from each kink, on both sides (finite differences of step
    1e-6 stay on one piece)."""
    near = [p + d for p in points for d in (-1e-3, 1e-3)]
    x = rand(n + len(near), seed, -5, 5)
    x[:len(near)] = near
    return minifw.tensor(x.reshape(1, -1), requires_grad=True)


GRADS = {  # name: (function, () -> inputs)
    "hardswish": (lambda x: F.hardswish(x), lambda: [_kinks(0, -3.0, 3.0)]),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), lambda: [_kinks(1, -3.0, 3.0)]),
    "mish": (lambda x: F.mish(x), lambda: [_kinks(2, 0.0)]),
    "selu": (lambda x: F.selu(x), lambda: [_kinks(3, 0.0)]),
    "celu": (lambda x: F.celu(x, 0.7), lambda: [_kinks(4, 0.0)]),
    "glu": (lambda x: F.glu(x), lambda: [t64((3, 4))]),
    "glu_dim1": (lambda x: F.glu(x, 1), lambda: [t64((2, 6, 3), 1, -3, 3)]),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda: [_kinks(5, 0.0)]),
    "softsign": (lambda x: F.softsign(x), lambda: [_kinks(6, 0.0)]),
    "tanhshrink": (lambda x: F.tanhshrink(x), lambda: [_kinks(7, 0.0)]),
    "hardshrink": (lambda x: F.hardshrink(x, 0.75), lambda: [_kinks(8, -0.75, 0.75)]),
    "softshrink": (lambda x: F.softshrink(x), lambda: [_kinks(9, -0.5, 0.5)]),
    "threshold": (lambda x: F.threshold(x, 0.3, 2.0), lambda: [_kinks(10, 0.3)]),
    "rms_norm": (lambda x, w: F.rms_norm(x, (3, 4), w), lambda: [t64((2, 3, 4)), t64((3, 4), 1)]),
    "rms_norm_plain_eps": (lambda x: F.rms_norm(x, [5], eps=0.1), lambda: [t64((1, 5), 2)]),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                      lambda: [t64((2, 3, 5)), t64((3,), 1), t64((3,), 2)]),
    "instance_norm_2d_eval": (
        lambda x, w: F.instance_norm(x, c64([0.1, -0.2]).to(x.dtype), c64([0.5, 2.0]).to(x.dtype), w,
                                     use_input_stats=False),
        lambda: [t64((1, 2, 3, 3)), t64((2,), 1)]),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), lambda: [t64((1, 8, 2, 3))]),
    "pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 2), lambda: [t64((2, 1, 4, 2))]),
    "channel_shuffle": (lambda x: F.channel_shuffle(x, 2), lambda: [t64((2, 4, 3))]),
    "triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n, reduction="none"),
                            lambda: [t64((4, 3), 1), t64((4, 3), 2), t64((4, 3), 3)]),
    "triplet_margin_loss_swap_p3": (lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0, 3, swap=True),
                                    lambda: [t64((3,), 1), t64((3,), 2), t64((3,), 3)]),
    "margin_ranking_loss": (lambda a, b: F.margin_ranking_loss(a, b, signs(6, 1).to(a.dtype), 0.1,
                                                                  reduction="sum"),
                            lambda: [t64(6, 2), t64(6, 3)]),
    "cosine_embedding_loss": (lambda a, b: F.cosine_embedding_loss(a, b, signs(5, 2), -0.5),
                              lambda: [t64((5, 3), 1), t64((5, 3), 2)]),
    "poisson_nll_loss": (lambda x: F.poisson_nll_loss(x, c64([[0.0, 1.0, 2.0], [3.0, 5.0, 1.5]]).to(x.dtype),
                                                      full=True),
                         lambda: [t64((2, 3), 1)]),
    "poisson_nll_loss_rate": (lambda x: F.poisson_nll_loss(x, c64([0.0, 1.0, 4.0]).to(x.dtype), False,
                                                           reduction="none"),
                              lambda: [t64(3, 1, 0.2, 2)]),
    "gaussian_nll_loss": (lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="sum"),
                          lambda: [t64((3, 2), 1), t64((3, 2), 2), t64((3,), 3, 0.2, 1)]),
    "soft_margin_loss": (lambda x: F.soft_margin_loss(x, signs((2, 3), 1).to(x.dtype)),
                         lambda: [t64((2, 3), 4, -3, 3)]),
    "multilabel_soft_margin_loss": (
        lambda x, w: F.multilabel_soft_margin_loss(x, c64([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]).to(x.dtype), w,
                                                   reduction="none"),
        lambda: [t64((2, 3), 1, -3, 3), t64(3, 2)]),
    "hinge_embedding_loss": (lambda x: F.hinge_embedding_loss(x, signs((3, 3), 2), 0.5),
                             lambda: [t64((3, 3), 3, 0, 1)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, inputs = GRADS[name]
    gradcheck(fn, inputs())


KINK_GRADIENTS = {  # name: (function, x, d/dx at x): PyTorch's choice where one side's is taken
    "hardswish": (lambda x: F.hardswish(x), [-3.0, 3.0, 0.0], [0.0, 1.0, 0.5]),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), [-3.0, 3.0, 0.0], [0.0, 0.0, 1 / 6]),
    "selu": (lambda x: F.selu(x), [0.0], [SELU_SCALE * SELU_ALPHA]),
    "celu": (lambda x: F.celu(x, 2.0), [0.0], [1.0]),
    "hardshrink": (lambda x: F.hardshrink(x), [-0.5, 0.5], [0.0, 0.0]),
    "softshrink": (lambda x: F.softshrink(x), [-0.5, 0.5], [0.0, 0.0]),
    "threshold": (lambda x: F.threshold(x, 1.0, 0.0), [1.0], [0.0]),
    "softsign": (lambda x: F.softsign(x), [0.0], [1.0]),
    "margin_ranking_loss": (lambda x: F.margin_ranking_loss(x, c64([0.5]), c64([1.0]), 0.5,
                                                            reduction="none"), [1.0], [-1.0]),
    "hinge_embedding_loss": (lambda x: F.hinge_embedding_loss(x, c64([-1.0]), 0.5, reduction="none"),
                             [0.5], [-1.0]),
    "triplet_at_margin": (lambda a: F.triplet_margin_loss(a, c64([[0.0]]), c64([[2.0]]), margin=1.0,
                                                          eps=0.0, reduction="none"), [[0.5]], [[2.0]]),
}


@pytest.mark.parametrize("name", KINK_GRADIENTS)
def test_gradients_at_the_kinks_are_pytorchs(name):
    fn, x, want = KINK_GRADIENTS[name]
    x = c64(x).requires_grad_()
    fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-15)


def test_float32_stays_float32():
    for name, (fn, inputs) in GRADS.items():
        xs = [t.detach().float().requires_grad_() for t in inputs()]
        out = fn(*xs)
        assert out.dtype == minifw.float32, name
        out.sum().backward()
        assert all(x.grad.dtype == minifw.float32 for x in xs), name


# ---- values and gradients against PyTorch's ------------------------------------------------------

_TORCH_NAMES = ("hardswish", "hardsigmoid", "mish", "selu", "celu", "glu", "logsigmoid", "softsign",
                "tanhshrink", "hardshrink", "softshrink", "threshold", "rms_norm", "instance_norm",
                "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "triplet_margin_loss",
                "margin_ranking_loss", "cosine_embedding_loss", "poisson_nll_loss",
                "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
                "hinge_embedding_loss")


class _torch_functional:
    """Within this block F's names (and c64, signs) are torch's, so GRADS' functions and
    KINK_GRADIENTS' run on PyTorch."""

    def __init__(self, torch):
        self.torch, self.saved = torch, {}

    def __enter__(self):
        torch, module = self.torch, globals()
        for name in _TORCH_NAMES:
            self.saved[name] = getattr(F, name)
            setattr(F, name, getattr(torch.nn.functional, name))
        self.helpers = module["c64"], module["signs"]
        module["c64"] = lambda v: torch.tensor(np.asarray(v, dtype=np.float64))
        module["signs"] = lambda shape, seed: torch.tensor(np.where(rand(shape, seed) > 0, 1.0, -1.0))

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(F, name, fn)
        globals()["c64"], globals()["signs"] = self.helpers


# PyTorch's hardsigmoid gradient in float64 is float32's 1/6 (0.1666666716...): 3e-8 relative
LOOSER = {"hardsigmoid": dict(rtol=1e-7, atol=0),
          # and its celu takes 1/alpha in float32 (the exponential piece's gradient: 1e-7 relative)
          "celu": dict(rtol=1e-6, atol=0)}


def test_values_and_gradients_equal_torchs_in_float64():
    torch = pytest.importorskip("torch")
    for name, (fn, inputs) in GRADS.items():
        arrays = [t.detach().numpy() for t in inputs()]
        mine = [minifw.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*mine)
        g = rand(tuple(out.shape), 9)
        out.backward(minifw.tensor(g))
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        with _torch_functional(torch):
            want = fn(*theirs)
        want.backward(torch.tensor(g))
        tol = LOOSER.get(name, TOL64)
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), **tol, err_msg=name)
        for i, (a, b) in enumerate(zip(mine, theirs)):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol,
                                       err_msg=f"{name}: gradient {i}")


def test_kink_gradients_are_torchs():
    torch = pytest.importorskip("torch")
    for name, (fn, x, want) in KINK_GRADIENTS.items():
        t = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
        with _torch_functional(torch):
            fn(t).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-7, err_msg=name)


def test_losses_equal_torchs_in_each_reduction():
    torch = pytest.importorskip("torch")
    for name, (fn, _, inputs) in LOSS_REFERENCES.items():
        arrays = inputs()
        for reduction in ("none", "mean", "sum"):
            got = fn(*map(c64, arrays), reduction).numpy()
            with _torch_functional(torch):
                want = fn(*map(torch.tensor, arrays), reduction).numpy()
            np.testing.assert_allclose(got, want, **TOL64, err_msg=f"{name} {reduction}")


def test_large_inputs_equal_torchs():
    torch = pytest.importorskip("torch")
    x = np.array([-800.0, -40.0, -3.0, 0.0, 3.0, 25.0, 800.0])
    for name in ("logsigmoid", "mish", "selu", "softsign", "tanhshrink", "hardswish"):
        a, b = minifw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, w = getattr(F, name)(a), getattr(torch.nn.functional, name)(b)
        y.sum().backward(), w.sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), w.detach().numpy(), **TOL64, err_msg=name)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL64, err_msg=name)
    t = np.sign(rand(7, 1))
    got = F.soft_margin_loss(c64(x), c64(t), reduction="none").numpy()
    want = torch.nn.functional.soft_margin_loss(torch.tensor(x), torch.tensor(t), reduction="none")
    finite = np.isfinite(want.numpy())  # PyTorch's log1p(exp(800)) is inf; this one is 800
    np.testing.assert_allclose(got[finite], want.numpy()[finite], **TOL64)
    np.testing.assert_allclose(got[~finite], np.abs(x[~finite]), **TOL64)


def test_modules_equal_torchs_after_loading_their_state():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    pairs = [
        ("RMSNorm((3, 4))", (2, 3, 4)), ("RMSNorm(4, eps=1e-3)", (5, 4)),
        ("InstanceNorm1d(3, affine=True)", (2, 3, 5)), ("InstanceNorm1d(3)", (3, 6)),
        ("InstanceNorm2d(2, affine=True, bias=False)", (2, 2, 3, 3)),
        ("InstanceNorm2d(2, track_running_stats=True)", (2, 2, 3, 4)),
        ("InstanceNorm2d(2, affine=True, track_running_stats=True, momentum=None)", (3, 2, 2, 3)),
    ]
    for source, shape in pairs:
        mine, theirs = eval("nn." + source), eval("torch.nn." + source)
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(-1, 1)
        mine.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        mine.double(), theirs.double()
        for step in range(2):  # training (updates any running statistics), then eval
            x = rand(shape, step)
            a, b = minifw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            y, w = mine(a), theirs(b)
            np.testing.assert_allclose(y.detach().numpy(), w.detach().numpy(), **TOL64, err_msg=source)
            y.sum().backward()
            w.sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=source)
            for k, v in theirs.state_dict().items():
                np.testing.assert_allclose(mine.state_dict()[k].numpy(), v.numpy(), **TOL64,
                                           err_msg=f"{source}: {k}")
            mine.eval(), theirs.eval()


PADS = ["ZeroPad1d(2)", "ZeroPad1d((0, 3))", "ZeroPad2d((1, 0, 2, 3))", "ConstantPad1d((2, 1), -1.5)",
        "ConstantPad2d(1, 3.0)", "ReflectionPad1d((2, 1))", "ReflectionPad2d((1, 2, 0, 2))",
        "ReplicationPad1d(3)", "ReplicationPad2d((2, 0, 1, 3))", "CircularPad1d((1, 2))",
        "CircularPad2d((2, 1, 1, 2))", "ZeroPad2d((-1, 1, 0, -1))"]


def test_padding_modules_equal_torchs():
    torch = pytest.importorskip("torch")
    for source in PADS:
        for shape in ((1, 2, 4, 5), (3, 4, 3)) if "2d" in source else ((1, 2, 5), (3, 4)):
            x = rand(shape, 1)
            a = minifw.tensor(x, requires_grad=True)
            y = eval("nn." + source)(a)
            w = eval("torch.nn." + source)(torch.tensor(x, requires_grad=True))
            np.testing.assert_array_equal(y.detach().numpy(), w.detach().numpy(), err_msg=source)
            g = rand(tuple(y.shape), 2)
            y.backward(minifw.tensor(g))
            want = torch.autograd.grad(eval("torch.nn." + source)(b := torch.tensor(x, requires_grad=True)),
                                       b, torch.tensor(g))[0]
            np.testing.assert_allclose(a.grad.numpy(), want.numpy(), **TOL64, err_msg=source)


def test_padding_modules_pad_as_numpy():
    x = rand((2, 3, 4), 1)
    np.testing.assert_array_equal(nn.ReflectionPad1d((2, 1))(c64(x)).numpy(),
                                  np.pad(x, ((0, 0), (0, 0), (2, 1)), mode="reflect"))
    np.testing.assert_array_equal(nn.ReplicationPad2d((1, 2, 0, 1))(c64(x)).numpy(),
                                  np.pad(x, ((0, 0), (0, 1), (1, 2)), mode="edge"))
    np.testing.assert_array_equal(nn.CircularPad2d(1)(c64(x)).numpy(),
                                  np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="wrap"))
    np.testing.assert_array_equal(nn.ConstantPad2d((0, 1, 2, 0), 7.0)(c64(x)).numpy(),
                                  np.pad(x, ((0, 0), (2, 0), (0, 1)), constant_values=7.0))
    np.testing.assert_array_equal(nn.ZeroPad1d(1)(c64(x)).numpy(), np.pad(x, ((0, 0), (0, 0), (1, 1))))


# ---- the same results on the devices ------------------------------------------------------------

def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "activations": (lambda: [_x(2, 3, 8) * 4],
                    lambda x: F.hardswish(x) + F.hardsigmoid(x) + F.mish(x) + F.selu(x)
                    + F.celu(x, 0.5) + F.logsigmoid(x) + F.softsign(x) + F.tanhshrink(x)
                    + F.hardshrink(x) + F.softshrink(x, 1.0) + F.threshold(x, 0.1, -1.0)
                    + F.glu(x).repeat(1, 1, 2)),
    "norms": (lambda: [_x(2, 3, 4, 5), _x(5, seed=6), _x(3, seed=7), _x(3, seed=8)],
              lambda x, w, g, b: F.rms_norm(x, (5,), w) + F.instance_norm(x, weight=g, bias=b)),
    "shuffles_and_padding": (lambda: [_x(2, 8, 3, 4)],
                             lambda x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2)
                             + F.channel_shuffle(x, 4)
                             + nn.ReflectionPad2d((1, 0, 0, 1))(x)[..., :3, 1:]),
    "losses": (lambda: [_x(4, 5), _x(4, 5, seed=6), _x(4, 5, seed=7)],
               lambda a, b, c: F.triplet_margin_loss(a, b, c) + F.margin_ranking_loss(a, b, c.sign())
               + F.cosine_embedding_loss(a, b, c[:, 0].sign()) + F.poisson_nll_loss(a, b.abs(), full=True)
               + F.gaussian_nll_loss(a, b, c.abs()) + F.soft_margin_loss(a, c.sign())
               + F.multilabel_soft_margin_loss(a, (b > 0).float())
               + F.hinge_embedding_loss(a, c.sign())),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


def test_modules_move_to_the_device_with_their_state(dev):
    model = nn.Sequential(nn.ReflectionPad2d(1), nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
                          nn.PixelShuffle(2), nn.Mish(), nn.RMSNorm(8), nn.Hardswish())
    model.to(dev)
    y = model(_x(2, 4, 3, 2).to(dev))
    assert y.shape == (2, 1, 10, 8) and y.device == dev
    y.sum().backward()
    assert all(p.grad.device == dev for p in model.parameters())
    assert model[1].running_mean.device == dev and float(model[1].running_mean.abs().sum().cpu()) > 0


# ---- in-place forms ------------------------------------------------------------------------------

INPLACE = {"hardswish": (F.hardswish, {}), "hardsigmoid": (F.hardsigmoid, {}), "mish": (F.mish, {}),
           "selu": (F.selu, {}), "celu": (F.celu, {"alpha": 0.5}),
           "threshold": (F.threshold, {"threshold": 0.2, "value": -3.0})}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_forms_write_input_and_keep_the_gradient(name):
    fn, kwargs = INPLACE[name]
    x = t64((3, 5), 1, -4, 4)
    want = fn(x, **kwargs)
    want.backward(c64(rand((3, 5), 2)))
    expected_grad = x.grad.numpy().copy()
    x.grad = None
    h = x * 1.0  # a non-leaf: in place is allowed, and recorded
    version = h._version
    out = fn(h, **kwargs, inplace=True)
    assert out is h and h._version > version
    np.testing.assert_array_equal(h.detach().numpy(), want.detach().numpy())
    h.backward(c64(rand((3, 5), 2)))
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)
    module = {"hardswish": nn.Hardswish, "hardsigmoid": nn.Hardsigmoid, "mish": nn.Mish,
              "selu": nn.SELU, "celu": nn.CELU, "threshold": nn.Threshold}[name]
    with minifw.no_grad():
        z = x.detach().clone()
        assert module(**kwargs, inplace=True)(z) is z
        np.testing.assert_array_equal(z.numpy(), want.detach().numpy())


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        F.mish(t64(3), inplace=True)


def test_inplace_on_memory_a_graph_saved_is_caught():
    x = t64(4, 1)
    h = x * 2.0
    y = F.selu(h)           # saves h
    F.hardswish(h, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- errors --------------------------------------------------------------------------------------

ERRORS = [  # (call, exception type, words the message must hold)
    (lambda: F.hardswish(np.ones(3)), TypeError, ["hardswish", "input", "minifw.Tensor", "ndarray"]),
    (lambda: F.mish(c64([1.0]), inplace=1), TypeError, ["mish", "inplace"]),
    (lambda: F.celu(c64([1.0]), alpha=0.0), ValueError, ["celu", "alpha", "0"]),
    (lambda: F.celu(c64([1.0]), alpha="1"), TypeError, ["celu", "alpha", "str"]),
    (lambda: F.softshrink(c64([1.0]), -1.0), ValueError, ["softshrink", "lambd", ">= 0", "-1.0"]),
    (lambda: F.threshold(c64([1.0]), math.nan, 0.0), ValueError, ["threshold", "finite", "nan"]),
    (lambda: F.threshold(c64([1.0]).float(), 0.0, 1e40), ValueError, ["threshold", "value", "float32"]),
    (lambda: F.glu(c64([[1.0, 2.0, 3.0]])), ValueError, ["glu", "even", "size 3"]),
    (lambda: F.glu(c64([[1.0, 2.0]]), dim=2), IndexError, ["glu", "dim"]),
    (lambda: F.glu(c64(1.0)), ValueError, ["glu", "0-D"]),
    (lambda: F.logsigmoid(minifw.tensor([1, 2])), TypeError, ["logsigmoid", "int64"]),
    (lambda: F.rms_norm(c64(np.ones((2, 3))), (4,)), ValueError, ["rms_norm", "(*, 4)", "(2, 3)"]),
    (lambda: F.rms_norm(c64(np.ones((2, 3))), 3), TypeError, ["rms_norm", "normalized_shape", "int"]),
    (lambda: F.rms_norm(c64(np.ones((2, 3))), (3,), c64([1.0])), ValueError,
     ["rms_norm", "weight", "(3,)", "(1,)"]),
    (lambda: F.rms_norm(c64(np.ones((2, 3))), (3,), eps=-1.0), ValueError, ["rms_norm", "eps", ">= 0"]),
    (lambda: F.instance_norm(c64(np.ones((2, 3, 1)))), ValueError,
     ["instance_norm", "more than 1 spatial element", "(2, 3, 1)"]),
    (lambda: F.instance_norm(c64(np.ones((2, 3, 4))), c64(np.zeros(2)), c64(np.ones(3))), ValueError,
     ["instance_norm", "running_mean", "(3,)", "(2,)"]),
    (lambda: F.instance_norm(c64(np.ones((2, 3, 4))), use_input_stats=False), ValueError,
     ["instance_norm", "use_input_stats=False", "running_mean"]),
    (lambda: F.instance_norm(c64(np.ones((2, 3, 4))), weight=c64(np.ones(4))), ValueError,
     ["instance_norm", "weight", "(3,)", "(4,)"]),
    (lambda: F.instance_norm(c64(np.ones((2, 3, 4))), c64([0.0]).expand(3), c64(np.ones(3))),
     ValueError, ["instance_norm", "running_mean", "writable", "read-only"]),
    (lambda: nn.InstanceNorm1d(3)(c64(np.ones((1, 3, 4, 4)))), ValueError,
     ["InstanceNorm1d", "2-D (C, L) or 3-D (N, C, L)", "4-D"]),
    (lambda: nn.InstanceNorm2d(3, affine=True)(c64(np.ones((1, 2, 4, 4)))), ValueError,
     ["InstanceNorm2d", "num_features (3)", "2"]),
    (lambda: nn.InstanceNorm2d(0), ValueError, ["InstanceNorm2d", "num_features", ">= 1"]),
    (lambda: nn.RMSNorm(3, eps="x"), TypeError, ["RMSNorm", "eps", "str"]),
    (lambda: F.pixel_shuffle(c64(np.ones((1, 3, 2, 2))), 2), ValueError,
     ["pixel_shuffle", "upscale_factor^2 = 4", "3 channels"]),
    (lambda: F.pixel_shuffle(c64(np.ones((3, 2))), 2), ValueError, ["pixel_shuffle", "3 dims", "2-D"]),
    (lambda: F.pixel_unshuffle(c64(np.ones((1, 1, 3, 4))), 2), ValueError,
     ["pixel_unshuffle", "divisible by downscale_factor", "(1, 1, 3, 4)"]),
    (lambda: nn.PixelShuffle(0), ValueError, ["PixelShuffle", "upscale_factor"]),
    (lambda: nn.PixelUnshuffle(2.0), TypeError, ["PixelUnshuffle", "downscale_factor", "float"]),
    (lambda: F.channel_shuffle(c64(np.ones((1, 5, 2))), 2), ValueError,
     ["channel_shuffle", "divisible by groups", "groups=2"]),
    (lambda: nn.ReflectionPad2d((1, 2)), TypeError, ["ReflectionPad2d", "padding", "4 ints", "(1, 2)"]),
    (lambda: nn.ZeroPad1d(1.5), TypeError, ["ZeroPad1d", "padding", "1.5"]),
    (lambda: nn.ReflectionPad1d(1)(c64(np.ones((1, 1, 2, 3)))), ValueError,
     ["ReflectionPad1d", "2-D (C, W) or 3-D (N, C, W)", "4-D"]),
    (lambda: nn.ReflectionPad1d(3)(c64(np.ones((1, 1, 3)))), ValueError, ["pad", "reflect", "< its size 3"]),
    (lambda: nn.ConstantPad1d(1, "a"), TypeError, ["ConstantPad1d", "value", "str"]),
    (lambda: F.triplet_margin_loss(c64(np.ones((2, 3))), c64(np.ones((2, 3))), c64(np.ones(3))),
     ValueError, ["triplet_margin_loss", "anchor 2-D", "negative 1-D"]),
    (lambda: F.triplet_margin_loss(c64(np.ones(3)), c64(np.ones(3)), c64(np.ones(3)), margin=0.0),
     ValueError, ["triplet_margin_loss", "margin", "greater than 0"]),
    (lambda: nn.TripletMarginLoss(margin=-1.0), ValueError, ["TripletMarginLoss", "margin", "-1.0"]),
    (lambda: F.triplet_margin_loss(c64(np.ones(3)), c64(np.ones(3)), c64(np.ones(3)), reduction="avg"),
     ValueError, ["triplet_margin_loss", "reduction", "'avg'"]),
    (lambda: F.margin_ranking_loss(c64(np.ones(3)), c64(np.ones(3)), c64(np.ones((3, 1)))),
     ValueError, ["margin_ranking_loss", "same number of dims", "(3, 1)"]),
    (lambda: F.margin_ranking_loss(c64(np.ones(3)), c64(np.ones(3)).float(), c64(np.ones(3))),
     TypeError, ["margin_ranking_loss", "input2", "float32", "float64"]),
    (lambda: F.cosine_embedding_loss(c64(np.ones((2, 3))), c64(np.ones((2, 3))), c64(np.ones(3))),
     ValueError, ["cosine_embedding_loss", "target", "(2,)", "(3,)"]),
    (lambda: F.cosine_embedding_loss(c64(np.ones((2, 3))), c64(np.ones((2, 4))), c64(np.ones(2))),
     ValueError, ["cosine_embedding_loss", "same shape", "(2, 4)"]),
    (lambda: F.poisson_nll_loss(c64(np.ones(3)), c64(np.ones(4))), ValueError,
     ["poisson_nll_loss", "input of shape (3,)", "target of shape (4,)", "broadcast"]),
    (lambda: F.poisson_nll_loss(c64(np.ones(3)), c64(np.ones(3)), log_input=None), TypeError,
     ["poisson_nll_loss", "log_input"]),
    (lambda: F.gaussian_nll_loss(c64(np.ones((2, 3))), c64(np.ones((2, 3))), c64(-np.ones((2, 3)))),
     ValueError, ["gaussian_nll_loss", "var", "negative"]),
    (lambda: F.gaussian_nll_loss(c64(np.ones((2, 3))), c64(np.ones((2, 3))), c64(np.ones((3, 2)))),
     ValueError, ["gaussian_nll_loss", "var", "(3, 2)", "(2, 3)"]),
    (lambda: F.gaussian_nll_loss(c64(np.ones(2)), c64(np.ones(2)), -1.0), ValueError,
     ["gaussian_nll_loss", "var", "non-negative", "-1.0"]),
    (lambda: F.gaussian_nll_loss(c64(np.ones(2)), c64(np.ones(2)), c64(np.ones(2)), reduction="batchmean"),
     ValueError, ["gaussian_nll_loss", "reduction", "batchmean"]),
    (lambda: F.soft_margin_loss(c64(np.ones(3)), [1, -1, 1]), TypeError,
     ["soft_margin_loss", "target", "minifw.Tensor", "list"]),
    (lambda: F.multilabel_soft_margin_loss(c64(np.ones((2, 3))), c64(np.ones((2, 3))), c64(np.ones(4))),
     ValueError, ["multilabel_soft_margin_loss", "weight of shape (4,)", "broadcast"]),
    (lambda: F.hinge_embedding_loss(c64(np.ones(3)), c64(np.ones(3)), margin=math.inf), ValueError,
     ["hinge_embedding_loss", "margin", "finite"]),
    (lambda: nn.SoftMarginLoss(reduction="all"), ValueError, ["SoftMarginLoss", "reduction", "'all'"]),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_name_the_function_argument_expected_and_actual(case):
    call, kind, words = ERRORS[case]
    with pytest.raises(kind) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))
