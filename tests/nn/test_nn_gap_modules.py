"""The torch.nn layers that close the gap with torch.nn: the lazy layers (UninitializedParameter,
UninitializedBuffer, LazyModuleMixin), nn.Buffer, the unpooling / LP / fractional pooling
layers, RReLU, AlphaDropout, FeatureAlphaDropout, the margin losses, NLLLoss2d,
PairwiseDistance, the 3-D padding layers, SyncBatchNorm and DataParallel: their state,
reprs and results against PyTorch's (when installed)."""
import copy

import numpy as np
import pytest

import minifw
import minifw.nn as nn
import minifw.nn.functional as F
from gradcheck import gradcheck


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def x32(shape, seed=0):
    return minifw.tensor(rand(shape, seed).astype(np.float32))


# ---- lazy layers ------------------------------------------------------------------------------

LAZY = [  # (lazy layer, its arguments, an input shape, the layer it becomes, its parameter shapes)
    ("LazyLinear", (3,), (2, 5), "Linear", {"weight": (3, 5), "bias": (3,)}),
    ("LazyConv1d", (4, 3), (2, 2, 7), "Conv1d", {"weight": (4, 2, 3), "bias": (4,)}),
    ("LazyConv2d", (4, 3), (2, 6, 5, 5), "Conv2d", {"weight": (4, 6, 3, 3), "bias": (4,)}),
    ("LazyConv3d", (4, 2), (1, 2, 3, 4, 4), "Conv3d", {"weight": (4, 2, 2, 2, 2), "bias": (4,)}),
    ("LazyConvTranspose1d", (4, 3), (2, 2, 5), "ConvTranspose1d", {"weight": (2, 4, 3), "bias": (4,)}),
    ("LazyConvTranspose2d", (4, 3), (6, 5, 5), "ConvTranspose2d", {"weight": (6, 4, 3, 3), "bias": (4,)}),
    ("LazyConvTranspose3d", (4, 2), (1, 3, 2, 3, 3), "ConvTranspose3d",
     {"weight": (3, 4, 2, 2, 2), "bias": (4,)}),
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d", {"weight": (3,), "bias": (3,)}),
    ("LazyBatchNorm2d", (), (2, 3, 4, 4), "BatchNorm2d", {"weight": (3,), "bias": (3,)}),
    ("LazyBatchNorm3d", (), (2, 3, 2, 3, 3), "BatchNorm3d", {"weight": (3,), "bias": (3,)}),
    ("LazyInstanceNorm1d", (), (2, 3, 5), "InstanceNorm1d", {"weight": (3,), "bias": (3,)}),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4), "InstanceNorm2d", {"weight": (3,), "bias": (3,)}),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 3, 3), "InstanceNorm3d", {"weight": (3,), "bias": (3,)}),
]


