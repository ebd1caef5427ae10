"""A ``pointwise`` node's scalar formula (fw_core/ops/scalar.py's language) rendered as ONNX
elementwise nodes: ONNX is one more device with a renderer, so no fw op needs an ONNX mapping
of its own when its formula has one.

Every step is computed in the formula's compute dtype, as fw does; comparisons and logical
primitives give bools, which are cast to the compute dtype where arithmetic reads them (NumPy
does that implicitly, ONNX does not), and the result is cast to the output's dtype.
"""

from __future__ import annotations

import numpy as np

from .graph import GraphBuilder, tensor_type

#: primitive -> ONNX op applied to its operands as they are
DIRECT = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "neg": "Neg",
          "abs": "Abs", "sign": "Sign", "maximum": "Max", "minimum": "Min", "exp": "Exp",
          "log": "Log", "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "erf": "Erf",
          "sqrt": "Sqrt", "floor": "Floor", "ceil": "Ceil", "eq": "Equal", "lt": "Less",
          "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual", "isnan": "IsNaN",
          "isinf": "IsInf"}
#: primitives whose result is a bool
BOOLEAN = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "logical_and",
                     "logical_or", "logical_not"})
#: primitives that read bools (their operands are cast to bool first)
READS_BOOL = {"logical_and": "And", "logical_or": "Or", "logical_not": "Not"}


class _Formula:
    """Renders one formula; ``names[k]`` is the ONNX name of input ``k``, already in the
    compute dtype."""

    def __init__(self, g: GraphBuilder, names: list[str], compute: np.dtype):
        self.g = g
        self.names = names
        self.compute = compute
        self.steps: list[tuple[str, bool]] = []  # (name, is bool) per step

    def operand(self, spec, want: str) -> str:
        """Operand ``spec`` (``["arg", i]``, ``["const", x]``, ``["step", j]``) as ``want``:
        "bool" or "compute" (the compute dtype)."""
        kind, value = spec
        if kind == "const":
            dtype = np.bool_ if want == "bool" else self.compute
            return self.g.const(np.array(value, dtype), "k")
        if kind == "arg":
            name, is_bool = self.names[value], self.compute == np.bool_
        else:
            name, is_bool = self.steps[value]
        if want == "bool" and not is_bool:
            return self.g.one("Cast", [name], to=tensor_type(np.bool_))
        if want == "compute" and is_bool and self.compute != np.bool_:
            return self.g.one("Cast", [name], to=tensor_type(self.compute))
        return name

    def step(self, primitive: str, operands: list) -> tuple[str, bool]:
        g, arith = self.g, lambda k: self.operand(operands[k], "compute")
        if primitive in READS_BOOL:
            name = g.one(READS_BOOL[primitive], [self.operand(o, "bool") for o in operands])
        elif primitive == "where":
            name = g.one("Where", [self.operand(operands[0], "bool"), arith(1), arith(2)])
        elif primitive == "ne":
            name = g.one("Not", [g.one("Equal", [arith(0), arith(1)])])
        elif primitive == "log1p":
            name = g.one("Log", [g.one("Add", [arith(0), self.one()])])
        elif primitive == "expm1":
            name = g.one("Sub", [g.one("Exp", [arith(0)]), self.one()])
        elif primitive == "erfc":
            name = g.one("Sub", [self.one(), g.one("Erf", [arith(0)])])
        else:
            name = g.one(DIRECT[primitive], [arith(k) for k in range(len(operands))])
        return name, primitive in BOOLEAN

    def one(self) -> str:
        return self.g.const(np.array(1, self.compute), "one")


def render(g: GraphBuilder, attrs: dict, inputs: list[tuple[str, np.dtype]], out_name: str,
           out_dtype: np.dtype) -> None:
    """Write the nodes computing a ``pointwise`` node's formula from ``inputs`` (ONNX names
    with their dtypes) into ``out_name``."""
    compute = np.dtype(attrs["compute"])
    names = [name if dtype == compute else g.one("Cast", [name], to=tensor_type(compute))
             for name, dtype in inputs]
    formula = _Formula(g, names, compute)
    for primitive, *operands in attrs["formula"]["steps"]:
        formula.steps.append(formula.step(primitive, operands))
    result = attrs["formula"]["result"]
    want = "bool" if np.dtype(out_dtype) == np.bool_ else "compute"
    name = formula.operand(result, want)
    if want == "compute" and compute != out_dtype:
        g.add("Cast", [name], [out_name], to=tensor_type(out_dtype))
    else:
        g.add("Identity", [name], [out_name])
