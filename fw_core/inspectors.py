"""Inspectors: observers plugins register, switched on and off by name, per thread.

While none is active the per-op cost is one flag read (``state.observed``). A running recorder
(fw.compile's tracer, see :mod:`fw_core.capture`) raises the same flag and is told about every op
here too, so recording costs nothing per op either when it is off.
Activation belongs to the thread that asks for it (as grad mode does): an inspector switched on
in one thread sees that thread's ops and backward passes only. The registry of inspectors is
shared by all threads.
"""

from __future__ import annotations

import contextlib
import os
import sys

from . import _state
from ._state import state
from .errors import PluginError
from .records import Inspector, OpEvent

_registered: dict[str, Inspector] = {}


def _reset(inspectors: dict[str, Inspector]) -> None:
    """Install the inspectors of a plugin load (called by the plugin manager): those
    registered ``active`` are on in the calling thread and in every thread that starts using
    fw afterwards; other threads that already ran ops keep the activation they had."""
    global _registered
    _registered = dict(inspectors)
    _state.initial_inspectors = tuple(i for i in inspectors.values() if i.active)
    state.inspectors = _state.initial_inspectors
    publish()


def publish() -> None:
    """Recompute this thread's per-op flag from its active inspectors and its recorder."""
    state.observed = bool(state.inspectors) or state.recorder is not None


def registered() -> list[str]:
    """Names of all registered inspectors."""
    return sorted(_registered)


def active() -> list[str]:
    """Names of the inspectors called on every op of this thread."""
    return [i.name for i in state.inspectors]


def activate(name_or_inspector) -> Inspector:
    """Start calling an inspector (a registered name, or an Inspector record) on every op of
    this thread."""
    if isinstance(name_or_inspector, Inspector):
        inspector = name_or_inspector
    else:
        try:
            inspector = _registered[name_or_inspector]
        except KeyError:
            raise PluginError(
                f"no inspector named {name_or_inspector!r}",
                hint=f"registered inspectors: {', '.join(registered()) or 'none'}; is the plugin "
                "that provides it installed and loaded? (`fw plugins`)",
            ) from None
    if inspector not in state.inspectors:
        state.inspectors = (*state.inspectors, inspector)
        publish()
    return inspector


def deactivate(name_or_inspector) -> None:
    """Stop calling an inspector on this thread's ops."""
    name = getattr(name_or_inspector, "name", name_or_inspector)
    state.inspectors = tuple(i for i in state.inspectors if i.name != name)
    publish()


@contextlib.contextmanager
def activated(name_or_inspector):
    """``with fw.inspectors.activated("fw_debugger.anomaly"): ...``"""
    inspector = activate(name_or_inspector)
    try:
        yield inspector
    finally:
        deactivate(inspector)


def notify_op(op, inputs, attrs, output) -> None:
    """An op finished (the dispatcher calls this only while ``state.observed``)."""
    recorder = state.recorder
    if recorder is not None:
        recorder.on_op(op, inputs, attrs, output)
    if state.inspectors:
        _notify(OpEvent(op, inputs, output, state.module_path, "forward", attrs, output._node,
                        state.vjp_node is not None, state.in_backward))


def notify_backward(node, grad, input_grads) -> None:
    """``node``'s gradient rule turned ``grad`` into ``input_grads``."""
    if state.inspectors:
        _notify(OpEvent(node.op, (grad,), input_grads, node.module, "backward", node.attrs, node,
                        True, True))


def _notify(event: OpEvent) -> None:
    # ops an inspector runs to look at tensors are not themselves inspected
    state.observed = False
    try:
        for inspector in state.inspectors:
            if inspector.on_op is not None:
                inspector.on_op(event)
    finally:
        publish()


_FW_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep


def source_line(skip: tuple[str, ...] = ()) -> str:
    """``file:line`` of the innermost caller outside fw_core (and outside the folders in
    ``skip``, e.g. a plugin's own): the user's line that is running, for errors and reports
    that point at the user's code rather than at fw's."""
    roots = (_FW_ROOT, *skip)
    frame = sys._getframe(1)
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(roots):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
