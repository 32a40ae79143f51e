"""torch.autograd.grad_mode's names: the switches of gradient recording."""
from . import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "no_grad", "set_grad_enabled"]
