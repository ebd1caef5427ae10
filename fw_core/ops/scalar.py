"""Scalar formulas: what an elementwise op computes at one element, as data a device renders.

An elementwise op's contract may carry ``expr``: ``expr(*args, **attrs) -> Expr``, the op's
value at one element built from its arguments' values there (:func:`arg`), the op's attributes
(plain Python values, so a formula may branch on them while it is built) and the primitives
below. ``relu`` is ``maximum(x, 0.0)``; ``leaky_relu`` is
``where(gt(x, 0.0), x, x * negative_slope)``. Each device with a loop generator renders
formulas into its own language (fw_cpu: Numba source; fw_cuda: CUDA C), so an op declared with
an ``expr`` fuses on every such device and no device keeps a table of ops. :func:`evaluate` is a
formula's meaning in NumPy; the conformance suite compares it with every elementwise kernel.

What every renderer reproduces (and :func:`evaluate` defines):

- a formula is computed in one dtype, the op's *compute dtype* (:func:`compute_dtype`); Python
  numbers in it take that dtype, as NumPy's weak scalars do; comparisons, ``isnan``/``isinf``
  and the logical primitives give bool; the value is rounded to the op's result dtype at the
  end (so ``cast`` is the formula ``x``);
- ``maximum``/``minimum`` propagate NaN as ``np.maximum`` does; ``where`` picks one side;
- a formula is computed for integer dtypes only when it is :func:`integer_exact` (its primitives
  do integer arithmetic as NumPy does and its constants are whole numbers); otherwise floats
  only, integers taking the op's unfused kernel;
- a renderer may compute a float32 formula in float64 and round once (fw_cpu does when the
  formula calls a math-library function): that is at least as accurate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Primitive:
    """One operation of the language.

    Attributes:
        name: how formulas and renderers name it ("exp", "where").
        arity: how many operands it takes.
        numpy: its meaning on NumPy arrays and scalars (a ufunc or a function of them).
        boolean: its value is a bool (comparisons, predicates, logic).
        integer_exact: on integer operands it is NumPy's integer arithmetic exactly.
        transcendental: a math-library function (rounded inexactly, costly per element).
    """

    name: str
    arity: int
    numpy: Callable
    boolean: bool = False
    integer_exact: bool = False
    transcendental: bool = False


def _in_dtype(fn: Callable[[float], float]) -> Callable:
    """A math-module function applied elementwise, its result in the operand's dtype."""
    ufunc = np.frompyfunc(fn, 1, 1)
    return lambda x: np.asarray(ufunc(x), np.float64).astype(np.asarray(x).dtype)


_ARITHMETIC = [("add", 2, np.add), ("sub", 2, np.subtract), ("mul", 2, np.multiply),
               ("neg", 1, np.negative), ("abs", 1, np.abs), ("sign", 1, np.sign),
               ("maximum", 2, np.maximum), ("minimum", 2, np.minimum),
               ("where", 3, lambda c, a, b: np.where(c, a, b))]
_LOGIC = [("eq", 2, np.equal), ("ne", 2, np.not_equal), ("lt", 2, np.less),
          ("le", 2, np.less_equal), ("gt", 2, np.greater), ("ge", 2, np.greater_equal),
          ("logical_and", 2, np.logical_and), ("logical_or", 2, np.logical_or),
          ("logical_not", 1, np.logical_not)]
_LIBRARY = [("exp", np.exp), ("log", np.log), ("log1p", np.log1p), ("expm1", np.expm1),
            ("tanh", np.tanh), ("sin", np.sin), ("cos", np.cos), ("erf", _in_dtype(math.erf)),
            ("erfc", _in_dtype(math.erfc))]

#: name -> primitive: the whole language
PRIMITIVES: dict[str, Primitive] = {
    **{n: Primitive(n, k, f, integer_exact=True) for n, k, f in _ARITHMETIC},
    **{n: Primitive(n, k, f, boolean=True, integer_exact=True) for n, k, f in _LOGIC},
    **{n: Primitive(n, 1, f, transcendental=True) for n, f in _LIBRARY},
    "pow": Primitive("pow", 2, np.power, transcendental=True),
    "div": Primitive("div", 2, np.true_divide),
    "sqrt": Primitive("sqrt", 1, np.sqrt),
    "floor": Primitive("floor", 1, np.floor),
    "ceil": Primitive("ceil", 1, np.ceil),
    "isnan": Primitive("isnan", 1, np.isnan, boolean=True),
    "isinf": Primitive("isinf", 1, np.isinf, boolean=True),
}

