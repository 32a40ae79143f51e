"""The nn.functional operations that close the gap with torch.nn.functional: the with-indices
poolings, max unpooling, power-average (LP) and fractional max pooling, the in-place and
randomized activations, alpha dropout, gumbel_softmax, the multi-class / multi-label margin
losses, the triplet loss with any distance, pairwise_distance and pdist.

Every differentiable one: gradients against float64 finite differences; values and gradients
against PyTorch's (when installed) in float64. The random ones are compared in their
deterministic part (fractional pooling with given _random_samples, rrelu in evaluation) and
tested statistically otherwise."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from gradcheck import gradcheck

TOL64 = dict(rtol=1e-10, atol=1e-12)  # float64 against PyTorch: the same formulas, a few ulp


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(shape, seed=0, low=-1.0, high=1.0):
    return minifw.tensor(rand(shape, seed, low, high), dtype=minifw.float64, requires_grad=True)


def samples(shape, seed=3):
    return np.random.default_rng(seed).random(shape)


def distinct(shape, seed=0):
    """Values far enough apart that no finite-difference step reorders a max."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 7.0 - 1.0


class Const(np.ndarray):
    """A float input that is a constant (no gradient asked): multi_margin_loss's weight."""


# name: (function of (F, tensors...), the input arrays). Each function is called with F =
# minifw.nn.functional or torch.nn.functional and the arrays as that library's tensors: float
# ones require grad (unless Const), integer ones (indices, targets) are constants.


def _unpool(n, shape, output_size=None):
    x = minifw.tensor(distinct(shape))
    y, idx = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
    return y.numpy(), idx.numpy(), output_size


CASES = {
    "max_unpool1d": (lambda F, x, i: F.max_unpool1d(x, i, 2, output_size=[7]), _unpool(1, (2, 3, 7))),
    "max_unpool2d": (lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=(5, 7)), _unpool(2, (2, 2, 5, 7))),
    "max_unpool2d_stride": (lambda F, x, i: F.max_unpool2d(x, i, 2, stride=2, padding=0),
                            _unpool(2, (1, 2, 4, 6))),
    "max_unpool3d": (lambda F, x, i: F.max_unpool3d(x, i, 2, output_size=(1, 2, 5, 4, 5)),
                     _unpool(3, (1, 2, 5, 4, 5))),
    "lp_pool1d_p2": (lambda F, x: F.lp_pool1d(x, 2.0, 3, 2, ceil_mode=True), (rand((2, 3, 8), 1, 0.2, 2.0),)),
    "lp_pool2d_p3": (lambda F, x: F.lp_pool2d(x, 3.0, (2, 3), 2), (rand((2, 2, 6, 7), 2, 0.2, 2.0),)),
    "lp_pool2d_p1": (lambda F, x: F.lp_pool2d(x, 1.0, 2), (rand((1, 2, 4, 4), 3, 0.2, 2.0),)),
    "lp_pool3d_p2": (lambda F, x: F.lp_pool3d(x, 2.0, 2, (1, 2, 2)), (rand((1, 2, 4, 5, 4), 4, 0.2, 2.0),)),
    "fractional_max_pool2d": (
        lambda F, x, s: F.fractional_max_pool2d(x, (2, 3), output_size=(4, 3), _random_samples=s),
        (distinct((2, 3, 7, 8)), samples((2, 3, 2)).view(Const))),
    "fractional_max_pool2d_ratio": (
        lambda F, x, s: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.6), _random_samples=s),
        (distinct((1, 2, 9, 10), 1), samples((1, 2, 2), 4).view(Const))),
    "fractional_max_pool3d": (
        lambda F, x, s: F.fractional_max_pool3d(x, (2, 2, 3), output_size=(2, 3, 3), _random_samples=s),
        (distinct((1, 2, 5, 6, 7), 2), samples((1, 2, 3), 5).view(Const))),
    "rrelu_eval": (lambda F, x: F.rrelu(x, 0.1, 0.4), (rand((3, 5), 5),)),
    "multi_margin_p1": (lambda F, x, t: F.multi_margin_loss(x, t), (rand((4, 5), 6), np.array([0, 3, 4, 1]))),
    "multi_margin_p2_weight": (
        lambda F, x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.7, weight=w, reduction="sum"),
        (rand((4, 5), 7), np.array([2, 3, 0, 1]), rand((5,), 8, 0.1, 1.0).view(Const))),
    "multi_margin_1d": (lambda F, x, t: F.multi_margin_loss(x, t, reduction="none"), (rand((5,), 9), np.array(2))),
    "multilabel_margin": (
        lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="none"),
        (rand((4, 5), 10), np.array([[3, 0, -1, 1, 2], [1, 1, -1, -1, -1], [-1, 2, 3, 0, 0], [4, 3, 2, 1, 0]]))),
    "multilabel_margin_1d": (lambda F, x, t: F.multilabel_margin_loss(x, t),
                             (rand((5,), 11), np.array([4, 0, -1, 2, 2]))),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True),
                          (rand((4, 5), 12), rand((4, 5), 13))),
    "pairwise_distance_broadcast": (lambda F, a, b: F.pairwise_distance(a, b), (rand((4, 5), 14), rand((5,), 15))),
    "pdist_p2": (lambda F, x: F.pdist(x), (rand((5, 3), 16),)),
    "pdist_p1": (lambda F, x: F.pdist(x, 1), (rand((4, 3), 17),)),
    "pdist_inf": (lambda F, x: F.pdist(x, float("inf")), (rand((5, 3), 24),)),
    "pdist_one_row": (lambda F, x: F.pdist(x), (rand((1, 3), 25),)),
    "pairwise_distance_inf": (lambda F, a, b: F.pairwise_distance(a, b, p=float("inf")),
                              (rand((4, 5), 26), rand((4, 5), 27))),
    "triplet_with_distance": (
        lambda F, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True, margin=0.5),
        (rand((4, 5), 18), rand((4, 5), 19), rand((4, 5), 20))),
    "triplet_with_cosine_distance": (
        lambda F, a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), reduction="none"),
        (rand((4, 5), 21), rand((4, 5), 22), rand((4, 5), 23))),
}


