"""torchvision's names for minifw's image data: `minifw.vision.transforms` is the module
minifw.data.transforms, `minifw.vision.datasets` holds MNIST, FashionMNIST, KMNIST, CIFAR10,
CIFAR100, ImageFolder and DatasetFolder, `minifw.vision.models` torchvision's ResNet, VGG,
AlexNet, MobileNetV2 and SqueezeNet (loadable from torchvision's checkpoints, never downloaded),
and `minifw.vision.utils` make_grid and save_image, so
`from torchvision import datasets, models, transforms, utils` becomes
`from minifw.vision import datasets, models, transforms, utils` (and
`from torchvision.transforms import v2` becomes `from minifw.vision.transforms import v2`;
`import torchvision.transforms.functional as TF` `import minifw.vision.transforms.functional as TF`,
and v2's functional the same way). `models` is imported when first asked for, as it imports
minifw.nn, which the data layers do not need."""
import sys

from ..data import transforms
from . import datasets, utils

# `import minifw.vision.transforms` finds the very module minifw.data.transforms, not a copy,
# and `import minifw.vision.transforms.v2` its v2 (minifw.data.transforms_v2); the same for
# `.transforms.functional` and `.transforms.v2.functional`
sys.modules[__name__ + ".transforms"] = transforms
sys.modules[__name__ + ".transforms.v2"] = transforms.v2
sys.modules[__name__ + ".transforms.functional"] = transforms.functional
sys.modules[__name__ + ".transforms.v2.functional"] = transforms.v2.functional


def __getattr__(name):
    if name == "models":
        import importlib
        return importlib.import_module(__name__ + ".models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["datasets", "models", "transforms", "utils"]
