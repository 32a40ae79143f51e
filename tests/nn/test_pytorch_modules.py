"""What everyday PyTorch training scripts use of torch.nn, on minifw: the nn.modules namespace;
Identity, GELU, SiLU, Hardtanh/ReLU6, Softmin/Softmax2d, Dropout1d/2d, adaptive pooling and the
BCE, BCE-with-logits, L1, smooth L1, Huber and KL-divergence losses (forwards against PyTorch's
documented formulas computed here in float64, every reduction, float64 gradient checks, the
same results on cpu, cudasim and the emulated cuda); the vectorized erf behind GELU; forward
hooks, named_modules, get_submodule, non-persistent buffers; nn.init's additions."""
import inspect
import math
import warnings

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import devices, nn
from minifw.functions.special import erf, erfinv
from minifw.nn import init
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu

# float64 forwards are compared with float64 formulas evaluated in another order (a few ulp);
# float32 ones with the float64 formula (float32 rounding of a few operations).
TOL64 = dict(rtol=1e-12, atol=1e-14)
TOL32 = dict(rtol=1e-5, atol=1e-6)


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(shape, seed=0, low=-1.0, high=1.0):
    """A float64 leaf that requires grad, for gradcheck."""
    return minifw.tensor(rand(shape, seed, low, high), dtype=minifw.float64, requires_grad=True)


def c64(values):
    return minifw.tensor(values, dtype=minifw.float64)


def like(x, values):
    """A constant with x's dtype (a loss weight for x)."""
    return minifw.tensor(values, dtype=x.dtype)


def value(t):
    return t.detach().cpu().numpy()


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---- the nn.modules namespace -----------------------------------------------------------------

def test_nn_modules_names_the_same_classes_as_nn():
    from minifw.nn.modules import Linear, Module
    assert Module is nn.Module and Linear is nn.Linear
    assert nn.modules.Module is nn.Module
    for name in nn.modules.__all__:
        assert getattr(nn, name) is getattr(nn.modules, name), name


@pytest.mark.parametrize("path, name", [
    ("module", "Module"), ("container", "Sequential"), ("container", "ModuleList"),
    ("linear", "Linear"), ("linear", "Identity"), ("conv", "Conv2d"), ("pooling", "MaxPool2d"),
    ("pooling", "AdaptiveAvgPool2d"), ("activation", "GELU"), ("activation", "Softmax"),
    ("batchnorm", "BatchNorm2d"), ("batchnorm", "_BatchNorm"), ("dropout", "Dropout2d"),
    ("flatten", "Flatten"), ("sparse", "Embedding"), ("normalization", "LocalResponseNorm"),
    ("loss", "CrossEntropyLoss"), ("loss", "_Loss"), ("loss", "_WeightedLoss"), ("rnn", "LSTM"),
    ("utils", "_pair"),
])
def test_submodules_are_where_pytorch_users_import_them_from(path, name):
    import importlib
    module = importlib.import_module(f"minifw.nn.modules.{path}")
    assert hasattr(module, name)
    if not name.startswith("_"):
        assert getattr(module, name) is getattr(nn, name)


def test_a_custom_loss_can_subclass_loss_as_in_pytorch():
    from minifw.nn.modules.loss import _Loss

    class Doubled(_Loss):
        def forward(self, input, target):
            return 2 * F.l1_loss(input, target, reduction=self.reduction)

    loss = Doubled(reduction="sum")
    assert loss(minifw.tensor([1.0, 2.0]), minifw.tensor([0.0, 0.0])).item() == 6.0


CONSTRUCTORS = {
    nn.Identity: "(*args, **kwargs)",
    nn.GELU: "(approximate='none')",
    nn.SiLU: "(inplace=False)",
    nn.Hardtanh: "(min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None)",
    nn.ReLU6: "(inplace=False)",
    nn.Softmax: "(dim=None)",
    nn.LogSoftmax: "(dim=None)",
    nn.Softmin: "(dim=None)",
    nn.Softmax2d: "()",
    nn.Dropout1d: "(p=0.5, inplace=False)",
    nn.Dropout2d: "(p=0.5, inplace=False)",
    nn.AdaptiveAvgPool2d: "(output_size)",
    nn.AdaptiveMaxPool2d: "(output_size, return_indices=False)",
    nn.L1Loss: "(size_average=None, reduce=None, reduction='mean')",
    nn.SmoothL1Loss: "(size_average=None, reduce=None, reduction='mean', beta=1.0)",
    nn.HuberLoss: "(reduction='mean', delta=1.0)",
    nn.BCELoss: "(weight=None, size_average=None, reduce=None, reduction='mean')",
    nn.BCEWithLogitsLoss: "(weight=None, size_average=None, reduce=None, reduction='mean', "
                          "pos_weight=None)",
    nn.KLDivLoss: "(size_average=None, reduce=None, reduction='mean', log_target=False)",
}

FUNCTIONAL_SIGNATURES = {
    F.gelu: "(input, approximate='none')",
    F.silu: "(input, inplace=False)",
    F.hardtanh: "(input, min_val=-1.0, max_val=1.0, inplace=False)",
    F.relu6: "(input, inplace=False)",
    F.softmin: "(input, dim=None, _stacklevel=3, dtype=None)",
    F.dropout1d: "(input, p=0.5, training=True, inplace=False)",
    F.dropout2d: "(input, p=0.5, training=True, inplace=False)",
    F.adaptive_avg_pool2d: "(input, output_size)",
    F.adaptive_max_pool2d: "(input, output_size, return_indices=False)",
    F.l1_loss: "(input, target, size_average=None, reduce=None, reduction='mean', weight=None)",
    F.smooth_l1_loss: "(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0)",
    F.huber_loss: "(input, target, reduction='mean', delta=1.0, weight=None)",
    F.binary_cross_entropy: "(input, target, weight=None, size_average=None, reduce=None, "
                            "reduction='mean')",
    F.binary_cross_entropy_with_logits: "(input, target, weight=None, size_average=None, "
                                        "reduce=None, reduction='mean', pos_weight=None)",
    F.kl_div: "(input, target, size_average=None, reduce=None, reduction='mean', log_target=False)",
}


@pytest.mark.parametrize("fn", list(CONSTRUCTORS) + list(FUNCTIONAL_SIGNATURES),
                         ids=[c.__name__ for c in CONSTRUCTORS] +
                             [f"F.{f.__name__}" for f in FUNCTIONAL_SIGNATURES])
def test_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == {**CONSTRUCTORS, **FUNCTIONAL_SIGNATURES}[fn]


