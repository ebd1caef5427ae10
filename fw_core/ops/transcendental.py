"""Elementwise functions beyond the basic ones: the other trigonometric and hyperbolic functions
and their inverses, logarithms and powers in base 2 and 10, truncation, and the C library's
``fmod``, ``copysign`` and ``hypot``, with ``nan_to_num`` and ``sgn``.

They belong to the elementwise family (same meta rule, Jacobian structure and helpers as
:mod:`fw_core.ops.elementwise`); each gradient is written in fw ops, so it is differentiable
again. Integer inputs give float32, as in PyTorch.
"""

from __future__ import annotations

__all__ = ["acos", "acosh", "arctan2", "asin", "asinh", "atan", "atan2", "atanh", "copysign",
           "cosh", "exp2", "fmod", "frac", "hypot", "log10", "log2", "nan_to_num", "sgn", "sinh",
           "tan", "trunc"]

import math

import numpy as np

from .. import dtypes as _dt
from ..errors import DTypeError
from ..tensor import Tensor
from . import anchors, scalar
from ._elementwise_support import _FLAT, _binary_fn, _binary_op, _unary_fn, _unary_op, _zero_grad
from .dispatch import apply, apply_binary, apply_unary
from .elementwise import (
    isinf,
    isnan,
    logical_or,
    sign,
    sqrt,
    square,
    where,
)
from .meta import located, promote, spec_of


def _trunc(x):
    """The formula of x rounded toward zero."""
    return scalar.where(scalar.lt(x, 0.0), scalar.ceil(x), scalar.floor(x))


def _near(value: float):
    """The region within 1e-6 of ``|x| = value``, where a gradient below explodes."""
    return lambda x: abs(abs(x) - value) <= 1e-6


TAN = _unary_op("tan", "Tangent.", lambda ctx, g: (g * (1 + square(ctx.out)),),
                anchors.pole("poles at pi/2 + k pi, where tan and its gradient 1 + tan^2 "
                             "explode", region=lambda x: abs(math.cos(x)) <= 1e-6),
                saves=("out",), float_result=True, expr=lambda x: scalar.sin(x) / scalar.cos(x))
ASIN = _unary_op("asin", "Inverse sine, in [-pi/2, pi/2].",
                 lambda ctx, g: (g / sqrt(1 - square(ctx.inputs[0])),),
                 anchors.pole("the gradient 1/sqrt(1 - x^2) explodes at x = +-1; NaN outside "
                              "[-1, 1]", region=_near(1.0)), float_result=True)
ACOS = _unary_op("acos", "Inverse cosine, in [0, pi].",
                 lambda ctx, g: (-g / sqrt(1 - square(ctx.inputs[0])),),
                 anchors.pole("the gradient -1/sqrt(1 - x^2) explodes at x = +-1; NaN outside "
                              "[-1, 1]", region=_near(1.0)), float_result=True)
ATAN = _unary_op("atan", "Inverse tangent, in (-pi/2, pi/2).",
                 lambda ctx, g: (g / (1 + square(ctx.inputs[0])),),
                 anchors.saturation("saturates to +-pi/2: the gradient 1/(1 + x^2) is ~0 for "
                                    "large |x|", region=lambda x: abs(x) > 100),
                 float_result=True)
SINH = _unary_op("sinh", "Hyperbolic sine.", lambda ctx, g: (g * cosh(ctx.inputs[0]),),
                 anchors.smooth("smooth; overflows to inf above ~89 in float32"),
                 float_result=True,
                 expr=lambda x: (scalar.expm1(x) - scalar.expm1(-x)) * 0.5)  # exact near 0
COSH = _unary_op("cosh", "Hyperbolic cosine.", lambda ctx, g: (g * sinh(ctx.inputs[0]),),
                 anchors.smooth("smooth; overflows to inf above ~89 in float32"),
                 float_result=True, expr=lambda x: (scalar.exp(x) + scalar.exp(-x)) * 0.5)
ASINH = _unary_op("asinh", "Inverse hyperbolic sine.",
                  lambda ctx, g: (g / sqrt(square(ctx.inputs[0]) + 1),), anchors.smooth(),
                  float_result=True)
