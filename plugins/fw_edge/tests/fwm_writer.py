"""A test-side writer of .fwm files (docs/fwm_format.md), independent of fw_edge's reader:
safetensors with fw's whole-file checksum, and a small builder for programs by hand."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

CODES = {"b1": "BOOL", "u1": "U8", "i1": "I8", "i2": "I16", "f2": "F16", "i4": "I32",
         "f4": "F32", "i8": "I64", "f8": "F64", "u2": "U16", "u4": "U32", "u8": "U64"}


def write_fwm(path, program: dict, tensors: dict, version: str = "1") -> None:
    """Write ``tensors`` and ``program`` as a checksummed .fwm file."""
    header, offset = {}, 0
    for key, array in tensors.items():
        code = CODES[f"{array.dtype.kind}{array.dtype.itemsize}"]
        header[key] = {"dtype": code, "shape": list(array.shape),
                       "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    header["__metadata__"] = {"__fw_sha256__": "0" * 64, "__fwm_format__": version,
                              "__fwm_program__": json.dumps(program)}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    data = struct.pack("<Q", len(text)) + text + b"".join(
        np.ascontiguousarray(a).tobytes() for a in tensors.values())
    digest = hashlib.sha256(data).hexdigest().encode()
    at = data.index(b'"__fw_sha256__":"') + len(b'"__fw_sha256__":"')
    with open(path, "wb") as file:
        file.write(data[:at] + digest + data[at + 64:])


def size(dims, scale=1, offset=0) -> dict:
    """A size expression entry: ``scale * prod(dims) + offset``."""
    return {"size": {"dims": list(dims), "scale": scale, "offset": offset}}


def encode(a):
    """A Python attribute in the format's JSON encoding."""
    if isinstance(a, slice):
        return {"slice": [encode(x) for x in (a.start, a.stop, a.step)]}
    if a is Ellipsis:
        return {"ellipsis": True}
    if isinstance(a, np.dtype):
        return {"dtype": a.name}
    if isinstance(a, (list, tuple)):
        return [encode(x) for x in a]
    return a


class Builder:
    """A program built by hand: ``x = b.input("x", "float32", ["batch", 16])``,
    ``y = b.node("linear", [x, w, None], "float32", ["batch", 4], weight_layout="out_in")``,
    ``b.output(y)``, ``b.save(path)``."""

    def __init__(self, dims=None):
        self.dims = dims or {}
        self.values, self.weights, self.tensors = {}, {}, {}
        self.inputs, self.outputs, self.nodes = [], [], []

    def _value(self, dtype, shape) -> int:
        v = len(self.values)
        self.values[str(v)] = {"dtype": np.dtype(dtype).name, "shape": list(shape)}
        return v

    def input(self, name, dtype, shape) -> int:
        v = self._value(dtype, shape)
        self.inputs.append({"name": name, "value": v, "dtype": np.dtype(dtype).name,
                            "shape": list(shape)})
        return v

    def weight(self, array, name=None, int8_axis=None) -> int:
        array = np.asarray(array)
        v = self._value(array.dtype, array.shape)
        name = name or f"const.{v}"
        if int8_axis is None:
            self.tensors[name] = array
            self.weights[str(v)] = {"tensor": name}
            return v
        others = tuple(d for d in range(array.ndim) if d != int8_axis)
        scale = (np.abs(array).max(axis=others) / 127).astype(np.float32)
        shape = [1] * array.ndim
        shape[int8_axis] = -1
        q = np.clip(np.rint(array / scale.reshape(shape)), -127, 127).astype(np.int8)
        self.tensors[f"{name}.int8"], self.tensors[f"{name}.scale"] = q, scale
        self.weights[str(v)] = {"int8": f"{name}.int8", "scale": f"{name}.scale",
                                "axis": int8_axis, "dtype": array.dtype.name}
        return v

    def node(self, op, inputs, dtype, shape, /, module="", **attrs) -> int:
        v = self._value(dtype, shape)
        self.nodes.append({"op": op, "inputs": list(inputs), "output": v,
                           "attrs": {k: encode(a) for k, a in attrs.items()}, "module": module})
        return v

    def pointwise(self, inputs, steps, result, dtype, shape, compute=None, module="") -> int:
        """A pointwise node: ``steps`` like ``[["maximum", ["arg", 0], ["const", 0.0]]]``."""
        return self.node("pointwise", inputs, dtype, shape, module,
                         formula={"steps": steps, "result": result},
                         compute=np.dtype(compute or dtype).name)

    def output(self, v, name=None) -> None:
        value = self.values[str(v)]
        self.outputs.append({"name": name or f"output_{len(self.outputs)}", "value": v,
                             **value})

    def program(self) -> dict:
        return {"version": 1, "producer": "tests", "dims": self.dims, "inputs": self.inputs,
                "outputs": self.outputs, "values": self.values, "weights": self.weights,
                "nodes": self.nodes, "ops": sorted({n["op"] for n in self.nodes})}

    def save(self, path):
        write_fwm(path, self.program(), self.tensors)
        return path


def single_node(op, arrays, out_shape, out_dtype="float32", weights=(), **attrs) -> Builder:
    """A program of one ``op`` node over ``arrays`` (None: an absent optional input); those at
    the positions in ``weights`` are weights, the others inputs ``x0``, ``x1``, ... in order."""
    b = Builder()
    ids = []
    for i, a in enumerate(arrays):
        if a is None:
            ids.append(None)
        elif i in weights:
            ids.append(b.weight(a))
        else:
            ids.append(b.input(f"x{i}", a.dtype, a.shape))
    b.output(b.node(op, ids, out_dtype, out_shape, module="m", **attrs), "output")
    return b


def call_inputs(arrays, weights=()):
    """The arrays ``single_node`` made inputs, in call order."""
    return [a for i, a in enumerate(arrays) if a is not None and i not in weights]
