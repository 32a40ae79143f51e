"""The torch namespace's own forms (minifw/_namespace.py): layers under their aten
signatures (torch.dropout(input, p, train), torch.embedding(weight, indices), losses with an
int reduction), random draws from tensors of parameters, windows, dtype rules, integration,
older linear-algebra names and switches. Values by hand and against PyTorch when it is
installed; gradients by finite differences in float64."""
import math
import warnings

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from gradcheck import gradcheck

F64 = minifw.float64


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def check_gradients(fn, arrays):
    gradcheck(fn, [minifw.tensor(a, dtype=F64, requires_grad=True) for a in arrays])


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def t(a, **kw):
    return minifw.tensor(np.asarray(a), **kw)


def close(got, want, rtol=1e-6, atol=1e-7):
    got = got.detach().numpy() if isinstance(got, minifw.Tensor) else np.asarray(got)
    want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---- every name is one torch has ----------------------------------------------------------

def test_every_name_is_in_the_namespace_and_is_torchs(torch):
    from minifw import _namespace
    for name in _namespace.__all__:
        assert getattr(minifw, name) is getattr(_namespace, name)
        assert hasattr(torch, name), name
    assert minifw.range is _namespace.range_


# ---- the layers' forms ---------------------------------------------------------------

def test_layer_forms_equal_the_functional_ones():
    x, w, b = t(rand(2, 3, 7, 6)), t(rand(4, 3, 3, 3, seed=1)), t(rand(4, seed=2))
    close(minifw.conv2d(x, w, b, 2, 1), F.conv2d(x, w, b, 2, 1))
    close(minifw.conv_transpose2d(x, w.transpose(0, 1), None, 2, 1, 1),
          F.conv_transpose2d(x, w.transpose(0, 1), None, 2, 1, 1))
    x1 = t(rand(2, 3, 9))
    close(minifw.conv1d(x1, t(rand(5, 3, 2, seed=3))), F.conv1d(x1, t(rand(5, 3, 2, seed=3))))
    close(minifw.max_pool2d(x, 2), F.max_pool2d(x, 2))
    close(minifw.max_pool2d(x, 3, (), 1), F.max_pool2d(x, 3, None, 1))  # stride [] = kernel
    close(minifw.max_pool2d(x, 3, 1), F.max_pool2d(x, 3, 1))
    out, idx = minifw.max_pool1d_with_indices(x1, 2)
    want_out, want_idx = F.max_pool1d(x1, 2, return_indices=True)
    close(out, want_out)
    assert (idx.numpy() == want_idx.numpy()).all()
    out, idx = minifw.adaptive_max_pool1d(x1, 4)
    close(out, F.adaptive_max_pool1d(x1, 4))
    close(minifw.avg_pool1d(x1, 3), F.avg_pool1d(x1, 3))


def test_dropout_forms_take_train_positionally():
    x = minifw.ones(4, 3, 5, 5)
    assert (minifw.dropout(x, 0.5, False).numpy() == 1).all()
    minifw.manual_seed(0)
    y = minifw.dropout(x, 0.5, True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    minifw.manual_seed(0)
    y = minifw.feature_dropout(x, 0.5, True).numpy()
    per_channel = y.reshape(4, 3, -1)
    assert ((per_channel == per_channel[..., :1]).all())  # whole channels at once
    z = minifw.ones(6)
    assert minifw.dropout_(z, 0.0, True) is z
    with pytest.raises(TypeError, match="dropout: train must be a bool"):
        minifw.dropout(x, 0.5, 1)


def test_batch_and_instance_norm_take_torchs_argument_order():
    x = t(rand(4, 3, 5, 5))
    w, b = t(rand(3, seed=1)), t(rand(3, seed=2))
    rm, rv = minifw.zeros(3, dtype=F64), minifw.ones(3, dtype=F64)
    got = minifw.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, True)
    rm2, rv2 = minifw.zeros(3, dtype=F64), minifw.ones(3, dtype=F64)
    close(got, F.batch_norm(x, rm2, rv2, w, b, True, 0.1, 1e-5))
    close(rm, rm2)
    got = minifw.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False)
    close(got, F.instance_norm(x, None, None, w, b, True, 0.1, 1e-5))
    close(minifw.layer_norm(x, (5, 5)), F.layer_norm(x, (5, 5)))
    close(minifw.group_norm(x, 3, w, b), F.group_norm(x, 3, w, b))
    with pytest.raises(TypeError, match="batch_norm: cudnn_enabled must be a bool"):
        minifw.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, "yes")


def test_embedding_takes_the_weight_first():
    weight, idx = t(rand(5, 3)), minifw.tensor([[0, 4], [2, 2]])
    close(minifw.embedding(weight, idx), F.embedding(idx, weight))
    weight.requires_grad_(True)
    minifw.embedding(weight, idx, padding_idx=2).sum().backward()
    assert (weight.grad.numpy()[2] == 0).all() and (weight.grad.numpy()[0] == 1).all()


