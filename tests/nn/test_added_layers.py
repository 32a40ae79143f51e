"""The layers and functions added for PyTorch scripts that reach beyond the basics: LayerNorm /
layer_norm, GroupNorm / group_norm, normalize, cosine_similarity (and CosineSimilarity),
softplus / Softplus, prelu / PReLU, one_hot, Unflatten, cross_entropy with class-probability
targets, ConvTranspose2d / conv_transpose2d, Upsample / interpolate ('nearest',
'nearest-exact'), and the containers ModuleDict, ParameterList and ParameterDict.

Each op: its signature and repr as PyTorch's, float64 gradients against finite differences,
values and gradients against PyTorch's (when torch is installed; it is not a dependency) in
float64 and float32, the same results on cudasim and the emulated cuda as on the CPU, and
errors that name the function, the argument, what was expected and what arrived."""
import collections
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from minifw.functions.softmax import SoftmaxCrossEntropy
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu, host

# float64 results are compared with PyTorch's float64 ones computed in another order (a few
# ulp; the 1/eps-sized gradients of normalize with p=-inf a few ulp of 1e12); float32 with
# PyTorch's float32 ones, whose sums are accumulated in other orders (a few ulp of the terms).
TOL64 = dict(rtol=1e-10, atol=1e-12)
TOL32 = dict(rtol=2e-5, atol=2e-6)


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(shape, seed=0, low=-1.0, high=1.0):
    """A float64 leaf that requires grad, for gradcheck."""
    return minifw.tensor(rand(shape, seed, low, high), dtype=minifw.float64, requires_grad=True)


def c64(values):
    return minifw.tensor(values, dtype=minifw.float64)


def longs(values):
    return minifw.tensor(values, dtype=minifw.int64)


# ---- signatures and reprs --------------------------------------------------------------------

