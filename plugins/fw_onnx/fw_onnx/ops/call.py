"""What a converter receives for one program node, and helpers they share."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import numpy_helper

from fw_core.errors import ExportError


@dataclass
class Call:
    """One program node as a converter sees it.

    ``inputs``: ONNX names (None for an absent optional input); ``values``: the program's
    description of each input (``dtype``, ``shape``), None where absent; ``consts``: the
    NumPy array of each input that is a program weight, else None.
    """

    op: str
    inputs: list
    values: list
    consts: list
    attrs: dict
    out: str
    out_value: dict
    module: str
    consts_by_id: dict  # program value id -> array, for index arrays held in attributes

    def rank(self, k: int = 0) -> int:
        return len(self.values[k]["shape"])

    def dtype(self, k: int = 0) -> np.dtype:
        return np.dtype(self.values[k]["dtype"])

    def refuse(self, what: str, hint: str) -> ExportError:
        return ExportError(f"{what}, which fw_onnx cannot write as ONNX", op=self.op,
                           module=self.module or "<top level>", hint=hint)


def axes(dims, rank: int) -> list[int]:
    """``dims`` (an int or a sequence, negative counting from the end) as axes in [0, rank)."""
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [d % rank for d in dims]


def scalar_tensor(number, dtype):
    """A one-element TensorProto, as ConstantOfShape's ``value`` attribute takes it."""
    return numpy_helper.from_array(np.array([number], np.dtype(dtype)), "value")
