"""torchvision's names for minifw's image data: `minifw.vision.transforms` is the module
minifw.data.transforms, `minifw.vision.datasets` holds MNIST, FashionMNIST, KMNIST, CIFAR10,
CIFAR100, ImageFolder and DatasetFolder, and `minifw.vision.utils` make_grid and save_image,
so `from torchvision import datasets, transforms, utils` becomes
`from minifw.vision import datasets, transforms, utils` (and `from torchvision.transforms import v2`
becomes `from minifw.vision.transforms import v2`; `import torchvision.transforms.functional as TF`
`import minifw.vision.transforms.functional as TF`, and v2's functional the same way)."""
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

__all__ = ["datasets", "transforms", "utils"]
