"""nn.utils (rnn, clipping, parametrize, weight/spectral norm, functional_call), the
IterableDataset sum and Normalize's gradient, as PyTorch's behave."""
import numpy as np
import pytest

import minifw
import minifw.nn as nn
from minifw.data import ChainDataset, IterableDataset
from minifw.nn.utils import clip_grad_norm_, get_total_norm, parametrizations, parametrize, rnn
from minifw.nn.utils.stateless import functional_call
from minifw.vision import transforms


# ---- nn.utils.rnn ----------------------------------------------------------------------------
def _packed():
    x = minifw.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    return rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)


def test_packed_sequence_long_and_int():
    p = _packed()
    for method, dtype in (("long", minifw.int64), ("int", minifw.int32)):
        q = getattr(p, method)()
        assert isinstance(q, rnn.PackedSequence)
        assert q.data.dtype == dtype
        np.testing.assert_array_equal(q.data.numpy(), p.data.numpy().astype(dtype))
        np.testing.assert_array_equal(q.sorted_indices.numpy(), [1, 0, 2])
        np.testing.assert_array_equal(q.unsorted_indices.numpy(), [1, 0, 2])
    assert p.pin_memory() is p


def test_packed_sequence_missing_dtypes_say_so():
    with pytest.raises(TypeError, match="float16"):
        _packed().half()


def test_packed_sequence_from_a_pair():
    data, sizes = minifw.tensor([1.0, 2.0, 3.0]), minifw.tensor([2, 1])
    p = rnn.PackedSequence((data, sizes))
    np.testing.assert_array_equal(p.batch_sizes.numpy(), [2, 1])
    assert p.sorted_indices is None and p.unsorted_indices is None


def test_pad_sequence_takes_the_first_sequences_dtype():
    a = minifw.tensor(np.ones(2, np.float32))
    b = minifw.tensor(np.full(3, 0.1, np.float64))
    out = rnn.pad_sequence([a, b])
    assert out.dtype == minifw.float32
    np.testing.assert_array_equal(out.numpy(), np.array([[1, 0.1], [1, 0.1], [0, 0.1]], np.float32))
    assert rnn.pad_sequence([b, a]).dtype == minifw.float64


# ---- clipping ----------------------------------------------------------------------------------
def test_get_total_norm_refuses_integer_tensors():
    with pytest.raises(TypeError, match="floating-point"):
        get_total_norm([minifw.tensor([1, 1])])


def test_clip_grad_norm_takes_one_element_tensors():
    p = nn.Parameter(minifw.zeros(2))
    p.grad = minifw.tensor([3.0, 4.0])
    total = clip_grad_norm_([p], minifw.tensor(1.0), norm_type=minifw.tensor(2.0))
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), np.array([3.0, 4.0]) / (5.0 + 1e-6), rtol=1e-6)
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm_([p], minifw.tensor([1.0, 2.0]))


# ---- parametrize ---------------------------------------------------------------------------------
class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


class _SymmetricInvertible(_Symmetric):
    def right_inverse(self, a):
        return a.triu()


class _Double(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, x):
        raise NotImplementedError


def _square_linear():
    layer = nn.Linear(3, 3)
    with minifw.no_grad():
        layer.weight.copy_(minifw.tensor(np.arange(9, dtype=np.float32).reshape(3, 3)))
    return layer


def test_assigning_without_right_inverse_raises():
    layer = _square_linear()
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    with pytest.raises(RuntimeError, match="right_inverse"):
        layer.weight = minifw.ones(3, 3)


def test_right_inverse_not_implemented_is_the_identity():
    layer = _square_linear()
    parametrize.register_parametrization(layer, "weight", _Double())
    np.testing.assert_array_equal(layer.weight.detach().numpy(), 2 * np.arange(9).reshape(3, 3))


def test_the_original_parameter_object_is_kept():
    layer = _square_linear()
    weight = layer.weight
    parametrize.register_parametrization(layer, "weight", _SymmetricInvertible())
    assert layer.parametrizations.weight.original is weight
    np.testing.assert_array_equal(weight.detach().numpy(), np.triu(np.arange(9).reshape(3, 3)))
    parametrize.remove_parametrizations(layer, "weight")
    assert layer.weight is weight


