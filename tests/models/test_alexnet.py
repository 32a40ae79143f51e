"""minifw.models.AlexNet (Caffe's bvlc_alexnet) and AlexNetSmall: layers, shapes, parameter
counts, initialization, and both engines computing the same function."""
import numpy as np
import pytest

import minifw
from minifw.models import AlexNet, AlexNetSmall

CAFFE_LAYERS = ["conv1", "relu1", "norm1", "pool1", "conv2", "relu2", "norm2", "pool2", "conv3",
                "relu3", "conv4", "relu4", "conv5", "relu5", "pool5", "flatten", "fc6", "relu6",
                "drop6", "fc7", "relu7", "drop7", "fc8"]
# bvlc_alexnet's blob shapes after each layer (C, H, W), batch left out
ALEXNET_SHAPES = [(96, 55, 55), (96, 55, 55), (96, 55, 55), (96, 27, 27), (256, 27, 27),
                  (256, 27, 27), (256, 27, 27), (256, 13, 13), (384, 13, 13), (384, 13, 13),
                  (384, 13, 13), (384, 13, 13), (256, 13, 13), (256, 13, 13), (256, 6, 6), (9216,),
                  (4096,), (4096,), (4096,), (4096,), (4096,), (4096,), (1000,)]
SMALL_SHAPES = [(32, 32, 32), (32, 32, 32), (32, 32, 32), (32, 16, 16), (64, 16, 16), (64, 16, 16),
                (64, 16, 16), (64, 8, 8), (96, 8, 8), (96, 8, 8), (96, 8, 8), (96, 8, 8), (64, 8, 8),
                (64, 8, 8), (64, 4, 4), (1024,), (256,), (256,), (256,), (256,), (256,), (256,),
                (10,)]


def _shapes(model, x):
    out = []
    with minifw.no_grad():
        for name, layer in model.named_children():
            x = layer(x)
            out.append(tuple(x.shape[1:]))
    return out


def test_alexnet_is_bvlc_alexnet():
    minifw.manual_seed(0)
    model = AlexNet().eval()
    assert [name for name, _ in model.named_children()] == CAFFE_LAYERS
    # Caffe's parameter count: 60,965,224
    assert sum(p.numel() for p in model.parameters()) == 60_965_224
    assert model.conv2.weight.shape == (256, 48, 5, 5) and model.conv4.weight.shape == (384, 192, 3, 3)
    assert model.conv5.groups == 2 and model.conv3.groups == 1
    assert (model.norm1.size, model.norm1.alpha, model.norm1.beta, model.norm1.k) == (5, 1e-4, 0.75, 1.0)
    assert model.pool1.ceil_mode and model.pool1.kernel_size == 3 and model.pool1.stride == 2
    assert _shapes(model, minifw.randn(1, 3, 227, 227)) == ALEXNET_SHAPES


def test_alexnet_starts_from_caffes_fillers():
    minifw.manual_seed(1)
    model = AlexNet()
    for name, std, bias in (("conv1", 0.01, 0.0), ("conv2", 0.01, 0.1), ("conv3", 0.01, 0.0),
                            ("conv4", 0.01, 0.1), ("conv5", 0.01, 0.1), ("fc6", 0.005, 0.1),
                            ("fc7", 0.005, 0.1), ("fc8", 0.01, 0.0)):
        layer = getattr(model, name)
        w = layer.weight.detach().numpy()
        assert abs(w.std() - std) < 0.05 * std and abs(w.mean()) < 0.05 * std, name
        np.testing.assert_array_equal(layer.bias.detach().numpy(), np.full(layer.bias.shape, bias,
                                                                           np.float32))


@pytest.mark.parametrize("batch", [1, 3])
def test_alexnet_small_shapes(batch):
    model = AlexNetSmall().eval()
    assert [name for name, _ in model.named_children()] == CAFFE_LAYERS
    assert _shapes(model, minifw.randn(batch, 1, 32, 32)) == SMALL_SHAPES
    assert AlexNetSmall(num_classes=7, in_channels=3)(minifw.randn(2, 3, 32, 32)).shape == (2, 7)


@pytest.mark.parametrize("make, shape, message", [
    (AlexNet, (1, 3, 224, 224), r"AlexNet: input must be \(N, 3, 227, 227\) images; got shape "
                                r"\(1, 3, 224, 224\)"),
    (AlexNetSmall, (2, 32, 32), r"AlexNetSmall: input must be \(N, 1, 32, 32\) images"),
    (AlexNetSmall, (2, 3, 32, 32), r"AlexNetSmall: input must be \(N, 1, 32, 32\) images"),
])
def test_wrong_input_shape(make, shape, message):
    with pytest.raises(ValueError, match=message):
        make()(minifw.zeros(*shape))


def _forward_backward(dtype):
    minifw.manual_seed(5)
    model = AlexNetSmall().to(dtype).eval()  # eval: the engines draw different dropout masks
    x = minifw.randn(2, 1, 32, 32, dtype=dtype, requires_grad=True)
    out = model(x)
    minifw.nn.functional.cross_entropy(out, minifw.tensor([3, 8])).backward()
    grads = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    return out.detach().numpy().copy(), x.grad.numpy().copy(), grads


@pytest.mark.parametrize("dtype, tol", [(minifw.float64, 1e-10), (minifw.float32, 1e-4)])
def test_both_engines_compute_the_same_alexnet_small(dtype, tol):
    want = _forward_backward(dtype)
    with minifw.engine("caffe"):
        got = _forward_backward(dtype)
    np.testing.assert_allclose(got[0], want[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    for name in want[2]:
        scale = np.abs(want[2][name]).max()
        np.testing.assert_allclose(got[2][name], want[2][name], rtol=tol, atol=tol * scale, err_msg=name)
