"""An ONNX node as handlers read it: names, inputs, outputs and decoded attributes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

import fw_core as fw


@dataclass(frozen=True)
class Node:
    op_type: str
    domain: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict

    @classmethod
    def of(cls, proto: onnx.NodeProto) -> Node:
        return cls(proto.op_type, proto.domain, proto.name, tuple(proto.input),
                   tuple(proto.output), {a.name: _decode(a) for a in proto.attribute})

    def get(self, key: str, default=None):
        return self.attrs.get(key, default)


def _decode(attribute):
    value = helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def host(t) -> np.ndarray:
    """A small tensor's values on the host (shapes, axes, indices an op takes as input)."""
    return t.numpy() if isinstance(t, fw.Tensor) else np.asarray(t)


def ints(t) -> list[int]:
    return [int(v) for v in host(t).reshape(-1)]


def fw_dtype(onnx_type: int):
    """The fw dtype of an ONNX element type."""
    return fw.dtypes.from_numpy(np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type)))
