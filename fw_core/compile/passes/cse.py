"""Common-subexpression elimination: a node computing what an earlier node already computed
(same op, same input values, same scalars and attributes: :meth:`Node.key`) is dropped and its
readers read the earlier value.

What it never merges, and why:
- across an Effect of kind "call" or "assign", or a node of an op that writes into its inputs
  (batch_norm): they may change an external array in place, so the same key may no longer mean
  the same numbers (the table of known results is cleared there);
- nodes writing into their inputs (``OpDef.effects``: running them twice is the point);
- values that escape (graph outputs, arrays handed to the user by an Effect, and their views):
  two ``.grad`` sharing one array would be corrupted by the first in-place update of either.
"""

from __future__ import annotations

from ..ir import Effect, Group, Node, Value
from .dce import op_summary, writes_inputs
from .memplan import analyze

MUTATING_EFFECTS = frozenset({"call", "assign"})


def substitute(step, replace: dict[int, Value]) -> None:
    """Make ``step`` read ``replace[v.index]`` wherever it read a value ``v`` listed there."""
    def swap(items):
        return tuple(replace.get(v.index, v) if v.__class__ is Value else v for v in items)

    if step.__class__ is Node:
        step.inputs = swap(step.inputs)
    elif step.__class__ is Group:
        step.inputs = list(swap(step.inputs))
        for node in step.nodes:
            node.inputs = swap(node.inputs)
    else:
        step.reads = swap(step.reads)


def eliminate_common_subexpressions(graph) -> int:
    """Merge duplicate nodes into their first occurrence; return how many were removed."""
    live = analyze(graph.steps, graph.outputs)
    escapes = {index for index, base in live.root.items() if base in live.escaping}
    known: dict[tuple, Value] = {}
    replace: dict[int, Value] = {}
    kept, merged = [], []
    for step in graph.steps:
        if replace:
            substitute(step, replace)
        if step.__class__ is Effect and step.kind in MUTATING_EFFECTS or writes_inputs(step):
            known.clear()
        elif step.__class__ is Node and step.out.index not in escapes:
            key = step.key()
            first = known.get(key)
            if first is not None:
                replace[step.out.index] = first
                merged.append(step.op.name)
                continue
            known[key] = step.out
        kept.append(step)
    graph.steps[:] = kept
    graph.log.append(f"cse: merged {len(merged)} nodes" +
                     (f" ({op_summary(merged)})" if merged else ""))
    return len(merged)