Number = bool | int | float


@dataclass(frozen=True)
class Expr:
    """A formula: a primitive applied to formulas, an argument of the op, or a constant.

    ``+ - * / **`` and unary ``-`` build formulas; ``==`` compares formulas as data (use
    :func:`eq` for the primitive), so equal formulas are one node when rendered.

    Attributes:
        op: a :data:`PRIMITIVES` name, "arg" or "const".
        args: the operands of a primitive.
        value: the position of an argument, or a constant's Python number.
    """

    op: str
    args: tuple[Expr, ...] = ()
    value: Number | None = None

    def __add__(self, other): return _apply("add", self, other)
    def __radd__(self, other): return _apply("add", other, self)
    def __sub__(self, other): return _apply("sub", self, other)
    def __rsub__(self, other): return _apply("sub", other, self)
    def __mul__(self, other): return _apply("mul", self, other)
    def __rmul__(self, other): return _apply("mul", other, self)
    def __truediv__(self, other): return _apply("div", self, other)
    def __rtruediv__(self, other): return _apply("div", other, self)
    def __pow__(self, other): return _apply("pow", self, other)
    def __rpow__(self, other): return _apply("pow", other, self)
    def __neg__(self): return _apply("neg", self)

    def __repr__(self) -> str:
        if self.op == "arg":
            return f"x{self.value}"
        if self.op == "const":
            return repr(self.value)
        return f"{self.op}({', '.join(map(repr, self.args))})"


Operand = Expr | Number


def arg(position: int) -> Expr:
    """The op's input at ``position``, at this element."""
    return Expr("arg", value=position)


def lift(value: Operand) -> Expr:
    """A formula as it is; a Python number as a constant of the compute dtype."""
    if isinstance(value, Expr):
        return value
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"a formula takes formulas and Python numbers, got {type(value).__name__}")
    return Expr("const", value=value)


def _apply(name: str, *operands: Operand) -> Expr:
    return Expr(name, tuple(lift(o) for o in operands))


# -- the primitives as functions (the operators above cover add, sub, mul, div, pow, neg) --------
def maximum(a: Operand, b: Operand) -> Expr: return _apply("maximum", a, b)
def minimum(a: Operand, b: Operand) -> Expr: return _apply("minimum", a, b)
def where(c: Operand, a: Operand, b: Operand) -> Expr: return _apply("where", c, a, b)
def abs(x: Operand) -> Expr: return _apply("abs", x)
def sign(x: Operand) -> Expr: return _apply("sign", x)
def floor(x: Operand) -> Expr: return _apply("floor", x)
def ceil(x: Operand) -> Expr: return _apply("ceil", x)
def sqrt(x: Operand) -> Expr: return _apply("sqrt", x)
def exp(x: Operand) -> Expr: return _apply("exp", x)
def log(x: Operand) -> Expr: return _apply("log", x)
def log1p(x: Operand) -> Expr: return _apply("log1p", x)
def expm1(x: Operand) -> Expr: return _apply("expm1", x)
def tanh(x: Operand) -> Expr: return _apply("tanh", x)
def sin(x: Operand) -> Expr: return _apply("sin", x)
def cos(x: Operand) -> Expr: return _apply("cos", x)
def erf(x: Operand) -> Expr: return _apply("erf", x)
def erfc(x: Operand) -> Expr: return _apply("erfc", x)
def eq(a: Operand, b: Operand) -> Expr: return _apply("eq", a, b)
def ne(a: Operand, b: Operand) -> Expr: return _apply("ne", a, b)
def lt(a: Operand, b: Operand) -> Expr: return _apply("lt", a, b)
def le(a: Operand, b: Operand) -> Expr: return _apply("le", a, b)
def gt(a: Operand, b: Operand) -> Expr: return _apply("gt", a, b)
def ge(a: Operand, b: Operand) -> Expr: return _apply("ge", a, b)
def logical_and(a: Operand, b: Operand) -> Expr: return _apply("logical_and", a, b)
def logical_or(a: Operand, b: Operand) -> Expr: return _apply("logical_or", a, b)
def logical_not(x: Operand) -> Expr: return _apply("logical_not", x)
def isnan(x: Operand) -> Expr: return _apply("isnan", x)
def isinf(x: Operand) -> Expr: return _apply("isinf", x)