@pytest.mark.parametrize("module, text", [
    (nn.Identity(54, unused="x"), "Identity()"),
    (nn.GELU(), "GELU(approximate='none')"),
    (nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (nn.SiLU(), "SiLU()"),
    (nn.Hardtanh(-2, 3), "Hardtanh(min_val=-2, max_val=3)"),
    (nn.ReLU6(inplace=True), "ReLU6(inplace=True)"),
    (nn.Softmax(dim=1), "Softmax(dim=1)"),
    (nn.Softmin(dim=0), "Softmin(dim=0)"),
    (nn.Dropout2d(0.2), "Dropout2d(p=0.2, inplace=False)"),
    (nn.AdaptiveAvgPool2d((6, 6)), "AdaptiveAvgPool2d(output_size=(6, 6))"),
    (nn.AdaptiveMaxPool2d(1), "AdaptiveMaxPool2d(output_size=1)"),
    (nn.BCEWithLogitsLoss(), "BCEWithLogitsLoss()"),
], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_reprs_are_pytorchs(module, text):
    assert repr(module) == text


def test_loss_weights_are_buffers_in_the_state_dict():
    loss = nn.BCEWithLogitsLoss(weight=minifw.ones(3), pos_weight=minifw.full((3,), 2.0))
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
    assert list(nn.BCELoss(weight=minifw.ones(2)).state_dict()) == ["weight"]
    assert list(nn.BCEWithLogitsLoss().state_dict()) == []


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: nn.GELU("fast"), ValueError, "approximate must be 'none' or 'tanh', got 'fast'",
                 id="gelu_approximate"),
    pytest.param(lambda: nn.Hardtanh(1.0, -1.0), ValueError, "max_val must be greater than min_val",
                 id="hardtanh_bounds"),
    pytest.param(lambda: nn.Dropout2d(-0.1), ValueError, r"Dropout2d: p must be a probability in \[0, 1\]",
                 id="dropout2d_p"),
    pytest.param(lambda: nn.L1Loss(reduction="avg"), ValueError, "reduction must be one of", id="l1_reduction"),
    pytest.param(lambda: nn.KLDivLoss(reduction="max"), ValueError, "reduction must be one of",
                 id="kl_reduction"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_identity_returns_its_input():
    x = minifw.randn(2, 3)
    assert nn.Identity()(x) is x


# ---- erf ------------------------------------------------------------------------------------------

ERF_POINTS = np.concatenate([np.linspace(-7.0, 7.0, 14001), [0.0, -0.0, 1e-300, -1e-20, 1e-8, 2.0,
                                                             -2.0, 6.0, 5.999999, 26.0, -40.0]])


def test_erf_matches_the_standard_librarys_in_float64():
    got = erf(ERF_POINTS)
    want = np.array([math.erf(v) for v in ERF_POINTS])
    assert got.dtype == np.float64
    # within 2e-15 of math.erf (itself within an ulp of erf) everywhere, relative where erf is tiny
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=2e-15)
    np.testing.assert_array_equal(np.sign(got), np.sign(want))
    assert got[ERF_POINTS.size - 3] == 1.0 and got[-1] == -1.0  # the tails are exactly +-1


def test_erf_in_float32_is_computed_in_float32():
    x = ERF_POINTS.astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [math.erf(float(v)) for v in x], rtol=5e-7, atol=3e-7)


def test_erf_of_special_values():
    got = erf(np.array([np.inf, -np.inf, np.nan]))
    assert got[0] == 1.0 and got[1] == -1.0 and np.isnan(got[2])
    with pytest.raises(TypeError, match="erf: expected a floating point array, got dtype int64"):
        erf(np.arange(3))


def test_erfinv_inverts_erf():
    y = np.linspace(-0.999999, 0.999999, 2001)
    np.testing.assert_allclose(erf(erfinv(y)), y, rtol=0, atol=2e-15)
    np.testing.assert_allclose(erfinv(np.array([math.erf(0.5), -math.erf(1.7)])), [0.5, -1.7], rtol=1e-14)
    ends = erfinv(np.array([-1.0, 1.0, 1.5, 0.0]))
    assert ends[0] == -np.inf and ends[1] == np.inf and np.isnan(ends[2]) and ends[3] == 0.0


# ---- activations ----------------------------------------------------------------------------------

def _gelu_exact(x):
    return np.array([v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in np.ravel(x)]).reshape(np.shape(x))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


ACTIVATIONS = {  # name: (functional, formula in float64)
    "gelu": (F.gelu, _gelu_exact),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "hardtanh": (F.hardtanh, lambda x: np.clip(x, -1, 1)),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, -0.25, 2.0), lambda x: np.clip(x, -0.25, 2.0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_forwards_equal_pytorchs_formulas(name, dtype):
    fn, formula = ACTIVATIONS[name]
    x = np.concatenate([rand((3, 40), 0, -8, 8).ravel(), [0.0, -1.0, 1.0, 6.0, 30.0, -30.0]])
    y = fn(minifw.tensor(x, dtype=dtype))
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), formula(x.astype(dtype).astype(np.float64)),
                               **(TOL64 if dtype == np.float64 else TOL32))


def test_silu_does_not_overflow_for_large_inputs(no_warnings):
    y = F.silu(minifw.tensor([-1000.0, 1000.0], dtype=minifw.float64)).numpy()
    assert y.tolist() == [-0.0, 1000.0]


