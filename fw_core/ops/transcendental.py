"""Elementwise functions beyond the basic ones: the other trigonometric and hyperbolic functions
and their inverses, logarithms and powers in base 2 and 10, and truncation.

They belong to the elementwise family (same meta rule, Jacobian structure and helpers as
:mod:`fw_core.ops.elementwise`); each gradient is written in fw ops, so it is differentiable
again. Integer inputs give float32, as in PyTorch.
"""

from __future__ import annotations

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "exp2", "frac", "log10",
           "log2", "sinh", "tan", "trunc"]

import math

from .. import dtypes as _dt
from ..errors import DTypeError
from ..tensor import Tensor
from . import anchors
from .dispatch import apply_unary
from .elementwise import _FLAT, _unary_fn, _unary_op, _zero_grad, sqrt, square
from .meta import located


def _near(value: float):
    """The region within 1e-6 of ``|x| = value``, where a gradient below explodes."""
    return lambda x: abs(abs(x) - value) <= 1e-6


TAN = _unary_op("tan", "Tangent.", lambda ctx, g: (g * (1 + square(ctx.out)),),
                anchors.pole("poles at pi/2 + k pi, where tan and its gradient 1 + tan^2 "
                             "explode", region=lambda x: abs(math.cos(x)) <= 1e-6),
                saves=("out",), float_result=True)
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
                 float_result=True)
COSH = _unary_op("cosh", "Hyperbolic cosine.", lambda ctx, g: (g * sinh(ctx.inputs[0]),),
                 anchors.smooth("smooth; overflows to inf above ~89 in float32"),
                 float_result=True)
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
                              "x < 0", region=lambda x: x <= 1e-12), float_result=True)
LOG10 = _unary_op("log10", "Base-10 logarithm.",
                  lambda ctx, g: (g / (ctx.inputs[0] * math.log(10.0)),),
                  anchors.pole("-inf at 0 and the gradient 1/(x ln 10) explodes near 0; NaN "
                               "for x < 0", region=lambda x: x <= 1e-12), float_result=True)
EXP2 = _unary_op("exp2", "2^x.", lambda ctx, g: (g * ctx.out * math.log(2.0),),
                 anchors.smooth("smooth, but the gradient grows like the output: 2^x overflows "
                                "to inf from 128 in float32"), saves=("out",), float_result=True)
TRUNC = _unary_op("trunc", "x rounded toward zero.", _zero_grad, _FLAT, saves=())
FRAC = _unary_op("frac", "x - trunc(x): the fractional part, with x's sign.",
                 lambda ctx, g: (g,),
                 anchors.kink("jumps by 1 at every non-zero integer; between jumps the "
                              "gradient is 1", region=lambda x: x == round(x)), saves=())

tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh = map(_unary_fn, (
    TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH))
log2, log10, exp2, trunc = map(_unary_fn, (LOG2, LOG10, EXP2, TRUNC))


def frac(x):
    """x - trunc(x): the fractional part, with x's sign; DTypeError for integer input, as in
    PyTorch (whose integers have none).

    Contract: ``fw.ops.get('frac')``."""
    if isinstance(x, Tensor) and x.dtype.category != _dt.FLOATING:
        raise located(DTypeError(f"frac takes floating-point tensors, got {x.dtype.name}",
                                 op="frac", hint="an integer's fractional part is 0; convert "
                                 "with x.float() if you need it as a tensor"), None, (x,))
    return apply_unary(FRAC, x)

#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
