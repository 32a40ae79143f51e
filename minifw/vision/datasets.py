"""Datasets under torchvision.datasets' names (the classes of minifw.data)."""
from ..data.cifar import CIFAR10, CIFAR100
from ..data.image_folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from ..data.mnist import KMNIST, MNIST, FashionMNIST

__all__ = ["CIFAR10", "CIFAR100", "DatasetFolder", "FashionMNIST", "IMG_EXTENSIONS", "ImageFolder",
           "KMNIST", "MNIST", "default_loader", "pil_loader"]
