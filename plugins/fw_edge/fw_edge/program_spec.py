"""The program JSON of a ``.fwm`` file, checked and decoded (docs/fwm_format.md, "The
program"): values, the signature, the weights (int8 ones dequantized here) and the nodes with
their attributes in Python form."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import EdgeError
from .sizes import Size, decode_shape, decode_size, dims_of

VERSION = 1


class Port(NamedTuple):
    """One input or output of a program: its name, dtype and shape (ints, dimension names and
    size expressions)."""

    name: str
    dtype: np.dtype
    shape: tuple
    value: int


class Value(NamedTuple):
    """One array of the program: its dtype and (decoded) shape."""

    dtype: np.dtype
    shape: tuple


class Node(NamedTuple):
    """One step: ``op`` applied to the ``inputs`` value ids (None: an absent optional input),
    giving the ``outputs`` value ids; ``module`` is the path of the module that made it."""

    op: str
    inputs: tuple
    outputs: tuple[int, ...]
    attrs: dict
    module: str

    @property
    def where(self) -> str:
        """The node as messages name it: ``linear at encoder.0.query``."""
        return f"{self.op} at {self.module or 'the top level'}"


class ProgramSpec(NamedTuple):
    """A decoded program: ``dims`` (example sizes), the signature, every value, the weights'
    arrays by value id, and the nodes in order."""

    dims: dict[str, int]
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    values: dict[int, Value]
    weights: dict[int, np.ndarray]
    nodes: tuple[Node, ...]


def decode(program, tensors: dict[str, np.ndarray], path) -> ProgramSpec:
    """The checked program of the file at ``path``, whose tensors are ``tensors``.

    Raises:
        EdgeError: a field is missing or malformed, a named tensor is missing or does not fit
            its value, or a node uses a value before it is defined.
    """
    where = f"{path}: the program"
    if not isinstance(program, dict):
        raise EdgeError(f"{where} is not a JSON object; export the model again")
    if program.get("version") != VERSION:
        raise EdgeError(f"{where} is version {program.get('version')!r}, this fw-edge runs "
                        f"version {VERSION}; upgrade fw-edge or export with a matching fw")
    for key in ("dims", "inputs", "outputs", "values", "weights", "nodes"):
        if key not in program:
            raise EdgeError(f"{where} has no {key!r} field; export the model again")
    values = {_id(k, where): Value(_dtype(v.get("dtype"), f"{where}, value {k}"),
                                   decode_shape(v.get("shape"), f"{where}, value {k}"))
              for k, v in _items(program["values"], "values", where)}
    weights = {_id(k, where): _weight(w, tensors, values.get(_id(k, where)), f"{where}, weight {k}")
               for k, w in _items(program["weights"], "weights", where)}
    inputs = tuple(_port(p, values, f"{where}, input {i}") for i, p in
                   enumerate(_list(program["inputs"], "inputs", where)))
    outputs = tuple(_port(p, values, f"{where}, output {i}") for i, p in
                    enumerate(_list(program["outputs"], "outputs", where)))
    nodes = tuple(_node(n, weights, f"{where}, node {i}") for i, n in
                  enumerate(_list(program["nodes"], "nodes", where)))
    _check_order(inputs, outputs, values, weights, nodes, where)
    dims = program["dims"]
    bound = set().union(*(dims_of(p.shape) for p in inputs)) if inputs else set()
    for node in nodes:
        for v in node.outputs:
            unbound = (dims_of(values[v].shape) | dims_of(node.attrs, names=False)) - bound
            if unbound:
                raise EdgeError(f"{where}: {node.where} uses dimension(s) "
                                f"{', '.join(sorted(unbound))} that no input's shape names, so "
                                "a call cannot size them; export the model again")
    return ProgramSpec(dims if isinstance(dims, dict) else {}, inputs, outputs, values, weights,
                       nodes)


def _items(obj, key: str, where: str):
    if not isinstance(obj, dict) or not all(isinstance(v, dict) for v in obj.values()):
        raise EdgeError(f"{where}: {key!r} is not a map of objects; export the model again")
    return obj.items()


def _list(obj, key: str, where: str) -> list:
    if not isinstance(obj, list) or not all(isinstance(v, dict) for v in obj):
        raise EdgeError(f"{where}: {key!r} is not a list of objects; export the model again")
    return obj


def _id(key, where: str) -> int:
    if not (isinstance(key, str) and key.isdigit()):
        raise EdgeError(f"{where}: value id {key!r} is not an integer >= 0; export the model "
                        "again")
    return int(key)


def _dtype(name, where: str) -> np.dtype:
    try:
        dtype = np.dtype(name) if isinstance(name, str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf":
        raise EdgeError(f"{where}: dtype {name!r} is not a NumPy bool, integer or float dtype "
                        "name; export the model again")
    return dtype


def _port(obj: dict, values: dict[int, Value], where: str) -> Port:
    name, value = obj.get("name"), obj.get("value")
    if not isinstance(name, str) or not _is_id(value) or value not in values:
        raise EdgeError(f"{where}: {obj!r} needs a name and a value id of the program; export "
                        "the model again")
    return Port(name, values[value].dtype, values[value].shape, value)


def _tensor(tensors: dict, name, where: str) -> np.ndarray:
    if name not in tensors:
        raise EdgeError(f"{where}: the program needs tensor {name!r}, which the file does not "
                        "hold; export the model again")
    return tensors[name]


_INT8 = {"int8", "scale", "axis", "dtype"}


def _dequantized(q, scale, axis, group, dtype, where: str) -> np.ndarray:
    """``q * scale``: one scale per channel along ``axis`` (scale ``[C]``), or for a matrix one
    per channel and ``group`` consecutive entries of the other axis (scale ``[C, K / group]``)."""
    grouped = group is not None
    fits = q.dtype == np.int8 and isinstance(axis, int) and 0 <= axis < q.ndim
    if fits and not grouped:
        fits = scale.shape == (q.shape[axis],)
    elif fits:
        k = q.shape[1 - axis] if q.ndim == 2 else 0
        fits = isinstance(group, int) and group > 0 and k % group == 0 and \
            scale.shape == (q.shape[axis], k // group)
    if not fits:
        raise EdgeError(f"{where}: an int8 weight needs an int8 tensor and one scale per "
                        f"channel of its axis (and group), got {q.dtype} {q.shape}, axis "
                        f"{axis!r}, group {group!r}, scale {scale.shape}; export the model again")
    if grouped:
        per = np.repeat(scale.astype(dtype), group, axis=1)  # [C, K]
        return q.astype(dtype) * (per.T if axis == 1 else per)
    shape = [1] * q.ndim
    shape[axis] = -1
    return q.astype(dtype) * scale.astype(dtype).reshape(shape)


def _weight(obj: dict, tensors: dict, value: Value | None, where: str) -> np.ndarray:
    """A weight's array: the stored tensor, or an int8 one dequantized as ``q * scale``."""
    if value is None:
        raise EdgeError(f"{where} has no entry in 'values'; export the model again")
    if set(obj) == {"tensor"}:
        array = _tensor(tensors, obj["tensor"], where)
    elif _INT8 <= set(obj) <= _INT8 | {"group"}:
        q, scale = _tensor(tensors, obj["int8"], where), _tensor(tensors, obj["scale"], where)
        array = _dequantized(q, scale, obj["axis"], obj.get("group"),
                             _dtype(obj["dtype"], where), where)
    else:
        raise EdgeError(f"{where}: {obj!r} is neither {{'tensor': name}} nor an int8 weight "
                        "{'int8', 'scale', 'axis', 'dtype'[, 'group']}; export the model again")
    if array.dtype != value.dtype or array.shape != value.shape:
        raise EdgeError(f"{where}: the file holds {array.dtype} {array.shape}, the program "
                        f"expects {value.dtype} {value.shape}; export the model again")
    return np.ascontiguousarray(array)