SIGNATURES = {
    nn.LayerNorm: "(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, "
                  "dtype=None)",
    nn.GroupNorm: "(num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, "
                  "bias=True)",
    nn.Softplus: "(beta=1.0, threshold=20.0)",
    nn.PReLU: "(num_parameters=1, init=0.25, device=None, dtype=None)",
    nn.Unflatten: "(dim, unflattened_size)",
    nn.CosineSimilarity: "(dim=1, eps=1e-08)",
    nn.ConvTranspose2d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, "
                        "output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', "
                        "device=None, dtype=None)",
    nn.Upsample: "(size=None, scale_factor=None, mode='nearest', align_corners=None, "
                 "recompute_scale_factor=None)",
    nn.ModuleDict: "(modules=None)",
    nn.ParameterList: "(values=None)",
    nn.ParameterDict: "(parameters=None)",
    F.layer_norm: "(input, normalized_shape, weight=None, bias=None, eps=1e-05)",
    F.group_norm: "(input, num_groups, weight=None, bias=None, eps=1e-05)",
    F.normalize: "(input, p=2.0, dim=1, eps=1e-12, out=None)",
    F.cosine_similarity: "(x1, x2, dim=1, eps=1e-08)",
    F.softplus: "(input, beta=1.0, threshold=20.0)",
    F.prelu: "(input, weight)",
    F.one_hot: "(tensor, num_classes=-1)",
    F.conv_transpose2d: "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
                        "dilation=1)",
    F.interpolate: "(input, size=None, scale_factor=None, mode='nearest', align_corners=None, "
                   "recompute_scale_factor=None, antialias=False)",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


def test_signatures_agree_with_torchs_own():
    torch = pytest.importorskip("torch")
    for fn in SIGNATURES:
        theirs = getattr(torch.nn.functional if fn.__module__.endswith("functional") else torch.nn,
                         fn.__name__)
        try:
            params = inspect.signature(theirs).parameters
        except ValueError:  # a builtin (softplus, prelu, one_hot, ...): its docstring's first line
            continue
        mine = inspect.signature(fn).parameters
        assert list(mine) == list(params), fn.__name__
        assert [p.default for p in mine.values()] == [p.default for p in params.values()], fn.__name__


REPRS = [
    (lambda: nn.LayerNorm(4), "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (lambda: nn.LayerNorm((3, 4), eps=1e-6, bias=False),
     "LayerNorm((3, 4), eps=1e-06, elementwise_affine=True, bias=False)"),
    (lambda: nn.LayerNorm([5], elementwise_affine=False),
     "LayerNorm((5,), eps=1e-05, elementwise_affine=False, bias=False)"),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"),
    (lambda: nn.GroupNorm(2, 4, affine=False), "GroupNorm(2, 4, eps=1e-05, affine=False, bias=False)"),
    (lambda: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda: nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
    (lambda: nn.PReLU(), "PReLU(num_parameters=1)"),
    (lambda: nn.PReLU(3, 0.1), "PReLU(num_parameters=3)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.Unflatten(-1, [2, -1]), "Unflatten(dim=-1, unflattened_size=[2, -1])"),
    (lambda: nn.CosineSimilarity(), "CosineSimilarity()"),
    (lambda: nn.ConvTranspose2d(3, 4, 3), "ConvTranspose2d(3, 4, kernel_size=(3, 3), stride=(1, 1))"),
    (lambda: nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2,
                                bias=False, dilation=2),
     "ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "output_padding=(1, 1), groups=2, bias=False)"),
    (lambda: nn.Upsample(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')"),
    (lambda: nn.Upsample(size=(3, 4), mode="nearest-exact"), "Upsample(size=(3, 4), mode='nearest-exact')"),
    (lambda: nn.ModuleDict({"b": nn.ReLU(), "a": nn.Identity()}),
     "ModuleDict(\n  (b): ReLU()\n  (a): Identity()\n)"),
    (lambda: nn.ParameterList([nn.Parameter(minifw.ones(2)), minifw.zeros(3, 4), 7]),
     "ParameterList(\n    (0): Parameter containing: [minifw.float32 of size 2]\n"
     "    (1): Parameter containing: [minifw.float32 of size 3x4]\n    (2): Object of type: int\n)"),
    (lambda: nn.ParameterDict({"w": minifw.ones(2, dtype=minifw.float64)}),
     "ParameterDict(  (w): Parameter containing: [minifw.DoubleTensor of size 2])"),
]


@pytest.mark.parametrize("make, text", REPRS, ids=[text.split("(")[0] + str(i) for i, (_, text) in
                                                  enumerate(REPRS)])
def test_reprs_are_pytorchs(make, text):
    assert repr(make()) == text


def test_reprs_equal_torchs_with_its_names():
    torch = pytest.importorskip("torch")
    builds = {  # source text run against both packages
        "nn.LayerNorm((3, 4), eps=1e-6, bias=False)", "nn.GroupNorm(2, 4, affine=False)",
        "nn.Softplus(2, 10)", "nn.PReLU(3, 0.1)", "nn.Unflatten(1, (2, 3))",
        "nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2, "
        "bias=False, dilation=2)", "nn.Upsample(scale_factor=2)", "nn.CosineSimilarity(0)",
        "nn.ModuleDict({'b': nn.ReLU(), 'a': nn.Identity()})",
        "nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3, 4), 7])",
        "nn.ParameterDict({'w': lib.ones(2, dtype=lib.float64), 'a': lib.zeros(1)})",
    }
    for source in builds:
        mine = repr(eval(source, {"nn": nn, "lib": minifw}))
        theirs = repr(eval(source, {"nn": torch.nn, "lib": torch}))
        assert mine == theirs.replace("torch.", "minifw."), source


# ---- gradient checks (float64 finite differences) ----------------------------------------------

def _probabilities(shape, seed, dim=1):
    p = rand(shape, seed, 0.05, 1.0)
    return minifw.tensor(p / p.sum(axis=dim, keepdims=True), dtype=minifw.float64,
                         requires_grad=True)


GRADS = {  # name: (function, () -> inputs)
    "layer_norm_affine": (lambda x, w, b: F.layer_norm(x, (4, 3), w, b),
                          lambda: [t64((2, 4, 3)), t64((4, 3), 1), t64((4, 3), 2)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, [5]), lambda: [t64((3, 5), 3, -2, 2)]),
    "layer_norm_weight_only": (lambda x, w: F.layer_norm(x, (2, 2, 3), w, eps=0.1),
                               lambda: [t64((2, 2, 3)), t64((2, 2, 3), 4)]),
    "layer_norm_single_value_rows": (lambda x, b: F.layer_norm(x, (1,), bias=b),
                                     lambda: [t64((4, 1)), t64((1,), 5)]),
    "group_norm_affine": (lambda x, w, b: F.group_norm(x, 2, w, b),
                          lambda: [t64((2, 4, 3, 2)), t64((4,), 1), t64((4,), 2)]),
    "group_norm_3d_one_group": (lambda x: F.group_norm(x, 1, eps=0.01), lambda: [t64((2, 3, 4))]),
    "group_norm_2d_two_channel_groups": (lambda x, w: F.group_norm(x, 3, w),
                                         lambda: [t64((4, 6)), t64((6,), 1)]),
    "normalize_p2": (lambda x: F.normalize(x), lambda: [t64((3, 4, 2))]),
    "normalize_p1_dim0": (lambda x: F.normalize(x, p=1.0, dim=0), lambda: [t64((3, 4))]),
    "normalize_p3_last": (lambda x: F.normalize(x, p=3.0, dim=-1), lambda: [t64((3, 4))]),
    "normalize_p_half": (lambda x: F.normalize(x, p=0.5), lambda: [t64((2, 4), 0, 0.2, 1.0)]),
    "normalize_p_inf": (lambda x: F.normalize(x, p=math.inf), lambda: [t64((3, 4))]),
    "normalize_clamped": (lambda x: F.normalize(x, eps=2.0), lambda: [t64((3, 4))]),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    "cosine_similarity_broadcast": (lambda a, b: F.cosine_similarity(a, b, dim=-1),
                                    lambda: [t64((2, 3, 4)), t64((3, 1), 1)]),
    "softplus": (lambda x: F.softplus(x), lambda: [t64((3, 7), 0, -5, 5)]),
    "softplus_beta_threshold": (lambda x: F.softplus(x, beta=2.0, threshold=3.0),
                                lambda: [t64((3, 7), 1, -4, 4)]),
    "prelu_one_slope": (lambda x, w: F.prelu(x, w), lambda: [t64((2, 3, 4)), t64((1,), 1, 0.1, 0.5)]),
    "prelu_per_channel": (lambda x, w: F.prelu(x, w), lambda: [t64((2, 3, 2, 2)), t64((3,), 1)]),
    "cross_entropy_probabilities": (lambda x, t: F.cross_entropy(x, t),
                                    lambda: [t64((4, 5), 0, -3, 3), _probabilities((4, 5), 1)]),
    "cross_entropy_probabilities_weight_smoothing_sum": (
        lambda x, t, w: F.cross_entropy(x, t, w, reduction="sum", label_smoothing=0.2),
        lambda: [t64((3, 4, 2), 0, -3, 3), _probabilities((3, 4, 2), 1), t64((4,), 2, 0.5, 2)]),
    "cross_entropy_probabilities_none_1d": (
        lambda x, t: F.cross_entropy(x, t, reduction="none"),
        lambda: [t64((5,), 0, -3, 3), _probabilities((5,), 1, 0)]),
    "conv_transpose2d": (lambda x, w, b: F.conv_transpose2d(x, w, b),
                         lambda: [t64((2, 3, 4, 3)), t64((3, 2, 3, 2), 1), t64((2,), 2)]),
    "conv_transpose2d_stride_padding_output_padding": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=(1, 0)),
        lambda: [t64((1, 2, 3, 4)), t64((2, 3, 3, 3), 1)]),
    "conv_transpose2d_groups_dilation": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(1, 2), groups=2, dilation=(2, 1)),
        lambda: [t64((2, 4, 3, 3)), t64((4, 1, 2, 3), 1), t64((2,), 2)]),
    "conv_transpose2d_output_padding_beyond_stride": (  # the zero-extended input
        lambda x, w: F.conv_transpose2d(x, w, output_padding=1, dilation=2),
        lambda: [t64((1, 2, 3, 3)), t64((2, 2, 2, 2), 1)]),
    "conv_transpose2d_unbatched": (lambda x, w: F.conv_transpose2d(x, w, stride=3),
                                   lambda: [t64((2, 2, 3)), t64((2, 1, 2, 2), 1)]),
    "interpolate_scale": (lambda x: F.interpolate(x, scale_factor=1.7), lambda: [t64((1, 2, 3, 4))]),
    "interpolate_size_down": (lambda x: F.interpolate(x, size=(2, 3)), lambda: [t64((2, 1, 5, 4))]),
    "interpolate_exact_1d": (lambda x: F.interpolate(x, size=7, mode="nearest-exact"),
                             lambda: [t64((2, 2, 3))]),
}


