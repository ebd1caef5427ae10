"""Memory planning: when each array can be dropped, and which fused kernels write into buffers
the plan owns (shared by values whose lifetimes do not overlap).

Liveness is computed over *alias classes*: an INJECTIVE op (reshape, permute, getitem,
broadcast_to ...) may return a NumPy view of its first input, so its output is counted as part
of that input's memory, keeps it alive, and escapes with it. A value *escapes* when the user can
keep its array after the run: it is one of ``graph.outputs`` or read by an Effect (a ``.grad``
handed to a leaf); an escaping array is never put in a plan-owned buffer, since the next run
would overwrite it.

Byte figures are estimates from ``Value.nbytes``: views count nothing of their own, arrays held
outside the plan (inputs, externals, constants, existing ``.grad``) count nothing at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...records import Structure
from ..ir import Group, Node

HELD_OUTSIDE = frozenset({"input", "external", "const"})  # never freed by the plan
OWNED = frozenset({"node", "host"})  # arrays the plan makes on every run: counted in peaks
_IN_PLACE = frozenset({Structure.ELEMENTWISE, Structure.BROADCAST})


def may_alias(step) -> bool:
    """Whether ``step``'s output may share memory with its first input."""
    return step.__class__ is Node and step.op.structure is Structure.INJECTIVE


@dataclass
class Liveness:
    """Where each value is defined and last needed, over a list of steps.

    ``define``/``last``: value index -> step position (-1: available from the start; ``len(steps)``:
    needed after the last step, i.e. it escapes). ``root``: value index -> the value whose memory
    it may share (itself if none). ``end``: root -> last position any of its aliases is needed.
    ``escaping``: roots of the alias classes that escape.
    """

    define: dict[int, int]
    last: dict[int, int]
    root: dict[int, int]
    end: dict[int, int]
    escaping: set[int]
    nbytes: dict[int, int]  # root -> bytes it costs the plan (0 when held outside)


def analyze(steps: list, outputs: list) -> Liveness:
    """Liveness of every value the steps read or write (see :class:`Liveness`)."""
    stop = len(steps)
    define, last, root, nbytes = {}, {}, {}, {}

    def see(v):
        if v.index not in root:
            root[v.index] = v.index
            define[v.index] = -1
            last[v.index] = -1
            nbytes[v.index] = v.nbytes if v.source in OWNED else 0

    escaping_values = {v.index for v in outputs}
    for position, step in enumerate(steps):
        for v in step.reads:
            see(v)
            last[v.index] = position
        if step.__class__ not in (Node, Group):
            escaping_values.update(v.index for v in step.reads)
        for v in step.writes:
            see(v)
            define[v.index] = last[v.index] = position
        if may_alias(step) and step.reads and step.inputs[0] is step.reads[0]:
            base = root[step.reads[0].index]
            root[step.out.index] = base
            nbytes[step.out.index] = 0
    for v in outputs:
        see(v)
    for index in escaping_values:
        last[index] = stop
    end = {}
    for index, base in root.items():
        end[base] = max(end.get(base, -1), last[index])
    escaping = {root[index] for index in escaping_values}
    return Liveness(define, last, root, end, escaping, nbytes)


def live_bytes(steps: list, live: Liveness) -> list[int]:
    """Estimated bytes the plan holds while each step runs (its inputs and outputs included)."""
    delta = [0] * (len(steps) + 3)
    for base, size in live.nbytes.items():
        if size and live.root[base] == base:
            delta[live.define[base] + 1] += size
            delta[min(live.end[base], len(steps) - 1) + 2] -= size
    held, running = [], delta[0]
    for position in range(len(steps)):
        running += delta[position + 1]
        held.append(running)
    return held


def estimate_peak(steps: list, outputs: list) -> int:
    """The most bytes the plan holds at once if every array is allocated when made and dropped
    after its (and its views') last use."""
    return max(live_bytes(steps, analyze(steps, outputs)), default=0)


@dataclass
class MemoryPlan:
    """What :func:`plan_memory` decided.

    ``free_after[k]``: values whose last use is step ``k`` (the plan drops its references).
    ``out_buffers[k]``: for Group step ``k``, the buffer id each output is written into (None:
    the kernel allocates); a kernel may get as ``out`` the buffer of one of its own inputs (in
    place; only single-output elementwise groups). ``buffers[id]``: (shape, dtype) of a
    plan-owned buffer, shared only by values of exactly that shape and dtype, so the plan hands
    it to kernels as is. ``peak_bytes`` counts the buffers for the whole run plus the arrays
    allocated on the way; ``unplanned_peak_bytes`` the same run with every array allocated by
    its kernel (buffers that would raise the peak above it are not kept). ``in_place``: outputs
    written over a dying input.
    """

    free_after: list[tuple[int, ...]]
    out_buffers: dict[int, tuple[int | None, ...]]
    buffers: list[tuple[tuple[int, ...], np.dtype]]
    peak_bytes: int
    unplanned_peak_bytes: int
    in_place: list[int] = field(default_factory=list)

    def summary(self) -> str:
        """One line: buffers, in-place writes and the estimated peaks."""
        planned = sum(1 for outs in self.out_buffers.values() for b in outs if b is not None)
        return (f"{planned} fused outputs in {len(self.buffers)} buffers "
                f"({fmt_bytes(_size(self.buffers))}, {len(self.in_place)} written in place), "
                f"estimated peak {fmt_bytes(self.peak_bytes)} "
                f"(unplanned {fmt_bytes(self.unplanned_peak_bytes)})")

    def describe(self) -> str:
        """A few lines for ``explain()``."""
        lines = [f"memory plan: {self.summary()}"]
        for position, ids in sorted(self.out_buffers.items()):
            if any(b is not None for b in ids):
                lines.append(f"  step {position}: outputs into buffers {list(ids)}")
        dropped = sum(map(len, self.free_after))
        lines.append(f"  {dropped} arrays dropped right after their last use")
        return "\n".join(lines)


