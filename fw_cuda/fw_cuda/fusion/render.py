"""CUDA C of scalar formulas (:mod:`fw_core.ops.scalar`), C types and the float16 conversions.

A formula becomes one typed ``const`` statement per distinct primitive application, valid C
and CUDA C++ alike, so the tests can evaluate the very text the GPU compiles on the host with
g++. It is computed in the C type of the op's compute dtype with NumPy's semantics (NaN
propagates through maximum/minimum); comparisons and logic give ``bool``.

float16 (``__half``) follows NumPy's float16 ufuncs: values are loaded widened to float
(``__half2float``), the op is computed in float, and its result is rounded to half once
(``__float2half``; ``__double2half`` from a double, so a float64 -> float16 cast rounds once
too). A half value held in a C variable is a ``float`` that is exactly representable in half;
storing it is exact. Python scalars meeting a half op are rounded to half first (NumPy's weak
scalar rule); constants inside an op's formula (gelu's 0.044715) stay float.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.compile.layout import computable, compute_dtype, node_formula
from fw_core.ops import scalar

#: numpy dtype name -> C storage type (complex is left to the unfused kernels)
CTYPES = {"float16": "__half", "float32": "float", "float64": "double", "int8": "signed char",
          "int16": "short", "int32": "int", "int64": "long long", "uint8": "unsigned char",
          "bool": "bool"}

_HALF = np.dtype("float16")


def ctype(dtype) -> str:
    """The C type an array of ``dtype`` is stored as (``__half`` for float16)."""
    return CTYPES[np.dtype(dtype).name]


def value_ctype(dtype) -> str:
    """The C type a loaded or computed value of ``dtype`` is held in (float for float16)."""
    return "float" if np.dtype(dtype) == _HALF else ctype(dtype)


def is_half(dtype) -> bool:
    return np.dtype(dtype) == _HALF


def load(text: str, dtype) -> str:
    """C reading the stored element ``text`` as a value (widened for half)."""
    return f"__half2float({text})" if is_half(dtype) else text


def store(name: str, dtype) -> str:
    """C writing the value ``name`` (already rounded to ``dtype``) as a stored element."""
    return f"__float2half({name})" if is_half(dtype) else name


def convert(text: str, dtype, source: str) -> str:
    """C rounding expression ``text`` (of C type ``source``) to ``dtype``'s storage type."""
    if is_half(dtype):
        return f"__double2half({text})" if source == "double" else \
            f"__float2half((float)({text}))"
    return f"({ctype(dtype)})({text})"


def rounded(text: str, dtype, source: str) -> str:
    """C for expression ``text`` rounded to ``dtype`` and held as a value of that dtype."""
    stored = convert(text, dtype, source)
    return f"__half2float({stored})" if is_half(dtype) else stored


def literal(value, c_type: str) -> str:
    """A Python scalar as C source of type ``c_type`` (``0.5f``, ``(1.0/0.0)``, ``true``)."""
    if c_type == "bool":
        return "true" if value else "false"
    if c_type in ("float", "double"):
        suffix = "f" if c_type == "float" else ""
        value = float(value)
        if math.isnan(value):
            return f"(0.0{suffix} / 0.0{suffix})"
        if math.isinf(value):
            return f"({'-' if value < 0 else ''}1.0{suffix} / 0.0{suffix})"
        return f"{value!r}{suffix}"
    return f"(({c_type}){int(value)}LL)"


def _math(name: str, c_type: str) -> str:
    """The C math function for a type: ``expf`` for float, ``exp`` for double."""
    return name + "f" if c_type == "float" else name


_FLOATS = ("float", "double")

