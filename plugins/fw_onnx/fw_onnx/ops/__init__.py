"""The converters of every program op fw_onnx writes, by family: each takes the builder and
one :class:`~fw_onnx.ops.call.Call` and writes ONNX nodes ending in the call's output name.
Elementwise ops arrive as ``pointwise`` nodes and are rendered from their formula."""

from __future__ import annotations

from collections.abc import Callable

from ..graph import GraphBuilder
from . import creation, dense, norm, recurrent, reduction, shape
from .call import Call

CONVERTERS: dict[str, Callable[[GraphBuilder, Call], None]] = {
    **creation.CONVERTERS, **dense.CONVERTERS, **norm.CONVERTERS, **recurrent.CONVERTERS,
    **reduction.CONVERTERS, **shape.CONVERTERS}

__all__ = ["CONVERTERS", "Call"]
