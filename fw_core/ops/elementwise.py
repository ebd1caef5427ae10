"""Elementwise ops: one output element from the matching element of each (broadcast) input.

Every op of the family has the same meta rule (broadcast + promote), the same Jacobian
structure (diagonal) and, for binary ops, the reduction of broadcast gradients
(:mod:`._elementwise_support`); elementwise ops have a formula (``expr``), so they fuse. The
bitwise ops live in :mod:`.bitwise` and are bound as Tensor operators here.
"""

from __future__ import annotations

__all__ = ["abs", "add", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
           "bitwise_right_shift", "bitwise_xor", "ceil", "clamp", "cos", "digamma", "div", "elu",
           "eq", "erf", "exp", "expm1", "floor", "floor_divide", "ge", "gelu", "gt", "hardtanh",
           "isinf", "isnan", "le", "leaky_relu", "lgamma", "log", "log1p", "logical_and",
           "logical_not", "logical_or", "lt", "maximum", "minimum", "mish", "mul", "ne", "neg",
           "polygamma", "pow", "reciprocal", "relu", "remainder", "round", "rsqrt", "sigmoid",
           "sign", "silu", "sin", "softplus", "sqrt", "square", "sub", "tanh", "where"]

import math

from .. import dtypes as _dt
from ..errors import ArgumentTypeError, DTypeError, FwError, InvalidArgumentError
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from . import anchors, scalar
from ._elementwise_support import (
    _FLAT,
    _binary_fn,
    _binary_op,
    _reduce_broadcast,
    _reflected,
    _unary_fn,
    _unary_op,
    _zero_grad,
    inplace_method,
)
from .bitwise import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
)
from .dispatch import apply
from .meta import argument_error, broadcast_shapes, located, promote
from .registry import define_op

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# -- formulas several ops share (see fw_core.ops.scalar) ------------------------------------------
def _sigmoid(x):
    """1 / (1 + e^-x): e^-x overflowing to inf gives 0, as it should."""
    return 1.0 / (1.0 + scalar.exp(-x))


def _softplus(s):
    """log(1 + e^s) without overflow: max(s, 0) + log1p(e^-|s|)."""
    return scalar.maximum(s, 0.0) + scalar.log1p(scalar.exp(-scalar.abs(s)))


def _softplus_formula(x, beta, threshold):
    scaled = x * beta
    return scalar.where(scalar.gt(scaled, threshold), x, _softplus(scaled) / beta)


def _gelu_formula(x, approximate):
    """x * Phi(x) as x erfc(-x / sqrt 2) / 2 (no cancellation for x < 0); the tanh form as
    x * sigmoid(2 v), since 1 + tanh(v) = 2 sigmoid(2 v)."""
    if approximate == "tanh":
        return x * _sigmoid((x + x * x * x * 0.044715) * (2 * _SQRT_2_OVER_PI))
    return x * 0.5 * scalar.erfc(x * -_INV_SQRT_2)


def _clamp_formula(x, min, max):
    if min is not None:
        x = scalar.maximum(x, min)
    return x if max is None else scalar.minimum(x, max)


# -- unary ----------------------------------------------------------------------------------------
NEG = _unary_op("neg", "-x.", lambda ctx, g: (-g,), anchors.smooth(), saves=(), cost="cheap",
                expr=lambda x: -x)
ABS = _unary_op("abs", "|x|.", lambda ctx, g: (g * sign(ctx.inputs[0]),),
                anchors.kink("corner at 0: the gradient flips sign and is 0 exactly at 0",
                             region=lambda x: x == 0), cost="cheap", expr=scalar.abs)
SIGN = _unary_op("sign", "-1, 0 or 1 by the sign of x.", _zero_grad, _FLAT, saves=(),
                 expr=scalar.sign)
EXP = _unary_op("exp", "e^x.", lambda ctx, g: (g * ctx.out,),
                anchors.smooth("smooth, but the gradient grows like the output: exp overflows "
                               "to inf above ~88 in float32"), saves=("out",), float_result=True,
                expr=scalar.exp)
LOG = _unary_op("log", "Natural logarithm.", lambda ctx, g: (g / ctx.inputs[0],),
                anchors.pole("log(0) = -inf and its gradient 1/x explodes near 0; log(x < 0) is "
                             "NaN: clamp x, or take the log where it is made (log_softmax(x) for "
                             "log(softmax(x)), log_sigmoid, cross_entropy on logits, log1p)",
                             region=lambda x: x <= 1e-12), float_result=True, expr=scalar.log)
