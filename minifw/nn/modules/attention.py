"""MultiheadAttention: parameters, initialization and forward as PyTorch's, so a state_dict
moves between the two."""
from ...tensor import Tensor
from .. import functional as F
from .. import init
from .linear import Linear
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention: a Linear (PyTorch's class of this name
    exists for its quantization tools; here it only gives the same repr)."""


class MultiheadAttention(Module):
    """Attention of num_heads heads of embed_dim // num_heads features each
    (F.multi_head_attention_forward). Inputs are (L, N, E), or (N, L, E) with
    batch_first=True, or unbatched (L, E). key and value may have kdim and vdim features, which
    takes separate q/k/v_proj_weight in place of the packed in_proj_weight."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        cls = "MultiheadAttention"
        dtype, dev = _factory(cls, dtype, device)
        self.embed_dim = _positive_int(cls, "embed_dim", embed_dim)
        self.num_heads = _positive_int(cls, "num_heads", num_heads)
        self.kdim = embed_dim if kdim is None else _positive_int(cls, "kdim", kdim)
        self.vdim = embed_dim if vdim is None else _positive_int(cls, "vdim", vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if embed_dim % num_heads:
            raise ValueError(f"{cls}: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.dropout = F._probability(cls, dropout)
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty_parameter((3 * embed_dim, embed_dim), dtype, dev)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty_parameter((embed_dim, embed_dim), dtype, dev)
            self.k_proj_weight = _empty_parameter((embed_dim, self.kdim), dtype, dev)
            self.v_proj_weight = _empty_parameter((embed_dim, self.vdim), dtype, dev)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = _empty_parameter((3 * embed_dim,), dtype, dev)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=dev, dtype=dtype)
        if add_bias_kv:
            self.bias_k = _empty_parameter((1, 1, embed_dim), dtype, dev)
            self.bias_v = _empty_parameter((1, 1, embed_dim), dtype, dev)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """Glorot-uniform projections, zero biases, Glorot-normal bias_k and bias_v; out_proj's
        weight keeps Linear's initialization."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights or None) as F.multi_head_attention_forward's, with the
        batch dim first in and out when batch_first (the weights always have it first)."""
        batched = isinstance(query, Tensor) and query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) if isinstance(t, Tensor) else t
                                 for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