def test_hardtanh_gradient_stops_at_the_bounds_as_pytorchs():
    x = c64([-1.5, -1.0, -0.5, 1.0, 2.0]).requires_grad_()
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("module, functional", [
    (nn.GELU(), F.gelu), (nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh")),
    (nn.SiLU(), F.silu), (nn.Hardtanh(-0.5, 0.5), lambda x: F.hardtanh(x, -0.5, 0.5)),
    (nn.ReLU6(), F.relu6), (nn.Softmin(1), lambda x: F.softmax(-x, 1)),
    (nn.Softmax2d(), lambda x: F.softmax(x, 1)), (nn.LogSoftmax(0), lambda x: F.log_softmax(x, 0)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_activation_modules_apply_their_functional(module, functional):
    x = minifw.tensor(rand((2, 3, 4, 2), 1, -8, 8), dtype=minifw.float64)
    np.testing.assert_array_equal(module(x).numpy(), functional(x).numpy())


def test_in_place_activations_overwrite_their_input_outside_autograd():
    x = minifw.tensor([-2.0, 0.5, 8.0])
    assert F.relu6(x, inplace=True) is x and x.tolist() == [0.0, 0.5, 6.0]
    y = minifw.tensor([0.0, 1.0])
    assert nn.SiLU(inplace=True)(y) is y and y[1].item() == pytest.approx(1 / (1 + math.exp(-1)))
    z = minifw.tensor([-2.0, 2.0], requires_grad=True)  # a leaf: refused, as PyTorch refuses it
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.hardtanh(z, inplace=True)
    assert z.tolist() == [-2.0, 2.0]


def test_softmax_without_dim_warns_and_picks_pytorchs_legacy_dim():
    x = minifw.tensor(rand((2, 3, 4)), dtype=minifw.float64)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(x)
    np.testing.assert_array_equal(y.numpy(), F.softmax(x, 0).numpy())  # 3-D: dim 0
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        y = nn.LogSoftmax()(x[0])
    np.testing.assert_array_equal(y.numpy(), F.log_softmax(x[0], 1).numpy())  # 2-D: dim 1


def test_softmax_with_an_explicit_dim_does_not_warn(no_warnings):
    x = minifw.randn(2, 3)
    nn.Softmax(dim=1)(x), nn.LogSoftmax(dim=-1)(x), nn.Softmin(dim=0)(x), F.softmax(x, 1)


def test_softmin_is_softmax_of_the_negation():
    x = minifw.tensor([[1.0, 2.0, 3.0]], dtype=minifw.float64)
    e = np.exp(-np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(F.softmin(x, 1).numpy()[0], e / e.sum(), **TOL64)


def test_softmax2d_normalizes_over_channels_and_checks_rank():
    y = nn.Softmax2d()(minifw.randn(2, 3, 4, 5))
    np.testing.assert_allclose(y.sum(1).numpy(), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="Softmax2d: expected input of 3 or 4 dims"):
        nn.Softmax2d()(minifw.randn(3, 4))


# ---- channel dropout --------------------------------------------------------------------------

def _channels(y):
    """Per (sample, channel): 'zero' when the whole map is zero, 'kept' otherwise."""
    return y.reshape(y.shape[0], y.shape[1], -1)


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    minifw.manual_seed(0)
    x = minifw.tensor(rand((8, 16, 3, 3), 0, 0.5, 1.5))
    y = F.dropout2d(x, p=0.25).numpy()
    planes = _channels(y)
    zero = (planes == 0).all(-1)
    kept = ~zero
    assert ((planes != 0).all(-1) | zero).all(), "a channel is either dropped whole or kept whole"
    np.testing.assert_allclose(_channels(y)[kept], _channels(x.numpy())[kept] / 0.75, rtol=1e-6)
    assert 0.1 < zero.mean() < 0.4  # 128 draws with p = 0.25


def test_dropout2d_follows_the_seed_and_training_mode():
    x = minifw.randn(4, 6, 2, 2)
    minifw.manual_seed(7)
    a = F.dropout2d(x).numpy()
    minifw.manual_seed(7)
    np.testing.assert_array_equal(a, F.dropout2d(x).numpy())
    assert F.dropout2d(x, training=False) is x and F.dropout2d(x, p=0.0) is x
    assert (F.dropout2d(x, p=1.0).numpy() == 0).all()
    layer = nn.Dropout2d(0.5).eval()
    assert layer(x) is x


def test_dropout2d_gradient_is_the_mask():
    minifw.manual_seed(2)
    x = minifw.randn(3, 5, 2, 2, requires_grad=True)
    y = F.dropout2d(x, p=0.4)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(value(y) != 0, 1 / 0.6, 0.0), rtol=1e-6)


def test_dropout2d_takes_a_3d_input_as_n_c_l_with_pytorchs_warning():
    minifw.manual_seed(1)
    x = minifw.ones(6, 8, 5)
    with pytest.warns(UserWarning, match=r"interpreted as shape \(N, C, L\)"):
        y = F.dropout2d(x).numpy()
    assert ((y == 0).all(-1) | (y != 0).all(-1)).all()
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(minifw.ones(3, 4))
    with pytest.raises(ValueError, match="dropout2d: input must have a channel dim"):
        F.dropout2d(minifw.ones(3))


def test_dropout1d_on_batched_and_unbatched_input():
    minifw.manual_seed(4)
    y = nn.Dropout1d(0.5)(minifw.ones(4, 10, 6)).numpy()
    assert ((y == 0).all(-1) | (y == 2).all(-1)).all() and (y == 0).any()
    minifw.manual_seed(4)
    y2 = F.dropout1d(minifw.ones(10, 6)).numpy()
    assert y2.shape == (10, 6) and ((y2 == 0).all(-1) | (y2 == 2).all(-1)).all()
    with pytest.raises(ValueError, match="dropout1d: input must be 2-D"):
        F.dropout1d(minifw.ones(2, 3, 4, 5))


def test_dropout2d_in_place_outside_autograd():
    minifw.manual_seed(3)
    x = minifw.ones(2, 8, 2, 2)
    assert F.dropout2d(x, inplace=True) is x and set(np.unique(x.numpy())) <= {0.0, 2.0}


# ---- adaptive pooling -------------------------------------------------------------------------------

def _adaptive_reference(x, out_h, out_w, reduce):
    """PyTorch's adaptive pooling, one window at a time, in float64."""
    n, c, h, w = x.shape
    y = np.empty((n, c, out_h, out_w))
    for i in range(out_h):
        h0, h1 = math.floor(i * h / out_h), math.ceil((i + 1) * h / out_h)
        for j in range(out_w):
            w0, w1 = math.floor(j * w / out_w), math.ceil((j + 1) * w / out_w)
            y[:, :, i, j] = reduce(x[:, :, h0:h1, w0:w1], axis=(2, 3))
    return y


ADAPTIVE_SIZES = [  # (input H, W), output_size, resulting (out_h, out_w)
    pytest.param((13, 13), (6, 6), (6, 6), id="alexnet_13_to_6"),
    pytest.param((6, 6), (6, 6), (6, 6), id="identity"),
    pytest.param((5, 7), 3, (3, 3), id="int_overlapping"),
    pytest.param((7, 5), (3, None), (3, 5), id="none_keeps_width"),
    pytest.param((4, 9), (None, 2), (4, 2), id="none_keeps_height"),
    pytest.param((3, 4), (6, 8), (6, 8), id="larger_than_input"),
    pytest.param((5, 6), 1, (1, 1), id="global"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_hw, output_size, out_hw", ADAPTIVE_SIZES)
def test_adaptive_avg_pool2d_equals_pytorchs_windows(in_hw, output_size, out_hw, dtype):
    x = rand((2, 3) + in_hw, 4)
    y = F.adaptive_avg_pool2d(minifw.tensor(x, dtype=dtype), output_size)
    assert y.shape == (2, 3) + out_hw and y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), _adaptive_reference(x.astype(dtype), *out_hw, np.mean),
                               **(TOL64 if dtype == np.float64 else TOL32))


@pytest.mark.parametrize("in_hw, output_size, out_hw", ADAPTIVE_SIZES)
def test_adaptive_max_pool2d_equals_pytorchs_windows_and_indices(in_hw, output_size, out_hw):
    x = rand((2, 3) + in_hw, 5)
    y, idx = F.adaptive_max_pool2d(minifw.tensor(x, dtype=minifw.float64), output_size,
                                   return_indices=True)
    np.testing.assert_array_equal(y.numpy(), _adaptive_reference(x, *out_hw, np.max))
    assert idx.dtype == minifw.int64 and idx.shape == y.shape
    planes = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(planes, idx.numpy().reshape(2, 3, -1), 2),
                                  y.numpy().reshape(2, 3, -1))


def test_adaptive_max_pool2d_picks_the_first_of_equal_maxima_as_pytorch():
    x = minifw.ones(1, 1, 4, 4)
    _, idx = F.adaptive_max_pool2d(x, 2, return_indices=True)
    assert idx.numpy()[0, 0].tolist() == [[0, 2], [8, 10]]


def test_adaptive_max_pool2d_gradient_adds_up_where_windows_share_a_maximum():
    # 3 -> 2 windows are rows (and columns) [0, 2) and [1, 3): all four hold the centre
    x = minifw.tensor(np.where(np.arange(9).reshape(1, 1, 3, 3) == 4, 5.0, rand((1, 1, 3, 3), 2)),
                      requires_grad=True)
    F.adaptive_max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0, 0, 0], [0, 4, 0], [0, 0, 0]])


