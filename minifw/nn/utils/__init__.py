"""Utilities over parameters and sequences (as torch.nn.utils): gradient clipping,
parameters as one vector, parametrizations (nn.utils.parametrize, weight and spectral
normalization in nn.utils.parametrizations; the older hook-based weight_norm and
spectral_norm here), and packing / padding of variable-length sequences for recurrent
layers (nn.utils.rnn)."""
from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .weight_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