def test_losses_take_an_int_reduction():
    a, b = t(rand(4, 5)), t(rand(4, 5, seed=1))
    y = minifw.tensor([1.0, -1.0, 1.0, -1.0])
    for reduction, name in ((0, "none"), (1, "mean"), (2, "sum")):
        close(minifw.cosine_embedding_loss(a, b, y, 0.1, reduction),
              F.cosine_embedding_loss(a, b, y, 0.1, reduction=name))
        close(minifw.kl_div(a, b.softmax(1), reduction), F.kl_div(a, b.softmax(1), reduction=name))
    with pytest.raises(ValueError, match="kl_div: reduction must be 0"):
        minifw.kl_div(a, b, 3)
    with pytest.raises(ValueError, match="kl_div: reduction must be 0"):
        minifw.kl_div(a, b, True)


def test_losses_and_layers_match_torch(torch):
    rng = np.random.default_rng(5)
    a, b, c = (rng.uniform(-1, 1, (4, 6)) for _ in range(3))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    T = lambda v: torch.tensor(v)  # noqa: E731
    for red in (0, 1, 2):
        close(minifw.cosine_embedding_loss(t(a), t(b), t(y), 0.2, red),
              torch.cosine_embedding_loss(T(a), T(b), T(y), 0.2, red))
        close(minifw.margin_ranking_loss(t(a[:, 0]), t(b[:, 0]), t(y), 0.1, red),
              torch.margin_ranking_loss(T(a[:, 0]), T(b[:, 0]), T(y), 0.1, red))
        close(minifw.hinge_embedding_loss(t(a), t(np.sign(b)), 0.5, red),
              torch.hinge_embedding_loss(T(a), T(np.sign(b)), 0.5, red))
        close(minifw.triplet_margin_loss(t(a), t(b), t(c), 1.0, 2.0, 1e-6, True, red),
              torch.triplet_margin_loss(T(a), T(b), T(c), 1.0, 2.0, 1e-6, True, red))
        close(minifw.poisson_nll_loss(t(a), t(np.abs(b)), True, True, 1e-8, red),
              torch.poisson_nll_loss(T(a), T(np.abs(b)), True, True, 1e-8, red))
        close(minifw.binary_cross_entropy_with_logits(t(a), t((b > 0) * 1.0), None, t(c[0] + 2), red),
              torch.binary_cross_entropy_with_logits(T(a), T((b > 0) * 1.0), None, T(c[0] + 2), red))
        close(minifw.kl_div(t(a), t(np.abs(b)), red, log_target=False),
              torch.kl_div(T(a), T(np.abs(b)), red, log_target=False))
    x = rng.uniform(-1, 1, (2, 3, 6, 5))
    w, bb = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    close(minifw.batch_norm(t(x), t(w), t(bb), None, None, True, 0.1, 1e-5, True),
          torch.batch_norm(T(x), T(w), T(bb), None, None, True, 0.1, 1e-5, True))
    close(minifw.instance_norm(t(x), t(w), t(bb), None, None, True, 0.1, 1e-5, True),
          torch.instance_norm(T(x), T(w), T(bb), None, None, True, 0.1, 1e-5, True))
    close(minifw.group_norm(t(x), 3, t(w), t(bb), 1e-5, True),
          torch.group_norm(T(x), 3, T(w), T(bb), 1e-5, True))
    weight = rng.uniform(-1, 1, (7, 4))
    idx = np.array([[1, 6], [3, 1]])
    close(minifw.embedding(t(weight), minifw.tensor(idx)), torch.embedding(T(weight), T(idx)))
    close(minifw.threshold(t(a), 0.1, 20.0), torch.threshold(T(a), 0.1, 20.0))
    close(minifw.selu(t(a)), torch.selu(T(a)))
    close(minifw.celu(t(a), 0.7), torch.celu(T(a), 0.7))
    close(minifw.max_pool2d(t(x), 2, (), 1, 1, True), torch.max_pool2d(T(x), 2, [], 1, 1, True))
    out, idx = minifw.adaptive_max_pool1d(t(a[None]), 4)
    want, want_idx = torch.adaptive_max_pool1d(T(a[None]), 4)
    close(out, want)
    assert (idx.numpy() == want_idx.numpy()).all()


def test_in_place_layer_forms_change_their_input():
    x = t(rand(3, 4))
    y = x.clone()
    assert minifw.relu_(y) is y
    close(y, x.relu())
    y = x.clone()
    assert minifw.threshold_(y, 0.2, -1.0) is y
    close(y, F.threshold(x, 0.2, -1.0))
    y = x.clone()
    minifw.selu_(y)
    close(y, F.selu(x))
    y = x.clone()
    minifw.celu_(y, 0.5)
    close(y, F.celu(x, 0.5))


# ---- creation ------------------------------------------------------------------------

def test_empty_like_and_empty_strided():
    x = minifw.zeros(2, 3, dtype=minifw.int32)
    e = minifw.empty_like(x)
    assert e.shape == (2, 3) and e.dtype == minifw.int32
    assert minifw.empty_like(x, dtype=F64).dtype == F64
    assert minifw.empty_strided((2, 3, 4), (12, 4, 1)).shape == (2, 3, 4)
    assert minifw.empty_strided((2, 0, 4), (4, 4, 1)).shape == (2, 0, 4)
    with pytest.raises(ValueError, match=r"empty_strided: minifw's tensors are contiguous: stride "
                                         r"must be \(12, 4, 1\)"):
        minifw.empty_strided((2, 3, 4), (1, 2, 6))
    with pytest.raises(TypeError, match="empty_like: input must be a Tensor"):
        minifw.empty_like(np.zeros(3))