LOG1P = _unary_op("log1p", "log(1 + x), accurate for small x.",
                  lambda ctx, g: (g / (ctx.inputs[0] + 1),),
                  anchors.pole("pole at x = -1; NaN below it", region=lambda x: x <= -1 + 1e-12),
                  float_result=True, expr=scalar.log1p)
EXPM1 = _unary_op("expm1", "e^x - 1, accurate for small x.", lambda ctx, g: (g * (ctx.out + 1),),
                  anchors.smooth("smooth; overflows like exp"), saves=("out",), float_result=True,
                  expr=scalar.expm1)
SQRT = _unary_op("sqrt", "Square root.", lambda ctx, g: (g / (ctx.out * 2),),
                 anchors.pole("gradient 1/(2 sqrt x) explodes at 0; NaN for x < 0",
                              region=lambda x: x <= 1e-12), saves=("out",), float_result=True,
                 expr=scalar.sqrt)
RSQRT = _unary_op("rsqrt", "1 / sqrt(x).",
                  lambda ctx, g: (g * ctx.out * ctx.out * ctx.out * -0.5,),
                  anchors.pole("explodes at 0 (add an epsilon, as normalisations do); NaN "
                               "for x < 0",
                               region=lambda x: x <= 1e-12), saves=("out",), float_result=True,
                  expr=lambda x: 1.0 / scalar.sqrt(x))
SQUARE = _unary_op("square", "x * x.", lambda ctx, g: (g * ctx.inputs[0] * 2,), anchors.smooth(),
                   cost="cheap", expr=lambda x: x * x)
RECIPROCAL = _unary_op("reciprocal", "1 / x.", lambda ctx, g: (-g * ctx.out * ctx.out,),
                       anchors.pole("1/x and its gradient -1/x^2 explode near 0",
                                    region=lambda x: abs(x) <= 1e-12),
                       saves=("out",), float_result=True, expr=lambda x: 1.0 / x)
SIN = _unary_op("sin", "Sine.", lambda ctx, g: (g * cos(ctx.inputs[0]),), anchors.smooth(),
                float_result=True, expr=scalar.sin)
COS = _unary_op("cos", "Cosine.", lambda ctx, g: (-g * sin(ctx.inputs[0]),), anchors.smooth(),
                float_result=True, expr=scalar.cos)
_SATURATES = "saturates: for |x| > ~{} the gradient is under 3% of its peak and the unit stops " \
    "learning"
TANH = _unary_op("tanh", "Hyperbolic tangent.", lambda ctx, g: (g * (1 - ctx.out * ctx.out),),
                 anchors.saturation(_SATURATES.format(3), region=lambda x: abs(x) > 3),
                 saves=("out",), float_result=True, expr=scalar.tanh)
SIGMOID = _unary_op("sigmoid", "1 / (1 + e^-x).",
                    lambda ctx, g: (g * ctx.out * (1 - ctx.out),),
                    anchors.saturation(_SATURATES.format(5), region=lambda x: abs(x) > 5),
                    saves=("out",), float_result=True, expr=_sigmoid)
ERF = _unary_op("erf", "The error function, 2/sqrt(pi) * integral of e^(-t^2) from 0 to x.",
                lambda ctx, g: (g * exp(-square(ctx.inputs[0])) * (2 / math.sqrt(math.pi)),),
                anchors.saturation("saturates to +-1 for |x| > ~3", region=lambda x: abs(x) > 3),
                float_result=True, expr=scalar.erf)
_AT_POLES = "poles at 0, -1, -2, ...: the value and its gradient explode there"


