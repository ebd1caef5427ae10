"""An optimizer step in a graph: one update node per parameter, after the host work that sets
their scalars.

A traced optimizer step (:func:`fw_core.capture.optimizer_step`) becomes an :class:`Effect` of
kind ``"update"`` followed by one :class:`Node` per update op the optimizer called
(``adam_update``, ``sgd_update`` ...; phase ``"update"``). The nodes read the parameter, its
gradient and the optimizer's state as graph values, so ``explain()`` lists them, the passes see
what they write (``OpDef.effects``: nothing is moved, merged or recomputed across them) and the
memory plan keeps each gradient alive until its update. What changes from step to step is host
work: the step counters, a scheduler's learning rate, SGD's first step. On every run the effect
redoes it (the optimizer runs with its kernels deferred, :func:`fw_core.capture.replay_updates`)
and hands each node that run's scalars.

The effect also checks that the optimizer updates the same parameters, in the same order, with
the arrays the plan holds; when it does not (parameter groups changed after the trace), the run
stops with an error instead of updating the wrong arrays.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import capture
from ..errors import UnsupportedError
from ..ops.registry import OPS
from .ir import Effect, Node


class StateSlot:
    """An optimizer state array as an external of the graph, read at the start of every run
    from the optimizer itself, so that state restored by ``load_state_dict`` (new tensors) is the
    state the plan updates."""

    __slots__ = ("optimizer", "param", "key")

    def __init__(self, optimizer, param, key: str):
        self.optimizer = optimizer
        self.param = param
        self.key = key

    @property
    def _data(self):
        return self.optimizer.state[self.param][self.key]._data

    def __repr__(self) -> str:
        return f"{type(self.optimizer).__name__}.state[...][{self.key!r}]"


def update_steps(tracer, what: str, run: Callable[[], object], optimizer,
                 calls: list[capture.UpdateCall]) -> list | None:
    """The steps replaying a traced optimizer step: the update effect and its nodes, or None
    when a call reads an array the graph cannot name (a gradient replaced by host code
    mid-run), and the step stays one host effect."""
    inputs = []
    for call in calls:
        values = _inputs(tracer, optimizer, call)
        if values is None:
            return None
        inputs.append(values)
    nodes = []
    for call, values in zip(calls, inputs):
        param = values[0]
        out = tracer.graph.value(param.shape, param.dtype, "node")
        node = Node(OPS[call.op], values, dict(call.attrs), out, "", "update")
        out.producer = node
        nodes.append(node)
    reads = tuple(v for values in inputs for v in values if v is not None)
    expected = tuple((call.op, call.param) for call in calls)
    effect = Effect("update", reads, _replay(what, run, expected), what, tuple(nodes))
    return [effect, *nodes]


def _inputs(tracer, optimizer, call) -> tuple | None:
    """The graph values of one call's arrays: the parameter, its gradient, then each state
    array (None where the optimizer keeps none)."""
    p = call.param
    param, grad, *states = call.arrays
    grad_value = tracer.gradient_value(p, grad)
    if grad_value is None:
        return None
    keys = {id(t._data): key for key, t in optimizer.state[p].items() if hasattr(t, "_data")}
    values = [tracer.value_of(p), grad_value]
    for array in states:
        if array is None:
            values.append(None)
        elif id(array) in keys:
            values.append(tracer.state_value(optimizer, p, keys[id(array)], array))
        else:
            return None
    return tuple(values)


def _replay(what: str, run: Callable[[], object], expected: tuple) -> Callable:
    """The effect's code: redo the step's host work, check it updates what the plan holds, and
    return the scalars of each update node for this run."""

    def replay(arrays):
        calls = capture.replay_updates(run)
        if not _same(calls, expected, arrays):
            raise UnsupportedError(
                "the optimizer updates other parameters or state arrays than when the compiled "
                "function was traced", op=what,
                hint="call .retrace() on the compiled function after changing the optimizer's "
                     "parameter groups")
        return tuple(c.attrs for c in calls)

    return replay


def _same(calls: list, expected: tuple, arrays: tuple) -> bool:
    """Whether a replay's calls are the traced ones (op and parameter, in order) on the very
    arrays the plan reads."""
    if len(calls) != len(expected) or any(c.op != op or c.param is not p
                                          for c, (op, p) in zip(calls, expected)):
        return False
    now = [a for c in calls for a in c.arrays if a is not None]
    return len(now) == len(arrays) and all(a is b for a, b in zip(now, arrays))
