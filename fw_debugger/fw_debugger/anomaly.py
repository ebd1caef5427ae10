"""Anomaly detection: the first op that *produced* a NaN or an Inf, forward or backward.

An op produced a NaN when its output has one and none of its inputs did; it produced an Inf
when its output has one and all its inputs (tensors, scalars, attributes) were finite. Ops that
merely carry a NaN/Inf along are not reported, and neither is an intentional -inf: a mask made
with ``full``/``masked_fill``/``where`` takes the -inf from an argument, and an op that adds it
to scores received it. The report names the op, the module path, the user's source line, the
shapes and dtypes, health statistics (:func:`~fw_debugger.stats.health_stats`) and a hint built
from the op's explanation anchor.

Backward events carry the op and module of the node but not the line where its forward ran, so
while the detector checks backward it remembers the user's line of every recorded forward op
(keyed by the node, bounded) and the backward report quotes it.
"""

from __future__ import annotations

import contextlib
import math
import os
import pdb
import sys
import warnings
from dataclasses import dataclass, field

import fw_core as fw
from fw_core.errors import ArgumentError, FwError
from fw_core.ops import scalar
from fw_core.records import Inspector, OpEvent, Structure

from .stats import format_stats, health_stats

NAME = "fw_debugger.anomaly"
_MODES = ("raise", "warn", "pdb")
_TOP = "(top level: the root module, or no module)"
_MAX_LINES = 1 << 16  # forward lines remembered for backward reports (oldest dropped first)


class AnomalyError(FwError, FloatingPointError):
    """An op produced a NaN or an Inf.

    Besides FwError's ``op``, ``module``, ``inputs`` and ``hint``: ``phase`` ("forward" or
    "backward"), ``line`` (the user's ``file:line``), ``kind`` ("NaN" or "Inf") and ``stats``
    (``{"inputs": [...], "outputs": [...]}`` of :func:`health_stats` dicts, None for non-tensors).
    """

    def __init__(self, message, *, phase, line, kind, stats, outputs, **details):
        super().__init__(message, **details)
        self.phase, self.line, self.kind, self.stats = phase, line, kind, stats
        self.outputs = outputs

    def __str__(self) -> str:
        rows = [("in module", self.module or _TOP), ("at line", self.line), ("inputs", self.inputs),
                ("outputs", self.outputs), ("fix", self.hint)]
        return "\n".join([f"{self.op}: {self.message}"] +
                         [f"  {label + ':':<11}{text}" for label, text in rows if text])


@dataclass
class _Settings:
    mode: str = "raise"
    forward: bool = True
    backward: bool = True
    every: int = 1
    reports: list = field(default_factory=list)


_stack: list[_Settings] = []  # innermost detect_anomaly() last; the default when empty
_DEFAULT = _Settings()
_tick = [0]
_lines: dict[int, tuple] = {}  # id(node) -> (op, user line) of recorded forward ops


class detect_anomaly(contextlib.ContextDecorator):
    """Check every op (forward outputs and backward gradients) for a NaN/Inf it produced.

    Args:
        mode: "raise" an :class:`AnomalyError`, "warn" (a RuntimeWarning, and go on), or
            "pdb" (print the report and stop in the debugger, with ``event`` in scope).
        forward: check op outputs.
        backward: check the gradients each op's VJP returns.
        every: check only every ``every``-th op (cheaper; the report then names the first op
            seen with the NaN/Inf, which may be later than the one that made it).

    ``with detect_anomaly(mode="warn") as found:`` gives ``found.reports``, the AnomalyErrors
    found. Usable as a decorator. ``fw.context("debug")`` and ``fit(debug=True)`` switch the
    same inspector on with the defaults.

    Example::

        with fw_debugger.detect_anomaly():
            loss = model(x)        # AnomalyError: log: produced -Inf ... at line: model.py:12
            loss.backward()
    """

    def __init__(self, mode: str = "raise", forward: bool = True, backward: bool = True,
                 every: int = 1):
        if mode not in _MODES:
            raise ArgumentError(f"unknown mode {mode!r}", hint=f"use one of {', '.join(_MODES)}")
        if not isinstance(every, int) or every < 1:
            raise ArgumentError(f"every must be a positive int, got {every!r}",
                                hint="every=1 checks every op; every=10 one op in ten")
        self.reports: list[AnomalyError] = []
        self._options = (mode, forward, backward, every)
        self._entered: list[tuple[_Settings, bool]] = []

    def __enter__(self) -> detect_anomaly:
        settings = _Settings(*self._options, reports=self.reports)
        _stack.append(settings)
        self._entered.append((settings, _switch_on()))
        return self

    def __exit__(self, *exc_info) -> bool:
        settings, switched_on = self._entered.pop()
        _stack.remove(settings)
        if switched_on:
            fw.inspectors.deactivate(NAME)
            _lines.clear()
        return False


