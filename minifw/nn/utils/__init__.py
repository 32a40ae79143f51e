"""Utilities over parameters and sequences (as torch.nn.utils): gradient clipping,
parameters as one vector, parametrizations (nn.utils.parametrize, weight and spectral
normalization in nn.utils.parametrizations; the older hook-based weight_norm and
spectral_norm here), packing / padding of variable-length sequences for recurrent
layers (nn.utils.rnn), batch-norm fusion (nn.utils.fusion), functional_call
(nn.utils.stateless), skip_init and the memory-format converters."""
from . import fusion, memory_format, parametrizations, parametrize, rnn, stateless
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .weight_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