def _is_float(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f" and not isinstance(a, Const)


def _call(lib, name, torch=None):
    """(output, [gradients of the float inputs]) of CASES[name] in float64 with library `lib`."""
    fn, arrays = CASES[name]
    arrays = [a for a in arrays if a is not None]
    if torch is None:
        args = [minifw.tensor(a, dtype=minifw.float64, requires_grad=True) if _is_float(a)
                else minifw.tensor(np.asarray(a)) for a in arrays]
    else:
        args = [torch.tensor(a, dtype=torch.float64, requires_grad=True) if _is_float(a)
                else torch.tensor(np.asarray(a)) for a in arrays]
    out = fn(lib, *args)
    g = rand(tuple(out.shape), 99)
    if torch is None:
        out.backward(minifw.tensor(g))
    else:
        out.backward(torch.tensor(g))
    return out.detach().numpy(), [a.grad.numpy() for a, arr in zip(args, arrays) if _is_float(arr)]


@pytest.mark.parametrize("name", CASES)
def test_gradients_match_finite_differences(name):
    fn, arrays = CASES[name]
    arrays = [a for a in arrays if a is not None]
    inputs = [minifw.tensor(a, dtype=minifw.float64, requires_grad=True) if _is_float(a)
              else minifw.tensor(np.asarray(a)) for a in arrays]
    gradcheck(lambda *xs: fn(F, *xs), inputs)


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    got, got_grads = _call(F, name)
    want, want_grads = _call(torch.nn.functional, name, torch)
    np.testing.assert_allclose(got, want, **TOL64, err_msg=f"{name}: value")
    for i, (a, b) in enumerate(zip(got_grads, want_grads)):
        np.testing.assert_allclose(a, b, **TOL64, err_msg=f"{name}: gradient {i}")


# ---- pooling with indices, unpooling, fractional pooling ------------------------------------------

@pytest.mark.parametrize("n, shape", [(1, (2, 3, 9)), (2, (2, 3, 6, 7)), (3, (1, 2, 4, 5, 6))])
def test_with_indices_forms_equal_return_indices(n, shape):
    x = minifw.tensor(rand(shape, n))
    for name, args in ((f"max_pool{n}d", (3, 2, 1)), (f"adaptive_max_pool{n}d", (2,))):
        want = getattr(F, name)(x, *args, return_indices=True)
        got = getattr(F, f"{name}_with_indices")(x, *args)  # return_indices=False: a pair still
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_unpooling_inverts_pooling_at_the_maxima():
    x = minifw.tensor(distinct((2, 3, 6, 8)))
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    u = F.max_unpool2d(y, idx, 2)
    back = F.max_pool2d(u, 2)  # the maxima are where they were, everything else zero
    np.testing.assert_array_equal(back.numpy(), np.maximum(y.numpy(), 0))
    kept = u.numpy() != 0
    np.testing.assert_array_equal(u.numpy()[kept], x.numpy()[kept])
    # unbatched input, and output_size with the (N, C) dims
    u3 = F.max_unpool2d(y[0], idx[0], 2, output_size=(3, 6, 8))
    np.testing.assert_array_equal(u3.numpy(), u.numpy()[0])


def test_unpooling_refuses_bad_indices_and_sizes():
    y, idx = F.max_pool1d(minifw.tensor(rand((1, 2, 8))), 2, return_indices=True)
    with pytest.raises(ValueError, match="max_unpool1d: output_size"):
        F.max_unpool1d(y, idx, 2, output_size=(12,))
    with pytest.raises(ValueError, match="max_unpool1d: indices must lie in"):
        F.max_unpool1d(y, idx + 8, 2)
    with pytest.raises(TypeError, match="max_unpool1d: indices must hold int64"):
        F.max_unpool1d(y, idx.float(), 2)
    with pytest.raises(ValueError, match="max_unpool1d: indices must have the input's shape"):
        F.max_unpool1d(y, idx[:, :1], 2)


def test_fractional_pooling_draws_from_minifws_generator():
    x = minifw.tensor(distinct((2, 3, 11, 13)))
    minifw.manual_seed(4)
    a, ia = F.fractional_max_pool2d(x, 2, output_size=5, return_indices=True)
    minifw.manual_seed(4)
    b, ib = F.fractional_max_pool2d(x, 2, output_size=5, return_indices=True)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    draws = {tuple(F.fractional_max_pool2d(x, 2, output_size=5, return_indices=True)[1].numpy().ravel())
             for _ in range(10)}
    assert len(draws) > 1  # the windows move from draw to draw
    # every window lies inside the input, and each output is the max of its own 2x2 window
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, ia.numpy().reshape(2, 3, -1), 2).ravel(),
                                  a.numpy().ravel())
    rows, cols = np.divmod(ia.numpy(), 13)
    assert rows.max() <= 10 and cols.max() <= 12


