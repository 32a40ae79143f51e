"""The engine seam: every Function reaches its primitive through the current engine,
and the classic Caffe engine computes the same function as the primitives."""
import numpy as np
import pytest

import minifw
from minifw import engines, nn


@pytest.fixture(autouse=True)
def restore_engine():
    yield
    minifw.set_engine("primitives")


def test_switching_engines():
    assert minifw.get_engine() == "primitives" and engines.current_engine() is minifw.ops
    minifw.set_engine("caffe")
    assert minifw.get_engine() == "caffe" and engines.current_engine() is engines.caffe
    with minifw.engine("primitives"):
        assert minifw.get_engine() == "primitives"
    assert minifw.get_engine() == "caffe"
    with pytest.raises(ZeroDivisionError):
        with minifw.engine("primitives"):
            1 / 0
    assert minifw.get_engine() == "caffe"  # restored after an exception too


def test_unknown_engine():
    with pytest.raises(ValueError, match="set_engine: name must be one of 'primitives', 'caffe'; "
                                         "got 'cudnn'"):
        minifw.set_engine("cudnn")
    with pytest.raises(ValueError, match="got 'cudnn'"):
        with minifw.engine("cudnn"):
            pass
    assert minifw.get_engine() == "primitives"


def test_both_engines_have_every_entry_point_of_the_primitives():
    names = ["conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter", "conv2d_backward_bias",
             "pool2d_forward", "pool2d_backward", "activation_forward", "activation_backward",
             "softmax_forward", "softmax_backward", "cross_entropy_forward", "cross_entropy_backward",
             "lrn_forward", "lrn_backward", "batch_norm_forward_training", "batch_norm_forward_inference",
             "batch_norm_backward", "dropout_forward", "dropout_backward", "gemm", "bias_backward", "sgd_step",
             "rnn_forward", "rnn_backward_data", "rnn_backward_weights"]
    for engine in engines.ENGINES.values():
        assert all(callable(getattr(engine, n)) for n in names)


def test_sgd_updates_with_the_current_engine(monkeypatch):
    calls = []
    for name, module in engines.ENGINES.items():
        real = module.sgd_step
        monkeypatch.setattr(module, "sgd_step",
                            lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    results = {}
    for name in engines.ENGINES:
        minifw.manual_seed(0)
        layer = nn.Linear(5, 3)
        opt = minifw.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)
        with minifw.engine(name):
            for _ in range(3):
                opt.zero_grad()
                layer(minifw.ones(2, 5)).sum().backward()
                opt.step()
        results[name] = layer.weight.detach().numpy()
    assert calls == ["primitives"] * 6 + ["caffe"] * 6  # weight and bias, three steps each
    np.testing.assert_allclose(results["caffe"], results["primitives"], rtol=1e-6)


def _conv_step(dtype):
    minifw.manual_seed(3)
    conv = nn.Conv2d(3, 5, 3, stride=2, padding=1, groups=1, dtype=dtype)
    fc = nn.Linear(5 * 4 * 4, 7, dtype=dtype)
    x = minifw.randn(2, 3, 7, 8, dtype=dtype, requires_grad=True)
    y = fc(conv(x).relu().flatten(1))
    (y * minifw.arange(7, dtype=dtype)).sum().backward()
    return [t.detach().numpy().copy() for t in (y, x.grad, conv.weight.grad, conv.bias.grad,
                                                 fc.weight.grad, fc.bias.grad)]


@pytest.mark.parametrize("dtype, tol", [(minifw.float64, 1e-12), (minifw.float32, 2e-5)])
def test_both_engines_give_the_same_results_through_modules(dtype, tol):
    want = _conv_step(dtype)
    with minifw.engine("caffe"):
        got = _conv_step(dtype)
    for name, a, b in zip(["y", "dx", "dw", "db", "fc.dw", "fc.db"], got, want):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)


def test_the_caffe_engine_really_runs_convolution_and_gemm(monkeypatch):
    calls = []
    for name in ("conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter", "gemm"):
        original = getattr(engines.caffe, name)
        monkeypatch.setattr(engines.caffe, name,
                            lambda *a, _f=original, _n=name, **k: calls.append(_n) or _f(*a, **k))
    with minifw.engine("caffe"):
        _conv_step(minifw.float32)
    assert {"conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter", "gemm"} <= set(calls)
    calls.clear()
    _conv_step(minifw.float32)
    assert calls == []  # the primitives engine does not touch it


def test_backward_runs_on_the_engine_that_ran_forward(monkeypatch):
    minifw.manual_seed(0)
    conv = nn.Conv2d(1, 2, 3)
    x = minifw.randn(1, 1, 5, 5)
    with minifw.engine("caffe"):
        loss = conv(x).sum()
    used = []
    original = engines.caffe.conv2d_backward_filter
    monkeypatch.setattr(engines.caffe, "conv2d_backward_filter",
                        lambda *a, **k: used.append(1) or original(*a, **k))
    loss.backward()  # outside the with block: still the caffe engine
    assert used == [1]
