"""Constant folding: a node whose array inputs are all constants is run once, at compile time,
and its output becomes a constant of the graph.

What it leaves alone:
- nodes reading anything but constants ("input", "external", "grad", "host" or node values):
  those change from run to run. Random numbers and dropout masks are "host" values drawn on
  every run, so nothing random is ever folded;
- ops that write into their inputs (``OpDef.effects``): running them is the point; nor the
  values such an op writes, or whose memory a view it writes shares (a counter made by
  ``zeros`` and bumped in place each run), which a folded constant would carry from one run
  into the next;
- results larger than ``max_bytes`` (16 MiB by default): a folded constant is kept in memory
  for the life of the compiled function, where an unfolded one lives only while it is used
  (``fw.zeros(4096, 4096)`` is cheaper to make on each run than to hold forever);
- results whose shape or dtype differ from what the trace recorded (the eager dispatcher may
  convert inputs before the kernel runs): folding must never change a value.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Node, Value
from .dce import op_summary, writes_inputs
from .memplan import may_alias

MAX_FOLDED_BYTES = 16 * 2**20


def fold_constants(graph, kernel_of: Callable[[Node], Callable],
                   max_bytes: int = MAX_FOLDED_BYTES, keep=frozenset()) -> int:
    """Fold every foldable node in program order (so chains of constants fold whole); return
    how many nodes were folded. ``kernel_of(node)`` gives the kernel to run the node with
    (the device's), called as ``kernel(*arrays_or_scalars, **node.attrs)``. A folded node's
    output Value becomes ``source="const"`` with the array as payload (and in
    ``graph.samples`` when the graph carries samples); the node is removed.
    """
    samples = getattr(graph, "samples", None)
    written = _written(graph)
    kept, folded, too_big = [], [], 0
    for step in graph.steps:
        if not _foldable(step) or step.out.index in written or id(step) in keep:
            kept.append(step)
            continue
        if step.out.nbytes > max_bytes:
            too_big += 1
            kept.append(step)
            continue
        args = [v.payload if v.__class__ is Value else v for v in step.inputs]
        result = kernel_of(step)(*args, **step.attrs)
        if tuple(result.shape) != step.out.shape or result.dtype != step.out.dtype:
            kept.append(step)
            continue
        out = step.out
        out.source, out.payload, out.producer = "const", result, None
        if samples is not None:
            samples[out.index] = result
        folded.append(step.op.name)
    graph.steps[:] = kept
    line = f"constfold: folded {len(folded)} nodes"
    if folded:
        line += f" ({op_summary(folded)})"
    if too_big:
        line += f"; {too_big} left unfolded (result over {max_bytes // 2**20} MiB)"
    graph.log.append(line)
    return len(folded)


def _foldable(step) -> bool:
    return step.__class__ is Node and not writes_inputs(step) and \
        all(v.source == "const" for v in step.reads)


def _written(graph) -> set[int]:
    """The values an op's effects write, and those whose memory they share (the inputs of the
    views written, through every view in between)."""
    producers = {s.out.index: s for s in graph.steps if s.__class__ is Node}
    written = set()
    for step in graph.steps:
        if step.__class__ is not Node:
            continue
        for i in step.op.effects:
            v = step.inputs[i] if i < len(step.inputs) else None
            while v.__class__ is Value and v.index not in written:
                written.add(v.index)
                producer = producers.get(v.index)
                v = producer.inputs[0] if producer is not None and may_alias(producer) else None
    return written
