"""How fw_onnx imports each ONNX op: ``HANDLERS[op_type](node, *inputs)`` returns the output
tensor (or a tuple, one per output), computed with fw ops so that autograd flows through it.
One module per family; control flow (If) is run by the importer itself."""

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
    resize,
    tensor,
    windows,
)
from .node import Node

HANDLERS = {name: handler
            for family in (elementwise, tensor, nn, losses, recurrent, indexing, attention,
                           windows, quantize, misc, resize)
            for name, handler in family.HANDLERS.items()}

__all__ = ["HANDLERS", "Node"]
