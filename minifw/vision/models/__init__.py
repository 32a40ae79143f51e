"""torchvision.models' image classifiers under its names, built from minifw.nn: ResNet (18, 34,
50, 101, 152), ResNeXt and Wide ResNet, VGG (11, 13, 16, 19, with and without batch norm),
AlexNet, DenseNet (121, 161, 169, 201), MobileNetV2, MobileNetV3 (large, small), EfficientNet
(B0-B7, V2 S/M/L), ShuffleNetV2 (x0.5, x1.0, x1.5, x2.0), SqueezeNet (1.0, 1.1) and
ConvNeXt (tiny, small, base, large), and get_model / list_models.

Each model has torchvision's structure and parameter and buffer names, so that a state_dict
torchvision's model saved loads into it (model.load_state_dict(minifw.load(path))). Pretrained
weights are never downloaded: the builders take weights=None only, and refuse any other
`weights` (and pretrained=True) with a ValueError that says how to load a file instead."""
from ._api import get_model, get_model_builder, list_models
from .alexnet import AlexNet, alexnet
from .convnext import ConvNeXt, convnext_base, convnext_large, convnext_small, convnext_tiny
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201
from .efficientnet import (EfficientNet, efficientnet_b0, efficientnet_b1, efficientnet_b2, efficientnet_b3,
                           efficientnet_b4, efficientnet_b5, efficientnet_b6, efficientnet_b7, efficientnet_v2_s,
                           efficientnet_v2_m, efficientnet_v2_l)
from .mobilenetv2 import MobileNetV2, mobilenet_v2
from .mobilenetv3 import MobileNetV3, mobilenet_v3_large, mobilenet_v3_small
from .resnet import (BasicBlock, Bottleneck, ResNet, resnet18, resnet34, resnet50, resnet101, resnet152,
                     resnext50_32x4d, resnext101_32x8d, resnext101_64x4d, wide_resnet50_2, wide_resnet101_2)
from .shufflenetv2 import (ShuffleNetV2, shufflenet_v2_x0_5, shufflenet_v2_x1_0, shufflenet_v2_x1_5,
                           shufflenet_v2_x2_0)
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from .vgg import VGG, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

__all__ = ["AlexNet", "BasicBlock", "Bottleneck", "ConvNeXt", "DenseNet", "EfficientNet", "MobileNetV2", "MobileNetV3",
           "ResNet", "ShuffleNetV2", "SqueezeNet", "VGG", "alexnet", "convnext_base", "convnext_large",
           "convnext_small", "convnext_tiny", "densenet121", "densenet161", "densenet169", "densenet201",
           "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3", "efficientnet_b4",
           "efficientnet_b5", "efficientnet_b6", "efficientnet_b7", "efficientnet_v2_l", "efficientnet_v2_m",
           "efficientnet_v2_s", "get_model", "get_model_builder", "list_models", "mobilenet_v2", "mobilenet_v3_large",
           "mobilenet_v3_small", "resnet101", "resnet152", "resnet18", "resnet34", "resnet50", "resnext101_32x8d",
           "resnext101_64x4d", "resnext50_32x4d", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5",
           "shufflenet_v2_x2_0", "squeezenet1_0", "squeezenet1_1", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16",
           "vgg16_bn", "vgg19", "vgg19_bn", "wide_resnet101_2", "wide_resnet50_2"]