def test_fractional_pooling_window_starts_cover_the_input_evenly():
    """Starts step by floor or ceil of (in - k) / (out - 1); the last window ends at the end."""
    for u in np.linspace(0, 0.99, 23):
        s = minifw.tensor(np.full((1, 1, 2), u))
        x = minifw.tensor(np.arange(17, dtype=np.float64).reshape(1, 1, 1, 17))  # increasing: max at the end
        y = F.fractional_max_pool2d(x, (1, 3), output_size=(1, 6), _random_samples=s).numpy().ravel()
        starts = y - 2
        assert starts[0] >= 0 and starts[-1] == 14
        assert set(np.diff(starts)) <= {2.0, 3.0}


def test_fractional_pooling_refuses_bad_arguments():
    x = minifw.tensor(rand((1, 2, 6, 6)))
    with pytest.raises(ValueError, match="fractional_max_pool2d: give output_size or output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match="output_ratio must lie in"):
        F.fractional_max_pool2d(x, 2, output_ratio=1.5)
    with pytest.raises(ValueError, match="needs an input of at least"):
        F.fractional_max_pool2d(x, 3, output_size=5)
    with pytest.raises(ValueError, match="_random_samples must have shape"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=minifw.tensor(np.zeros((1, 2, 3))))


# ---- activations ---------------------------------------------------------------------------------

IN_PLACE = [("relu_", {}), ("elu_", {"alpha": 0.5}), ("leaky_relu_", {"negative_slope": 0.2}),
            ("celu_", {"alpha": 0.7}), ("selu_", {}), ("hardtanh_", {"min_val": -0.4, "max_val": 0.6}),
            ("threshold_", {"threshold": 0.1, "value": -2.0}), ("rrelu_", {"lower": 0.2, "upper": 0.3})]


@pytest.mark.parametrize("name, kwargs", IN_PLACE, ids=[n for n, _ in IN_PLACE])
def test_in_place_activations_write_over_their_input(name, kwargs):
    x = rand((3, 4), 1)
    base = name.rstrip("_")
    want = getattr(F, base)(minifw.tensor(x), **kwargs).numpy()
    t = minifw.tensor(x)
    assert getattr(F, name)(t, **kwargs) is t
    np.testing.assert_array_equal(t.numpy(), want)
    # recorded by autograd: the gradient through the overwritten tensor is the activation's
    leaf = t64((3, 4), 2)
    y = leaf.clone()
    getattr(F, name)(y, **kwargs)
    y.sum().backward()
    leaf2 = t64((3, 4), 2)
    getattr(F, base)(leaf2, **kwargs).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), leaf2.grad.numpy(), rtol=1e-12)
    torch = pytest.importorskip("torch")
    tt = torch.tensor(x)
    getattr(torch.nn.functional, name)(tt, **kwargs)
    np.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-12, atol=1e-15)


