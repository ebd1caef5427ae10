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

from ..ops import scalar
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


def pointwise_layout(group: Group, supports: Callable[[Node], bool]) -> PointwiseLayout | None:
    """The layout of ``group``, or None when a generator cannot write it as one loop nest:
    a node it does not support (``supports``; body ops must have a formula), body nodes
    of different shapes, an input of higher rank, a dimension no input spans (an expand), or a
    reduction it does not understand or that does not read the body."""
    nodes = group.nodes
    reduction = nodes[-1] if nodes[-1].op.reduction is not None else None
    body = nodes[:-1] if reduction is not None else list(nodes)
    if not body or not all(n.op.expr is not None and supports(n) for n in body):
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


def computable(node: Node, dtypes: Container[str]) -> bool:
    """Whether a generator handling ``dtypes`` (names) computes ``node``: every dtype it reads
    or makes is one of them, and it is a float reduction closing a group, or an op with a
    formula (``OpDef.expr``) exact on integers (:func:`fw_core.ops.scalar.integer_exact`) or
    computed in a float dtype from float (or bool) values: NumPy's integer rules differ from
    the other formulas."""
    kinds = [v.dtype for v in node.reads] + [node.out.dtype]
    if any(d.name not in dtypes for d in kinds):
        return False
    if node.op.reduction is not None:
        return all(d.kind == "f" for d in kinds)
    expr = node_formula(node)
    if expr is None:
        return False
    return scalar.integer_exact(expr) or (
        compute_dtype(node).kind == "f" and all(v.dtype.kind in "fb" for v in node.reads))


def node_formula(node: Node) -> scalar.Expr | None:
    """The formula ``node`` computes: its op's, for its attributes and inputs."""
    return scalar.formula(node.op, node.attrs, len(node.inputs))


def compute_dtype(node: Node) -> np.dtype:
    """The dtype ``node``'s formula is computed in (:func:`fw_core.ops.scalar.compute_dtype`)."""
    return scalar.compute_dtype([v.dtype for v in node.reads], node.out.dtype)