# PyTorch clamps cosine_similarity's norms outside autograd, so where a norm is below eps its
# gradient is not the derivative of the value (the clamped norm's gradient still flows through
# the norm): only PyTorch's gradient can check it.
AS_PYTORCH = {
    "cosine_similarity_clamped": (lambda a, b: F.cosine_similarity(a, b, 0, eps=1.5),
                                  lambda: [t64((3, 2)), t64((3, 2), 1)]),
    "cosine_similarity_zero_vector": (lambda a, b: F.cosine_similarity(a, b, -1),
                                      lambda: [t64((2, 3)) * c64([[1.0], [0.0]]), t64((2, 3), 1)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, inputs = GRADS[name]
    gradcheck(fn, inputs())


def test_float32_stays_float32():
    for name, (fn, inputs) in GRADS.items():
        xs = [t.detach().float().requires_grad_() for t in inputs()]
        out = fn(*xs)
        assert out.dtype == minifw.float32, name
        out.sum().backward()
        for x in xs:
            assert x.grad.dtype == minifw.float32, name


# ---- values and gradients against PyTorch's -----------------------------------------------------

def _run(fn, inputs, g, dtype, torch=None):
    """fn's value and input gradients (NumPy arrays) in `dtype`, by minifw, or by PyTorch."""
    if torch is None:
        xs = [minifw.tensor(a, dtype=dtype, requires_grad=True) for a in inputs]
        out = fn(*xs)
        out.backward(minifw.tensor(g, dtype=dtype))
        return [out.detach().numpy()] + [x.grad.numpy() for x in xs]
    xs = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in inputs]
    with _torch_functional(torch):
        out = fn(*xs)
    out.backward(torch.tensor(g, dtype=dtype))
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs]


def test_values_and_gradients_equal_torchs():
    """float64: PyTorch's values and gradients to a few ulp. float32: within PyTorch's own
    float32 error of its float64 result (twice it, or TOL32, whichever is larger): as accurate
    as PyTorch's float32, whose sums are accumulated in another order (group_norm of groups of
    two values loses more to cancellation in PyTorch's than here)."""
    torch = pytest.importorskip("torch")
    for name, (fn, inputs) in {**GRADS, **AS_PYTORCH}.items():
        arrays = [t.detach().numpy() for t in inputs()]
        g = rand(tuple(fn(*[minifw.tensor(a) for a in arrays]).shape), 9)
        want64 = _run(fn, arrays, g, torch.float64, torch)
        want32 = _run(fn, arrays, g, torch.float32, torch)
        got64 = _run(fn, arrays, g, minifw.float64)
        got32 = _run(fn, arrays, g, minifw.float32)
        for i, (a64, a32, w64, w32) in enumerate(zip(got64, got32, want64, want32)):
            what = f"{name}: {'value' if i == 0 else f'gradient {i - 1}'}"
            np.testing.assert_allclose(a64, w64, **TOL64, err_msg=what + " in float64")
            bound = TOL32["atol"] + TOL32["rtol"] * np.abs(w64) + 2 * np.abs(w32 - w64)
            worst = np.max(np.abs(a32 - w64) - bound, initial=-1.0)
            assert worst <= 0, f"{what} in float32: {worst} beyond PyTorch's float32 error"


class _torch_functional:
    """GRADS' functions call F.<name> (looked up when called): within this block F's names are
    torch's."""

    def __init__(self, torch):
        self.torch, self.saved = torch, {}

    def __enter__(self):
        for name in ("layer_norm", "group_norm", "normalize", "cosine_similarity", "softplus",
                     "prelu", "cross_entropy", "conv_transpose2d", "interpolate"):
            self.saved[name] = getattr(F, name)
            setattr(F, name, getattr(self.torch.nn.functional, name))

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(F, name, fn)


def test_nearest_indices_equal_torchs_for_many_sizes_and_factors():
    torch = pytest.importorskip("torch")
    x = np.arange(1.0, 14.0)
    for n_in in (1, 2, 3, 5, 7, 13):
        source = x[:n_in].reshape(1, 1, n_in)
        for mode in ("nearest", "nearest-exact"):
            for kwargs in ([dict(size=n) for n in (1, 2, 3, 4, 6, 9, 26, 31)]
                           + [dict(scale_factor=f) for f in (0.5, 0.7, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0,
                                                             3.7, 1 / 3)]
                           + [dict(scale_factor=f, recompute_scale_factor=True) for f in (1.3, 2.6)]):
                try:
                    want = torch.nn.functional.interpolate(torch.tensor(source), mode=mode, **kwargs)
                except RuntimeError:  # an output of size 0
                    continue
                got = F.interpolate(minifw.tensor(source), mode=mode, **kwargs)
                assert got.tolist() == want.tolist(), (n_in, mode, kwargs)


def test_layer_norm_of_large_offsets_equals_torchs_in_float32():
    torch = pytest.importorskip("torch")
    x = (rand((4, 64), 3) + 1000.0).astype(np.float32)  # a mean far from zero: two-pass variance
    got = F.layer_norm(minifw.tensor(x), (64,)).numpy()
    want = torch.nn.functional.layer_norm(torch.tensor(x), (64,)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_modules_equal_torchs_after_loading_their_state():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    pairs = [
        (nn.LayerNorm((3, 4)), torch.nn.LayerNorm((3, 4)), (2, 3, 4)),
        (nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4), (2, 4, 3, 3)),
        (nn.PReLU(4), torch.nn.PReLU(4), (2, 4, 3)),
        (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
         torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
         (2, 4, 5, 5)),
    ]
    for mine, theirs, shape in pairs:
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(-1, 1)
        mine.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        assert list(mine.state_dict()) == list(theirs.state_dict())
        x = rand(shape, 4).astype(np.float32)
        np.testing.assert_allclose(mine(minifw.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), **TOL32)


def test_conv_transpose2d_output_size_equals_torchs():
    torch = pytest.importorskip("torch")
    mine, theirs = nn.ConvTranspose2d(2, 3, 3, stride=3), torch.nn.ConvTranspose2d(2, 3, 3, stride=3)
    mine.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = rand((1, 2, 4, 4), 1).astype(np.float32)
    for size in ([12, 12], [13, 14], (1, 3, 14, 12)):
        got = mine(minifw.tensor(x), output_size=size)
        want = theirs(torch.tensor(x), output_size=size)
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOL32)


# ---- the same results on the devices ------------------------------------------------------------

def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


