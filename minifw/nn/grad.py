"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight,
given the gradient of its output, computed by minifw's autograd through the convolution
itself (so every engine, device and algorithm serves them)."""
from .. import autograd
from ..tensor import Tensor, zeros
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _size(fn, name, size, rank):
    size = tuple(size)
    if len(size) != rank + 2 or not all(isinstance(s, int) and s >= 0 for s in size):
        raise ValueError(f"{fn}: {name} must be {rank + 2} sizes (N, C, spatial...), got {size}")
    return size


def _gradient(fn, rank, wrt, given, size, grad_output, stride, padding, dilation, groups):
    for name, t in (("grad_output", grad_output), ("input" if wrt == "weight" else "weight", given)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    size = _size(fn, f"{wrt}_size" if wrt == "weight" else "input_size", size, rank)
    conv = getattr(F, f"conv{rank}d")
    with autograd.enable_grad():
        leaf = zeros(*size, dtype=given.dtype, device=given.device, requires_grad=True)
        pair = (given, leaf) if wrt == "weight" else (leaf, given)
        out = conv(*pair, None, stride, padding, dilation, groups)
        if out.shape != grad_output.shape:
            raise ValueError(f"{fn}: grad_output has shape {grad_output.shape}, but the "
                             f"convolution's output has {out.shape}")
        gradient, = autograd.grad(out, leaf, grad_output, create_graph=grad_output.requires_grad
                                  or given.requires_grad)
    return gradient


def _pair(rank):
    def input_gradient(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _gradient(f"conv{rank}d_input", rank, "input", weight, input_size, grad_output,
                         stride, padding, dilation, groups)

    def weight_gradient(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _gradient(f"conv{rank}d_weight", rank, "weight", input, weight_size, grad_output,
                         stride, padding, dilation, groups)
    input_gradient.__name__ = input_gradient.__qualname__ = f"conv{rank}d_input"
    weight_gradient.__name__ = weight_gradient.__qualname__ = f"conv{rank}d_weight"
    input_gradient.__doc__ = (f"The gradient of conv{rank}d with respect to an input of size "
                              f"input_size, given the weight and the output's gradient.")
    weight_gradient.__doc__ = (f"The gradient of conv{rank}d with respect to a weight of size "
                               f"weight_size, given the input and the output's gradient.")
    return input_gradient, weight_gradient


conv1d_input, conv1d_weight = _pair(1)
conv2d_input, conv2d_weight = _pair(2)
conv3d_input, conv3d_weight = _pair(3)
