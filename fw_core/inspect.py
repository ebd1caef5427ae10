"""Inspectors: observers plugins register, switched on and off by name.

While none is active the per-op cost is one flag read (``state.inspecting``). A running trace
(fw.compile) raises the same flag, so tracing costs nothing per op either when it is off.
"""

from __future__ import annotations

import contextlib
import os
import sys

from ._state import state
from .errors import PluginError
from .records import Inspector, OpEvent

_registered: dict[str, Inspector] = {}
_active: list[Inspector] = []


def _reset(inspectors: dict[str, Inspector]) -> None:
    """Install the inspectors of a plugin load (called by the plugin manager)."""
    _registered.clear()
    _registered.update(inspectors)
    _active[:] = [i for i in inspectors.values() if i.active]
    publish()


def publish() -> None:
    """Recompute the per-op flag from the active inspectors and the running trace."""
    state.inspectors = tuple(_active)
    state.inspecting = bool(_active) or state.tracer is not None


def registered() -> list[str]:
    """Names of all registered inspectors."""
    return sorted(_registered)


def active() -> list[str]:
    """Names of the inspectors currently called on every op."""
    return [i.name for i in _active]


def activate(name_or_inspector) -> Inspector:
    """Start calling an inspector (a registered name, or an Inspector record) on every op."""
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
    if inspector not in _active:
        _active.append(inspector)
        publish()
    return inspector


def deactivate(name_or_inspector) -> None:
    """Stop calling an inspector."""
    name = getattr(name_or_inspector, "name", name_or_inspector)
    _active[:] = [i for i in _active if i.name != name]
    publish()


@contextlib.contextmanager
def activated(name_or_inspector):
    """``with fw.inspect.activated("fw_debugger.anomaly"): ...``"""
    inspector = activate(name_or_inspector)
    try:
        yield inspector
    finally:
        deactivate(inspector)


def notify_op(op, inputs, attrs, output) -> None:
    tracer = state.tracer
    if tracer is not None:
        tracer.on_op(op, inputs, attrs, output)
    if state.inspectors:
        _notify(OpEvent(op, inputs, output, state.module_path, "forward", attrs))


def notify_backward(node, grad, input_grads) -> None:
    if state.inspectors:
        _notify(OpEvent(node.op, (grad,), input_grads, node.module, "backward", node.attrs))


def _notify(event: OpEvent) -> None:
    # ops an inspector runs to look at tensors are not themselves inspected
    state.inspecting = False
    try:
        for inspector in state.inspectors:
            if inspector.on_op is not None:
                inspector.on_op(event)
    finally:
        state.inspecting = bool(_active) or state.tracer is not None


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