def test_adaptive_pooling_modules_and_unbatched_input():
    x = minifw.randn(3, 9, 7)
    np.testing.assert_array_equal(nn.AdaptiveAvgPool2d((2, 3))(x).numpy(),
                                  F.adaptive_avg_pool2d(x.unsqueeze(0), (2, 3)).squeeze(0).numpy())
    y, idx = nn.AdaptiveMaxPool2d(2, return_indices=True)(x)
    assert y.shape == (3, 2, 2) and idx.shape == (3, 2, 2)


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: F.adaptive_avg_pool2d(minifw.ones(2, 3), 1), ValueError, "3-D .* or 4-D",
                 id="2d_input"),
    pytest.param(lambda: F.adaptive_avg_pool2d(minifw.ones(1, 2, 3, 3), 0), ValueError,
                 "output_size entries must be positive ints or None, got 0", id="zero_size"),
    pytest.param(lambda: F.adaptive_max_pool2d(minifw.ones(1, 2, 3, 3), (1, 2, 3)), ValueError,
                 r"output_size must be an int or a pair", id="triple"),
    pytest.param(lambda: F.adaptive_avg_pool2d(minifw.ones(1, 2, 0, 3), 2), ValueError,
                 "non-zero sizes", id="empty_plane"),
])
def test_adaptive_pooling_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- losses --------------------------------------------------------------------------------------

def _reduce(losses, reduction, batch=None):
    if reduction == "none":
        return losses
    if reduction == "batchmean":
        return losses.sum() / batch
    return losses.sum() if reduction == "sum" else losses.mean()


X = rand((4, 5), 10)
T = rand((4, 5), 11)
P = rand((4, 5), 12, 0.02, 0.98)  # probabilities
Y = (rand((4, 5), 13) > 0).astype(float)  # 0/1 labels
W5 = rand((5,), 14, 0.5, 2.0)


def _softplus(x):
    return np.log1p(np.exp(x))


LOSSES = {  # name: (minifw call on float64 tensors, float64 formula per element, reductions)
    "l1": (lambda r: F.l1_loss(c64(X), c64(T), reduction=r), np.abs(X - T)),
    "smooth_l1": (lambda r: F.smooth_l1_loss(c64(X), c64(T), reduction=r, beta=0.5),
                  np.where(np.abs(X - T) < 0.5, 0.5 * (X - T) ** 2 / 0.5, np.abs(X - T) - 0.25)),
    "smooth_l1_beta0": (lambda r: F.smooth_l1_loss(c64(X), c64(T), reduction=r, beta=0.0), np.abs(X - T)),
    "huber": (lambda r: F.huber_loss(c64(X), c64(T), reduction=r, delta=0.4),
              np.where(np.abs(X - T) < 0.4, 0.5 * (X - T) ** 2, 0.4 * (np.abs(X - T) - 0.2))),
    "bce": (lambda r: F.binary_cross_entropy(c64(P), c64(Y), reduction=r),
            -(Y * np.log(P) + (1 - Y) * np.log(1 - P))),
    "bce_soft_targets_weight": (lambda r: F.binary_cross_entropy(c64(P), c64(T * T), c64(W5), reduction=r),
                                -W5 * (T * T * np.log(P) + (1 - T * T) * np.log(1 - P))),
    "bce_with_logits": (lambda r: F.binary_cross_entropy_with_logits(3 * c64(X), c64(Y), reduction=r),
                        -(Y * np.log(1 / (1 + np.exp(-3 * X))) + (1 - Y) * np.log(1 - 1 / (1 + np.exp(-3 * X))))),
    "bce_with_logits_weights": (
        lambda r: F.binary_cross_entropy_with_logits(c64(X), c64(Y), c64(W5[::-1].copy()), reduction=r,
                                                     pos_weight=c64(W5)),
        W5[::-1] * (W5 * Y * _softplus(-X) + (1 - Y) * _softplus(X))),
    "kl_div": (lambda r: F.kl_div(c64(np.log(P)), c64(P[::-1].copy()), reduction=r),
               P[::-1] * (np.log(P[::-1]) - np.log(P))),
    "kl_div_log_target": (lambda r: F.kl_div(c64(X), c64(T), reduction=r, log_target=True),
                          np.exp(T) * (T - X)),
}


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("name", LOSSES)
def test_losses_equal_pytorchs_formulas(name, reduction):
    call, elementwise = LOSSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning (tested below)
        got = call(reduction)
    assert got.dtype == minifw.float64 and got.shape == (elementwise.shape if reduction == "none" else ())
    np.testing.assert_allclose(got.numpy(), _reduce(elementwise, reduction), **TOL64)


def test_losses_keep_float32():
    for call in (lambda a, b: F.l1_loss(a, b), lambda a, b: F.huber_loss(a, b, reduction="none"),
                 lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
                 lambda a, b: F.kl_div(a, b, reduction="batchmean", log_target=True)):
        assert call(minifw.randn(3, 4), minifw.randn(3, 4)).dtype == minifw.float32


