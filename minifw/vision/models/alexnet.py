"""torchvision's AlexNet: the one-GPU variant of "One weird trick for parallelizing
convolutional neural networks" (Krizhevsky, 2014), not the 2012 paper's two-GPU network that
minifw.models.AlexNet reproduces (Caffe's bvlc_alexnet). No LRN, no groups; 64, 192, 384, 256,
256 channels; average pooling to 6x6 so that any image of 63x63 and up goes in.

The modules carry torchvision's names (features.0, features.3, ..., classifier.6)."""
from ... import nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model


class AlexNet(nn.Module):
    """features: 11x11/4 convolution to 64 channels (padding 2), ReLU, 3x3/2 max pool; 5x5 to
    192 (padding 2), ReLU, max pool; three 3x3 convolutions (384, 256, 256) with ReLUs; max
    pool. avgpool: adaptive average pooling to 6x6. classifier: dropout, 4096-wide linear,
    ReLU, dropout, 4096-wide linear, ReLU, linear to num_classes. Each layer starts from its
    own (PyTorch's default) initialization, as torchvision's."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        _positive_int("AlexNet", "num_classes", num_classes)
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x)).flatten(1)
        return self.classifier(x)


@register_model()
def alexnet(*, weights=None, progress=True, **kwargs):
    """torchvision's AlexNet; 61.1M parameters at 1000 classes. weights: None only (minifw
    downloads nothing); progress is ignored; the rest goes to AlexNet."""
    _check_no_weights("alexnet", weights, kwargs)
    return AlexNet(**kwargs)