def test_randint_like():
    x = minifw.zeros(500, dtype=minifw.int32)
    r = minifw.randint_like(x, 10)
    assert r.dtype == minifw.int32 and r.shape == (500,)
    values = r.numpy()
    assert values.min() >= 0 and values.max() <= 9 and len(np.unique(values)) == 10
    r = minifw.randint_like(x, 5, 8, dtype=minifw.int64).numpy()
    assert set(np.unique(r)) == {5, 6, 7}
    with pytest.raises(ValueError, match="randint: expects low < high"):
        minifw.randint_like(x, 3, 3)


def test_logspace_scalar_tensor_range_and_frombuffer(torch):
    close(minifw.logspace(0, 2, 3), [1.0, 10.0, 100.0])
    close(minifw.logspace(-1, 3, 5, base=2), torch.logspace(-1, 3, 5, base=2))
    assert minifw.logspace(0, 3, 4, dtype=minifw.int64).numpy().tolist() == [1, 10, 100, 1000]
    s = minifw.scalar_tensor(3)
    assert s.ndim == 0 and s.dtype == minifw.float32 and s.item() == 3
    with pytest.warns(UserWarning, match="deprecated"):
        r = minifw.range(1, 2, 0.25)
    close(r, torch.range(1, 2, 0.25))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="range: step must be nonzero"):
            minifw.range(0, 3, -1)
    data = bytearray(np.arange(6, dtype=np.float32).tobytes())
    f = minifw.frombuffer(data, dtype=minifw.float32, count=4, offset=4)
    assert f.numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    f[0] = 10.0  # shares the buffer
    assert np.frombuffer(data, dtype=np.float32)[1] == 10.0


def test_asarray_shares_memory_unless_told():
    a = np.arange(4.0)
    shared = minifw.asarray(a)
    assert np.shares_memory(shared.numpy(), a)
    copied = minifw.asarray(a, copy=True)
    assert not np.shares_memory(copied.numpy(), a)
    with pytest.raises(ValueError, match="asarray: copy=False"):
        minifw.asarray([1.0, 2.0], copy=False)
    x = minifw.ones(3)
    assert minifw.asarray(x) is x
    g = minifw.asarray([1.0, 2.0], requires_grad=True)
    assert g.requires_grad and g.is_leaf


# ---- windows ---------------------------------------------------------------------------

def test_windows_by_hand():
    close(minifw.hann_window(4, periodic=False), 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 3))
    close(minifw.hann_window(4), 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 4))
    close(minifw.bartlett_window(5, periodic=False), [0.0, 0.5, 1.0, 0.5, 0.0])
    assert minifw.hann_window(1).numpy().tolist() == [1.0]
    assert minifw.hann_window(0).shape == (0,)
    assert minifw.hamming_window(3, dtype=F64).dtype == F64
    with pytest.raises(TypeError, match="hann_window: dtype must be a float dtype"):
        minifw.hann_window(4, dtype=minifw.int64)
    with pytest.raises(ValueError, match="window_length must be >= 0"):
        minifw.hann_window(-1)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(torch, n, periodic):
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                 "kaiser_window"):
        got = getattr(minifw, name)(n, periodic, dtype=F64)
        want = getattr(torch, name)(n, periodic, dtype=torch.float64)
        close(got, want, rtol=1e-12, atol=1e-14)
    close(minifw.hamming_window(n, periodic, 0.5, 0.4, dtype=F64),
          torch.hamming_window(n, periodic, 0.5, 0.4, dtype=torch.float64), atol=1e-14)
    close(minifw.kaiser_window(n, periodic, 3.5, dtype=F64),
          torch.kaiser_window(n, periodic, 3.5, dtype=torch.float64), rtol=1e-12, atol=1e-14)


# ---- random draws ----------------------------------------------------------------------

def test_normal_forms_and_statistics():
    minifw.manual_seed(0)
    mean, std = minifw.full((20000,), 3.0), minifw.full((20000,), 2.0)
    s = minifw.normal(mean, std).numpy()
    assert abs(s.mean() - 3) < 0.05 and abs(s.std() - 2) < 0.05
    s = minifw.normal(mean, 0.5).numpy()
    assert abs(s.std() - 0.5) < 0.02
    s = minifw.normal(-1.0, std).numpy()
    assert abs(s.mean() + 1) < 0.05
    s = minifw.normal(2.0, 3.0, (4, 5000))
    assert s.shape == (4, 5000) and abs(s.numpy().mean() - 2) < 0.1
    g = minifw.Generator().manual_seed(7)
    a = minifw.normal(mean[:5], std[:5], generator=g)
    b = minifw.normal(mean[:5], std[:5], generator=minifw.Generator().manual_seed(7))
    assert (a.numpy() == b.numpy()).all()
    broadcast = minifw.normal(minifw.zeros(3, 1), minifw.ones(1, 4, dtype=F64))
    assert broadcast.shape == (3, 4) and broadcast.dtype == F64


