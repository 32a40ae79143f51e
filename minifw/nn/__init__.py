"""Neural-network building blocks: Module, Parameter, layers, losses (as torch.nn).

    import minifw.nn as nn
    import minifw.nn.functional as F
"""
from . import attention, functional, grad, init, parallel, utils
from . import modules
from .parameter import Parameter
from .modules import *  # noqa: F401,F403 (every layer, as torch.nn re-exports torch.nn.modules)
from .parallel import DataParallel
