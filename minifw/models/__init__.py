"""Reference models built from minifw.nn."""
from .alexnet import AlexNet, AlexNetSmall
from .lenet import LeNet
