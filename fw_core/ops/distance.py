"""Similarity and distance of paired vectors, as PyTorch's ``cosine_similarity`` and
``pairwise_distance`` (top level and ``nn.functional``), and of every pair of two sets
(``cdist``), built from fw ops so they differentiate like what they are made of.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["cdist", "cosine_similarity", "pairwise_distance"]

import math

import numpy as np

from ..autograd import no_grad
from ..errors import FwError, InvalidArgumentError, ShapeError
from ..tensor import Tensor
from .elementwise import abs, clamp
from .meta import argument_error, broadcast_shapes, located
from .reduction import amax, norm
from .reduction import sum as _sum
from .shape import expand, unsqueeze


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


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M): a (..., P, R) tensor, batch dimensions broadcast. ``p`` is any value >= 0
    (0 counts the differing coordinates, inf takes the largest difference); where two rows are
    equal the gradient is 0, as PyTorch's. ``compute_mode`` is accepted for PyTorch's
    signature: fw always subtracts (exact where the matrix-product form cancels).

    Raises:
        ShapeError: inputs under 2-d, a different M, or batch dimensions that do not
        broadcast; InvalidArgumentError (a RuntimeError, as torch's) for p < 0.
    """
    try:
        if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
            raise ShapeError(f"expects (..., P, M) and (..., R, M) tensors, got shapes "
                             f"{tuple(x1.shape)} and {tuple(x2.shape)}", op="cdist",
                             hint="give both inputs at least 2 dimensions and the same "
                             "number of columns")
        if not p >= 0:
            raise argument_error("cdist", f"cdist only supports non-negative p values, got {p}",
                                 "pass p >= 0 (2 for Euclidean distances)",
                                 error=InvalidArgumentError, values=(x1, x2), p=p)
        broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]), op="cdist")
    except FwError as err:
        raise located(err, "cdist", (x1, x2), p=p) from None
    difference = unsqueeze(x1, -2) - unsqueeze(x2, -3)  # (..., P, R, M)
    if p == math.inf:
        return _largest(abs(difference))
    return norm(difference, p, dim=-1)


def _largest(magnitudes: Tensor) -> Tensor:
    """The largest of ``magnitudes`` over the last dimension, with PyTorch's cdist gradient:
    every coordinate that reaches it gets the whole gradient (a max would split it)."""
    with no_grad():
        top = amax(magnitudes, -1)
        reached = magnitudes == unsqueeze(top, -1)
        extra = _sum(reached, -1) - 1
    # value: count * top - (count - 1) * top; gradient: 1 at each coordinate reaching top
    return _sum(magnitudes * reached, -1) - extra * top
