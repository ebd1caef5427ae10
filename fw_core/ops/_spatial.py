"""What the spatial op families (conv, pooling, resample) share: attributes normalised at the
boundary, meta-rule pieces for (N, C, *spatial) inputs, and the pairing of a linear op with its
adjoint.

An op on ``n`` spatial dimensions works on the trailing ``n`` axes of a batched (N, C, ...)
or unbatched (C, ...) input, as PyTorch's do.
"""

from __future__ import annotations

import operator

from ..errors import DTypeError, ShapeError
from ..records import TensorSpec
from . import anchors
from .dispatch import apply
from .registry import define_op

LINEAR = anchors.smooth("linear in the input: the gradient does not depend on the input's values")
_LAYOUTS = {1: "L", 2: "H, W", 3: "D, H, W"}


def ints(value, n: int, what: str, op: str) -> tuple[int, ...]:
    """An int or a sequence of n ints (or of 1, repeated) as a tuple of n ints."""
    try:
        values = (operator.index(value),) if not hasattr(value, "__iter__") else tuple(
            operator.index(v) for v in value)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be an int or {n} ints, got {value!r}", op=op,
                         hint=f"e.g. {what}=2 or {what}={(2,) * n}") from None
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise ShapeError(f"{what} must be an int or {n} ints, got {value!r}", op=op,
                         hint=f"give one value per spatial dimension, e.g. {(2,) * n}")
    return values


def positive(values, what: str, op: str, least: int = 1) -> None:
    if any(v < least for v in values):
        raise ShapeError(f"{what} must be >= {least}, got {values}", op=op,
                         hint=f"use {what} values of at least {least}")


def check_steps(op: str, stride, dilation) -> None:
    positive(stride, "stride", op)
    positive(dilation, "dilation", op)


def shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def floats(op: str, x, *others) -> None:
    """x is floating point and the other tensors (weight, bias) share its dtype."""
    if not x.dtype.is_floating_point:
        raise DTypeError(f"expects a floating-point input, got {x.dtype.name}", op=op,
                         hint="convert with .float() first")
    for other, what in others:
        if other is not None and other.dtype is not x.dtype:
            raise DTypeError(f"the input is {x.dtype.name} but the {what} is {other.dtype.name}",
                             op=op, hint=f"give both one dtype, e.g. {what}.to(x.dtype)")


def batched(op: str, x, n: int) -> bool:
    """Whether x is (N, C, *spatial) rather than unbatched (C, *spatial); else a ShapeError."""
    ndim = len(x.shape)
    if ndim not in (n + 1, n + 2):
        dims = _LAYOUTS.get(n, "...")
        raise ShapeError(f"expects a {n + 2}-d input (N, C, {dims}) or an unbatched {n + 1}-d one "
                         f"(C, {dims}), got shape {shape_text(x.shape)}", op=op,
                         hint="reshape the input, or add a batch dimension with unsqueeze(0)")
    return ndim == n + 2


def nonempty_plane(op: str, x, n: int) -> None:
    if 0 in tuple(x.shape[-n:]):
        raise ShapeError(f"the input's spatial size {shape_text(x.shape[-n:])} is empty", op=op,
                         hint="give an input with a non-empty spatial size")


def linear_pair(name, n, doc, signature, meta, structure, back_structure):
    """A linear op on the last ``n`` dimensions and its adjoint ``{name}_backward``, each the
    other's VJP. The adjoint takes the forward's attributes plus ``input_size``."""

    def back_meta(g, *, input_size, **attrs):
        spec = TensorSpec(tuple(g.shape[:-n]) + tuple(input_size), g.dtype)
        if tuple(meta(spec, **attrs).shape) != tuple(g.shape):
            raise ShapeError(f"a gradient of shape {shape_text(g.shape)} does not fit an input "
                             f"of spatial size {shape_text(input_size)}", op=name + "_backward",
                             hint=f"pass the gradient of {name}'s output")
        return spec

    forward = define_op(
        name, family="conv", builtin=True, doc=doc, signature=signature, meta=meta,
        vjp=lambda ctx, g: (apply(backward, (g,), {**ctx.attrs,
                                                   "input_size": ctx.input_shapes[0][-n:]}),),
        structure=structure, anchor=LINEAR)
    backward = define_op(
        name + "_backward", family="conv", builtin=True,
        doc=f"The adjoint of {name} (its VJP): spreads each output gradient back over the "
            "inputs it was computed from, with the same weights.",
        signature=f"{name}_backward(g: Tensor, input_size, <{name}'s attributes>) -> Tensor",
        meta=back_meta,
        vjp=lambda ctx, h: (apply(forward, (h,), {k: v for k, v in ctx.attrs.items()
                                                  if k != "input_size"}),),
        structure=back_structure, anchor=LINEAR)
    return forward, backward


__all__ = ["LINEAR", "batched", "check_steps", "floats", "ints", "linear_pair",
           "nonempty_plane", "positive", "shape_text"]
