"""Bitwise ops: integers bit by bit, bools as truth values (PyTorch's &, |, ^, ~, <<, >>)."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
           "bitwise_right_shift", "bitwise_xor"]

from .. import dtypes as _dt
from ..errors import DTypeError
from ..records import Structure
from ._elementwise_support import _FLAT, _nary_meta, _unary_meta
from .dispatch import apply_binary, apply_unary
from .meta import promote, spec_of
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor


def _integral(op_name: str, bools: bool):
    """``check(*operands)``: DTypeError unless the operands (tensors, their specs, Python
    scalars) promote to an integer dtype (or bool, when ``bools``), as PyTorch decides: what
    the meta rule and the public function both check, so eager calls refuse floats too."""
    allowed = (_dt.INTEGER, _dt.BOOL) if bools else (_dt.INTEGER,)

    def check(*operands) -> None:
        dtype = _promoted(operands)
        if dtype.category not in allowed:
            kinds = "integer or bool" if bools else "integer"
            raise DTypeError(f"{op_name} takes {kinds} tensors, got {dtype.name}", op=op_name,
                             hint="convert first, e.g. x.long(); for a float mask use "
                             "logical_and / logical_or / logical_not")

    return check


def _promoted(operands) -> _dt.DType:
    return promote(*(spec_of(o) for o in operands))


def _bitwise_op(name, doc, bools=True, arity=2):
    check = _integral(name, bools)
    meta = _unary_meta() if arity == 1 else _nary_meta()

    def checked_meta(*inputs, **attrs):
        check(*inputs)
        return meta(*inputs, **attrs)

    signature = f"{name}(x: Tensor[integer | bool]) -> Tensor" if arity == 1 else \
        f"{name}(a: Tensor | int, b: Tensor | int) -> Tensor"
    op = define_op(name, family="elementwise", builtin=True, doc=doc, signature=signature,
                   meta=checked_meta, vjp=None, anchor=_FLAT,
                   structure=Structure.ELEMENTWISE if arity == 1 else Structure.BROADCAST,
                   promotion="none" if arity == 1 else "binary")
    return op, check


BITWISE_AND, _and_check = _bitwise_op("bitwise_and", "a & b bit by bit (bools: a and b).")
BITWISE_OR, _or_check = _bitwise_op("bitwise_or", "a | b bit by bit (bools: a or b).")
BITWISE_XOR, _xor_check = _bitwise_op("bitwise_xor", "a ^ b bit by bit (bools: a != b).")
BITWISE_NOT, _not_check = _bitwise_op("bitwise_not", "~x: every bit flipped (bools: not x).",
                                      arity=1)
BITWISE_LEFT_SHIFT, _left_check = _bitwise_op(
    "bitwise_left_shift", "a << b: a's bits moved b places up (b in [0, bit width)).",
    bools=False)
BITWISE_RIGHT_SHIFT, _right_check = _bitwise_op(
    "bitwise_right_shift", "a >> b: a's bits moved b places down, the sign kept (arithmetic).",
    bools=False)


def _bitwise_fn(op, check):
    def fn(a, b) -> Tensor:
        check(a, b)
        return apply_binary(op, a, b)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"{op.doc} Broadcasts; DTypeError for floating-point operands.\n\n" \
                 f"Contract: ``fw.ops.get({op.name!r})``."
    return fn


bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift = (
    _bitwise_fn(op, check) for op, check in (
        (BITWISE_AND, _and_check), (BITWISE_OR, _or_check), (BITWISE_XOR, _xor_check),
        (BITWISE_LEFT_SHIFT, _left_check), (BITWISE_RIGHT_SHIFT, _right_check)))


def bitwise_not(x) -> Tensor:
    """~x: every bit of an integer tensor flipped; a bool tensor negated. DTypeError for
    floating point.

    Contract: ``fw.ops.get('bitwise_not')``."""
    _not_check(x)
    return apply_unary(BITWISE_NOT, x)
