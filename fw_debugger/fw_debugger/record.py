"""Recorded traces: every op of a run, with where it ran and what its values looked like.

``with fw_debugger.record() as trace:`` switches on an inspector of its own for the block (so
recordings nest, and each sees every op of its block) and appends one :class:`Event` per op:
the op, the module path, the phase, input and output shapes and dtypes, the device, the kernel
(and the plugin that owns it) that ran it, the time since the previous event, and summaries of
the output values (NaN/Inf/zero counts, min/max/mean of the finite values). Full values are
kept only with ``values="full"``, within a byte budget, counted under the ``"debug"`` memory tag
and dropped first when the memory pool is under pressure.

The trace can be queried (:meth:`Trace.find`), turned into rows for pandas
(:meth:`Trace.to_records`), saved and loaded (:meth:`Trace.save`, :meth:`Trace.load`), walked
node by node (:func:`step`) and compared with another run (:func:`fw_debugger.compare`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import itertools
import json
import time
import weakref
from collections import Counter, deque
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

import fw_core as fw
from fw_core.records import Inspector
from fw_core.tensor import Tensor

from .stats import health_stats, host_array

__all__ = ["INSPECTOR", "SESSION", "Event", "Stepper", "Trace", "record", "step"]

_STAT_KEYS = ("size", "finite", "nan", "posinf", "neginf", "zeros", "min", "max", "mean")


@dataclass
class Event:
    """One op run seen by a recording.

    ``kind`` is "op" for an op that ran, or "vjp" when an op's gradient rule finished in
    backward (its ``inputs`` are the incoming gradient, its outputs the gradients it produced
    for each input; the ops the rule ran are the events just before it). ``kernel`` names the
    plugin whose kernel ran (``"fw_cpu"``; a CPU fallback says so) and ``dispatch`` why it was
    chosen. ``elapsed_s`` is the time since the previous event (or the start of the recording):
    an inspector only sees ops complete, so this is the op plus any Python between the two.
    ``memory_tag`` is ``"debug"`` when full values were captured for the event, else the
    output's lifecycle tag if fw.memory tracks it (None otherwise). ``summaries`` hold one dict
    of health statistics per output (None for absent gradients), ``values`` the full output
    arrays when captured.
    """

    index: int
    op: str
    module: str
    phase: str
    kind: str
    device: str
    kernel: str
    dispatch: str
    elapsed_s: float
    input_shapes: tuple
    input_dtypes: tuple
    output_shapes: tuple
    output_dtypes: tuple
    attrs: dict = field(default_factory=dict)
    memory_tag: str | None = None
    summaries: tuple = ()
    values: tuple | None = None

    def describe(self) -> str:
        """The event in one line of plain words."""
        where = f"in module '{self.module}'" if self.module else "outside any module"
        ins = ", ".join(_spec(s, d) for s, d in zip(self.input_shapes, self.input_dtypes))
        outs = ", ".join(_spec(s, d) for s, d in zip(self.output_shapes, self.output_dtypes))
        if self.kind == "vjp":
            head = (f"#{self.index} backward: gradient of {self.op} {where} from grad ({ins}) "
                    f"to input grads ({outs})")
        else:
            head = (f"#{self.index} {self.phase}: {self.op}({ins}) -> {outs} {where}, "
                    f"on {self.device} by {self.kernel}")
        stats = _combine(self.summaries)
        if stats is not None:
            bad = [f"{stats[k]} {k}" for k in ("nan", "posinf", "neginf") if stats[k]]
            head += (f"; values in [{stats['min']:.4g}, {stats['max']:.4g}], mean "
                     f"{stats['mean']:.4g}" if stats["min"] is not None else
                     "; no finite values") + (f", {', '.join(bad)}" if bad else "")
        return head


class Trace:
    """The events of a recording, oldest first (the last ``bounded`` when bounded).

    ``len(trace)``, ``trace[i]`` and ``for event in trace`` work as on a list; ``notes`` says
    what was left out (values past the budget, values dropped under memory pressure).
    """

    def __init__(self, bounded: int | None = None, values: str = "summary",
                 value_bytes: int = 64 << 20):
        if values not in ("summary", "full"):
            raise fw.errors.ArgumentError(f"values={values!r} is not a recording mode",
                                          hint='use values="summary" or values="full"')
        if bounded is not None and bounded < 1:
            raise fw.errors.ArgumentError(f"bounded={bounded} keeps no events",
                                          hint="pass a positive count, or None to keep all")
        self.bounded, self.values, self.value_bytes = bounded, values, int(value_bytes)
        self._events: deque[Event] = deque(maxlen=bounded)
        self.notes: list[str] = []
        self.value_bytes_held = 0
        self._holders: dict[int, list[Tensor]] = {}  # event index -> tracked value wrappers
        self._cancel_pressure = None

    @property
    def events(self) -> list[Event]:
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self):
        return iter(list(self._events))

    def __getitem__(self, i):
        return self.events[i]

    def find(self, module: str | None = None, op: str | None = None,
             phase: str | None = None) -> list[Event]:
        """Events whose module path matches the fnmatch pattern ``module`` ("encoder.*"), whose
        op is ``op`` (a pattern too: "soft*") and whose phase is ``phase``; None matches all."""
        return [e for e in self._events if matches(e, module, op, phase)]

    def to_records(self) -> list[dict]:
        """One flat dict per event (``pandas.DataFrame(trace.to_records())``): shapes and dtypes
        as text, the output statistics summed over outputs (counts) or combined (min/max/mean)."""
        rows = []
        for e in self._events:
            row = {k: v for k, v in asdict(e).items() if k not in ("summaries", "values", "attrs")}
            for key in ("input_shapes", "input_dtypes", "output_shapes", "output_dtypes"):
                row[key] = "; ".join(map(str, row[key]))
            row["attrs"] = ", ".join(f"{k}={v}" for k, v in e.attrs.items())
            stats = _combine(e.summaries) or dict.fromkeys(_STAT_KEYS)
            row.update({k: stats[k] for k in _STAT_KEYS})
            row["has_values"] = e.values is not None
            rows.append(row)
        return rows

    # -- value capture ------------------------------------------------------------------------
    def _capture(self, event: Event, outputs: list) -> None:
        """Keep copies of ``outputs`` on the event when the budget allows; track them as
        "debug" so the memory pool counts them and can have them dropped."""
        size = sum(t._data.nbytes for t in outputs if t is not None)
        if self.value_bytes_held + size > self.value_bytes:
            self.values = "summary"
            self.notes.append(f"value budget of {self.value_bytes} bytes reached at event "
                              f"#{event.index}: later events keep summaries only")
            return
        event.values = tuple(None if t is None else np.array(host_array(t)) for t in outputs)
        event.memory_tag = "debug"
        self._hold(event)

    def _hold(self, event: Event) -> None:
        """Track an event's values as "debug" (which may itself put the pool over its limit
        and have every value dropped) and count them against the budget."""
        if self._cancel_pressure is None:  # weakly: a forgotten trace frees its values
            ref = weakref.ref(self)
            cancel = fw.memory.on_pressure("debug", lambda: ref() and ref()._drop_values())
            self._cancel_pressure = cancel
            weakref.finalize(self, cancel)
        cpu = fw.device("cpu")
        holders = self._holders[event.index] = []
        for array in event.values:
            if array is not None:
                holders.append(fw.memory.track(Tensor._wrap(array, cpu), "debug"))
        if event.index in self._holders:
            self.value_bytes_held += sum(a.nbytes for a in event.values if a is not None)
        else:
            event.values, event.memory_tag = None, None

    def _forget(self, event: Event) -> None:
        """An event left the ring buffer: its values leave the budget."""
        if self._holders.pop(event.index, None) is not None:
            self.value_bytes_held -= sum(a.nbytes for a in event.values if a is not None)

    def _drop_values(self) -> None:
        """The memory pool is under pressure: give every captured value back."""
        self._cancel_pressure = None
        for e in self._events:
            e.values, e.memory_tag = None, None
        self._holders.clear()
        self.value_bytes_held = 0
        if self.values == "full":
            self.values = "summary"
            self.notes.append("values dropped under memory pressure: summaries kept")

    def _append(self, event: Event) -> None:
        if self.bounded is not None and len(self._events) == self.bounded:
            self._forget(self._events[0])
        self._events.append(event)

    # -- files --------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write the trace as JSON at ``path`` and its captured values beside it (same name,
        ``.npz``, only when some were captured). Returns the JSON path."""
        path = Path(path)
        events = []
        arrays = {}
        for e in self._events:
            row = asdict(e)
            row["values"] = None
            if e.values is not None:
                row["values"] = [None if a is None else f"e{e.index}_o{k}"
                                 for k, a in enumerate(e.values)]
                arrays.update({f"e{e.index}_o{k}": a for k, a in enumerate(e.values)
                               if a is not None})
            events.append(row)
        doc = {"format": "fw_debugger.trace/1", "bounded": self.bounded, "values": self.values,
               "value_bytes": self.value_bytes, "notes": self.notes, "events": events}
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1, default=_jsonable))
        tmp.replace(path)
        if arrays:
            np.savez(path.with_suffix(".npz"), **arrays)
        return path

    @classmethod
    def load(cls, path) -> Trace:
        """Read a trace written by :meth:`save` (values included when its .npz is there)."""
        path = Path(path)
        doc = json.loads(path.read_text())
        if doc.get("format") != "fw_debugger.trace/1":
            raise fw.errors.FwError(f"{path} is not a saved fw_debugger trace",
                                    hint="load a file written by Trace.save")
        trace = cls(doc["bounded"], doc["values"], doc["value_bytes"])
        trace.notes = list(doc["notes"])
        npz = path.with_suffix(".npz")
        arrays = dict(np.load(npz)) if npz.exists() else {}
        names = {f.name for f in fields(Event)}
        for row in doc["events"]:
            keys = row.pop("values")
            event = Event(**{k: _tuples(v) if k.endswith(("shapes", "dtypes")) else v
                             for k, v in row.items() if k in names})
            event.summaries = tuple(row["summaries"])
            trace._events.append(event)
            if keys is not None and all(k is None or k in arrays for k in keys):
                event.values = tuple(None if k is None else arrays[k] for k in keys)
                trace._hold(event)
        return trace

    # -- reading ------------------------------------------------------------------------------
    def summary(self, limit: int = 20) -> str:
        """A readable overview: counts by op and phase, then the first ``limit`` events."""
        by_op = Counter(e.op for e in self._events)
        phases = Counter(e.phase for e in self._events)
        lines = [repr(self), "  ops: " + ", ".join(f"{k} x{v}" for k, v in by_op.items()),
                 f"  phases: forward {phases['forward']}, backward {phases['backward']}"]
        lines += [f"  {e.describe()}" for e in itertools.islice(self._events, limit)]
        if len(self._events) > limit:
            lines.append(f"  ... {len(self._events) - limit} more events")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        held = f", {self.value_bytes_held} bytes of values" if self.value_bytes_held else ""
        bound = f", last {self.bounded}" if self.bounded else ""
        return f"<Trace: {len(self._events)} events{bound}, values={self.values}{held}>"


