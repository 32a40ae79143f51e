"""minifw.nn: Module (registration, traversal order, train/eval, zero_grad,
dtype/device, state_dict and load_state_dict with strict checks, repr, copy),
Parameter, Sequential and ModuleList, every layer and loss (shapes, PyTorch's
constructor signatures and default initializations, agreement with
nn.functional), BatchNorm's running statistics, and minifw.nn.init."""
import collections
import copy
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from minifw.nn import init
from gradcheck import gradcheck


class Block(nn.Module):
    """conv -> bn -> relu, with a persistent and a non-persistent buffer of its own."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.act = nn.ReLU()
        self.register_buffer("steps", minifw.zeros((), dtype=minifw.int64))
        self.register_buffer("scratch", minifw.zeros(3), persistent=False)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.scale = nn.Parameter(minifw.ones(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 3 * 3, 5), nn.Dropout(0.5))

    def forward(self, x):
        return self.head(self.block(x)) * self.scale


PARAMETER_NAMES = ["scale", "block.conv.weight", "block.conv.bias", "block.bn.weight", "block.bn.bias",
                   "head.1.weight", "head.1.bias"]
BUFFER_NAMES = ["block.steps", "block.scratch", "block.bn.running_mean", "block.bn.running_var",
                "block.bn.num_batches_tracked"]
STATE_KEYS = ["scale", "block.steps", "block.conv.weight", "block.conv.bias", "block.bn.weight",
              "block.bn.bias", "block.bn.running_mean", "block.bn.running_var",
              "block.bn.num_batches_tracked", "head.1.weight", "head.1.bias"]


# ---- traversal ------------------------------------------------------------------------------

def test_named_parameters_in_registration_order():
    # as PyTorch: a module's own parameters, then each child's, depth first
    assert [n for n, _ in Net().named_parameters()] == PARAMETER_NAMES
    net = Net()
    assert [id(p) for p in net.parameters()] == [id(p) for _, p in net.named_parameters()]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())


def test_named_buffers_include_non_persistent_ones():
    assert [n for n, _ in Net().named_buffers()] == BUFFER_NAMES


def test_children_and_modules():
    net = Net()
    assert [type(m).__name__ for m in net.children()] == ["Block", "Sequential"]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.conv", "block.bn", "block.act",
                                                   "head", "head.0", "head.1", "head.2"]
    assert len(list(net.modules())) == 9


def test_recurse_false_lists_only_own_members():
    net = Net()
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.block.named_buffers(recurse=False)] == ["steps", "scratch"]


def test_shared_modules_and_parameters_are_listed_once():
    shared = nn.Linear(3, 3)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.modules())) == 3
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]  # as PyTorch


def test_apply_visits_children_before_the_parent_and_returns_self():
    seen = []
    net = Net()
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Conv2d", "BatchNorm2d", "ReLU", "Block", "Flatten", "Linear", "Dropout",
                    "Sequential", "Net"]


# ---- registration rules ---------------------------------------------------------------------

def test_assigning_a_non_parameter_to_a_parameter_name_is_an_error():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign Tensor to parameter 'weight'"):
        lin.weight = minifw.ones(2, 2)
    lin.bias = None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]


def test_assigning_before_super_init_is_explained():
    class Forgetful(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) before assigning"):
        Forgetful()


def test_registration_helpers_and_their_errors():
    m = nn.Module()
    m.register_parameter("p", nn.Parameter(minifw.zeros(2)))
    m.add_module("child", nn.ReLU())
    m.register_buffer("b", minifw.ones(1))
    assert [n for n, _ in m.named_parameters()] == ["p"] and m.child.__class__ is nn.ReLU
    with pytest.raises(TypeError, match="register_parameter: 'q' must be a Parameter or None, got Tensor"):
        m.register_parameter("q", minifw.zeros(2))
    with pytest.raises(TypeError, match="register_buffer: 'c' must be a Tensor or None, got list"):
        m.register_buffer("c", [1, 2])
    with pytest.raises(TypeError, match="add_module: 'd' must be a Module or None, got int"):
        m.add_module("d", 3)
    with pytest.raises(TypeError, match="cannot assign list to buffer 'b'"):
        m.b = [1]


def test_unknown_attribute_and_deletion():
    lin = nn.Linear(2, 2)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        lin.nope
    del lin.bias
    assert [n for n, _ in lin.named_parameters()] == ["weight"]


def test_plain_tensors_and_values_are_ordinary_attributes():
    m = nn.Module()
    m.constant = minifw.ones(2)
    m.name = "x"
    assert list(m.named_buffers()) == [] and list(m.named_parameters()) == [] and m.name == "x"


# ---- modes and gradients --------------------------------------------------------------------

def test_train_and_eval_reach_every_module():
    net = Net()
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(TypeError, match="mode must be a bool"):
        net.train("no")


def test_train_calls_each_childs_own_train():
    class Frozen(nn.Module):
        def train(self, mode=True):
            return super().train(False)  # e.g. a frozen BatchNorm

    seq = nn.Sequential(Frozen(), nn.ReLU())
    seq.train()
    assert [m.training for m in seq.modules()] == [True, False, True]


def test_eval_mode_changes_dropout_and_batchnorm():
    minifw.manual_seed(0)
    net = Net()
    x = minifw.randn(4, 2, 3, 3)
    net.eval()
    with minifw.no_grad():
        a, b = net(x), net(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # deterministic in evaluation
    net.train()
    with minifw.no_grad():
        c, d = net(x), net(x)
    assert not np.array_equal(c.numpy(), d.numpy())  # a fresh dropout mask per call


def test_zero_grad_sets_to_none_or_to_zeros():
    net = nn.Linear(3, 2)
    net(minifw.randn(4, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all((p.grad.numpy() == 0).all() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_requires_grad_false_freezes_parameters():
    net = nn.Linear(3, 2).requires_grad_(False)
    assert not net(minifw.randn(1, 3)).requires_grad


def test_backward_reaches_every_parameter():
    minifw.manual_seed(1)
    net = Net()
    net(minifw.randn(3, 2, 3, 3)).sum().backward()
    for name, p in net.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name


def test_a_whole_model_differentiates_correctly():
    # every layer kind of a small CNN at once, checked against finite differences in float64
    minifw.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.MaxPool2d(2), nn.ELU(),
                          nn.Flatten(), nn.Linear(12, 5), nn.Tanh(), nn.Linear(5, 4)).double()
    x = minifw.randn(3, 2, 4, 4, dtype=minifw.float64)
    t = minifw.tensor([0, 3, 1])
    gradcheck(lambda *params: F.cross_entropy(model(x), t), list(model.parameters()))


# ---- dtype and device -----------------------------------------------------------------------

def test_to_float64_converts_in_place_and_keeps_the_parameter_objects():
    net = Net()
    before = list(net.parameters())
    assert net.to(minifw.float64) is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in before]
    assert all(p.dtype == minifw.float64 for p in net.parameters())
    assert net.block.bn.running_mean.dtype == minifw.float64
    assert net.block.bn.num_batches_tracked.dtype == minifw.int64  # integer buffers stay
    out = net(minifw.randn(2, 2, 3, 3, dtype=minifw.float64))
    assert out.dtype == minifw.float64
    assert net.float().block.conv.weight.dtype == minifw.float32
    assert net.double().head[1].bias.dtype == minifw.float64


def test_to_device():
    net = nn.Linear(2, 2)
    assert net.to("cpu") is net and net.cpu() is net
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"):
        net.to("cuda")
    with pytest.raises(TypeError, match="dtype must be a floating point dtype, got int64"):
        net.to(minifw.int64)


def test_modules_accept_dtype_and_device_arguments():
    lin = nn.Linear(2, 3, dtype=minifw.float64, device="cpu")
    assert lin.weight.dtype == minifw.float64 and lin.bias.dtype == minifw.float64
    with pytest.raises(RuntimeError, match="'cuda' is not available"):
        nn.Conv2d(1, 1, 3, device="cuda")
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got int64"):
        nn.BatchNorm2d(3, dtype=minifw.int64)


# ---- state_dict -----------------------------------------------------------------------------

def test_state_dict_keys_in_order_without_non_persistent_buffers():
    # as PyTorch: a module's own parameters, its own persistent buffers, then each child's
    sd = Net().state_dict()
    assert list(sd) == STATE_KEYS
    assert isinstance(sd, collections.OrderedDict)


def test_state_dict_values_are_detached_views_unless_keep_vars():
    net = Net()
    sd = net.state_dict()
    assert not sd["scale"].requires_grad and np.shares_memory(sd["scale"].numpy(), net.scale.data.numpy())
    assert net.state_dict(keep_vars=True)["scale"] is net.scale


def test_load_state_dict_round_trip_reproduces_the_outputs():
    minifw.manual_seed(2)
    a, b = Net().eval(), Net().eval()
    x = minifw.randn(2, 2, 3, 3)
    a.block.bn.running_mean.data[...] = [0.1, 0.2, 0.3, 0.4]
    result = b.load_state_dict(a.state_dict())
    assert result == ([], []) and result.missing_keys == [] and result.unexpected_keys == []
    with minifw.no_grad():
        np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    assert not np.shares_memory(b.block.bn.running_mean.numpy(),
                                a.block.bn.running_mean.numpy())  # copied, not shared


def test_load_state_dict_strict_reports_missing_keys():
    sd = Net().state_dict()
    del sd["head.1.bias"], sd["block.steps"]
    with pytest.raises(RuntimeError, match=r"Error\(s\) in loading state_dict for Net:\n\tMissing "
                                           r"key\(s\) in state_dict: 'block.steps', 'head.1.bias'"):
        Net().load_state_dict(sd)


def test_load_state_dict_strict_reports_unexpected_keys():
    sd = Net().state_dict()
    sd["extra.weight"] = minifw.ones(1)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\) in state_dict: 'extra.weight'"):
        Net().load_state_dict(sd)


def test_load_state_dict_reports_shape_mismatch_even_when_not_strict():
    sd = Net().state_dict()
    sd["head.1.weight"] = minifw.ones(5, 35)
    message = (r"size mismatch for head.1.weight: copying a param with shape \(5, 35\) from "
               r"checkpoint, the shape in current model is \(5, 36\)")
    with pytest.raises(RuntimeError, match=message):
        Net().load_state_dict(sd)
    with pytest.raises(RuntimeError, match=message):
        Net().load_state_dict(sd, strict=False)


def test_a_failed_load_changes_nothing():
    net = Net()
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    sd = Net().state_dict()
    sd["head.1.weight"] = minifw.ones(2, 2)
    with pytest.raises(RuntimeError):
        net.load_state_dict(sd)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_load_state_dict_not_strict_loads_what_matches():
    src, dst = nn.Linear(3, 2), nn.Linear(3, 2)
    result = dst.load_state_dict({"weight": src.weight.detach(), "other": minifw.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())


def test_load_state_dict_accepts_arrays_and_casts_dtype():
    lin = nn.Linear(2, 1)
    lin.load_state_dict({"weight": np.array([[1.0, 2.0]]), "bias": minifw.tensor([0.5], dtype=minifw.float64)})
    assert lin.weight.dtype == minifw.float32 and lin.weight.tolist() == [[1.0, 2.0]]
    with pytest.raises(TypeError, match="expected a mapping of names to tensors, got list"):
        lin.load_state_dict([1, 2])


# ---- copying and printing ----------------------------------------------------------------------

def test_deepcopy_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    with minifw.no_grad():
        twin.scale.fill_(3.0)
    assert net.scale.item() == 1.0 and twin.scale.item() == 3.0
    assert [n for n, _ in twin.named_parameters()] == PARAMETER_NAMES


LENET_REPR = """Sequential(
  (0): Conv2d(1, 20, kernel_size=(5, 5), stride=(1, 1))
  (1): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (2): Conv2d(20, 50, kernel_size=(5, 5), stride=(1, 1))
  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (4): Flatten(start_dim=1, end_dim=-1)
  (5): Linear(in_features=800, out_features=500, bias=True)
  (6): ReLU(inplace=True)
  (7): Linear(in_features=500, out_features=10, bias=True)
)"""


def test_repr_like_pytorch():
    seq = nn.Sequential(nn.Conv2d(1, 20, 5), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.MaxPool2d(2, 2),
                        nn.Flatten(), nn.Linear(800, 500), nn.ReLU(inplace=True), nn.Linear(500, 10))
    assert repr(seq) == LENET_REPR


def test_repr_of_nested_modules_indents_each_level():
    assert repr(Net()).splitlines()[:5] == [
        "Net(", "  (block): Block(", "    (conv): Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))",
        "    (bn): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
        "    (act): ReLU()"]


@pytest.mark.parametrize("module, text", [
    pytest.param(nn.Conv2d(3, 6, (3, 5), stride=2, padding=1, dilation=2, groups=3, bias=False),
                 "Conv2d(3, 6, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
                 "groups=3, bias=False)", id="Conv2d"),
    pytest.param(nn.Linear(3, 4, bias=False), "Linear(in_features=3, out_features=4, bias=False)", id="Linear"),
    pytest.param(nn.AvgPool2d(3), "AvgPool2d(kernel_size=3, stride=3, padding=0)", id="AvgPool2d"),
    pytest.param(nn.LeakyReLU(0.2), "LeakyReLU(negative_slope=0.2)", id="LeakyReLU"),
    pytest.param(nn.ELU(), "ELU(alpha=1.0)", id="ELU"),
    pytest.param(nn.Sigmoid(), "Sigmoid()", id="Sigmoid"),
    pytest.param(nn.Tanh(), "Tanh()", id="Tanh"),
    pytest.param(nn.LocalResponseNorm(5), "LocalResponseNorm(5, alpha=0.0001, beta=0.75, k=1.0)", id="LRN"),
    pytest.param(nn.Dropout(), "Dropout(p=0.5, inplace=False)", id="Dropout"),
    pytest.param(nn.BatchNorm1d(7, momentum=None), "BatchNorm1d(7, eps=1e-05, momentum=None, affine=True, "
                 "bias=True, track_running_stats=True)", id="BatchNorm1d"),
    pytest.param(nn.Embedding(10, 3, padding_idx=0), "Embedding(10, 3, padding_idx=0)", id="Embedding"),
    pytest.param(nn.CrossEntropyLoss(), "CrossEntropyLoss()", id="CrossEntropyLoss"),
    pytest.param(nn.Softmax(dim=1), "Softmax(dim=1)", id="Softmax"),
])
def test_layer_reprs(module, text):
    assert repr(module) == text


def test_parameter_repr_and_identity():
    p = nn.Parameter(minifw.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert isinstance(p, minifw.Tensor) and p.is_leaf and p.requires_grad
    assert not nn.Parameter(minifw.ones(1), requires_grad=False).requires_grad
    assert type(p * 2) is minifw.Tensor


def test_parameter_shares_the_data_it_wraps():
    t = minifw.zeros(3)
    p = nn.Parameter(t)
    t.data[0] = 5.0
    assert p[0].item() == 5.0


# ---- containers -----------------------------------------------------------------------------

def test_sequential_composes_and_indexes():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    x = minifw.randn(4, 2)
    np.testing.assert_array_equal(seq(x).detach().numpy(), c(b(a(x))).detach().numpy())
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()][-1] == "3"
    with pytest.raises(IndexError, match="index 7 is out of range for 4 modules"):
        seq[7]
    seq[0] = nn.Linear(2, 3)
    assert seq[0] is not a and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq) == [seq[0], c, seq[2]] and len(seq) == 3


def test_replacing_a_registered_member_keeps_its_place():
    net = Net()
    net.block.conv = nn.Conv2d(2, 4, 3, padding=1)
    net.scale = nn.Parameter(minifw.ones(1))
    assert [n for n, _ in net.named_parameters()] == PARAMETER_NAMES


def test_sequential_from_an_ordered_dict_keeps_the_names():
    seq = nn.Sequential(collections.OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"] and isinstance(seq.act, nn.Tanh)


def test_module_list_registers_and_edits():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    extra = nn.Linear(2, 2)
    layers.append(extra)
    layers.insert(0, nn.ReLU())
    assert isinstance(layers[0], nn.ReLU) and layers[-1] is extra
    assert [n for n, _ in layers.named_children()] == ["0", "1", "2", "3", "4"]
    del layers[0]
    assert len(layers) == 4 and layers[3] is extra
    layers[0] = nn.Tanh()
    assert isinstance(layers[0], nn.Tanh)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    layers.extend([nn.Sigmoid()])
    assert len(layers) == 5
    with pytest.raises(NotImplementedError, match="ModuleList has no forward"):
        layers(minifw.ones(1))


def test_a_module_list_inside_a_model_contributes_parameters():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    assert [n for n, _ in Stack().named_parameters()] == ["layers.0.weight", "layers.0.bias",
                                                          "layers.1.weight", "layers.1.bias"]


def test_a_module_without_forward_says_so():
    with pytest.raises(NotImplementedError, match="Module has no forward"):
        nn.Module()(1)


# ---- layers: shapes, agreement with nn.functional ---------------------------------------------

X4 = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)


@pytest.mark.parametrize("module, x_shape, out_shape, functional", [
    pytest.param(nn.Conv2d(3, 5, 3), (2, 3, 8, 8), (2, 5, 6, 6),
                 lambda m, x: F.conv2d(x, m.weight, m.bias), id="Conv2d"),
    pytest.param(nn.Conv2d(3, 6, (3, 1), stride=(2, 1), padding=(1, 0), groups=3), (2, 3, 8, 8), (2, 6, 4, 8),
                 lambda m, x: F.conv2d(x, m.weight, m.bias, (2, 1), (1, 0), 1, 3), id="Conv2d_groups"),
    pytest.param(nn.Conv2d(3, 2, 3, padding=1, padding_mode="reflect"), (2, 3, 8, 8), (2, 2, 8, 8),
                 lambda m, x: F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), m.weight, m.bias),
                 id="Conv2d_reflect"),
    pytest.param(nn.Conv2d(3, 2, 4, padding="same", bias=False), (2, 3, 8, 8), (2, 2, 8, 8),
                 lambda m, x: F.conv2d(x, m.weight, None, padding="same"), id="Conv2d_same"),
    pytest.param(nn.Linear(8, 4), (2, 3, 8, 8), (2, 3, 8, 4), lambda m, x: F.linear(x, m.weight, m.bias),
                 id="Linear"),
    pytest.param(nn.MaxPool2d(2), (2, 3, 8, 8), (2, 3, 4, 4), lambda m, x: F.max_pool2d(x, 2), id="MaxPool2d"),
    pytest.param(nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 8, 8), (2, 3, 5, 5),
                 lambda m, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), id="MaxPool2d_ceil"),
    pytest.param(nn.AvgPool2d(2, 1, count_include_pad=False), (2, 3, 8, 8), (2, 3, 7, 7),
                 lambda m, x: F.avg_pool2d(x, 2, 1), id="AvgPool2d"),
    pytest.param(nn.ReLU(), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.relu(x), id="ReLU"),
    pytest.param(nn.LeakyReLU(0.3), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.leaky_relu(x, 0.3),
                 id="LeakyReLU"),
    pytest.param(nn.ELU(0.5), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.elu(x, 0.5), id="ELU"),
    pytest.param(nn.Sigmoid(), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.sigmoid(x), id="Sigmoid"),
    pytest.param(nn.Tanh(), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.tanh(x), id="Tanh"),
    pytest.param(nn.Softmax(1), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.softmax(x, 1), id="Softmax"),
    pytest.param(nn.LogSoftmax(-1), (2, 3, 8, 8), (2, 3, 8, 8), lambda m, x: F.log_softmax(x, -1),
                 id="LogSoftmax"),
    pytest.param(nn.LocalResponseNorm(3, 0.1, 0.5, 2.0), (2, 3, 8, 8), (2, 3, 8, 8),
                 lambda m, x: F.local_response_norm(x, 3, 0.1, 0.5, 2.0), id="LocalResponseNorm"),
    pytest.param(nn.Flatten(), (2, 3, 8, 8), (2, 192), lambda m, x: x.reshape(2, -1), id="Flatten"),
    pytest.param(nn.Flatten(0, 2), (2, 3, 8, 8), (48, 8), lambda m, x: x.reshape(48, 8), id="Flatten_0_2"),
    pytest.param(nn.Dropout(), (2, 3, 8, 8), (2, 3, 8, 8), None, id="Dropout"),
])
def test_layer_forward(module, x_shape, out_shape, functional):
    x = minifw.tensor(X4.reshape(-1)[:int(np.prod(x_shape))].reshape(x_shape))
    out = module(x)
    assert out.shape == out_shape and out.dtype == minifw.float32
    if functional is not None:
        np.testing.assert_array_equal(out.detach().numpy(), functional(module, x).detach().numpy())


def test_max_pool_module_can_return_indices():
    y, indices = nn.MaxPool2d(2, return_indices=True)(minifw.tensor(X4))
    assert y.shape == indices.shape == (2, 3, 4, 4) and indices.dtype == minifw.int64


def test_embedding_module_and_from_pretrained():
    emb = nn.Embedding(10, 4)
    assert emb(minifw.tensor([[1, 2, 3]])).shape == (1, 3, 4)
    table = minifw.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen(minifw.tensor([1])).tolist() == [[3.0, 4.0]]
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    padded = nn.Embedding(5, 2, padding_idx=-1)
    assert padded.padding_idx == 4 and padded.weight[4].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("loss, functional", [
    pytest.param(nn.CrossEntropyLoss(), lambda x, t: F.cross_entropy(x, t), id="CrossEntropyLoss"),
    pytest.param(nn.CrossEntropyLoss(reduction="sum", ignore_index=1, label_smoothing=0.1),
                 lambda x, t: F.cross_entropy(x, t, reduction="sum", ignore_index=1, label_smoothing=0.1),
                 id="CrossEntropyLoss_options"),
    pytest.param(nn.CrossEntropyLoss(weight=minifw.tensor([1.0, 2.0, 0.5, 1.0])),
                 lambda x, t: F.cross_entropy(x, t, minifw.tensor([1.0, 2.0, 0.5, 1.0])),
                 id="CrossEntropyLoss_weight"),
    pytest.param(nn.NLLLoss(reduction="none"), lambda x, t: F.nll_loss(x, t, reduction="none"), id="NLLLoss"),
    pytest.param(nn.NLLLoss(weight=minifw.tensor([1.0, 2.0, 0.5, 1.0])),
                 lambda x, t: F.nll_loss(x, t, minifw.tensor([1.0, 2.0, 0.5, 1.0])), id="NLLLoss_weight"),
])
def test_classification_losses(loss, functional):
    x, t = minifw.tensor(X4[0, 0, :5, :4]), minifw.tensor([0, 3, 1, 1, 2])
    np.testing.assert_array_equal(loss(x, t).numpy(), functional(x, t).numpy())


def test_mse_loss_module():
    a, b = minifw.tensor([1.0, 2.0]), minifw.tensor([0.0, 4.0])
    assert nn.MSELoss()(a, b).item() == 2.5 and nn.MSELoss(reduction="sum")(a, b).item() == 5.0
    assert nn.MSELoss(reduction="none")(a, b).tolist() == [1.0, 4.0]


def test_loss_weight_is_a_buffer():
    loss = nn.CrossEntropyLoss(weight=minifw.ones(3))
    assert list(loss.state_dict()) == ["weight"]


# ---- default initializations ------------------------------------------------------------------

def _assert_uniform(values, bound):
    """Samples of U(-bound, bound): inside the bounds, reaching near them, with its std."""
    values = np.asarray(values, np.float64).ravel()
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.9 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.1 * bound / math.sqrt(3)


@pytest.mark.parametrize("module, fan_in", [
    pytest.param(lambda: nn.Linear(60, 300), 60, id="Linear"),
    pytest.param(lambda: nn.Conv2d(6, 64, (3, 5)), 6 * 15, id="Conv2d"),
    pytest.param(lambda: nn.Conv2d(8, 64, 3, groups=4), 2 * 9, id="Conv2d_groups"),
])
def test_weight_and_bias_default_to_pytorchs_kaiming_uniform(module, fan_in):
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias the same
    minifw.manual_seed(0)
    m = module()
    _assert_uniform(m.weight.detach().numpy(), 1 / math.sqrt(fan_in))
    bias = m.bias.detach().numpy()
    assert np.abs(bias).max() <= 1 / math.sqrt(fan_in) and np.unique(bias).size == bias.size


def test_embedding_defaults_to_standard_normal():
    minifw.manual_seed(0)
    w = nn.Embedding(1000, 20).weight.detach().numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


def test_batchnorm_defaults():
    bn = nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_mean.tolist() == [0, 0, 0] and bn.running_var.tolist() == [1, 1, 1]
    assert bn.num_batches_tracked.item() == 0 and bn.num_batches_tracked.dtype == minifw.int64
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_initialization_follows_manual_seed():
    minifw.manual_seed(9)
    a = nn.Conv2d(1, 2, 3).weight.detach().numpy().copy()
    minifw.manual_seed(9)
    np.testing.assert_array_equal(nn.Conv2d(1, 2, 3).weight.detach().numpy(), a)


# ---- BatchNorm running statistics --------------------------------------------------------------

def test_batchnorm_training_updates_running_stats_and_counts_batches():
    bn = nn.BatchNorm2d(2, momentum=0.2).double()
    x = np.random.default_rng(4).standard_normal((5, 2, 3, 3)) * 2 + 1
    y = bn(minifw.tensor(x))
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(y.detach().numpy(),
                               (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.8 + 0.2 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1
    bn(minifw.tensor(x))
    assert bn.num_batches_tracked.item() == 2


def test_batchnorm_evaluation_uses_running_stats_and_counts_nothing():
    bn = nn.BatchNorm1d(3).double()
    bn.running_mean.data[...] = [1.0, 2.0, 3.0]
    bn.running_var.data[...] = [4.0, 4.0, 4.0]
    bn.eval()
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(bn(minifw.tensor(x)).detach().numpy(), (x - [1, 2, 3]) / np.sqrt(4 + 1e-5))
    assert bn.num_batches_tracked.item() == 0 and bn.running_mean.tolist() == [1, 2, 3]


def test_batchnorm_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(1, momentum=None).double()
    batches = [np.array([[1.0], [3.0]]), np.array([[5.0], [9.0]]), np.array([[0.0], [2.0]])]
    for b in batches:
        bn(minifw.tensor(b))
    np.testing.assert_allclose(bn.running_mean.numpy(), [np.mean([b.mean() for b in batches])], rtol=1e-12)


def test_batchnorm_without_running_stats_always_uses_the_batch():
    bn = nn.BatchNorm1d(2, track_running_stats=False, affine=False)
    assert list(bn.state_dict()) == [] and list(bn.parameters()) == []
    bn.eval()
    out = bn(minifw.tensor([[1.0, 10.0], [3.0, 30.0]]))
    np.testing.assert_allclose(out.numpy(), [[-1, -1], [1, 1]], rtol=1e-4)


def test_batchnorm1d_on_sequences():
    bn = nn.BatchNorm1d(3)
    assert bn(minifw.randn(4, 3, 7)).shape == (4, 3, 7)


@pytest.mark.parametrize("module, x_shape, message", [
    pytest.param(nn.BatchNorm2d(3), (2, 3, 4), r"BatchNorm2d: expected 4D input \(got 3D input\)", id="bn2d_3d"),
    pytest.param(nn.BatchNorm1d(3), (2, 3, 4, 4), r"BatchNorm1d: expected 2D or 3D input \(got 4D input\)",
                 id="bn1d_4d"),
])
def test_batchnorm_input_dims(module, x_shape, message):
    with pytest.raises(ValueError, match=message):
        module(minifw.ones(*x_shape))


def test_batchnorm_state_dict_round_trip_keeps_running_stats():
    a = nn.BatchNorm2d(2)
    a(minifw.randn(4, 2, 3, 3))
    b = nn.BatchNorm2d(2)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(b.running_var.numpy(), a.running_var.numpy())
    assert b.num_batches_tracked.item() == 1


# ---- constructor signatures and validation -------------------------------------------------

CONSTRUCTORS = {
    nn.Conv2d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
               "bias=True, padding_mode='zeros', device=None, dtype=None)",
    nn.Linear: "(in_features, out_features, bias=True, device=None, dtype=None)",
    nn.MaxPool2d: "(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
    nn.AvgPool2d: "(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
                  "divisor_override=None)",
    nn.ReLU: "(inplace=False)",
    nn.LeakyReLU: "(negative_slope=0.01, inplace=False)",
    nn.ELU: "(alpha=1.0, inplace=False)",
    nn.LocalResponseNorm: "(size, alpha=0.0001, beta=0.75, k=1.0)",
    nn.Dropout: "(p=0.5, inplace=False)",
    nn.BatchNorm1d: "(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
                    "device=None, dtype=None, *, bias=True)",
    nn.BatchNorm2d: "(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
                    "device=None, dtype=None, *, bias=True)",
    nn.Flatten: "(start_dim=1, end_dim=-1)",
    nn.Embedding: "(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
                  "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, "
                  "dtype=None)",
    nn.CrossEntropyLoss: "(weight=None, size_average=None, ignore_index=-100, reduce=None, "
                         "reduction='mean', label_smoothing=0.0)",
    nn.NLLLoss: "(weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean')",
    nn.MSELoss: "(size_average=None, reduce=None, reduction='mean')",
}


@pytest.mark.parametrize("cls", CONSTRUCTORS, ids=[c.__name__ for c in CONSTRUCTORS])
def test_constructor_signature_is_pytorchs(cls):
    assert str(inspect.signature(cls)) == CONSTRUCTORS[cls]


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError,
                 r"in_channels \(3\) and out_channels \(4\) must be divisible by groups \(2\)", id="conv_groups"),
    pytest.param(lambda: nn.Conv2d(3, 4, 0), ValueError, "kernel_size must be >= 1, got 0", id="conv_kernel"),
    pytest.param(lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), ValueError, "padding_mode must be",
                 id="conv_padding_mode"),
    pytest.param(lambda: nn.Linear(0, 3), ValueError, "Linear: in_features must be >= 1, got 0", id="linear_zero"),
    pytest.param(lambda: nn.Linear(2.5, 3), TypeError, "in_features must be an int", id="linear_float"),
    pytest.param(lambda: nn.Dropout(1.5), ValueError, r"p must be a probability in \[0, 1\], got 1.5",
                 id="dropout_p"),
    pytest.param(lambda: nn.MaxPool2d(2, dilation=(1, 0)), ValueError,
                 r"MaxPool2d: dilation must be >= 1, got \(1, 0\)",
                 id="pool_dilation"),
    pytest.param(lambda: nn.Embedding(5, 2, padding_idx=5), ValueError,
                 r"Embedding: padding_idx must be in \[-5, 4\], got 5", id="embedding_padding"),
    pytest.param(lambda: nn.CrossEntropyLoss(reduction="max"), ValueError, "reduction must be one of",
                 id="loss_reduction"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ---- nn.init -----------------------------------------------------------------------------------

FAN_SHAPE = (64, 32, 3, 3)  # fan_in = 32 * 9 = 288, fan_out = 64 * 9 = 576


@pytest.mark.parametrize("fill, bound", [
    pytest.param(lambda t: init.kaiming_uniform_(t), math.sqrt(6 / 288), id="kaiming_uniform_default"),
    pytest.param(lambda t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), math.sqrt(6 / 576),
                 id="kaiming_uniform_fan_out"),
    pytest.param(lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), 1 / math.sqrt(288),
                 id="kaiming_uniform_a_sqrt5"),
    pytest.param(lambda t: init.xavier_uniform_(t), math.sqrt(6 / (288 + 576)), id="xavier_uniform"),
    pytest.param(lambda t: init.xavier_uniform_(t, gain=2.0), 2 * math.sqrt(6 / (288 + 576)),
                 id="xavier_uniform_gain"),
    pytest.param(lambda t: init.uniform_(t, -0.3, 0.3), 0.3, id="uniform"),
])
def test_uniform_inits(fill, bound):
    minifw.manual_seed(0)
    t = minifw.empty(*FAN_SHAPE)
    assert fill(t) is t
    _assert_uniform(t.numpy(), bound)


@pytest.mark.parametrize("fill, std", [
    pytest.param(lambda t: init.kaiming_normal_(t), math.sqrt(2 / 288), id="kaiming_normal_default"),
    pytest.param(lambda t: init.kaiming_normal_(t, mode="fan_out", nonlinearity="tanh"), (5 / 3) / math.sqrt(576),
                 id="kaiming_normal_fan_out_tanh"),
    pytest.param(lambda t: init.xavier_normal_(t), math.sqrt(2 / (288 + 576)), id="xavier_normal"),
    pytest.param(lambda t: init.normal_(t, 0.0, 0.02), 0.02, id="normal"),
])
def test_normal_inits(fill, std):
    minifw.manual_seed(0)
    t = fill(minifw.empty(*FAN_SHAPE)).numpy()
    assert abs(t.mean()) < 0.05 * std and abs(t.std() - std) < 0.03 * std


def test_constant_inits():
    t = minifw.empty(3, 2)
    assert (init.zeros_(t).numpy() == 0).all()
    assert (init.ones_(t).numpy() == 1).all()
    assert (init.constant_(t, 0.25).numpy() == 0.25).all()


def test_init_on_a_parameter_records_no_graph():
    p = nn.Parameter(minifw.empty(4, 4))
    init.kaiming_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_init_follows_a_generator():
    a = init.normal_(minifw.empty(5), generator=minifw.Generator().manual_seed(3)).numpy()
    b = init.normal_(minifw.empty(5), generator=minifw.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(a, b)


INIT_SIGNATURES = {
    init.uniform_: "(tensor, a=0.0, b=1.0, generator=None)",
    init.normal_: "(tensor, mean=0.0, std=1.0, generator=None)",
    init.constant_: "(tensor, val)",
    init.zeros_: "(tensor)",
    init.ones_: "(tensor)",
    init.xavier_uniform_: "(tensor, gain=1.0, generator=None)",
    init.xavier_normal_: "(tensor, gain=1.0, generator=None)",
    init.kaiming_uniform_: "(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None)",
    init.kaiming_normal_: "(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None)",
    init.calculate_gain: "(nonlinearity, param=None)",
}


@pytest.mark.parametrize("fn", INIT_SIGNATURES, ids=[f.__name__ for f in INIT_SIGNATURES])
def test_init_signature_is_pytorchs(fn):
    assert str(inspect.signature(fn)) == INIT_SIGNATURES[fn]


@pytest.mark.parametrize("nonlinearity, param, gain", [
    ("linear", None, 1.0), ("conv2d", None, 1.0), ("sigmoid", None, 1.0), ("tanh", None, 5 / 3),
    ("relu", None, math.sqrt(2)), ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
    ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("selu", None, 0.75),
])
def test_calculate_gain(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain)


@pytest.mark.parametrize("call, message", [
    pytest.param(lambda: init.kaiming_uniform_(minifw.empty(5)), "at least 2 dims", id="fan_of_1d"),
    pytest.param(lambda: init.kaiming_normal_(minifw.empty(5, 5), mode="fan_avg"),
                 "mode must be 'fan_in' or 'fan_out'", id="bad_mode"),
    pytest.param(lambda: init.calculate_gain("swish"), "unsupported nonlinearity 'swish'", id="bad_gain"),
])
def test_init_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
