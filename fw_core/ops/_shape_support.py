"""What the shape and indexing families share: the op helper, view bookkeeping, argument checks."""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from .. import dtypes as _dt
from ..errors import DTypeError, FwError, ShapeError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors
from .dispatch import apply
from .meta import located, spec_of
from .registry import define_op

_MOVES = anchors.smooth("linear: it only moves elements, so each gradient flows back unchanged "
                        "to the element it came from")
_SUMS = anchors.smooth("linear: it adds elements, so each input's gradient is the output "
                       "gradient wherever that input landed")
_VOID = np.dtype([])  # zero-byte elements: index a stand-in array to learn a result's shape


def _op(name, doc, signature, meta, vjp, saves=(), structure=Structure.INJECTIVE, anchor=_MOVES,
        batched_sum=None):
    return define_op(name, family="shape", builtin=True, doc=doc, signature=signature, meta=meta,
                     vjp=vjp, structure=structure, anchor=anchor, saves=saves,
                     batched_sum=batched_sum)


def _share(x: Tensor, out: Tensor) -> Tensor:
    """Make ``out`` (a view of ``x``) share ``x``'s version counter."""
    counter = x._vc
    if counter is None:
        counter = x._vc = [0]
    out._vc = counter
    return out


def _checked(op, inputs: tuple, attrs: dict) -> Tensor:
    """``apply`` after the meta rule, for ops whose NumPy kernel accepts more than fw allows."""
    try:
        op.meta(*(spec_of(t) for t in inputs), **attrs)
    except FwError as err:
        raise located(err, op.name, inputs) from None
    return apply(op, inputs, attrs)


def _ints(values, what: str, op: str) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))`` as a tuple of ints."""
    if len(values) == 1 and not isinstance(values[0], numbers.Integral) and not (
            isinstance(values[0], Tensor) and values[0].ndim == 0):
        values = values[0]
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ShapeError(f"{what} must be integers, got {values!r}", op=op,
                         hint="pass ints, e.g. (2, 3)") from None


def _require_integer(spec, what: str, op: str) -> None:
    if spec.dtype.category != _dt.INTEGER:
        raise DTypeError(f"{what} must be an integer tensor, got {spec.dtype.name}", op=op,
                         hint="convert it with .long()")


def _reshape_meta(x, shape):
    if math.prod(x.shape) != math.prod(shape) or min(shape, default=0) < 0:
        raise ShapeError(f"cannot reshape a tensor of shape {tuple(x.shape)} "
                         f"({math.prod(x.shape)} elements) into shape {tuple(shape)} "
                         f"({math.prod(shape)} elements)", op="reshape",
                         hint="the number of elements must stay the same; one size may be -1")
    return TensorSpec(tuple(shape), x.dtype)


RESHAPE = _op("reshape", "The same elements, in row-major order, with a new shape.",
              "reshape(x: Tensor, shape: tuple[int, ...]) -> Tensor", _reshape_meta,
              lambda ctx, g: (_reshape(g, ctx.input_shapes[0]),))


def _reshape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    data = x._data
    out = apply(RESHAPE, (x,), {"shape": shape})
    if data.flags.c_contiguous or x._device.xp.may_share_memory(data, out._data):
        _share(x, out)  # a contiguous input always reshapes to a view
    return out
