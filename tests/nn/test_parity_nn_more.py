"""Behaviour PyTorch's nn layers have and minifw's must match: avg_pool2d's divisor_override,
the reprs of Embedding, EmbeddingBag, ModuleList and the recurrent layers, the containers'
list methods, load_state_dict's printed result, the regression losses' weight, the lazy
norms' bias=False.

Expected values are written with NumPy or by hand; where torch is installed (it is not a
dependency), the same cases are also compared with PyTorch's."""
import collections

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def ref_avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    """A naive float64 avg_pool2d of x (N, C, H, W): PyTorch's windows and divisors."""
    (kh, kw), (sh, sw), (ph, pw) = k, s, p
    n, c, h, w = x.shape

    def out_len(size, k, s, p):
        length = (size + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (length - 1) * s >= size + p:
            length -= 1
        return length

    oh, ow = out_len(h, kh, sh, ph), out_len(w, kw, sw, pw)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * sh - ph, j * sw - pw
            h1, w1 = min(h0 + kh, h + ph), min(w0 + kw, w + pw)
            pool_size = (h1 - h0) * (w1 - w0)
            a0, b0, a1, b1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, a0:a1, b0:b1].sum(axis=(2, 3))
            if divisor_override is not None:
                divisor = divisor_override
            elif count_include_pad:
                divisor = pool_size
            else:
                divisor = (a1 - a0) * (b1 - b0)
            out[:, :, i, j] = total / divisor
    return out


DIVISOR_CASES = [
    # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((3, 3), (3, 3), (0, 0), False, True, 2),
    ((3, 3), (2, 2), (1, 1), True, True, 4),
    ((2, 3), (3, 1), (1, 0), False, False, -3),
    ((4, 4), (3, 3), (0, 0), True, True, 7),
    ((3, 3), (2, 2), (1, 1), True, False, 1),
]


@pytest.mark.parametrize("k,s,p,ceil_mode,count_include_pad,divisor", DIVISOR_CASES)
def test_avg_pool2d_divisor_override_divides_the_window_sum(k, s, p, ceil_mode,
                                                            count_include_pad, divisor):
    x = rand((2, 3, 9, 10))
    got = F.avg_pool2d(minifw.tensor(x), k, s, p, ceil_mode, count_include_pad, divisor)
    np.testing.assert_allclose(got.numpy(), ref_avg_pool2d(x, k, s, p, ceil_mode,
                                                           count_include_pad, divisor),
                               rtol=1e-12, atol=1e-13)
    layer = nn.AvgPool2d(k, s, p, ceil_mode, count_include_pad, divisor)
    np.testing.assert_allclose(layer(minifw.tensor(x)).numpy(), got.numpy(), rtol=0, atol=0)


def test_avg_pool2d_divisor_override_unbatched_float32_and_gradient():
    x = rand((3, 7, 7), seed=1)
    got = F.avg_pool2d(minifw.tensor(x, dtype=minifw.float32), 3, 2, 1, divisor_override=5)
    assert got.dtype == np.float32 and got.shape == (3, 4, 4)
    np.testing.assert_allclose(got.numpy(), ref_avg_pool2d(x[None], (3, 3), (2, 2), (1, 1),
                                                           False, True, 5)[0], rtol=1e-6, atol=1e-6)
    # Every input element reaches each window it is in with weight 1 / divisor.
    t = minifw.tensor(x[None], requires_grad=True)
    F.avg_pool2d(t, 2, divisor_override=3).sum().backward()
    expected = np.zeros((1, 3, 7, 7))
    expected[..., :6, :6] = 1 / 3
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-15)
    gradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1, True, False, 4),
              [minifw.tensor(rand((1, 2, 6, 5), seed=2), requires_grad=True)])


def test_avg_pool_divisor_override_refuses_zero_and_floats():
    with pytest.raises(ValueError, match="avg_pool2d: divisor_override must be non-zero, got 0"):
        F.avg_pool2d(minifw.ones(1, 1, 4, 4), 2, divisor_override=0)
    with pytest.raises(TypeError, match="divisor_override"):
        F.avg_pool2d(minifw.ones(1, 1, 4, 4), 2, divisor_override=1.5)
    # The layers check it when built.
    with pytest.raises(ValueError, match="AvgPool2d: divisor_override must be non-zero"):
        nn.AvgPool2d(2, divisor_override=0)
    with pytest.raises(ValueError, match="AvgPool3d: divisor_override must be non-zero"):
        nn.AvgPool3d(2, divisor_override=0)