def _p(*shape, seed=6):
    return minifw.softmax(_x(*shape, seed=seed), 1)


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "layer_norm": (lambda: [_x(3, 4, 5), _x(4, 5, seed=6), _x(4, 5, seed=7)],
                   lambda x, w, b: F.layer_norm(x, (4, 5), w, b)),
    "group_norm": (lambda: [_x(2, 4, 3, 3), _x(4, seed=6), _x(4, seed=7)],
                   lambda x, w, b: F.group_norm(x, 2, w, b)),
    "normalize_cosine": (lambda: [_x(3, 4), _x(3, 4, seed=6)],
                         lambda a, b: F.normalize(a, dim=1) * F.normalize(b, p=1.0, dim=0)
                         + F.cosine_similarity(a, b).reshape(3, 1)),
    "softplus_prelu": (lambda: [_x(2, 3, 4) * 4, _x(3, seed=6)],
                       lambda x, w: F.softplus(x, 1.5, 2.0) + F.prelu(x, w)),
    "cross_entropy_probabilities": (lambda: [_x(4, 5), _p(4, 5), _x(5, seed=8).abs()],
                                    lambda x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.1)),
    "conv_transpose2d": (lambda: [_x(2, 4, 5, 4), _x(4, 3, 3, 3, seed=6), _x(6, seed=7)],
                         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                            output_padding=1, groups=2)),
    "interpolate": (lambda: [_x(2, 3, 4, 5)],
                    lambda x: F.interpolate(x, scale_factor=(1.5, 2.0))),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


def test_one_hot_on_the_device(dev):
    got = F.one_hot(longs([[2, 0], [1, 3]]).to(dev))
    assert got.device == dev and got.dtype == minifw.int64
    np.testing.assert_array_equal(host(got._data), np.eye(4, dtype=np.int64)[[[2, 0], [1, 3]]])


def test_modules_and_containers_move_to_the_device(dev):
    model = nn.Sequential(nn.ConvTranspose2d(2, 3, 2, stride=2), nn.GroupNorm(1, 3), nn.PReLU(3),
                          nn.Upsample(scale_factor=2), nn.Flatten(), nn.Unflatten(1, (3, -1)),
                          nn.LayerNorm(256))
    heads = nn.ModuleDict({"a": model})
    scales = nn.ParameterList([minifw.ones(3)])
    heads.to(dev), scales.to(dev)
    y = heads["a"](_x(2, 2, 4, 4).to(dev)) * scales[0].reshape(1, 3, 1)
    assert y.shape == (2, 3, 256) and y.device == dev
    y.sum().backward()
    assert all(p.grad.device == dev for p in list(heads.parameters()) + list(scales.parameters()))


# ---- LayerNorm, GroupNorm ---------------------------------------------------------------------

def test_layer_norm_normalizes_the_last_dims():
    x = c64(rand((2, 3, 4), 1, -5, 5))
    y = F.layer_norm(x, (3, 4)).numpy().reshape(2, -1)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-15)
    np.testing.assert_allclose(y.var(1), 1, rtol=1e-4)  # eps = 1e-5 against a variance of ~8
    rows = x.numpy().reshape(2, -1)
    want = (rows - rows.mean(1, keepdims=True)) / np.sqrt(rows.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want, **TOL64)


def test_layer_norm_module_parameters_and_state():
    m = nn.LayerNorm((3, 4))
    assert m.normalized_shape == (3, 4) and nn.LayerNorm(5).normalized_shape == (5,)
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m.weight.tolist() == np.ones((3, 4)).tolist() and m.bias.tolist() == np.zeros((3, 4)).tolist()
    assert list(nn.LayerNorm(3, bias=False).state_dict()) == ["weight"]
    plain = nn.LayerNorm(3, elementwise_affine=False)
    assert plain.weight is None and plain.bias is None and list(plain.parameters()) == []
    x = c64(rand((2, 3, 4), 2))
    m.double()
    with minifw.no_grad():
        m.weight.uniform_(-1, 1), m.bias.uniform_(-1, 1)
    np.testing.assert_array_equal(m(x).detach().numpy(),
                                  F.layer_norm(x, (3, 4), m.weight, m.bias).detach().numpy())
    assert nn.LayerNorm(4, dtype=minifw.float64).weight.dtype == minifw.float64


def test_group_norm_equals_layer_norm_over_each_group():
    x = c64(rand((2, 6, 3), 3, -2, 2))
    w, b = c64(rand((6,), 4)), c64(rand((6,), 5))
    y = F.group_norm(x, 3, w, b).numpy()
    groups = F.layer_norm(x.reshape(2, 3, 6), (6,)).numpy().reshape(2, 6, 3)
    np.testing.assert_allclose(y, groups * w.numpy()[:, None] + b.numpy()[:, None], **TOL64)


def test_group_norm_module():
    m = nn.GroupNorm(2, 4)
    assert list(m.state_dict()) == ["weight", "bias"] and m.weight.shape == (4,)
    assert list(nn.GroupNorm(2, 4, bias=False).state_dict()) == ["weight"]
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []
    x = _x(2, 4, 3)
    np.testing.assert_array_equal(m(x).detach().numpy(), F.group_norm(x, 2, m.weight, m.bias).detach().numpy())


# ---- normalize, cosine_similarity, softplus, prelu, one_hot, Unflatten ---------------------

def test_normalize_gives_unit_vectors_and_keeps_zero_ones_zero():
    x = c64([[3.0, 4.0], [0.0, 0.0]])
    assert F.normalize(x).tolist() == [[0.6, 0.8], [0.0, 0.0]]
    assert F.normalize(x, p=1.0, dim=1).tolist() == [[3 / 7, 4 / 7], [0.0, 0.0]]
    assert F.normalize(c64([3.0, -4.0]), dim=0).tolist() == [0.6, -0.8]


