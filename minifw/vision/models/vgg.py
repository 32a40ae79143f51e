"""torchvision's VGG networks (Simonyan and Zisserman, "Very Deep Convolutional Networks for
Large-Scale Image Recognition", 2014): configurations A, B, D and E (VGG-11, -13, -16, -19),
each with or without batch norm after every convolution.

The modules carry torchvision's names: `features` (a Sequential of convolutions, [batch norms,]
ReLUs and max pools, numbered as torchvision numbers them), `avgpool`, `classifier`."""
from ... import nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model

# Output channels of each 3x3 convolution; "M" is a 2x2 max pool of stride 2.
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}


def make_layers(cfg, batch_norm=False):
    """The convolutional part of a VGG from a configuration list (see `cfgs`): a 3x3
    convolution of padding 1 per number, followed by batch norm if asked and an in-place ReLU;
    a 2x2 max pool of stride 2 per "M". Input channels: 3."""
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """`features` (512 channels out), average pooling to 7x7 whatever the input's size (so
    images of 32x32 and up go in), and a classifier of two 4096-wide ReLU layers with dropout
    `dropout` before a linear layer to num_classes.

    init_weights: start the convolutions from Kaiming normal (fan_out, ReLU's gain) with zero
    biases, batch norms at scale 1 and shift 0, and the linear layers from N(0, 0.01^2) with
    zero biases; False leaves each layer's own initialization."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        _positive_int("VGG", "num_classes", num_classes)
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.avgpool(self.features(x)).flatten(1)
        return self.classifier(x)


def _vgg(name, cfg, batch_norm, weights, kwargs):
    _check_no_weights(name, weights, kwargs)
    return VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)


@register_model()
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration A): 8 convolutions; 132.9M parameters at 1000 classes."""
    return _vgg("vgg11", "A", False, weights, kwargs)


@register_model()
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch norm after each convolution."""
    return _vgg("vgg11_bn", "A", True, weights, kwargs)


@register_model()
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration B): 10 convolutions; 133.0M parameters."""
    return _vgg("vgg13", "B", False, weights, kwargs)


@register_model()
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch norm after each convolution."""
    return _vgg("vgg13_bn", "B", True, weights, kwargs)


@register_model()
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration D): 13 convolutions; 138.4M parameters."""
    return _vgg("vgg16", "D", False, weights, kwargs)


@register_model()
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch norm after each convolution."""
    return _vgg("vgg16_bn", "D", True, weights, kwargs)


@register_model()
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration E): 16 convolutions; 143.7M parameters."""
    return _vgg("vgg19", "E", False, weights, kwargs)


@register_model()
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch norm after each convolution."""
    return _vgg("vgg19_bn", "E", True, weights, kwargs)
