"""What a kernel is to fw-edge: the records every kernel module (built-in or a provider's)
lists in its ``KERNELS``, and what a kernel factory receives and returns.

A program is planned once per input-shape signature. For each node, fw-edge takes the records
for its op, best ``priority`` first, and asks each ``guard`` (if any) whether it accepts the
node's :class:`NodeSpec` (shapes resolved for this signature); the first accepted record's
``factory`` builds the step, one of:

- :class:`Writes` ``(fn)``: ``fn(out, *inputs)`` writes the result into ``out``, a
  C-contiguous array of the output's shape and dtype that fw-edge owns (``out`` is a tuple for a
  node with several outputs); an absent optional input is None. ``fn`` must not keep ``out``
  or an input past the call, and must not write into its inputs.
- :class:`View` ``(fn, contiguous)``: ``fn(*inputs)`` returns a view of ``inputs[0]`` (or a
  fresh array); fw-edge keeps the viewed array alive while the view is, and may compute the
  view once and keep it when ``inputs[0]`` is a buffer of its own. ``contiguous`` says whether
  the result is C-contiguous (None: not known).

A factory may precompute anything from the spec (weights are in ``ArraySpec.value``) and may
take working arrays from ``NodeSpec.scratch``, which nodes share: valid only during one call of
``fn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class ArraySpec(NamedTuple):
    """One operand of a node for a planned signature."""

    shape: tuple[int, ...]
    dtype: np.dtype
    #: True: C-contiguous; False: a strided view; None: not known (a caller's input)
    contiguous: bool | None
    #: the array itself when the operand is a weight of the program, else None
    value: np.ndarray | None = None


class NodeSpec(NamedTuple):
    """A node as a factory or guard sees it: ``attrs`` with sizes resolved for the signature,
    ``inputs`` (None for an absent optional input) and ``outputs`` (one per output value)."""

    op: str
    attrs: dict
    inputs: tuple[ArraySpec | None, ...]
    outputs: tuple[ArraySpec, ...]
    module: str
    #: ``scratch(shape, dtype)``: a working array shared between nodes (one per call of it
    #: from one factory: the k-th call of each factory gets its own array)
    scratch: Callable[[tuple, np.dtype], np.ndarray]

    @property
    def out(self) -> ArraySpec:
        """The (first) output."""
        return self.outputs[0]

    @property
    def where(self) -> str:
        """The node as messages name it: ``conv2d at features.0``."""
        return f"{self.op} at {self.module or 'the top level'}"


class Writes(NamedTuple):
    """A step computing into fw-edge's buffer: ``fn(out, *inputs)``."""

    fn: Callable


class View(NamedTuple):
    """A step returning a view of its first input: ``fn(*inputs) -> array``."""

    fn: Callable
    contiguous: bool | None = False


class Kernel(NamedTuple):
    """One entry of a kernel module's ``KERNELS`` list.

    Attributes:
        op: the op name it runs (``"linear"``).
        factory: ``factory(spec: NodeSpec) -> Writes | View``, called when a signature is
            planned; it may raise EdgeError for attributes it cannot run.
        priority: the larger wins among the records of one op whose guard accepts a node;
            fw-edge's own kernels have priority 0.
        guard: ``guard(spec: NodeSpec) -> bool``, whether this kernel runs the node (None:
            every node of its op).
    """

    op: str
    factory: Callable[[NodeSpec], Writes | View]
    priority: int = 0
    guard: Callable[[NodeSpec], bool] | None = None
