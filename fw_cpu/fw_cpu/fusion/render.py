"""Numba source of scalar formulas (:mod:`fw_core.ops.scalar`): what a fused loop computes.

A formula becomes one statement per distinct primitive application, each a temporary of the
loop body, so a subformula used twice is computed once. It is computed in the op's compute
dtype with NumPy's semantics (NaN propagation included: ``np.maximum`` rather than ``max``);
constants are wrapped in that dtype (``np.float32(0.5)``) as NumPy does with Python scalars, so
float32 stays float32 and results match the unfused kernels to a few ulps. A float32 formula
that calls a math-library function is computed in float64 instead and rounded once, its
``exp``/``erf``/``erfc``/``tanh`` taken from :mod:`fw_cpu.vector_math` (vectorisable text where
libm's would be called per element): within an ulp of the exact result.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.compile.layout import computable, compute_dtype, node_formula
from fw_core.ops import scalar

from .. import vector_math

#: dtypes the generated loops handle (float16 and complex are left to the unfused kernels)
DTYPES = frozenset(["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"])

_FLOAT64 = np.dtype(np.float64)

#: primitive -> source template over operand texts {0}, {1}, {2}
_TEMPLATES = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "neg": "(-{0})", "pow": "np.power({0}, {1})", "maximum": "np.maximum({0}, {1})",
    "minimum": "np.minimum({0}, {1})", "where": "({1} if {0} else {2})",
    "eq": "({0} == {1})", "ne": "({0} != {1})", "lt": "({0} < {1})", "le": "({0} <= {1})",
    "gt": "({0} > {1})", "ge": "({0} >= {1})",
    "logical_and": "(({0} != 0) and ({1} != 0))", "logical_or": "(({0} != 0) or ({1} != 0))",
    "logical_not": "(not {0})", "erf": "math.erf({0})", "erfc": "math.erfc({0})",
    **{name: f"np.{name}({{0}})" for name in ("abs", "sign", "floor", "ceil", "sqrt", "exp",
                                              "log", "log1p", "expm1", "tanh", "sin", "cos",
                                              "isnan", "isinf")},
}


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


def statements(expr: scalar.Expr, args: list[str], dtype: np.dtype, name: str) -> list[str]:
    """Statements assigning ``expr`` of argument texts ``args``, computed in ``dtype``, to the
    variable ``name`` (not yet rounded to the result dtype; temporaries are ``name_k``)."""
    wide = dtype == np.float32 and scalar.transcendental(expr)
    ctor = constructor(_FLOAT64 if wide else dtype)
    texts: dict[scalar.Expr, str] = {}

    def text(e: scalar.Expr) -> str:
        if e.op == "arg":
            return f"np.float64({args[e.value]})" if wide else args[e.value]
        if e.op == "const":
            return literal(e.value, ctor)
        return texts[e]

    lines = []
    for k, e in enumerate(scalar.schedule(expr)):
        operands = [text(a) for a in e.args]
        if wide and e.op in vector_math.FLOAT64_TEXTS:
            body = vector_math.FLOAT64_TEXTS[e.op](operands[0])
        else:
            body = _TEMPLATES[e.op].format(*operands)
        texts[e] = name if e is expr else f"{name}_{k}"
        lines.append(f"{texts[e]} = {body}")
    return lines if expr in texts else [f"{name} = {text(expr)}"]


def supports(node) -> bool:
    """Whether the loop generator can compute this node (a formula, dtypes handled)."""
    return computable(node, DTYPES)


def node_statements(node, args: list[str], name: str) -> list[str]:
    """Statements assigning ``node``'s value, rounded to its dtype, to variable ``name``, from
    argument texts ``args``."""
    lines = statements(node_formula(node), args, compute_dtype(node), f"{name}_")
    return lines + [f"{name} = {constructor(node.out.dtype)}({name}_)"]