def test_kl_div_batchmean_is_the_math_and_mean_warns_as_pytorch():
    x, t = c64(np.log(P)), c64(P[::-1].copy())
    per_element = P[::-1] * (np.log(P[::-1]) - np.log(P))
    np.testing.assert_allclose(F.kl_div(x, t, reduction="batchmean").item(), per_element.sum() / 4, **TOL64)
    np.testing.assert_allclose(nn.KLDivLoss(reduction="batchmean")(x, t).item(), per_element.sum() / 4,
                               **TOL64)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = F.kl_div(x, t)
    np.testing.assert_allclose(mean.item(), per_element.mean(), **TOL64)


def test_kl_div_counts_zero_targets_as_zero():
    loss = F.kl_div(c64([[-1.0, -2.0]]), c64([[0.0, 1.0]]), reduction="sum")
    assert loss.item() == 2.0  # 0 * (log 0 - x) = 0, then 1 * (0 - (-2))


def test_bce_clamps_its_logs_at_minus_100_as_pytorch():
    losses = F.binary_cross_entropy(c64([0.0, 1.0, 0.0]), c64([1.0, 0.0, 0.0]), reduction="none")
    assert losses.tolist() == [100.0, 100.0, 0.0]


def test_bce_with_logits_is_stable_for_large_logits(no_warnings):
    x = c64([1000.0, -1000.0, 40.0]).requires_grad_()
    loss = F.binary_cross_entropy_with_logits(x, c64([0.0, 1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, 1000.0, math.exp(-40)], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0, 0.0], rtol=1e-12, atol=1e-16)


def test_bce_with_logits_equals_bce_of_the_sigmoid():
    x, y = c64(X), c64(Y)
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(x, y).item(),
                               F.binary_cross_entropy(x.sigmoid(), y).item(), rtol=1e-12)


def test_huber_is_delta_times_smooth_l1():
    a, b = c64(3 * X), c64(T)
    np.testing.assert_allclose(F.huber_loss(a, b, delta=2.0).item(),
                               2.0 * F.smooth_l1_loss(a, b, beta=2.0).item(), rtol=1e-13)


def test_regression_losses_broadcast_with_pytorchs_warning():
    with pytest.warns(UserWarning, match=r"Using a target size \(\(4,\)\) that is different to the "
                                         r"input size \(\(4, 1\)\)"):
        loss = F.l1_loss(minifw.zeros(4, 1), minifw.ones(4))
    assert loss.item() == 1.0


@pytest.mark.parametrize("module, functional", [
    (nn.L1Loss(reduction="sum"), lambda a, b: F.l1_loss(a, b, reduction="sum")),
    (nn.SmoothL1Loss(beta=0.3), lambda a, b: F.smooth_l1_loss(a, b, beta=0.3)),
    (nn.HuberLoss(reduction="none", delta=0.2), lambda a, b: F.huber_loss(a, b, reduction="none", delta=0.2)),
    (nn.BCELoss(weight=c64(W5)), lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), c64(W5))),
    (nn.BCEWithLogitsLoss(pos_weight=c64(W5)),
     lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid(), pos_weight=c64(W5))),
    (nn.KLDivLoss(reduction="sum", log_target=True), lambda a, b: F.kl_div(a, b, reduction="sum",
                                                                         log_target=True)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_loss_modules_apply_their_functional(module, functional):
    a, b = c64(X), c64(T)
    if isinstance(module, nn.BCELoss):
        got = module(a.sigmoid(), b.sigmoid())
    elif isinstance(module, nn.BCEWithLogitsLoss):
        got = module(a, b.sigmoid())
    else:
        got = module(a, b)
    np.testing.assert_array_equal(got.numpy(), functional(a, b).numpy())


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: F.binary_cross_entropy(c64([0.5, 1.5]), c64([0.0, 1.0])), RuntimeError,
                 "all elements of input should be between 0 and 1", id="bce_range"),
    pytest.param(lambda: F.binary_cross_entropy(c64([0.5, 0.5]), c64([[0.0, 1.0]])), ValueError,
                 r"target must have the same shape as input, \(2,\); got \(1, 2\)", id="bce_shape"),
    pytest.param(lambda: F.binary_cross_entropy_with_logits(c64([0.5]), c64([1.0, 0.0])), ValueError,
                 "target must have the same shape as input", id="bce_logits_shape"),
    pytest.param(lambda: F.binary_cross_entropy_with_logits(c64([[0.5, 1.0]]), c64([[1.0, 0.0]]),
                                                            pos_weight=c64([1.0, 2.0, 3.0])), ValueError,
                 r"pos_weight of shape \(3,\) must broadcast to the input's shape \(1, 2\)", id="pos_weight"),
    pytest.param(lambda: F.binary_cross_entropy(c64([0.5]), minifw.tensor([1.0])), TypeError,
                 "target has dtype float32 but input has dtype float64", id="bce_dtypes"),
    pytest.param(lambda: F.smooth_l1_loss(c64([1.0]), c64([0.0]), beta=-1.0), ValueError,
                 "beta must be >= 0", id="smooth_l1_beta"),
    pytest.param(lambda: F.huber_loss(c64([1.0]), c64([0.0]), delta=0.0), ValueError, "delta must be > 0",
                 id="huber_delta"),
    pytest.param(lambda: F.kl_div(c64([1.0]), c64([0.0]), reduction="avg"), ValueError,
                 "reduction must be one of 'none', 'mean', 'sum', 'batchmean'", id="kl_reduction"),
    pytest.param(lambda: F.l1_loss(c64([1.0, 2.0]), c64([1.0, 2.0, 3.0])), ValueError, "do not broadcast",
                 id="l1_shapes"),
    pytest.param(lambda: F.l1_loss(c64([1.0]), [1.0]), TypeError, "target must be a minifw.Tensor",
                 id="l1_target_type"),
])
def test_loss_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- gradient checks (float64 finite differences) ---------------------------------------------------

def _seeded_dropout2d(x, **kwargs):
    minifw.manual_seed(5)  # the same channels for every finite-difference evaluation
    return F.dropout2d(x, **kwargs)


