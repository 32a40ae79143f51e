"""Reference models built from minifw.nn."""
from .alexnet import AlexNet, AlexNetSmall
from .language import CharLSTM, WordLM, detach_hidden
from .lenet import LeNet