ACOSH = _unary_op("acosh", "Inverse hyperbolic cosine (x >= 1).",
                  lambda ctx, g: (g / sqrt(square(ctx.inputs[0]) - 1),),
                  anchors.pole("the gradient 1/sqrt(x^2 - 1) explodes at x = 1; NaN below 1",
                               region=lambda x: x <= 1 + 1e-6), float_result=True)
ATANH = _unary_op("atanh", "Inverse hyperbolic tangent (|x| < 1).",
                  lambda ctx, g: (g / (1 - square(ctx.inputs[0])),),
                  anchors.pole("atanh and its gradient 1/(1 - x^2) explode at x = +-1; NaN "
                               "outside [-1, 1]", region=_near(1.0)), float_result=True)
LOG2 = _unary_op("log2", "Base-2 logarithm.",
                 lambda ctx, g: (g / (ctx.inputs[0] * math.log(2.0)),),
                 anchors.pole("-inf at 0 and the gradient 1/(x ln 2) explodes near 0; NaN for "
                              "x < 0", region=lambda x: x <= 1e-12), float_result=True,
                 expr=lambda x: scalar.log(x) * (1 / math.log(2.0)))
LOG10 = _unary_op("log10", "Base-10 logarithm.",
                  lambda ctx, g: (g / (ctx.inputs[0] * math.log(10.0)),),
                  anchors.pole("-inf at 0 and the gradient 1/(x ln 10) explodes near 0; NaN "
                               "for x < 0", region=lambda x: x <= 1e-12), float_result=True,
                  expr=lambda x: scalar.log(x) * (1 / math.log(10.0)))
EXP2 = _unary_op("exp2", "2^x.", lambda ctx, g: (g * ctx.out * math.log(2.0),),
                 anchors.smooth("smooth, but the gradient grows like the output: 2^x overflows "
                                "to inf from 128 in float32"), saves=("out",), float_result=True,
                 expr=lambda x: 2.0 ** x)
TRUNC = _unary_op("trunc", "x rounded toward zero.", _zero_grad, _FLAT, saves=(), expr=_trunc)
FRAC = _unary_op("frac", "x - trunc(x): the fractional part, with x's sign.",
                 lambda ctx, g: (g,),
                 anchors.kink("jumps by 1 at every non-zero integer; between jumps the "
                              "gradient is 1", region=lambda x: x == round(x)), saves=(),
                 expr=lambda x: x - _trunc(x))

tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh = map(_unary_fn, (
    TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH))
log2, log10, exp2, trunc = map(_unary_fn, (LOG2, LOG10, EXP2, TRUNC))


def frac(x) -> Tensor:
    """x - trunc(x): the fractional part, with x's sign; DTypeError for integer input, as in
    PyTorch (whose integers have none).

    Contract: ``fw.ops.get('frac')``."""
    if isinstance(x, Tensor) and x.dtype.category != _dt.FLOATING:
        raise located(DTypeError(f"frac takes floating-point tensors, got {x.dtype.name}",
                                 op="frac", hint="an integer's fractional part is 0; convert "
                                 "with x.float() if you need it as a tensor"), None, (x,))
    return apply_unary(FRAC, x)



# -- the C library's remainder, sign transfer and hypotenuse -------------------------------------
def _fmod_vjp(ctx, g):
    a, b = ctx.inputs
    return (g if ctx.next[0] is not None else None,
            -g * trunc(a / b) if ctx.next[1] is not None else None)


def _copysign_vjp(ctx, g):
    """PyTorch's: ``g * out / a`` (+-1; NaN at an infinite a), 0 where a == 0; no gradient
    reaches b's sign."""
    a = ctx.inputs[0]
    ga = None
    if ctx.next[0] is not None:
        zero = a == 0
        ga = g * where(zero, 0.0, ctx.out / where(zero, 1.0, a))
    return ga, g * 0.0 if ctx.next[1] is not None else None


def _atan2_vjp(ctx, g):
    """d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2) for atan2(y, x)."""
    y, x = ctx.inputs
    r2 = square(x) + square(y)
    return (g * x / r2 if ctx.next[0] is not None else None,
            -g * y / r2 if ctx.next[1] is not None else None)


