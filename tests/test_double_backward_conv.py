"""Second derivatives (create_graph=True) of convolution, pooling and dropout.

gradgradcheck (tests/gradcheck.py: float64 central differences of first-order gradients)
on conv2d / conv_transpose2d / conv1d with odd sizes, a batch of one, stride, padding,
dilation, groups and output_padding, with and without bias; on max, average and adaptive
pooling (2-D and 1-D) and on seeded dropout; each on both engines. Third derivatives
through the filter gradient. A WGAN-GP gradient penalty (a small convolutional critic,
((|d critic / d x| - 1)^2), backward to the parameters) against PyTorch's, on the CPU and on
cudasim; and the engine a node ran forward on is the one its second derivatives use."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from gradcheck import gradgradcheck
from minifw.engines import caffe
from minifw.functions.convolution import (Convolution2D, ConvolutionFilterGradient,
                                          TransposedConvolution2D)
from minifw.functions.pooling import AveragePoolingGradient

ENGINES = ["primitives", "caffe"]


def t64(shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return minifw.tensor(rng.uniform(low, high, shape), dtype=minifw.float64, requires_grad=True)


def seeded(dropout):
    def fn(x, **kwargs):
        minifw.manual_seed(5)  # the same mask for every finite-difference evaluation
        return dropout(x, **kwargs)
    return fn


def gradient_of(fn, wrt):
    """(*inputs) -> the gradient of (fn(*inputs) ** 2).sum() in inputs[wrt], recorded: its
    gradgradcheck checks third derivatives of fn."""
    def gradient(*inputs):
        with minifw.enable_grad():  # gradgradcheck's finite differences run under no_grad
            return minifw.autograd.grad((fn(*inputs) ** 2).sum(), inputs[wrt], create_graph=True)[0]
    return gradient


# Every case multiplies by an input somewhere (a square), so that second derivatives in x are
# not all zero: a linear fn's vanish in x and would be checked in the gradient fed in only.
CASES = {
    "conv2d_bias_odd_sizes": (lambda x, w, b: F.conv2d(x, w, b) ** 2,
                              [(2, 3, 5, 7), (2, 3, 3, 2), (2,)]),
    "conv2d_batch_of_one_stride_pad_dilation": (lambda x, w: F.conv2d(x, w, None, (2, 3), (1, 2), (2, 1)) ** 2,
                                                [(1, 2, 7, 8), (3, 2, 2, 3)]),
    "conv2d_groups_stride_bias": (lambda x, w, b: F.conv2d(x, w, b, 2, 1, 1, 3) ** 2,
                                  [(1, 6, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_stride_leaves_rows": (lambda x, w: F.conv2d(x, w, stride=3) * F.conv2d(x, w, stride=3),
                                  [(1, 1, 8, 7), (2, 1, 2, 2)]),
    "conv_transpose2d_bias": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                                 output_padding=1) ** 2,
                              [(1, 2, 3, 2), (2, 3, 3, 3), (3,)]),
    "conv_transpose2d_groups_dilation": (lambda x, w: F.conv_transpose2d(x, w, None, (1, 2), (0, 1), 0, 2,
                                                                         (2, 1)) ** 2,
                                         [(2, 4, 3, 3), (4, 1, 2, 3)]),
    # output_padding >= stride (below dilation): the convolution of the output has more rows
    # than x, so x is zero-extended and its gradients cropped
    "conv_transpose2d_output_padding_beyond_stride": (lambda x, w: F.conv_transpose2d(
        x, w, None, 1, 0, (1, 0), 2, (2, 1)) ** 2, [(1, 2, 3, 3), (2, 1, 2, 2)]),
    "conv1d_stride_pad_dilation_bias": (lambda x, w, b: F.conv1d(x, w, b, 2, 1, 2) ** 2,
                                        [(2, 2, 9), (3, 2, 3), (3,)]),
    "conv1d_groups": (lambda x, w: F.conv1d(x, w, groups=2, padding=1) ** 2, [(1, 4, 6), (2, 2, 3)]),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, output_padding=1) ** 2,
                         [(1, 2, 4), (2, 2, 3), (2,)]),
    "max_pool2d_stride_pad_ceil": (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True) ** 2, [(1, 2, 6, 7)]),
    "max_pool2d_overlapping": (lambda x: F.max_pool2d(x, (3, 2), 1) ** 3, [(2, 1, 5, 4)]),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1) ** 2, [(2, 2, 7)]),
    "avg_pool2d_include_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1) ** 2, [(1, 2, 5, 6)]),
    "avg_pool2d_exclude_pad_ceil": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                           count_include_pad=False) ** 2, [(1, 2, 6, 7)]),
    "avg_pool1d_ceil": (lambda x: F.avg_pool1d(x, 2, ceil_mode=True, count_include_pad=False) ** 2,
                        [(2, 2, 5)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)) ** 2, [(1, 2, 5, 7)]),
    "adaptive_max_pool2d_overlapping": (lambda x: F.adaptive_max_pool2d(x, (3, 2)) ** 3, [(2, 1, 5, 5)]),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3) ** 2, [(2, 2, 7)]),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3) ** 2, [(2, 2, 7)]),
    "dropout": (lambda x: seeded(F.dropout)(x, p=0.4) ** 2, [(3, 5)]),
    "dropout_p_one": (lambda x: seeded(F.dropout)(x, p=1.0) * x, [(2, 3)]),
    "dropout2d": (lambda x: seeded(F.dropout2d)(x, p=0.4) ** 2, [(2, 4, 2, 3)]),
    "conv_pool_chain": (lambda x, w: F.avg_pool2d(F.max_pool2d(F.conv2d(x, w, padding=1), 2) ** 2, 2,
                                                  ceil_mode=True),
                        [(1, 2, 6, 5), (2, 2, 3, 3)]),
    # third derivatives: gradients of gradients, differentiated again
    "third_order_conv2d_filter": (gradient_of(lambda x, w: F.conv2d(x, w, None, 2, 1, 1, 2) ** 2, 1),
                                  [(1, 4, 5, 4), (2, 2, 3, 2)]),
    "third_order_conv2d_data": (gradient_of(lambda x, w: F.conv2d(x, w, stride=2, dilation=(1, 2)) ** 2, 0),
                                [(1, 2, 6, 6), (2, 2, 2, 2)]),
    "third_order_conv_transpose2d_output_padding_beyond_stride": (
        gradient_of(lambda x, w: F.conv_transpose2d(x, w, None, 1, 0, 1, 1, 2) ** 2, 1),
        [(1, 1, 3, 2), (1, 2, 2, 2)]),
    "third_order_avg_pool2d": (gradient_of(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False) ** 2, 0),
                               [(1, 1, 5, 6)]),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", CASES)
def test_second_derivatives_match_finite_differences(name, engine):
    fn, shapes = CASES[name]
    with minifw.engine(engine):
        gradgradcheck(fn, [t64(s, i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("function, case", [(Convolution2D, "conv2d_bias_odd_sizes"),
                                            (ConvolutionFilterGradient, "third_order_conv2d_filter")])
def test_a_wrong_derivative_is_caught(monkeypatch, function, case):
    """The checks above can fail: a backward_graph whose first gradient is off by a factor
    (the filter gradient's; for ConvolutionFilterGradient, a third derivative)."""
    backward_graph = function.backward_graph

    def off(ctx, g):
        grads = list(backward_graph(ctx, g))
        grads[1] = grads[1] * 1.001
        return tuple(grads)

    monkeypatch.setattr(function, "backward_graph", staticmethod(off))
    fn, shapes = CASES[case]
    with pytest.raises(AssertionError, match="gradgradcheck"):
        gradgradcheck(fn, [t64(s, i) for i, s in enumerate(shapes)])


# ---- the engine: the one the forward ran on ---------------------------------------------------

def _counting(monkeypatch, module, names):
    calls = {n: 0 for n in names}
    for n in names:
        def counted(*args, _n=n, _f=getattr(module, n), **kwargs):
            calls[_n] += 1
            return _f(*args, **kwargs)
        monkeypatch.setattr(module, n, counted)
    return calls


@pytest.mark.parametrize("current_at_backward", ENGINES)
def test_second_derivatives_run_on_the_engine_of_the_forward(monkeypatch, current_at_backward):
    names = ["conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter", "pool2d_forward",
             "pool2d_backward"]
    x, w = t64((1, 2, 6, 5)), t64((3, 2, 3, 3), 1)
    with minifw.engine("caffe"):
        y = F.avg_pool2d(F.conv2d(x, w, padding=1), 2, ceil_mode=True)
    calls = _counting(monkeypatch, caffe, names)
    with minifw.engine(current_at_backward):
        gx, gw = minifw.autograd.grad((y ** 2).sum(), [x, w], create_graph=True)
        (gx.sum() + (gw ** 2).sum()).backward()
    # first order: pooling's and the convolution's gradients; second: each of them again
    assert calls["pool2d_backward"] >= 2 and calls["pool2d_forward"] >= 1
    assert calls["conv2d_backward_data"] >= 2 and calls["conv2d_backward_filter"] >= 2
    assert calls["conv2d_forward"] >= 1
    assert x.grad is not None and w.grad is not None


def test_under_the_caffe_engine_second_derivatives_match_the_primitives():
    grads = {}
    for engine in ENGINES:
        x, w, b = t64((2, 4, 5, 6)), t64((4, 2, 3, 3), 1), t64((4,), 2)
        with minifw.engine(engine):
            y = F.max_pool2d(F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2), 2, ceil_mode=True)
            gx, gw = minifw.autograd.grad((y ** 2).sum(), [x, w], create_graph=True)
            ((gx ** 2).sum() + (gw ** 2).sum()).backward()
        grads[engine] = [t.grad.numpy() for t in (x, w, b)]
    for got, want in zip(grads["caffe"], grads["primitives"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---- a gradient penalty (WGAN-GP), against PyTorch -------------------------------------------

SHAPES = {"w1": (4, 3, 3, 3), "b1": (4,), "w2": (6, 2, 3, 3), "b2": (6,), "w3": (2, 6, 2, 2),
          "b3": (2,), "w4": (1, 8)}


def _critic(F, p, x):
    """A small convolutional critic: every operation here (conv with stride, padding, groups and
    dilation; both poolings; a transposed convolution; leaky_relu) must have second derivatives."""
    h = F.leaky_relu(F.conv2d(x, p["w1"], p["b1"], stride=2, padding=1), 0.2)
    h = F.max_pool2d(h, 2, stride=1, ceil_mode=True)
    h = F.leaky_relu(F.conv2d(h, p["w2"], p["b2"], padding=2, dilation=2, groups=2), 0.2)
    h = F.avg_pool2d(h, 3, 2, 1, count_include_pad=False)
    h = F.conv_transpose2d(h, p["w3"].transpose(0, 1), p["b3"], stride=2, output_padding=1)
    h = F.adaptive_avg_pool2d(h, (2, 2))
    return h.reshape(h.shape[0], -1) @ p["w4"].transpose(0, 1)


def _gradient_penalty(lib, F, p, real, fake, eps):
    x = (eps * real + (1 - eps) * fake).detach().requires_grad_(True)
    score = _critic(F, p, x)
    g, = lib.autograd.grad(score.sum(), x, create_graph=True)
    penalty = ((g.reshape(g.shape[0], -1).norm(2, dim=1) - 1) ** 2).mean()
    loss = score.mean() + 10.0 * penalty
    loss.backward()
    return loss.detach(), {k: v.grad for k, v in p.items()}


def _penalty_data(seed=0):
    rng = np.random.default_rng(seed)
    params = {k: rng.uniform(-0.5, 0.5, s) for k, s in SHAPES.items()}
    real, fake = rng.normal(size=(2, 3, 9, 8)), rng.normal(size=(2, 3, 9, 8))
    return params, real, fake, rng.uniform(size=(2, 1, 1, 1))


def minifw_penalty(device="cpu", seed=0):
    params, real, fake, eps = _penalty_data(seed)
    p = {k: minifw.tensor(v, dtype=minifw.float64, device=device, requires_grad=True) for k, v in params.items()}
    as_tensor = lambda a: minifw.tensor(a, dtype=minifw.float64, device=device)  # noqa: E731
    loss, grads = _gradient_penalty(minifw, F, p, as_tensor(real), as_tensor(fake), as_tensor(eps))
    assert all(g.grad_fn is None and g.device.type == device for g in grads.values())
    return loss.to("cpu").numpy(), {k: g.to("cpu").numpy() for k, g in grads.items()}


@pytest.mark.parametrize("engine", ENGINES)
def test_gradient_penalty_matches_pytorch(engine):
    torch = pytest.importorskip("torch")
    params, real, fake, eps = _penalty_data()
    p = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    want_loss, want = _gradient_penalty(torch, torch.nn.functional, p, torch.tensor(real),
                                        torch.tensor(fake), torch.tensor(eps))
    with minifw.engine(engine):
        loss, got = minifw_penalty()
    # float64 throughout; sums of a few hundred terms in different orders
    np.testing.assert_allclose(loss, want_loss.numpy(), rtol=1e-10)
    for k in SHAPES:
        assert np.abs(want[k].numpy()).max() > 1e-3, k  # the penalty reaches every parameter
        np.testing.assert_allclose(got[k], want[k].numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("engine", ENGINES)
def test_gradient_penalty_on_cudasim_matches_the_cpu(engine):
    with minifw.engine(engine):
        want_loss, want = minifw_penalty("cpu", seed=1)
        loss, got = minifw_penalty("cudasim", seed=1)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-10)
    for k in SHAPES:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_dropout_second_derivatives_on_cudasim_match_the_cpu():
    results = {}
    for device in ("cpu", "cudasim"):
        x = minifw.tensor(np.linspace(-1, 1, 24).reshape(2, 3, 4), dtype=minifw.float64, device=device,
                          requires_grad=True)
        minifw.manual_seed(3)
        y = F.dropout2d(F.dropout(x, 0.3), 0.5)
        g, = minifw.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        results[device] = x.grad.to("cpu").numpy()
    np.testing.assert_allclose(results["cudasim"], results["cpu"], rtol=1e-12)
    assert (results["cpu"] != 0).any()


def test_helper_functions_are_in_the_recorded_gradients():
    """The gradients recorded under create_graph=True are made of the Functions that make
    every order differentiable."""
    x, w = t64((1, 2, 5, 5)), t64((2, 2, 3, 3), 1)
    gx, gw = minifw.autograd.grad((F.avg_pool2d(F.conv2d(x, w), 2, ceil_mode=True) ** 2).sum(), [x, w],
                                  create_graph=True)
    assert gx.grad_fn.function is TransposedConvolution2D
    assert gw.grad_fn.function is ConvolutionFilterGradient
    p = t64((1, 1, 4, 4))
    gp, = minifw.autograd.grad((F.avg_pool2d(p, 2) ** 2).sum(), p, create_graph=True)
    assert gp.grad_fn.function is AveragePoolingGradient