def test_draws_give_zero_gradients_as_torch():
    mean = minifw.zeros(3, requires_grad=True)
    std = minifw.ones(3, requires_grad=True)
    y = minifw.normal(mean, std)
    assert y.requires_grad
    (y * y).sum().backward()
    assert (mean.grad.numpy() == 0).all() and (std.grad.numpy() == 0).all()
    rate = minifw.full((4,), 2.0, requires_grad=True)
    minifw.poisson(rate).sum().backward()
    assert (rate.grad.numpy() == 0).all()
    with minifw.no_grad():
        assert not minifw.normal(mean, std).requires_grad
    x = minifw.tensor([-1.0, 2.0], requires_grad=True)
    minifw.angle(x).sum().backward()
    assert (x.grad.numpy() == 0).all()


def test_normal_errors():
    with pytest.raises(TypeError, match="normal: with a number for both mean and std, size is "
                                        "required"):
        minifw.normal(0.0, 1.0)
    with pytest.raises(ValueError, match="normal: std must be >= 0"):
        minifw.normal(minifw.zeros(2), -1.0)
    with pytest.raises(ValueError, match="normal: std must be >= 0"):
        minifw.normal(0.0, minifw.tensor([1.0, -1.0]))
    with pytest.raises(TypeError, match="normal: mean must be a float tensor"):
        minifw.normal(minifw.tensor([1, 2]), 1.0)
    with pytest.raises(TypeError, match="normal: size is given only"):
        minifw.normal(minifw.zeros(2), 1.0, (2,))
    with pytest.raises(ValueError, match="normal: std must be finite"):
        minifw.normal(minifw.zeros(2), math.nan)


def test_poisson_and_binomial():
    minifw.manual_seed(1)
    rates = minifw.tensor([0.0, 1.0, 4.0, 50.0], dtype=F64).expand(20000, 4).contiguous()
    s = minifw.poisson(rates).numpy()
    assert s.dtype == np.float64 and (s == np.floor(s)).all()
    np.testing.assert_allclose(s.mean(0), [0, 1, 4, 50], atol=0.2)
    np.testing.assert_allclose(s.var(0), [0, 1, 4, 50], rtol=0.1, atol=0.05)
    n = minifw.full((20000,), 10.0)
    p = minifw.tensor([0.3])
    b = minifw.binomial(n, p.expand(20000)).numpy()
    assert b.min() >= 0 and b.max() <= 10
    assert abs(b.mean() - 3) < 0.05 and abs(b.var() - 2.1) < 0.1
    with pytest.raises(ValueError, match="poisson: every rate in input must be >= 0"):
        minifw.poisson(minifw.tensor([-1.0]))
    with pytest.raises(ValueError, match="binomial: count must hold non-negative whole numbers"):
        minifw.binomial(minifw.tensor([1.5]), minifw.tensor([0.5]))
    with pytest.raises(ValueError, match=r"binomial: prob must be in \[0, 1\]"):
        minifw.binomial(minifw.tensor([2.0]), minifw.tensor([1.5]))
    with pytest.raises(TypeError, match="binomial: count and prob must have one dtype"):
        minifw.binomial(minifw.tensor([2.0]), minifw.tensor([0.5], dtype=F64))


def test_draws_on_cudasim_stay_there():
    mean = minifw.zeros(3, device="cudasim")
    assert minifw.normal(mean, 1.0).device == mean.device
    assert minifw.poisson(minifw.ones(3, device="cudasim")).device == mean.device


# ---- dtypes ------------------------------------------------------------------------------

def test_dtype_rules_match_torch(torch):
    dtypes = [(minifw.float32, torch.float32), (minifw.float64, torch.float64),
              (minifw.int32, torch.int32), (minifw.int64, torch.int64), (minifw.bool, torch.bool)]
    for a, ta in dtypes:
        for b, tb in dtypes:
            assert str(minifw.promote_types(a, b)) == str(ta if torch.promote_types(ta, tb) == ta
                                                          else torch.promote_types(ta, tb)
                                                          ).replace("torch.", "")
            assert minifw.can_cast(a, b) == torch.can_cast(ta, tb), (a, b)
            x, tx = minifw.ones(2, dtype=a), torch.ones(2, dtype=ta)
            y, ty = minifw.ones((), dtype=b), torch.ones((), dtype=tb)
            assert str(minifw.result_type(x, y)) == str(torch.result_type(tx, ty)).replace("torch.", "")
            for number in (1, 1.5, True):
                assert str(minifw.result_type(x, number)) == \
                    str(torch.result_type(tx, number)).replace("torch.", "")


def test_predicates():
    x = minifw.tensor([2.0])
    assert not minifw.is_complex(x) and minifw.is_signed(x)
    assert not minifw.is_signed(minifw.tensor([True]))
    assert minifw.is_nonzero(x) and not minifw.is_nonzero(minifw.tensor([0]))
    with pytest.raises(ValueError, match="is_nonzero: input must have one element, got 2"):
        minifw.is_nonzero(minifw.ones(2))
    assert minifw.is_same_size(minifw.ones(2, 3), minifw.zeros(2, 3))
    assert not minifw.is_same_size(minifw.ones(2, 3), minifw.zeros(3, 2))
    assert not minifw.is_inference(x) and not minifw.is_conj(x) and not minifw.is_neg(x)
    assert minifw.typename(x) == "minifw.FloatTensor" and minifw.typename(3) == "int"
    assert minifw.conj(x) is x and minifw.real(x) is x and minifw.resolve_conj(x) is x
    with pytest.raises(TypeError, match="imag: minifw has no complex dtypes"):
        minifw.imag(x)
    with pytest.raises(TypeError, match="result_type: tensor2 must be a Tensor or a number"):
        minifw.result_type(x, "a")


