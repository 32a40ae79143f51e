"""torchvision's names for minifw's image data: `minifw.vision.transforms` is the module
minifw.data.transforms, `minifw.vision.datasets` holds MNIST, FashionMNIST, KMNIST, CIFAR10,
CIFAR100, ImageFolder and DatasetFolder, and `minifw.vision.utils` make_grid and save_image,
so `from torchvision import datasets, transforms, utils` becomes
`from minifw.vision import datasets, transforms, utils`."""
import sys

from ..data import transforms
from . import datasets, utils

# `import minifw.vision.transforms` finds the very module minifw.data.transforms, not a copy
sys.modules[__name__ + ".transforms"] = transforms

__all__ = ["datasets", "transforms", "utils"]
