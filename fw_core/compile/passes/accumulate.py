"""Gradient accumulation over a loop, done once: sums of per-step contractions become one.

A weight used at every step of a Python loop (an LSTM cell, a shared layer) receives one
gradient per step, and backward adds them up: ``dW = g_1^T x_1 + g_2^T x_2 + ...``, each term a
small matrix product and each partial sum handed to ``.grad``. Two rewrites turn that into what
one would write by hand:

- :func:`drop_superseded_grads`: a ``.grad`` assignment that a later one for the same leaf
  overwrites, with no host step in between that could read it, is dropped (only the last value
  is ever seen), so the partial sums stop escaping.
- :func:`batch_accumulated_contractions`: a sum of three or more two-operand einsums with one
  equation, whose terms are used only by the sum, becomes one einsum over operands concatenated
  along a contracted axis (``cat(g)^T cat(x)``); likewise a sum of ``sum_to`` reductions over
  their leading axis becomes one ``sum_to`` of the concatenation. One large product runs near
  the BLAS peak where many small ones are dominated by call overhead; the result differs only
  by reassociation of the sum. A sum of ``index_backward`` terms whose slices tile one axis
  (the gradient of ``chunk``/``split``: each piece scattered into zeros, then added) becomes
  the concatenation of the pieces, exactly.
"""

from __future__ import annotations

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


def batch_accumulated_contractions(graph, ops) -> int:
    """Rewrite sums of per-step einsums / sum_tos into one op each; return how many sums.

    ``ops(name)`` returns an op contract (``fw.ops.get``).
    """
    readers = _reader_counts(graph)
    producers = {s.out.index: s for s in graph.steps if s.__class__ is Node}
    inner = {v.index for s in producers.values() if s.op.name == "add" for v in s.reads
             if readers.get(v.index) == 1}
    rewritten, terms_total = 0, 0
    new_steps = []
    for step in graph.steps:
        if step.__class__ is Node and step.op.name == "add" and step.out.index not in inner:
            terms = _terms(step, readers, producers)
            batched = _batched(graph, step, terms, ops) if len(terms) >= MIN_TERMS else None
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
        if child.op.name == "add":
            sub = _terms(child, readers, producers)
            if not sub:
                return []
            found += sub
        else:
            found.append(child)
    return found


def _batched(graph, root: Node, terms: list[Node], ops):
    first = terms[0]
    if any(t.op is not first.op or t.out.shape != first.out.shape for t in terms):
        return None
    if first.op.name == "index_backward":  # the pieces' indexes differ by design
        return _tiled_pieces(root, terms, ops)
    if any(t.attrs != first.attrs for t in terms):
        return None
    if first.op.name == "einsum" and len(first.inputs) == 2:
        return _batched_einsum(graph, root, terms, ops)
    if first.op.name == "sum_to":
        return _batched_sum_to(graph, root, terms, ops)
    return None


def _tiled_pieces(root, terms, ops):
    """index_backward terms whose indexes differ only in one axis's slice, tiling that axis."""
    shape = terms[0].attrs["shape"]
    indexes = [t.attrs["index"] for t in terms]
    if any(len(ix) != len(indexes[0]) for ix in indexes):
        return None
    differing = [i for i in range(len(indexes[0])) if len({repr(ix[i]) for ix in indexes}) > 1]
    if len(differing) != 1 or differing[0] >= len(shape):
        return None
    axis = differing[0]
    if any(ix[i] != slice(None) for ix in indexes for i in range(axis)):
        return None  # an integer or slice index before the axis changes the piece's layout
    pieces = []
    for t, ix in zip(terms, indexes):
        s = ix[axis]
        if not isinstance(s, slice) or s.step not in (None, 1):
            return None
        start, stop, _ = s.indices(shape[axis])
        pieces.append((start, stop, t.inputs[0]))
    pieces.sort(key=lambda p: p[0])
    position = 0
    for start, stop, value in pieces:
        if start != position or value.__class__ is not Value or value.shape[axis] != stop - start:
            return None
        position = stop
    if position != shape[axis]:
        return None
    cat = Node(ops("cat"), tuple(p[2] for p in pieces), {"dim": axis}, root.out, root.module,
               root.phase)
    root.out.producer = cat
    return [cat]


def _batched_einsum(graph, root, terms, ops):
    lhs, _, out = terms[0].attrs["equation"].partition("->")
    ta, tb = lhs.split(",")
    contracted = [c for c in ta if c in tb and c not in out]
    if not contracted:
        return None
    letter = contracted[0]
    axes = (ta.index(letter), tb.index(letter))
    cats = []
    for side, axis in enumerate(axes):
        operands = [t.inputs[side] for t in terms]
        if any(o.__class__ is not Value or _without(o.shape, axis) !=
               _without(operands[0].shape, axis) or o.dtype != operands[0].dtype
               for o in operands):
            return None
        cats.append(_cat(graph, operands, axis, root, ops))
    product = Node(terms[0].op, (cats[0].out, cats[1].out), dict(terms[0].attrs), root.out,
                   root.module, root.phase)
    root.out.producer = product
    return [*cats, product]


def _batched_sum_to(graph, root, terms, ops):
    operands = [t.inputs[0] for t in terms]
    shape = terms[0].attrs["shape"]
    first = operands[0]
    reduces_axis0 = len(first.shape) > len(shape) or (shape and shape[0] == 1 != first.shape[0])
    if not reduces_axis0 or any(o.__class__ is not Value or o.shape[1:] != first.shape[1:]
                                or o.dtype != first.dtype for o in operands):
        return None
    cat = _cat(graph, operands, 0, root, ops)
    total = Node(terms[0].op, (cat.out,), dict(terms[0].attrs), root.out, root.module,
                 root.phase)
    root.out.producer = total
    return [cat, total]


def _cat(graph, operands, axis, root, ops) -> Node:
    shape = list(operands[0].shape)
    shape[axis] = sum(o.shape[axis] for o in operands)
    out = graph.value(tuple(shape), operands[0].dtype, "node")
    node = Node(ops("cat"), tuple(operands), {"dim": axis}, out, root.module, root.phase)
    out.producer = node
    return node


def _without(shape, axis):
    return shape[:axis] + shape[axis + 1:]