# -- reading formulas --------------------------------------------------------------------------
def formula(op, attrs: dict, arity: int) -> Expr | None:
    """Op ``op``'s formula for a call with ``attrs`` and ``arity`` inputs (None: it has none)."""
    if op.expr is None:
        return None
    return lift(op.expr(*(arg(i) for i in range(arity)), **attrs))


def schedule(expr: Expr) -> list[Expr]:
    """The distinct primitive applications of ``expr``, each after its operands: one temporary
    per entry computes the formula with no subformula computed twice."""
    order: dict[Expr, None] = {}

    def visit(e: Expr) -> None:
        if e.op in ("arg", "const") or e in order:
            return
        for a in e.args:
            visit(a)
        order[e] = None

    visit(expr)
    return list(order)


def _nodes(expr: Expr):
    yield expr
    for a in expr.args:
        yield from _nodes(a)


def integer_exact(expr: Expr) -> bool:
    """Whether ``expr`` on integers is NumPy's integer arithmetic: integer-exact primitives and
    whole-number constants only (``x * 0.01`` is not; ``maximum(x, 0.0)`` is)."""
    return all(PRIMITIVES[e.op].integer_exact if e.op in PRIMITIVES else
               e.op == "arg" or float(e.value).is_integer() for e in _nodes(expr))


def transcendental(expr: Expr) -> bool:
    """Whether ``expr`` calls a math-library function."""
    return any(e.op in PRIMITIVES and PRIMITIVES[e.op].transcendental for e in _nodes(expr))


def calls(expr: Expr, *names: str) -> bool:
    """Whether ``expr`` applies any of the primitives ``names`` (``calls(f, "exp", "expm1")``)."""
    return any(e.op in names for e in _nodes(expr))


def hole(name: str) -> Expr:
    """A constant left open in a pattern: :func:`match` binds it to the number found there."""
    return Expr("hole", value=name)


def match(pattern: Expr, expr: Expr) -> dict | None:
    """The numbers ``pattern``'s holes stand for, where ``expr`` is ``pattern`` with them filled
    in (``{}`` for a pattern without holes), or None: how a device recognises a formula its
    library computes (``where(x > 0, x, x * hole("slope"))`` is a leaky relu)."""
    bound: dict = {}

    def walk(p: Expr, e: Expr) -> bool:
        if p.op == "hole":
            if e.op != "const" or bound.setdefault(p.value, e.value) != e.value:
                return False
            return True
        return (p.op == e.op and p.value == e.value and len(p.args) == len(e.args)
                and all(walk(a, b) for a, b in zip(p.args, e.args)))

    return bound if walk(pattern, expr) else None


def boolean(expr: Expr) -> bool:
    """Whether ``expr``'s value is a bool before it is rounded to the result dtype."""
    return expr.op in PRIMITIVES and (PRIMITIVES[expr.op].boolean or expr.op == "where" and
                                      boolean(expr.args[1]) and boolean(expr.args[2]))


def compute_dtype(input_dtypes: Sequence[np.dtype], result: np.dtype) -> np.dtype:
    """The dtype a formula is computed in: its result's, or for a bool result (comparisons,
    predicates, casts to bool) the dtype of the values it tests, its first array operand's."""
    if result.kind == "b" and input_dtypes:
        return input_dtypes[0]
    return result


def evaluate(expr: Expr, args: Sequence, dtype) -> np.ndarray:
    """``expr``'s value in NumPy for ``args`` (arrays of the compute dtype, or Python numbers),
    computed in ``dtype``: what a rendered kernel must give before its final rounding."""
    dtype = np.dtype(dtype)

    def value(e: Expr):
        if e.op == "arg":
            a = args[e.value]
            return dtype.type(a) if isinstance(a, (bool, int, float)) else a
        if e.op == "const":
            return dtype.type(e.value)
        return PRIMITIVES[e.op].numpy(*(value(a) for a in e.args))

    with np.errstate(all="ignore"):
        return np.asarray(value(expr))