class _Recorder:
    """Turns the inspector's OpEvents into a trace's :class:`Event` s."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.count = 0
        self.last = time.perf_counter()
        self.kernels: dict = {}  # (op, device type) -> (plugin, why), read when first needed

    def on_op(self, event) -> None:
        now = time.perf_counter()
        elapsed, self.last = now - self.last, now
        vjp = event.phase == "backward"
        outputs = list(event.output) if vjp else [event.output]
        inputs = event.inputs
        tensors = [t for t in (*inputs, *outputs) if isinstance(t, Tensor)]
        device = str(tensors[0].device) if tensors else "cpu"
        kernel, why = (("vjp", "the op's gradient rule, run as the fw ops listed before it")
                       if vjp else self._kernel(event, device.split(":")[0]))
        out = Event(
            index=self.count, op=event.op.name, module=event.module,
            phase="backward" if event.in_backward else "forward", kind="vjp" if vjp else "op",
            device=device, kernel=kernel, dispatch=why, elapsed_s=elapsed,
            input_shapes=tuple(_shape(t) for t in inputs),
            input_dtypes=tuple(_dtype(t) for t in inputs),
            output_shapes=tuple(_shape(t) for t in outputs),
            output_dtypes=tuple(_dtype(t) for t in outputs),
            attrs={k: _jsonable(v) for k, v in event.attrs.items()},
            memory_tag=next((fw.memory.tag_of(t) for t in outputs if t is not None), None),
            summaries=tuple(None if t is None else health_stats(t) for t in outputs),
        )
        self.count += 1
        if self.trace.values == "full":
            self.trace._capture(out, outputs)
        self.trace._append(out)

    def _kernel(self, event, device: str) -> tuple[str, str]:
        op = event.op.name
        arrays = tuple(getattr(t, "_data", t) for t in event.inputs)
        served = fw.plugins.serving(op, device, arrays, event.attrs)  # the guards decide per call
        if served is not None:
            return served
        if (op, device) not in self.kernels:  # a CPU fallback is noted when it first happens
            self.kernels = _kernel_table()
        plugin, why = self.kernels.get((op, device), ("none", "no kernel registered"))
        if why.startswith("cpu fallback"):
            plugin = f"{self.kernels.get((op, 'cpu'), ('unknown',))[0]} on cpu (fallback)"
        return plugin, why


@contextlib.contextmanager
def record(bounded: int | None = None, values: str = "summary", value_bytes: int = 64 << 20):
    """Record every op run in the block into a :class:`Trace`.

    Args:
        bounded: keep only the last ``bounded`` events (a ring buffer); None keeps all.
        values: "summary" (health statistics of each output) or "full" (also copies of the
            output arrays, as NumPy arrays on ``event.values``).
        value_bytes: the most bytes of full values kept; past it, later events keep summaries
            and ``trace.notes`` says where it stopped. Captured values are tagged "debug" in
            fw.memory and dropped first when a device is over its memory limit.

    Example::

        with fw_debugger.record() as trace:
            loss = model(x).sum()
            loss.backward()
        trace.find(module="encoder.*", op="softmax")

    Compiled functions (``fw.compile``) run eagerly while a recording is on, so every op shows.
    """
    trace = Trace(bounded, values, value_bytes)
    recorder = _Recorder(trace)
    inspector = Inspector(name=f"fw_debugger.record#{id(trace):x}", on_op=recorder.on_op)
    with fw.inspectors.activated(inspector):
        yield trace


#: the whole-session recording behind the registered "fw_debugger.record" inspector (switched
#: on by name, e.g. ``fw.inspectors.activate("fw_debugger.record")``): the last 10,000 events
SESSION = Trace(bounded=10_000)
INSPECTOR = Inspector(name="fw_debugger.record", on_op=_Recorder(SESSION).on_op)


def matches(event, module: str | None = None, op: str | None = None,
            phase: str | None = None) -> bool:
    """Whether an event's module path and op match these fnmatch patterns ("encoder.*",
    "soft*") and its phase is ``phase``; None matches anything."""
    return ((module is None or fnmatch.fnmatchcase(event.module, module))
            and (op is None or fnmatch.fnmatchcase(event.op, op))
            and (phase is None or event.phase == phase))


def step(trace, echo: bool = False) -> Stepper:
    """Walk a recorded run node by node: ``for event in step(trace): ...``; ``echo=True``
    prints each node's plain-words line as it is reached.

    Example::

        walk = fw_debugger.step(trace)
        walk.until(op="softmax")      # the first softmax
        print(walk.line())            # "[7/40] #6 forward: softmax(float32[2, 5]) -> ..."
        next(walk)                    # the op after it
    """
    return Stepper(trace, echo)


class Stepper:
    """An iterator over a trace's events with a cursor you can move.

    ``next(stepper)`` returns the next :class:`~fw_debugger.record.Event`; ``line()`` says the
    current one in plain words; ``until(module=, op=, phase=)`` runs forward to the next
    matching event; ``back()`` steps back one; ``position`` is the cursor (-1 before the first).
    """

    def __init__(self, trace, echo: bool = False):
        self.events = list(trace.events)
        self.position = -1
        self.echo = echo

    def __iter__(self):
        return self

    def __next__(self):
        if self.position + 1 >= len(self.events):
            raise StopIteration
        self.position += 1
        if self.echo:
            print(self.line())
        return self.events[self.position]

    @property
    def current(self):
        """The event under the cursor (None before the first step)."""
        return self.events[self.position] if self.position >= 0 else None

    def line(self) -> str:
        """The current node in plain words (or where the walk stands)."""
        if self.current is None:
            return f"at the start of {len(self.events)} events"
        return f"[{self.position + 1}/{len(self.events)}] {self.current.describe()}"

    def back(self):
        """Move the cursor back one event and return it (None at the start)."""
        self.position = max(self.position - 1, -1)
        return self.current

    def until(self, module: str | None = None, op: str | None = None,
              phase: str | None = None):
        """Step forward to the next matching event (see :func:`matches`); None at the end."""
        return next((e for e in self if matches(e, module, op, phase)), None)


# -- helpers --------------------------------------------------------------------------------
def _kernel_table() -> dict[tuple[str, str], tuple[str, str]]:
    return {(r["op"], r["device"]): (r["plugin"], r["why"]) for r in fw.plugins.dispatch_table()}


def _combine(summaries) -> dict | None:
    """One set of statistics over several outputs: counts summed, extremes combined, the mean
    weighted by each output's finite count."""
    present = [s for s in summaries if s is not None]
    if not present:
        return None
    out = {k: sum(s[k] for s in present) for k in _STAT_KEYS[:6]}
    finite = [(s, s["finite"]) for s in present if s["min"] is not None]
    total = sum(n for _, n in finite)
    out["min"] = min((s["min"] for s, _ in finite), default=None)
    out["max"] = max((s["max"] for s, _ in finite), default=None)
    out["mean"] = sum(s["mean"] * n for s, n in finite) / total if total else None
    return out


def _shape(t):
    return tuple(t.shape) if isinstance(t, Tensor) else None


def _dtype(t) -> str:
    if t is None:
        return "none"
    return t.dtype.name if isinstance(t, Tensor) else type(t).__name__


def _spec(shape, dtype) -> str:
    return dtype if shape is None else f"{dtype}[{', '.join(map(str, shape))}]"


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return str(getattr(value, "name", value))
