"""torchvision's ResNets (He et al., "Deep Residual Learning for Image Recognition", 2015), with
its ResNeXt (grouped 3x3 convolutions) and Wide ResNet (wider bottlenecks) variants.

The modules carry torchvision's names (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0, fc),
so a state_dict of torchvision's model loads into these. As in torchvision (ResNet v1.5), a
Bottleneck strides in its 3x3 convolution, not in its first 1x1."""
from ... import nn
from ...nn.modules.utils import _positive_int
from ._api import _check_no_weights, _set_fixed, register_model


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """A 3x3 convolution without bias, padded to keep the size at stride 1."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """A 1x1 convolution without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions (the first may stride), each followed by batch norm, with the
    input (or `downsample` of it) added before the last ReLU. ResNet-18 and -34's block."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if groups != 1 or base_width != 64:
            raise ValueError(f"BasicBlock only supports groups=1 and base_width=64, got groups={groups} "
                             f"and base_width={base_width} (use Bottleneck for ResNeXt and Wide ResNet)")
        if dilation > 1:
            raise NotImplementedError(f"BasicBlock: dilation > 1 is not supported, got dilation={dilation} "
                                      f"(replace_stride_with_dilation needs Bottleneck)")
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 convolution down to `width` channels, 3x3 (grouped, strided, dilated as asked), 1x1
    up to planes * 4, batch norm after each, the input (or `downsample` of it) added before
    the last ReLU. width = planes * base_width / 64 * groups: planes for ResNet-50/101/152,
    more for ResNeXt (groups > 1) and Wide ResNet (base_width 128)."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """Stem (7x7/2 convolution to 64 channels, batch norm, ReLU, 3x3/2 max pool), four stages
    of `block`s (layers[i] of them, 64, 128, 256, 512 planes, the last three halving the size
    in their first block), global average pooling and a linear classifier. Images of any size
    from 32x32 up go in ((N, 3, H, W)); logits (N, num_classes) come out.

    replace_stride_with_dilation: three bools, one per stage 2-4, replacing that stage's
    stride by dilating its convolutions (for dense prediction; Bottleneck only).
    zero_init_residual: start each block's last batch norm scale at 0, so that every block
    begins as the identity (Goyal et al., 2017). Convolutions start from Kaiming normal
    (fan_out), batch norms at scale 1 and shift 0, the classifier as nn.Linear does."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        _positive_int("ResNet", "num_classes", num_classes)
        if len(layers) != 4:
            raise ValueError(f"ResNet: layers must give 4 block counts, got {list(layers)}")
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError(f"ResNet: replace_stride_with_dilation must be None or 3 bools (stages 2-4), "
                             f"got {replace_stride_with_dilation!r}")
        self._norm_layer = nn.BatchNorm2d if norm_layer is None else norm_layer
        self.inplanes = 64
        self.dilation = 1
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                last_norm = m.bn3 if isinstance(m, Bottleneck) else m.bn2 if isinstance(m, BasicBlock) else None
                if last_norm is not None and getattr(last_norm, "weight", None) is not None:
                    nn.init.constant_(last_norm.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        """One stage: `blocks` blocks of `planes`, the first striding by `stride` (or, with
        `dilate`, dilating the rest of the network by it instead) and projecting the shortcut
        with a strided 1x1 convolution and batch norm where the shape changes."""
        norm_layer = self._norm_layer
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x).flatten(1)
        return self.fc(x)


def _resnet(name, block, layers, weights, kwargs):
    _check_no_weights(name, weights, kwargs)
    return ResNet(block, layers, **kwargs)


# The builders take torchvision's arguments: weights (None only here), progress (ignored: there
# is no download) and the ResNet's keyword arguments.

@register_model()
def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18: BasicBlocks [2, 2, 2, 2]; 11.7M parameters at 1000 classes."""
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, kwargs)


@register_model()
def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34: BasicBlocks [3, 4, 6, 3]; 21.8M parameters."""
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, kwargs)


@register_model()
def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50: Bottlenecks [3, 4, 6, 3]; 25.6M parameters."""
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, kwargs)


@register_model()
def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101: Bottlenecks [3, 4, 23, 3]; 44.5M parameters."""
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, kwargs)


@register_model()
def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152: Bottlenecks [3, 8, 36, 3]; 60.2M parameters."""
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, kwargs)


def _resnext(name, layers, groups, width_per_group, weights, kwargs):
    _set_fixed(name, kwargs, "groups", groups)
    _set_fixed(name, kwargs, "width_per_group", width_per_group)
    return _resnet(name, Bottleneck, layers, weights, kwargs)


@register_model()
def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d (Xie et al., 2016): ResNet-50 whose 3x3 convolutions have 32 groups,
    of 4 channels each in the first stage (twice that in each later one); 25.0M parameters."""
    return _resnext("resnext50_32x4d", [3, 4, 6, 3], 32, 4, weights, kwargs)


@register_model()
def resnext101_32x8d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 32x8d: ResNet-101 with 32 groups of 8; 88.8M parameters."""
    return _resnext("resnext101_32x8d", [3, 4, 23, 3], 32, 8, weights, kwargs)


@register_model()
def resnext101_64x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 64x4d: ResNet-101 with 64 groups of 4; 83.5M parameters."""
    return _resnext("resnext101_64x4d", [3, 4, 23, 3], 64, 4, weights, kwargs)


@register_model()
def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2 (Zagoruyko and Komodakis, 2016): ResNet-50 with bottlenecks twice as
    wide (the outer 1x1 convolutions keep their widths); 68.9M parameters."""
    _set_fixed("wide_resnet50_2", kwargs, "width_per_group", 128)
    return _resnet("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], weights, kwargs)


@register_model()
def wide_resnet101_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-101-2: ResNet-101 with bottlenecks twice as wide; 126.9M parameters."""
    _set_fixed("wide_resnet101_2", kwargs, "width_per_group", 128)
    return _resnet("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], weights, kwargs)
