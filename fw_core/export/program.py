"""The prepared graph written as a program of the ``.fwm`` format (docs/fwm_format.md): values
renumbered in program order, attributes in the format's JSON encoding, elementwise ops as
``pointwise`` nodes carrying their scalar formula, constants as named weights."""

from __future__ import annotations

import numpy as np

from ..compile.ir import Value
from ..errors import ExportError
from ..ops import scalar
from .quantize import channel_axis, group_of, int8_per_channel
from .sizes import Size, shape_entry

VERSION = 1


class ProgramWriter:
    """Builds the program dict and the arrays the file holds, one graph at a time."""

    def __init__(self, names: dict[int, str], shapes: dict[int, list], quantize: str | None):
        self.names = names  # const value index -> parameter name
        self.shapes = shapes  # value index -> shape with size expressions
        self.quantize = quantize
        self.ids: dict[int, int] = {}
        self.values: dict[str, dict] = {}
        self.weights: dict[str, dict] = {}
        self.arrays: dict[str, np.ndarray] = {}
        self.quantized: list[str] = []

    def program(self, graph, signature, output_names, attrs_of: dict, sizes: dict) -> dict:
        inputs = [{"name": name, "value": self._value(v), "dtype": v.dtype.name,
                   "shape": signature.shape_of(i)}
                  for i, (name, v) in enumerate(zip(signature.names, graph.inputs))]
        for i, v in enumerate(graph.inputs):
            self.values[str(self.ids[v.index])]["shape"] = signature.shape_of(i)
        nodes = [self._node(step, attrs_of.get(id(step), step.attrs)) for step in graph.steps]
        outputs = [{"name": name, "value": self._value(v), "dtype": v.dtype.name,
                    "shape": self._shape(v)} for name, v in zip(output_names, graph.outputs)]
        import fw_core

        return {"version": VERSION, "producer": f"fw-core {fw_core.__version__}",
                "dims": dict(sizes), "inputs": inputs, "outputs": outputs,
                "values": self.values, "weights": self.weights, "nodes": nodes,
                "ops": sorted({n["op"] for n in nodes})}

    # -- values ------------------------------------------------------------------------------
    def _shape(self, v: Value) -> list:
        return [shape_entry(n) for n in self.shapes.get(v.index, v.shape)]

    def _value(self, v: Value, channels: tuple | None = None) -> int:
        """The program id of ``v``, defining it on first use; ``channels``: (op, output-channel
        axis) when the reading node takes it as a weight worth quantizing."""
        known = self.ids.get(v.index)
        if known is not None:
            return known
        new = self.ids[v.index] = len(self.ids)
        self.values[str(new)] = {"dtype": v.dtype.name, "shape": self._shape(v)}
        if v.source == "const":
            self._weight(new, v, channels)
        elif v.source not in ("input", "node"):
            raise ExportError(f"a {v.source} value ({v}) cannot be part of a program",
                              hint="export an inference run: no random numbers or gradients")
        return new

    def _weight(self, new: int, v: Value, channels: tuple | None) -> None:
        array = np.asarray(v.payload)
        name = self.names.get(v.index, f"const.{new}")
        if name in self.arrays or f"{name}.int8" in self.arrays:
            name = f"{name}.{new}"
        op, axis = channels or (None, None)
        if self.quantize == "int8" and axis is not None and array.dtype.kind == "f" \
                and array.ndim >= 2:
            group = group_of(op, array, axis)
            q, scale = int8_per_channel(array, axis, group)
            self.arrays[f"{name}.int8"], self.arrays[f"{name}.scale"] = q, scale
            self.weights[str(new)] = {"int8": f"{name}.int8", "scale": f"{name}.scale",
                                      "axis": axis, "dtype": array.dtype.name,
                                      **({} if group is None else {"group": group})}
            self.quantized.append(name)
            return
        self.arrays[name] = np.ascontiguousarray(array) if array.ndim else array.copy()
        self.weights[str(new)] = {"tensor": name}

    # -- nodes -------------------------------------------------------------------------------
    def _node(self, step, attrs: dict) -> dict:
        where = step.module or ""
        if step.op.expr is not None:
            return self._pointwise(step, attrs, where)
        inputs = [self._value(v, (step.op.name, channel_axis(step.op.name, k, attrs)))
                  if v.__class__ is Value else self._literal(v, step)
                  for k, v in enumerate(step.inputs)]
        return {"op": step.op.name, "inputs": inputs, "output": self._value(step.out),
                "attrs": {k: self._attr(a, step) for k, a in attrs.items()}, "module": where}

    def _literal(self, x, step):
        if x is None:
            return None
        raise ExportError(f"{step.op.name} at {step.module or 'the top level'} takes the Python "
                          f"value {x!r} as an input, which the program format has no place for",
                          op=step.op.name, module=step.module,
                          hint="pass it as a tensor, or use an op that takes it as an attribute")

    def _pointwise(self, step, attrs: dict, where: str) -> dict:
        arrays = [v for v in step.inputs if v.__class__ is Value]
        position = {}
        for k, v in enumerate(step.inputs):
            if v.__class__ is Value:
                position[k] = len(position)
        expr = scalar.formula(step.op, attrs, len(step.inputs))

        def rebuild(e):
            if e.op == "arg":
                return scalar.arg(position[e.value]) if e.value in position else \
                    scalar.lift(step.inputs[e.value])
            return e if e.op == "const" else scalar.Expr(e.op, tuple(map(rebuild, e.args)))

        expr = rebuild(expr)
        steps = scalar.schedule(expr)
        index = {e: i for i, e in enumerate(steps)}

        def operand(e):
            if e.op == "arg":
                return ["arg", e.value]
            if e.op == "const":
                return ["const", e.value]
            return ["step", index[e]]

        compute = scalar.compute_dtype([v.dtype for v in arrays], step.out.dtype)
        formula = {"steps": [[e.op, *map(operand, e.args)] for e in steps],
                   "result": operand(expr)}
        return {"op": "pointwise", "inputs": [self._value(v) for v in arrays],
                "output": self._value(step.out), "module": where,
                "attrs": {"formula": formula, "compute": compute.name, "from": step.op.name}}

    def _attr(self, a, step):
        if a is None or isinstance(a, (bool, int, float, str)):
            return a
        if isinstance(a, Size):
            return a.json()
        if isinstance(a, (list, tuple)):
            return [self._attr(x, step) for x in a]
        if isinstance(a, dict):
            return {str(k): self._attr(x, step) for k, x in a.items()}
        if isinstance(a, slice):
            return {"slice": [self._attr(x, step) for x in (a.start, a.stop, a.step)]}
        if a is Ellipsis:
            return {"ellipsis": True}
        if isinstance(a, np.generic):
            return a.item()
        if isinstance(a, np.ndarray):
            const = Value(-1 - len(self.ids), a.shape, a.dtype, "const", a)
            return {"array": self._value(const)}
        try:
            return {"dtype": np.dtype(a).name}
        except TypeError:
            raise ExportError(f"{step.op.name} at {step.module or 'the top level'} has an "
                              f"attribute of type {type(a).__name__}, which the program format "
                              "cannot hold", op=step.op.name, module=step.module,
                              hint="report it: the format needs an encoding for it") from None
