"""The parametrization behind :func:`fw_core.nn.utils.parametrizations.orthogonal`, as
PyTorch's ``_Orthogonal``, and the three linear-algebra pieces it needs, composed from fw's
matmul and elementwise ops (so autograd differentiates them as written):

- :func:`householder_product`: the first columns of H_1 H_2 ... H_k,
  H_i = I - tau_i v_i v_i^T (PyTorch's ``linalg.householder_product``);
- :func:`geqrf`: a QR factorisation in LAPACK's compact form (reflectors below the diagonal,
  R on and above it, and tau), used untracked when the parametrization is registered;
- :func:`matrix_exp`: exp(A) by scaling and squaring a Taylor polynomial.

The Cayley map needs a linear solve, which fw does not have; asking for it raises
UnsupportedError.

All work on batches of matrices (..., n, k) with n >= k; the parametrization transposes wide
matrices first.
"""

from __future__ import annotations

__all__ = ["MAPS", "Orthogonal", "geqrf", "householder_product", "make_orthogonal",
           "matrix_exp"]

import math

import numpy as np

from ...autograd import no_grad
from ...errors import ArgumentError, ShapeError, UnsupportedError
from ...ops.creation import eye
from ...ops.elementwise import where
from ...ops.shape import cat
from ...tensor import Tensor
from ..module import Module

#: the orthogonal maps PyTorch accepts, in its order
MAPS = ("matrix_exp", "cayley", "householder")

#: exp(A) is evaluated as exp(A / 2**s) ** (2**s) with ||A / 2**s||_1 <= this; the Taylor
#: polynomial's truncation error is then below 0.5**15 / 15! ~ 2e-17, under float64's epsilon
_TAYLOR_RADIUS = 0.5
_TAYLOR_DEGREE = 14


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first k columns of H_1 ... H_k for A (..., n, k) and tau (..., k): H_i reflects
    along v_i = e_i + A[..., i+1:, i] (the entries on and above the diagonal are ignored)."""
    n, k = A.shape[-2], A.shape[-1]
    reflectors = A.tril(diagonal=-1) + eye(n, k, dtype=A.dtype, device=A.device)
    q = eye(n, k, dtype=A.dtype, device=A.device).expand(*A.shape)
    for i in reversed(range(k)):  # H_1 (H_2 (... (H_k E)))
        v = reflectors[..., :, i]
        vq = tau[..., i].unsqueeze(-1) * (v.unsqueeze(-2) @ q).squeeze(-2)  # tau v^T Q
        q = q - v.unsqueeze(-1) * vq.unsqueeze(-2)
    return q


def geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """QR of A (..., n, k), n >= k, as LAPACK's ``geqrf``: R on and above the diagonal of the
    first result, the reflectors' tails below it, and tau, with LAPACK's signs (diag(R) of the
    opposite sign to the column's leading entry; tau = 0 where the column is already zero below
    the diagonal). Untracked."""
    with no_grad():
        r = A.clone()
        k = A.shape[-1]
        tau = A.new_zeros(*A.shape[:-2], k)
        for j in range(k):
            alpha = r[..., j, j]
            tail = r[..., j + 1:, j]
            tail_norm = (tail * tail).sum(dim=-1).sqrt()
            reflect = tail_norm != 0
            size = (alpha * alpha + tail_norm * tail_norm).sqrt()
            beta = where(alpha >= 0, -size, size)
            tau_j = where(reflect, (beta - alpha) / beta, 0.0)
            scale = where(reflect, 1 / (alpha - beta), 0.0)
            v = (tail * scale.unsqueeze(-1))
            r[..., j + 1:, j] = v
            r[..., j, j] = where(reflect, beta, alpha)
            tau[..., j] = tau_j
            if j + 1 < k:  # apply H_j = I - tau v v^T (v[0] = 1) to the remaining columns
                rest = r[..., j:, j + 1:]
                full_v = r.new_ones(*A.shape[:-2], A.shape[-2] - j)
                full_v[..., 1:] = v
                w = tau_j.unsqueeze(-1) * (full_v.unsqueeze(-2) @ rest).squeeze(-2)
                r[..., j:, j + 1:] = rest - full_v.unsqueeze(-1) * w.unsqueeze(-2)
        return r, tau


def make_orthogonal(A: Tensor) -> Tensor:
    """Q of A = QR with diag(R) > 0, for a tall A (..., n, k), as PyTorch's
    ``_make_orthogonal``. Untracked."""
    with no_grad():
        X, tau = geqrf(A)
        return householder_product(X, tau) * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def is_orthogonal(Q: Tensor) -> bool:
    """Whether Q^T Q = I to 10 n epsilon (PyTorch's ``_is_orthogonal``)."""
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(np.finfo(Q.dtype.numpy).eps)
    gram = Q.mT @ Q
    return bool(abs(gram - eye(k, dtype=Q.dtype, device=Q.device)).amax().item() <= eps)


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) for square A (..., n, n): a degree-14 Taylor polynomial of A / 2**s (Horner's
    rule), squared s times, s chosen so that every ||A / 2**s||_1 <= 0.5.

    s depends on A's values, read on the host once per call."""
    n = A.shape[-1]
    norm = float(abs(A).sum(dim=-2).amax().item()) if A.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm / _TAYLOR_RADIUS))) if norm > 0 else 0
    scaled = A / (2.0 ** squarings)
    identity = eye(n, dtype=A.dtype, device=A.device)
    result = identity + scaled / _TAYLOR_DEGREE
    for degree in range(_TAYLOR_DEGREE - 1, 0, -1):
        result = identity + (scaled @ result) / degree
    for _ in range(squarings):
        result = result @ result
    return result


