"""Parameter: a Tensor that a Module registers as learnable."""
import numpy as np

from ..tensor import Tensor, tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and that Module.parameters() finds.

    Parameter(data) shares the array of `data` (a Tensor or NumPy array)."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            array = np.empty(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._data
        else:
            array = tensor(data)._data
        self._set(array, None, 0, False)
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
