"""torch.utils.hooks's RemovableHandle: what registering a module's or tensor's hook returns."""
from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle"]
