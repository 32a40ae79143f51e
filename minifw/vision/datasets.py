"""Datasets under torchvision.datasets' names (the classes of minifw.data)."""
from ..data.image_folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from ..data.mnist import MNIST

__all__ = ["DatasetFolder", "IMG_EXTENSIONS", "ImageFolder", "MNIST", "default_loader", "pil_loader"]