def _near_pole(x):
    return (x <= 0) & (abs(x - (x + 0.5) // 1) < 1e-6)


LGAMMA = _unary_op("lgamma", "log |Gamma(x)|, the log of the gamma function's magnitude.",
                   lambda ctx, g: (g * digamma(ctx.inputs[0]),),
                   anchors.pole(_AT_POLES, region=_near_pole), float_result=True)
DIGAMMA = _unary_op("digamma", "d/dx lgamma(x) = Gamma'(x) / Gamma(x) (psi); -inf at 0, NaN at "
                    "the negative integers, as in PyTorch.",
                    lambda ctx, g: (g * polygamma(1, ctx.inputs[0]),),
                    anchors.pole(_AT_POLES, region=_near_pole), float_result=True)
POLYGAMMA = _unary_op("polygamma", "The n-th derivative of digamma (n = 0 is digamma itself).",
                      lambda ctx, g: (g * polygamma(ctx.attrs["n"] + 1, ctx.inputs[0]),),
                      anchors.pole(_AT_POLES, region=_near_pole), attrs=", n: int",
                      float_result=True)
RELU = _unary_op("relu", "max(x, 0).", lambda ctx, g: (g * (ctx.inputs[0] > 0),),
                 anchors.kink("gradient is exactly 0 for x < 0: units that stay below 0 stop "
                              "learning (dead ReLU)", region=lambda x: x <= 0, dead=True),
                 cost="cheap",
                 expr=lambda x: scalar.maximum(x, 0.0))
FLOOR = _unary_op("floor", "Largest integer <= x.", _zero_grad, _FLAT, saves=(), expr=scalar.floor)
CEIL = _unary_op("ceil", "Smallest integer >= x.", _zero_grad, _FLAT, saves=(), expr=scalar.ceil)
ROUND = _unary_op("round", "Nearest integer, ties to even.", _zero_grad, _FLAT, saves=())


def _silu_vjp(ctx, g):
    x = ctx.inputs[0]
    s = sigmoid(x)
    return (g * s * (1 + x * (1 - s)),)


SILU = _unary_op("silu", "x * sigmoid(x) (swish).", _silu_vjp,
                 anchors.smooth("smooth; the gradient is ~0 for x < -6"),
                 expr=lambda x: x / (1.0 + scalar.exp(-x)))


def _mish_vjp(ctx, g):
    x = ctx.inputs[0]
    t = tanh(softplus(x))
    return (g * (t + x * sigmoid(x) * (1 - t * t)),)


MISH = _unary_op("mish", "x * tanh(softplus(x)).", _mish_vjp,
                 anchors.smooth("smooth; the gradient is ~0 for x < -6"),
                 expr=lambda x: x * scalar.tanh(_softplus(x)))


def _softplus_vjp(ctx, g):
    x = ctx.inputs[0]
    beta, threshold = ctx.attrs["beta"], ctx.attrs["threshold"]
    return (g * where(x * beta > threshold, 1.0, sigmoid(x * beta)),)


SOFTPLUS = _unary_op("softplus",
                     "log(1 + e^(beta x)) / beta; x itself where beta x > threshold.",
                     _softplus_vjp,
                     anchors.smooth("smooth; the gradient is ~0 for very negative x"),
                     attrs=", beta: float = 1, threshold: float = 20", float_result=True,
                     expr=_softplus_formula)


def _leaky_relu_vjp(ctx, g):
    return (where(ctx.inputs[0] > 0, g, g * ctx.attrs["negative_slope"]),)


LEAKY_RELU = _unary_op("leaky_relu", "x for x > 0, negative_slope * x otherwise.",
                       _leaky_relu_vjp,
                       anchors.kink("corner at 0; below 0 the gradient is only negative_slope",
                                    region=lambda x: x <= 0),
                       attrs=", negative_slope: float = 0.01", cost="cheap",
                       expr=lambda x, negative_slope:
                       scalar.where(scalar.gt(x, 0.0), x, x * negative_slope))


def _elu_vjp(ctx, g):
    x = ctx.inputs[0]
    return (g * where(x > 0, 1.0, exp(x) * ctx.attrs["alpha"]),)


ELU = _unary_op("elu", "x for x > 0, alpha * (e^x - 1) otherwise.", _elu_vjp,
                anchors.saturation("for very negative x the output saturates at -alpha and the "
                                   "gradient vanishes", region=lambda x: x < -5),
                attrs=", alpha: float = 1", float_result=True,
                expr=lambda x, alpha: scalar.where(scalar.gt(x, 0.0), x, scalar.expm1(x) * alpha))


def _gelu_vjp(ctx, g):
    x = ctx.inputs[0]
    if ctx.attrs["approximate"] == "tanh":
        inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
        t = tanh(inner)
        d_inner = (1 + x * x * (3 * 0.044715)) * _SQRT_2_OVER_PI
        return (g * ((1 + t) * 0.5 + x * 0.5 * (1 - t * t) * d_inner),)
    cdf = (erf(x * _INV_SQRT_2) + 1) * 0.5
    pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


GELU = _unary_op("gelu", "x * Phi(x) (Phi: the standard normal CDF); approximate='tanh' uses "
                 "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).", _gelu_vjp,
                 anchors.smooth("smooth; the gradient is ~0 for x < -4"),
                 attrs=", approximate: str = 'none'", float_result=True, expr=_gelu_formula)


def _hardtanh_vjp(ctx, g):
    x = ctx.inputs[0]
    return (g * logical_and(x > ctx.attrs["min_val"], x < ctx.attrs["max_val"]),)


HARDTANH = _unary_op("hardtanh", "x clipped to [min_val, max_val].", _hardtanh_vjp,
                     anchors.saturation("outside [min_val, max_val] the gradient is exactly 0"),
                     attrs=", min_val: float = -1, max_val: float = 1", cost="cheap",
                     expr=lambda x, min_val, max_val: _clamp_formula(x, min_val, max_val))


def _clamp_vjp(ctx, g):
    x = ctx.inputs[0]
    lo, hi = ctx.attrs["min"], ctx.attrs["max"]
    keep = None
    if lo is not None:
        keep = x >= lo
    if hi is not None:
        keep = x <= hi if keep is None else logical_and(keep, x <= hi)
    return (g if keep is None else g * keep,)


CLAMP = _unary_op("clamp", "x limited to [min, max] (either bound may be None).", _clamp_vjp,
                  anchors.saturation("outside [min, max] the gradient is exactly 0"),
                  attrs=", min: float | None = None, max: float | None = None", cost="cheap",
                  expr=_clamp_formula)

ISNAN = _unary_op("isnan", "True where x is NaN.", None, _FLAT, saves=(), differentiable=False,
                  result=_dt.bool_, expr=scalar.isnan)
ISINF = _unary_op("isinf", "True where x is +-inf.", None, _FLAT, saves=(), differentiable=False,
                  result=_dt.bool_, expr=scalar.isinf)
LOGICAL_NOT = _unary_op("logical_not", "not x (nonzero is True).", None, _FLAT, saves=(),
                        differentiable=False, result=_dt.bool_, expr=scalar.logical_not)

# -- binary ---------------------------------------------------------------------------------------
ADD = _binary_op("add", "a + b.", lambda ctx, g: (g, g), anchors.smooth(), saves=(), cost="cheap",
                 expr=lambda a, b: a + b)
SUB = _binary_op("sub", "a - b.", lambda ctx, g: (g, -g), anchors.smooth(), saves=(), cost="cheap",
                 expr=lambda a, b: a - b)


def _mul_vjp(ctx, g):
    a, b = ctx.inputs
    return (g * b if ctx.next[0] is not None else None,
            g * a if ctx.next[1] is not None else None)


MUL = _binary_op("mul", "a * b.", _mul_vjp, anchors.smooth("bilinear: the gradient w.r.t. one "
                                                            "input is the other"), cost="cheap",
                 expr=lambda a, b: a * b)


def _div_vjp(ctx, g):
    a, b = ctx.inputs
    ga = g / b if ctx.next[0] is not None else None
    gb = -g * a / (b * b) if ctx.next[1] is not None else None
    return ga, gb


DIV = _binary_op("div", "a / b (true division: integers give float32).", _div_vjp,
                 anchors.pole("division near 0: the result and the gradient -a/b^2 explode as b "
                              "-> 0; add an epsilon to the denominator",
                              region=lambda a, b: abs(b) <= 1e-12),
                 float_result=True, expr=lambda a, b: a / b)


def _pow_vjp(ctx, g):
    """PyTorch's pow gradients: 0 w.r.t. the base where the exponent is 0 (x ** 0 is the
    constant 1, even at x = 0 or inf); ``out * log(a)`` w.r.t. the exponent, except 0 where
    a == 0 and b >= 0 (0 ** b is flat there), so a negative base gives NaN and 0 ** b < 0
    gives -inf, as in PyTorch."""
    a, b = ctx.inputs
    ga = gb = None
    if ctx.next[0] is not None:
        if not isinstance(b, (int, float)):
            ga = g * where(b == 0, 0.0, b * a ** (b - 1))
        else:
            ga = g * 0.0 if b == 0 else g * b * a ** (b - 1)
    if ctx.next[1] is not None:
        if not isinstance(a, (int, float)):
            gb = g * where(logical_and(a == 0, b >= 0), 0.0, ctx.out * log(a))
        elif a == 0:
            gb = g * where(b >= 0, 0.0, ctx.out * -math.inf)
        else:
            gb = g * ctx.out * _scalar_log(a)
    return ga, gb


def _scalar_log(a: float) -> float:
    """log of a non-zero Python number as the tensor log gives it (NaN below 0)."""
    return math.log(a) if a > 0 else math.nan


POW = _binary_op("pow", "a ** b.", _pow_vjp,
                 anchors.pole("for b < 1 the gradient b a^(b-1) explodes at a = 0; a negative base "
                              "with a fractional exponent is NaN",
                              region=lambda a, b: abs(a) <= 1e-12),
                 saves=("inputs", "out"), expr=lambda a, b: a ** b)


def _max_min_vjp(pick):
    def vjp(ctx, g):
        a, b = ctx.inputs
        chosen = pick(a, b)
        tie = (a == b) * 0.5
        return (g * (chosen + tie), g * (logical_not(chosen) * 1.0 - tie))

    return vjp


MAXIMUM = _binary_op("maximum", "Elementwise max(a, b); ties split the gradient equally.",
                     _max_min_vjp(lambda a, b: a > b),
                     anchors.kink("corner where a == b: the gradient switches inputs"),
                     cost="cheap", expr=scalar.maximum)
MINIMUM = _binary_op("minimum", "Elementwise min(a, b); ties split the gradient equally.",
                     _max_min_vjp(lambda a, b: a < b),
                     anchors.kink("corner where a == b: the gradient switches inputs"),
                     cost="cheap", expr=scalar.minimum)

def _remainder_vjp(ctx, g):
    a, b = ctx.inputs
    return (g if ctx.next[0] is not None else None,
            -g * floor(a / b) if ctx.next[1] is not None else None)


REMAINDER = _binary_op("remainder", "a - b * floor(a / b): the remainder with the sign of b "
                       "(Python's %).", _remainder_vjp,
                       anchors.kink("jumps by b wherever a crosses a multiple of b; between jumps "
                                    "the gradient w.r.t. a is 1"))
FLOOR_DIVIDE = _binary_op("floor_divide", "floor(a / b) (Python's //); not differentiable, as "
                          "in PyTorch.", None, _FLAT, saves=(), differentiable=False)

_compare_doc = "Elementwise {} (a bool tensor)."
EQ, NE, LT, LE, GT, GE = (
    _binary_op(name, _compare_doc.format(sym), None, _FLAT, saves=(), differentiable=False,
               result=_dt.bool_, expr=formula)
    for name, sym, formula in (("eq", "a == b", scalar.eq), ("ne", "a != b", scalar.ne),
                               ("lt", "a < b", scalar.lt), ("le", "a <= b", scalar.le),
                               ("gt", "a > b", scalar.gt), ("ge", "a >= b", scalar.ge)))
LOGICAL_AND = _binary_op("logical_and", "a and b (nonzero is True).", None, _FLAT, saves=(),
                         differentiable=False, result=_dt.bool_, expr=scalar.logical_and)
LOGICAL_OR = _binary_op("logical_or", "a or b (nonzero is True).", None, _FLAT, saves=(),
                        differentiable=False, result=_dt.bool_, expr=scalar.logical_or)


def _where_meta(condition, a, b):
    if condition.dtype is not _dt.bool_:
        raise DTypeError(f"condition must be bool, got {condition.dtype.name}", op="where",
                         hint="compare first, e.g. fw.where(x > 0, x, 0)")
    shapes = [tuple(i.shape) for i in (condition, a, b) if isinstance(i, TensorSpec)]
    return TensorSpec(broadcast_shapes(*shapes, op="where"), promote(a, b) if any(
        isinstance(i, TensorSpec) for i in (a, b)) else _dt.default_float)


def _where_vjp(ctx, g):
    condition = ctx.inputs[0]
    return (None,
            where(condition, g, 0.0) if ctx.next[1] is not None else None,
            where(condition, 0.0, g) if ctx.next[2] is not None else None)


WHERE = define_op(
    "where", family="elementwise", builtin=True,
    doc="a where condition is True, else b (elementwise, broadcast).",
    signature="where(condition: Tensor[bool], a: Tensor | number, b: Tensor | number) -> Tensor",
    meta=_where_meta, vjp=_reduce_broadcast(_where_vjp), structure=Structure.BROADCAST,
    anchor=anchors.kink("switches between a and b: the gradient of the unselected side is 0"),
    saves=("inputs",), cost="cheap", expr=scalar.where)

# -- the public functions -------------------------------------------------------------------------
neg, abs, sign, exp, log, log1p, expm1, sqrt, rsqrt, square, reciprocal = map(_unary_fn, (
    NEG, ABS, SIGN, EXP, LOG, LOG1P, EXPM1, SQRT, RSQRT, SQUARE, RECIPROCAL))
sin, cos, tanh, sigmoid, erf, relu, silu, mish, floor, ceil, round = map(_unary_fn, (
    SIN, COS, TANH, SIGMOID, ERF, RELU, SILU, MISH, FLOOR, CEIL, ROUND))
isnan, isinf, logical_not, lgamma, digamma = map(_unary_fn, (
    ISNAN, ISINF, LOGICAL_NOT, LGAMMA, DIGAMMA))
_add, _sub, mul, true_div, pow, maximum, minimum, remainder, floor_divide = map(_binary_fn, (
    ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM, REMAINDER, FLOOR_DIVIDE))


def _scaled(b, alpha):
    return b if alpha == 1 else mul(b, alpha) if hasattr(b, "_data") else b * alpha


def add(a, b, *, alpha=1) -> Tensor:
    """a + alpha * b. Broadcasts; Python scalars keep the tensor's dtype.

    Contract: ``fw.ops.get('add')``."""
    return _add(a, _scaled(b, alpha))


def sub(a, b, *, alpha=1) -> Tensor:
    """a - alpha * b. Broadcasts; Python scalars keep the tensor's dtype.

    Contract: ``fw.ops.get('sub')``."""
    return _sub(a, _scaled(b, alpha))


def div(a, b, *, rounding_mode: str | None = None) -> Tensor:
    """a / b: true division (integers give float32), or with ``rounding_mode`` the quotient
    rounded toward zero (``"trunc"``) or down (``"floor"``, Python's //), in the operands'
    promoted dtype; a rounded quotient has no gradient, as in PyTorch.

    Contract: ``fw.ops.get('div')`` (``floor_divide`` for the rounded forms)."""
    if rounding_mode is None:
        return true_div(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        down = floor_divide(a, b)
        # the floor is one below the truncation where the division is inexact and negative
        negative = lt(true_div(a, b), 0)
        return where(logical_and(ne(remainder(a, b), 0), negative), down + 1, down)
    raise argument_error("div", f"rounding_mode must be None, 'trunc' or 'floor', got "
                         f"{rounding_mode!r}", "pass rounding_mode='trunc' or 'floor'",
                         error=InvalidArgumentError,
                         values=tuple(v for v in (a, b) if hasattr(v, "_data")))
eq, ne, lt, le, gt, ge, logical_and, logical_or = map(_binary_fn, (
    EQ, NE, LT, LE, GT, GE, LOGICAL_AND, LOGICAL_OR))

def leaky_relu(x, negative_slope: float = 0.01) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise."""
    return apply(LEAKY_RELU, (x,), {"negative_slope": float(negative_slope)})


def elu(x, alpha: float = 1.0) -> Tensor:
    """x for x > 0, ``alpha * (e^x - 1)`` otherwise."""
    return apply(ELU, (x,), {"alpha": float(alpha)})


def gelu(x, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate="tanh"`` for the tanh form."""
    if approximate not in ("none", "tanh"):
        raise argument_error("gelu", f"approximate must be 'none' or 'tanh', got "
                             f"{approximate!r}", "pass approximate='none' (exact) or 'tanh'",
                             values=(x,), approximate=approximate)
    return apply(GELU, (x,), {"approximate": approximate})


def softplus(x, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""
    return apply(SOFTPLUS, (x,), {"beta": float(beta), "threshold": float(threshold)})


def polygamma(n: int, x):
    """The ``n``-th derivative of digamma at x (PyTorch's argument order: n first)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise argument_error("polygamma", f"n must be an int >= 0, got {n!r}",
                             "pass the derivative order first: fw.polygamma(1, x)",
                             values=(x,), n=n)
    return apply(POLYGAMMA, (x,), {"n": n})


def hardtanh(x, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """x clipped to ``[min_val, max_val]``."""
    return apply(HARDTANH, (x,), {"min_val": float(min_val), "max_val": float(max_val)})


def clamp(x, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002 - torch's names
    """x limited to ``[min, max]``; either bound may be None."""
    if min is None and max is None:
        raise argument_error("clamp", "at least one of 'min' or 'max' must not be None",
                             "pass a bound, e.g. fw.clamp(x, min=0.0)",
                             error=InvalidArgumentError, values=(x,))
    return apply(CLAMP, (x,), {"min": min, "max": max})


#: where's default for a missing operand (None is a value where() refuses with a clear error)
_NOT_GIVEN = object()


def where(condition, a=_NOT_GIVEN, b=_NOT_GIVEN):
    """``a`` where ``condition`` is True, else ``b`` (broadcast); a and b may be Python scalars,
    which take the other operand's dtype category as in ``tensor op scalar``. With the
    condition alone, ``nonzero(condition, as_tuple=True)``, as in PyTorch."""
    if a is _NOT_GIVEN and b is _NOT_GIVEN:
        from .selection import nonzero

        return nonzero(condition, as_tuple=True)
    if a is _NOT_GIVEN or b is _NOT_GIVEN:
        raise ArgumentTypeError("give both a and b, or the condition alone", op="where",
                                hint="fw.where(cond, x, y) selects; fw.where(cond) gives the "
                                     "indices where cond is True")
    try:
        from ..tensor import Tensor
        from .creation import cast, full

        if not isinstance(condition, Tensor) or condition._data.dtype.kind != "b":
            raise DTypeError(f"condition must be a bool tensor, got {_describe_operand(condition)}",
                             op="where", hint="compare first, e.g. fw.where(x > 0, x, 0.0)")
        like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
        if like is None:
            dtype = _dt.default_float if float in (type(a), type(b)) else _dt.default_int
            like = full((), a, dtype=dtype, device=condition.device)
        a, b = (v if isinstance(v, Tensor) else full((), v, device=like.device, dtype=_dt.
                result_type_with_scalar(like.dtype, v)) for v in (a, b))
        if a._data.dtype != b._data.dtype:
            common = _dt.promote_types(a.dtype, b.dtype)
            a, b = cast(a, common), cast(b, common)
        return apply(WHERE, (condition, a, b))
    except FwError as err:
        raise located(err, "where", (condition, a, b)) from None


def _describe_operand(value) -> str:
    data = getattr(value, "_data", None)
    return type(value).__name__ if data is None else _dt.BY_NUMPY[data.dtype].name


def where_method(x: Tensor, condition: Tensor, other) -> Tensor:
    """``x.where(condition, other)``: x where ``condition`` holds, else ``other``."""
    return where(condition, x, other)


def polygamma_method(x: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)``: the n-th derivative of digamma at x."""
    return polygamma(n, x)


#: Tensor methods and operators this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__ if name not in ("where",)}
METHODS.update({
    "__neg__": neg, "__abs__": abs, "__add__": _add, "__radd__": _reflected(_add),
    "__sub__": _sub, "__rsub__": _reflected(_sub), "__mul__": mul, "__rmul__": _reflected(mul),
    "__truediv__": true_div, "__rtruediv__": _reflected(true_div), "__pow__": pow,
    "__rpow__": _reflected(pow), "__mod__": remainder, "__rmod__": _reflected(remainder),
    "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide), "__eq__": eq,
    "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "__and__": bitwise_and, "__rand__": _reflected(bitwise_and), "__or__": bitwise_or,
    "__ror__": _reflected(bitwise_or), "__xor__": bitwise_xor,
    "__rxor__": _reflected(bitwise_xor), "__lshift__": bitwise_left_shift,
    "__rlshift__": _reflected(bitwise_left_shift), "__rshift__": bitwise_right_shift,
    "__rrshift__": _reflected(bitwise_right_shift), "__invert__": bitwise_not, "clip": clamp,
    "true_divide": true_div, "divide": div, "multiply": mul,
    "subtract": sub, "where": where_method, "polygamma": polygamma_method,
})
for _name in ("add", "sub", "mul", "div", "pow", "clamp", "relu", "sigmoid", "tanh", "exp",
              "log", "sqrt", "neg", "abs", "floor", "ceil", "round", "square", "reciprocal"):
    METHODS[_name + "_"] = inplace_method(globals()[_name])
METHODS.update({"__iadd__": METHODS["add_"], "__isub__": METHODS["sub_"],
                "__imul__": METHODS["mul_"], "__itruediv__": METHODS["div_"]})