def _switch_on() -> bool:
    """Activate the anomaly inspector (the plugin's when registered); True if this did it."""
    if NAME in fw.inspectors.active():
        return False
    fw.inspectors.activate(NAME if NAME in fw.inspectors.registered() else INSPECTOR)
    return True


# -- the inspector ---------------------------------------------------------------------------
def on_op(event: OpEvent) -> None:
    """Check one op event against the innermost settings."""
    settings = _stack[-1] if _stack else _DEFAULT
    if event.phase == "forward":
        if settings.backward:
            _remember_line(event.output)
        if not settings.forward:
            return
    elif not settings.backward:
        return
    if settings.every > 1:
        _tick[0] += 1
        if _tick[0] % settings.every:
            return
    outputs = event.output if isinstance(event.output, tuple) else (event.output,)
    if all(_finite(t) for t in outputs):
        return
    report = _diagnose(event, outputs, settings)
    if report is not None:
        if settings is not _DEFAULT:  # the default (fw.context("debug")) only raises
            settings.reports.append(report)
        _act(report, settings.mode, event)


INSPECTOR = Inspector(name=NAME, on_op=on_op)


def _finite(value) -> bool:
    data = getattr(value, "_data", None)
    if data is None:
        return not isinstance(value, float) or math.isfinite(value)
    if data.dtype.kind != "f":
        return True
    total = data.sum()  # finite sum => every element finite; an overflowing sum is re-checked
    return bool(total - total == 0) or bool(value._device.xp.isfinite(data).all())


def _has_nan(value) -> bool:
    data = getattr(value, "_data", None)
    if data is None:
        return isinstance(value, float) and math.isnan(value)
    return data.dtype.kind == "f" and bool(value._device.xp.isnan(data).any())


def _attr_values(attrs: dict) -> list:
    found = []
    for v in attrs.values():
        found.extend(v if isinstance(v, (list, tuple)) else (v,))
    return [v for v in found if isinstance(v, float)]


def _diagnose(event: OpEvent, outputs: tuple, settings: _Settings) -> AnomalyError | None:
    """The report if this op produced the NaN/Inf (or first shows one nobody reported)."""
    backward = event.phase == "backward"
    if not backward and event.in_vjp:
        return None  # an op of some VJP: the backward event of that node reports it
    sources = list(event.inputs) + _attr_values(event.attrs)
    out_nan = any(_has_nan(t) for t in outputs)
    in_nan = any(_has_nan(t) for t in sources)
    if out_nan and not in_nan:
        kind, note = "NaN", ("the incoming gradient had none" if backward
                             else "its inputs had none")
    elif not out_nan and all(_finite(t) for t in sources):
        kind, note = "Inf", ("the incoming gradient was finite" if backward
                             else "its inputs were finite")
    elif out_nan and (settings.mode == "raise" or not settings.reports):
        kind, note = "NaN", None
    else:
        return None  # propagation, or an intentional -inf carried along
    node = event.node if backward else None
    line = _forward_line(node) if backward else user_line()
    what = "gradient" if backward else "output"
    if note is None:
        message = ("got NaN in its inputs from outside the checked ops (the data, a parameter, "
                   "or an op between two sampled checks): the first NaN seen")
        fix = ("check the inputs and parameters for NaN (fit's check_finite does for the data); "
               "with every > 1, rerun with every=1 to find the op that made it")
    else:
        message = (f"{'backward ' if backward else ''}produced {_kinds(outputs)} in its {what} "
                   f"({note})")
        fix = hint(event, node)
    stats = {"inputs": [_stats(t) for t in event.inputs], "outputs": [_stats(t) for t in outputs]}
    in_label = "incoming gradient" if backward else "input"
    return AnomalyError(
        message, op=event.op.name, module=event.module,
        inputs=_describe(in_label, event.inputs, stats["inputs"]),
        hint=fix, phase=event.phase, line=line, kind=kind, stats=stats,
        outputs=_describe("gradient for input" if backward else "output", outputs,
                          stats["outputs"]))


def _act(report: AnomalyError, mode: str, event: OpEvent) -> None:
    if mode == "raise":
        raise report
    if mode == "warn":
        filename, _, lineno = report.line.rpartition(":")
        warnings.warn_explicit(str(report), RuntimeWarning, filename or "<unknown>",
                               int(lineno) if lineno.isdigit() else 0)
        return
    print(report, file=sys.stderr)
    pdb.Pdb().set_trace(sys._getframe())  # `event` holds the live tensors


