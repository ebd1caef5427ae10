"""Capture: the one interface through which fw tells a recorder what a run does besides ops.

A *recorder* (fw.compile's tracer is the one fw ships) watches one thread's run so that it can
replay it. Ops reach it through the dispatcher like inspectors do (:meth:`Recorder.on_op`).
Everything else a replay must know about happens at a few sites outside the op layer — a value
read on the host, an optimizer step, a tensor made from Python data, a gradient stored on a
leaf — and each of those sites calls the matching function here. The functions do nothing (or,
for :func:`host_effect`, just run the code) when no recorder is installed, so autograd, Tensor,
optimizers and modules never know which recorder exists or how it replays.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ._state import state

if TYPE_CHECKING:
    from .records import OpDef
    from .tensor import Tensor


class Recorder(Protocol):
    """What a recorder implements; fw calls each method from the site its name describes."""

    def on_op(self, op: OpDef, inputs: tuple, attrs: dict, result: Tensor) -> None:
        """An op finished (called by the dispatcher with the tensor it returns)."""

    def host_read(self, t: Tensor, how: str) -> None:
        """The run reads ``t``'s values on the host (``.item()``, ``.numpy()``...)."""

    def host_effect(self, what: str, run: Callable[[], object], result: object,
                    clears_grads_of: Iterable[Tensor]) -> None:
        """Host code with side effects (an optimizer step) ran, unrecorded, and returned
        ``result``; a replay runs it again."""

    def host_effect_on(self, what: str, tensors: tuple, run: Callable[[tuple], object]
                       ) -> None:
        """Host code ran ``run(arrays)`` on the arrays of ``tensors`` (values of the run, which
        it may overwrite in place); a replay runs it again on those values' arrays."""

    def optimizer_step(self, what: str, run: Callable[[], object], optimizer,
                       calls: list[UpdateCall]) -> None:
        """An optimizer step ran, unrecorded: ``run()`` is its whole host side, and ``calls``
        the update ops it ran (one per parameter, in order). A replay redoes the host side
        (step counters, learning rates) with :func:`replay_updates` and runs the calls as ops."""

    def created(self, t: Tensor) -> None:
        """``t`` was made from Python data (``fw.tensor``): a constant of the run."""

    def host_value(self, t: Tensor, make: Callable[[], object], what: str) -> None:
        """``t`` was drawn on the host by ``make()``: a replay draws it again."""

    def kernel_writes(self, tensors: tuple) -> None:
        """The next op's kernel writes into ``tensors`` (its declared ``effects``)."""

    def in_place_write(self, t: Tensor) -> None:
        """Something wrote into ``t``'s storage outside an op."""

    def module_called(self, module) -> None:
        """A module's ``__call__`` started (its training flag is part of what was run)."""

    def backward(self, running: bool) -> None:
        """A backward pass starts (``running``) or ends."""

    def grad_read(self, leaf: Tensor) -> None:
        """Backward is about to add to ``leaf``'s existing ``.grad``."""

    def grad_set(self, leaf: Tensor) -> None:
        """Backward stored a new ``leaf.grad``."""

    def note(self, what: str) -> None:
        """Something the user may want to know about how the run was recorded."""

    def cannot_replay(self, what: str, hint: str) -> None:
        """The run does something a replay cannot reproduce; ``hint`` says what to do."""


def recorder() -> Recorder | None:
    """The recorder watching this thread's run, or None."""
    return state.recorder


@contextlib.contextmanager
def recording(new: Recorder):
    """Install ``new`` as this thread's recorder for the block (one at a time per thread)."""
    from .inspectors import publish

    if state.recorder is not None:
        raise RuntimeError("a recorder is already capturing this thread's run")
    state.recorder = new
    publish()
    try:
        yield new
    finally:
        state.recorder = None
        publish()


@contextlib.contextmanager
def paused():
    """Run the block unrecorded (host code a recorder replays as a whole, a step that runs
    eagerly); the recorder, if any, is back afterwards."""
    previous, state.recorder = state.recorder, None
    try:
        yield previous
    finally:
        state.recorder = previous


