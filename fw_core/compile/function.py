"""CompiledFunction: a function or module that runs eagerly until compiling pays, then
replays a cached plan per signature; every decision and recompile is explained."""

from __future__ import annotations

import functools
import threading
import time

from .. import capture
from .._state import state
from .cache import Entry, PlanCache, describe_signature, signature, size_changes
from .pipeline import build_plan
from .trace import trace

#: partial rebuilds after which the scheduler reviews whether new sizes still deserve plans
REBUILDS_BEFORE_REVIEW = 8


class CompiledFunction:
    """What :func:`fw.compile` returns. Call it like the function it wraps.

    Per call signature (shapes, dtypes, devices, grad mode, other arguments) it runs eagerly
    until the scheduler decides to compile, then traces one run (whose result is returned, so
    it is always right), builds a plan and replays that plan on later calls. Guards on module
    modes (train/eval) and on which leaves already hold a ``.grad`` send a call back through
    this path when they no longer hold.

    Threads may call one compiled function at once: its counters, plans and size history sit
    behind a lock held only to decide how a call runs and to record what happened, never while
    the function or a plan runs. While one thread compiles a signature, other calls with it
    run eagerly, so it is compiled once and no thread waits for another's trace.
    """

    def __init__(self, fn, name: str | None = None):
        from .. import scheduler

        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.cache = PlanCache(scheduler.knobs().max_plans)
        self.events: list[str] = []
        self.counts = {"calls": 0, "plan_calls": 0, "eager_calls": 0, "compiles": 0,
                       "partial_rebuilds": 0, "retraces": 0, "fallbacks": 0}
        self.compile_seconds: list[float] = []
        self._calls_by_key: dict[tuple, int] = {}
        self._sizes_seen: dict[tuple[int, int], set] = {}
        self._dynamic: set[tuple[int, int]] = set()
        #: fusion decisions by group structure (sizes aside), reused by partial rebuilds
        self._fusion_choices: dict[tuple, bool] = {}
        self._rebuilt_hits = 0  # calls served by plans of partial rebuilds
        self._rebuilds_verdict: str | None = None  # "compile" / "eager" for new dynamic sizes
        self._compiling: set[tuple] = set()  # signatures a thread is compiling now
        self._retrace: set[tuple] = set()  # signatures whose plans retrace() dropped
        #: calls per signature and fusion choices of an earlier process (load_state_dict), by
        #: the repr of their keys, taken over when a signature or group is first met
        self._restored_calls: dict[str, int] = {}
        self._restored_fusion: dict[str, bool] = {}
        self._lock = threading.RLock()  # re-entrant: explain() and reset() call helpers
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        if kwargs:  # keyword arguments become positional ones of a bound call
            names = tuple(kwargs)
            return self._call(args + tuple(kwargs.values()),
                              lambda *a: self.fn(*a[:len(args)], **dict(zip(names, a[len(args):]))))
        return self._call(args, self.fn)

    def _call(self, args: tuple, fn):
        with self._lock:
            route = self._route(args)
        if route is None:
            return fn(*args)
        if route.__class__ is not tuple:
            return route.run(args)
        key, changes, subject = route
        try:
            return self._compile(key, args, fn, changes, subject)
        finally:
            with self._lock:
                self._compiling.discard(key)

    def _route(self, args: tuple):
        """How this call runs, counted: None (eagerly), a Plan, or ``(key, size changes,
        subject)`` to compile now (the key is then marked as being compiled)."""
        from .. import scheduler

        self.counts["calls"] += 1
        if capture.recorder() is not None or state.inspectors or not scheduler.knobs().enabled:
            # inside another trace (inlined there), inspectors watching every op, or
            # compilation off: run as written
            self.counts["eager_calls"] += 1
            return None
        key = signature(args)
        if key in self._compiling:  # another thread is tracing this signature
            self.counts["eager_calls"] += 1
            return None
        entry = self.cache.get(key)
        if entry is not None:
            why = entry.guards_hold()
            if why is None:
                self.counts["plan_calls" if entry.plan is not None else "eager_calls"] += 1
                if entry.plan is not None:
                    self._rebuilt_hits += entry.rebuilt
                return entry.plan
            self._event(f"recompile {describe_signature(key)}: {why}")
        before = self._calls_by_key.get(key)
        if before is None:
            before = self._restored_calls.pop(repr(key), 0) if self._restored_calls else 0
        calls = self._calls_by_key[key] = before + 1
        changes = self._size_changes(key)
        subject = f"{self.name}{describe_signature(key)}"
        dynamic = bool(changes) and all((p, d) in self._dynamic for p, d, _, _ in changes)
        if key in self._retrace:  # its plan was dropped by retrace(): trace it again now
            compile_now = True
        elif dynamic:  # a new size of a dynamic dimension: compile at once, unless they never pay
            compile_now = self._rebuilds_pay()
        else:
            compile_now = scheduler.should_compile(subject, calls)
        if not compile_now:
            self.counts["eager_calls"] += 1
            return None
        self._compiling.add(key)
        return key, changes, subject

    def _rebuilds_pay(self) -> bool:
        """Whether new sizes of dynamic dimensions should keep getting plans: asked of the
        scheduler once :data:`REBUILDS_BEFORE_REVIEW` partial rebuilds exist; when those plans
        served fewer calls than it took to build them (sizes that rarely come back), new
        sizes run eagerly from then on (plans already built are still used)."""
        from .. import scheduler

        if self._rebuilds_verdict is None:
            rebuilds = self.counts["partial_rebuilds"]
            if rebuilds < REBUILDS_BEFORE_REVIEW:
                return True
            pays = self._rebuilt_hits >= rebuilds
            self._rebuilds_verdict = scheduler.decide(
                "dynamic_sizes", self.name, "compile" if pays else "eager",
                f"{rebuilds} partial rebuilds served {self._rebuilt_hits} later calls: "
                + ("sizes come back, keep building plans" if pays else
                   "sizes rarely come back, run new sizes eagerly"),
                rebuilds=rebuilds, reused_calls=self._rebuilt_hits)
            self._event(f"new sizes of dynamic dimensions: {self._rebuilds_verdict} "
                        f"({rebuilds} partial rebuilds served {self._rebuilt_hits} calls)")
        return self._rebuilds_verdict == "compile"

    def _size_changes(self, key: tuple) -> list:
        """The (argument, dim, old, new) size changes from the closest cached signature; marks
        a dimension dynamic once the scheduler says it keeps changing."""
        from .. import scheduler

        best = None
        for other in self.cache.keys():
            changes = size_changes(other, key)
            if changes is not None and (best is None or len(changes) < len(best)):
                best = changes
        for position, dim, _, new in best or ():
            seen = self._sizes_seen.setdefault((position, dim), set())
            seen.add(new)
            if (position, dim) not in self._dynamic and scheduler.is_dynamic(
                    f"{self.name} argument {position} dim {dim}", dim, sorted(seen)):
                self._dynamic.add((position, dim))
                self._event(f"argument {position} dim {dim} is dynamic (sizes seen: "
                            f"{sorted(seen)}): new sizes reuse graph structure and kernels")
        return best or []

    def _compile(self, key, args, fn, changes, subject):
        from .. import memory, scheduler

        start = time.perf_counter()
        tracer, result = trace(fn, args)
        traced = time.perf_counter() - start
        what = describe_signature(key)
        if tracer.breaks:
            with self._lock:
                self.counts["fallbacks"] += 1
                self._store(key, Entry(None, tracer.breaks))
                self._event(f"eager for {what}: " + "; ".join(tracer.breaks))
            return result
        device = str(tracer.device or "cpu")
        choices = self._fusion_choices

        def decide(group, fused_s, unfused_s):
            choice = scheduler.fusion_pays(_group_subject(group), fused_s, unfused_s)
            choices[group.signature()] = choice
            return choice

        def known(group):
            signature = group.signature()
            if signature not in choices and self._restored_fusion:
                restored = self._restored_fusion.pop(repr(signature), None)
                if restored is not None:
                    choices[signature] = scheduler.decide(
                        "fuse", _group_subject(group), restored,
                        "restored: the choice of the run this function's state came from")
            return choices.get(signature)

        # a group of a structure measured before (at this size or another, in this plan or an
        # earlier one, or in the run load_state_dict restored) is not measured again: an LSTM
        # step's groups repeat per time step
        plan = build_plan(tracer, decide,
                          lambda shape, dtype: memory.allocate(shape, dtype, "cache", device),
                          known)
        seconds = time.perf_counter() - start
        partial = bool(changes)
        retraced = key in self._retrace
        graph = plan.graph
        nodes = len(graph.nodes())
        groups = sum(1 for s in graph.steps if s.__class__.__name__ == "Group")
        reason = ("sizes changed: " + ", ".join(f"argument {p} dim {d} {a}->{b}"
                                                for p, d, a, b in changes)
                  if partial else "first compile for this signature")
        if retraced:
            reason = "retrace() dropped its plan"
        with self._lock:
            self._retrace.discard(key)
            self.compile_seconds.append(seconds)
            self.counts["retraces" if retraced else "partial_rebuilds" if partial
                        else "compiles"] += 1
            kind = "retraced" if retraced else "partial rebuild" if partial else "compiled"
            self._event(f"{kind} {what} in "
                        f"{seconds:.3f} s (trace {traced:.3f} s; {nodes} ops, {groups} fused "
                        f"groups, {len(graph.steps)} steps): {reason}")
            self._store(key, Entry(plan, [], tuple(tracer.modules.values()),
                                   tuple(tracer.grad_state.values()), rebuilt=partial))
        return result

    def _store(self, key, entry: Entry) -> None:
        evicted = self.cache.put(key, entry)
        if evicted is not None:
            self._event(f"evicted {describe_signature(evicted)} (cache holds "
                        f"{self.cache.max_plans} plans)")

    def _event(self, text: str) -> None:
        self.events.append(f"[{self.counts['calls']}] {text}")

    # -- looking inside -----------------------------------------------------------------------
    def plans(self) -> list:
        with self._lock:
            return [e.plan for _, e in self.cache.items() if e.plan is not None]

    def explain(self) -> str:
        """Every compile, partial rebuild, fallback and eviction of this function, with why."""
        with self._lock:
            counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
            info = self.cache.info()
            lines = [f"{self.name}: {counts}; cache {info['entries']}/{info['max_plans']} "
                     f"(hits {info['hits']}, misses {info['misses']}, evictions "
                     f"{info['evictions']})"]
            lines += [f"  {e}" for e in self.events]
            for plan in self.plans()[-1:]:
                lines += [f"  pass: {line}" for line in plan.graph.log]
        return "\n".join(lines)

    def retrace(self) -> None:
        """Drop the plans, keeping what was learnt: the next call of each compiled signature
        traces again (that call runs eagerly, as every trace does) and rebuilds its plan from
        the same fusion choices and cached kernels.

        ``Model.fit`` calls it at the start of each epoch, so which steps run eagerly depends
        on the epoch alone, not on when the process started: training resumed from a
        checkpoint then matches uninterrupted training bit for bit (fused kernels may round
        differently from eager ops).
        """
        with self._lock:
            for key, entry in self.cache.items():
                if entry.plan is not None:
                    self._retrace.add(key)
                    self.cache.drop(key)

    def state_dict(self) -> dict:
        """What this function learnt that a later process should reuse: calls per signature
        and fusion choices (JSON; objects passed by identity are left out)."""
        with self._lock:
            calls = {repr(k): n for k, n in self._calls_by_key.items()
                     if "'object'" not in repr(k[1])}
            fusion = {repr(k): v for k, v in self._fusion_choices.items()}
        return {"calls": {**self._restored_calls, **calls},
                "fusion": {**self._restored_fusion, **fusion}}

    def load_state_dict(self, state: dict) -> None:
        """Take over :meth:`state_dict` of a function of an earlier process: a signature called
        there often enough compiles at its first call here, with the same fusion choices."""
        with self._lock:
            self._restored_calls.update({str(k): int(v) for k, v in state["calls"].items()})
            self._restored_fusion.update({str(k): bool(v) for k, v in state["fusion"].items()})

    def reset(self) -> None:
        """Forget every plan and counter (e.g. after replacing a module's parameters)."""
        with self._lock:
            self.cache.clear()
            self._retrace.clear()
            self._restored_calls.clear()
            self._restored_fusion.clear()
            self._calls_by_key.clear()
            self._sizes_seen.clear()
            self._dynamic.clear()
            self._fusion_choices.clear()
            self._rebuilt_hits = 0
            self._rebuilds_verdict = None
            self.events.clear()


def _group_subject(group) -> str:
    """A stable name for a fused group in the audit log: its ops, module and output shapes."""
    ops = "+".join(n.op.name for n in group.nodes)
    shapes = ", ".join(f"{v.dtype.name}{list(v.shape)}" for v in group.outputs)
    where = f" in {group.module}" if group.module else ""
    return f"fuse[{ops}]{where} -> {shapes}"
