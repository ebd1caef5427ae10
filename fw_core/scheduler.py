"""The adaptive scheduler: when to compile, which fusions pay, which dimensions are dynamic,
which memory policy to use — every decision an entry of an audit log.

The compiler asks; the scheduler answers from its knobs (:class:`Knobs`) and the statistics the
compiler hands it, and records each answer (what, why, the numbers behind it). The log can be
read (:func:`log`), written (:func:`export`, JSON lines) and replayed (:func:`replay`): a
replayed run takes the same decisions, in the same order, for the same subjects. :func:`freeze`
stops adapting: a subject decided before keeps its recorded answer.

Decisions never change numerical results beyond floating-point reassociation: they choose
*when* and *how* the same ops run (eager or compiled, fused or not, specialised or bucketed
shapes), never *what* they compute. One scheduler serves the process: threads that compile at
once share its knobs, thresholds and log, and a lock keeps each decision and its log entry
together (decisions are made when compiling, never per op).

Each helper records one decision per subject (the threshold it applies), not one per call, so
the log grows with what gets compiled, not with the number of steps::

    fw.scheduler.should_compile("step[f32(64,3)]", calls=1)   # False, logs "compile from call 3"
    fw.scheduler.should_compile("step[f32(64,3)]", calls=3)   # True, nothing new logged
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .errors import ArgumentError

FUSION_MODES = ("measure", "always", "never")


@dataclass(frozen=True)
class Knobs:
    """What the scheduler's decisions follow (``fw.context`` presets set them together).

    Attributes:
        compile_after: calls with one signature that run eagerly before it is compiled.
        fusion: "measure" (fuse a group when it runs faster fused, timed on real inputs),
            "always" or "never".
        bucket_after: distinct sizes one dimension may take before it is treated as dynamic:
            a new size then compiles at once as a partial rebuild (traced again, fusion
            decisions and kernels reused) instead of waiting ``compile_after`` calls.
        max_plans: compiled plans kept per function (least recently used dropped first).
        memory_policy: the memory policy name the pools use (``fw.memory.use_policy``).
        enabled: False runs everything eagerly (no compile).
        name: which preset or configuration these knobs are ("default", "debug", "custom").
    """

    compile_after: int = 2
    fusion: str = "measure"
    bucket_after: int = 4
    max_plans: int = 32
    memory_policy: str = "default"
    enabled: bool = True
    name: str = "default"

    def __post_init__(self):
        for knob, low in (("compile_after", 0), ("bucket_after", 1), ("max_plans", 1)):
            value = getattr(self, knob)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ArgumentError(f"scheduler knob {knob}={value!r} is out of range",
                                    hint=f"use an integer >= {low}")
        if self.fusion not in FUSION_MODES:
            raise ArgumentError(f"scheduler knob fusion={self.fusion!r} is not a mode",
                                hint=f"use one of {', '.join(FUSION_MODES)}")


_KNOB_NAMES = tuple(f.name for f in fields(Knobs))


class Scheduler:
    """The decision maker and its audit log (``fw.scheduler`` exposes one per process)."""

    def __init__(self):
        self._lock = threading.RLock()  # re-entrant: configure and thresholds call decide
        self.reset()

    def reset(self) -> None:
        """Forget the log, the decided thresholds, freeze and replay; knobs back to defaults."""
        with self._lock:
            if getattr(self, "_knobs", Knobs()).memory_policy != Knobs.memory_policy:
                from . import memory

                memory.use_policy(Knobs.memory_policy)
            self._knobs = Knobs()
            self._log: list[dict] = []
            self._latest: dict[tuple[str, str], object] = {}
            self._decided: dict[tuple[str, str], object] = {}
            self._frozen = False
            self._replay: dict[tuple[str, str], deque] | None = None
            self._mismatches: list[dict] = []

    # -- knobs --------------------------------------------------------------------------------
    def knobs(self) -> Knobs:
        """The current :class:`Knobs`."""
        return self._knobs

    def configure(self, **changes) -> Knobs:
        """Change some knobs (``configure(compile_after=0, fusion="never")``); the set is named
        "custom" unless ``name=`` says otherwise. Thresholds decided under the old knobs are
        re-decided when next asked (unless frozen). Returns the new knobs.

        Raises:
            ArgumentError: an unknown knob or a value out of range.
        """
        unknown = sorted(set(changes) - set(_KNOB_NAMES))
        if unknown:
            raise ArgumentError(f"unknown scheduler knob(s): {', '.join(unknown)}",
                                hint=f"knobs: {', '.join(_KNOB_NAMES)}")
        with self._lock:
            new = replace(self._knobs, **{"name": "custom", **changes})
            old, self._knobs = self._knobs, new
            self._decided.clear()
            if new.memory_policy != old.memory_policy:
                from . import memory

                try:
                    memory.use_policy(new.memory_policy)  # refuses an unknown name, logs nothing
                except ArgumentError:
                    self._knobs = old
                    raise
                chosen = self.decide("memory_policy", "all devices", new.memory_policy,
                                     f"knob memory_policy set by {new.name}")
                if chosen != new.memory_policy:  # a replayed log chose another policy
                    memory.use_policy(chosen)
                    self._knobs = replace(new, memory_policy=chosen)
            return self._knobs

    def disable(self) -> None:
        """Run everything eagerly: every helper answers "don't compile" and logs nothing."""
        self.configure(enabled=False, name=self._knobs.name)

    def enable(self) -> None:
        self.configure(enabled=True, name=self._knobs.name)

    # -- the decision record ------------------------------------------------------------------
    def decide(self, kind: str, subject: str, choice, reason: str, **stats):
        """Record a decision and return the choice to act on.

        ``choice`` is the fresh decision (a JSON scalar: bool, int, float, str or None).
        While replaying, the log's next choice for (kind, subject) is returned instead; while
        frozen, the latest recorded one. A subject the replayed log lacks gets the fresh choice
        (reason "not in replayed log"), and so does a new subject while frozen.
        """
        key = (kind, subject)
        mode = "fresh"
        with self._lock:
            if self._replay is not None:
                queue = self._replay.get(key)
                if queue:
                    recorded = queue.popleft()
                    if recorded["choice"] != choice:
                        self._mismatch(kind, subject, recorded["choice"], choice, "differs")
                    stats = {**stats, "fresh_choice": choice, "fresh_reason": reason}
                    choice, reason, mode = recorded["choice"], recorded["reason"], "replayed"
                else:
                    self._mismatch(kind, subject, None, choice, "not in replayed log")
                    reason = f"not in replayed log; {reason}"
            elif self._frozen and key in self._latest:
                stats = {**stats, "fresh_choice": choice}
                choice, mode = self._latest[key], "frozen"
                reason = "frozen: repeats the recorded decision"
            self._latest[key] = choice
            self._log.append({"seq": len(self._log), "time": time.time(), "kind": kind,
                              "subject": subject, "choice": choice, "reason": reason,
                              "mode": mode, "stats": stats, "knobs": self._knobs.name})
        return choice

    def _mismatch(self, kind, subject, recorded, fresh, why) -> None:
        self._mismatches.append({"kind": kind, "subject": subject, "recorded": recorded,
                                 "fresh": fresh, "why": why})

    def _threshold(self, kind: str, subject: str, value, reason: str, **stats):
        """A per-subject threshold, decided (and logged) the first time it is asked."""
        key = (kind, subject)
        with self._lock:
            if key not in self._decided:
                self._decided[key] = self.decide(kind, subject, value, reason, **stats)
            return self._decided[key]

    # -- what the compiler asks ---------------------------------------------------------------
    def should_compile(self, subject: str, calls: int) -> bool:
        """Whether to compile ``subject`` (a function with one signature) now, on its
        ``calls``-th call (counting this one). Compiles from call ``compile_after + 1``."""
        if not self._knobs.enabled:
            return False
        after = self._knobs.compile_after
        start = self._threshold("compile", subject, after + 1,
                                f"compile_after={after}: compile from call {after + 1}",
                                calls=calls)
        return calls >= start

    def fusion_pays(self, subject: str, fused_s: float, unfused_s: float) -> bool:
        """Whether to use the fused kernel of a group (``subject``: its signature), given its
        measured time fused and unfused (seconds, best of a few runs)."""
        mode = self._knobs.fusion
        if mode == "measure":
            pays = fused_s < unfused_s
            reason = (f"measured: fused {fused_s * 1e6:.1f} us "
                      f"{'<' if pays else '>='} unfused {unfused_s * 1e6:.1f} us")
        else:
            pays, reason = mode == "always", f"fusion={mode}"
        return bool(self.decide("fuse", subject, pays, reason, fused_s=fused_s,
                                unfused_s=unfused_s))

    def is_dynamic(self, subject: str, dim: int, sizes_seen) -> bool:
        """Whether dimension ``dim`` of ``subject`` (an argument of a compiled function) should
        be treated as dynamic, having taken the distinct sizes ``sizes_seen`` so far."""
        sizes = sorted(set(sizes_seen))
        after = self._knobs.bucket_after
        limit = self._threshold("dynamic", f"{subject}:dim{dim}", after,
                                f"bucket_after={after}: dynamic once it takes {after} sizes",
                                sizes=sizes)
        return len(sizes) >= limit

    # -- freeze, export, replay ---------------------------------------------------------------
    def freeze(self) -> None:
        """Stop adapting: subjects decided before keep their recorded choice."""
        self._frozen = True

    def unfreeze(self) -> None:
        self._frozen = False

    def frozen(self) -> bool:
        return self._frozen

    def log(self) -> list[dict]:
        """The audit log: one dict per decision (seq, time, kind, subject, choice, reason,
        mode "fresh"/"replayed"/"frozen", stats, knobs)."""
        with self._lock:
            return [dict(entry) for entry in self._log]

    def export(self, path) -> Path:
        """Write the audit log to ``path`` as JSON lines; returns the path."""
        path = Path(path)
        entries = self.log()
        with path.open("w") as out:
            for entry in entries:
                out.write(json.dumps(entry, default=str) + "\n")
        return path

    def replay(self, path_or_entries) -> None:
        """Make later decisions follow a log (a path written by :func:`export`, or entries from
        :func:`log`); ``replay(None)`` stops replaying. Thresholds decided before are re-decided
        from the log. Differences are listed by :func:`mismatches`."""
        replay = None
        if path_or_entries is not None:
            if isinstance(path_or_entries, (str, Path)):
                lines = Path(path_or_entries).read_text().splitlines()
                entries = [json.loads(line) for line in lines if line.strip()]
            else:
                entries = list(path_or_entries)
            replay = {}
            for entry in entries:
                replay.setdefault((entry["kind"], entry["subject"]), deque()).append(entry)
        with self._lock:
            self._decided.clear()
            self._mismatches = []
            self._replay = replay

    def mismatches(self) -> list[dict]:
        """Where the replayed run differed from its log: {kind, subject, recorded, fresh, why}
        with why "differs" (the fresh rule would choose otherwise) or "not in replayed log"."""
        return list(self._mismatches)

    def describe(self) -> str:
        """The log as readable lines ("#3 fuse relu+add: True — measured: ...")."""
        return "\n".join(
            f"#{e['seq']} {e['kind']} {e['subject']}: {e['choice']!r} — {e['reason']}"
            + ("" if e["mode"] == "fresh" else f" [{e['mode']}]") for e in self.log())


_scheduler = Scheduler()

knobs = _scheduler.knobs
configure = _scheduler.configure
disable = _scheduler.disable
enable = _scheduler.enable
decide = _scheduler.decide
should_compile = _scheduler.should_compile
fusion_pays = _scheduler.fusion_pays
is_dynamic = _scheduler.is_dynamic
freeze = _scheduler.freeze
unfreeze = _scheduler.unfreeze
frozen = _scheduler.frozen
log = _scheduler.log
export = _scheduler.export
replay = _scheduler.replay
mismatches = _scheduler.mismatches
describe = _scheduler.describe
reset = _scheduler.reset