def _kinds(outputs) -> str:
    stats = [s for s in map(_stats, outputs) if s is not None]
    kinds = [label for key, label in (("nan", "NaN"), ("posinf", "+Inf"), ("neginf", "-Inf"))
             if any(s[key] for s in stats)]
    return "/".join(kinds)


def _stats(value):
    return health_stats(value) if hasattr(value, "_data") else None


def _describe(label: str, values, stats) -> str:
    parts = []
    for i, (v, s) in enumerate(zip(values, stats)):
        if s is None:
            parts.append(f"{label} {i}: {v!r}")
        else:
            parts.append(f"{label} {i}: {v.dtype.name}{list(v.shape)}: {format_stats(s)}")
    return "\n             ".join(parts)


# -- where: the user's line, forward and backward ------------------------------------------
_OWN_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_line() -> str:
    """``file:line`` of the innermost frame outside fw_core and fw_debugger."""
    return fw.inspectors.source_line(skip=(_OWN_FOLDER,))


def _remember_line(output) -> None:
    node = getattr(output, "_node", None)
    if node is None:
        return
    if len(_lines) >= _MAX_LINES:
        del _lines[next(iter(_lines))]
    _lines[id(node)] = (node.op, user_line())


def _forward_line(node) -> str:
    # ids are reused once a node is freed: the op must match too
    found = _lines.get(id(node)) if node is not None else None
    return found[1] if found is not None and found[0] is node.op else ""


# -- why: the op's anchor, made specific by what arrived -----------------------------------
_OVERFLOWS = 80.0  # |input| above which exp-like growth overflows float32 (e^88 is its limit)


def hint(event: OpEvent, node=None) -> str:
    """A fix for this anomaly: the op's anchor, sharpened by the inputs and their producers.

    Only the contracts are read: a pole (``log``, ``div``, ``rsqrt``) hit by an input that is
    0, an input outside the domain, or inputs large enough to overflow; the producer of the
    offending input says why it is 0 (a saturating op underflowed, a reduction of a constant
    feature)."""
    op, says, kind = event.op.name, event.op.anchor.says, event.op.anchor.kind
    if event.phase == "backward":
        return (f"the gradient of {op} blew up although the gradient arriving from the loss was "
                f"finite: {says}" + (". Keep its input away from the pole (add an epsilon, "
                                    "e.g. x + 1e-12)" if kind == "pole" else ""))
    inputs = [t for t in event.inputs if hasattr(t, "_data")]
    zero = next((t for t in reversed(inputs) if _stats(t)["zeros"]), None)
    if zero is not None and kind in ("pole", "domain", "kink"):
        position = next(k for k, t in enumerate(event.inputs) if t is zero)
        return (f"{op} met 0 at {_stats(zero)['zeros']} position(s) of its input {position} "
                f"({_producer(zero)}){_why_zero(zero)}. Add an epsilon (x + 1e-5) or clamp it "
                f"(x.clamp(min=1e-12)); {says}")
    low = [t for t in inputs if _stats(t)["min"] is not None and _stats(t)["min"] < 0]
    if low and kind in ("pole", "domain"):
        return f"{op} of negative values ({_producer(low[0])}) is NaN: {says}"
    top = max((_stats(t)["max"] for t in inputs if _stats(t)["max"] is not None), default=None)
    if top is not None and top > _OVERFLOWS and _exponential(event):
        return (f"{op} overflowed (inputs up to {top:.4g}): subtract the max first (as "
                f"softmax/logsumexp do) or clamp the input; {says}")
    return says


def _exponential(event: OpEvent) -> bool:
    """Whether the op's formula (its contract's ``expr``) grows like exp: large inputs overflow."""
    expr = scalar.formula(event.op, event.attrs, len(event.inputs))
    return expr is not None and scalar.calls(expr, "exp", "expm1")


def _why_zero(t) -> str:
    """Why the producer of ``t`` gave exact zeros, from its contract ("" when it says nothing)."""
    made_by = t.op and fw.ops.get(t.op)
    if made_by is None:
        return ""
    if made_by.anchor.kind in ("saturation", "temperature"):
        return f", a {t.op} that underflowed"
    if made_by.structure is Structure.REDUCTION:
        return f", the {t.op} of a feature that does not vary (zero variance: a constant column?)"
    return ""


def _producer(t) -> str:
    if t.op is None:
        return "a tensor made from data"
    return f"made by {t.op} in module {t.module or _TOP}"
