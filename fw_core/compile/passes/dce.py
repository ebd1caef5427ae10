"""Dead-code elimination: drop the op nodes whose results nothing needs.

A result is needed when it is one of ``graph.outputs`` or read by a needed step. Effects are
always needed (they are the point of a training step), and so are nodes of ops whose kernels
write into their inputs (``OpDef.effects``), whatever becomes of their output.
"""

from __future__ import annotations

from collections import Counter

from ..ir import Group, Node


def writes_inputs(step) -> bool:
    """Whether ``step`` is a node (or a group holding one) of an op whose kernel writes into
    its inputs (``OpDef.effects``): dead-code elimination keeps it, CSE never merges it and
    constant folding never runs it."""
    if step.__class__ is Node:
        return bool(step.op.effects)
    return step.__class__ is Group and any(n.op.effects for n in step.nodes)


def op_summary(names) -> str:
    """``"mul x2, exp"``: op names with their counts, most frequent first, for ``graph.log``."""
    return ", ".join(name if count == 1 else f"{name} x{count}"
                     for name, count in Counter(names).most_common())


def eliminate_dead_code(graph) -> int:
    """Remove the Node and Group steps whose outputs are never needed; return how many.

    Walks the steps backwards, so a chain feeding only a dead node dies with it.
    """
    needed = {v.index for v in graph.outputs}
    kept, removed = [], []
    for step in reversed(graph.steps):
        if step.__class__ in (Node, Group) and not writes_inputs(step) and \
                not any(v.index in needed for v in step.writes):
            removed.extend(n.op.name for n in ([step] if step.__class__ is Node else step.nodes))
            continue
        kept.append(step)
        needed.update(v.index for v in step.reads)
    kept.reverse()
    graph.steps[:] = kept
    graph.log.append(f"dce: removed {len(removed)} nodes" +
                     (f" ({op_summary(removed)})" if removed else ""))
    return len(removed)
