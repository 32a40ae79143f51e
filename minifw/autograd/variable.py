"""torch.autograd.variable's name: Variable (defined in minifw.autograd)."""
from . import Variable

__all__ = ["Variable"]
