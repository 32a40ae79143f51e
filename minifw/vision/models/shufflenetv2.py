"""torchvision's ShuffleNetV2 (Ma et al., "ShuffleNet V2: Practical Guidelines for Efficient CNN
Architecture Design", 2018) at 0.5, 1.0, 1.5 and 2.0 times the channels: blocks that split the
channels in two, pass one half through unchanged and the other through a 1x1, depthwise 3x3,
1x1 branch (downsampling blocks process both halves, the whole input each), concatenate, and
shuffle the channels so that the halves mix in the next block.

The modules carry torchvision's names (conv1.0, stage2.0.branch1.0, stage3.1.branch2.3,
conv5.1, fc), so a state_dict of torchvision's model loads into these."""
from ... import cat, nn
from ...nn import functional as F
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, register_model


def channel_shuffle(x, groups):
    """(N, C, H, W) with its channels, read as `groups` rows of C / groups, read out by columns:
    channel i of group g goes to i * groups + g."""
    return F.channel_shuffle(x, groups)


class InvertedResidual(nn.Module):
    """stride 1: the first half of the `inp` channels as they are, next to the second half
    through `branch2` (1x1 with batch norm and ReLU, depthwise 3x3 with batch norm, 1x1 with
    batch norm and ReLU); inp must be twice oup // 2. stride 2 or 3: `branch1` (depthwise 3x3 of
    that stride with batch norm, 1x1 with batch norm and ReLU) and branch2 (its depthwise
    convolution strided) of the whole input, oup // 2 channels each. The two are concatenated
    and their channels shuffled in 2 groups."""

    def __init__(self, inp, oup, stride):
        super().__init__()
        if stride not in (1, 2, 3):
            raise ValueError(f"InvertedResidual: stride must be 1, 2 or 3, got {stride!r}")
        self.stride = stride
        branch_features = oup // 2
        if stride == 1 and inp != branch_features * 2:
            raise ValueError(f"InvertedResidual: at stride 1 inp must be 2 * (oup // 2) = {branch_features * 2} "
                             f"(half passes through unchanged), got inp={inp} and oup={oup}")
        if stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=stride, padding=1), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3, stride=stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        """A convolution of `i` channels to `o` in `i` groups (depthwise where o == i)."""
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = cat((x1, self.branch2(x2)), dim=1)
        else:
            out = cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """`conv1` (3x3/2 convolution to stages_out_channels[0] with batch norm and ReLU), `maxpool`
    (3/2), `stage2`, `stage3`, `stage4` (stages_repeats[i] blocks each, the first of stride 2,
    to stages_out_channels[i + 1] channels), `conv5` (1x1 to stages_out_channels[4] with batch
    norm and ReLU), a global mean and `fc`. The layers keep nn's own initialization."""

    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
        super().__init__()
        _positive_int("ShuffleNetV2", "num_classes", num_classes)
        if len(stages_repeats) != 3:
            raise ValueError(f"ShuffleNetV2: stages_repeats must be 3 positive ints, got {stages_repeats!r}")
        if len(stages_out_channels) != 5:
            raise ValueError(f"ShuffleNetV2: stages_out_channels must be 5 positive ints, got {stages_out_channels!r}")
        self._stage_out_channels = stages_out_channels
        input_channels = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, input_channels, 3, 2, 1, bias=False), nn.BatchNorm2d(input_channels),
                                   nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, output_channels in zip(("stage2", "stage3", "stage4"), stages_repeats,
                                                  stages_out_channels[1:]):
            blocks = [inverted_residual(input_channels, output_channels, 2)]
            blocks += [inverted_residual(output_channels, output_channels, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*blocks))
            input_channels = output_channels
        output_channels = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        self.fc = nn.Linear(output_channels, num_classes)

    def forward(self, x):
        x = self.stage4(self.stage3(self.stage2(self.maxpool(self.conv1(x)))))
        return self.fc(self.conv5(x).mean([2, 3]))


# blocks per stage (each variant's list is the channels of conv1, the three stages and conv5)
_REPEATS = [4, 8, 4]


@register_model()
def shufflenet_v2_x0_5(*, weights=None, progress=True, **kwargs):
    """ShuffleNetV2 at 0.5 times the channels; 1.4M parameters at 1000 classes. weights: None
    only (minifw downloads nothing); progress is ignored; the rest goes to ShuffleNetV2."""
    _check_no_weights("shufflenet_v2_x0_5", weights, kwargs)
    return ShuffleNetV2(_REPEATS, [24, 48, 96, 192, 1024], **kwargs)


@register_model()
def shufflenet_v2_x1_0(*, weights=None, progress=True, **kwargs):
    """ShuffleNetV2 at 1.0 times the channels; 2.3M parameters. The rest as shufflenet_v2_x0_5."""
    _check_no_weights("shufflenet_v2_x1_0", weights, kwargs)
    return ShuffleNetV2(_REPEATS, [24, 116, 232, 464, 1024], **kwargs)


@register_model()
def shufflenet_v2_x1_5(*, weights=None, progress=True, **kwargs):
    """ShuffleNetV2 at 1.5 times the channels; 3.5M parameters. The rest as shufflenet_v2_x0_5."""
    _check_no_weights("shufflenet_v2_x1_5", weights, kwargs)
    return ShuffleNetV2(_REPEATS, [24, 176, 352, 704, 1024], **kwargs)


@register_model()
def shufflenet_v2_x2_0(*, weights=None, progress=True, **kwargs):
    """ShuffleNetV2 at 2.0 times the channels; 7.4M parameters. The rest as shufflenet_v2_x0_5."""
    _check_no_weights("shufflenet_v2_x2_0", weights, kwargs)
    return ShuffleNetV2(_REPEATS, [24, 244, 488, 976, 2048], **kwargs)
