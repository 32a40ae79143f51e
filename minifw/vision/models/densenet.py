"""torchvision's DenseNet-121, -161, -169 and -201 (Huang et al., "Densely Connected
Convolutional Networks", 2017; the BC form): dense blocks in which every layer reads the
concatenation of the block's input and all earlier layers' outputs (batch norm, ReLU, a 1x1
bottleneck convolution, batch norm, ReLU, a 3x3 convolution adding growth_rate channels), with
transitions between blocks that halve the channels (1x1 convolution) and the size (2x2 average
pooling).

The modules carry torchvision's names (features.conv0, features.denseblock1.denselayer1.norm1,
features.transition1.conv, features.norm5, classifier), so a state_dict of torchvision's
model loads into these."""
from collections import OrderedDict

from ... import Tensor, cat, nn
from ...nn import functional as F
from ...nn.modules.utils import _positive_int
from ...utils import checkpoint as _checkpoint
from ._api import _check_no_weights, register_model


class _DenseLayer(nn.Module):
    """norm1, relu1, conv1 (1x1 to bn_size * growth_rate channels) over the concatenated
    inputs, then norm2, relu2, conv2 (3x3 to growth_rate channels), and dropout of drop_rate in
    training. memory_efficient: the bottleneck (concatenation, norm1, relu1, conv1) is run
    under minifw.utils.checkpoint.checkpoint, which keeps its inputs only and recomputes its
    activations in the backward pass, where any input requires grad."""

    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate, memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs):
        return self.conv1(self.relu1(self.norm1(cat(list(inputs), 1))))

    def any_requires_grad(self, input):
        return any(tensor.requires_grad for tensor in input)

    def call_checkpoint_bottleneck(self, input):
        return _checkpoint.checkpoint(lambda *inputs: self.bn_function(inputs), *input, use_reentrant=False)

    def forward(self, input):
        prev_features = [input] if isinstance(input, Tensor) else input
        if self.memory_efficient and self.any_requires_grad(prev_features):
            bottleneck_output = self.call_checkpoint_bottleneck(prev_features)
        else:
            bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    """`num_layers` dense layers, denselayer1, denselayer2, ...; the output is the input and
    every layer's output concatenated: num_input_features + num_layers * growth_rate channels."""
    _version = 2

    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate, bn_size=bn_size,
                                drop_rate=drop_rate, memory_efficient=memory_efficient)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return cat(features, 1)


class _Transition(nn.Sequential):
    """norm, relu, conv (1x1 to num_output_features), pool (2x2 average, stride 2)."""

    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """`features`: conv0 (7x7/2 to num_init_features), norm0, relu0, pool0 (3x3/2 max), then a
    dense block per entry of block_config (that many layers adding growth_rate channels each,
    bottlenecks of bn_size * growth_rate) with a transition halving channels and size after
    all but the last, and norm5; then ReLU, global average pooling and `classifier` (linear).
    drop_rate: dropout after each dense layer in training. memory_efficient: recompute each
    layer's bottleneck in the backward pass instead of keeping it (the same results, less memory
    held, more time). Convolutions start from Kaiming normal (fan_in), norms at 1 and 0, the
    linear layer's bias at 0 (its weight as nn.Linear starts)."""

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64, bn_size=4, drop_rate=0,
                 num_classes=1000, memory_efficient=False):
        super().__init__()
        _positive_int("DenseNet", "num_classes", num_classes)
        for name, value in (("growth_rate", growth_rate), ("num_init_features", num_init_features),
                            ("bn_size", bn_size)):
            _positive_int("DenseNet", name, value)
        if len(block_config) == 0:
            raise ValueError(f"DenseNet: block_config must be a non-empty list of layer counts, got {block_config!r}")
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module(f"denseblock{i + 1}", _DenseBlock(
                num_layers=num_layers, num_input_features=num_features, bn_size=bn_size, growth_rate=growth_rate,
                drop_rate=drop_rate, memory_efficient=memory_efficient))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}", _Transition(num_features, num_features // 2))
                num_features //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x), inplace=True)
        return self.classifier(F.adaptive_avg_pool2d(out, (1, 1)).flatten(1))


def _densenet(builder, weights, kwargs, growth_rate, block_config, num_init_features):
    _check_no_weights(builder, weights, kwargs)
    return DenseNet(growth_rate, block_config, num_init_features, **kwargs)


@register_model()
def densenet121(*, weights=None, progress=True, **kwargs):
    """DenseNet-121 (growth 32, blocks of 6, 12, 24, 16 layers); 8.0M parameters at 1000
    classes. weights: None only (minifw downloads nothing); progress is ignored; the rest
    (drop_rate, num_classes, memory_efficient, bn_size) goes to DenseNet."""
    return _densenet("densenet121", weights, kwargs, 32, (6, 12, 24, 16), 64)


@register_model()
def densenet161(*, weights=None, progress=True, **kwargs):
    """DenseNet-161 (growth 48, blocks of 6, 12, 36, 24, 96 initial channels); 28.7M parameters.
    The rest as densenet121."""
    return _densenet("densenet161", weights, kwargs, 48, (6, 12, 36, 24), 96)


@register_model()
def densenet169(*, weights=None, progress=True, **kwargs):
    """DenseNet-169 (growth 32, blocks of 6, 12, 32, 32); 14.1M parameters. The rest as
    densenet121."""
    return _densenet("densenet169", weights, kwargs, 32, (6, 12, 32, 32), 64)


@register_model()
def densenet201(*, weights=None, progress=True, **kwargs):
    """DenseNet-201 (growth 32, blocks of 6, 12, 48, 32); 20.0M parameters. The rest as
    densenet121."""
    return _densenet("densenet201", weights, kwargs, 32, (6, 12, 48, 32), 64)
