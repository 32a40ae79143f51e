"""torchvision's ConvNeXt tiny, small, base and large (Liu et al., "A ConvNet for the 2020s",
2022): a 4x4/4 patchify stem and four stages of blocks that filter each channel with a 7x7
depthwise convolution, normalize the channels with LayerNorm, and widen 4 times and back with
linear layers around a GELU, scaled per channel (layer scale) and dropped per sample by
stochastic depth in training before the residual addition; between stages, LayerNorm and a
2x2/2 convolution.

The modules carry torchvision's names (features.0.0, features.1.0.block.3,
features.1.0.layer_scale, features.2.1, classifier.2), so a state_dict of torchvision's model
loads into these."""
from functools import partial

from ... import nn, ones
from ...nn import functional as F
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model
from ._ops import Conv2dNormActivation, Permute, StochasticDepth, check_probability, check_setting


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of each position of (N, C, H, W) input (normalized_shape
    is (C,)), with nn.LayerNorm's parameters."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    """`block`: a 7x7 depthwise convolution (with bias), Permute to channels last,
    `norm_layer` (default LayerNorm, eps 1e-6), linear to 4 * dim, GELU, linear back to dim,
    Permute to channels first; multiplied by `layer_scale` (a (dim, 1, 1) parameter starting at
    the value given), passed through `stochastic_depth` (row mode), and added to the input."""

    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        norm_layer = partial(nn.LayerNorm, eps=1e-6) if norm_layer is None else norm_layer
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True), Permute([0, 2, 3, 1]),
            norm_layer(dim), nn.Linear(in_features=dim, out_features=4 * dim, bias=True), nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True), Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        return self.stochastic_depth(self.layer_scale * self.block(input)) + input


class CNBlockConfig:
    """A stage: `num_layers` blocks of `input_channels`, then (unless out_channels is None, as
    in the last stage) a downsampling to `out_channels`."""

    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self):
        return (f"{type(self).__name__}(input_channels={self.input_channels}, out_channels={self.out_channels}, "
                f"num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    """`features`: the stem (a 4x4/4 convolution with bias to the first stage's channels, then
    `norm_layer`, default LayerNorm2d with eps 1e-6), and per CNBlockConfig of `block_setting`
    a Sequential of `block`s (default CNBlock), followed where the stage has out_channels by a
    Sequential of norm_layer and a 2x2/2 convolution; then `avgpool` (global average pooling)
    and `classifier` (norm_layer, Flatten, linear to num_classes).

    Block k of the n in all drops its residual branch with probability
    stochastic_depth_prob * k / (n - 1) in training; layer_scale: the blocks' layer scale's
    starting value. Convolutions and linear layers start from a normal of std 0.02 truncated
    to [-2, 2], with zero biases. **kwargs is in the signature as in torchvision's, which
    ignores what it gets there; minifw's takes nothing there (a TypeError)."""

    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000, block=None,
                 norm_layer=None, **kwargs):
        super().__init__()
        if kwargs:
            raise TypeError(f"ConvNeXt: got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        _positive_int("ConvNeXt", "num_classes", num_classes)
        check_setting("ConvNeXt", "block_setting", block_setting, CNBlockConfig, "CNBlockConfig")
        check_probability("ConvNeXt", "stochastic_depth_prob", stochastic_depth_prob)
        block = CNBlock if block is None else block
        norm_layer = partial(LayerNorm2d, eps=1e-6) if norm_layer is None else norm_layer

        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4, stride=4, padding=0,
                                       norm_layer=norm_layer, activation_layer=None, bias=True)]
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(norm_layer(cnf.input_channels),
                                            nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        lastconv_output_channels = last.input_channels if last.out_channels is None else last.out_channels
        self.classifier = nn.Sequential(norm_layer(lastconv_output_channels), nn.Flatten(1),
                                        nn.Linear(lastconv_output_channels, num_classes))

        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


def _convnext(builder, weights, kwargs, channels, layers, stochastic_depth_prob):
    """The model of four stages of `channels` and `layers`; stochastic_depth_prob is the
    builder's default."""
    _check_no_weights(builder, weights, kwargs)
    setting = [CNBlockConfig(c, out, n) for c, out, n in zip(channels, list(channels[1:]) + [None], layers)]
    return ConvNeXt(setting, stochastic_depth_prob=kwargs.pop("stochastic_depth_prob", stochastic_depth_prob),
                    **kwargs)


@register_model()
def convnext_tiny(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-T (96, 192, 384, 768 channels; 3, 3, 9, 3 blocks); 28.6M parameters at 1000
    classes. weights: None only (minifw downloads nothing); progress is ignored;
    stochastic_depth_prob defaults to 0.1; the rest goes to ConvNeXt."""
    return _convnext("convnext_tiny", weights, kwargs, (96, 192, 384, 768), (3, 3, 9, 3), 0.1)


@register_model()
def convnext_small(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-S (tiny's channels; 3, 3, 27, 3 blocks); 50.2M parameters. stochastic_depth_prob
    0.4; the rest as convnext_tiny."""
    return _convnext("convnext_small", weights, kwargs, (96, 192, 384, 768), (3, 3, 27, 3), 0.4)


@register_model()
def convnext_base(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-B (128, 256, 512, 1024 channels; 3, 3, 27, 3 blocks); 88.6M parameters.
    stochastic_depth_prob 0.5; the rest as convnext_tiny."""
    return _convnext("convnext_base", weights, kwargs, (128, 256, 512, 1024), (3, 3, 27, 3), 0.5)


@register_model()
def convnext_large(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-L (192, 384, 768, 1536 channels; 3, 3, 27, 3 blocks); 197.8M parameters.
    stochastic_depth_prob 0.5; the rest as convnext_tiny."""
    return _convnext("convnext_large", weights, kwargs, (192, 384, 768, 1536), (3, 3, 27, 3), 0.5)
