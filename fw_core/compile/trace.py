"""Tracing: one eager run of a function, recorded into the Graph IR as it happens.

The tracer is this thread's recorder (:mod:`fw_core.capture`) while it runs: the dispatcher tells
it about every op it finishes (the same flag that switches inspectors on, so nothing is paid per
op when no trace runs), and the sites outside the op layer tell it the rest. The run itself is a
normal eager run, so its results are always right; the graph is what later calls replay.

What a trace cannot replay is reported as a *break* with the reason and the user's source
line, and the function then stays eager for that signature:
- reading values on the host mid-graph (``.item()``, ``.numpy()``, ``bool(t)``, ``tolist``),
  which is how data-dependent Python branches look from here;
- in-place writes the graph cannot express (``x[i] = v``, ``x.add_(y)``), except those that
  replay on their own (an optimizer step, a batch-norm kernel updating its running statistics);
- outputs that need autograd after the call (compile the whole training step, or call the
  compiled function under ``fw.no_grad()``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from .._state import state
from ..capture import recording
from ..inspectors import source_line
from ..memory import track
from ..ops.promotion import kernel_dtypes
from ..pytree import flatten as _flatten
from ..pytree import unflatten as _unflatten
from ..tensor import Tensor
from .ir import Effect, Graph, Node, Value
from .updates import StateSlot, update_steps

_SCALARS = (int, float, bool)


class Tracer:
    """Records one run: the tracing thread's :class:`~fw_core.capture.Recorder` for its
    duration (see :func:`trace`), so ops other threads run meanwhile are not part of it."""

    def __init__(self):
        self.graph = Graph()
        self._values = _ArrayMap()  # raw array -> its value
        self._externals: dict[int, Value] = {}  # id(tensor) -> external value
        self._created = _ArrayMap()  # arrays made from Python data in the run
        self._poisoned = _ArrayMap()  # arrays a replay cannot reproduce -> why
        self._arguments: set[int] = set()  # ids of the tensors passed as arguments
        self._kernel_written = _ArrayMap()  # arrays an op's kernel writes (they replay)
        self.breaks: list[str] = []
        self.modules: dict[int, tuple] = {}  # id(module) -> (module, training)
        self.grad_state: dict[int, tuple] = {}  # id(leaf) -> (leaf, had a .grad at start)
        self._cleared: set[int] = set()  # leaves whose .grad an effect of the run resets
        self.backward_ran = False
        self.phase = "forward"
        self.device = None

    # -- values -------------------------------------------------------------------------------
    def bind_input(self, position: int, tensor: Tensor) -> Value:
        value = self.graph.value(tensor._data.shape, tensor._data.dtype, "input", position)
        self._define(tensor._data, value)
        self._arguments.add(id(tensor))
        self.graph.inputs.append(value)
        self._note_device(tensor)
        return value

    def _define(self, array, value: Value) -> None:
        # the array itself is not kept, so a trace holds no more than the eager run: fusion
        # measures on stand-ins of the traced shapes and strides
        self._values.put(array, value)
        if not array.flags.c_contiguous:
            value.strides = array.strides

    def _note_device(self, tensor) -> None:
        if self.device is None:
            self.device = tensor._device
        elif tensor._device is not self.device:
            self.cannot_replay(f"tensors on two devices ({self.device} and {tensor._device}) "
                               "in one graph", "keep a compiled function on one device")

    def value_of(self, t) -> Value:
        """The graph value of a tensor an op read (an external or constant if new)."""
        array = t._data
        value = self._values.get(array)
        if value is not None:
            return value
        why = self._poisoned.get(array)
        if why is not None:
            self.cannot_replay(f"a value computed by {why} is used by a later op",
                               "call it outside the compiled function")
        self._note_device(t)
        if self._created.get(array):
            value = self.graph.value(array.shape, array.dtype, "const", array)
        else:
            value = self._externals.get(id(t))
            if value is None or value.payload._data is not array:
                value = self.graph.value(array.shape, array.dtype, "external", t)
                self._externals[id(t)] = value
        self._define(array, value)
        return value

    def created(self, t: Tensor) -> None:
        """``t`` was made from Python data during the run: a constant of the graph."""
        self._created.put(t._data, True)

    def host_value(self, t: Tensor, make: Callable[[], object], what: str) -> None:
        """``t`` is drawn afresh on every run by ``make()`` (random numbers, dropout masks)."""
        value = self.graph.value(t._data.shape, t._data.dtype, "host", make)
        self._define(t._data, value)
        self.graph.log.append(f"trace: {what} is drawn again on every run")

    def note(self, what: str) -> None:
        """A line for ``explain()`` on how part of the run was traced (said once)."""
        line = f"trace: {what}"
        if line not in self.graph.log:
            self.graph.log.append(line)

    # -- ops and effects ----------------------------------------------------------------------
    def on_op(self, op, inputs: tuple, attrs: dict, result: Tensor) -> None:
        values = tuple(self._input(t) for t in inputs)
        for i in op.effects:
            if i < len(values) and values[i].__class__ is Value and values[i].source == "const":
                self.cannot_replay(f"{op.name} writes into a tensor made inside the function "
                                   "(a constant of the plan, shared by every run)",
                                   "make it outside the compiled function and pass it in, or "
                                   "keep it as a module buffer")
        values = self._casts(op, inputs, values)
        out = self.graph.value(result._data.shape, result._data.dtype, "node")
        node = Node(op, values, dict(attrs), out, state.module_path, self.phase)
        out.producer = node
        self.graph.steps.append(node)
        self._define(result._data, out)

    def _input(self, t):
        if t is None or t.__class__ in _SCALARS:
            return t
        return self.value_of(t)

    def _casts(self, op, inputs, values):
        """Cast nodes for the dtype conversions the dispatcher does before a kernel runs."""
        targets = kernel_dtypes(op, inputs)
        if targets is None:
            return values
        cast = _cast_op()
        fixed = []
        for v, target in zip(values, targets):
            if v.__class__ is Value and target is not None and v.dtype != target:
                out = self.graph.value(v.shape, target, "node")
                node = Node(cast, (v,), {"dtype": target, "source": v.dtype}, out,
                            state.module_path, self.phase)
                out.producer = node
                self.graph.steps.append(node)
                v = out
            fixed.append(v)
        return tuple(fixed)

    def host_effect(self, what: str, run: Callable[[], object], result: object,
                    clears_grads_of=()) -> None:
        """Host code with side effects ran; every replay runs it again, in this order (an
        optimizer step, zero_grad, gradient clipping). Its result is a Python-side value: a
        later op reading it breaks the trace. ``clears_grads_of``: the leaves whose ``.grad``
        it resets (zero_grad), so the plan does not depend on their ``.grad`` at the start."""
        self._cleared.update(id(t) for t in clears_grads_of)
        self.graph.steps.append(Effect("call", (), lambda arrays: run(), what))
        if isinstance(result, Tensor):
            self._poisoned.put(result._data, what)

    def host_effect_on(self, what: str, tensors: tuple, run: Callable[[tuple], object]
                       ) -> None:
        """Host code ran on the arrays of ``tensors``, possibly writing into them; every replay
        runs it again, in this order, on the arrays their values have then."""
        reads = tuple(self.value_of(t) for t in tensors)
        self.graph.steps.append(Effect("call", reads, run, what))

    def optimizer_step(self, what: str, run: Callable[[], object], optimizer,
                       calls: list) -> None:
        """An optimizer step ran: its update ops become nodes after one effect that redoes its
        host work on every replay (:mod:`.updates`), or, when that cannot be, the whole step is
        one host effect."""
        steps = update_steps(self, what, run, optimizer, calls) if calls else None
        if steps is None:
            self.host_effect(what, run, None)
        else:
            self.graph.steps.extend(steps)

    def gradient_value(self, leaf: Tensor, array) -> Value | None:
        """The value of the gradient array an optimizer step read from ``leaf``: one this run
        made, or the ``.grad`` the leaf had when the run started; None when it is neither (host
        code gave the leaf a new gradient mid-run)."""
        value = self._values.get(array)
        if value is not None:
            return value
        grad = leaf.grad
        if grad is None or grad._data is not array or id(leaf) in self._cleared:
            return None
        self.grad_read(leaf)
        return self._values.get(array)

    def state_value(self, optimizer, param: Tensor, key: str, array) -> Value:
        """The value of ``optimizer.state[param][key]``, whose array is ``array`` now: an
        external read from the optimizer when each run starts."""
        value = self._values.get(array)
        if value is None:
            value = self.graph.value(array.shape, array.dtype, "external",
                                     StateSlot(optimizer, param, key))
            self._define(array, value)
        return value

    def backward(self, running: bool) -> None:
        self.backward_ran = self.backward_ran or running
        self.phase = "backward" if running else "forward"

    def grad_set(self, leaf: Tensor) -> None:
        """Backward gave ``leaf`` its ``.grad``: replay does the same with the plan's array."""
        if id(leaf) in self._arguments:
            self.cannot_replay("backward computes the gradient of an argument (a new tensor "
                               "on every call, whose .grad a replay cannot reach)",
                               "make it a parameter (a module's or the optimizer's), or "
                               "compute it with fw.autograd.grad and return it")
        value = self.value_of(leaf.grad)
        if id(leaf) not in self._cleared:
            self.grad_state.setdefault(id(leaf), (leaf, False))
        device = leaf._device

        def give(arrays, leaf=leaf, device=device):
            leaf.grad = track(Tensor._wrap(arrays[0], device), "gradient")

        self.graph.steps.append(Effect("set_grad", (value,), give,
                                       f".grad of a {leaf.dtype.name}{list(leaf.shape)} leaf",
                                       leaf))

    def grad_read(self, leaf: Tensor) -> None:
        """Backward adds to an existing ``leaf.grad``: read it when the plan starts."""
        grad = leaf.grad
        if self._values.get(grad._data) is None:
            self.grad_state.setdefault(id(leaf), (leaf, True))
            value = self.graph.value(grad._data.shape, grad._data.dtype, "grad", leaf)
            self._define(grad._data, value)

    def kernel_writes(self, tensors: tuple) -> None:
        """The next op's kernel writes into these tensors (batch-norm running statistics):
        their version bumps are not untraced writes, since a replay runs the kernel again."""
        for t in tensors:
            self._kernel_written.put(t._data, True)

    def in_place_write(self, t: Tensor) -> None:
        """An in-place write into ``t`` happened outside an op."""
        if self._kernel_written.get(t._data):
            return
        self.cannot_replay("an in-place write (x[...] = v, x.add_(y), an in-place activation) "
                           f"into a tensor of shape {tuple(t.shape)}",
                           "use the out-of-place form (x = x + y) inside compiled functions")

    def host_read(self, t: Tensor, how: str) -> None:
        """The run reads ``t``'s values on the host (``.item()``, ``bool(t)``...)."""
        value = self._values.get(t._data)
        if value is None or value.source == "const":
            return
        self.cannot_replay(f"{how} reads a value on the host in the middle of the graph (a "
                           "data-dependent branch or a conversion)",
                           "return the tensor and read it after the call, or use fw.where "
                           "instead of if")

    def module_called(self, module) -> None:
        self.modules.setdefault(id(module), (module, module.training))

    def cannot_replay(self, what: str, hint: str) -> None:
        where = source_line()
        self.breaks.append(f"{what} at {where}: {hint}" if where else f"{what}: {hint}")

    # -- the result ---------------------------------------------------------------------------
    def set_outputs(self, result) -> None:
        """Record what the function returned and how to rebuild it from arrays."""
        leaves: list = []
        structure = _flatten(result, leaves)
        outputs = []
        for t in leaves:
            if t._node is not None and state.grad_enabled and not self.backward_ran:
                self.cannot_replay("the result needs autograd after the call (it has a grad_fn)",
                                   "compile the whole training step (forward, backward and "
                                   "optimizer.step()), or call the compiled function under "
                                   "fw.no_grad()")
            outputs.append(self.value_of(t))
        self.graph.outputs = outputs
        device = self.device
        templates = [(t._op, t._module) for t in leaves]

        def rebuild(arrays):
            tensors = iter([Tensor._wrap(a, device, op, module)
                            for a, (op, module) in zip(arrays, templates)])
            return _unflatten(structure, tensors)

        self.graph.rebuild = rebuild


def trace(fn: Callable, args: tuple) -> tuple[Tracer, object]:
    """Run ``fn(*args)`` eagerly in this thread while recording it (ops other threads run
    meanwhile are not recorded). Returns the tracer and fn's result."""
    tracer = Tracer()
    for position, a in enumerate(args):
        if isinstance(a, Tensor):
            tracer.bind_input(position, a)
    with recording(tracer):
        result = fn(*args)
        tracer.set_outputs(result)
    return tracer, result


# -- helpers --------------------------------------------------------------------------------------
def _cast_op():
    from ..ops.creation import CAST

    return CAST


class _ArrayMap:
    """A map keyed by raw array identity that does not keep the arrays alive: an entry whose
    array died is stale (its id may now belong to another array) and reads as absent."""

    def __init__(self):
        self._entries: dict[int, tuple] = {}

    def put(self, array, payload) -> None:
        self._entries[id(array)] = (weakref.ref(array), payload)

    def get(self, array):
        entry = self._entries.get(id(array))
        if entry is None or entry[0]() is not array:
            return None
        return entry[1]
