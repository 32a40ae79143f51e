"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm), the older
hook-based weight_norm / spectral_norm, and parameters_to_vector / vector_to_parameters:
behaviour, state_dict names and values and gradients against PyTorch's (when installed),
float64 finite differences, and errors."""
import warnings

import numpy as np
import pytest

import minifw
from minifw import nn
from minifw.nn.utils import parametrizations, parametrize
from gradcheck import gradcheck


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor

    def right_inverse(self, x):
        return x / self.factor


def test_a_parametrized_weight_is_computed_from_its_original():
    minifw.manual_seed(0)
    layer = nn.Linear(3, 3)
    other = nn.Linear(3, 3)
    before = layer.weight.detach().numpy().copy()
    parametrize.register_parametrization(layer, "weight", Symmetric())
    w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    # right_inverse kept the upper triangle as the original
    np.testing.assert_allclose(np.triu(w), np.triu(before), rtol=1e-6)
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)
    assert type(other) is nn.Linear and not parametrize.is_parametrized(other)
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"]

    # the optimizer trains the original; the weight stays symmetric
    opt = minifw.optim.SGD(layer.parameters(), lr=0.1)
    layer(minifw.randn(4, 3)).pow(2).sum().backward()
    opt.step()
    w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    assert not np.allclose(np.triu(w), np.triu(before))

    # assigning the weight goes through right_inverse
    target = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]], dtype=np.float32)
    layer.weight = minifw.tensor(target)
    np.testing.assert_allclose(layer.weight.detach().numpy(), target)


def test_parametrizations_chain_and_come_off_again():
    layer = nn.Linear(2, 2)
    original = layer.weight.detach().numpy().copy()
    parametrize.register_parametrization(layer, "weight", Scale(2.0))
    parametrize.register_parametrization(layer, "weight", Scale(3.0))
    np.testing.assert_allclose(layer.weight.detach().numpy(), 6 * original / 2, rtol=1e-6)
    # the first right_inverse divided the original by 2; the chain multiplies by 2, then 3
    layer.weight = minifw.tensor(np.ones((2, 2), np.float32) * 6)
    np.testing.assert_allclose(layer.parametrizations.weight.original.detach().numpy(), 1.0)

    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    # as in PyTorch, the weight is registered again, after the bias
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(layer.weight.detach().numpy(), 1.0)

    parametrize.register_parametrization(layer, "bias", Scale(2.0))
    parametrize.remove_parametrizations(layer, "bias")  # leave_parametrized: bias doubled
    np.testing.assert_allclose(layer.bias.detach().numpy(), 2 * layer.bias.detach().numpy() / 2)
    assert type(layer) is nn.Linear and isinstance(layer.bias, nn.Parameter)


def test_cached_computes_each_weight_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x

    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        for _ in range(3):
            layer.weight
    assert len(calls) == 1
    layer.weight
    assert len(calls) == 2


def test_registration_errors():
    layer = nn.Linear(2, 3)
    with pytest.raises(ValueError, match="no parameter or buffer named 'kernel'"):
        parametrize.register_parametrization(layer, "kernel", Scale(2.0))
    with pytest.raises(TypeError, match="parametrization must be a minifw.nn.Module"):
        parametrize.register_parametrization(layer, "weight", lambda x: x)

    class Flatten(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ValueError, match="must give the tensor's shape"):
        parametrize.register_parametrization(layer, "weight", Flatten())
    assert type(layer) is nn.Linear and "weight" in layer._parameters
    with pytest.raises(ValueError, match="no parametrization on 'weight'"):
        parametrize.remove_parametrizations(layer, "weight")


def _pair(make_mine, make_theirs, reparam, torch):
    minifw.manual_seed(0)
    mine = make_mine()
    theirs = make_theirs()
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in mine.state_dict().items()})
    reparam(mine, theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in mine.state_dict().items()})
    return mine, theirs


REPARAMS = {
    "weight_norm": lambda m, t, torch: (parametrizations.weight_norm(m),
                                        torch.nn.utils.parametrizations.weight_norm(t)),
    "weight_norm_dim_none": lambda m, t, torch: (parametrizations.weight_norm(m, dim=None),
                                                 torch.nn.utils.parametrizations.weight_norm(t, dim=None)),
    "spectral_norm": lambda m, t, torch: (parametrizations.spectral_norm(m, n_power_iterations=2),
                                          torch.nn.utils.parametrizations.spectral_norm(t, n_power_iterations=2)),
    "old_weight_norm": lambda m, t, torch: (nn.utils.weight_norm(m), torch.nn.utils.weight_norm(t)),
    "old_spectral_norm": lambda m, t, torch: (nn.utils.spectral_norm(m), torch.nn.utils.spectral_norm(t)),
}
LAYERS = {
    "linear": (lambda: nn.Linear(5, 3, dtype=minifw.float64), (4, 5)),
    "conv": (lambda: nn.Conv2d(2, 3, 3, dtype=minifw.float64), (2, 2, 5, 5)),
    "conv_transpose": (lambda: nn.ConvTranspose2d(3, 2, 3, dtype=minifw.float64), (2, 3, 4, 4)),
}


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("reparam", REPARAMS)
def test_training_steps_match_pytorch(layer, reparam):
    torch = pytest.importorskip("torch")
    make, shape = LAYERS[layer]
    torch_layer = {"linear": lambda: torch.nn.Linear(5, 3, dtype=torch.float64),
                   "conv": lambda: torch.nn.Conv2d(2, 3, 3, dtype=torch.float64),
                   "conv_transpose": lambda: torch.nn.ConvTranspose2d(3, 2, 3, dtype=torch.float64)}[layer]
    mine, theirs = _pair(make, torch_layer, lambda m, t: REPARAMS[reparam](m, t, torch), torch)
    x = np.random.default_rng(1).uniform(-1, 1, shape)
    opt_m = minifw.optim.SGD(mine.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for step in range(3):  # the power iterations and the updates, step by step
        a, b = mine(minifw.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
        opt_m.zero_grad(), opt_t.zero_grad()
        a.pow(2).sum().backward(), b.pow(2).sum().backward()
        opt_m.step(), opt_t.step()
    for (k, v), (k2, v2) in zip(mine.state_dict().items(), theirs.state_dict().items()):
        assert k == k2
        np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)
    mine.eval(), theirs.eval()  # no power iteration in eval mode
    np.testing.assert_allclose(mine(minifw.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_weight_norm_gradients_match_finite_differences():
    layer = parametrizations.weight_norm(nn.Linear(4, 3, dtype=minifw.float64))
    g = layer.parametrizations.weight.original0
    v = layer.parametrizations.weight.original1
    x = minifw.tensor(np.random.default_rng(0).uniform(-1, 1, (5, 4)))
    gradcheck(lambda g_, v_: layer.parametrizations.weight[0](g_, v_) @ x.T, [g, v])


def test_spectral_norm_bounds_the_largest_singular_value():
    minifw.manual_seed(0)
    layer = parametrizations.spectral_norm(nn.Linear(8, 6), n_power_iterations=1)
    for _ in range(20):
        layer(minifw.randn(2, 8))
    sigma = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, abs=1e-3)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_removing_the_hooks_restores_one_parameter():
    layer = nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        warnings.simplefilter("always")
        nn.utils.weight_norm(layer)
    value = layer.weight.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="already has a weight_norm hook"):
        nn.utils.weight_norm(layer)
    nn.utils.remove_weight_norm(layer)
    assert list(layer.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(layer.weight.detach().numpy(), value, rtol=1e-6)
    with pytest.raises(ValueError, match="no weight_norm of .weight. found in Linear"):
        nn.utils.remove_weight_norm(layer)
    nn.utils.spectral_norm(layer)
    layer.eval()
    layer(minifw.randn(1, 3))
    value = layer.weight.detach().numpy().copy()
    nn.utils.remove_spectral_norm(layer)
    np.testing.assert_allclose(layer.weight.detach().numpy(), value, rtol=1e-6)
    assert list(layer.state_dict()) == ["bias", "weight"] and not layer._forward_pre_hooks
    with pytest.raises(ValueError, match="n_power_iterations must be a positive int"):
        nn.utils.spectral_norm(layer, n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter named 'kernel'"):
        nn.utils.spectral_norm(layer, "kernel")


def test_parametrized_module_on_the_device(dev):
    minifw.manual_seed(0)
    layer = parametrizations.weight_norm(nn.Linear(4, 3))
    x = minifw.randn(2, 4)
    want = layer(x)
    want.sum().backward()
    moved = parametrizations.weight_norm(nn.Linear(4, 3))
    moved.load_state_dict(layer.state_dict())
    moved.to(dev)
    got = moved(x.to(dev))
    got.sum().backward()
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moved.parametrizations.weight.original1.grad.cpu().numpy(),
                               layer.parametrizations.weight.original1.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_parameters_to_vector_and_back():
    layer = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(layer.parameters())
    assert tuple(vec.shape) == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], layer.weight.detach().numpy().reshape(-1))
    vec.sum().backward()  # differentiable, as PyTorch's
    assert layer.weight.grad.tolist() == [[1.0] * 3] * 2
    nn.utils.vector_to_parameters(minifw.arange(8.0), layer.parameters())
    assert layer.bias.tolist() == [6.0, 7.0]
    with pytest.raises(ValueError, match="8 elements"):
        nn.utils.vector_to_parameters(minifw.arange(7.0), layer.parameters())
    with pytest.raises(TypeError, match="element 1 is a int"):
        nn.utils.parameters_to_vector([layer.weight, 3])


def test_vector_to_parameters_makes_the_parameters_views_of_vec():
    layer = nn.Linear(2, 1)
    vec = minifw.tensor([1.0, 2.0, 3.0, 99.0])  # longer than the 3 values: the rest is unused
    nn.utils.vector_to_parameters(vec, layer.parameters())
    assert layer.weight.tolist() == [[1.0, 2.0]] and layer.bias.tolist() == [3.0]
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.is_leaf and layer.weight.requires_grad
    with minifw.no_grad():
        vec.mul_(10)  # vec -> parameters
    assert layer.weight.tolist() == [[10.0, 20.0]] and layer.bias.tolist() == [30.0]
    with minifw.no_grad():
        layer.weight.add_(1)  # parameters -> vec
    assert vec.tolist() == [11.0, 21.0, 30.0, 990.0]
    optimizer = minifw.optim.SGD(layer.parameters(), lr=1.0)
    layer(minifw.ones(1, 2)).sum().backward()
    optimizer.step()  # an update in place goes through to vec too
    assert vec.tolist() == [10.0, 20.0, 29.0, 990.0]


def test_vector_to_parameters_takes_vecs_dtype_and_detaches():
    layer = nn.Linear(2, 1)
    source = minifw.tensor([1.0, 2.0, 3.0], dtype=minifw.float64, requires_grad=True)
    nn.utils.vector_to_parameters(source * 2, layer.parameters())
    assert layer.weight.dtype == minifw.float64 and layer.weight.tolist() == [[2.0, 4.0]]
    assert layer.weight.is_leaf and layer.weight.grad_fn is None
    out = layer(minifw.ones(1, 2, dtype=minifw.float64)).sum()
    out.backward()
    assert source.grad is None and layer.weight.grad.tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize("vec, error, words", [
    (minifw.tensor([[1.0, 2.0, 3.0]]), ValueError, "1-D with at least 3 elements (the parameters' total), got shape (1, 3)"),
    (minifw.tensor([1.0, 2.0]), ValueError, "at least 3 elements (the parameters' total), got shape (2,)"),
    ([1.0, 2.0, 3.0], TypeError, "vec must be a Tensor, got list"),
])
def test_vector_to_parameters_refuses(vec, error, words):
    layer = nn.Linear(2, 1)
    before = layer.weight.tolist()
    with pytest.raises(error) as info:
        nn.utils.vector_to_parameters(vec, layer.parameters())
    assert words in str(info.value) and layer.weight.tolist() == before


def test_vector_to_parameters_aliasing_against_torch():
    torch = pytest.importorskip("torch")
    results = []
    for fw in (torch, minifw):
        layer = fw.nn.Linear(2, 1)
        vec = fw.tensor([1.0, 2.0, 3.0, 4.0], dtype=fw.float64)
        fw.nn.utils.vector_to_parameters(vec, layer.parameters())
        with fw.no_grad():
            vec.mul_(2)
            layer.bias.add_(1)
        results.append((layer.weight.tolist(), layer.bias.tolist(), vec.tolist(), str(layer.weight.dtype)[-7:]))
    assert results[0] == results[1]


def test_copies_keep_their_own_parametrizations():
    import copy
    layer = parametrizations.weight_norm(nn.Linear(3, 2))
    twin = copy.deepcopy(layer)
    parametrize.register_parametrization(twin, "bias", Scale(2.0))
    parametrize.remove_parametrizations(twin, "weight")
    # the original still computes its weight, and has no bias parametrization
    assert parametrize.is_parametrized(layer, "weight") and not parametrize.is_parametrized(layer, "bias")
    assert isinstance(layer.bias, nn.Parameter) and tuple(layer.weight.shape) == (2, 3)
    assert isinstance(twin.weight, nn.Parameter) and parametrize.is_parametrized(twin, "bias")
    x = minifw.randn(4, 3)
    assert tuple(layer(x).shape) == tuple(twin(x).shape) == (4, 2)