def test_rrelu_training_draws_one_slope_per_negative_element():
    x = minifw.tensor(-np.ones((200, 500)), requires_grad=True)
    minifw.manual_seed(1)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3
    # U(0.1, 0.3): mean 0.2, standard deviation 0.2 / sqrt(12); 1e5 draws
    assert abs(slopes.mean() - 0.2) < 5 * 0.2 / np.sqrt(12) / np.sqrt(slopes.size)
    assert abs(slopes.std() - 0.2 / np.sqrt(12)) < 1e-3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)  # the gradient is the drawn slope
    positive = minifw.tensor(np.abs(rand((10,))) + 0.1)
    np.testing.assert_array_equal(F.rrelu(positive, training=True).numpy(), positive.numpy())
    minifw.manual_seed(1)
    again = F.rrelu(minifw.tensor(-np.ones((200, 500))), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.numpy(), y.detach().numpy())


def test_rrelu_training_gradient_matches_finite_differences_for_a_fixed_draw():
    def seeded(x):
        minifw.manual_seed(7)
        return F.rrelu(x, 0.1, 0.5, training=True)
    gradcheck(seeded, [t64((3, 5), 3)])


def test_gumbel_softmax_samples_the_categorical_distribution():
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    x = minifw.tensor(np.tile(logits, (20000, 1)))
    minifw.manual_seed(0)
    hard = F.gumbel_softmax(x, tau=0.5, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0}
    np.testing.assert_array_equal(hard.sum(1), 1.0)
    # the Gumbel-max trick: argmax(logits + g) ~ Categorical(softmax(logits)); 2e4 draws, 5 sigma
    freq = hard.mean(0)
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=5 * np.sqrt(0.25 / 20000))
    soft = F.gumbel_softmax(x, tau=2.0).numpy()
    np.testing.assert_allclose(soft.sum(1), 1.0, rtol=1e-12)


def test_gumbel_softmax_hard_passes_the_soft_gradient_straight_through():
    def sample(x, hard):
        minifw.manual_seed(3)
        return F.gumbel_softmax(x, tau=0.7, hard=hard, dim=0)
    x1, x2 = t64((4, 3)), t64((4, 3))
    g = minifw.tensor(rand((4, 3), 5))
    (sample(x1, True) * g).sum().backward()
    (sample(x2, False) * g).sum().backward()
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(sample(x1, True).detach().numpy().sum(0), 1.0)
    gradcheck(lambda x: sample(x, False), [t64((4, 3), 1)])


def test_gumbel_softmax_hard_over_an_empty_dim_is_refused_by_name():
    # PyTorch: IndexError from the argmax ("max(): Expected reduction dim 1 to have non-zero size")
    with pytest.raises(IndexError, match=r"gumbel_softmax: hard=True takes the argmax along dim 1, which "
                                         r"has size 0"):
        F.gumbel_softmax(minifw.zeros(2, 0), hard=True)
    assert F.gumbel_softmax(minifw.zeros(2, 0)).shape == (2, 0)  # the soft sample is just empty


@pytest.mark.parametrize("name, shape", [("alpha_dropout", (400, 500)),
                                         ("feature_alpha_dropout", (400, 500, 3))])
def test_alpha_dropout_keeps_mean_and_variance(name, shape):
    x = minifw.tensor(np.random.default_rng(0).standard_normal(shape))
    minifw.manual_seed(2)
    y = getattr(F, name)(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1.0) < 0.01
    # the dropped elements all hold a * alpha' + b, which the affine map gives to -scale * alpha
    a = ((1 - 0.3) * (1 + 0.3 * 1.7580993408473766 ** 2)) ** -0.5
    dropped = a * -1.7580993408473766 + a * 1.7580993408473766 * 0.3
    is_dropped = np.isclose(y, dropped, rtol=0, atol=1e-12)
    frac = is_dropped.mean()
    assert abs(frac - 0.3) < 0.01
    if name == "feature_alpha_dropout":  # whole channels: constant along the last dim
        assert (is_dropped.all(-1) == is_dropped.any(-1)).all()
    assert getattr(F, name)(x, 0.3, training=False) is x  # evaluation: the input itself
    np.testing.assert_array_equal(getattr(F, name)(x, 1.0, training=True).numpy(), 0.0)