def test_inference_mode_is_seen():
    assert not minifw.is_inference_mode_enabled()
    with minifw.inference_mode():
        assert minifw.is_inference_mode_enabled()
        with minifw.inference_mode(False):
            assert not minifw.is_inference_mode_enabled()
        assert minifw.is_inference_mode_enabled()
    assert not minifw.is_inference_mode_enabled()


def test_angle_matches_torch(torch):
    v = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf])
    close(minifw.angle(t(v)), torch.angle(torch.tensor(v)))
    close(minifw.angle(minifw.tensor([-1, 2])), torch.angle(torch.tensor([-1, 2])))


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            minifw.set_default_tensor_type("torch.DoubleTensor")
        assert minifw.get_default_dtype() == F64
        with pytest.warns(UserWarning):
            minifw.set_default_tensor_type(minifw.FloatTensor)
        assert minifw.get_default_dtype() == minifw.float32
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="only float CPU tensor"):
            minifw.set_default_tensor_type("torch.cuda.FloatTensor")
    finally:
        minifw.set_default_dtype(minifw.float32)


# ---- integration, differences, products --------------------------------------------------

@pytest.mark.parametrize("shape, dim", [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1),
                                        ((1, 2), 1), ((4, 1), 1)])
def test_trapezoid_and_cumulative_match_torch(torch, shape, dim):
    y = rand(*shape)
    x1 = np.sort(rand(shape[dim], seed=3))
    for kw, tkw in (({}, {}), ({"dx": 0.5}, {"dx": 0.5})):
        close(minifw.trapezoid(t(y), dim=dim, **kw), torch.trapezoid(torch.tensor(y), dim=dim, **tkw))
        close(minifw.cumulative_trapezoid(t(y), dim=dim, **kw),
              torch.cumulative_trapezoid(torch.tensor(y), dim=dim, **tkw))
    close(minifw.trapezoid(t(y), t(x1), dim=dim), torch.trapezoid(torch.tensor(y), torch.tensor(x1), dim=dim))
    close(minifw.cumulative_trapezoid(t(y), t(x1), dim=dim),
          torch.cumulative_trapezoid(torch.tensor(y), torch.tensor(x1), dim=dim))
    xs = np.sort(rand(*shape, seed=4), axis=dim)
    close(minifw.trapz(t(y), t(xs), dim=dim), torch.trapz(torch.tensor(y), torch.tensor(xs), dim=dim))


