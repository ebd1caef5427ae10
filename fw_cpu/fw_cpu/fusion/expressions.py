"""Scalar Numba expressions for the ops the CPU code generator can fuse.

Each entry turns an op's argument names (variables or literals of the generated loop body) and
attributes into one scalar expression with the same semantics as the op's NumPy kernel (NaN
propagation included: ``np.maximum`` rather than ``max``). Constants are wrapped in the dtype
the op computes in (``np.float32(0.5)``), as NumPy does with Python scalars, so float32 stays
float32 and results match the unfused kernels to a few ulps.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.compile.layout import computable, compute_dtype

from .. import fast_math

#: dtypes the generated loops handle (float16 and complex are left to the unfused kernels)
DTYPES = frozenset(["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"])


def constructor(dtype: np.dtype) -> str:
    """The Numba-callable that converts a scalar to ``dtype`` (``np.float32``, ``bool``)."""
    return "bool" if dtype.kind == "b" else f"np.{dtype.name}"


def literal(value, ctor: str) -> str:
    """A Python scalar as source text of the dtype ``ctor`` converts to."""
    if isinstance(value, bool) or ctor == "bool":
        return repr(bool(value))
    if isinstance(value, float) and not math.isfinite(value):
        text = "np.nan" if math.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
        return f"{ctor}({text})"
    return f"{ctor}({value!r})"


def _unary(template):
    return lambda a, attrs, c: template.format(a=a[0], one=c(1.0), zero=c(0.0))


def _binary(template):
    return lambda a, attrs, c: template.format(a=a[0], b=a[1])


def _gelu(a, attrs, c):
    x = a[0]
    if attrs.get("approximate", "none") == "tanh":
        inner = f"({x} + {c(0.044715)} * {x} * {x} * {x}) * {c(math.sqrt(2 / math.pi))}"
        return f"{c(0.5)} * {x} * ({c(1.0)} + np.tanh({inner}))"
    return f"{c(0.5)} * {x} * ({c(1.0)} + math.erf({x} * {c(1 / math.sqrt(2))}))"


def _softplus(a, attrs, c):
    x, beta, threshold = a[0], attrs["beta"], attrs["threshold"]
    scaled = f"({x} * {c(float(beta))})"
    return (f"{x} if {scaled} > {c(float(threshold))} else "
            f"np.logaddexp({c(0.0)}, {scaled}) / {c(float(beta))}")


def _clip(low_name, high_name):
    def expression(a, attrs, c):
        text = a[0]
        if attrs.get(low_name) is not None:
            text = f"np.maximum({text}, {c(attrs[low_name])})"
        if attrs.get(high_name) is not None:
            text = f"np.minimum({text}, {c(attrs[high_name])})"
        return text

    return expression


#: op name -> fn(argument texts, attrs, constant maker) -> expression text
EXPRESSIONS = {
    "neg": _unary("-{a}"), "abs": _unary("np.abs({a})"), "sign": _unary("np.sign({a})"),
    "exp": _unary("np.exp({a})"), "log": _unary("np.log({a})"),
    "log1p": _unary("np.log1p({a})"), "expm1": _unary("np.expm1({a})"),
    "sqrt": _unary("np.sqrt({a})"), "rsqrt": _unary("{one} / np.sqrt({a})"),
    "square": _unary("{a} * {a}"), "reciprocal": _unary("{one} / {a}"),
    "sin": _unary("np.sin({a})"), "cos": _unary("np.cos({a})"), "tanh": _unary("np.tanh({a})"),
    "sigmoid": _unary("{one} / ({one} + np.exp(-{a}))"), "erf": _unary("math.erf({a})"),
    "relu": _unary("np.maximum({a}, {zero})"),
    "silu": _unary("{a} / ({one} + np.exp(-{a}))"),
    "mish": _unary("{a} * np.tanh(np.logaddexp({zero}, {a}))"),
    "floor": _unary("np.floor({a})"), "ceil": _unary("np.ceil({a})"),
    "isnan": _unary("np.isnan({a})"), "isinf": _unary("np.isinf({a})"),
    "logical_not": _unary("not {a}"), "cast": _unary("{a}"), "clone": _unary("{a}"),
    "gelu": _gelu, "softplus": _softplus,
    "leaky_relu": lambda a, attrs, c: (f"{a[0]} if {a[0]} > {c(0.0)} else "
                                       f"{a[0]} * {c(float(attrs['negative_slope']))}"),
    "elu": lambda a, attrs, c: (f"{a[0]} if {a[0]} > {c(0.0)} else "
                                f"np.expm1({a[0]}) * {c(float(attrs['alpha']))}"),
    "hardtanh": _clip("min_val", "max_val"), "clamp": _clip("min", "max"),
    "add": _binary("{a} + {b}"), "sub": _binary("{a} - {b}"), "mul": _binary("{a} * {b}"),
    "div": _binary("{a} / {b}"), "pow": _binary("np.power({a}, {b})"),
    "maximum": _binary("np.maximum({a}, {b})"), "minimum": _binary("np.minimum({a}, {b})"),
    "eq": _binary("{a} == {b}"), "ne": _binary("{a} != {b}"), "lt": _binary("{a} < {b}"),
    "le": _binary("{a} <= {b}"), "gt": _binary("{a} > {b}"), "ge": _binary("{a} >= {b}"),
    "logical_and": _binary("({a} != 0) and ({b} != 0)"),
    "logical_or": _binary("({a} != 0) or ({b} != 0)"),
    "where": lambda a, attrs, c: f"{a[1]} if {a[0]} else {a[2]}",
}

#: ops whose integer versions differ from the float formula above (NumPy's integer rules)
FLOAT_ONLY = frozenset(["sigmoid", "erf", "silu", "mish", "gelu", "softplus", "elu", "rsqrt",
                        "reciprocal", "pow", "div", "leaky_relu"])


def supports(node) -> bool:
    """Whether the loop generator can compute this node (op known, dtypes handled)."""
    return computable(node, EXPRESSIONS, DTYPES,
                      lambda op: op.reduction is not None or op.name in FLOAT_ONLY)


def expression(node, args: list[str]) -> str:
    """The scalar expression computing ``node`` from argument texts ``args``."""
    ctor = constructor(compute_dtype(node))
    if ctor == "np.float32" and node.op.name in fast_math.OPS:
        # float32 erf / gelu / sigmoid / tanh / exp: vectorisable float64 formulas (libm's are
        # called per element and keep the loop from vectorising)
        return fast_math.expression(node.op.name, args[0], node.attrs)
    return EXPRESSIONS[node.op.name](args, node.attrs, lambda v: literal(v, ctor))
