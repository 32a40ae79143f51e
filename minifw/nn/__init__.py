"""Neural-network building blocks: Module, Parameter, layers, losses (as torch.nn).

    import minifw.nn as nn
    import minifw.nn.functional as F
"""
from . import functional, init, utils
from .module import Module
from .parameter import Parameter
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .layers import (AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, CrossEntropyLoss, Dropout, ELU,
                     Embedding, Flatten, LeakyReLU, Linear, LocalResponseNorm, LogSoftmax, MaxPool2d,
                     ModuleList, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh)