def host_read(t: Tensor, how: str) -> None:
    r = state.recorder
    if r is not None:
        r.host_read(t, how)


def host_effect(what: str, run: Callable[[], object],
                clears_grads_of: Iterable[Tensor] = ()) -> object:
    """``run()``; under a recorder, also a step its replays run again (``clears_grads_of``:
    the leaves whose ``.grad`` it resets, so a replay does not depend on them)."""
    r = state.recorder
    if r is None:
        return run()
    with paused():
        result = run()
    r.host_effect(what, run, result, clears_grads_of)
    return result


def host_effect_on(what: str, tensors, run: Callable[[tuple], object]) -> None:
    """``run(arrays)`` with the raw arrays of ``tensors``, which it may overwrite in place (a
    data-parallel gradient all-reduce over backward's gradients); under a recorder, also a step
    of the plan, in this order, that each replay runs on the arrays of those tensors' values."""
    tensors = tuple(tensors)
    arrays = tuple(t._data for t in tensors)
    r = state.recorder
    if r is None:
        run(arrays)
        return
    with paused():
        run(arrays)
    r.host_effect_on(what, tensors, run)


class UpdateCall(NamedTuple):
    """One optimizer update op as an optimizer called it: the op's name, the parameter, the raw
    arrays in the op's order (None where the optimizer keeps no such state) and its scalars."""

    op: str
    param: Tensor
    arrays: tuple
    attrs: dict


def optimizer_step(what: str, run: Callable[[], object], optimizer) -> None:
    """``run()``, an optimizer's step (``optimizer``'s host work and one update op per
    parameter through :func:`update`); under a recorder, also a step its replays repeat."""
    r = state.recorder
    if r is None:
        run()
        return
    calls: list[UpdateCall] = []
    with paused(), _collecting(calls, defer=False):
        run()
    r.optimizer_step(what, run, optimizer, calls)


def replay_updates(run: Callable[[], object]) -> list[UpdateCall]:
    """Run an optimizer step's host work only: the update ops it calls are collected, not run,
    and returned, for a replay whose plan runs them with these scalars."""
    calls: list[UpdateCall] = []
    with _collecting(calls, defer=True):
        run()
    return calls


def update(op: str, p: Tensor, arrays: tuple, attrs: dict) -> bool:
    """An optimizer is about to run update op ``op`` on parameter ``p`` (only called while
    :func:`optimizer_step` or :func:`replay_updates` collects): return whether the kernel
    runs later instead of now (a replay)."""
    state.update_calls.append(UpdateCall(op, p, arrays, attrs))
    return state.defer_updates


@contextlib.contextmanager
def _collecting(calls: list, defer: bool):
    previous = state.update_calls, state.defer_updates
    state.update_calls, state.defer_updates = calls, defer
    try:
        yield
    finally:
        state.update_calls, state.defer_updates = previous


def created(t: Tensor) -> None:
    r = state.recorder
    if r is not None:
        r.created(t)


def host_value(t: Tensor, make: Callable[[], object], what: str) -> None:
    r = state.recorder
    if r is not None:
        r.host_value(t, make, what)


def kernel_writes(*tensors: Tensor) -> None:
    r = state.recorder
    if r is not None:
        r.kernel_writes(tensors)


def in_place_write(t: Tensor) -> None:
    r = state.recorder
    if r is not None:
        r.in_place_write(t)


def module_called(module) -> None:
    r = state.recorder
    if r is not None:
        r.module_called(module)


@contextlib.contextmanager
def backward():
    """The block is a backward pass."""
    r = state.recorder
    if r is None:
        yield
        return
    r.backward(True)
    try:
        yield
    finally:
        r.backward(False)


def grad_read(leaf: Tensor) -> None:
    r = state.recorder
    if r is not None:
        r.grad_read(leaf)


def grad_set(leaf: Tensor) -> None:
    r = state.recorder
    if r is not None:
        r.grad_set(leaf)


def note(what: str) -> None:
    r = state.recorder
    if r is not None:
        r.note(what)


def cannot_replay(what: str, hint: str) -> None:
    r = state.recorder
    if r is not None:
        r.cannot_replay(what, hint)