@pytest.mark.parametrize("name, args, shape, becomes, shapes", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_layer_infers_its_shapes_and_becomes_the_ordinary_layer(name, args, shape, becomes, shapes):
    m = getattr(nn, name)(*args)
    params = dict(m.named_parameters())
    assert all(isinstance(p, nn.UninitializedParameter) for p in params.values())
    assert m.has_uninitialized_params()
    state = m.state_dict()
    assert all(isinstance(state[k], nn.UninitializedParameter) for k in shapes)
    if "Norm" in name:
        assert isinstance(m.running_mean, nn.UninitializedBuffer)
    with pytest.raises(RuntimeError, match="shape of an uninitialized"):
        m.weight.shape
    with pytest.raises((ValueError, RuntimeError)):
        m.weight * 2
    y = m(x32(shape))
    assert type(m) is getattr(nn, becomes)
    for k, s in shapes.items():
        assert type(getattr(m, k)) is nn.Parameter and tuple(getattr(m, k).shape) == s
        assert getattr(m, k) is params[k]  # the same objects, materialized in place
    if "Norm" in name:
        assert type(m.running_mean) is minifw.Tensor and tuple(m.running_mean.shape) == shapes["weight"]
    # the materialized layer computes what the ordinary layer with the same state computes
    ordinary = copy.deepcopy(m)
    np.testing.assert_array_equal(m(x32(shape, 1)).detach().numpy(), ordinary(x32(shape, 1)).detach().numpy())
    assert y.shape == m(x32(shape)).shape


@pytest.mark.parametrize("name, args, shape, becomes, shapes", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_layer_equals_torchs(name, args, shape, becomes, shapes):
    torch = pytest.importorskip("torch")
    m, t = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(m) == repr(t)  # before: in_channels / in_features / num_features 0
    x = rand(shape, 2).astype(np.float32)
    m(minifw.tensor(x))
    t(torch.tensor(x))
    assert type(t).__name__ == type(m).__name__ and repr(m) == repr(t)
    with torch.no_grad():
        for k, v in m.state_dict().items():
            t.state_dict()[k].copy_(torch.tensor(v.numpy()))
    np.testing.assert_allclose(m(minifw.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_lazy_instance_norm_takes_the_channels_of_an_unbatched_input():
    """(C, L): C channels (PyTorch's lazy instance norms read dim 1 whatever the rank, and then
    refuse the unbatched input they were inferred from)."""
    m = nn.LazyInstanceNorm1d()
    y = m(x32((3, 5)))
    assert m.num_features == 3 and y.shape == (3, 5)
    m3 = nn.LazyInstanceNorm3d(affine=False, track_running_stats=False)
    m3(x32((4, 2, 3, 3)))
    assert m3.num_features == 4 and m3.weight is None and m3.running_mean is None


def test_an_optimizer_built_before_the_first_call_trains_the_materialized_parameters():
    """As in PyTorch: the parameters keep their identity, so the optimizer holds the very objects
    the layer trains once their shapes are known."""
    m = nn.LazyLinear(2)
    opt = minifw.optim.SGD(m.parameters(), lr=0.5)
    w = m.weight
    x = x32((4, 3))
    loss = m(x).pow(2).sum()
    before = m.weight.detach().numpy().copy()
    loss.backward()
    opt.step()
    assert m.weight is w
    np.testing.assert_allclose(m.weight.detach().numpy(), before - 0.5 * w.grad.numpy(), rtol=1e-6)
    adam = minifw.optim.Adam(nn.LazyConv2d(3, 2).parameters())  # a stateful one too
    assert len(adam.param_groups[0]["params"]) == 2


def test_load_state_dict_materializes_a_lazy_layer():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    x = x32((2, 5))
    np.testing.assert_array_equal(m(x).detach().numpy(), src(x).detach().numpy())
    assert type(m) is nn.Linear and m.in_features == 5
    bn = nn.LazyBatchNorm2d()
    bn.load_state_dict(nn.BatchNorm2d(4).state_dict())
    bn(x32((2, 4, 3, 3)))
    assert bn.num_features == 4


def test_a_failed_load_leaves_a_lazy_layer_lazy():
    """A load that fails (an unexpected key; a missing one) must not leave materialized but
    never initialized parameters behind: the layer is still lazy and its first call initializes
    it from the input's size."""
    src = nn.Linear(4, 3)
    extra = dict(src.state_dict(), extra=minifw.ones(1))
    for bad in (extra, {"weight": src.weight.detach()}):
        m = nn.LazyLinear(3)
        w, b = m.weight, m.bias
        with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for LazyLinear"):
            m.load_state_dict(bad)
        assert type(m) is nn.LazyLinear and m.has_uninitialized_params()
        assert type(m.weight) is nn.UninitializedParameter and type(m.bias) is nn.UninitializedParameter
        out = m(x32((2, 5)))
        assert type(m) is nn.Linear and m.in_features == 5 and m.weight is w and m.bias is b
        bound = 1 / np.sqrt(5)  # reset_parameters ran: kaiming-uniform weights, finite values
        assert np.all(np.abs(m.weight.detach().numpy()) <= bound) and np.isfinite(out.detach().numpy()).all()
    seq = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    with pytest.raises(RuntimeError, match="Missing key"):
        seq.load_state_dict({"0.weight": minifw.ones(3, 4), "0.bias": minifw.ones(3)})
    assert seq[0].has_uninitialized_params() and seq[1].has_uninitialized_params()
    assert seq(x32((4, 2))).shape == (4, 3)


def test_lazy_layers_move_dtype_and_copy_before_their_first_call():
    m = nn.LazyConv1d(2, 3).double()
    twin = copy.deepcopy(m)
    m(minifw.tensor(rand((1, 4, 6))))
    assert m.weight.dtype == minifw.float64 and m.in_channels == 4
    assert isinstance(twin.weight, nn.UninitializedParameter) and twin.weight.dtype == minifw.float64
    with pytest.raises(ValueError, match="LazyConv1d: expected a 2-D or 3-D input"):
        nn.LazyConv1d(2, 3)(x32((6,)))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(x32((1, 3, 5, 5)))


def test_buffer_assigned_to_a_module_is_registered():
    m = nn.Module()
    m.mask = nn.Buffer(minifw.ones(3))
    m.scratch = nn.Buffer(minifw.zeros(2), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["mask", "scratch"]
    assert list(m.state_dict()) == ["mask"]
    m.double()
    assert m.mask.dtype == minifw.float64
    t = minifw.ones(2)
    b = nn.Buffer(t)
    b._data[0] = 5  # shares the tensor's memory
    assert t[0].item() == 5
    with pytest.raises(TypeError, match="Buffer: persistent must be a bool"):
        nn.Buffer(t, persistent=1)


# ---- other layers ---------------------------------------------------------------------------

REPRS = [
    ("MaxUnpool2d", (2,)), ("MaxUnpool1d", (3, 2, 1)), ("MaxUnpool3d", (2,)),
    ("LPPool1d", (2, 3)), ("LPPool2d", (2, 3, 2)), ("LPPool3d", (1.5, 2)),
    ("RReLU", ()), ("RReLU", (0.1, 0.3, True)), ("AlphaDropout", (0.2,)), ("FeatureAlphaDropout", ()),
    ("MultiMarginLoss", ()), ("MultiLabelMarginLoss", ()), ("TripletMarginWithDistanceLoss", ()),
    ("PairwiseDistance", ()), ("ConstantPad3d", (1, 2.5)), ("ZeroPad3d", ((1, 2, 0, 1, 2, 0),)),
    ("ReflectionPad3d", (1,)), ("ReplicationPad3d", (2,)), ("CircularPad3d", (1,)),
    ("SyncBatchNorm", (3,)), ("CrossMapLRN2d", (3,)), ("CrossMapLRN2d", (5, 1e-3, 0.5, 2.0)),
]


@pytest.mark.parametrize("name, args", REPRS, ids=[f"{n}{a}" for n, a in REPRS])
def test_reprs_equal_torchs(name, args):
    torch = pytest.importorskip("torch")
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("name", ["ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d",
                                  "CircularPad3d"])
def test_3d_padding_equals_torchs(name):
    torch = pytest.importorskip("torch")
    args = ((1, 2, 0, 1, 2, 1), 0.5) if name == "ConstantPad3d" else ((1, 2, 0, 1, 2, 1),)
    x = rand((2, 2, 3, 4, 3))
    np.testing.assert_array_equal(getattr(nn, name)(*args)(minifw.tensor(x)).numpy(),
                                  getattr(torch.nn, name)(*args)(torch.tensor(x)).numpy())
    gradcheck(getattr(nn, name)(*args), [minifw.tensor(x[0], requires_grad=True)])


def test_layers_call_their_functional_forms():
    x = x32((2, 3, 6, 6))
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(nn.MaxUnpool2d(2)(y, idx, output_size=(6, 6)).numpy(),
                                  F.max_unpool2d(y, idx, 2).numpy())
    np.testing.assert_array_equal(nn.LPPool2d(2, 2)(x.abs()).numpy(), F.lp_pool2d(x.abs(), 2.0, 2).numpy())
    s = minifw.tensor(rand((2, 3, 2), 1, 0, 1).astype(np.float32))
    pool = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True, _random_samples=s)
    for a, b in zip(pool(x), F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True,
                                                     _random_samples=s)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert nn.FractionalMaxPool3d(2, output_size=2)(x32((1, 2, 4, 4, 4))).shape == (1, 2, 2, 2, 2)
    with pytest.raises(ValueError, match="FractionalMaxPool2d: give exactly one"):
        nn.FractionalMaxPool2d(2)
    r = nn.RReLU(0.1, 0.3)
    r.eval()
    np.testing.assert_array_equal(r(x).numpy(), F.leaky_relu(x, 0.2).numpy())
    r.train()
    assert not np.array_equal(r(x).numpy(), F.leaky_relu(x, 0.2).numpy())
    d = nn.AlphaDropout(0.5)
    d.eval()
    assert d(x) is x
    t = minifw.tensor([1, 0])
    logits = x32((2, 3))
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        old = nn.NLLLoss2d()
    np.testing.assert_array_equal(old(logits, t).numpy(), nn.NLLLoss()(logits, t).numpy())
    np.testing.assert_array_equal(nn.MultiMarginLoss(p=2)(logits, t).numpy(),
                                  F.multi_margin_loss(logits, t, p=2).numpy())
    loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1.0), margin=0.3)
    a, p_, n_ = x32((4, 5)), x32((4, 5), 1), x32((4, 5), 2)
    np.testing.assert_array_equal(loss(a, p_, n_).numpy(), F.triplet_margin_with_distance_loss(
        a, p_, n_, distance_function=lambda u, v: F.pairwise_distance(u, v, 1.0), margin=0.3).numpy())
    with pytest.raises(ValueError, match="MultiMarginLoss: only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)


def test_sync_batch_norm_is_batch_norm_in_one_process():
    torch = pytest.importorskip("torch")
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm2d(3)))
    reference = copy.deepcopy(model)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[2][0]) is nn.SyncBatchNorm
    assert converted[1].weight is model[1].weight  # the same parameters
    x = x32((4, 2, 6, 6))
    np.testing.assert_array_equal(converted(x).detach().numpy(), reference(x).detach().numpy())
    np.testing.assert_array_equal(converted[1].running_mean.numpy(), reference[1].running_mean.numpy())
    sbn, tsbn = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    sbn.eval(), tsbn.eval()  # PyTorch's runs without a process group in evaluation
    x = rand((2, 3, 4), 3).astype(np.float32)
    np.testing.assert_allclose(sbn(minifw.tensor(x)).detach().numpy(), tsbn(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_data_parallel_wraps_the_module_on_one_device():
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner)
    assert dp.module is inner
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = x32((4, 3))
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    with pytest.raises(ValueError, match="DataParallel: minifw runs a process on one device"):
        nn.DataParallel(inner, device_ids=[0, 1])
    with pytest.raises(TypeError, match="DataParallel: module must be"):
        nn.DataParallel(lambda v: v)


def test_cross_map_lrn2d_is_local_response_norm_of_4d_input():
    x = minifw.tensor(rand((2, 6, 3, 4), 4))
    np.testing.assert_array_equal(nn.CrossMapLRN2d(3, 0.1, 0.75, 2.0)(x).numpy(),
                                  nn.LocalResponseNorm(3, 0.1, 0.75, 2.0)(x).numpy())
    gradcheck(nn.CrossMapLRN2d(3, 0.1, 0.75, 2.0), [minifw.tensor(rand((1, 4, 2, 3), 5), requires_grad=True)])
    with pytest.raises(ValueError, match="CrossMapLRN2d: expected a 4-D"):
        nn.CrossMapLRN2d(3)(minifw.tensor(rand((4, 2, 3))))
    torch = pytest.importorskip("torch")
    # PyTorch's legacy kernel agrees while every channel's window covers all channels (its
    # windows drift from LocalResponseNorm's beyond that: docs/pytorch.md)
    for size, channels in ((3, 2), (5, 3)):
        x = rand((2, channels, 3, 4), size)
        np.testing.assert_allclose(nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)(minifw.tensor(x)).numpy(),
                                   torch.nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)(torch.tensor(x)).numpy(),
                                   rtol=1e-13)