GRADS = {  # name: (function, () -> inputs)
    "gelu": (F.gelu, lambda: [t64((3, 7), 0, -5, 5)]),
    "gelu_large_inputs": (F.gelu, lambda: [t64((9,), 1, -9, 9)]),  # erf's second interval and tail
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: [t64((3, 7), 0, -5, 5)]),
    "silu": (F.silu, lambda: [t64((3, 7), 0, -6, 6)]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.6, 0.4), lambda: [t64((3, 7))]),
    "relu6": (F.relu6, lambda: [t64((3, 7), 0, -3, 9)]),
    "softmin": (lambda x: F.softmin(x, 1), lambda: [t64((3, 4), 0, -3, 3)]),
    "dropout2d": (lambda x: _seeded_dropout2d(x, p=0.4), lambda: [t64((3, 4, 2, 2))]),
    "dropout1d_unbatched": (lambda x: (minifw.manual_seed(6), F.dropout1d(x, p=0.5))[1], lambda: [t64((6, 3))]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (3, 4)), lambda: [t64((2, 2, 7, 5))]),
    "adaptive_avg_pool2d_3d_none": (lambda x: F.adaptive_avg_pool2d(x, (None, 2)), lambda: [t64((2, 4, 5))]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (3, 2)), lambda: [t64((2, 2, 5, 5))]),
    "adaptive_max_pool2d_indices": (lambda x: F.adaptive_max_pool2d(x, 4, return_indices=True),
                                    lambda: [t64((1, 2, 6, 7))]),
    "l1_mean": (F.l1_loss, lambda: [t64((3, 4)), t64((3, 4), 1)]),
    "l1_none_broadcast": (lambda a, b: F.l1_loss(a, b, reduction="none"), lambda: [t64((3, 1)), t64((4,), 1)]),
    "smooth_l1_sum": (lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.5),
                      lambda: [t64((3, 4)), t64((3, 4), 1)]),
    "smooth_l1_beta0": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.0), lambda: [t64((5,)), t64((5,), 1)]),
    "huber_none": (lambda a, b: F.huber_loss(a, b, reduction="none", delta=0.3),
                   lambda: [t64((3, 4)), t64((3, 4), 1)]),
    "huber_broadcast": (lambda a, b: F.huber_loss(a, b, delta=0.7), lambda: [t64((2, 3, 4)), t64((3, 1), 1)]),
    "bce_mean": (F.binary_cross_entropy, lambda: [t64((3, 4), 0, 0.05, 0.95), t64((3, 4), 1, 0, 1)]),
    "bce_weight_none": (lambda x, t: F.binary_cross_entropy(x, t, like(x, W5[:4]), reduction="none"),
                        lambda: [t64((3, 4), 0, 0.05, 0.95), t64((3, 4), 1, 0, 1)]),
    "bce_with_logits_mean": (F.binary_cross_entropy_with_logits,
                             lambda: [t64((3, 4), 0, -4, 4), t64((3, 4), 1, 0, 1)]),
    "bce_with_logits_weights_sum": (
        lambda x, t: F.binary_cross_entropy_with_logits(x, t, like(x, rand((3, 1), 3, 0.5, 2)),
                                                        reduction="sum", pos_weight=like(x, W5[:4])),
        lambda: [t64((3, 4), 0, -4, 4), t64((3, 4), 1, 0, 1)]),
    "kl_div_batchmean": (lambda x, t: F.kl_div(x, t, reduction="batchmean"),
                         lambda: [t64((3, 4), 0, -3, 0), t64((3, 4), 1, 0.05, 1)]),
    "kl_div_sum_broadcast": (lambda x, t: F.kl_div(x, t, reduction="sum"),
                             lambda: [t64((3, 4), 0, -3, 0), t64((4,), 1, 0.05, 1)]),
    "kl_div_log_target_none": (lambda x, t: F.kl_div(x, t, reduction="none", log_target=True),
                               lambda: [t64((2, 3, 4), 0, -3, 0), t64((3, 4), 1, -3, 0)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, inputs = GRADS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the broadcasting cases warn, by design
        gradcheck(fn, inputs())


def test_float32_gradients_stay_float32():
    for name, (fn, inputs) in GRADS.items():
        xs = [t.detach().float().requires_grad_() for t in inputs()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*xs)
        out = out[0] if isinstance(out, tuple) else out
        assert out.dtype == minifw.float32, name
        out.sum().backward()
        for x in xs:
            assert x.grad.dtype == minifw.float32, name


# ---- on the devices ---------------------------------------------------------------------------------


def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


def _p(*shape, seed=6):
    """Probabilities in (0.05, 0.95)."""
    return minifw.rand(*shape, generator=minifw.Generator().manual_seed(seed)) * 0.9 + 0.05


FUNCTIONAL = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "gelu_both": (lambda: [_x(3, 5) * 3], lambda x: F.gelu(x) + F.gelu(x, approximate="tanh")),
    "silu_hardtanh_relu6": (lambda: [_x(3, 5) * 4], lambda x: F.silu(x) * F.hardtanh(x, -0.5, 2.0) + F.relu6(x)),
    "softmin_softmax2d": (lambda: [_x(2, 3, 2, 2)], lambda x: F.softmin(x, 1) * nn.Softmax2d()(x)),
    "dropout2d": (lambda: [_x(3, 4, 2, 2)], lambda x: (minifw.manual_seed(9), F.dropout2d(x, 0.5))[1]),
    "adaptive_avg_pool2d": (lambda: [_x(2, 3, 7, 5)], lambda x: F.adaptive_avg_pool2d(x, (3, None))),
    "adaptive_max_pool2d": (lambda: [_x(2, 3, 7, 5)], lambda x: F.adaptive_max_pool2d(x, (4, 3))),
    "l1_smooth_l1_huber": (lambda: [_x(3, 4), _x(3, 4, seed=6)],
                           lambda a, b: F.l1_loss(a, b) + F.smooth_l1_loss(a, b, beta=0.5)
                           + F.huber_loss(a, b, reduction="sum", delta=0.3)),
    "bce": (lambda: [_p(3, 4), _p(3, 4, seed=7), _p(4, seed=8)],
            lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction="none")),
    "bce_with_logits": (lambda: [_x(3, 4), _p(3, 4), _p(4, seed=8) * 3],
                        lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw)),
    "kl_div": (lambda: [_x(3, 4).log_softmax(1), _p(3, 4)],
               lambda x, t: F.kl_div(x, t, reduction="batchmean")
               + F.kl_div(x, t.log(), reduction="sum", log_target=True)),
}


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *FUNCTIONAL[name], rtol=1e-5, atol=1e-6, what=name)


def test_adaptive_max_pool2d_indices_on_the_device_equal_the_cpus(dev):
    x = _x(2, 3, 7, 6)
    _, want = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    _, got = F.adaptive_max_pool2d(x.to(dev), (3, 4), return_indices=True)
    assert got.device == dev and got.dtype == minifw.int64
    np.testing.assert_array_equal(value(got), want.numpy())


