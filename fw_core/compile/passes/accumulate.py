"""Gradient accumulation over a loop, done once: sums of per-step contractions become one.

A weight used at every step of a Python loop (an LSTM cell, a shared layer) receives one
gradient per step, and backward adds them up: ``dW = g_1^T x_1 + g_2^T x_2 + ...``, each term a
small matrix product and each partial sum handed to ``.grad``. Two rewrites turn that into what
one would write by hand:

- :func:`drop_superseded_grads`: a ``.grad`` assignment that a later one for the same leaf
  overwrites, with no host step in between that could read it, is dropped (only the last value
  is ever seen), so the partial sums stop escaping.
- :func:`batch_accumulated_sums`: a sum of three or more calls of one op, whose results are
  used only by the sum, becomes one call on inputs concatenated along the axes the op's
  contract names (``OpDef.batched_sum``): per-step einsums ``g_i^T x_i`` become
  ``cat(g)^T cat(x)``, sums over a leading axis one sum of the concatenation, and scatters
  into zeros whose slices tile an axis (the gradient of ``chunk``/``split``) the
  concatenation of the pieces. One large product runs near the BLAS peak where many small
  ones are dominated by call overhead; the result differs only by reassociation of the sum.
"""

from __future__ import annotations

from ...ops.elementwise import ADD
from ...ops.shape import CAT
from ..ir import Effect, Node, Value

MIN_TERMS = 3


def drop_superseded_grads(graph) -> int:
    """Remove set_grad effects overwritten by a later one for the same leaf; return how many."""
    last: dict[int, int] = {}  # id(leaf) -> index in ``kept`` of its latest set_grad
    kept, dropped = [], 0
    for step in graph.steps:
        if step.__class__ is Effect:
            if step.kind == "set_grad":
                leaf = id(step.target)
                if leaf in last:
                    kept[last[leaf]] = None
                    dropped += 1
                last[leaf] = len(kept)
            else:  # host code (an optimizer step, clipping, a hook) may read any .grad
                last.clear()
        kept.append(step)
    graph.steps[:] = [s for s in kept if s is not None]
    graph.log.append(f"accumulate: dropped {dropped} superseded .grad assignments")
    return dropped


def batch_accumulated_sums(graph) -> int:
    """Rewrite sums of per-step calls into one call each; return how many sums."""
    readers = _reader_counts(graph)
    producers = {s.out.index: s for s in graph.steps if s.__class__ is Node}
    inner = {v.index for s in producers.values() if s.op is ADD for v in s.reads
             if readers.get(v.index) == 1}
    rewritten, terms_total = 0, 0
    new_steps = []
    for step in graph.steps:
        if step.__class__ is Node and step.op is ADD and step.out.index not in inner:
            terms = _terms(step, readers, producers)
            batched = _batched(graph, step, terms) if len(terms) >= MIN_TERMS else None
            if batched is not None:
                new_steps.extend(batched)
                rewritten += 1
                terms_total += len(terms)
                continue
        new_steps.append(step)
    graph.steps[:] = new_steps
    graph.log.append(f"accumulate: {rewritten} sums of {terms_total} per-step terms became "
                     f"{rewritten} batched ops")
    return rewritten


# -- helpers --------------------------------------------------------------------------------------
def _reader_counts(graph) -> dict[int, int]:
    counts: dict[int, int] = {}
    for step in graph.steps:
        for v in step.reads:
            counts[v.index] = counts.get(v.index, 0) + 1
    for v in graph.outputs:
        counts[v.index] = counts.get(v.index, 0) + 1
    return counts


def _terms(node: Node, readers, producers) -> list[Node]:
    """The producer nodes summed by the add tree rooted at ``node`` (empty if any term is not
    a node used only by the tree)."""
    found = []
    for v in node.inputs:
        if v.__class__ is not Value or readers.get(v.index) != 1 or v.index not in producers:
            return []
        child = producers[v.index]
        if child.op is ADD:
            sub = _terms(child, readers, producers)
            if not sub:
                return []
            found += sub
        else:
            found.append(child)
    return found


def _batched(graph, root: Node, terms: list[Node]) -> list[Node] | None:
    """The steps computing ``root`` (a sum of ``terms``) as one call, or None."""
    op = terms[0].op
    if op.batched_sum is None or any(t.op is not op or t.out.shape != root.out.shape or
                                     any(v.__class__ is not Value for v in t.inputs)
                                     for t in terms):
        return None
    plan = op.batched_sum([t.attrs for t in terms], [tuple(v.shape for v in t.inputs)
                                                      for t in terms])
    if plan is None or len(plan.axes) != len(terms[0].inputs):
        return None
    ordered = [terms[k] for k in plan.order]
    operands = []
    for position, axis in enumerate(plan.axes):
        pieces = [t.inputs[position] for t in ordered]
        first = pieces[0]
        if any(_without(p.shape, axis) != _without(first.shape, axis) or p.dtype != first.dtype
               for p in pieces):
            return None
        operands.append(pieces)
    if not plan.call:
        [pieces] = operands
        return [_bind(Node(CAT, tuple(pieces), {"dim": plan.axes[0]}, root.out, root.module,
                           root.phase))]
    cats = [_cat(graph, pieces, axis, root) for pieces, axis in zip(operands, plan.axes)]
    call = Node(op, tuple(c.out for c in cats), dict(terms[0].attrs), root.out, root.module,
                root.phase)
    return [*cats, _bind(call)]


def _cat(graph, operands, axis, root) -> Node:
    shape = list(operands[0].shape)
    shape[axis] = sum(o.shape[axis] for o in operands)
    out = graph.value(tuple(shape), operands[0].dtype, "node")
    return _bind(Node(CAT, tuple(operands), {"dim": axis}, out, root.module, root.phase))


def _bind(node: Node) -> Node:
    node.out.producer = node
    return node


def _without(shape, axis):
    return shape[:axis] + shape[axis + 1:]