def test_alpha_dropout_gradient_matches_finite_differences_for_a_fixed_mask():
    def seeded(x):
        minifw.manual_seed(5)
        return F.alpha_dropout(x, 0.4, training=True)
    gradcheck(seeded, [t64((3, 6))])
    gradcheck(lambda x: (minifw.manual_seed(5), F.feature_alpha_dropout(x, 0.4, True))[1], [t64((3, 4, 2))])


def test_native_channel_shuffle_is_channel_shuffle():
    x = minifw.tensor(rand((2, 6, 3)))
    np.testing.assert_array_equal(F.native_channel_shuffle(x, 3).numpy(), F.channel_shuffle(x, 3).numpy())


# ---- losses --------------------------------------------------------------------------------------

def test_margin_losses_refuse_bad_targets_by_name():
    x = minifw.tensor(rand((2, 3)))
    with pytest.raises(ValueError, match="multi_margin_loss: target holds class indices"):
        F.multi_margin_loss(x, minifw.tensor([0, 3]))
    with pytest.raises(ValueError, match="multi_margin_loss: p must be 1 or 2"):
        F.multi_margin_loss(x, minifw.tensor([0, 1]), p=3)
    with pytest.raises(ValueError, match="multilabel_margin_loss: target must hold class indices"):
        F.multilabel_margin_loss(x, minifw.tensor([[0, 3, -1], [1, -1, 0]]))
    with pytest.raises(ValueError, match="multilabel_margin_loss: target must have the input's shape"):
        F.multilabel_margin_loss(x, minifw.tensor([0, 1]))
    with pytest.raises(TypeError, match="triplet_margin_with_distance_loss: distance_function"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function=3)
    with pytest.raises(TypeError, match="triplet_margin_with_distance_loss: distance_function must "
                                        r"return a minifw.Tensor, got float for d\(anchor, positive\)"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function=lambda a, b: 3.0)
    with pytest.raises(ValueError, match="triplet_margin_with_distance_loss: the distances "
                                         r"distance_function returned do not broadcast.*\(2, 3\)"):
        F.triplet_margin_with_distance_loss(x, x, x + 1, distance_function=lambda a, b: (
            (a - b).sum(1) if a is b else a - b))


def test_multi_margin_loss_equals_its_definition():
    x, t = rand((3, 4), 2), np.array([1, 0, 3])
    want = [sum(max(0.0, 1.0 - x[n, t[n]] + x[n, j]) for j in range(4) if j != t[n]) / 4 for n in range(3)]
    got = F.multi_margin_loss(minifw.tensor(x), minifw.tensor(t), reduction="none").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_pdist_is_the_upper_triangle_of_cdist():
    x = minifw.tensor(rand((6, 4), 3))
    d = minifw.cdist(x, x, 1.5).numpy()
    np.testing.assert_allclose(F.pdist(x, 1.5).numpy(), d[np.triu_indices(6, 1)], rtol=1e-12)
    assert F.pdist(minifw.tensor(rand((1, 4)))).shape == (0,)


def test_distances_take_p_inf_the_largest_absolute_difference():
    a, b = rand((4, 5), 1), rand((4, 5), 2)
    inf = float("inf")
    np.testing.assert_allclose(F.pairwise_distance(minifw.tensor(a), minifw.tensor(b), p=inf).numpy(),
                               np.abs(a - b + 1e-6).max(1), rtol=1e-13)
    np.testing.assert_allclose(minifw.nn.PairwiseDistance(p=inf)(minifw.tensor(a), minifw.tensor(b)).numpy(),
                               np.abs(a - b + 1e-6).max(1), rtol=1e-13)
    i, j = np.triu_indices(4, 1)
    np.testing.assert_allclose(F.pdist(minifw.tensor(a), inf).numpy(), np.abs(a[i] - a[j]).max(1), rtol=1e-13)
    for call in (lambda p: F.pdist(minifw.tensor(a), p), lambda p: F.pairwise_distance(minifw.tensor(a), minifw.tensor(b), p)):
        with pytest.raises(ValueError, match="p must be"):
            call(float("nan"))
        with pytest.raises(ValueError, match="p must be >= 0"):
            call(-1.0)


def test_pdist_of_fewer_than_two_rows_stays_in_the_graph():
    for n in (0, 1):
        x = minifw.tensor(rand((n, 3)), requires_grad=True)
        out = F.pdist(x)
        assert out.shape == (0,) and out.requires_grad
        out.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((n, 3)))