def test_avg_pool2d_divisor_override_equals_torchs():
    torch = pytest.importorskip("torch")
    x = rand((2, 3, 9, 10)).astype(np.float32)
    for k, s, p, ceil_mode, count_include_pad, divisor in DIVISOR_CASES:
        a = minifw.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        out_a = F.avg_pool2d(a, k, s, p, ceil_mode, count_include_pad, divisor)
        out_b = torch.nn.functional.avg_pool2d(b, k, s, p, ceil_mode, count_include_pad, divisor)
        np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        g = rand(out_a.shape, seed=4).astype(np.float32)
        out_a.backward(minifw.tensor(g))
        out_b.backward(torch.tensor(g))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- reprs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("make,expected", [
    (lambda: nn.Embedding(5, 3, scale_grad_by_freq=True), "Embedding(5, 3, scale_grad_by_freq=True)"),
    (lambda: nn.Embedding(5, 3, max_norm=0.5, norm_type=1.0),
     "Embedding(5, 3, max_norm=0.5, norm_type=1.0)"),
    (lambda: nn.Embedding(5, 3, padding_idx=0, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True),
     "Embedding(5, 3, padding_idx=0, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True)"),
    (lambda: nn.Embedding(5, 3), "Embedding(5, 3)"),
    (lambda: nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True),
     "EmbeddingBag(10, 3, mode='sum')"),
    (lambda: nn.EmbeddingBag(10, 3, norm_type=1.0, max_norm=2.0, padding_idx=1),
     "EmbeddingBag(10, 3, max_norm=2.0, norm_type=1.0, mode='mean', padding_idx=1)"),
])
def test_embedding_reprs_are_pytorchs(make, expected):
    assert repr(make()) == expected



def test_embedding_reprs_equal_torchs():
    torch = pytest.importorskip("torch")
    for build in ["Embedding(5, 3, padding_idx=1, max_norm=0.5, norm_type=1.0, "
                  "scale_grad_by_freq=True)",
                  "EmbeddingBag(5, 3, mode='max', include_last_offset=True, norm_type=3.0)"]:
        assert repr(eval("nn." + build, {"nn": nn})) == repr(eval("nn." + build, {"nn": torch.nn}))


