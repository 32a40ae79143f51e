"""torchvision's MobileNetV3 (Howard et al., "Searching for MobileNetV3", 2019), large and
small: MobileNetV2's inverted residuals with 3x3 or 5x5 depthwise convolutions, hard-swish in
the later blocks (ReLU in the earlier), squeeze-and-excitation with a hard sigmoid in some, and
a classifier with one hidden layer.

The modules carry torchvision's names (features.0.0, features.4.block.2.fc1,
features.16.1, classifier.3), so a state_dict of torchvision's model loads into these."""
from functools import partial

from ... import nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model
from ._ops import Conv2dNormActivation, SqueezeExcitation, check_setting, init_mobile_weights
from .mobilenetv2 import _make_divisible


class InvertedResidualConfig:
    """One block of a MobileNetV3: its input, expanded and output channels (each multiplied by
    `width_mult` and rounded to a multiple of 8), the depthwise `kernel` size, whether it has
    squeeze-and-excitation (`use_se`), `activation` "HS" (hard-swish; use_hs) or "RE" (ReLU),
    its `stride` and the depthwise convolution's `dilation`."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride,
                 dilation, width_mult):
        if activation not in ("HS", "RE"):
            raise ValueError(f"InvertedResidualConfig: activation must be 'HS' or 'RE', got {activation!r}")
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    """A 1x1 expansion (left out when the expanded and input channels are equal), a depthwise
    `cnf.kernel` convolution (stride 1 where it is dilated), squeeze-and-excitation to a quarter
    of the channels (rounded to 8) where cnf.use_se, and a 1x1 projection without activation,
    each with `norm_layer`; hard-swish or ReLU after the first two. The input is added where the
    shape is unchanged. The layers are `block`, a Sequential."""

    def __init__(self, cnf, norm_layer, se_layer=partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if cnf.stride not in (1, 2):
            raise ValueError(f"InvertedResidual: stride must be 1 or 2, got {cnf.stride!r}")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=1 if cnf.dilation > 1 else cnf.stride, dilation=cnf.dilation,
                                           groups=cnf.expanded_channels, norm_layer=norm_layer,
                                           activation_layer=activation_layer))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        return result + input if self.use_res_connect else result


# the builders' configuration arguments, which they pass on to MobileNetV3 as torchvision's do
_CONF_ARGUMENTS = ("width_mult", "reduced_tail", "dilated")


class MobileNetV3(nn.Module):
    """`features`: a 3x3/2 convolution with hard-swish to the first block's input channels, a
    `block` per InvertedResidualConfig of `inverted_residual_setting`, a 1x1 convolution with
    hard-swish to 6 times the last block's channels, all with `norm_layer` (default batch norm
    with eps 0.001 and momentum 0.01); then `avgpool` (global average pooling) and `classifier`:
    linear to `last_channel`, hard-swish, dropout, linear to num_classes.

    **kwargs takes the builders' width_mult, reduced_tail and dilated, which the settings
    already reflect, and nothing else. Convolutions start from Kaiming normal (fan_out) with
    zero biases, norms at 1 and 0, linear layers from N(0, 0.01^2) with zero biases."""

    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None, norm_layer=None,
                 dropout=0.2, **kwargs):
        super().__init__()
        unknown = sorted(set(kwargs) - set(_CONF_ARGUMENTS))
        if unknown:
            raise TypeError(f"MobileNetV3: got an unexpected keyword argument {unknown[0]!r}")
        _positive_int("MobileNetV3", "num_classes", num_classes)
        _positive_int("MobileNetV3", "last_channel", last_channel)
        check_setting("MobileNetV3", "inverted_residual_setting", inverted_residual_setting, InvertedResidualConfig,
                      "InvertedResidualConfig")
        block = InvertedResidual if block is None else block
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01) if norm_layer is None else norm_layer

        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = 6 * lastconv_input_channels
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(lastconv_output_channels, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))

        init_mobile_weights(self)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


# (input channels, kernel, expanded channels, output channels, squeeze-and-excitation, activation, stride) of
# each block, and the classifier's hidden width; the last three blocks' channels are halved by reduced_tail
_LARGE = [(16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2), (24, 3, 72, 24, False, "RE", 1),
          (24, 5, 72, 40, True, "RE", 2), (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
          (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
          (80, 3, 184, 80, False, "HS", 1), (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
          (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1), (160, 5, 960, 160, True, "HS", 1)]
_SMALL = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
          (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
          (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
          (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1)]


def _mobilenet_v3_conf(table, last, width_mult=1.0, reduced_tail=False, dilated=False, **_):
    """The InvertedResidualConfig list and last_channel of a table: the last three blocks halved
    (all but the first's input) by reduced_tail and dilated 2 (stride 1) by dilated."""
    divider, dilation, setting = 2 if reduced_tail else 1, 2 if dilated else 1, []
    for index, (inp, kernel, expanded, out, use_se, activation, stride) in enumerate(table):
        tail = index - (len(table) - 3)  # 0, 1, 2 for the last three blocks
        if tail >= 0:
            inp = inp if tail == 0 else inp // divider
            expanded = expanded if tail == 0 else expanded // divider
            out = out // divider
        setting.append(InvertedResidualConfig(inp, kernel, expanded, out, use_se, activation, stride,
                                              dilation if tail >= 0 else 1, width_mult))
    return setting, InvertedResidualConfig.adjust_channels(last // divider, width_mult)


@register_model()
def mobilenet_v3_large(*, weights=None, progress=True, **kwargs):
    """MobileNetV3-Large; 5.5M parameters at 1000 classes. weights: None only (minifw downloads
    nothing); progress is ignored; width_mult (1.0), reduced_tail (False: halve the last stage's
    channels) and dilated (False: dilate the last stage instead of striding) shape the
    settings; the rest goes to MobileNetV3."""
    _check_no_weights("mobilenet_v3_large", weights, kwargs)
    return MobileNetV3(*_mobilenet_v3_conf(_LARGE, 1280, **kwargs), **kwargs)


@register_model()
def mobilenet_v3_small(*, weights=None, progress=True, **kwargs):
    """MobileNetV3-Small; 2.5M parameters at 1000 classes. weights, progress and the other
    arguments: as mobilenet_v3_large."""
    _check_no_weights("mobilenet_v3_small", weights, kwargs)
    return MobileNetV3(*_mobilenet_v3_conf(_SMALL, 1024, **kwargs), **kwargs)