def _asm(torch=None):
    args = (8, 20, [4, 10, 15])
    kwargs = dict(div_value=2.0, head_bias=True)
    m = nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    if torch is None:
        return m, None
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    with torch.no_grad():
        for k, v in m.state_dict().items():
            t.state_dict()[k].copy_(torch.tensor(v.numpy()))
    return m, t


ASM_TARGET = np.array([0, 3, 5, 9, 10, 14, 15, 19, 2, 11, 7, 1])


def test_adaptive_log_softmax_is_a_distribution_and_its_loss_its_mean():
    m, _ = _asm()
    x = minifw.tensor(rand((12, 8), 6))
    log_prob = m.log_prob(x).detach().numpy()
    np.testing.assert_allclose(np.exp(log_prob).sum(1), 1.0, rtol=1e-12)
    out = m(x, minifw.tensor(ASM_TARGET))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    np.testing.assert_allclose(out.output.detach().numpy(), log_prob[np.arange(12), ASM_TARGET], rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), -log_prob[np.arange(12), ASM_TARGET].mean(), rtol=1e-12)
    np.testing.assert_array_equal(m.predict(x).numpy(), log_prob.argmax(1))
    single = m(x[3], minifw.tensor(ASM_TARGET[3]))
    assert single.output.shape == () and np.isclose(single.output.item(), log_prob[3, ASM_TARGET[3]])
    gradcheck(lambda v: m(v, minifw.tensor(ASM_TARGET)).output, [minifw.tensor(rand((12, 8), 7), requires_grad=True)])
    gradcheck(m.log_prob, [minifw.tensor(rand((3, 8), 8), requires_grad=True)])
    with pytest.raises(ValueError, match="target values should be in"):
        m(x, minifw.tensor(ASM_TARGET + 1))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 4, 15])


