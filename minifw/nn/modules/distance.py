"""Distances: nn.CosineSimilarity and nn.PairwiseDistance (as torch.nn.modules.distance)."""
from .. import functional as F
from .module import Module


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along dim (F.cosine_similarity)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p along the last dim (F.pairwise_distance)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
