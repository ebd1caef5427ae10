"""What every elementwise op shares: the meta rules (broadcast + promote), the contract
builders (diagonal Jacobian; binary VJPs summed back to broadcast inputs), the public functions
made from a contract, the flat anchor of piecewise-constant ops, and the makers of in-place and
reflected Tensor methods (``x.add_``, ``x.__radd__``). :mod:`.elementwise`, :mod:`.transcendental`
and :mod:`.bitwise` declare their ops with them.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .. import dtypes as _dt
from ..records import Structure, TensorSpec
from . import anchors
from .broadcast import sum_to
from .dispatch import apply_binary, apply_unary
from .meta import broadcast_shapes, promote
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor


def _unary_meta(float_result=False, result=None):
    def meta(x, **attrs):
        if result is not None:
            return TensorSpec(tuple(x.shape), result)
        dtype = x.dtype
        if float_result and not dtype.is_floating_point:
            dtype = _dt.default_float
        return TensorSpec(tuple(x.shape), dtype)

    return meta


def _nary_meta(float_result=False, result=None):
    def meta(*inputs):
        shapes = [tuple(i.shape) for i in inputs if isinstance(i, TensorSpec)]
        shape = broadcast_shapes(*shapes)
        dtype = result or promote(*inputs, float_result=float_result)
        return TensorSpec(shape, dtype)

    return meta


def _unary_op(name, doc, vjp, anchor, saves=("inputs",), float_result=False, attrs="",
              differentiable=True, result=None, cost="normal", expr=None):
    return define_op(
        name, family="elementwise", builtin=True, doc=doc,
        signature=f"{name}(x: Tensor{attrs}) -> Tensor",
        meta=_unary_meta(float_result, result), vjp=vjp if differentiable else None,
        structure=Structure.ELEMENTWISE, anchor=anchor, saves=saves, float_result=float_result,
        cost=cost, expr=expr)


def _reduce_broadcast(raw_vjp):
    """Wrap a binary VJP so each gradient is summed back to its input's shape."""

    def vjp(ctx, g):
        return tuple(None if gi is None or nxt is None else sum_to(gi, shape)
                     for gi, nxt, shape in zip(raw_vjp(ctx, g), ctx.next, ctx.input_shapes))

    return vjp


def _binary_op(name, doc, vjp, anchor, saves=("inputs",), float_result=False,
               differentiable=True, result=None, cost="normal", expr=None):
    """A binary op's contract; its function calls it through ``apply_binary``."""
    return define_op(
        name, family="elementwise", builtin=True, doc=doc,
        signature=f"{name}(a: Tensor | number, b: Tensor | number) -> Tensor",
        meta=_nary_meta(float_result, result),
        vjp=_reduce_broadcast(vjp) if differentiable else None,
        structure=Structure.BROADCAST, anchor=anchor, saves=saves, float_result=float_result,
        promotion="binary", cost=cost, expr=expr)


def _unary_fn(op):
    def fn(x: Tensor) -> Tensor:
        return apply_unary(op, x)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"{op.doc}\n\nContract: ``fw.ops.get({op.name!r})``."
    return fn


def _binary_fn(op):
    def fn(a: Tensor | float, b: Tensor | float) -> Tensor:
        return apply_binary(op, a, b)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"{op.doc} Broadcasts; Python scalars keep the tensor's dtype.\n\n" \
                 f"Contract: ``fw.ops.get({op.name!r})``."
    return fn


def _zero_grad(ctx, g):
    return (g * 0,)


_FLAT = anchors.flat("piecewise constant: the gradient is 0 wherever it is defined, so nothing "
                     "upstream learns through it")


def _reflected(fn):
    """``other <op> x`` for ``x.__r<op>__(other)``: ``fn(other, x)``, named after ``fn``."""

    def reflected(self, other):
        return fn(other, self)

    reflected.__module__, reflected.__doc__ = fn.__module__, f"``{fn.__name__}(other, x)``."
    reflected.__qualname__ = reflected.__name__ = f"reflected_{fn.__name__}"
    reflected.__wrapped__ = fn
    return reflected


def inplace_method(fn):
    """``x.add_(y)``: compute out of place, then write into ``x``'s storage (see tensor_methods);
    its signature and docstring are ``fn``'s, its name ``fn``'s with a trailing underscore."""

    def method(self, *args, **kwargs):
        from ..tensor_methods import assign_

        return assign_(self, fn(self, *args, **kwargs))

    functools.update_wrapper(method, fn)
    method.__qualname__ = method.__name__ = fn.__name__ + "_"
    return method