def test_erf_on_the_device_equals_the_hosts(dev):
    x = np.linspace(-7.0, 7.0, 301)
    got = erf(devices.to_device(x, dev))
    assert devices.of(got) == dev
    np.testing.assert_array_equal(devices.to_device(got, devices.CPU), erf(x))


def test_alexnet_head_on_the_device(dev):
    minifw.manual_seed(0)
    head = nn.Sequential(nn.AdaptiveAvgPool2d((6, 6)), nn.Flatten(), nn.Dropout(0.5),
                         nn.Linear(2 * 36, 3)).to(dev)
    y = head(_x(2, 2, 13, 13).to(dev))
    assert y.shape == (2, 3) and y.device == dev


# ---- forward hooks ---------------------------------------------------------------------------------

class Doubler(nn.Module):
    def forward(self, x, scale=1.0):
        return 2 * x * scale


def test_forward_hooks_run_in_order_around_forward():
    m, calls = Doubler(), []
    m.register_forward_pre_hook(lambda mod, args: calls.append(("pre", mod, args[0].item())))
    m.register_forward_hook(lambda mod, args, out: calls.append(("post", args[0].item(), out.item())))
    m.register_forward_hook(lambda mod, args, out: calls.append(("post2",)))
    m.register_forward_pre_hook(lambda mod, args: calls.append(("pre0",)), prepend=True)
    m.register_forward_hook(lambda mod, args, out: calls.append(("post0",)), prepend=True)
    m(minifw.tensor(3.0))
    assert calls == [("pre0",), ("pre", m, 3.0), ("post0",), ("post", 3.0, 6.0), ("post2",)]


def test_hooks_may_replace_the_input_and_the_output():
    m = Doubler()
    m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # a non-tuple: the only argument
    m.register_forward_hook(lambda mod, args, out: out * 10)
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append((args[0].item(), out.item())))
    assert m(minifw.tensor(1.0)).item() == 40.0
    assert seen == [(2.0, 40.0)], "later hooks see the replaced input and output"
    m2 = Doubler()
    m2.register_forward_pre_hook(lambda mod, args: (args[0], minifw.tensor(3.0)))  # a tuple: all of them
    assert m2(minifw.tensor(1.0)).item() == 6.0


def test_hooks_with_kwargs():
    m = Doubler()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "scale": 5.0}),
                                with_kwargs=True)
    got = []
    m.register_forward_hook(lambda mod, args, kwargs, out: got.append(kwargs["scale"]), with_kwargs=True)
    assert m(minifw.tensor(1.0), scale=2.0).item() == 10.0 and got == [5.0]
    bad = Doubler()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of "
                                           r"\(new_args, new_kwargs\)"):
        bad(minifw.tensor(1.0))


def test_removing_hooks():
    m, calls = Doubler(), []
    handle = m.register_forward_hook(lambda mod, args, out: calls.append("a"))
    m.register_forward_hook(lambda mod, args, out: calls.append("b"))
    m(minifw.tensor(1.0))
    handle.remove()
    handle.remove()  # a second remove does nothing
    m(minifw.tensor(1.0))
    assert calls == ["a", "b", "b"]
    with m.register_forward_pre_hook(lambda mod, args: calls.append("ctx")):
        m(minifw.tensor(1.0))
    m(minifw.tensor(1.0))
    assert calls.count("ctx") == 1


def test_a_hook_can_remove_itself_while_running():
    m, calls = Doubler(), []

    def once(mod, args, out):
        calls.append("once")
        handle.remove()

    handle = m.register_forward_hook(once)
    m(minifw.tensor(1.0)), m(minifw.tensor(1.0))
    assert calls == ["once"]


def test_always_call_hooks_run_when_forward_raises():
    class Failing(nn.Module):
        def forward(self, x):
            raise ValueError("broken layer")

    m, calls = Failing(), []
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    with pytest.raises(ValueError, match="broken layer"):
        m(minifw.tensor(1.0))
    assert calls == [("always", None)]


def test_hooks_on_submodules_capture_activations():
    minifw.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    captured = {}
    for name, module in net.named_modules():
        if isinstance(module, nn.Linear):
            def keep(mod, args, out, name=name):
                captured[name] = out.shape  # returns None: the output stays
            module.register_forward_hook(keep)
    net(minifw.randn(5, 4))
    assert captured == {"0": (5, 3), "2": (5, 2)}


def test_hooks_survive_deepcopy_and_keep_gradients_flowing():
    import copy
    m = nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, args, out: out * 2)
    c = copy.deepcopy(m)
    x = minifw.ones(1, 2)
    np.testing.assert_array_equal(c(x).detach().numpy(), m(x).detach().numpy())
    c(x).sum().backward()
    assert c.weight.grad is not None


# ---- traversal, submodules, buffers --------------------------------------------------------------

def _shared_tree():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.Sequential(nn.ReLU(), shared), nn.Tanh())
    return net, shared


def test_named_modules_are_depth_first_in_registration_order():
    net, _ = _shared_tree()
    names = [name for name, _ in net.named_modules()]
    assert names == ["", "0", "1", "1.0", "2"]  # the shared Linear once, at its first path
    assert [n for n, _ in net.named_modules(prefix="model")] == ["model", "model.0", "model.1",
                                                                 "model.1.0", "model.2"]


def test_named_modules_keeps_duplicates_when_asked():
    net, shared = _shared_tree()
    pairs = list(net.named_modules(remove_duplicate=False))
    assert [n for n, _ in pairs] == ["", "0", "1", "1.0", "1.1", "2"]
    assert pairs[1][1] is shared and pairs[4][1] is shared


def test_named_modules_skips_what_memo_holds():
    net, shared = _shared_tree()
    assert [n for n, _ in net.named_modules(memo={shared})] == ["", "1", "1.0", "2"]


def test_named_parameters_with_and_without_duplicates():
    net, _ = _shared_tree()
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in net.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "1.1.weight", "1.1.bias"]
    assert len(list(net.parameters())) == 2


def test_get_submodule_parameter_and_buffer():
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Sequential(nn.BatchNorm2d(2)))
    assert net.get_submodule("") is net and net.get_submodule("1.0") is net[1][0]
    assert net.get_parameter("0.weight") is net[0].weight
    assert net.get_buffer("1.0.running_mean") is net[1][0].running_mean
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        net.get_submodule("1.5")
    with pytest.raises(AttributeError, match="Conv2d has no parameter `scale`"):
        net.get_parameter("0.scale")
    with pytest.raises(AttributeError, match="BatchNorm2d has no buffer `weight`"):
        net.get_buffer("1.0.weight")


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("step", minifw.zeros(()))
        self.register_buffer("cache", minifw.ones(3), persistent=False)


