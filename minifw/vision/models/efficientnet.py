"""torchvision's EfficientNet B0-B7 (Tan and Le, "EfficientNet: Rethinking Model Scaling for
Convolutional Neural Networks", 2019) and EfficientNetV2 S, M, L (Tan and Le, "EfficientNetV2:
Smaller Models and Faster Training", 2021): stages of MBConv blocks (a 1x1 expansion, a
depthwise convolution, squeeze-and-excitation, a 1x1 projection) with SiLU, and in V2's first
stages FusedMBConv blocks (the expansion and the depthwise convolution fused into one full
convolution); residual branches dropped per sample by stochastic depth in training, at a rate
that grows linearly with the block's depth.

The modules carry torchvision's names (features.1.0.block.1.fc1, features.8.0,
classifier.1), so a state_dict of torchvision's model loads into these."""
import copy
import math
from functools import partial

from ... import nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model
from ._ops import (Conv2dNormActivation, SqueezeExcitation, StochasticDepth, check_probability, check_setting,
                   init_mobile_weights)
from .mobilenetv2 import _make_divisible


class _MBConvConfig:
    """A stage of blocks: expansion ratio, depthwise `kernel` size, the first block's `stride`,
    input and output channels, how many blocks (`num_layers`), and the `block` class."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers
        self.block = block

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)

    def __repr__(self):
        fields = ("expand_ratio", "kernel", "stride", "input_channels", "out_channels", "num_layers", "block")
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in fields)})"


class MBConvConfig(_MBConvConfig):
    """A stage of MBConv blocks, its channels multiplied by `width_mult` (rounded to multiples of
    8) and its block count by `depth_mult` (rounded up): EfficientNet's compound scaling."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, width_mult=1.0,
                 depth_mult=1.0, block=None):
        super().__init__(expand_ratio, kernel, stride, self.adjust_channels(input_channels, width_mult),
                         self.adjust_channels(out_channels, width_mult), self.adjust_depth(num_layers, depth_mult),
                         MBConv if block is None else block)

    @staticmethod
    def adjust_depth(num_layers, depth_mult):
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    """A stage of FusedMBConv blocks (EfficientNetV2's, which is not scaled)."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block=None):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         FusedMBConv if block is None else block)


def _check_stride(cls, stride):
    if stride not in (1, 2):
        raise ValueError(f"{cls}: stride must be 1 or 2, got {stride!r}")


class MBConv(nn.Module):
    """A 1x1 expansion to input_channels * expand_ratio (rounded to 8; left out where that is
    the input's count) with SiLU, a depthwise `cnf.kernel` convolution with SiLU,
    squeeze-and-excitation to a quarter of the input channels (SiLU inside), a 1x1 projection
    without activation, each with `norm_layer`: `block`, a Sequential. Where the shape is
    unchanged the input is added to the branch after `stochastic_depth` (row mode)."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        _check_stride("MBConv", cnf.stride)
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers += [Conv2dNormActivation(expanded_channels, expanded_channels, kernel_size=cnf.kernel,
                                        stride=cnf.stride, groups=expanded_channels, norm_layer=norm_layer,
                                        activation_layer=nn.SiLU),
                   se_layer(expanded_channels, max(1, cnf.input_channels // 4),
                            activation=partial(nn.SiLU, inplace=True)),
                   Conv2dNormActivation(expanded_channels, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                        activation_layer=None)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        return self.stochastic_depth(result) + input if self.use_res_connect else result


class FusedMBConv(nn.Module):
    """A full `cnf.kernel` convolution of stride cnf.stride expanding to input_channels *
    expand_ratio with SiLU, then a 1x1 projection without activation; where the ratio is 1 the
    one convolution goes to the output channels with SiLU. Norms, `block` and the residual as
    in MBConv."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer):
        super().__init__()
        _check_stride("FusedMBConv", cnf.stride)
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded_channels != cnf.input_channels:
            layers = [Conv2dNormActivation(cnf.input_channels, expanded_channels, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer, activation_layer=nn.SiLU),
                      Conv2dNormActivation(expanded_channels, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer, activation_layer=nn.SiLU)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        return self.stochastic_depth(result) + input if self.use_res_connect else result


class EfficientNet(nn.Module):
    """`features`: a 3x3/2 convolution with SiLU to the first stage's input channels, a
    Sequential of blocks per stage of `inverted_residual_setting` (MBConvConfig or
    FusedMBConvConfig; the first block of a stage strides), a 1x1 convolution with SiLU to
    `last_channel` (default 4 times the last stage's channels), all with `norm_layer` (default
    batch norm); then `avgpool` (global average pooling) and `classifier` (dropout, linear).

    Block k of n in all drops its residual branch with probability stochastic_depth_prob * k / n
    in training. Convolutions start from Kaiming normal (fan_out) with zero biases, norms at 1
    and 0, the linear layer from U(-1/sqrt(num_classes), 1/sqrt(num_classes)) with zero bias."""

    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None, last_channel=None):
        super().__init__()
        _positive_int("EfficientNet", "num_classes", num_classes)
        check_setting("EfficientNet", "inverted_residual_setting", inverted_residual_setting, _MBConvConfig,
                      "MBConvConfig or FusedMBConvConfig")
        check_probability("EfficientNet", "stochastic_depth_prob", stochastic_depth_prob)
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer

        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.SiLU)]
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # the stage's later blocks keep its output channels and size
                    block_cnf.input_channels, block_cnf.stride = block_cnf.out_channels, 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = 4 * lastconv_input_channels if last_channel is None else last_channel
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(lastconv_output_channels, num_classes))

        init_mobile_weights(self, lambda m: nn.init.uniform_(m.weight, -1.0 / math.sqrt(m.out_features),
                                                            1.0 / math.sqrt(m.out_features)))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


# EfficientNet-B0's stages: expansion, kernel, stride, input and output channels, blocks
_B0 = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
       (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
# EfficientNetV2's: the same columns, the first three stages FusedMBConv, the rest MBConv
_V2 = {"s": [(1, 3, 1, 24, 24, 2), (4, 3, 2, 24, 48, 4), (4, 3, 2, 48, 64, 4), (4, 3, 2, 64, 128, 6),
             (6, 3, 1, 128, 160, 9), (6, 3, 2, 160, 256, 15)],
       "m": [(1, 3, 1, 24, 24, 3), (4, 3, 2, 24, 48, 5), (4, 3, 2, 48, 80, 5), (4, 3, 2, 80, 160, 7),
             (6, 3, 1, 160, 176, 14), (6, 3, 2, 176, 304, 18), (6, 3, 1, 304, 512, 5)],
       "l": [(1, 3, 1, 32, 32, 4), (4, 3, 2, 32, 64, 7), (4, 3, 2, 64, 96, 7), (4, 3, 2, 96, 192, 10),
             (6, 3, 1, 192, 224, 19), (6, 3, 2, 224, 384, 25), (6, 3, 1, 384, 640, 7)]}


def _efficientnet(builder, weights, kwargs, setting, dropout, **own):
    """The model `builder` builds: its `setting`, dropout (unless kwargs has one) and `own`
    arguments (last_channel, and norm_layer for some), which the caller may not pass (a
    TypeError, as torchvision's builders give for a repeated keyword)."""
    _check_no_weights(builder, weights, kwargs)
    for name, value in own.items():
        if name in kwargs:
            raise TypeError(f"{builder}: {name} is the model's own ({value!r}) and cannot be passed, got "
                            f"{name}={kwargs[name]!r}")
    return EfficientNet(setting, kwargs.pop("dropout", dropout), **own, **kwargs)


def _b(width_mult, depth_mult):
    return [MBConvConfig(*stage, width_mult=width_mult, depth_mult=depth_mult) for stage in _B0]


def _v2(size):
    return [(FusedMBConvConfig if index < 3 else MBConvConfig)(*stage) for index, stage in enumerate(_V2[size])]


# B5-B7 were trained (and ported to torchvision) with TensorFlow's batch norm settings; V2 with its eps
_TF_NORM = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
_V2_NORM = partial(nn.BatchNorm2d, eps=0.001)


@register_model()
def efficientnet_b0(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B0; 5.3M parameters at 1000 classes. weights: None only (minifw downloads
    nothing); progress is ignored; dropout defaults to 0.2; the rest goes to EfficientNet."""
    return _efficientnet("efficientnet_b0", weights, kwargs, _b(1.0, 1.0), 0.2, last_channel=None)


@register_model()
def efficientnet_b1(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B1: B0 with 1.1 times the blocks; 7.8M parameters. dropout 0.2; the rest as
    efficientnet_b0."""
    return _efficientnet("efficientnet_b1", weights, kwargs, _b(1.0, 1.1), 0.2, last_channel=None)


@register_model()
def efficientnet_b2(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B2: widths 1.1, blocks 1.2 times B0's; 9.1M parameters. dropout 0.3."""
    return _efficientnet("efficientnet_b2", weights, kwargs, _b(1.1, 1.2), 0.3, last_channel=None)


@register_model()
def efficientnet_b3(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B3: widths 1.2, blocks 1.4 times B0's; 12.2M parameters. dropout 0.3."""
    return _efficientnet("efficientnet_b3", weights, kwargs, _b(1.2, 1.4), 0.3, last_channel=None)


@register_model()
def efficientnet_b4(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B4: widths 1.4, blocks 1.8 times B0's; 19.3M parameters. dropout 0.4."""
    return _efficientnet("efficientnet_b4", weights, kwargs, _b(1.4, 1.8), 0.4, last_channel=None)


@register_model()
def efficientnet_b5(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B5: widths 1.6, blocks 2.2 times B0's; 30.4M parameters. dropout 0.4; batch
    norm with eps 0.001 and momentum 0.01 (norm_layer cannot be passed)."""
    return _efficientnet("efficientnet_b5", weights, kwargs, _b(1.6, 2.2), 0.4, last_channel=None,
                         norm_layer=_TF_NORM)


@register_model()
def efficientnet_b6(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B6: widths 1.8, blocks 2.6 times B0's; 43.0M parameters. dropout 0.5; batch
    norm as efficientnet_b5."""
    return _efficientnet("efficientnet_b6", weights, kwargs, _b(1.8, 2.6), 0.5, last_channel=None,
                         norm_layer=_TF_NORM)


@register_model()
def efficientnet_b7(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B7: widths 2.0, blocks 3.1 times B0's; 66.3M parameters. dropout 0.5; batch
    norm as efficientnet_b5."""
    return _efficientnet("efficientnet_b7", weights, kwargs, _b(2.0, 3.1), 0.5, last_channel=None,
                         norm_layer=_TF_NORM)


@register_model()
def efficientnet_v2_s(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-S; 21.5M parameters at 1000 classes. weights, progress: as
    efficientnet_b0; dropout 0.2; batch norm with eps 0.001 (norm_layer cannot be passed); the
    rest goes to EfficientNet."""
    return _efficientnet("efficientnet_v2_s", weights, kwargs, _v2("s"), 0.2, last_channel=1280,
                         norm_layer=_V2_NORM)


@register_model()
def efficientnet_v2_m(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-M; 54.1M parameters. dropout 0.3; the rest as efficientnet_v2_s."""
    return _efficientnet("efficientnet_v2_m", weights, kwargs, _v2("m"), 0.3, last_channel=1280,
                         norm_layer=_V2_NORM)


@register_model()
def efficientnet_v2_l(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-L; 118.5M parameters. dropout 0.4; the rest as efficientnet_v2_s."""
    return _efficientnet("efficientnet_v2_l", weights, kwargs, _v2("l"), 0.4, last_channel=1280,
                         norm_layer=_V2_NORM)
