"""Utilities over parameters and sequences (as torch.nn.utils): gradient clipping, and
packing / padding of variable-length sequences for recurrent layers (nn.utils.rnn)."""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
