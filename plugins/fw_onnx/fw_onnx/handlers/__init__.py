"""How fw_onnx imports each ONNX op: ``HANDLERS[op_type](node, *inputs)`` returns the output
tensor (or a tuple, one per output), computed with fw ops so that autograd flows through it."""

from __future__ import annotations

from . import (
            attention,
            elementwise,
            indexing,
            losses,
            misc,
            nn,
            quantize,
            recurrent,
            tensor,
            windows,
)
from .node import Node

HANDLERS = {**elementwise.HANDLERS, **tensor.HANDLERS, **nn.HANDLERS, **losses.HANDLERS,
            **recurrent.HANDLERS, **indexing.HANDLERS, **attention.HANDLERS,
            **windows.HANDLERS, **quantize.HANDLERS,
            **misc.HANDLERS}

__all__ = ["HANDLERS", "Node"]
