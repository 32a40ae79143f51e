"""Embedding: a lookup table of vectors; EmbeddingBag: reductions over bags of them."""
from ...autograd import no_grad
from ...checks import check_bool, check_choice
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int


class Embedding(Module):
    """A lookup table of num_embeddings vectors of size embedding_dim, initialized N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        dtype, dev = _factory("Embedding", dtype, device)
        self.num_embeddings = _positive_int("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _positive_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            padding_idx = F._padding_index("Embedding", padding_idx, num_embeddings)
        if sparse:
            raise ValueError("Embedding: sparse gradients are not supported; sparse must be False")
        if max_norm is not None:  # checked when built (PyTorch takes a negative one silently)
            F._real("Embedding", "max_norm", max_norm, minimum=0.0)
        F._real("Embedding", "norm_type", norm_type)
        check_bool("Embedding", "scale_grad_by_freq", scale_grad_by_freq)
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty_parameter((num_embeddings, embedding_dim), dtype, dev)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape {(num_embeddings, embedding_dim)}, "
                                 f"got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embedding vectors (F.embedding_bag), weight
    (num_embeddings, embedding_dim) initialized N(0, 1), as Embedding's."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        fn = "EmbeddingBag"
        dtype, dev = _factory(fn, dtype, device)
        self.num_embeddings = _positive_int(fn, "num_embeddings", num_embeddings)
        self.embedding_dim = _positive_int(fn, "embedding_dim", embedding_dim)
        if padding_idx is not None:
            padding_idx = F._padding_index(fn, padding_idx, num_embeddings)
        check_choice(fn, "mode", mode, ("sum", "mean", "max"))
        if check_bool(fn, "sparse", sparse):
            raise ValueError(f"{fn}: sparse gradients are not supported; sparse must be False")
        if max_norm is not None:
            F._real(fn, "max_norm", max_norm, minimum=0.0)
        F._real(fn, "norm_type", norm_type)
        check_bool(fn, "scale_grad_by_freq", scale_grad_by_freq)
        check_bool(fn, "include_last_offset", include_last_offset)
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = _empty_parameter((num_embeddings, embedding_dim), dtype, dev)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"{fn}: _weight must have shape {(num_embeddings, embedding_dim)}, "
                                 f"got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight)

    reset_parameters = Embedding.reset_parameters

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        rows, dim = embeddings.shape
        bag = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