def test_trapezoid_by_hand_and_gradient():
    close(minifw.trapezoid(t([1.0, 2.0, 3.0])), 4.0)
    close(minifw.trapezoid(t([1.0, 2.0, 3.0]), t([0.0, 1.0, 3.0])), 1.5 + 5.0)
    close(minifw.cumulative_trapezoid(t([1.0, 2.0, 3.0]), dx=2.0), [3.0, 8.0])
    check_gradients(lambda y, x: minifw.trapezoid(y, x, dim=0), [rand(4, 3), np.sort(rand(4, seed=1))])
    check_gradients(lambda y: minifw.cumulative_trapezoid(y, dx=0.3), [rand(2, 5)])
    with pytest.raises(TypeError, match="trapezoid: give x or dx, not both"):
        minifw.trapezoid(t([1.0, 2.0]), t([0.0, 1.0]), dx=1.0)
    with pytest.raises(ValueError, match="trapezoid: x has 3 samples, y has 2"):
        minifw.trapezoid(t([1.0, 2.0]), t([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_torch(torch, edge_order):
    y = rand(5, 6)
    for kw in ({}, {"spacing": 2.0}, {"dim": 1}, {"spacing": [0.5], "dim": 0},
               {"spacing": [0.5, 2.0]}):
        got = minifw.gradient(t(y), edge_order=edge_order, **kw)
        want = torch.gradient(torch.tensor(y), edge_order=edge_order, **kw)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w)
    coords = [np.sort(rand(5, seed=2)) * 3, np.sort(rand(6, seed=3)) * 3]
    got = minifw.gradient(t(y), spacing=[t(c) for c in coords], edge_order=edge_order)
    want = torch.gradient(torch.tensor(y), spacing=[torch.tensor(c) for c in coords],
                          edge_order=edge_order)
    for g, w in zip(got, want):
        close(g, w, rtol=1e-9, atol=1e-9)


def test_gradient_by_hand_and_its_gradient():
    d, = minifw.gradient(t([1.0, 4.0, 9.0, 16.0]))
    close(d, [3.0, 4.0, 6.0, 7.0])
    d, = minifw.gradient(t([1.0, 4.0, 9.0, 16.0]), edge_order=2)
    close(d, [2.0, 4.0, 6.0, 8.0])  # exact for a quadratic
    check_gradients(lambda y: minifw.gradient(y, spacing=0.7)[1], [rand(3, 5)])
    with pytest.raises(ValueError, match="gradient: dim 0 has 2 samples; edge_order 2 needs"):
        minifw.gradient(t([1.0, 2.0]), edge_order=2)


def test_vander_unravel_rsub_chain_matmul(torch):
    x = rand(4)
    for n in (None, 0, 1, 3, 6):
        for inc in (False, True):
            close(minifw.vander(t(x), n, inc), torch.vander(torch.tensor(x), n, inc))
    check_gradients(lambda v: minifw.vander(v, 4), [x])
    for shape in ((2, 3), (4,), (2, 1, 3)):
        flat = np.arange(-int(np.prod(shape)), int(np.prod(shape)))
        for g, w in zip(minifw.unravel_index(minifw.tensor(flat), shape),
                        torch.unravel_index(torch.tensor(flat), shape)):
            assert g.numpy().tolist() == w.tolist()
    with pytest.raises(IndexError, match=r"unravel_index: indices must be in \[-6, 6\)"):
        minifw.unravel_index(minifw.tensor([6]), (2, 3))
    a, b = rand(3, 4), rand(3, 4, seed=1)
    close(minifw.rsub(t(a), t(b)), torch.rsub(torch.tensor(a), torch.tensor(b)))
    close(minifw.rsub(t(a), t(b), alpha=2), torch.rsub(torch.tensor(a), torch.tensor(b), alpha=2))
    close(minifw.rsub(t(a), 3.0), torch.rsub(torch.tensor(a), 3.0))
    ms = [rand(3, 4), rand(4, 2, seed=1), rand(2, 5, seed=2)]
    close(minifw.chain_matmul(*map(t, ms)), torch.chain_matmul(*map(torch.tensor, ms)))


# ---- linear algebra under the older names ---------------------------------------------------

def _spd(n, seed=0):
    a = rand(n, n, seed=seed)
    return a @ a.T + n * np.eye(n)


def test_older_linalg_names_match_torch(torch):
    a = _spd(4)
    T = torch.tensor
    for upper in (False, True):
        L = minifw.cholesky(t(a), upper)
        close(L, torch.cholesky(T(a), upper) if hasattr(torch, "cholesky") else
              torch.linalg.cholesky(T(a), upper=upper))
        b = rand(4, 3, seed=1)
        close(minifw.cholesky_solve(t(b), L, upper), torch.cholesky_solve(T(b), T(L.numpy()), upper))
        close(minifw.cholesky_inverse(L, upper), torch.cholesky_inverse(T(L.numpy()), upper),
              rtol=1e-9, atol=1e-12)
    tri = np.triu(rand(4, 4, seed=2)) + 4 * np.eye(4)
    b = rand(4, 2, seed=3)
    for upper in (True, False):
        m = tri if upper else tri.T
        for transpose in (False, True):
            got = minifw.triangular_solve(t(b), t(m), upper, transpose)
            want = torch.triangular_solve(T(b), T(m), upper, transpose)
            close(got.solution, want.solution, rtol=1e-9, atol=1e-12)
            close(got[1], m)
    x = rand(3, 5)
    close(minifw.nuclear_norm(t(x)), torch.nuclear_norm(T(x)))
    close(minifw.frobenius_norm(t(x)), torch.linalg.matrix_norm(T(x)))
    u, s, v = minifw.svd_lowrank(t(x), q=2)
    close(s, torch.linalg.svdvals(T(x))[:2])
    close((u * s.unsqueeze(0)) @ v.mT, (torch.linalg.svd(T(x), full_matrices=False).U[:, :2] *
                                         torch.linalg.svdvals(T(x))[:2]) @
          torch.linalg.svd(T(x), full_matrices=False).Vh[:2])
    u, s, v = minifw.pca_lowrank(t(x), q=2)
    centered = x - x.mean(0, keepdims=True)
    close(s, np.linalg.svd(centered, compute_uv=False)[:2])


def test_cholesky_solve_gradient():
    a = _spd(3)
    check_gradients(lambda b, m: minifw.cholesky_solve(b, minifw.cholesky(m @ m.mT)),
                    [rand(3, 2), np.linalg.cholesky(a)])


# ---- switches ---------------------------------------------------------------------------

def test_compile_returns_what_it_is_given():
    model = minifw.nn.Linear(2, 3)
    assert minifw.compile(model) is model
    assert minifw.compile(model, mode="reduce-overhead", fullgraph=True) is model

    @minifw.compile
    def f(x):
        return x * 2

    @minifw.compile(dynamic=True)
    def g(x):
        return x + 1
    assert f(minifw.ones(1)).item() == 2 and g(minifw.ones(1)).item() == 2
    with pytest.raises(TypeError, match="compile: model must be a Module or a function"):
        minifw.compile(3)


def test_thread_and_debug_switches():
    assert minifw.get_num_interop_threads() >= 1
    minifw.set_num_interop_threads(2)
    assert minifw.get_num_interop_threads() == 2
    minifw.set_num_interop_threads(1)
    with pytest.raises(ValueError, match="set_num_interop_threads: n must be >= 1"):
        minifw.set_num_interop_threads(0)
    assert minifw.set_flush_denormal(True) is False
    try:
        for mode, value in (("warn", 1), ("error", 2), (0, 0), (1, 1)):
            minifw.set_deterministic_debug_mode(mode)
            assert minifw.get_deterministic_debug_mode() == value
            assert minifw.are_deterministic_algorithms_enabled() == (value > 0)
    finally:
        minifw.set_deterministic_debug_mode(0)
    with pytest.raises(ValueError, match="set_deterministic_debug_mode: debug_mode must be"):
        minifw.set_deterministic_debug_mode("loud")
    assert minifw.get_default_device() == minifw.device("cpu")
    minifw.set_default_device("cpu")
    minifw.set_default_device(None)
    with pytest.raises(ValueError, match="set_default_device: minifw creates tensors on the CPU"):
        minifw.set_default_device("cudasim")


def test_backend_modules_import_and_answer():
    import importlib
    cudnn = importlib.import_module("minifw.backends.cudnn")
    assert cudnn is minifw.backends.cudnn
    assert cudnn.is_available() is False and cudnn.version() is None
    assert cudnn.enabled is True
    cudnn.enabled = False
    try:
        assert cudnn.enabled is False
    finally:
        cudnn.enabled = True
    with pytest.raises(TypeError, match="minifw.backends.cudnn.enabled must be a bool"):
        cudnn.enabled = 1
    with pytest.raises(AttributeError, match="has no setting 'benchmrk'"):
        cudnn.benchmrk = True
    for name in ("mps", "mkldnn"):
        backend = importlib.import_module(f"minifw.backends.{name}")
        assert backend.is_available() is False and backend.is_built() is False
    assert importlib.import_module("minifw.backends.openmp").is_available() is True
    assert minifw.backends.cuda.is_built() == bool(minifw._native.has_cuda)


@pytest.fixture
def print_options():
    from minifw.tensor import _PRINT_OPTIONS
    saved = dict(_PRINT_OPTIONS)
    yield
    _PRINT_OPTIONS.update(saved)


def test_set_printoptions(print_options):
    minifw.set_printoptions(precision=2)
    assert repr(minifw.tensor([1.23456, 2.5])) == "tensor([1.23, 2.50])"
    minifw.set_printoptions(threshold=5)
    assert repr(minifw.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    minifw.set_printoptions(edgeitems=1)
    assert repr(minifw.arange(10)) == "tensor([0,  ..., 9])"
    minifw.set_printoptions(threshold=math.inf)
    assert "..." not in repr(minifw.arange(3000))
    minifw.set_printoptions(sci_mode=True, precision=1)
    assert repr(minifw.tensor([1.5, 200.0])) == "tensor([1.5e+00, 2.0e+02])"
    minifw.set_printoptions(sci_mode=False, precision=3)
    assert repr(minifw.tensor([1.5, 2e-5])) == "tensor([1.500, 0.000])"
    minifw.set_printoptions(profile="short")
    assert repr(minifw.tensor([1.23456])) == "tensor([1.23])"
    minifw.set_printoptions(profile="default")
    assert repr(minifw.tensor([1.23456])) == "tensor([1.2346])"
    minifw.set_printoptions(linewidth=20)
    assert max(map(len, repr(minifw.arange(12.0)).splitlines())) <= 22
    with pytest.raises(ValueError, match="set_printoptions: profile must be"):
        minifw.set_printoptions(profile="long")
    with pytest.raises(TypeError, match="set_printoptions: precision must be an int"):
        minifw.set_printoptions(precision=2.5)


def test_method_forms_under_the_torch_namespace(torch):
    a, b = rand(3, 4), rand(3, 4, seed=1)
    T = torch.tensor
    for name in ("fmax", "fmin", "logaddexp2", "nextafter", "dist"):
        close(getattr(minifw, name)(t(a), t(b)), getattr(torch, name)(T(a), T(b)))
    for name in ("i0", "msort", "t", "cov", "corrcoef", "fix", "diagflat", "detach"):
        close(getattr(minifw, name)(t(a)), getattr(torch, name)(T(a)))
    close(minifw.polygamma(2, t(np.abs(a) + 0.5)), torch.polygamma(2, T(np.abs(a) + 0.5)))
    close(minifw.mvlgamma(t(np.abs(a) + 2), 2), torch.mvlgamma(T(np.abs(a) + 2), 2))
    close(minifw.mv(t(a), t(b[0])), torch.mv(T(a), T(b[0])))
    close(minifw.fill(t(a), 2.0), torch.fill(T(a), 2.0))
    for name in ("exp_", "abs_", "sigmoid_", "square_", "zero_", "neg_", "trunc_"):
        x, y = t(a), T(a)
        assert getattr(minifw, name)(x) is x
        getattr(torch, name)(y)
        close(x, y)
    x = t(a)
    minifw.clamp_(x, -0.2, 0.3)
    close(x, np.clip(a, -0.2, 0.3))
    with pytest.raises(TypeError, match="polygamma: input must be a Tensor"):
        minifw.polygamma(t(a), 1)


def test_bernoulli_gives_zero_gradients_to_its_probabilities():
    p = minifw.full((5,), 0.5, requires_grad=True)
    minifw.manual_seed(0)
    draw = minifw.bernoulli(p)
    assert draw.requires_grad
    draw.sum().backward()
    assert (p.grad.numpy() == 0).all()


def test_angle_of_a_0d_tensor_and_on_cudasim():
    assert minifw.angle(minifw.tensor(-1.0)).item() == pytest.approx(math.pi)
    out = minifw.angle(minifw.tensor([-1.0, 2.0], device="cudasim"))
    assert out.device == minifw.device("cudasim")
    assert out.cpu().numpy().tolist() == pytest.approx([math.pi, 0.0])


def test_range_refuses_a_step_away_from_end_and_warn_always_switches_back():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="range: step must be nonzero and lead from start"):
            minifw.range(0, -1, 1)
        assert minifw.range(2, 2).numpy().tolist() == [2.0]
    before = list(warnings.filters)
    try:
        minifw.set_warn_always(True)
        assert minifw.is_warn_always_enabled() and warnings.filters[0][0] == "always"
        minifw.set_warn_always(False)
        assert not minifw.is_warn_always_enabled() and warnings.filters[0][0] == "default"
    finally:
        warnings.filters[:] = before


def test_dlpack_shares_memory_both_ways_with_numpy():
    a = np.arange(6.0).reshape(2, 3)
    t_ = minifw.from_dlpack(a)
    t_[0, 0] = 10.0
    assert a[0, 0] == 10.0 and t_.dtype == F64
    x = minifw.ones(2, 3)
    b = np.from_dlpack(x)
    b[1, 1] = 7.0
    assert x[1, 1].item() == 7.0
    c = minifw.from_dlpack(a, copy=True)
    c[0, 1] = -1.0
    assert a[0, 1] == 1.0
    assert minifw.from_dlpack(a, device="cudasim").device == minifw.device("cudasim")
    assert minifw.to_dlpack(x).__class__.__name__ == "PyCapsule"
    with pytest.raises(RuntimeError, match="can't export a tensor that requires grad"):
        minifw.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="device 'cudasim' has no DLPack device"):
        np.from_dlpack(minifw.ones(2, device="cudasim"))
    with pytest.raises(TypeError, match="from_dlpack: minifw's tensors are float32"):
        minifw.from_dlpack(np.ones(2, np.float16))
    with pytest.raises(TypeError, match="from_dlpack: ext_tensor must have a __dlpack__"):
        minifw.from_dlpack([1.0])


def test_dlpack_with_torch(torch):
    t_ = torch.arange(6.0).reshape(2, 3)
    m = minifw.from_dlpack(t_)
    m[0, 0] = 10.0
    assert t_[0, 0].item() == 10.0
    x = minifw.ones(2, 3, dtype=F64)
    y = torch.from_dlpack(x)
    y[0, 2] = 5.0
    assert x[0, 2].item() == 5.0 and y.dtype == torch.float64


def test_real_tensors_complex_methods_and_more_aten_forms(torch):
    x = minifw.tensor([-1.5, 0.0, 2.0])
    assert x.real is x and x.conj() is x and x.resolve_conj() is x and x.conj_physical() is x
    assert x.isreal().numpy().all() and minifw.isreal(x).dtype == minifw.bool
    close(x.angle(), torch.tensor([-1.5, 0.0, 2.0]).angle())
    with pytest.raises(TypeError, match="imag: minifw has no complex dtypes"):
        x.imag
    m = rand(4, 4)
    m[3] = m[0] + m[1]
    assert minifw.matrix_rank(t(m)).item() == torch.linalg.matrix_rank(torch.tensor(m)).item() == 3
    close(minifw.constant_pad_nd(t(rand(2, 3)), (1, 2), 0.5),
          torch.constant_pad_nd(torch.tensor(rand(2, 3)), (1, 2), 0.5))
    a, w = rand(1, 2, 6, 6), rand(4, 2, 3, 3, seed=1)
    for transposed in (False, True):
        weight = w if not transposed else rand(2, 4, 3, 3, seed=2)
        close(minifw.convolution(t(a), t(weight), None, (2, 2), (1, 1), (1, 1), transposed, (1, 1) if transposed else (0, 0), 1),
              torch.convolution(torch.tensor(a), torch.tensor(weight), None, (2, 2), (1, 1), (1, 1),
                                transposed, (1, 1) if transposed else (0, 0), 1))
    v = t(np.arange(7.0))
    assert [p.numpy().tolist() for p in minifw.unsafe_split(v, 3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(v.unsafe_chunk(2)) == 2 and len(minifw.unsafe_split_with_sizes(v, [2, 5])) == 2


def test_fill_is_recorded_when_its_operands_require_grad():
    # zero gradient to input, the sum of the result's gradient to a tensor value, as PyTorch's
    x = minifw.tensor([1.0, 2.0, 4.0], requires_grad=True)
    v = minifw.tensor(3.0, dtype=minifw.float64, requires_grad=True)
    y = minifw.fill(x, v)
    assert y.requires_grad and y.dtype == minifw.float32 and y.tolist() == [3.0, 3.0, 3.0]
    (y * minifw.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and v.grad.item() == 6.0
    assert minifw.fill(x, 2.5).requires_grad and minifw.fill(x.detach(), v).requires_grad
    assert not minifw.fill(x.detach(), 2.5).requires_grad
    with minifw.no_grad():
        assert not minifw.fill(x, v).requires_grad
    assert minifw.fill(minifw.tensor([1, 2]), 2.7).tolist() == [2, 2]
