"""The Transformer of Vaswani et al. (2017): encoder and decoder layers, their stacks and the
whole model, with PyTorch's arguments and submodule names (self_attn, linear1, norm1, ...)
so that state_dicts move between the two."""
import copy
import math

from ...checks import check_bool
from ...tensor import Tensor, full, get_default_dtype
from .. import functional as F
from .. import init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm
from .utils import _factory, _positive_int


def _activation(cls, activation):
    """'relu', 'gelu' or any callable (a function or a module, such as nn.GELU())."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise ValueError(f"{cls}: activation must be 'relu', 'gelu' or a callable, got "
                         f"{activation!r}")
    if not callable(activation):
        raise TypeError(f"{cls}: activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: 0 where query i may see key j (j <= i), -inf above the diagonal."""
    sz = _positive_int("generate_square_subsequent_mask", "sz", sz)
    dtype = get_default_dtype() if dtype is None else dtype
    return full((sz, sz), -math.inf, dtype=dtype, device=device).triu(diagonal=1)


def _is_causal(cls, name, mask, is_causal, size):
    """is_causal as given, or (None) whether mask is the square subsequent mask of size."""
    if is_causal is not None:
        return check_bool(cls, name, is_causal)
    if mask is None or mask.dtype.kind != "f" or tuple(mask.shape) != (size, size):
        return False
    causal = _square_subsequent_mask(size, device=mask.device, dtype=mask.dtype)
    return bool((mask == causal).all())


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with a
    residual connection and layer norm: after it (post-norm) or, with norm_first, before it."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        factory = dict(device=dev, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = check_bool(cls, "norm_first", norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(cls, activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over tgt, attention over memory (multihead_attn), then the feed-forward
    block; each with a residual connection and layer norm (after, or before with norm_first)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        super().__init__()
        cls = type(self).__name__
        dtype, dev = _factory(cls, dtype, device)
        factory = dict(device=dev, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = check_bool(cls, "norm_first", norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(cls, activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(cls, layer, num_layers):
    if not isinstance(layer, Module):
        raise TypeError(f"{cls}: the layer to stack must be an nn.Module, got "
                        f"{type(layer).__name__}")
    num_layers = _positive_int(cls, "num_layers", num_layers)
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)]), num_layers


def _sequence_length(x, layers):
    """L of (L, N, E), (N, L, E) when the layers' attention is batch_first, or unbatched (L, E)."""
    batch_first = getattr(getattr(layers[0], "self_attn", None), "batch_first", False)
    return x.shape[1] if batch_first and x.ndim == 3 else x.shape[0]


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then norm (when given).
    enable_nested_tensor and mask_check are accepted for PyTorch's scripts; minifw has no
    nested tensors, so they change nothing."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        cls = type(self).__name__
        self.layers, self.num_layers = _clones(cls, encoder_layer, num_layers)
        self.norm = norm
        self.enable_nested_tensor = check_bool(cls, "enable_nested_tensor", enable_nested_tensor)
        self.mask_check = check_bool(cls, "mask_check", mask_check)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """is_causal=None: True when mask is the square subsequent mask (a hint only)."""
        if isinstance(src, Tensor):
            is_causal = _is_causal(type(self).__name__, "is_causal", mask, is_causal,
                                   _sequence_length(src, self.layers))
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=is_causal)
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer applied in turn over memory, then norm (when given)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers, self.num_layers = _clones(type(self).__name__, decoder_layer, num_layers)
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """tgt_is_causal=None: True when tgt_mask is the square subsequent mask (a hint only)."""
        if isinstance(tgt, Tensor):
            tgt_is_causal = _is_causal(type(self).__name__, "tgt_is_causal", tgt_mask,
                                       tgt_is_causal, _sequence_length(tgt, self.layers))
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """An encoder of num_encoder_layers TransformerEncoderLayers and a decoder of
    num_decoder_layers TransformerDecoderLayers, each stack ending in a LayerNorm; every weight
    matrix is then re-initialized Glorot-uniform, as PyTorch's."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory(type(self).__name__, dtype, device)
        factory = dict(device=dev, dtype=dtype)
        layer = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                     layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                     norm_first=norm_first, bias=bias, **factory)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        cls = type(self).__name__
        for name, t in (("src", src), ("tgt", tgt)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{cls}: {name} must be a minifw.Tensor, got {type(t).__name__}")
        if src.ndim == 3 and tgt.ndim == 3:
            b = 0 if self.batch_first else 1
            if src.shape[b] != tgt.shape[b]:
                raise ValueError(f"{cls}: src and tgt must have the same batch size (dim {b} "
                                 f"with batch_first={self.batch_first}); got src of shape "
                                 f"{tuple(src.shape)} and tgt of shape {tuple(tgt.shape)}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"{cls}: src and tgt must have d_model = {self.d_model} features "
                             f"(last dim); got src of shape {tuple(src.shape)} and tgt of shape "
                             f"{tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: -inf above the diagonal (future positions), 0 elsewhere."""
        return _square_subsequent_mask(sz, device, dtype)