def test_module_list_repr_folds_runs_of_equal_modules():
    layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(2, 3), nn.ReLU(), nn.Linear(2, 3)])
    assert repr(layers) == (
        "ModuleList(\n"
        "  (0-1): 2 x Linear(in_features=2, out_features=3, bias=True)\n"
        "  (2): ReLU()\n"
        "  (3): Linear(in_features=2, out_features=3, bias=True)\n"
        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
    blocks = nn.Sequential(nn.ModuleList([nn.Sequential(nn.Linear(2, 2), nn.Tanh())
                                          for _ in range(3)]))
    assert repr(blocks) == (
        "Sequential(\n"
        "  (0): ModuleList(\n"
        "    (0-2): 3 x Sequential(\n"
        "      (0): Linear(in_features=2, out_features=2, bias=True)\n"
        "      (1): Tanh()\n"
        "    )\n"
        "  )\n"
        ")")



def test_module_list_reprs_equal_torchs():
    torch = pytest.importorskip("torch")
    for build in ["ModuleList([{0}.Linear(2, 3), {0}.Linear(2, 3), {0}.ReLU(), {0}.Linear(2, 3)])",
                  "ModuleList([{0}.Sequential({0}.Linear(2, 2), {0}.ReLU()) for _ in range(3)])",
                  "ModuleList([{0}.ModuleList([{0}.ReLU(), {0}.ReLU()])])"]:
        ours = eval("nn." + build.format("nn"), {"nn": nn})
        theirs = eval("nn." + build.format("nn"), {"nn": torch.nn})
        assert repr(ours) == repr(theirs)


# ---- containers ----------------------------------------------------------------------------

def widths(container):
    return [m.in_features for m in container]


def test_sequential_delete_renumbers_as_pytorchs():
    seq = nn.Sequential(collections.OrderedDict([("a", nn.Linear(1, 1)), ("b", nn.Linear(2, 2)),
                                                 ("c", nn.Linear(3, 3))]))
    del seq[0]
    assert list(seq._modules) == ["0", "1"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    seq = nn.Sequential(*(nn.Linear(i, i) for i in range(1, 6)))
    del seq[1:3]
    assert list(seq._modules) == ["0", "1", "2"] and widths(seq) == [1, 4, 5]
    assert seq.pop(-1).in_features == 5 and widths(seq) == [1, 4]
    layers = nn.ModuleList(nn.Linear(i, i) for i in range(1, 5))
    del layers[1:3]
    assert list(layers._modules) == ["0", "1"] and widths(layers) == [1, 4]
    assert layers.pop(0).in_features == 1 and list(layers._modules) == ["0"]


def test_sequential_insert_extend_add_and_multiply():
    seq = nn.Sequential(nn.Linear(1, 1), nn.Linear(2, 2), nn.Linear(3, 3))
    assert seq.insert(1, nn.Linear(4, 4)) is seq
    seq.insert(-1, nn.Linear(5, 5))
    seq.insert(5, nn.Linear(6, 6))
    assert widths(seq) == [1, 4, 2, 5, 3, 6] and list(seq._modules) == [str(i) for i in range(6)]
    assert seq.extend(nn.Sequential(nn.Linear(7, 7))) is seq and len(seq) == 7
    joined = nn.Sequential(nn.Linear(1, 1)) + nn.Sequential(nn.Linear(2, 2))
    assert type(joined) is nn.Sequential and widths(joined) == [1, 2]
    joined += nn.Sequential(nn.Linear(3, 3))
    assert widths(joined) == [1, 2, 3]
    relu = nn.ReLU()
    twice = nn.Sequential(nn.Linear(1, 1), relu) * 2
    assert list(twice._modules) == ["0", "1", "2", "3"] and twice[3] is relu
    assert len(3 * nn.Sequential(relu)) == 3
    tripled = nn.Sequential(nn.Linear(1, 1), nn.Linear(2, 2))
    tripled *= 3
    assert widths(tripled) == [1, 2] * 3
    with pytest.raises(IndexError, match="index 3 is out of range for 1 modules"):
        nn.Sequential(relu).insert(3, relu)
    with pytest.raises(TypeError, match="module must be a Module, got int"):
        nn.Sequential(relu).insert(0, 3)
    with pytest.raises(ValueError, match="the factor must be positive, got 0"):
        nn.Sequential(relu) * 0
    with pytest.raises(TypeError, match="the factor must be an int, got float"):
        nn.Sequential(relu) * 1.5
    with pytest.raises(ValueError, match="must be a Sequential, got ModuleList"):
        nn.Sequential(relu) + nn.ModuleList()


def test_module_list_add_and_iadd():
    layers = nn.ModuleList([nn.Linear(1, 1)])
    joined = layers + [nn.Linear(2, 2)]
    assert type(joined) is nn.ModuleList and widths(joined) == [1, 2] and len(layers) == 1
    layers += [nn.Linear(3, 3), nn.Linear(4, 4)]
    assert list(layers._modules) == ["0", "1", "2"] and widths(layers) == [1, 3, 4]


def test_containers_equal_torchs():
    torch = pytest.importorskip("torch")

    def edits(nn):
        seq = nn.Sequential(*(nn.Linear(i, i) for i in range(1, 5)))
        seq.insert(-2, nn.Linear(9, 9))
        del seq[0:2]
        seq = seq * 2 + nn.Sequential(nn.Linear(8, 8))
        seq.pop(1)
        named = nn.Sequential(collections.OrderedDict([("a", nn.Linear(1, 1)),
                                                       ("b", nn.Linear(2, 2))]))
        del named[0]
        return [list(seq.state_dict()), widths(seq), list(named.state_dict())]

    assert edits(nn) == edits(torch.nn)


def test_load_state_dict_result_prints_as_pytorchs():
    model = nn.Linear(2, 3)
    result = model.load_state_dict(model.state_dict())
    assert repr(result) == str(result) == "<All keys matched successfully>"
    assert result == ([], []) and not result.missing_keys and not result.unexpected_keys
    state = {"weight": model.weight.detach(), "extra": minifw.zeros(1)}
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"


def test_recurrent_reprs_are_pytorchs():
    # PyTorch's RNN does not show its nonlinearity; its RNNCell shows it unquoted.
    assert repr(nn.RNN(3, 4, nonlinearity="relu", bias=False)) == "RNN(3, 4, bias=False)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.RNNCell(3, 4)) == "RNNCell(3, 4)"


# ---- weighted regression losses ------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_l1_huber_losses_take_an_elementwise_weight(reduction):
    x, y, w = rand((4, 5), seed=1), rand((4, 5), seed=2), rand((4, 5), seed=3) + 1.5
    d = x - y
    huber = np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25))
    for fn, losses, mean_by_weight in [(F.mse_loss, d * d, True), (F.l1_loss, np.abs(d), True),
                                       (lambda *a, **k: F.huber_loss(*a, delta=0.5, **k), huber,
                                        False)]:
        weight = minifw.tensor(w, requires_grad=True)
        got = fn(minifw.tensor(x), minifw.tensor(y), reduction=reduction, weight=weight)
        weighted = losses * w
        if reduction == "none":
            expected = weighted
        elif reduction == "sum":
            expected = weighted.sum()
        else:  # PyTorch's: over the weights' sum for mse and l1, the elements' count for huber
            expected = weighted.sum() / (w.sum() if mean_by_weight else w.size)
        np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-12)
        got.sum().backward()
        assert weight.grad is not None
    gradcheck(lambda a, b: F.mse_loss(a, minifw.tensor(y), weight=b),
              [minifw.tensor(x, requires_grad=True), minifw.tensor(w, requires_grad=True)])


