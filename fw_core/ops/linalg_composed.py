"""PyTorch's other products, built from fw's contractions and elementwise ops: the
rank-checked ``mm``, ``mv`` and ``dot``; the scaled sums ``addmm``, ``addmv``, ``baddbmm`` and
``addbmm`` (``beta * input + alpha * product``); the Kronecker product ``kron`` and the 3-vector
``cross`` product. Being compositions they differentiate (twice) like what they are made of.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["addbmm", "addmm", "addmv", "baddbmm", "cross", "dot", "kron", "mm", "mv"]

import warnings

from ..errors import FwError, ShapeError
from ..tensor import Tensor
from .dispatch import check_tensors
from .linalg import BMM, MATMUL, bmm, matmul
from .meta import broadcast_shapes, located, normalize_dim
from .reduction import sum as _sum
from .shape import cat, expand, narrow, reshape


def _ranks(op: str, expected: tuple[int, ...], *operands) -> None:
    """A ShapeError (a RuntimeError, as torch raises) unless the operands have these ranks."""
    check_tensors(MATMUL, *operands)
    got = tuple(o.ndim for o in operands)
    if got != expected:
        names = {1: "vector", 2: "matrix", 3: "batch of matrices"}
        wanted = " and ".join(f"a {names[n]} ({n}-d)" for n in expected)
        raise located(ShapeError(
            f"expects {wanted}, got {' and '.join(f'{n}-d' for n in got)} tensors", op=op,
            hint="use fw.matmul for other ranks (it broadcasts batch dimensions)"),
            None, operands)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The matrix product of (n, k) and (k, m) tensors; no broadcasting, as PyTorch's."""
    _ranks("mm", (2, 2), input, mat2)
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """The product of an (n, m) matrix and an (m,) vector: an (n,) vector."""
    _ranks("mv", (2, 1), input, vec)
    return matmul(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The dot product of two 1-d tensors of one size and dtype: a 0-d tensor."""
    _ranks("dot", (1, 1), input, tensor)
    if input.shape[0] != tensor.shape[0]:
        raise located(ShapeError(
            f"inconsistent tensor size: {input.shape[0]} and {tensor.shape[0]} elements",
            op="dot", hint="give both vectors the same length"), None, (input, tensor))
    return matmul(input, tensor)


def _scaled_sum(op: str, input, product, beta, alpha):
    """``beta * input + alpha * product``, ``input`` broadcast to the product's shape; with
    ``beta == 0`` input is ignored (its NaN and inf too), as in PyTorch."""
    target = tuple(product.shape)
    try:
        fits = broadcast_shapes(tuple(input.shape), target, op=op) == target
    except FwError:
        fits = False
    if not fits:
        raise located(ShapeError(
            f"input of shape {tuple(input.shape)} does not broadcast to the product's shape "
            f"{target}", op=op, hint=f"give input a shape that expands to {target}"),
            None, (input, product))
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return (input if beta == 1 else input * beta) + scaled


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for (n, k) and (k, m) matrices; ``input``
    broadcasts to (n, m)."""
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)`` for an (n, m) matrix and an (m,) vector."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)`` for (b, n, k) and (b, k, m) batches;
    ``input`` broadcasts to (b, n, m)."""
    check_tensors(BMM, batch1, batch2)
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``: the batch's products summed
    into one (n, m) matrix."""
    check_tensors(BMM, batch1, batch2)
    return _scaled_sum("addbmm", input, _sum(bmm(batch1, batch2), 0), beta, alpha)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: each element of ``input`` times the whole of ``other``, tiled in
    ``input``'s layout. The operands are first given the same number of dimensions (leading
    1s); the result's size along each is the product of theirs. Dtypes promote."""
    rank = max(input.ndim, other.ndim)
    a_shape = (1,) * (rank - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (rank - other.ndim) + tuple(other.shape)
    # a's dimensions interleaved with b's: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    a = reshape(input, *(n for size in a_shape for n in (size, 1)))
    b = reshape(other, *(n for size in b_shape for n in (1, size)))
    return reshape(a * b, *(m * n for m, n in zip(a_shape, b_shape)))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (inputs of one rank, whose sizes
    broadcast). Without ``dim``,
    PyTorch's deprecated default: the first dimension of size 3, with its UserWarning."""
    try:
        if input.ndim != other.ndim:
            raise ShapeError(f"inputs must have the same number of dimensions, got "
                             f"{input.ndim} and {other.ndim}", op="cross",
                             hint="unsqueeze the smaller one, e.g. b.unsqueeze(0)")
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape), op="cross")
        if dim is None:
            warnings.warn("Using cross without specifying the dim arg is deprecated; it "
                          "takes the first dimension of size 3 (pass dim=-1 for the last)",
                          UserWarning, stacklevel=2)
            if 3 not in shape:
                raise ShapeError(f"no dimension of size 3 in the inputs' shape {shape}",
                                 op="cross", hint="cross multiplies 3-vectors: give a "
                                 "dimension of size 3")
            axis = shape.index(3)
        else:
            axis = normalize_dim(dim, len(shape), "cross")
            if shape[axis] != 3:
                raise ShapeError(f"inputs dimension {dim} must have length 3, got "
                                 f"{shape[axis]}", op="cross",
                                 hint="cross multiplies 3-vectors along dim")
    except FwError as err:
        raise located(err, "cross", (input, other), dim=dim) from None
    a, b = expand(input, *shape), expand(other, *shape)
    x, y, z = (narrow(a, axis, i, 1) for i in range(3))
    u, v, w = (narrow(b, axis, i, 1) for i in range(3))
    return cat([y * w - z * v, z * u - x * w, x * v - y * u], axis)


#: Tensor methods this module provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