def test_cosine_similarity_and_its_module():
    a, b = c64([[1.0, 0.0], [1.0, 1.0]]), c64([[0.0, 2.0], [2.0, 2.0]])
    np.testing.assert_allclose(F.cosine_similarity(a, b).numpy(), [0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(nn.CosineSimilarity(dim=0)(a, b).numpy(),
                               F.cosine_similarity(a, b, dim=0).numpy())
    assert F.cosine_similarity(c64([0.0, 0.0]), c64([1.0, 1.0]), dim=0).item() == 0.0


def test_softplus_is_linear_above_the_threshold_and_finite_below():
    x = c64([-1000.0, -1.0, 0.0, 1.0, 25.0, 1000.0])
    y = F.softplus(x).numpy()
    np.testing.assert_allclose(y[:4], np.log1p(np.exp([-1000.0, -1.0, 0.0, 1.0])), **TOL64)
    assert y[4] == 25.0 and y[5] == 1000.0
    np.testing.assert_array_equal(nn.Softplus(2.0, 5.0)(x).numpy(), F.softplus(x, 2.0, 5.0).numpy())


def test_prelu_module_starts_at_init_and_learns_per_channel():
    m = nn.PReLU(3, init=0.1)
    assert list(m.state_dict()) == ["weight"] and m.weight.tolist() == pytest.approx([0.1] * 3)
    x = minifw.tensor([[[-1.0, 2.0]] * 3])
    y = m(x)
    np.testing.assert_allclose(y.detach().numpy(), [[[-0.1, 2.0]] * 3], rtol=1e-6)
    y.sum().backward()
    assert m.weight.grad.tolist() == [-1.0, -1.0, -1.0]
    assert nn.PReLU()(minifw.tensor([-4.0, 4.0])).tolist() == [-1.0, 4.0]


def test_one_hot_as_pytorchs():
    assert F.one_hot(longs([0, 2, 1])).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    y = F.one_hot(longs([[1], [0]]), num_classes=3)
    assert y.dtype == minifw.int64 and y.shape == (2, 1, 3) and y.tolist() == [[[0, 1, 0]], [[1, 0, 0]]]
    assert F.one_hot(longs(2), 4).tolist() == [0, 0, 1, 0]
    assert F.one_hot(minifw.zeros(0, dtype=minifw.int64), 3).shape == (0, 3)
    assert not F.one_hot(longs([1])).requires_grad


def test_unflatten_undoes_flatten():
    x = _x(2, 3, 4, 5)
    flat = nn.Flatten()(x)
    assert nn.Unflatten(1, (3, 4, 5))(flat).tolist() == x.tolist()
    assert nn.Unflatten(-1, [3, -1, 5])(flat).shape == (2, 3, 4, 5)
    assert nn.Unflatten(0, (1, 2))(x).shape == (1, 2, 3, 4, 5)


# ---- cross_entropy with class-probability targets ------------------------------------------

def test_probability_targets_of_one_hot_rows_equal_class_index_targets():
    x = c64(rand((4, 5), 1, -3, 3))
    idx = longs([0, 3, 4, 1])
    onehot = F.one_hot(idx, 5).double()
    w = c64(rand((5,), 2, 0.5, 2.0))
    for reduction in ("sum", "none"):
        np.testing.assert_allclose(F.cross_entropy(x, onehot, w, reduction=reduction).numpy(),
                                   F.cross_entropy(x, idx, w, reduction=reduction).numpy(), **TOL64)
    # 'mean' divides by the number of samples, not (as class indices do) by the weights' sum
    np.testing.assert_allclose(F.cross_entropy(x, onehot, w).item(),
                               F.cross_entropy(x, idx, w, reduction="sum").item() / 4, **TOL64)
    np.testing.assert_allclose(F.cross_entropy(x, onehot, label_smoothing=0.3).item(),
                               F.cross_entropy(x, idx, label_smoothing=0.3).item(), **TOL64)


def test_probability_targets_through_the_module_and_the_index_path_unchanged():
    x, t = c64(rand((3, 4), 1)), _probabilities((3, 4), 2)
    loss = nn.CrossEntropyLoss(weight=c64([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1)
    np.testing.assert_array_equal(
        loss(x, t).detach().numpy(),
        F.cross_entropy(x, t, c64([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1).detach().numpy())
    logits = minifw.randn(3, 4, requires_grad=True)
    assert F.cross_entropy(logits, longs([0, 1, 3])).grad_fn.function is SoftmaxCrossEntropy


def test_probability_targets_of_an_empty_batch_give_nan_for_the_mean():
    x = minifw.zeros(0, 3, dtype=minifw.float64)
    assert math.isnan(F.cross_entropy(x, x.clone()).item())
    assert F.cross_entropy(x, x.clone(), reduction="sum").item() == 0.0


# ---- ConvTranspose2d, Upsample ------------------------------------------------------------------

def test_conv_transpose2d_is_the_adjoint_of_conv2d():
    """<conv2d(z, w), x> == <z, conv_transpose2d(x, w)> for every x and z."""
    w = c64(rand((4, 3, 3, 2), 1))
    z = c64(rand((2, 3, 9, 8), 2))
    for stride, padding, dilation in ((1, 0, 1), (2, 1, 1), ((2, 3), (1, 0), (1, 2))):
        y = F.conv2d(z, w, stride=stride, padding=padding, dilation=dilation)
        x = c64(rand(y.shape, 3))
        zt = F.conv_transpose2d(x, w, stride=stride, padding=padding, dilation=dilation,
                                output_padding=tuple(
                                    z.shape[2 + d] - ((y.shape[2 + d] - 1) * s - 2 * p + dl * (k - 1) + 1)
                                    for d, s, p, dl, k in zip(range(2), np.broadcast_to(stride, 2),
                                                              np.broadcast_to(padding, 2),
                                                              np.broadcast_to(dilation, 2), w.shape[2:])))
        assert zt.shape == z.shape
        np.testing.assert_allclose((y * x).sum().item(), (z * zt).sum().item(), rtol=1e-12)


def test_conv_transpose2d_module_initializes_and_sizes_like_pytorchs():
    minifw.manual_seed(0)
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)
    assert m.weight.shape == (4, 3, 3, 3) and m.bias.shape == (6,)
    bound = 1 / math.sqrt(3 * 9)  # fan_in = out_channels // groups * kh * kw
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m(_x(2, 4, 5, 5)).shape == (2, 6, 11, 11)
    assert m(_x(2, 4, 5, 5), output_size=[12, 12]).shape == (2, 6, 12, 12)
    assert m(_x(4, 5, 5), output_size=(6, 12, 11)).shape == (6, 12, 11)
    assert nn.ConvTranspose2d(2, 2, 2, bias=False).bias is None


@pytest.mark.parametrize("engine", ["primitives", "caffe"])
def test_conv_transpose2d_runs_on_either_engine(engine):
    x, w = t64((2, 4, 5, 4)), t64((4, 3, 3, 3), 1)
    want = [F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))]
    want[0].sum().backward()
    want += [x.grad.numpy().copy(), w.grad.numpy().copy()]
    x.grad = w.grad = None
    with minifw.engine(engine):
        y = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))
        y.sum().backward()
    for got, expected in zip([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()],
                             [want[0].detach().numpy()] + want[1:]):
        np.testing.assert_allclose(got, expected, **TOL64)


def test_upsample_applies_interpolate():
    x = _x(1, 2, 3, 3)
    np.testing.assert_array_equal(nn.Upsample(scale_factor=2)(x).numpy(),
                                  x.numpy().repeat(2, axis=2).repeat(2, axis=3))
    assert nn.Upsample(size=(4, 5))(x).shape == (1, 2, 4, 5)
    y = nn.Upsample(size=5, mode="nearest-exact")(x[0])
    assert y.shape == (2, 3, 5)


def test_interpolate_copies_integer_and_bool_data():
    x = minifw.arange(6).reshape(1, 1, 2, 3)
    y = F.interpolate(x, scale_factor=2)
    assert y.dtype == minifw.int64 and y.tolist() == [[np.arange(6).reshape(2, 3).repeat(2, 0)
                                                       .repeat(2, 1).tolist()]]
    assert F.interpolate(x > 2, size=(1, 3)).tolist() == [[[[False, False, False]]]]


def test_norms_of_empty_inputs_are_empty():
    x = minifw.zeros(0, 4, requires_grad=True)
    F.layer_norm(x, (4,)).sum().backward()
    assert x.grad.shape == (0, 4)
    assert F.layer_norm(minifw.zeros(2, 0), (0,)).shape == (2, 0)
    assert F.group_norm(minifw.zeros(0, 4, 3), 2).shape == (0, 4, 3)


# ---- containers -------------------------------------------------------------------------------

class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 2)})
        self.scales = nn.ParameterList([minifw.ones(3), nn.Parameter(minifw.zeros(2))])
        self.extra = nn.ParameterDict({"gamma": minifw.ones(1), "alpha": minifw.zeros(1)})

    def forward(self, x):
        return (self.heads["cls"](x) * self.scales[0] + self.extra["gamma"],
                self.heads["box"](x) + self.scales[1] + self.extra["alpha"])


