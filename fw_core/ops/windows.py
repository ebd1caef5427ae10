"""Windows and grids: ``Tensor.unfold`` (sliding windows along one dimension), ``rot90`` and
``meshgrid``, as in PyTorch.

``unfold`` is an op whose gradient, ``unfold_backward``, adds each window's gradient back onto
the elements it covered (overlapping windows accumulate); each is the other's gradient, so
both differentiate twice. PyTorch's unfold is a view; fw's is a copy (overlapping windows
written in place would alias). ``rot90`` is flips and a transpose, ``meshgrid`` reshapes and
expands.
"""

from __future__ import annotations

__all__ = ["meshgrid", "rot90", "unfold"]

import operator
import warnings

from ..errors import ArgumentError, DTypeError, FwError, InvalidArgumentError, ShapeError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from ._shape_support import _SUMS, _op, _reshape
from .dispatch import apply
from .meta import located, normalize_dim
from .rearrange import flip
from .shape import expand, transpose


def _windows(size: int, window: int, step: int) -> int:
    return (size - window) // step + 1


def _unfold_meta(x, dim, size, step):
    shape = tuple(x.shape) or (1,)
    if size > shape[dim]:
        raise ShapeError(f"maximum size for tensor at dimension {dim} is {shape[dim]} but size "
                         f"is {size}", op="unfold", hint="use a window no longer than the dim")
    out = list(shape)
    out[dim] = _windows(shape[dim], size, step)
    return TensorSpec(tuple(out[:len(x.shape)]) + (size,), x.dtype)


def _unfold_backward_meta(g, shape, dim, size, step):
    expected = _unfold_meta(TensorSpec(tuple(shape), g.dtype), dim, size, step).shape
    if tuple(g.shape) != tuple(expected):
        raise ShapeError(f"gradient of shape {tuple(g.shape)} for windows of shape {expected}",
                         op="unfold_backward", hint="pass the gradient of x.unfold(...)")
    return TensorSpec(tuple(shape), g.dtype)


def _window_attrs(ctx):
    return {k: ctx.attrs[k] for k in ("dim", "size", "step")}


UNFOLD = _op(
    "unfold", "Windows of ``size`` elements every ``step`` along ``dim``: that dim counts the "
    "windows and a new last dim runs through each.",
    "unfold(x: Tensor, dim: int, size: int, step: int) -> Tensor", _unfold_meta,
    lambda ctx, g: (apply(UNFOLD_BACKWARD, (g,), {"shape": tuple(ctx.input_shapes[0]),
                                                  **_window_attrs(ctx)}),))
UNFOLD_BACKWARD = _op(
    "unfold_backward", "Zeros of ``shape`` with each window of g added back where it was taken "
    "(overlaps accumulate): the gradient of unfold.",
    "unfold_backward(g: Tensor, shape: tuple, dim: int, size: int, step: int) -> Tensor",
    _unfold_backward_meta, lambda ctx, g: (apply(UNFOLD, (g,), _window_attrs(ctx)),),
    structure=Structure.OPAQUE, anchor=_SUMS)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` consecutive elements along ``dimension``, starting every
    ``step``: ``dimension`` becomes the window count ``(n - size) // step + 1`` and a new last
    dim of ``size`` runs through each window. ``arange(5).unfold(0, 2, 2)`` is
    ``[[0, 1], [2, 3]]``. A copy (PyTorch's is a view)."""
    try:
        d = normalize_dim(dimension, max(input.ndim, 1), "unfold")
        size, step = operator.index(size), operator.index(step)
        if step <= 0:
            raise InvalidArgumentError(f"step is {step} but must be > 0", op="unfold",
                                       hint="pass a positive step")
        if size < 0:
            raise InvalidArgumentError(f"size is {size} but must be >= 0", op="unfold",
                                       hint="pass a window length >= 0")
        attrs = {"dim": d, "size": size, "step": step}
        UNFOLD.meta(input, **attrs)
        return apply(UNFOLD, (input,), attrs)
    except FwError as err:
        raise located(err, "unfold", (input,), dimension=dimension, size=size,
                      step=step) from None


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first
    towards the second (counter-clockwise for a matrix shown rows down)."""
    try:
        dims = tuple(dims)
        if len(dims) != 2:
            raise ShapeError(f"expected total rotation dims == 2, but got dims = {len(dims)}",
                             op="rot90", hint="name two dimensions, e.g. dims=(0, 1)")
        if input.ndim < 2:
            raise ShapeError(f"expected total dims >= 2, but got total dims = {input.ndim}",
                             op="rot90", hint="rotate a tensor with at least 2 dimensions")
        d0, d1 = (normalize_dim(d, input.ndim, "rot90") for d in dims)
        if d0 == d1:
            raise ShapeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                             f"dim1 = {d1}", op="rot90", hint="name two different dimensions")
        k = operator.index(k) % 4
        if k == 1:
            return transpose(flip(input, (d1,)), d0, d1)
        if k == 2:
            return flip(input, (d0, d1))
        if k == 3:
            return transpose(flip(input, (d0,)), d0, d1)
        return input.clone()
    except FwError as err:
        raise located(err, "rot90", (input,), k=k, dims=dims) from None


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-d tensors: with ``indexing="ij"`` output i varies along dim i
    (shape ``(len(t0), len(t1), ...)``); with ``"xy"`` the first two dims are swapped (the
    Cartesian convention). ``indexing=None`` means "ij" with PyTorch's warning to pass it."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    try:
        if indexing is None:
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.", UserWarning, stacklevel=2)
            indexing = "ij"
        if indexing not in ("ij", "xy"):
            raise ArgumentError(f"indexing must be 'xy' or 'ij', got {indexing!r}",
                                op="meshgrid", hint="pass indexing='ij' or indexing='xy'")
        if not tensors:
            raise ArgumentError("expects a non-empty list of tensors", op="meshgrid",
                                hint="pass one or more 1-d tensors")
        for t in tensors:
            if not isinstance(t, Tensor) or t.ndim > 1:
                raise ShapeError("expected 0D or 1D tensor in the tensor list", op="meshgrid",
                                 hint="flatten each coordinate vector first")
            if t.dtype is not tensors[0].dtype:
                raise DTypeError("expects all tensors to have the same dtype", op="meshgrid",
                                 hint="convert them to one dtype first")
        swap = indexing == "xy" and len(tensors) >= 2
        order = list(tensors)
        if swap:
            order[0], order[1] = order[1], order[0]
        sizes = tuple(t.numel() for t in order)
        grids = []
        for i, t in enumerate(order):
            lined = _reshape(t, (1,) * i + (sizes[i],) + (1,) * (len(order) - i - 1))
            grids.append(expand(lined, sizes))
        if swap:
            grids[0], grids[1] = grids[1], grids[0]
        return tuple(grids)
    except FwError as err:
        raise located(err, "meshgrid", tuple(t for t in tensors if isinstance(t, Tensor)),
                      indexing=indexing) from None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {"unfold": unfold, "rot90": rot90}
