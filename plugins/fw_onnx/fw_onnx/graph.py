"""The ONNX graph under construction: node and initializer names, constants, and the sizes of
dynamic dimensions as int64 tensors computed from the graph's inputs."""

from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

#: the largest int64, ONNX's "to the end" for Slice
END = np.iinfo(np.int64).max


class GraphBuilder:
    """Collects the nodes and initializers of one graph, with unique names.

    ``dims`` maps each dynamic dimension name to the graph input and axis that carry it, so a
    size expression of the program (``2 * batch + 1``) becomes a tiny computation on
    ``Shape(input)`` instead of a number frozen at export.
    """

    def __init__(self, dims: dict[str, tuple[str, int]]):
        self.nodes: list = []
        self.initializers: list = []
        self._dims = dims
        self._sizes: dict = {}
        self._weights: dict[str, np.ndarray] = {}
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def add(self, op_type: str, inputs: list, outputs: int | list[str] = 1, name: str = "",
            **attrs) -> list[str]:
        """Append one node; returns its output names (``outputs`` new ones when a count)."""
        if isinstance(outputs, int):
            outputs = [self.fresh(op_type.lower()) for _ in range(outputs)]
        inputs = [i or "" for i in inputs]
        while inputs and not inputs[-1]:  # absent optional inputs at the end are left off
            inputs.pop()                  # (onnxruntime 1.32 crashes on a trailing "")
        self.nodes.append(helper.make_node(op_type, inputs, outputs,
                                           name=name or self.fresh(f"n_{op_type}"), **attrs))
        return outputs

    def one(self, op_type: str, inputs: list, name: str = "", **attrs) -> str:
        """Append a node with one output and return that output's name."""
        return self.add(op_type, inputs, 1, name, **attrs)[0]

    def const(self, array, hint: str = "const") -> str:
        """An initializer holding ``array`` (a NumPy array or number, kept in its dtype)."""
        array = np.asarray(array)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(_contiguous(array), name))
        return name

    def weight(self, name: str, array: np.ndarray) -> str:
        """A program weight (``encoder.0.weight``) as an initializer of that name, written by
        :meth:`finish` only if a node reads it (a converter may read a reordered copy)."""
        self._weights[name] = array
        return name

    def finish(self) -> None:
        """Add the initializers of the weights some node reads."""
        read = {i for node in self.nodes for i in node.input}
        self.initializers.extend(numpy_helper.from_array(_contiguous(a), name)
                                 for name, a in self._weights.items() if name in read)
        self._weights.clear()

    # -- sizes --------------------------------------------------------------------------------
    def size(self, entry) -> str:
        """A ``[1]`` int64 tensor holding one shape entry of the program: an int, a dimension
        name or a size expression ``{"size": {"dims", "scale", "offset"}}``."""
        if isinstance(entry, (int, np.integer)):
            return self.const(np.array([entry], np.int64), "size")
        key = repr(entry)
        known = self._sizes.get(key)
        if known is not None:
            return known
        if isinstance(entry, str):
            source, axis = self._dims[entry]
            value = self.one("Shape", [source], start=axis, end=axis + 1)
        else:
            expression = entry["size"]
            value = None
            for dim in expression["dims"]:
                value = self.size(dim) if value is None else self.one("Mul", [value,
                                                                             self.size(dim)])
            if value is None:
                value = self.const(np.array([expression["offset"]], np.int64), "size")
            else:
                if expression["scale"] != 1:
                    value = self.one("Mul", [value, self.size(int(expression["scale"]))])
                if expression["offset"]:
                    value = self.one("Add", [value, self.size(int(expression["offset"]))])
        self._sizes[key] = value
        return value

    def shape(self, entries) -> str:
        """A ``[len(entries)]`` int64 tensor of shape entries (a constant when all are ints)."""
        if all(isinstance(e, (int, np.integer)) for e in entries):
            return self.const(np.array(entries, np.int64).reshape(len(entries)), "shape")
        return self.one("Concat", [self.size(e) for e in entries], axis=0)


def _contiguous(array: np.ndarray) -> np.ndarray:
    # not np.ascontiguousarray, which makes a 0-d array 1-d
    return array if array.flags.c_contiguous else array.copy(order="C")


def tensor_type(dtype) -> int:
    """The ONNX element type of a NumPy dtype (or dtype name)."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value_info(name: str, dtype, shape) -> object:
    """A graph input or output: its dtype and shape, dimension names kept as ``dim_param`` and
    size expressions left unnamed (they follow from the inputs)."""
    dims = [e if isinstance(e, (int, str)) else None for e in shape]
    return helper.make_tensor_value_info(name, tensor_type(dtype), dims)

