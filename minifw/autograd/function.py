"""torch.autograd.function's names: Function, its context FunctionCtx, once_differentiable."""
from . import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
