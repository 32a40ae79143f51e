"""Folding an eval-mode batch normalization into the convolution or linear layer before it,
as torch.nn.utils.fusion: y = bn(conv(x)) becomes one conv with new weight and bias.

With s = bn_weight / sqrt(running_var + eps), the fused weight is the conv weight scaled by s
along its output channels and the fused bias (conv_bias - running_mean) * s + bn_bias."""
import copy

from ...autograd import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(fn, *modules):
    for m in modules:
        if m.training:
            raise AssertionError(f"{fn}: fusion only works in eval mode; "
                                 f"{type(m).__name__} is in training mode (call .eval() first)")


def _scale(fn, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    for name, t in (("bn_rm", bn_rm), ("bn_rv", bn_rv)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor (the running statistics); got "
                            f"{type(t).__name__}")
    if bn_w is None:
        bn_w = bn_rm.new_ones(bn_rm.shape)
    if bn_b is None:
        bn_b = bn_rm.new_zeros(bn_rm.shape)
    return bn_w * (bn_rv + bn_eps).rsqrt(), bn_b


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(fused weight, fused bias) as Parameters, for a convolution (transpose=True: a
    transposed convolution, whose output channels are the weight's dimension 1) followed by
    a batch normalization with running statistics bn_rm, bn_rv and affine bn_w, bn_b (either
    may be None)."""
    fn = "fuse_conv_bn_weights"
    if not isinstance(conv_w, Tensor):
        raise TypeError(f"{fn}: conv_w must be a Tensor; got {type(conv_w).__name__}")
    dtype = conv_w.dtype
    scale, bn_b = _scale(fn, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    if conv_b is None:
        conv_b = bn_rm.new_zeros(bn_rm.shape)
    shape = [1] * conv_w.dim()
    shape[1 if transpose else 0] = -1
    with no_grad():
        weight = (conv_w * scale.reshape(shape)).to(dtype)
        bias = ((conv_b - bn_rm) * scale + bn_b).to(conv_b.dtype)
    return (Parameter(weight, requires_grad=conv_w.requires_grad),
            Parameter(bias, requires_grad=conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of `conv` (in eval mode) whose weight and bias fold in `bn` (in eval mode)."""
    _check_eval("fuse_conv_bn_eval", conv, bn)
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the batch norm must track running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(fused weight, fused bias) as Parameters, for a linear layer followed by a batch
    normalization over its outputs."""
    fn = "fuse_linear_bn_weights"
    if not isinstance(linear_w, Tensor):
        raise TypeError(f"{fn}: linear_w must be a Tensor; got {type(linear_w).__name__}")
    scale, bn_b = _scale(fn, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    if linear_b is None:
        linear_b = bn_rm.new_zeros(bn_rm.shape)
    with no_grad():
        weight = linear_w * scale.unsqueeze(-1)
        bias = (linear_b - bn_rm) * scale + bn_b
    return (Parameter(weight, requires_grad=linear_w.requires_grad),
            Parameter(bias, requires_grad=linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` (in eval mode) whose weight and bias fold in `bn` (in eval mode);
    the batch norm's features must equal the linear layer's outputs (or be 1, broadcast)."""
    _check_eval("fuse_linear_bn_eval", linear, bn)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("fuse_linear_bn_eval: to fuse, linear.out_features must equal "
                             "bn.num_features or bn.num_features must be 1; got "
                             f"{linear.out_features} and {bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the batch norm must track running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
