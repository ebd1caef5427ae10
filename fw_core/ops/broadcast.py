"""``broadcast_to`` and ``sum_to``: each other's gradient, and the glue of every broadcasting
VJP."""

from __future__ import annotations

__all__ = ["broadcast_to", "sum_to"]

from typing import TYPE_CHECKING

from ..records import Reduction, Structure, SumBatching, TensorSpec
from . import anchors
from .dispatch import apply
from .meta import broadcast_shapes
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor


def _broadcast_meta(x, shape):
    shape = tuple(shape)
    if broadcast_shapes(x.shape, shape, op="broadcast_to") != shape:
        from ..errors import ShapeError

        raise ShapeError(f"cannot broadcast shape {x.shape} to {shape}", op="broadcast_to",
                         hint="the target must keep every non-1 dimension of the input")
    return TensorSpec(shape, x.dtype)


def _sum_to_meta(x, shape):
    shape = tuple(shape)
    if broadcast_shapes(shape, x.shape, op="sum_to") != tuple(x.shape):
        from ..errors import ShapeError

        raise ShapeError(f"cannot sum shape {x.shape} down to {shape}", op="sum_to",
                         hint="the target must broadcast to the input's shape")
    return TensorSpec(shape, x.dtype)


BROADCAST_TO = define_op(
    "broadcast_to", family="shape", builtin=True,
    doc="Repeat size-1 (or missing leading) dimensions to reach ``shape``, without copying.",
    signature="broadcast_to(x: Tensor, shape: tuple[int, ...]) -> Tensor",
    meta=_broadcast_meta,
    vjp=lambda ctx, g: (sum_to(g, ctx.input_shapes[0]),),
    structure=Structure.INJECTIVE,
    anchor=anchors.smooth("linear: each output is a copy of one input element"),
)


def _summed(target, rank: int) -> list[bool] | None:
    """Per dimension of a rank-``rank`` input, whether summing it to ``target`` adds it up."""
    lead = rank - len(target)
    return None if lead < 0 else [d < lead or target[d - lead] == 1 for d in range(rank)]


def _sum_to_batched(attrs: list[dict], shapes: list[tuple]) -> SumBatching | None:
    """Sums over the leading axis: their sum is one sum of the inputs stacked along it."""
    summed = _summed(attrs[0]["shape"], len(shapes[0][0]))
    if any(a != attrs[0] for a in attrs) or not summed or not summed[0]:
        return None
    return SumBatching(axes=(0,), order=tuple(range(len(attrs))))


SUM_TO = define_op(
    "sum_to", family="reduction", builtin=True,
    doc="Sum over the dimensions that broadcasting added or expanded, to get back ``shape``.",
    signature="sum_to(x: Tensor, shape: tuple[int, ...]) -> Tensor",
    meta=_sum_to_meta,
    vjp=lambda ctx, g: (broadcast_to(g, ctx.input_shapes[0]),),
    structure=Structure.REDUCTION,
    anchor=anchors.smooth("linear: a sum"),
    reduction=Reduction(mean=False, dims=lambda attrs, rank: _summed(attrs["shape"], rank),
                        shape=lambda attrs, shape, summed: tuple(attrs["shape"])),
    batched_sum=_sum_to_batched,
)


def broadcast_to(x, shape) -> Tensor:
    """View ``x`` with its size-1 dimensions repeated to ``shape`` (no copy)."""
    shape = tuple(shape)
    if x._data.shape == shape:
        return x
    return apply(BROADCAST_TO, (x,), {"shape": shape})


def sum_to(x, shape) -> object:
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting); ``x`` itself if already there."""
    shape = tuple(shape)
    if x._data.shape == shape:
        return x
    return apply(SUM_TO, (x,), {"shape": shape})
