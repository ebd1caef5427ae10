"""Breakpoints on ops: stop (or call back) when a chosen op runs in a chosen module.

``break_on(op="softmax", module="encoder.*", when=lambda e: e.output.max().item() > 30)``
calls ``callback(event)`` (or drops into pdb with ``event`` in scope) each time a matching op
finishes; ``event.inputs`` and ``event.output`` are the live tensors. The inspector is on only
while a breakpoint exists.
"""

from __future__ import annotations

import fnmatch
import pdb
import sys
from collections.abc import Callable, Iterable

import fw_core as fw
from fw_core.errors import ArgumentError
from fw_core.records import Inspector, OpEvent

NAME = "fw_debugger.breakpoints"
_PHASES = ("forward", "backward", "both")
_points: list[Breakpoint] = []


class Breakpoint:
    """A live breakpoint (returned by :func:`break_on`).

    ``hits`` counts the events that matched. ``remove()`` (or leaving the ``with`` block)
    stops it; the inspector goes off with the last breakpoint.
    """

    def __init__(self, ops, module, when, callback, phase):
        self.ops, self.module, self.when, self.phase = ops, module, when, phase
        self.callback = callback
        self.hits = 0

    def matches(self, event: OpEvent) -> bool:
        if self.phase != "both" and event.phase != self.phase:
            return False
        if self.ops is not None and event.op.name not in self.ops:
            return False
        if self.module is not None and not fnmatch.fnmatchcase(event.module, self.module):
            return False
        return self.when is None or bool(self.when(event))

    def remove(self) -> None:
        """Stop this breakpoint (idempotent)."""
        if self in _points:
            _points.remove(self)
            if not _points:
                fw.inspectors.deactivate(NAME)

    def __enter__(self) -> Breakpoint:
        return self

    def __exit__(self, *exc_info) -> bool:
        self.remove()
        return False

    def __repr__(self) -> str:
        ops = "any op" if self.ops is None else "/".join(sorted(self.ops))
        where = f" in {self.module}" if self.module else ""
        return f"<Breakpoint on {ops}{where} ({self.phase}), {self.hits} hit(s)>"


def break_on(op: str | Iterable[str] | None = None, module: str | None = None,
             when: Callable[[OpEvent], bool] | None = None,
             callback: Callable[[OpEvent], None] | None = None,
             phase: str = "forward") -> Breakpoint:
    """Call ``callback(event)`` (default: pdb) whenever a matching op finishes.

    Args:
        op: an op name ("softmax") or several; None matches every op.
        module: a module path or fnmatch glob ("encoder.*", "*.attn"); "" is outside any
            module; None matches everywhere.
        when: ``fn(event) -> bool`` deciding on the live tensors (``event.output``,
            ``event.inputs``); fw ops run inside it are not themselves inspected.
        callback: ``fn(event)``; None stops in pdb with ``event`` in scope.
        phase: "forward", "backward" (the VJP of a node: ``event.inputs`` is the incoming
            gradient, ``event.output`` the gradients it returns) or "both".

    Returns:
        A :class:`Breakpoint`: ``.remove()`` it, or use it as a context manager.

    Example::

        seen = []
        with fw_debugger.break_on(op="relu", module="encoder.*", callback=seen.append):
            model(x)
    """
    if phase not in _PHASES:
        raise ArgumentError(f"unknown phase {phase!r}", hint=f"use one of {', '.join(_PHASES)}")
    if op is not None:
        op = frozenset([op] if isinstance(op, str) else op)
        unknown = sorted(name for name in op if name not in fw.ops.OPS)
        if unknown:
            raise ArgumentError(f"no op named {', '.join(unknown)}",
                                hint="fw.ops.OPS lists the ops; fw_debugger.describe(name) "
                                     "explains one")
    point = Breakpoint(op, module, when, callback or _stop, phase)
    _points.append(point)
    fw.inspectors.activate(NAME if NAME in fw.inspectors.registered() else INSPECTOR)
    return point


def on_op(event: OpEvent) -> None:
    """Run the callbacks of the breakpoints this event matches."""
    for point in tuple(_points):
        if point.matches(event):
            point.hits += 1
            point.callback(event)


INSPECTOR = Inspector(name=NAME, on_op=on_op)


def _stop(event: OpEvent) -> None:
    inputs = ", ".join(f"{t.dtype.name}{list(t.shape)}" for t in event.inputs
                       if hasattr(t, "shape"))
    print(f"fw_debugger breakpoint: {event.op.name} ({event.phase}) in module "
          f"{event.module or '(outside any module)'}: inputs {inputs}; `event` holds the live "
          "tensors; `up` goes to your code", file=sys.stderr)
    pdb.Pdb().set_trace(sys._getframe())
