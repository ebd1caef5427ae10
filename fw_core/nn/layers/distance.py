"""CosineSimilarity and PairwiseDistance: modules around the functions of
:mod:`fw_core.ops.distance`, as PyTorch's."""

from __future__ import annotations

__all__ = ["CosineSimilarity", "PairwiseDistance"]

from ...ops.distance import cosine_similarity, pairwise_distance
from ..module import Module


class CosineSimilarity(Module):
    """Cosine of the angle between x1 and x2 along ``dim`` (eps floors each norm).

    Shape: (*, D, *) and a broadcastable input -> the broadcast shape without ``dim``.
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance ||x1 - x2 + eps||_p over the last dimension.

    Shape: (N, D) or (D,) and a broadcastable input -> (N,) or () (``keepdim`` keeps a 1).
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