HEADS_KEYS = ["heads.cls.weight", "heads.cls.bias", "heads.box.weight", "heads.box.bias",
              "scales.0", "scales.1", "extra.alpha", "extra.gamma"]


def test_containers_register_their_contents_under_pytorchs_names():
    model = Heads()
    assert list(model.state_dict()) == HEADS_KEYS
    assert [n for n, _ in model.named_parameters()] == HEADS_KEYS
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    a, b = model(_x(5, 4))
    (a.sum() + b.sum()).backward()
    assert all(p.grad is not None for p in model.parameters())
    model.double()
    assert all(p.dtype == minifw.float64 for p in model.parameters())
    copy = Heads().double()
    copy.load_state_dict(model.state_dict())
    for (k, p), q in zip(model.state_dict().items(), copy.state_dict().values()):
        assert p.tolist() == q.tolist(), k
    optimizer = minifw.optim.SGD(model.parameters(), lr=0.1)
    assert len(optimizer.param_groups[0]["params"]) == len(HEADS_KEYS)


def test_container_keys_equal_torchs():
    torch = pytest.importorskip("torch")

    class TorchHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3), "box": torch.nn.Linear(4, 2)})
            self.scales = torch.nn.ParameterList([torch.ones(3), torch.nn.Parameter(torch.zeros(2))])
            self.extra = torch.nn.ParameterDict({"gamma": torch.ones(1), "alpha": torch.zeros(1)})

    theirs = TorchHeads()
    assert list(theirs.state_dict()) == HEADS_KEYS
    mine = Heads()
    mine.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})


def test_module_dict_methods():
    d = nn.ModuleDict([("b", nn.ReLU()), ("a", nn.Tanh())])
    assert list(d) == ["b", "a"] and list(d.keys()) == ["b", "a"] and len(d) == 2 and "a" in d
    d["c"] = nn.Identity()
    d.update({"b": nn.Sigmoid()})  # replaced in place: the order stays
    assert list(d) == ["b", "a", "c"] and isinstance(d["b"], nn.Sigmoid)
    assert isinstance(d.pop("a"), nn.Tanh) and list(d) == ["b", "c"]
    del d["b"]
    assert [type(m).__name__ for m in d.values()] == ["Identity"]
    assert [k for k, _ in d.items()] == ["c"]
    d.clear()
    assert len(d) == 0
    with pytest.raises(NotImplementedError):
        d(minifw.ones(1))


def test_parameter_list_methods():
    p = nn.ParameterList()
    p.append(minifw.ones(2)).extend([minifw.zeros(1), minifw.ones(3)])
    p += [minifw.ones(4)]
    assert len(p) == 4 and [t.shape for t in p] == [(2,), (1,), (3,), (4,)]
    assert isinstance(p[-1], nn.Parameter) and p[-1].requires_grad
    sliced = p[1:3]
    assert isinstance(sliced, nn.ParameterList) and [t.shape for t in sliced] == [(1,), (3,)]
    assert sliced[0] is p[1]
    p[0] = minifw.full((5,), 2.0)
    assert p[0].shape == (5,) and list(p.state_dict()) == ["0", "1", "2", "3"]
    assert "0" not in dir(p)


def test_parameter_dict_methods():
    d = nn.ParameterDict({"b": minifw.ones(1), "a": minifw.zeros(1)})
    assert list(d) == ["a", "b"]  # a plain dict's keys are sorted, as PyTorch's
    d.update(collections.OrderedDict([("z", minifw.ones(2)), ("c", minifw.ones(3))]))
    assert list(d.keys()) == ["a", "b", "z", "c"]
    assert list(reversed(d)) == ["c", "z", "b", "a"]
    assert d.get("missing") is None and d.get("a") is d["a"]
    assert d.setdefault("y", minifw.ones(1)) is d["y"]
    key, value = d.popitem()
    assert key == "y" and isinstance(value, nn.Parameter) and "y" not in d
    assert d.pop("z").shape == (2,) and "z" not in d.state_dict()
    merged = d | nn.ParameterDict({"q": minifw.ones(1)})
    assert list(merged) == ["a", "b", "c", "q"] and list(d) == ["a", "b", "c"]
    d |= {"q": minifw.ones(1)}
    assert list(d) == ["a", "b", "c", "q"]
    assert list(d.copy()) == list(d) and d.copy()["a"] is d["a"]
    assert list(d.fromkeys(["m", "n"])) == ["m", "n"]
    assert [k for k, _ in d.items()] == list(d) and len(list(d.values())) == 4
    d["note"] = "not a tensor"
    assert d["note"] == "not a tensor" and "note" not in d.state_dict()
    d.clear()
    assert len(d) == 0 and list(d.state_dict()) == []


# ---- errors ------------------------------------------------------------------------------------