def _node(obj: dict, weights: dict, where: str) -> Node:
    op, module = obj.get("op"), obj.get("module", "")
    inputs = obj.get("inputs")
    outputs = obj["outputs"] if "outputs" in obj else [obj.get("output")]
    if not isinstance(op, str) or not isinstance(module, str) or not isinstance(inputs, list) \
            or not isinstance(outputs, list) or not all(_is_id(v) for v in outputs) \
            or not all(v is None or _is_id(v) for v in inputs):
        raise EdgeError(f"{where}: {obj!r} needs an op name, a list of input ids (or null) and "
                        "an output id; export the model again")
    where = f"{where} ({op} at {module or 'the top level'})"
    attrs = obj.get("attrs", {})
    if not isinstance(attrs, dict):
        raise EdgeError(f"{where}: attrs {attrs!r} is not an object; export the model again")
    return Node(op, tuple(inputs), tuple(outputs),
                {k: decode_attr(a, weights, where) for k, a in attrs.items()}, module)


def _is_id(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def decode_attr(a, weights: dict, where: str):
    """An attribute in Python form: lists become tuples; the one-key objects of the format
    become a slice, ``...``, a NumPy dtype, a :class:`Size` or a weight's array."""
    if isinstance(a, list):
        return tuple(decode_attr(x, weights, where) for x in a)
    if not isinstance(a, dict):
        return a
    if len(a) == 1:
        (key, body), = a.items()
        if key == "slice" and isinstance(body, list) and len(body) == 3:
            return slice(*(decode_attr(x, weights, where) for x in body))
        if key == "ellipsis" and body is True:
            return Ellipsis
        if key == "dtype":
            return _dtype(body, where)
        if key == "size":
            return decode_size(body, where)
        if key == "array":
            if body not in weights:
                raise EdgeError(f"{where}: attribute array {body!r} is not a weight of the "
                                "program; export the model again")
            return weights[body]
    return {k: decode_attr(x, weights, where) for k, x in a.items()}


def _check_order(inputs, outputs, values, weights, nodes, where: str) -> None:
    """Every id a node or output names is a value, defined before it is used."""
    defined = {p.value for p in inputs} | set(weights)
    for node in nodes:
        for v in node.inputs:
            if v is not None and v not in defined:
                raise EdgeError(f"{where}: {node.where} reads value {v} before any step defines "
                                "it; export the model again")
        for v in node.outputs:
            if v not in values or v in defined:
                raise EdgeError(f"{where}: {node.where} defines value {v}, which is "
                                f"{'already defined' if v in defined else 'not in values'}; "
                                "export the model again")
            defined.add(v)
    for port in outputs:
        if port.value not in defined:
            raise EdgeError(f"{where}: output {port.name!r} is value {port.value}, which no "
                            "step defines; export the model again")


__all__ = ["Node", "Port", "ProgramSpec", "Size", "Value", "decode", "decode_attr"]
