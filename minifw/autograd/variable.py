"""torch.autograd.variable's Variable, which PyTorch keeps for scripts written before tensors
and variables were one type."""
import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ..tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(t, requires_grad=False)`: a new leaf tensor on t's data (t.detach() with
    requires_grad set), as in PyTorch; `Variable()` is an empty tensor. Every Tensor is an
    instance of Variable. `volatile` has no effect (use `with minifw.no_grad():`) and warns."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from ..tensor import Tensor, tensor
        if volatile:
            warnings.warn("Variable: volatile was removed and has no effect; use `with minifw.no_grad():` "
                          "instead", UserWarning, stacklevel=2)
        if data is None:
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable: data must be a Tensor, got {type(data).__name__}")
        if not isinstance(requires_grad, bool):
            raise TypeError(f"Variable: requires_grad must be a bool, got {type(requires_grad).__name__}")
        return data.detach().requires_grad_(requires_grad)