class Orthogonal(Module):
    """Q from an unconstrained X (..., n, k): exp or Householder reflections of X, times the
    stored ``base`` when ``use_trivialization`` (PyTorch's ``_Orthogonal``)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        if orthogonal_map == "cayley":
            raise UnsupportedError("orthogonal_map='cayley' needs a linear solve (Q = (I + A/2)"
                                   "(I - A/2)^-1), which fw does not have yet",
                                   op="orthogonal",
                                   hint="use orthogonal_map='matrix_exp' (the same "
                                        "skew-symmetric A, mapped by exp) or 'householder'")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "matrix_exp":
            X = X.tril()  # n k - k (k - 1) / 2 free entries
            if n != k:  # embed in a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], n, n - k)], dim=-1)
            Q = matrix_exp(X - X.mT)  # exp of a skew-symmetric matrix is orthogonal
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # X's diagonal holds the signs (+-1); read as ints, they get no gradient
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """An original giving ``Q``: with a base, the base becomes ``Q`` (orthogonalised by QR
        if it is not orthogonal, completed by random columns if it is not square) and the
        original -I; without one (Householder only), ``Q``'s reflectors."""
        if tuple(Q.shape) != self.shape:
            raise ShapeError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.", op="orthogonal",
                             hint="assign a tensor of the weight's shape")
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map == "matrix_exp":
                raise UnsupportedError("It is not possible to assign to the matrix exponential "
                                       "parametrization when use_trivialization=False.",
                                       op="orthogonal",
                                       hint="register with use_trivialization=True, or use "
                                            "orthogonal_map='householder'")
            A, tau = geqrf(Q)
            diagonal = A.diagonal(dim1=-2, dim2=-1)
            # the diagonal stores the reflections' signs; LAPACK's tau = 0 (no reflection)
            # is a sign flip under tau = 2 / (1 + |v|^2), undone here
            diagonal.copy_(diagonal.sgn() * where(tau == 0, -1.0, 1.0))
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if is_orthogonal(Q) else make_orthogonal(Q)
        else:  # complete Q to a square orthogonal matrix
            extra = Q.new_empty(*Q.shape[:-2], n, n - k).normal_(0, 1)
            Q = make_orthogonal(cat([Q, extra], dim=-1))
        self.base = Q
        # -I: householder of zeros is then the identity, and exp of tril(-I) - its transpose too
        neg_identity = Q_init.new_zeros(*Q_init.shape)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def check_map(orthogonal_map: str | None, weight: Tensor) -> str:
    """The map to use: PyTorch's default (matrix_exp for square matrices, householder
    otherwise) for None; ArgumentError (a ValueError) for a name PyTorch does not know."""
    if orthogonal_map is None:
        return "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in MAPS:
        raise ArgumentError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                            f'"householder". Got: {orthogonal_map}', op="orthogonal",
                            hint="pass one of those names, or None for the default")
    return orthogonal_map