def test_non_persistent_buffers_are_buffers_but_not_state():
    m = WithBuffers()
    assert [n for n, _ in m.named_buffers()] == ["step", "cache"]
    assert list(m.state_dict()) == ["step", "lin.weight", "lin.bias"]
    state = m.state_dict()
    fresh = WithBuffers()
    fresh.cache.fill_(7.0)
    assert fresh.load_state_dict(state) == ([], [])  # strict: cache is neither missing nor expected
    assert fresh.cache.tolist() == [7.0, 7.0, 7.0]
    m.to(minifw.float64)
    assert m.cache.dtype == minifw.float64  # it follows the module all the same


def test_registering_a_persistent_buffer_again_makes_it_persistent():
    m = WithBuffers()
    m.register_buffer("cache", minifw.zeros(3))
    assert "cache" in m.state_dict()


def test_apply_zero_grad_and_requires_grad():
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    net.apply(lambda m: init.zeros_(m.bias) if isinstance(m, nn.Linear) else None)
    assert all((m.bias.detach().numpy() == 0).all() for m in net)
    net(minifw.ones(1, 3)).sum().backward()
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters()), "set_to_none=True is the default"
    net(minifw.ones(1, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all((p.grad.numpy() == 0).all() for p in net.parameters())
    assert net.requires_grad_(False) is net and not any(p.requires_grad for p in net.parameters())


# ---- nn.init ----------------------------------------------------------------------------------------

INIT_SIGNATURES = {
    init.eye_: "(tensor)",
    init.trunc_normal_: "(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None)",
    init.orthogonal_: "(tensor, gain=1, generator=None)",
}


@pytest.mark.parametrize("fn", INIT_SIGNATURES, ids=[f.__name__ for f in INIT_SIGNATURES])
def test_init_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == INIT_SIGNATURES[fn]


def test_eye_():
    t = init.eye_(minifw.empty(2, 3))
    assert t.tolist() == [[1, 0, 0], [0, 1, 0]]
    with pytest.raises(ValueError, match="eye_: only tensors with 2 dimensions are supported"):
        init.eye_(minifw.empty(2, 2, 2))


def _truncated_normal_moments(mean, std, a, b):
    """Mean and std of N(mean, std^2) truncated to [a, b]."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -2.0, 2.0), (1.0, 2.0, 0.0, 1.5), (0.0, 1.0, 0.5, 3.0),
])
def test_trunc_normal_stays_in_bounds_with_the_truncated_moments(mean, std, a, b):
    minifw.manual_seed(0)
    t = init.trunc_normal_(minifw.empty(200, 200, dtype=minifw.float64), mean, std, a, b).numpy()
    assert t.min() >= a and t.max() <= b
    m, s = _truncated_normal_moments(mean, std, a, b)
    assert abs(t.mean() - m) < 0.02 * s and abs(t.std() - s) < 0.02 * s


def test_trunc_normal_warns_when_the_mean_is_far_outside_the_bounds():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(minifw.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    t = init.orthogonal_(minifw.empty(*shape, dtype=minifw.float64), gain=2.0).numpy().reshape(shape[0], -1)
    small = min(t.shape)
    gram = t.T @ t if t.shape[0] >= t.shape[1] else t @ t.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-12)
    with pytest.raises(ValueError, match="orthogonal_: only tensors with 2 or more dimensions"):
        init.orthogonal_(minifw.empty(3))


FAN = (64, 32, 3, 3)  # fan_in = 288, fan_out = 576


@pytest.mark.parametrize("fill, bound", [
    (lambda t, g: init.xavier_uniform_(t, generator=g), math.sqrt(6 / (288 + 576))),
    (lambda t, g: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu", generator=g),
     math.sqrt(2) * math.sqrt(3 / 576)),
    (lambda t, g: init.kaiming_uniform_(t, a=0.2, generator=g), math.sqrt(2 / 1.04) * math.sqrt(3 / 288)),
], ids=["xavier_uniform", "kaiming_uniform_relu_fan_out", "kaiming_uniform_leaky_0.2"])
def test_uniform_init_bounds(fill, bound):
    t = fill(minifw.empty(*FAN), minifw.Generator().manual_seed(1)).numpy()
    assert np.abs(t).max() <= bound and np.abs(t).max() > 0.99 * bound
    assert abs(t.std() - bound / math.sqrt(3)) < 0.02 * bound


@pytest.mark.parametrize("fill", [
    lambda t, g: init.uniform_(t, -0.5, 0.5, generator=g),
    lambda t, g: init.normal_(t, 0.0, 0.1, generator=g),
    lambda t, g: init.xavier_normal_(t, generator=g),
    lambda t, g: init.kaiming_normal_(t, mode="fan_out", generator=g),
    lambda t, g: init.trunc_normal_(t, std=0.5, generator=g),
    lambda t, g: init.orthogonal_(t, generator=g),
], ids=["uniform", "normal", "xavier_normal", "kaiming_normal", "trunc_normal", "orthogonal"])
def test_inits_follow_the_generator_and_the_global_seed(fill):
    a = fill(minifw.empty(6, 5), minifw.Generator().manual_seed(3)).numpy()
    b = fill(minifw.empty(6, 5), minifw.Generator().manual_seed(3)).numpy()
    c = fill(minifw.empty(6, 5), minifw.Generator().manual_seed(4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    minifw.manual_seed(11)
    d = fill(minifw.empty(6, 5), None).numpy()
    minifw.manual_seed(11)
    np.testing.assert_array_equal(d, fill(minifw.empty(6, 5), None).numpy())


@pytest.mark.parametrize("fill", [
    lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), lambda t: init.trunc_normal_(t, std=0.02),
    lambda t: init.orthogonal_(t), lambda t: init.eye_(t), lambda t: init.xavier_normal_(t),
], ids=["kaiming_uniform", "trunc_normal", "orthogonal", "eye", "xavier_normal"])
def test_inits_on_a_device_equal_the_cpus(dev, fill):
    minifw.manual_seed(2)
    p = nn.Parameter(minifw.empty(4, 3, device=dev))
    assert fill(p) is p and p.device == dev and devices.of(p._data) == dev
    minifw.manual_seed(2)
    np.testing.assert_array_equal(value(p), fill(minifw.empty(4, 3)).numpy())


def test_kaiming_on_an_empty_tensor_warns_and_does_nothing():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(minifw.empty(0, 3))


@pytest.mark.parametrize("param", ["0.2", True, [0.1]])
def test_calculate_gain_refuses_a_slope_that_is_not_a_number(param):
    with pytest.raises(ValueError, match=r"negative_slope .* not a valid number"):
        init.calculate_gain("leaky_relu", param)