ERRORS = [
    # layer_norm
    (lambda: F.layer_norm(_x(2, 3, 4), (5,)), ValueError,
     r"layer_norm: given normalized_shape=\(5,\), expected input of shape \(\*, 5\); got input of "
     r"shape \(2, 3, 4\)", "layer_norm_shape"),
    (lambda: F.layer_norm(_x(2, 3), 3), TypeError,
     "layer_norm: normalized_shape must be a tuple or list of ints", "layer_norm_int"),
    (lambda: F.layer_norm(_x(2, 3), ()), ValueError,
     r"layer_norm: normalized_shape must have at least one dim, got \(\)", "layer_norm_empty"),
    (lambda: F.layer_norm(_x(2, 3, 4), (3, 4), _x(4)), ValueError,
     r"layer_norm: weight must have shape \(3, 4\), as normalized_shape; got weight of shape \(4,\)",
     "layer_norm_weight"),
    (lambda: F.layer_norm(_x(2, 3), (3,), bias=c64([0.0, 0.0, 0.0])), TypeError,
     "layer_norm: bias has dtype float64 but input has dtype float32", "layer_norm_dtype"),
    (lambda: F.layer_norm(_x(2, 3), (3,), eps=-1.0), ValueError, "layer_norm: eps must be >= 0",
     "layer_norm_eps"),
    (lambda: nn.LayerNorm((2, -1)), ValueError, "LayerNorm: normalized_shape must have non-negative",
     "LayerNorm_negative"),
    # group_norm
    (lambda: F.group_norm(_x(2, 4, 3), 3), ValueError,
     r"group_norm: input's channels must be divisible by num_groups; got input of shape \(2, 4, 3\) "
     r"\(4 channels\) and num_groups=3", "group_norm_groups"),
    (lambda: F.group_norm(_x(2, 4, 3), 2, _x(3)), ValueError,
     r"group_norm: weight must have shape \(4,\), as one value per channel of input; got weight of "
     r"shape \(3,\)", "group_norm_weight"),
    (lambda: F.group_norm(_x(4), 1), ValueError, "group_norm: input must have at least 2 dims",
     "group_norm_rank"),
    (lambda: F.group_norm(_x(1, 2), 2), ValueError,
     "group_norm: expected more than 1 value per channel", "group_norm_one_value"),
    (lambda: nn.GroupNorm(3, 4), ValueError,
     r"GroupNorm: num_channels \(4\) must be divisible by num_groups \(3\)", "GroupNorm_groups"),
    # normalize, cosine_similarity
    (lambda: F.normalize(_x(2, 3), dim=2), IndexError,
     r"normalize: dim: dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
     "normalize_dim"),
    (lambda: F.normalize(_x(3)), IndexError, "normalize: dim: dimension out of range", "normalize_1d_default_dim"),
    (lambda: F.normalize(_x(2, 3), p=math.nan), ValueError, "normalize: p must be a real number or",
     "normalize_nan_p"),
    (lambda: F.normalize(_x(2, 3), out=_x(2, 3)), ValueError, "normalize: out= is not supported",
     "normalize_out"),
    (lambda: F.cosine_similarity(_x(2, 3), _x(2, 4)), ValueError,
     r"cosine_similarity: x1 of shape \(2, 3\) and x2 of shape \(2, 4\) must broadcast",
     "cosine_shapes"),
    (lambda: F.cosine_similarity(_x(3), _x(3)), IndexError, "cosine_similarity: dim: dimension out of range",
     "cosine_dim"),
    (lambda: F.cosine_similarity(_x(2, 3), c64(rand((2, 3)))), TypeError,
     "cosine_similarity: x2 has dtype float64 but input has dtype float32", "cosine_dtypes"),
    # softplus, prelu
    (lambda: F.softplus(_x(3), beta=math.inf), ValueError, "softplus: beta must be finite", "softplus_beta"),
    (lambda: F.prelu(_x(2, 4, 3), _x(3)), ValueError,
     r"prelu: weight must have 1 element or one per channel of input \(dim 1: 4\); got weight of "
     r"shape \(3,\) for input of shape \(2, 4, 3\)", "prelu_channels"),
    (lambda: F.prelu(_x(2, 4), _x(1, 1)), ValueError, "prelu: weight must be a 0-D or 1-D tensor",
     "prelu_weight_rank"),
    (lambda: nn.PReLU(0), ValueError, "PReLU: num_parameters must be >= 1, got 0", "PReLU_count"),
    # one_hot
    (lambda: F.one_hot(longs([0, -1, 1])), ValueError,
     "one_hot: tensor's class values must be non-negative, got -1", "one_hot_negative"),
    (lambda: F.one_hot(longs([0, 3, 1]), 2), ValueError,
     "one_hot: tensor's class values must be smaller than num_classes=2, got 3", "one_hot_too_large"),
    (lambda: F.one_hot(longs([0, 1]), -2), ValueError, "one_hot: num_classes must be >= -1, got -2",
     "one_hot_num_classes"),
    (lambda: F.one_hot(minifw.tensor([0.0, 1.0])), TypeError,
     "one_hot: tensor must hold int64 class indices", "one_hot_float"),
    (lambda: F.one_hot(minifw.tensor([0, 1], dtype=minifw.int32)), TypeError,
     "one_hot: tensor must hold int64 class indices .* got dtype int32", "one_hot_int32"),
    (lambda: F.one_hot(minifw.zeros(0, dtype=minifw.int64)), ValueError,
     "one_hot: cannot infer the number of classes from an empty tensor", "one_hot_empty"),
    # Unflatten
    (lambda: nn.Unflatten(1, 6), TypeError,
     "Unflatten: unflattened_size must be a tuple of ints, but found type int", "unflatten_int"),
    (lambda: nn.Unflatten(1, (2, 3.0)), TypeError,
     "unflattened_size must be tuple of ints, but found element of type float at pos 1",
     "unflatten_float"),
    (lambda: nn.Unflatten(1, (2, 3))(_x(2, 5)), ValueError,
     r"Unflatten: unflattened_size \(2, 3\) must multiply up to the size of dim 1, 5", "unflatten_product"),
    (lambda: nn.Unflatten(2, (2, 3))(_x(2, 6)), IndexError, "Unflatten: dim: dimension out of range",
     "unflatten_dim"),
    # cross_entropy with probabilities
    (lambda: F.cross_entropy(_x(2, 3), minifw.softmax(_x(2, 3), 1), ignore_index=1), ValueError,
     "cross_entropy: ignore_index is not supported for class-probability", "ce_ignore_index"),
    (lambda: F.cross_entropy(_x(2, 3), minifw.zeros(2, 3, dtype=minifw.int64)), TypeError,
     r"cross_entropy: a target of the input's shape \(2, 3\) holds class probabilities, so it must be "
     r"floating point; got dtype int64", "ce_int_probabilities"),
    (lambda: F.cross_entropy(_x(2, 3), c64(rand((2, 3)))), TypeError,
     "cross_entropy: target has dtype float64 but input has dtype float32", "ce_dtypes"),
    (lambda: F.cross_entropy(_x(2, 3), minifw.rand(2, 4)), TypeError,
     r"cross_entropy: target must hold int64 class indices of shape \(N,\), or class probabilities "
     r"of the input's shape \(2, 3\); got a float32 target of shape \(2, 4\)", "ce_float_shape"),
    (lambda: F.cross_entropy(_x(2, 3), minifw.rand(2, 3), minifw.ones(2)), ValueError,
     r"cross_entropy: weight must have shape \(3,\), one per class", "ce_weight"),
    # conv_transpose2d
    (lambda: F.conv_transpose2d(_x(1, 3, 4, 4), _x(2, 3, 3, 3)), ValueError,
     r"conv_transpose2d: input must have 2 channels to match weight of shape \(2, 3, 3, 3\)",
     "convT_channels"),
    (lambda: F.conv_transpose2d(_x(1, 2, 4, 4), _x(2, 3, 3, 3), output_padding=1), ValueError,
     r"conv_transpose2d: output_padding must be smaller than either stride or dilation, got "
     r"output_padding=\(1, 1\), stride=\(1, 1\), dilation=\(1, 1\)", "convT_output_padding"),
    (lambda: F.conv_transpose2d(_x(1, 2, 2, 2), _x(2, 3, 1, 1), padding=1), ValueError,
     r"conv_transpose2d: the output size \(0, 0\) would be < 1", "convT_output_size"),
    (lambda: F.conv_transpose2d(_x(1, 2, 2, 2), _x(2, 3, 1, 1), _x(4)), ValueError,
     r"conv_transpose2d: bias must have shape \(3,\)", "convT_bias"),
    (lambda: F.conv_transpose2d(_x(1, 4, 2, 2), _x(4, 3, 1, 1), groups=3), ValueError,
     "conv_transpose2d: weight.shape.0. .the input channels, 4. must be divisible by groups=3",
     "convT_groups"),
    (lambda: F.conv_transpose2d(_x(2, 2), _x(2, 3, 1, 1)), ValueError,
     r"conv_transpose2d: input must be 3-D \(C_in, H, W\) or 4-D", "convT_rank"),
    (lambda: nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"), ValueError,
     'ConvTranspose2d: only "zeros" padding mode is supported', "ConvTranspose2d_padding_mode"),
    (lambda: nn.ConvTranspose2d(2, 3, 3, stride=2)(_x(1, 2, 4, 4), output_size=(12, 12)), ValueError,
     r"requested an output size of \[12, 12\], but valid sizes range from \[9, 9\] to \[10, 10\]",
     "ConvTranspose2d_output_size"),
    # interpolate
    (lambda: F.interpolate(_x(1, 2, 3, 3)), ValueError,
     "interpolate: either size or scale_factor should be defined", "interp_nothing"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), size=4, scale_factor=2), ValueError,
     "interpolate: only one of size or scale_factor should be defined", "interp_both"),
    (lambda: F.interpolate(_x(1, 2, 3), scale_factor=2, mode="bilinear"), ValueError,
     r"interpolate: mode='bilinear' needs a 4-D \(N, C, H, W\) input", "interp_bilinear"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), scale_factor=2, mode="cubic"), ValueError,
     "interpolate: mode must be one of", "interp_mode"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), scale_factor=2, align_corners=True), ValueError,
     "interpolate: align_corners option can only be set with the interpolating modes",
     "interp_align_corners"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), size=(4,)), ValueError,
     r"interpolate: size must be an int or a pair of ints, got \(4,\)", "interp_size_length"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), scale_factor=(2.0, 1.0, 1.0)), ValueError,
     "interpolate: scale_factor must be a number or 2 numbers", "interp_factor_length"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), scale_factor=0.2), ValueError,
     r"interpolate: scale_factor=0.2 gives an output of size \(0, 0\)", "interp_factor_small"),
    (lambda: F.interpolate(_x(1, 2, 3, 3), size=4, recompute_scale_factor=True), ValueError,
     "interpolate: recompute_scale_factor is not meaningful with an explicit size", "interp_recompute"),
    (lambda: F.interpolate(_x(2, 3), scale_factor=2), ValueError,
     r"interpolate: input must be 3-D \(N, C, L\), 4-D \(N, C, H, W\) or 5-D", "interp_rank"),
    # containers
    (lambda: nn.ModuleDict({"a.b": nn.ReLU()}), KeyError,
     "add_module: module name can.+t contain \".\", got: a.b", "module_dict_dot"),
    (lambda: nn.ModuleDict({"": nn.ReLU()}), KeyError, "module name can.+t be empty string",
     "module_dict_empty_key"),
    (lambda: nn.ModuleDict({1: nn.ReLU()}), TypeError,
     "add_module: module name should be a string. Got int", "module_dict_int_key"),
    (lambda: nn.ModuleDict({"x": 3}), TypeError, "add_module: 'x' must be a Module or None, got int",
     "module_dict_value"),
    (lambda: nn.ModuleDict(3), TypeError,
     "ModuleDict.update should be called with an iterable of key/value pairs, but got int",
     "module_dict_update"),
    (lambda: nn.ModuleDict([("a", nn.ReLU(), 3)]), ValueError,
     "ModuleDict update sequence element #0 has length 3; 2 is required", "module_dict_pairs"),
    (lambda: nn.ModuleDict()["missing"], KeyError, "missing", "module_dict_missing"),
    (lambda: nn.ParameterList([minifw.ones(1)])[1], IndexError,
     "ParameterList: index 1 is out of range for 1 parameters", "parameter_list_index"),
    (lambda: nn.ParameterList([minifw.ones(1)])["0"], TypeError,
     "ParameterList indices must be ints or slices, got str", "parameter_list_index_type"),
    (lambda: nn.ParameterList(minifw.ones(2)), TypeError,
     "ParameterList.extend should be called with an iterable, but got Tensor", "parameter_list_tensor"),
    (lambda: nn.ParameterList([minifw.ones(1)])(1), RuntimeError, "ParameterList should not be called",
     "parameter_list_call"),
    (lambda: nn.ParameterDict({"a": minifw.ones(1)})["b"], AttributeError,
     r"'ParameterDict' object has no attribute 'b' \(no such key; its keys are \['a'\]\)",
     "parameter_dict_missing"),
    (lambda: nn.ParameterDict()[0], TypeError,
     "Index given to ParameterDict cannot be used as a key as it is not a string", "parameter_dict_key"),
    (lambda: nn.ParameterDict({"a.b": minifw.ones(1)}), KeyError,
     "register_parameter: parameter name can.+t contain", "parameter_dict_dot"),
    (lambda: nn.ParameterDict()(1), RuntimeError, "ParameterDict should not be called",
     "parameter_dict_call"),
]


@pytest.mark.parametrize("call, error, message", [e[:3] for e in ERRORS], ids=[e[3] for e in ERRORS])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
