"""Results that are not computed from their inputs in a differentiable way: random draws
whose parameters are tensors (minifw.normal, poisson, binomial) and piecewise-constant
functions (minifw.angle of real numbers). Their gradient to each input is zero, as PyTorch's;
the node exists so that a loss built on such a result can still be differentiated (the
inputs' .grad become zeros), as in PyTorch."""
from .. import autograd, devices
from ..autograd import Function


class ZeroGradient(Function):
    @staticmethod
    def forward(ctx, *inputs, result):
        ctx.shapes = [(p.shape, p.dtype) for p in inputs]
        return result

    @staticmethod
    def backward(ctx, dy):
        zeros = tuple(devices.zeros(shape, dtype, devices.of(dy)) for shape, dtype in ctx.shapes)
        return zeros if len(zeros) > 1 else zeros[0]

    @staticmethod
    def backward_graph(ctx, dy):  # zeros, constants of the graph
        zeros = tuple(autograd.Tensor._make(devices.zeros(shape, dtype, devices.of(dy._data)))
                      for shape, dtype in ctx.shapes)
        return zeros if len(zeros) > 1 else zeros[0]


def with_zero_gradient(result, *inputs):
    """The array `result` as a Tensor, recorded (when grad mode is on and one of the Tensors
    among `inputs` requires grad) as a function of those Tensors with zero gradients."""
    tensors = [p for p in inputs if isinstance(p, autograd.Tensor)]
    if autograd.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return ZeroGradient.apply(*tensors, result=result)
    return autograd.Tensor._make(result)
