"""The layout of a pointwise fusion group, the same for every device's code generator.

A group the fusion pass forms from elementwise / broadcasting nodes, optionally closed by a
reduction whose contract says how it sums (``OpDef.reduction``: sum, mean, sum_to), is one loop
nest over the *iteration shape* (its elementwise nodes' common output shape). Each input spans
some of its dimensions and broadcasts over the others; the closing reduction sums over some.
Which dimensions, not their sizes, is part of the group's signature, so a kernel written from
this layout serves every batch size. fw_cpu writes Numba loops from it and fw_cuda CUDA C; both
ask :func:`pointwise_layout` for it.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass

import numpy as np

from ..records import OpDef
from .ir import Group, Node, Value


@dataclass
class PointwiseLayout:
    """A pointwise group as one loop nest.

    Attributes:
        body: the elementwise nodes, in order.
        reduction: the closing reduction node, or None.
        shape: the iteration shape (the traced sizes).
        spans: per group input, per iteration dimension, whether the input spans it (False: it
            broadcasts, index 0 there).
        reduced: per iteration dimension, whether the reduction sums over it.
    """

    body: list[Node]
    reduction: Node | None
    shape: tuple[int, ...]
    spans: list[tuple[bool, ...]]
    reduced: list[bool]

    @property
    def rank(self) -> int:
        return len(self.shape)


def pointwise_layout(group: Group, supports: Callable[[Node], bool],
                     expressions: Container[str]) -> PointwiseLayout | None:
    """The layout of ``group``, or None when a generator cannot write it as one loop nest:
    a node it does not support (``supports``; body ops must be in ``expressions``), body nodes
    of different shapes, an input of higher rank, a dimension no input spans (an expand), or a
    reduction it does not understand or that does not read the body."""
    nodes = group.nodes
    reduction = nodes[-1] if nodes[-1].op.reduction is not None else None
    body = nodes[:-1] if reduction is not None else list(nodes)
    if not body or not all(n.op.name in expressions and supports(n) for n in body):
        return None
    shape = body[0].out.shape
    rank = len(shape)
    if any(n.out.shape != shape for n in body) or any(len(v.shape) > rank for v in group.inputs):
        return None
    spans = [(False,) * (rank - len(v.shape)) + tuple(d != 1 for d in v.shape)
             for v in group.inputs]
    if any(size != 1 and not any(s[d] for s in spans) for d, size in enumerate(shape)):
        return None
    reduced = [False] * rank
    if reduction is not None:
        source = reduction.inputs[0]
        reduced = reduction.op.reduction.dims(reduction.attrs, rank)
        if reduced is None or not supports(reduction) or source.__class__ is not Value or \
                source.index not in {n.out.index for n in body}:
            return None
    return PointwiseLayout(body, reduction, tuple(shape), spans, reduced)


def computable(node: Node, expressions: Container[str], dtypes: Container[str],
               float_only: Callable[[OpDef], bool]) -> bool:
    """Whether a generator computes ``node``: its op has one of the generator's
    ``expressions`` (or is a closing reduction), every dtype it reads or makes is in
    ``dtypes`` (names), and an op the generator computes only for floats
    (``float_only(op)``: NumPy's integer rules differ from the float formula) sees floats."""
    op = node.op
    if op.name not in expressions and op.reduction is None:
        return False
    kinds = [v.dtype for v in node.reads] + [node.out.dtype]
    if any(d.name not in dtypes for d in kinds):
        return False
    return not float_only(op) or all(d.kind == "f" for d in kinds)


def compute_dtype(node: Node) -> np.dtype:
    """The dtype an op's Python-scalar operands take (NumPy's weak-scalar rule): its result's,
    or for the bool results of binary-promoted ops (comparisons) the first array operand's."""
    if node.out.dtype.kind == "b" and node.reads and node.op.promotion == "binary":
        return node.reads[0].dtype
    return node.out.dtype