def plan_memory(graph, budget_bytes: int | None = None) -> MemoryPlan:
    """Plan ``graph``'s memory (see :class:`MemoryPlan`); logs one line to ``graph.log``.

    Plan-owned buffers save an allocation per run but hold their bytes for the whole run (and
    between runs); the least used are dropped until the planned peak is at most
    ``budget_bytes`` (default: the unplanned peak, so planning never raises it).
    """
    steps = graph.steps
    live = analyze(steps, graph.outputs)
    free_after: list[list[int]] = [[] for _ in steps]
    for index, position in live.last.items():
        if graph.values[index].source not in HELD_OUTSIDE and position < len(steps) \
                and live.root[index] not in live.escaping:
            free_after[position].append(index)
    out_buffers, buffers, in_place, holder = _assign_buffers(steps, live)
    unplanned = live_bytes(steps, live)
    budget = max(unplanned, default=0) if budget_bytes is None else budget_bytes
    kept, peak = _within_budget(buffers, holder, unplanned, live, budget)
    renumber = {b: i for i, b in enumerate(kept)}
    out_buffers = {k: tuple(renumber.get(b) for b in ids) for k, ids in out_buffers.items()}
    plan = MemoryPlan([tuple(sorted(f)) for f in free_after], out_buffers,
                      [buffers[b] for b in kept], peak, max(unplanned, default=0),
                      [v for v in in_place if holder[v] in renumber])
    graph.log.append(f"memplan: {plan.summary()}")
    return plan


def _within_budget(buffers, holder: dict, unplanned: list[int], live: Liveness, budget: int):
    """The buffers to keep, least useful dropped first, so that the planned peak (every kept
    buffer held for the whole run, plus what kernels allocate) is within ``budget``; and that
    planned peak."""
    users: dict[int, list[int]] = {}
    for index, buffer in holder.items():
        users.setdefault(buffer, []).append(index)

    def lifetime(index):
        return range(live.define[index], min(live.end[index], len(unplanned) - 1) + 1)

    def peak(kept):
        held = list(unplanned)
        for buffer in kept:
            for index in users[buffer]:
                for position in lifetime(index):
                    held[position] -= live.nbytes[index]
        return _size([buffers[b] for b in kept]) + max(held, default=0)

    top = max(range(len(unplanned)), key=unplanned.__getitem__, default=0)
    # a buffer in use where the unplanned peak is costs nothing there: keep those first
    kept = sorted(users, key=lambda b: (-any(top in lifetime(i) for i in users[b]),
                                        -sum(len(lifetime(i)) for i in users[b])))
    while kept and peak(kept) > budget:
        kept.pop()
    return sorted(kept), peak(kept)


def _assign_buffers(steps, live: Liveness):
    """Give each non-escaping Group output a plan-owned buffer: the buffer of an input that
    dies at this very group when the group can write in place (see :func:`_dying_inputs`),
    else a buffer of the same shape and dtype whose holder (and the holder's views) is
    dead, else a new one."""
    out_buffers: dict[int, tuple] = {}
    buffers: list[tuple[tuple[int, ...], np.dtype]] = []
    in_place: list[int] = []
    holder: dict[int, int] = {}  # value index -> buffer id
    free: dict[tuple, list[int]] = {}  # (shape, dtype) -> buffer ids nobody holds
    releases: dict[int, list[int]] = {}  # step position -> buffer ids free after it
    for position, step in enumerate(steps):
        if step.__class__ is Group:
            dying = _dying_inputs(step, position, live, holder)
            ids = []
            for v in step.outputs:
                if live.root[v.index] != v.index or v.index in live.escaping:
                    ids.append(None)
                    continue
                twin = next((d for d in dying if d.shape == v.shape and d.dtype == v.dtype), None)
                if twin is not None:
                    dying.remove(twin)
                    pick = holder[twin.index]
                    releases[position].remove(pick)
                    in_place.append(v.index)
                elif free.get((v.shape, v.dtype)):
                    pick = free[(v.shape, v.dtype)].pop()
                else:
                    pick = len(buffers)
                    buffers.append((tuple(v.shape), v.dtype))
                holder[v.index] = pick
                releases.setdefault(live.end[v.index], []).append(pick)
                ids.append(pick)
            out_buffers[position] = tuple(ids)
        for buffer in releases.pop(position, ()):
            free.setdefault(buffers[buffer], []).append(buffer)
    return out_buffers, buffers, in_place, holder


def _dying_inputs(group, position: int, live: Liveness, holder: dict) -> list:
    """Buffered inputs of ``group`` needed by nothing after it, when the group may write its
    output over one: a single output computed elementwise (each output element reads only the
    same element of a same-shaped input, so a fused loop reads it before overwriting it), from
    an input no other input of the group is a view of (``x + x.T`` reads elsewhere)."""
    if len(group.outputs) != 1 or any(n.op.structure not in _IN_PLACE for n in group.nodes):
        return []
    roots = [live.root[v.index] for v in dict.fromkeys(group.inputs)]
    return [v for v in dict.fromkeys(group.inputs) if v.index in holder and
            live.end[v.index] == position and roots.count(v.index) == 1]


def fmt_bytes(nbytes: int) -> str:
    """``"1.50 MiB"``, ``"96 B"``: a byte count for the log."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _size(buffers) -> int:
    return sum(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize for shape, dtype in buffers)
