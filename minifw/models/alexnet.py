"""AlexNet as in Caffe's bvlc_alexnet (models/bvlc_alexnet/train_val.prototxt), and the
same structure scaled down to 32x32 images.

The layers carry Caffe's names (conv1, relu1, norm1, pool1, ..., fc8), so per-layer
timings and checkpoints read like Caffe's. Pooling rounds its output size up
(Caffe's rule, ceil_mode=True); LRN normalizes across 5 channels with alpha 1e-4,
beta 0.75 and k 1. As in Caffe's model, conv2, conv4 and conv5 are split into
two groups (the two GPUs of the original).
"""
import collections

from .. import nn
from ..nn import init

# (name, out_channels, kernel, stride, padding, groups, LRN after, max pool after)
_CONVS = (("conv1", 96, 11, 4, 0, 1, True, True),
          ("conv2", 256, 5, 1, 2, 2, True, True),
          ("conv3", 384, 3, 1, 1, 1, False, False),
          ("conv4", 384, 3, 1, 1, 2, False, False),
          ("conv5", 256, 3, 1, 1, 2, False, True))


def _alexnet_layers(in_channels, convs, image_size, hidden, num_classes, dropout):
    """Caffe's layer sequence for conv specs `convs` and fully connected widths `hidden`."""
    layers, channels, size = [], in_channels, image_size
    for name, out, kernel, stride, padding, groups, lrn, pool in convs:
        index = name[4:]
        layers.append((name, nn.Conv2d(channels, out, kernel, stride=stride, padding=padding,
                                       groups=groups)))
        layers.append((f"relu{index}", nn.ReLU(inplace=True)))
        size = (size + 2 * padding - kernel) // stride + 1
        if lrn:
            layers.append((f"norm{index}", nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)))
        if pool:
            layers.append((f"pool{index}", nn.MaxPool2d(3, stride=2, ceil_mode=True)))
            size = -(-(size - 3) // 2) + 1  # Caffe's ceil rounding (no window starts in padding)
        channels = out
    layers.append(("flatten", nn.Flatten()))
    features = channels * size * size
    for i, width in enumerate(hidden):
        layers += [(f"fc{6 + i}", nn.Linear(features, width)), (f"relu{6 + i}", nn.ReLU(inplace=True)),
                   (f"drop{6 + i}", nn.Dropout(dropout))]
        features = width
    layers.append((f"fc{6 + len(hidden)}", nn.Linear(features, num_classes)))
    return collections.OrderedDict(layers)


class _CaffeNet(nn.Sequential):
    image_size = None  # set by each model

    def forward(self, x):
        expected = (self.conv1.in_channels, self.image_size, self.image_size)
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"{type(self).__name__}: input must be (N, {expected[0]}, "
                             f"{expected[1]}, {expected[2]}) images; got shape {tuple(x.shape)}")
        return super().forward(x)


class AlexNet(_CaffeNet):
    """Caffe's bvlc_alexnet: input (N, 3, 227, 227), logits (N, num_classes).

    conv1 96 11x11/4, relu, LRN, max pool 3/2; conv2 256 5x5 pad 2 groups 2, relu, LRN,
    max pool 3/2; conv3 384 3x3 pad 1; conv4 384 3x3 pad 1 groups 2; conv5 256 3x3 pad 1
    groups 2, relu, max pool 3/2; fc6 4096, relu, dropout 0.5; fc7 4096, relu, dropout;
    fc8. Weights start from Caffe's gaussian fillers (std 0.01; 0.005 for fc6 and fc7),
    biases from its constants (0.1 for conv2, conv4, conv5, fc6, fc7; 0 elsewhere)."""

    image_size = 227

    def __init__(self, num_classes=1000, in_channels=3, dropout=0.5):
        super().__init__(_alexnet_layers(in_channels, _CONVS, self.image_size, (4096, 4096),
                                         num_classes, dropout))
        self.reset_parameters()

    def reset_parameters(self):
        for name in ("conv1", "conv2", "conv3", "conv4", "conv5", "fc6", "fc7", "fc8"):
            layer = getattr(self, name)
            init.normal_(layer.weight, std=0.005 if name in ("fc6", "fc7") else 0.01)
            init.constant_(layer.bias, 0.1 if name in ("conv2", "conv4", "conv5", "fc6", "fc7")
                           else 0.0)


# AlexNet's structure for 32x32 images: 5x5 and 3x3 kernels at stride 1 (the 227-pixel
# model's 11x11/4 would leave nothing to pool), a quarter of the channels, narrower fc.
_SMALL_CONVS = (("conv1", 32, 5, 1, 2, 1, True, True),
                ("conv2", 64, 5, 1, 2, 2, True, True),
                ("conv3", 96, 3, 1, 1, 1, False, False),
                ("conv4", 96, 3, 1, 1, 2, False, False),
                ("conv5", 64, 3, 1, 1, 2, False, True))


class AlexNetSmall(_CaffeNet):
    """AlexNet scaled to (N, in_channels, 32, 32) images: the same layers (LRN, grouped
    conv2/conv4/conv5, overlapping 3/2 max pools with Caffe's rounding, two dropout fc
    layers) with 32, 64, 96, 96, 64 channels and fc6/fc7 of 256. Weights start from
    Caffe's "xavier" filler (variance 1 / fan_in), biases from zero."""

    image_size = 32

    def __init__(self, num_classes=10, in_channels=1, dropout=0.5):
        super().__init__(_alexnet_layers(in_channels, _SMALL_CONVS, self.image_size, (256, 256),
                                         num_classes, dropout))
        self.reset_parameters()

    def reset_parameters(self):
        for name in ("conv1", "conv2", "conv3", "conv4", "conv5", "fc6", "fc7", "fc8"):
            layer = getattr(self, name)
            init.kaiming_uniform_(layer.weight, a=1)  # U(+-sqrt(3 / fan_in))
            init.zeros_(layer.bias)
