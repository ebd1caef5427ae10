"""Cholesky factors and lower-triangular solves composed from fw ops, for the multivariate normal.

fw has no linear-algebra factorisation ops yet, so both are written column by column (row by
row) with matmul-free broadcasting: O(n) fw ops for an n x n matrix, each batched over the
leading dims. Being fw ops, they differentiate (to any order) on every device; they suit the
event sizes distributions are used with (tens, not thousands).
"""

from __future__ import annotations

from ..ops.creation import arange, eye
from ..ops.elementwise import sqrt
from ..ops.rearrange import flip
from ..ops.shape import stack
from ..tensor import Tensor


def cholesky(matrix: Tensor) -> Tensor:
    """The lower-triangular L with ``L @ L.T == matrix`` (Cholesky-Crout, column by column);
    ``matrix`` is (..., n, n) symmetric positive definite. It factorises the symmetric part
    ``(A + A^T) / 2``, so the gradient w.r.t. ``matrix`` is symmetric, as PyTorch's is."""
    matrix = (matrix + matrix.transpose(-1, -2)) * 0.5
    n = matrix.shape[-1]
    rows = arange(n, device=matrix.device)
    columns: list[Tensor] = []
    for j in range(n):
        column = matrix[..., :, j]
        if columns:
            done = stack(columns, -1)  # (..., n, j): the columns found so far
            column = column - (done * done[..., j:j + 1, :]).sum(-1)
        pivot = sqrt(column[..., j:j + 1])
        columns.append(column / pivot * (rows >= j).to(matrix.dtype))
    return stack(columns, -1)


def solve_lower(lower: Tensor, rhs: Tensor) -> Tensor:
    """x with ``lower @ x == rhs`` for vectors ``rhs`` (..., n) by forward substitution; the
    leading dims of ``lower`` (..., n, n) and ``rhs`` broadcast."""
    n = lower.shape[-1]
    solved: list[Tensor] = []
    for i in range(n):
        value = rhs[..., i]
        if solved:
            value = value - (lower[..., i, :i] * stack(solved, -1)).sum(-1)
        solved.append(value / lower[..., i, i])
    return stack(solved, -1)


def solve_lower_matrix(lower: Tensor, rhs: Tensor) -> Tensor:
    """X with ``lower @ X == rhs`` for matrices ``rhs`` (..., n, k): one vector solve per column."""
    return solve_lower(lower.unsqueeze(-3), rhs.transpose(-1, -2)).transpose(-1, -2)


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of ``precision``'s inverse, without forming the inverse: with
    ``U = flip(cholesky(flip(P)))`` (upper) ``P = U U^T``, so ``P^-1 = U^-T U^-1`` and
    ``U^-T`` is the lower factor (PyTorch's route)."""
    upper = flip(cholesky(flip(precision, (-2, -1))), (-2, -1))
    n = precision.shape[-1]
    return solve_lower_matrix(upper.transpose(-1, -2), eye(n, dtype=precision.dtype,
                                                           device=precision.device))


def diagonal(matrix: Tensor) -> Tensor:
    """The last two dims' diagonal, (..., n)."""
    n = matrix.shape[-1]
    return (matrix * eye(n, dtype=matrix.dtype, device=matrix.device)).sum(-1)
