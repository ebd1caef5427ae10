"""Per-op CUDA C expressions, C types and the float16 conversions of fused kernels.

Each op is a C expression over argument texts, valid C and CUDA C++ alike, so the tests can
evaluate the very text the GPU compiles on the host with g++.

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

from fw_core.compile.layout import computable, compute_dtype

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


def _call(name):
    return lambda a, attrs, c, t: f"{_math(name, t)}({a[0]})"


def _binary(template):
    return lambda a, attrs, c, t: template.format(a=a[0], b=a[1])


def _gelu(a, attrs, c, t):
    x = a[0]
    if attrs.get("approximate", "none") == "tanh":
        inner = f"({x} + {c(0.044715)} * {x} * {x} * {x}) * {c(math.sqrt(2 / math.pi))}"
        return f"({c(0.5)} * {x} * ({c(1.0)} + {_math('tanh', t)}({inner})))"
    return f"({c(0.5)} * {x} * ({c(1.0)} + {_math('erf', t)}({x} * {c(1 / math.sqrt(2))})))"


def _clamp(a, attrs, c, t):
    text = a[0]
    for key, pick in (("min", ">"), ("max", "<")):  # NaN-propagating, like np.maximum
        if attrs.get(key) is not None:
            bound = c(attrs[key])
            text = f"(({text}) {pick} {bound} || ({text}) != ({text}) ? ({text}) : {bound})"
    return text


#: op name -> fn(argument texts, attrs, literal maker, C type computed in) -> C expression.
EXPRESSIONS = {
    "add": _binary("({a} + {b})"), "sub": _binary("({a} - {b})"),
    "mul": _binary("({a} * {b})"), "div": _binary("({a} / {b})"),
    "neg": lambda a, attrs, c, t: f"(-{a[0]})",
    "exp": _call("exp"), "log": _call("log"), "tanh": _call("tanh"), "sqrt": _call("sqrt"),
    "erf": _call("erf"), "sin": _call("sin"), "cos": _call("cos"), "abs": _call("fabs"),
    "log1p": _call("log1p"), "expm1": _call("expm1"),
    "rsqrt": lambda a, attrs, c, t: f"({c(1.0)} / {_math('sqrt', t)}({a[0]}))",
    "reciprocal": lambda a, attrs, c, t: f"({c(1.0)} / {a[0]})",
    "square": lambda a, attrs, c, t: f"({a[0]} * {a[0]})",
    "sigmoid": lambda a, attrs, c, t: f"({c(1.0)} / ({c(1.0)} + {_math('exp', t)}(-{a[0]})))",
    "silu": lambda a, attrs, c, t: f"({a[0]} / ({c(1.0)} + {_math('exp', t)}(-{a[0]})))",
    "relu": lambda a, attrs, c, t: f"(({a[0]} > {c(0)} || {a[0]} != {a[0]}) ? {a[0]} : {c(0)})",
    "leaky_relu": lambda a, attrs, c, t: (f"({a[0]} > {c(0)} ? {a[0]} : "
                                          f"{a[0]} * {c(attrs['negative_slope'])})"),
    "gelu": _gelu, "clamp": _clamp,
    "pow": lambda a, attrs, c, t: f"{_math('pow', t)}({a[0]}, {a[1]})",
    "maximum": _binary("(({a} > {b} || {a} != {a}) ? {a} : {b})"),
    "minimum": _binary("(({a} < {b} || {a} != {a}) ? {a} : {b})"),
    "eq": _binary("({a} == {b})"), "ne": _binary("({a} != {b})"), "lt": _binary("({a} < {b})"),
    "le": _binary("({a} <= {b})"), "gt": _binary("({a} > {b})"), "ge": _binary("({a} >= {b})"),
    "logical_not": lambda a, attrs, c, t: f"(!{a[0]})",
    "where": lambda a, attrs, c, t: f"({a[0]} ? {a[1]} : {a[2]})",
    "cast": lambda a, attrs, c, t: a[0], "clone": lambda a, attrs, c, t: a[0],
}

#: ops that pass their argument through: the expression's C type is the argument's
_PASS_THROUGH = frozenset(["cast", "clone"])

#: ops computed only for float dtypes (NumPy's integer rules differ from these formulas)
_INTEGER_OK = frozenset(["add", "sub", "mul", "neg", "square", "maximum", "minimum", "eq", "ne",
                         "lt", "le", "gt", "ge", "logical_not", "where", "cast", "clone",
                         "relu", "clamp"])


def supports(node) -> bool:
    """Whether the generator can compute this node (op known, dtypes handled)."""
    return computable(node, EXPRESSIONS, CTYPES, lambda op: op.name not in _INTEGER_OK)


def expression_ctype(node) -> str:
    """The C type of :func:`expression`'s result before it is rounded to the node's dtype."""
    if node.op.name in _PASS_THROUGH and node.reads:
        return value_ctype(node.reads[0].dtype)
    return value_ctype(compute_dtype(node))


def expression(node, args: list[str]) -> str:
    """The C expression computing ``node`` from argument texts (None: a Python scalar there,
    written as a literal of the op's compute dtype)."""
    dtype = compute_dtype(node)
    t = value_ctype(dtype)
    texts = [literal(_weak(v, dtype), t) if a is None else a for a, v in zip(args, node.inputs)]
    return EXPRESSIONS[node.op.name](texts, node.attrs, lambda v: literal(v, t), t)


def _weak(value, dtype):
    """A Python scalar as NumPy casts it to an array's dtype: rounded to half for float16."""
    if not is_half(dtype) or isinstance(value, bool):
        return value
    with np.errstate(over="ignore"):
        return float(np.float16(value))