def test_weighted_losses_refuse_a_weight_of_another_shape():
    with pytest.raises(ValueError, match=r"mse_loss: weight must have input's shape \(3, 2\); "
                                         r"got \(2,\)"):
        F.mse_loss(minifw.ones(3, 2), minifw.ones(3, 2), weight=minifw.ones(2))
    with pytest.raises(TypeError, match="weight"):
        F.l1_loss(minifw.ones(3, 2), minifw.ones(3, 2), weight=np.ones((3, 2)))


def test_weighted_losses_equal_torchs():
    torch = pytest.importorskip("torch")
    x, y, w = (rand((4, 5), seed=s).astype(np.float32) for s in (1, 2, 3))
    w = np.abs(w)
    for name, kwargs in [("mse_loss", {}), ("l1_loss", {}), ("huber_loss", {"delta": 0.5})]:
        for reduction in ["mean", "sum", "none"]:
            ours = getattr(F, name)(minifw.tensor(x), minifw.tensor(y), reduction=reduction,
                                    weight=minifw.tensor(w), **kwargs)
            theirs = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y),
                                                        reduction=reduction,
                                                        weight=torch.tensor(w), **kwargs)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


# ---- lazy norms ----------------------------------------------------------------------------

@pytest.mark.parametrize("make,shape", [(lambda **k: nn.LazyBatchNorm2d(**k), (2, 3, 4, 4)),
                                        (lambda **k: nn.LazyBatchNorm1d(**k), (4, 3)),
                                        (lambda **k: nn.LazyInstanceNorm2d(affine=True, **k),
                                         (2, 3, 4, 4))])
def test_lazy_norms_take_bias_false(make, shape):
    layer = make(bias=False)
    assert layer.bias is None and "bias=False" in repr(layer)
    x = rand(shape, seed=5)
    out = layer(minifw.tensor(x, dtype=minifw.float32))
    assert layer.bias is None and tuple(layer.weight.shape) == (3,)
    assert list(layer.state_dict()) == ["weight", "running_mean", "running_var",
                                        "num_batches_tracked"]
    axes = (0,) + tuple(range(2, len(shape))) if "Batch" in type(layer).__name__ else \
        tuple(range(2, len(shape)))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    np.testing.assert_allclose(out.detach().numpy(), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4,
                               atol=1e-5)
    assert make().bias is not None