def _hypot_vjp(ctx, g):
    a, b = ctx.inputs
    return (g * a / ctx.out if ctx.next[0] is not None else None,
            g * b / ctx.out if ctx.next[1] is not None else None)


FMOD = _binary_op("fmod", "a - b * trunc(a / b): the remainder with the sign of a (C's fmod); "
                  "integer division by zero raises, as in PyTorch.", _fmod_vjp,
                  anchors.kink("jumps by b wherever a crosses a multiple of b; between jumps the "
                               "gradient w.r.t. a is 1"))
COPYSIGN = _binary_op("copysign", "|a| with the sign bit of b (-0.0 and NaN's sign bit count); "
                      "integers give float32.", _copysign_vjp,
                      anchors.kink("the sign flips where b crosses 0 (b gets no gradient); at "
                                   "a = 0 the gradient is 0", region=lambda a, b: a == 0),
                      saves=("inputs", "out"), float_result=True)
HYPOT = _binary_op("hypot", "sqrt(a^2 + b^2) without overflow or underflow in the squares.",
                   _hypot_vjp,
                   anchors.kink("a cone's tip at a = b = 0: the gradient (a, b) / hypot is NaN "
                                "there", region=lambda a, b: a == 0 and b == 0),
                   saves=("inputs", "out"))

ATAN2 = _binary_op("atan2", "The angle of the point (b, a) (a = y, b = x), in [-pi, pi]; integers "
                   "give float32.", _atan2_vjp,
                   anchors.kink("jumps by 2 pi across the negative x axis (a crossing 0 with "
                                "b < 0); the gradient is NaN at a = b = 0",
                                region=lambda a, b: a == 0 and b <= 0),
                   float_result=True)


def _nan_to_num_vjp(ctx, g):
    x = ctx.inputs[0]
    return (where(logical_or(isnan(x), isinf(x)), 0.0, g),)


NAN_TO_NUM = _unary_op(
    "nan_to_num", "x with NaN, +inf and -inf replaced by the numbers given.", _nan_to_num_vjp,
    anchors.flat("a replaced element is a constant: its gradient is 0 (1 elsewhere)",
                 region=lambda x: not math.isfinite(x)),
    attrs=", nan: float, posinf: float, neginf: float")

fmod, copysign = map(_binary_fn, (FMOD, COPYSIGN))


def atan2(input, other) -> Tensor:
    """``atan(input / other)`` with the quadrant taken from both signs: the angle of the point
    (other, input), in [-pi, pi], elementwise (broadcast). Integers give float32, as in PyTorch.

    Contract: ``fw.ops.get('atan2')``."""
    return apply_binary(ATAN2, input, other)


arctan2 = atan2  # PyTorch's NumPy-style alias


def hypot(input, other) -> Tensor:
    """``sqrt(input^2 + other^2)``, elementwise (broadcast), exact where the squares would
    overflow. Floating point only: DTypeError for integers, which PyTorch refuses too.

    Contract: ``fw.ops.get('hypot')``."""
    dtype = promote(*(spec_of(o) for o in (input, other)))
    if dtype.category != _dt.FLOATING:
        raise located(DTypeError(f"hypot takes floating-point tensors, got {dtype.name}",
                                 op="hypot", hint="convert first, e.g. x.float()"), None,
                      tuple(v for v in (input, other) if isinstance(v, Tensor)))
    return apply_binary(HYPOT, input, other)


def nan_to_num(input, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``; the
    infinities default to the dtype's largest and lowest finite values, as in PyTorch.
    Integers and bools come back unchanged (a copy).

    Contract: ``fw.ops.get('nan_to_num')``."""
    largest = float(np.finfo(input.dtype.numpy).max) if input.dtype.is_floating_point else 0.0
    attrs = {"nan": float(nan), "posinf": largest if posinf is None else float(posinf),
             "neginf": -largest if neginf is None else float(neginf)}
    return apply(NAN_TO_NUM, (input,), attrs)


def sgn(input) -> Tensor:
    """The sign of each element (-1, 0 or 1; NaN stays NaN): PyTorch's ``sgn``, which for
    real tensors is ``sign``."""
    return sign(input)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
