"""The dtypes an op's inputs have when its kernel runs: the one place fw converts them.

Two contract fields decide it (see :class:`~fw_core.records.OpDef`): ``promotion="binary"``
brings two operands to one dtype (:mod:`fw_core.dtypes`' table; a Python scalar is weak, so
``float32 * 2.0`` stays float32), and ``float_result`` converts integer and bool inputs to the
default float. Eager dispatch converts with these functions, the compile tracer records a cast
node wherever :func:`kernel_dtypes` says one happens, and the meta rules' :func:`result`
answers the same question for TensorSpecs, so the three cannot disagree.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor


def float_input(dtype: np.dtype) -> np.dtype:
    """What an input of ``dtype`` becomes for a ``float_result`` op."""
    return dtype if dtype.kind in _dt.FLOAT_KINDS else _dt.default_float.numpy


def binary(a: np.dtype, b: np.dtype, float_result: bool) -> np.dtype:
    """The one dtype two tensor operands of dtypes ``a`` and ``b`` have in a binary op."""
    common = a if a is b else _dt.PROMOTE_NUMPY[a, b]
    return float_input(common) if float_result else common


def with_scalar(dtype: np.dtype, scalar, float_result: bool) -> np.dtype:
    """The dtype a tensor operand of ``dtype`` has next to a (weak) Python ``scalar``."""
    if dtype.kind in _dt.FLOAT_KINDS:
        return dtype
    wanted = _dt.result_type_with_scalar(_dt.BY_NUMPY[dtype], scalar).numpy
    return float_input(wanted) if float_result else wanted


def kernel_dtypes(op, inputs) -> list | None:
    """Per input of ``op``, the dtype its kernel sees (None for a scalar or an unconverted
    input); None when no input is converted."""
    if op.promotion == "binary" and len(inputs) == 2:
        a, b = inputs
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            common = binary(a._data.dtype, b._data.dtype, op.float_result)
            return [common, common]
        tensor, scalar = (a, b) if isinstance(a, Tensor) else (b, a)
        target = with_scalar(tensor._data.dtype, scalar, op.float_result)
        if target == tensor._data.dtype:
            return None
        return [target if t is tensor else None for t in inputs]
    if op.float_result:
        return [float_input(t._data.dtype) if isinstance(t, Tensor) else None for t in inputs]
    return None


def result(dtypes, scalars=(), float_result: bool = False) -> _dt.DType:
    """The dtype tensors of ``dtypes`` (fw DTypes) and weak Python ``scalars`` combine to."""
    common = dtypes[0].numpy
    for d in dtypes[1:]:
        common = binary(common, d.numpy, False)
    for s in scalars:
        common = with_scalar(common, s, False)
    return _dt.BY_NUMPY[float_input(common) if float_result else common]
