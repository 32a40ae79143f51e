"""Reference models built from minifw.nn."""
from .lenet import LeNet