def test_a_parametrized_buffer_stays_a_buffer():
    layer = _square_linear()
    layer.register_buffer("extra", minifw.tensor(np.arange(9, dtype=np.float32).reshape(3, 3)))
    parametrize.register_parametrization(layer, "extra", _Symmetric())
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in layer.named_buffers()] == ["parametrizations.extra.original"]
    parametrize.remove_parametrizations(layer, "extra")
    assert [n for n, _ in layer.named_buffers()] == ["extra"]
    a = np.arange(9).reshape(3, 3)
    np.testing.assert_array_equal(layer.extra.numpy(), np.triu(a) + np.triu(a, 1).T)


def test_the_parametrization_takes_the_modules_mode():
    layer = _square_linear().eval()
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    assert not layer.parametrizations.weight[0].training


def test_type_before_parametrizations():
    layer = _square_linear()
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    assert type(layer) is not nn.Linear
    assert parametrize.type_before_parametrizations(layer) is nn.Linear


# ---- weight and spectral norm ----------------------------------------------------------------------
def test_weight_norm_dim_minus_one_is_the_whole_tensor():
    layer = parametrizations.weight_norm(_square_linear(), dim=-1)
    g = layer.parametrizations.weight.original0
    assert tuple(g.shape) == ()
    assert g.item() == pytest.approx(np.linalg.norm(np.arange(9)), rel=1e-6)
    with pytest.warns(FutureWarning):
        old = nn.utils.weight_norm(_square_linear(), dim=-1)
    assert tuple(old.weight_g.shape) == ()


def test_weight_norm_loads_the_older_keys():
    layer = parametrizations.weight_norm(nn.Linear(3, 2))
    layer.load_state_dict({"weight_g": minifw.full((2, 1), 2.0), "weight_v": minifw.ones(2, 3),
                           "bias": minifw.zeros(2)})
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.full((2, 3), 2 / np.sqrt(3)), rtol=1e-6)


@pytest.mark.parametrize("cls, shape", [(nn.ConvTranspose1d, (3,)), (nn.ConvTranspose3d, (3,))])
def test_spectral_norm_of_transposed_convolutions_uses_dim_1(cls, shape):
    layer = parametrizations.spectral_norm(cls(2, 3, 2))
    assert tuple(layer.parametrizations.weight[0]._u.shape) == shape
    old = nn.utils.spectral_norm(cls(2, 3, 2))
    assert tuple(old.weight_u.shape) == shape


# ---- functional_call on a parametrized module ------------------------------------------------------
class _Negate(nn.Module):
    def forward(self, x):
        return -x

    def right_inverse(self, x):
        return -x


def test_functional_call_with_a_parametrized_name():
    layer = _square_linear()
    with minifw.no_grad():
        layer.bias.zero_()
    parametrize.register_parametrization(layer, "weight", _Negate())
    before = layer.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning):
        out = functional_call(layer, {"weight": minifw.eye(3)}, minifw.ones(1, 3))
    np.testing.assert_array_equal(out.detach().numpy(), [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(layer.weight.detach().numpy(), before)


# ---- data and transforms ---------------------------------------------------------------------------
class _Stream(IterableDataset):
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)


def test_iterable_datasets_add_up_to_a_chain():
    both = _Stream([1, 2]) + _Stream([3])
    assert isinstance(both, ChainDataset)
    assert list(both) == [1, 2, 3]


def test_normalize_is_differentiable():
    x = minifw.ones(2, 1, 1, requires_grad=True)
    y = transforms.Normalize([0.5, 0.0], [0.25, 2.0])(x)
    np.testing.assert_allclose(y.detach().numpy().ravel(), [2.0, 0.5])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy().ravel(), [4.0, 0.5])


def test_with_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    ours = rnn.pack_padded_sequence(minifw.tensor(x), [2, 4, 1], enforce_sorted=False).long()
    theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [2, 4, 1],
                                                     enforce_sorted=False).long()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 3), dim=-1)
    m = parametrizations.weight_norm(nn.Linear(3, 3), dim=-1)
    assert tuple(m.parametrizations.weight.original0.shape) == \
        tuple(t.parametrizations.weight.original0.shape)