#: primitive -> C template over operand texts {0}, {1}, {2}; {one}, {zero}, {minus_one}, {inf}
#: are literals of the compute type
_TEMPLATES = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "neg": "(-{0})",
    "maximum": "(({0} > {1} || {0} != {0}) ? {0} : {1})",  # NaN-propagating, like np.maximum
    "minimum": "(({0} < {1} || {0} != {0}) ? {0} : {1})",
    "abs": "(({0}) < {zero} ? -({0}) : ({0}))",
    "sign": "(({0}) > {zero} ? {one} : (({0}) < {zero} ? {minus_one} : ({0})))",
    "where": "({0} ? {1} : {2})",
    "eq": "({0} == {1})", "ne": "({0} != {1})", "lt": "({0} < {1})", "le": "({0} <= {1})",
    "gt": "({0} > {1})", "ge": "({0} >= {1})",
    "logical_and": "(({0} != 0) && ({1} != 0))", "logical_or": "(({0} != 0) || ({1} != 0))",
    "logical_not": "(!{0})", "isnan": "({0} != {0})", "isinf": "({0} == {inf} || {0} == -{inf})",
}
#: primitives that are C math functions of the same name (``expf`` for float); on floats, abs
#: is ``fabs`` (-0.0 -> 0.0, NaN's payload kept)
_CALLS = frozenset(["floor", "ceil", "sqrt", "exp", "log", "log1p", "expm1", "tanh", "sin",
                    "cos", "erf", "erfc", "pow"])


def _body(op: str, texts: list[str], t: str, constants: dict) -> str:
    """The C expression of primitive ``op`` on operand texts, computed in C type ``t``."""
    if op in _CALLS or op == "abs" and t in _FLOATS:
        return f"{_math('fabs' if op == 'abs' else op, t)}({', '.join(texts)})"
    return _TEMPLATES[op].format(*texts, **constants)


def statements(expr: scalar.Expr, args: list[tuple[str, str]], t: str,
               name: str) -> tuple[list[str], str]:
    """C statements computing ``expr`` in C type ``t`` into the variable ``name`` from
    ``args`` (per argument: its text and C type) -> (lines, ``name``'s C type; not yet
    rounded to the result dtype). Temporaries are ``name_k``."""
    constants = {"one": literal(1, t), "zero": literal(0, t), "minus_one": literal(-1, t),
                 "inf": literal(math.inf, t) if t in _FLOATS else ""}
    typed: dict[scalar.Expr, tuple[str, str]] = {}

    def operand(e: scalar.Expr) -> tuple[str, str]:
        if e.op == "arg":
            return args[e.value]
        if e.op == "const":
            return literal(e.value, t), t
        return typed[e]

    lines = []
    for k, e in enumerate(scalar.schedule(expr)):
        c_type = "bool" if scalar.boolean(e) else t
        typed[e] = (name if e is expr else f"{name}_{k}", c_type)
        body = _body(e.op, [operand(a)[0] for a in e.args], t, constants)
        lines.append(f"const {c_type} {typed[e][0]} = {body};")
    if expr in typed:
        return lines, typed[expr][1]
    text, c_type = operand(expr)
    return [f"const {c_type} {name} = {text};"], c_type


def supports(node) -> bool:
    """Whether the generator can compute this node (a formula, dtypes handled)."""
    return computable(node, CTYPES)


def node_statements(node, args: list[str | None], name: str) -> list[str]:
    """C statements assigning ``node``'s value, rounded to its dtype (held as a value of it), to
    variable ``name`` from argument texts (None: a Python scalar there, written as a literal of
    the op's compute dtype)."""
    dtype = compute_dtype(node)
    t = value_ctype(dtype)
    typed = [(literal(_weak(v, dtype), t), t) if a is None else (a, value_ctype(v.dtype))
             for a, v in zip(args, node.inputs)]
    lines, c_type = statements(node_formula(node), typed, t, f"{name}_")
    value = rounded(f"{name}_", node.out.dtype, c_type)
    return lines + [f"const {value_ctype(node.out.dtype)} {name} = {value};"]


def _weak(value, dtype):
    """A Python scalar as NumPy casts it to an array's dtype: rounded to half for float16."""
    if not is_half(dtype) or isinstance(value, bool):
        return value
    with np.errstate(over="ignore"):
        return float(np.float16(value))
