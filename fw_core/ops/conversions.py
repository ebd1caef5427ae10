"""Tensor's conversion and construction methods: ``x.float()``, ``x.double()`` and the other
dtype names, ``x.type()``, ``x.new_zeros(...)`` and its kin. They are not ops of their own: each
is a cast or a creation op with the tensor's dtype and device filled in.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor
from .creation import cast, clone, full, ones, tensor, zeros


def _float(x: Tensor) -> Tensor:
    """``x`` converted to float32."""
    return cast(x, _dt.float32)


#: PyTorch's legacy tensor-type names, by dtype ("FloatTensor": float32)
TENSOR_TYPE_NAMES = {_dt.float32: "FloatTensor", _dt.float64: "DoubleTensor",
                     _dt.float16: "HalfTensor", _dt.bfloat16: "BFloat16Tensor",
                     _dt.int64: "LongTensor", _dt.int32: "IntTensor",
                     _dt.int16: "ShortTensor", _dt.int8: "CharTensor", _dt.uint8: "ByteTensor",
                     _dt.bool_: "BoolTensor"}
_BY_TYPE_NAME = {name: dtype for dtype, name in TENSOR_TYPE_NAMES.items()}


def tensor_type(x, dtype=None, non_blocking: bool = False):
    """Implements ``Tensor.type``: without ``dtype`` the tensor's type name in PyTorch's legacy
    naming under fw's prefix (``"fw.FloatTensor"``); with one, ``x`` cast to it, where
    ``dtype`` may also be such a name (``"torch.LongTensor"``, ``"fw.LongTensor"``)."""
    if dtype is None:
        return f"fw.{TENSOR_TYPE_NAMES[x.dtype]}"
    if isinstance(dtype, str) and dtype.rsplit(".", 1)[-1] in _BY_TYPE_NAME:
        dtype = _BY_TYPE_NAME[dtype.rsplit(".", 1)[-1]]
    return cast(x, dtype)


def _as(dtype):
    """``x.double()``-style conversion to ``dtype``, named after the method."""

    def convert(x: Tensor) -> Tensor:
        return cast(x, dtype)

    convert.__qualname__ = convert.__name__ = f"to_{dtype.name}"
    convert.__doc__ = f"``x`` converted to {dtype.name} (``cast(x, fw.{dtype.name})``)."
    return convert


def new_zeros(x: Tensor, *shape, **kwargs) -> Tensor:
    """Zeros of ``shape`` with x's dtype and device (unless given)."""
    return zeros(*shape, **{"dtype": x.dtype, "device": x.device, **kwargs})


def new_ones(x: Tensor, *shape, **kwargs) -> Tensor:
    """Ones of ``shape`` with x's dtype and device (unless given)."""
    return ones(*shape, **{"dtype": x.dtype, "device": x.device, **kwargs})


def new_full(x: Tensor, shape, value, **kwargs) -> Tensor:
    """``value`` everywhere in ``shape``, with x's dtype and device (unless given)."""
    return full(shape, value, **{"dtype": x.dtype, "device": x.device, **kwargs})


def new_tensor(x: Tensor, data, **kwargs) -> Tensor:
    """A tensor of ``data`` with x's dtype and device (unless given)."""
    return tensor(data, **{"dtype": x.dtype, "device": x.device, **kwargs})


#: Tensor methods this module provides (bound by fw_core.tensor_methods)
METHODS = {
    "clone": clone, "float": _float, "double": _as(_dt.float64), "half": _as(_dt.float16),
    "bfloat16": _as(_dt.bfloat16), "long": _as(_dt.int64), "int": _as(_dt.int32),
    "bool": _as(_dt.bool_),
    "byte": _as(_dt.uint8), "short": _as(_dt.int16), "char": _as(_dt.int8), "astype": cast,
    "type": tensor_type, "new_zeros": new_zeros, "new_ones": new_ones, "new_full": new_full,
    "new_tensor": new_tensor,
}
