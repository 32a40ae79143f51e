"""nn.utils (batch-norm fusion, get_total_norm / clip_grads_with_norm_, the deprecated
clip_grad_norm, skip_init, the memory-format converters), nn.init (dirac_, sparse_, the
deprecated names without an underscore) and torch.utils.data's StackDataset and ChainDataset:
values against PyTorch where installed and against hand computations, and argument errors."""
import inspect
import warnings

import numpy as np
import pytest

import minifw
from minifw import nn
from minifw.nn import init
from minifw.nn.utils import fusion
from minifw.utils import data

_rng = np.random.default_rng(5)


def set_running_stats(bn):
    c = bn.num_features
    bn.running_mean.copy_(minifw.tensor(_rng.standard_normal(c), dtype=bn.running_mean.dtype))
    bn.running_var.copy_(minifw.tensor(_rng.uniform(0.5, 2.0, c), dtype=bn.running_var.dtype))
    with minifw.no_grad():
        bn.weight.copy_(minifw.tensor(_rng.standard_normal(c), dtype=bn.weight.dtype))
        bn.bias.copy_(minifw.tensor(_rng.standard_normal(c), dtype=bn.bias.dtype))
    return bn


# ---- fusion ---------------------------------------------------------------------------------
@pytest.mark.parametrize("conv, bn, shape, transpose", [
    (lambda: nn.Conv2d(3, 4, 3, padding=1), lambda: nn.BatchNorm2d(4), (2, 3, 6, 5), False),
    (lambda: nn.Conv2d(4, 6, 3, groups=2, bias=False), lambda: nn.BatchNorm2d(6), (1, 4, 5, 5), False),
    (lambda: nn.Conv1d(2, 3, 2), lambda: nn.BatchNorm1d(3), (2, 2, 7), False),
    (lambda: nn.ConvTranspose2d(3, 5, 2, stride=2), lambda: nn.BatchNorm2d(5), (1, 3, 4, 4), True),
], ids=["conv2d", "groups_no_bias", "conv1d", "transposed"])
def test_fuse_conv_bn_eval_computes_bn_of_conv(conv, bn, shape, transpose):
    c, b = conv().double().eval(), set_running_stats(bn().double().eval())
    x = minifw.tensor(_rng.standard_normal(shape))
    fused = fusion.fuse_conv_bn_eval(c, b, transpose=transpose)
    np.testing.assert_allclose(fused(x).detach().numpy(), b(c(x)).detach().numpy(), rtol=1e-12, atol=1e-12)
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    assert fused is not c and fused.bias.shape == (fused.weight.shape[1 if transpose else 0],)


def test_fuse_linear_bn_eval_computes_bn_of_linear():
    lin, bn = nn.Linear(4, 3).double().eval(), set_running_stats(nn.BatchNorm1d(3).double().eval())
    x = minifw.tensor(_rng.standard_normal((5, 4)))
    fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(lin(x)).detach().numpy(), rtol=1e-12)
    with pytest.raises(AssertionError, match="eval mode"):
        nn.utils.fuse_linear_bn_eval(lin.train(), bn)
    with pytest.raises(AssertionError, match="out_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(4, 2).eval(), bn)


def test_fuse_weights_match_pytorch():
    torch = pytest.importorskip("torch")
    w, b = _rng.standard_normal((4, 3, 2, 2)), _rng.standard_normal(4)
    rm, rv = _rng.standard_normal(4), _rng.uniform(0.5, 2.0, 4)
    bw, bb = _rng.standard_normal(4), _rng.standard_normal(4)
    T = lambda a: torch.tensor(a)  # noqa: E731
    M = minifw.tensor
    for transpose, weight in ((False, w), (True, w.transpose(1, 0, 2, 3).copy())):
        ours = nn.utils.fuse_conv_bn_weights(M(weight), M(b), M(rm), M(rv), 1e-5, M(bw), M(bb), transpose)
        theirs = torch.nn.utils.fuse_conv_bn_weights(T(weight), T(b), T(rm), T(rv), 1e-5, T(bw), T(bb),
                                                     transpose)
        for a, c in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-14)
    ours = nn.utils.fuse_conv_bn_weights(M(w), None, M(rm), M(rv), 1e-3, None, None)
    theirs = torch.nn.utils.fuse_conv_bn_weights(T(w), None, T(rm), T(rv), 1e-3, None, None)
    for a, c in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-14)
    lw = _rng.standard_normal((4, 3))
    ours = nn.utils.fuse_linear_bn_weights(M(lw), M(b), M(rm), M(rv), 1e-5, M(bw), M(bb))
    theirs = torch.nn.utils.fuse_linear_bn_weights(T(lw), T(b), T(rm), T(rv), 1e-5, T(bw), T(bb))
    for a, c in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-14)
    with pytest.raises(TypeError, match="conv_w"):
        nn.utils.fuse_conv_bn_weights(w, None, M(rm), M(rv), 1e-5, None, None)


