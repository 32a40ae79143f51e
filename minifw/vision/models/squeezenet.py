"""torchvision's SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy
with 50x fewer parameters and <0.5MB model size", 2016): Fire modules that squeeze with 1x1
convolutions and expand with 1x1 and 3x3 ones side by side, and a convolutional classifier.

The modules carry torchvision's names (features.3.squeeze, features.3.expand3x3,
classifier.1), so a state_dict of torchvision's model loads into these."""
from ... import cat, nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model


class Fire(nn.Module):
    """A 1x1 squeeze to `squeeze_planes` with ReLU, then 1x1 and 3x3 (padding 1) expansions
    of the result, each with ReLU, concatenated along the channels:
    expand1x1_planes + expand3x3_planes channels out."""

    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return cat([self.expand1x1_activation(self.expand1x1(x)),
                    self.expand3x3_activation(self.expand3x3(x))], 1)


def _pool():
    return nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)


class SqueezeNet(nn.Module):
    """version "1_0": a 7x7/2 convolution to 96 channels and eight Fire modules with max pools
    (3/2, rounding up) after the stem, the third and the seventh. "1_1": a 3x3/2 convolution to
    64 channels, the pools earlier (after the stem, the second and fourth Fire), 2.4x less
    computation, the same accuracy. classifier: dropout, a 1x1 convolution to num_classes, ReLU,
    global average pooling. Images (N, 3, H, W) from 64x64 ("1_0") or 32x32 ("1_1") up.
    The last convolution starts from N(0, 0.01^2), the others from Kaiming uniform (a=0), every
    bias from 0."""

    def __init__(self, version="1_0", num_classes=1000, dropout=0.5):
        super().__init__()
        _positive_int("SqueezeNet", "num_classes", num_classes)
        self.num_classes = num_classes
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), _pool(),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256), _pool(),
                Fire(512, 64, 256, 256))
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), _pool(),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), _pool(),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                Fire(512, 64, 256, 256))
        else:
            raise ValueError(f"SqueezeNet: version must be '1_0' or '1_1', got {version!r}")
        final_conv = nn.Conv2d(512, num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)


@register_model()
def squeezenet1_0(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.0; 1.25M parameters at 1000 classes. weights: None only (minifw downloads
    nothing); progress is ignored; the rest goes to SqueezeNet."""
    _check_no_weights("squeezenet1_0", weights, kwargs)
    return SqueezeNet("1_0", **kwargs)


@register_model()
def squeezenet1_1(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.1; 1.24M parameters at 1000 classes. weights, progress: as squeezenet1_0."""
    _check_no_weights("squeezenet1_1", weights, kwargs)
    return SqueezeNet("1_1", **kwargs)