def test_adaptive_log_softmax_equals_torchs():
    torch = pytest.importorskip("torch")
    m, t = _asm(torch)
    assert repr(m) == repr(t) and list(m.state_dict()) == list(t.state_dict())
    x = rand((12, 8), 6)
    a = m(minifw.tensor(x), minifw.tensor(ASM_TARGET))
    b = t(torch.tensor(x), torch.tensor(ASM_TARGET))
    np.testing.assert_allclose(a.output.detach().numpy(), b.output.detach().numpy(), rtol=1e-12)
    a.loss.backward()
    b.loss.backward()
    for (name, p), q in zip(m.named_parameters(), t.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(m.log_prob(minifw.tensor(x)).detach().numpy(),
                               t.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(m.predict(minifw.tensor(x)).numpy(), t.predict(torch.tensor(x)).numpy())


def test_adaptive_log_softmax_with_a_zero_sized_projection_equals_torchs():
    """in_features // div_value**(i + 1) == 0 (8 // 4**2 here): PyTorch builds the cluster's
    projection with Linear layers of 0 features, whose output (zeros) still trains the head."""
    torch = pytest.importorskip("torch")
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12]).double()
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12]).double()
    assert repr(m) == repr(t)
    assert [tuple(v.shape) for v in m.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    with torch.no_grad():
        for k, v in m.state_dict().items():
            t.state_dict()[k].copy_(torch.tensor(v.numpy()))
    x, target = rand((6, 8), 3), np.array([0, 6, 13, 19, 12, 4])
    a = m(minifw.tensor(x), minifw.tensor(target))
    b = t(torch.tensor(x), torch.tensor(target))
    np.testing.assert_allclose(a.output.detach().numpy(), b.output.detach().numpy(), rtol=1e-12)
    a.loss.backward()
    b.loss.backward()
    for (name, p), q in zip(m.named_parameters(), t.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(m.log_prob(minifw.tensor(x)).detach().numpy(),
                               t.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    gradcheck(lambda v: m(v, minifw.tensor(target)).output, [minifw.tensor(x, requires_grad=True)])
    assert repr(nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5], div_value=float("inf"))) == \
        repr(torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5], div_value=float("inf")))
    for bad in (0.0, -2.0, float("nan")):
        with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss: div_value must be a number > 0"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5], div_value=bad)
    with pytest.raises(TypeError, match="AdaptiveLogSoftmaxWithLoss: div_value must be a real number"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5], div_value="4")