# ---- clipping -------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_get_total_norm_is_the_norm_of_the_concatenation(norm_type):
    arrays = [_rng.standard_normal((3, 2)), _rng.standard_normal(4), np.zeros(0)]
    total = nn.utils.get_total_norm([minifw.tensor(a) for a in arrays], norm_type)
    want = np.linalg.norm(np.concatenate([a.ravel() for a in arrays]), norm_type)
    assert total.shape == () and total.item() == pytest.approx(want, rel=1e-12)
    torch = pytest.importorskip("torch")
    # (PyTorch refuses the infinity norm of an empty tensor: compare the non-empty ones)
    theirs = torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays if a.size], norm_type)
    assert total.item() == pytest.approx(theirs.item(), rel=1e-12)


def test_the_zero_norm_counts_the_tensors_with_a_nonzero_element_as_torchs():
    """PyTorch takes the norm of the per-tensor norms: for order 0, the number of tensors
    that are not all zeros (not the number of nonzero elements)."""
    arrays = [_rng.standard_normal((3, 4)) for _ in range(4)]
    arrays[0][0] = 0.0
    arrays[2][:] = 0.0
    total = nn.utils.get_total_norm([minifw.tensor(a) for a in arrays], 0)
    assert total.item() == 3.0
    params = [minifw.tensor(np.zeros((3, 4)), requires_grad=True) for _ in arrays]
    for p, a in zip(params, arrays):
        p.grad = minifw.tensor(a)
    assert nn.utils.clip_grad_norm_(params, 1.0, norm_type=0).item() == 3.0
    torch = pytest.importorskip("torch")
    assert torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays], 0).item() == 3.0
    tparams = [torch.zeros((3, 4), dtype=torch.float64, requires_grad=True) for _ in arrays]
    for p, a in zip(tparams, arrays):
        p.grad = torch.tensor(a)
    assert torch.nn.utils.clip_grad_norm_(tparams, 1.0, norm_type=0).item() == 3.0
    for p, q in zip(params, tparams):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)


def test_clip_grads_with_norm_scales_as_clip_grad_norm_():
    params = [minifw.tensor(np.zeros(s), requires_grad=True) for s in [(3, 2), (4,)]]
    grads = [_rng.standard_normal(p.shape) * 3 for p in params]
    for p, g in zip(params, grads):
        p.grad = minifw.tensor(g)
    total = nn.utils.get_total_norm([p.grad for p in params])
    assert nn.utils.clip_grads_with_norm_(params, 1.0, total) is None
    scale = 1.0 / (total.item() + 1e-6)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)
    nn.utils.clip_grads_with_norm_(params, 100.0, 1.0)  # coefficient clamped at 1
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)
    with pytest.raises(ValueError, match="total_norm must be a single number"):
        nn.utils.clip_grads_with_norm_(params, 1.0, minifw.ones(2))
    with pytest.raises(TypeError, match="get_total_norm: tensors"):
        nn.utils.get_total_norm([np.ones(2)])
    assert nn.utils.get_total_norm([]).item() == 0.0


def test_clip_grad_norm_is_a_deprecated_alias():
    p = minifw.tensor(np.zeros(3), requires_grad=True)
    p.grad = minifw.tensor([3.0, 4.0, 0.0], dtype=minifw.float64)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = nn.utils.clip_grad_norm([p], 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [3 / (5 + 1e-6), 4 / (5 + 1e-6), 0.0])


# ---- skip_init and memory formats -----------------------------------------------------------
def test_skip_init_builds_the_module_without_drawing_random_numbers():
    minifw.manual_seed(0)
    state = minifw.get_rng_state()
    lin = nn.utils.skip_init(nn.Linear, 4, 3, bias=True)
    assert minifw.get_rng_state() == state
    assert lin.weight.shape == (3, 4) and lin.bias.shape == (3,)
    assert isinstance(lin.weight, nn.Parameter)
    nn.Linear(4, 3)  # an ordinary construction does draw, and the initializers are back
    assert minifw.get_rng_state() != state

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()
    with pytest.raises(ValueError, match="device kwarg"):
        nn.utils.skip_init(NoDevice, 3)
    with pytest.raises(RuntimeError, match="expected a Module class"):
        nn.utils.skip_init(lambda device=None: None)


def test_memory_format_converters_return_the_module():
    conv = nn.Conv2d(2, 3, 3)
    w = conv.weight.detach().numpy().copy()
    assert nn.utils.convert_conv2d_weight_memory_format(conv, "channels_last") is conv
    assert nn.utils.convert_conv3d_weight_memory_format(conv, "channels_last_3d") is conv
    np.testing.assert_array_equal(conv.weight.detach().numpy(), w)
    with pytest.raises(TypeError, match="nn.Module"):
        nn.utils.convert_conv2d_weight_memory_format(conv.weight, None)


# ---- nn.init --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, groups", [((6, 4, 3, 3), 2), ((4, 6, 3), 1), ((2, 3, 2, 3, 4), 1),
                                           ((6, 2, 5, 5), 3), ((3, 3, 4, 4), 1)])
