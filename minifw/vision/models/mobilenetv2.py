"""torchvision's MobileNetV2 (Sandler et al., "MobileNetV2: Inverted Residuals and Linear
Bottlenecks", 2018): blocks that expand with a 1x1 convolution, filter each channel alone with
a depthwise 3x3 convolution (groups = channels), and project back with a 1x1 convolution that
has no activation after it; ReLU6 elsewhere.

The modules carry torchvision's names (features.0.0, features.1.conv.0.0, features.18.1,
classifier.1), so a state_dict of torchvision's model loads into these."""
from ... import nn
from ...nn import functional as F
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model
from ._ops import Conv2dNormActivation, init_mobile_weights


def _make_divisible(v, divisor, min_value=None):
    """`v` rounded to the nearest multiple of `divisor` (at least `min_value`, default
    `divisor`), rounded up once more if rounding lost over 10% of it: channel counts that
    hardware likes, for width multipliers."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * v else rounded


class InvertedResidual(nn.Module):
    """1x1 expansion to round(inp * expand_ratio) channels with ReLU6 (left out when
    expand_ratio is 1), depthwise 3x3 of stride `stride` with ReLU6, linear 1x1 projection to
    `oup` channels with batch norm; the input is added where the shape is unchanged (stride 1
    and inp == oup). The layers are `conv`, a Sequential."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"InvertedResidual: stride must be 1 or 2, got {stride!r}")
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                        norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                   norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


# (expansion t, output channels c, blocks n, first block's stride s) of each stage
_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
            [6, 160, 3, 2], [6, 320, 1, 1]]


class MobileNetV2(nn.Module):
    """`features`: a 3x3/2 convolution to 32 channels, the stages of `block`s (an
    InvertedResidual per block, see `inverted_residual_setting`), a 1x1 convolution to 1280
    channels, each with batch norm and ReLU6; then global average pooling and `classifier`
    (dropout, linear to num_classes). Images (N, 3, H, W) of any size from 32x32 up.

    width_mult scales every channel count (rounded to multiples of `round_nearest`; the last
    1280 only grows); inverted_residual_setting: the stages as [t, c, n, s] lists (expansion,
    channels, blocks, stride of the first). Convolutions start from Kaiming normal (fan_out)
    with zero biases, batch norms at 1 and 0, the linear layer from N(0, 0.01^2) with zero bias."""

    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
                 round_nearest=8, block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        _positive_int("MobileNetV2", "num_classes", num_classes)
        block = InvertedResidual if block is None else block
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        if inverted_residual_setting is None:
            inverted_residual_setting = _SETTING
        if len(inverted_residual_setting) == 0 or any(len(stage) != 4 for stage in inverted_residual_setting):
            raise ValueError(f"MobileNetV2: inverted_residual_setting must be a non-empty list of "
                             f"[t, c, n, s] lists, got {inverted_residual_setting!r}")
        input_channel = _make_divisible(32 * width_mult, round_nearest)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t,
                                      norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))

        init_mobile_weights(self)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1)).flatten(1)
        return self.classifier(x)


@register_model()
def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    """MobileNetV2; 3.5M parameters at 1000 classes and width_mult 1. weights: None only
    (minifw downloads nothing); progress is ignored; the rest goes to MobileNetV2."""
    _check_no_weights("mobilenet_v2", weights, kwargs)
    return MobileNetV2(**kwargs)
