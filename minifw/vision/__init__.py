"""torchvision's names for minifw's image data: `minifw.vision.transforms` is the module
minifw.data.transforms and `minifw.vision.datasets` holds MNIST, ImageFolder and DatasetFolder,
so `from torchvision import datasets, transforms` becomes
`from minifw.vision import datasets, transforms`."""
import sys

from ..data import transforms
from . import datasets

# `import minifw.vision.transforms` finds the very module minifw.data.transforms, not a copy
sys.modules[__name__ + ".transforms"] = transforms

__all__ = ["datasets", "transforms"]