def test_dirac_(shape, groups):
    w = init.dirac_(minifw.empty(*shape), groups)
    want = np.zeros(shape)
    per = shape[0] // groups
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(per, shape[1])):
            want[(g * per + d, d) + centre] = 1
    np.testing.assert_array_equal(w.numpy(), want)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(w.numpy(), torch.nn.init.dirac_(torch.empty(*shape), groups).numpy())


def test_dirac_makes_a_convolution_the_identity():
    conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = minifw.randn(2, 3, 5, 5)
    np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy(), rtol=1e-6)


def test_sparse_():
    w = init.sparse_(minifw.empty(10, 7, dtype=minifw.float64), 0.35, std=0.5)
    zeros = (w.numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros, np.full(7, 4))  # ceil(0.35 * 10) per column
    nonzero = w.numpy()[w.numpy() != 0]
    assert 0.2 < nonzero.std() < 1.0
    g1, g2 = minifw.Generator().manual_seed(3), minifw.Generator().manual_seed(3)
    np.testing.assert_array_equal(init.sparse_(minifw.empty(5, 4), 0.5, generator=g1).numpy(),
                                  init.sparse_(minifw.empty(5, 4), 0.5, generator=g2).numpy())


@pytest.mark.parametrize("call, error, words", [
    (lambda: init.dirac_(minifw.empty(3, 3)), ValueError, "3, 4, or 5 dimensions"),
    (lambda: init.dirac_(minifw.empty(5, 3, 3), groups=2), ValueError, "divisible by groups"),
    (lambda: init.dirac_(minifw.empty(4, 3, 3), groups=0), ValueError, "groups"),
    (lambda: init.sparse_(minifw.empty(3, 3, 3), 0.1), ValueError, "2 dimensions"),
    (lambda: init.sparse_(minifw.empty(3, 3), 1.5), ValueError, "sparsity"),
    (lambda: init.sparse_(minifw.empty(3, 3), 0.1, std=-1.0), ValueError, "std"),
    (lambda: init.sparse_(np.zeros((3, 3)), 0.1), TypeError, "minifw.Tensor"),
])
def test_init_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


DEPRECATED = {"uniform": (), "normal": (), "constant": (0.5,), "xavier_uniform": (),
              "xavier_normal": (), "kaiming_uniform": (), "kaiming_normal": (), "orthogonal": (),
              "dirac": (), "eye": (), "sparse": (0.5,)}


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_init_names_warn_and_work(name):
    shape = (4, 4, 3) if name == "dirac" else (4, 4)
    minifw.manual_seed(1)
    with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of "
                                           f"`nn.init.{name}_`"):
        old = getattr(init, name)(minifw.empty(*shape), *DEPRECATED[name])
    minifw.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = getattr(init, name + "_")(minifw.empty(*shape), *DEPRECATED[name])
    np.testing.assert_array_equal(old.numpy(), new.numpy())
    torch = pytest.importorskip("torch")
    assert hasattr(torch.nn.init, name)


# ---- datasets -------------------------------------------------------------------------------
def test_stack_dataset_tuples_and_dicts():
    a = data.TensorDataset(minifw.arange(5))
    b = [f"s{i}" for i in range(5)]
    stacked = data.StackDataset(a, b)
    assert len(stacked) == 5 and stacked[2][1] == "s2" and stacked[2][0][0].item() == 2
    named = data.StackDataset(x=a, label=b)
    assert set(named[4]) == {"x", "label"} and named[4]["label"] == "s4"
    batches = list(data.DataLoader(named, batch_size=2))
    assert batches[0]["label"] == ["s0", "s1"] and len(batches) == 3
    with pytest.raises(ValueError, match="size mismatch"):
        data.StackDataset(a, b[:3])
    with pytest.raises(ValueError, match="not both"):
        data.StackDataset(a, y=b)
    with pytest.raises(ValueError, match="at least one dataset"):
        data.StackDataset()


def test_stack_dataset_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours = data.StackDataset([1, 2, 3], [4, 5, 6])
    theirs = torch.utils.data.StackDataset([1, 2, 3], [4, 5, 6])
    assert [ours[i] for i in range(3)] == [theirs[i] for i in range(3)] and len(ours) == len(theirs)


class Counting(data.IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


def test_chain_dataset():
    chained = data.ChainDataset([Counting(0, 3), Counting(10, 12)])
    assert isinstance(chained, data.IterableDataset)
    assert list(chained) == [0, 1, 2, 10, 11] and list(chained) == [0, 1, 2, 10, 11]
    assert len(chained) == 5
    assert [b.tolist() for b in data.DataLoader(chained, batch_size=2)] == [[0, 1], [2, 10], [11]]
    bad = data.ChainDataset([Counting(0, 1), data.TensorDataset(minifw.zeros(2))])
    with pytest.raises(TypeError, match="only IterableDatasets"):
        list(bad)
    with pytest.raises(TypeError, match="only IterableDatasets"):
        len(bad)


def test_dataset_signatures_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("StackDataset", "ChainDataset"):
        ours = inspect.signature(getattr(data, name))
        theirs = inspect.signature(getattr(torch.utils.data, name))
        assert [p.name for p in ours.parameters.values()] == [p.name for p in theirs.parameters.values()]
