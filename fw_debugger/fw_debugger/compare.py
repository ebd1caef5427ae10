"""Where two recorded runs part (:func:`compare`).

It reads :class:`~fw_debugger.record.Trace` objects, live or loaded from disk: a run saved
yesterday can be compared with today's to find the first op whose result changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# -- comparing ------------------------------------------------------------------------------
@dataclass
class Divergence:
    """Where two recorded runs first differ.

    Attributes:
        position: the event's position in both traces (0 = first event kept).
        index_a, index_b: the events' own indices in each run (None past a run's end).
        op, module, phase: the event of run ``a`` (of ``b`` when ``a`` ended first).
        reason: "op" (another op, module or phase ran), "shape" (shapes or dtypes differ),
            "values" (full values differ beyond tolerance), "statistics" (only summaries were
            recorded, and they differ), or "length" (one run has more events).
        output: which output of the op differs (for values and statistics).
        max_abs_diff, max_rel_diff: how much (inf when NaN/Inf appear in one run only).
        detail: the difference in plain words.
    """

    position: int
    index_a: int | None
    index_b: int | None
    op: str
    module: str
    phase: str
    reason: str
    detail: str
    output: int | None = None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None

    def __str__(self) -> str:
        where = f"module '{self.module}'" if self.module else "outside any module"
        size = ("" if self.max_abs_diff is None else
                f" (max abs diff {self.max_abs_diff:.3g}, max rel diff {self.max_rel_diff:.3g})")
        return (f"runs diverge at event {self.position} ({self.phase} {self.op} in {where}): "
                f"{self.detail}{size}")


def compare(a, b, rtol: float = 1e-5, atol: float = 1e-6) -> Divergence | None:
    """The first event where two recorded runs differ, and by how much; None if they agree.

    Events are matched by position. An event differs when another op, module or phase ran,
    when input or output shapes or dtypes differ, or when an output differs beyond
    ``|a - b| <= atol + rtol * |b|`` — element by element when both runs kept full values
    (``record(values="full")``), else on the NaN/Inf counts and min/max/mean of the summaries.

    Example::

        with fw_debugger.record(values="full") as before: model(x)
        ...change something...
        with fw_debugger.record(values="full") as after: model(x)
        print(fw_debugger.compare(before, after))
    """
    events_a, events_b = list(a.events), list(b.events)
    for position, (ea, eb) in enumerate(zip(events_a, events_b)):
        found = _differ(ea, eb, rtol, atol)
        if found is not None:
            return Divergence(position, ea.index, eb.index, ea.op, ea.module, ea.phase, *found)
    if len(events_a) == len(events_b):
        return None
    position = min(len(events_a), len(events_b))
    longer, name = (events_a, "a") if len(events_a) > len(events_b) else (events_b, "b")
    extra = longer[position]
    return Divergence(position, extra.index if name == "a" else None,
                      extra.index if name == "b" else None, extra.op, extra.module, extra.phase,
                      "length", f"run {name} goes on for {len(longer) - position} more events "
                      f"after the other one ends")


def _differ(ea, eb, rtol, atol) -> tuple | None:
    """(reason, detail, output, max abs diff, max rel diff) for two events, or None."""
    for name in ("op", "module", "phase", "kind"):
        if getattr(ea, name) != getattr(eb, name):
            return ("op", f"{name} {getattr(ea, name)!r} in run a, {getattr(eb, name)!r} in run b")
    for name in ("input_shapes", "input_dtypes", "output_shapes", "output_dtypes"):
        if tuple(getattr(ea, name)) != tuple(getattr(eb, name)):
            return ("shape", f"{name.replace('_', ' ')} {getattr(ea, name)} in run a, "
                    f"{getattr(eb, name)} in run b")
    for k in range(len(ea.output_shapes)):
        va = ea.values[k] if ea.values is not None else None
        vb = eb.values[k] if eb.values is not None else None
        if va is not None and vb is not None:
            found = _value_diff(va, vb, rtol, atol)
            kind = "values"
        else:
            sa = ea.summaries[k] if k < len(ea.summaries) else None
            sb = eb.summaries[k] if k < len(eb.summaries) else None
            found = _stats_diff(sa, sb, rtol, atol)
            kind = "statistics"
        if found is not None:
            detail, max_abs, max_rel = found
            return (kind, f"output {k}: {detail}", k, max_abs, max_rel)
    return None


def _value_diff(va, vb, rtol, atol) -> tuple | None:
    a = np.asarray(va, dtype=np.float64)
    b = np.asarray(vb, dtype=np.float64)
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(bad, np.abs(a - b), 0.0)
    diff = np.where(np.isnan(diff), np.inf, diff)
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    max_abs = float(diff.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(bad, diff / np.maximum(np.abs(b), np.finfo(np.float64).tiny), 0.0)
    at = f" at {list(worst)}" if worst else ""
    return (f"{int(bad.sum())} of {a.size} values differ; worst{at}: {a[worst]:.6g} in run a, "
            f"{b[worst]:.6g} in run b", max_abs, float(np.nan_to_num(rel, nan=np.inf).max()))


def _stats_diff(sa, sb, rtol, atol) -> tuple | None:
    if sa is None or sb is None:
        if sa is sb:
            return None
        return ("absent in one run only", None, None)
    for key in ("nan", "posinf", "neginf"):
        if sa[key] != sb[key]:
            return (f"{sa[key]} {key} in run a, {sb[key]} in run b", float("inf"), float("inf"))
    worst = None
    for key in ("min", "max", "mean"):
        x, y = sa[key], sb[key]
        if x is None or y is None or x == y:
            continue
        gap = abs(x - y)
        if gap > atol + rtol * abs(y) and (worst is None or gap > worst[1]):
            worst = (key, gap, gap / max(abs(y), np.finfo(np.float64).tiny), x, y)
    if worst is None:
        return None
    key, gap, rel, x, y = worst
    return (f"{key} {x:.6g} in run a, {y:.6g} in run b (only summaries were recorded: "
            "record(values='full') shows which elements)", gap, rel)
