"""Similarity and distance of paired vectors, as PyTorch's ``cosine_similarity`` and
``pairwise_distance`` (top level and ``nn.functional``), built from fw ops so they
differentiate like what they are made of.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["cosine_similarity", "pairwise_distance"]

import numpy as np

from ..autograd import no_grad
from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import clamp
from .meta import located
from .reduction import norm
from .reduction import sum as _sum
from .shape import expand


def _broadcast(op: str, x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise ShapeError(f"the shapes {tuple(x1.shape)} and {tuple(x2.shape)} do not broadcast",
                         op=op, hint="give x1 and x2 the same shape, or sizes of 1 where "
                         "they differ") from None
    return expand(x1, shape), expand(x2, shape)


def _floating(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.float()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` of the broadcast
    inputs, in [-1, 1]. Each input is divided by its norm first, as PyTorch does (more stable
    than dividing the dot product); the eps floor is not differentiated through (as PyTorch's
    in-place clamp under no_grad), so a zero vector's gradient is that of x / eps.

    Raises:
        ShapeError: if the inputs do not broadcast; IndexError for a dim out of range.
    """
    try:
        x1, x2 = _broadcast("cosine_similarity", _floating(x1), _floating(x2))
        n1, n2 = norm(x1, 2, dim, keepdim=True), norm(x2, 2, dim, keepdim=True)
        with no_grad():  # the clamp shifts the value only; the gradient is the norm's
            shift1 = clamp(n1, min=eps) - n1
            shift2 = clamp(n2, min=eps) - n2
        return _sum((x1 / (n1 + shift1)) * (x2 / (n2 + shift2)), dim)
    except ShapeError as err:
        raise located(err, "cosine_similarity", (x1, x2), dim=dim, eps=eps) from None


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` over the last dimension of the broadcast inputs (eps
    keeps the norm differentiable where x1 == x2), as PyTorch's."""
    return norm(x1 - x2 + eps, p, dim=max(x1.ndim, x2.ndim) - 1, keepdim=keepdim)
