"""Rematerialisation: recompute a cheap value next to its late readers instead of holding it.

In a training step, an elementwise result of the forward pass (``relu(h)``, ``x * s``) is often
read again only by the backward pass, so it stays alive across the whole boundary between the
two, where memory peaks. When the inputs of the node that made it are alive at its first
backward reader anyway (or are held outside the plan: inputs, externals, constants), a copy of
the node placed just before that reader recomputes it from them: the original dies after its
last forward reader, and the peak may drop by its size, for the price of one elementwise pass.

Candidates are nodes of ops whose contract says ``cost="cheap"`` (about one memory pass
each: ``add``, ``relu``, ``where``); transcendental ones (exp, erf, GELU, sigmoid, tanh) cost
several times a load from memory, so they are kept instead. A candidate is taken only when the
estimated peak (from ``Value.nbytes`` and liveness, see :mod:`.memplan`) gets strictly lower;
candidates are tried largest first. Left alone: values
that escape or have views (their memory stays needed), values read late by something other than
an op node, and copies that would read an external array across an Effect or a node that may
write into it.
"""

from __future__ import annotations

from ...records import Structure
from ..ir import Effect, Node
from .cse import MUTATING_EFFECTS, substitute
from .dce import writes_inputs
from .memplan import HELD_OUTSIDE, analyze, estimate_peak, fmt_bytes, live_bytes

#: structures whose nodes may be recomputed: each output element from the same input elements
POINTWISE = frozenset({Structure.ELEMENTWISE, Structure.BROADCAST})
MUTABLE = frozenset({"input", "external", "grad"})  # what an Effect or an op's effects may write


def rematerialize(graph) -> int:
    """Recompute cheap forward values before their backward readers where that lowers the
    estimated peak; return how many values were rematerialised."""
    before = estimate_peak(graph.steps, graph.outputs)
    candidates = sorted((s for s in graph.steps if s.__class__ is Node and s.phase == "forward"
                         and s.op.structure in POINTWISE and s.op.cost == "cheap"
                         and not writes_inputs(s)),
                        key=lambda s: -s.out.nbytes)
    done, survey = [], None
    for node in candidates:
        survey = survey or _Survey(graph)
        if _try(graph, node, survey):
            done.append(node.op.name)
            survey = None  # the steps changed
    after = estimate_peak(graph.steps, graph.outputs)
    graph.log.append(f"remat: recomputed {len(done)} values before their backward readers; "
                     f"estimated peak {fmt_bytes(before)} -> {fmt_bytes(after)}")
    return len(done)


class _Survey:
    """Liveness, bytes held per step and readers of each value, for the current steps."""

    def __init__(self, graph):
        self.live = analyze(graph.steps, graph.outputs)
        self.held = live_bytes(graph.steps, self.live)
        self.peak = max(self.held, default=0)
        self.viewed = {base for index, base in self.live.root.items() if base != index}
        self.readers: dict[int, list[int]] = {}
        for position, step in enumerate(graph.steps):
            for v in dict.fromkeys(step.reads):
                self.readers.setdefault(v.index, []).append(position)


def _try(graph, node: Node, survey: _Survey) -> bool:
    """Rematerialise ``node``'s output if it is a candidate that lowers the peak."""
    steps, live, v = graph.steps, survey.live, node.out
    if v.index in live.escaping or v.index in survey.viewed:
        return False
    readers = survey.readers.get(v.index, [])
    late = next((p for p in readers if getattr(steps[p], "phase", None) == "backward"), None)
    if late is None or any(steps[p].__class__ is not Node for p in readers if p >= late):
        return False
    if any(live.last[u.index] < late for u in node.reads if u.source not in HELD_OUTSIDE):
        return False
    define = live.define[v.index]
    if any(u.source in MUTABLE for u in node.reads) and \
            any(_may_write(steps[p]) for p in range(define + 1, late)):
        return False
    early = max((p for p in readers if p < late), default=define)
    gap = range(early + 1 if early > define else define, late)  # where v is no longer held
    size = v.nbytes
    if max(h - size if p in gap else h for p, h in enumerate(survey.held)) >= survey.peak:
        return False
    _apply(graph, node, late, early > define)
    return True


def _may_write(step) -> bool:
    return step.__class__ is Effect and step.kind in MUTATING_EFFECTS or writes_inputs(step)


def _apply(graph, node: Node, late: int, keep_original: bool) -> None:
    """Insert a copy of ``node`` before step ``late`` and make the later readers read it."""
    steps = graph.steps
    v = node.out
    copy = graph.value(v.shape, v.dtype, "node")
    clone = Node(node.op, node.inputs, dict(node.attrs), copy, node.module, "backward")
    copy.producer = clone
    samples = getattr(graph, "samples", None)
    if samples is not None and v.index in samples:
        samples[copy.index] = samples[v.index]
    for step in steps[late:]:
        substitute(step, {v.index: copy})
    steps.insert(late, clone)
    if not keep_original:
        steps.remove(node)
