"""``Dashboard``: a ``Model.fit`` callback writing a self-contained HTML training report.

What it shows, each as a PNG (matplotlib, Agg) that is also embedded in the HTML as a base64
data URI (the page needs no network and no other file):

- loss and metric curves per epoch (``fw_viz.pictures.history_png``);
- the learning rate per batch (``optimizer.param_groups[0]["lr"]``);
- memory by lifecycle tag over time: ``fw.memory.summary()`` live bytes per tag, every
  ``every`` batches (summed over devices);
- gradient health, when fw_debugger is importable: ``fw_debugger.health.gradient_health`` every
  ``every`` batches, one gradient-norm line per layer;
- per-op time, when fw_debugger is importable: one training batch (the second, so warm-up
  compilation stays out) recorded with ``fw_debugger.record(bounded=...)``, ``elapsed_s`` summed
  per op and phase. That batch runs eagerly (recordings see every op).

Without fw_debugger the two debugger panels are replaced by a note. The HTML is rewritten at
the end of every epoch (atomically: a browser never reads half a page) and carries a
``<meta http-equiv="refresh">`` while training runs when ``refresh_s`` is set, so a page left
open follows the run; the last write (at the end of training) drops the refresh.
"""

from __future__ import annotations

import base64
import contextlib
import html
import importlib
import os
import time
import types
from pathlib import Path

import fw_core as fw
from fw_core.training.callbacks import Callback

from . import pictures

__all__ = ["Dashboard"]

PROFILE_STEP = 1  # the global batch index recorded for the per-op time breakdown
PROFILE_EVENTS = 20_000  # ring-buffer bound of that recording
TOP_OPS = 15


def _debugger():
    """fw_debugger's (record, gradient_health), or None when it is not installed (its panels
    are then skipped)."""
    try:
        debugger = importlib.import_module("fw_debugger")
        health = importlib.import_module("fw_debugger.health")
    except ImportError:
        return None
    return debugger.record, health.gradient_health


class Dashboard(Callback):
    """``model.fit(..., callbacks=[fw_viz.Dashboard("run/dashboard.html")])``.

    Args:
        path: the HTML file; PNGs go to ``<stem>_png/`` beside it (``self.pngs`` maps panel
            name to file).
        every: sample memory and gradient health every ``every`` batches.
        refresh_s: while training runs, the page reloads itself every ``refresh_s`` seconds
            (None: no reload).
    """

    def __init__(self, path, every: int = 1, refresh_s: float | None = None):
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.path, self.every, self.refresh_s = Path(path), int(every), refresh_s
        self.png_dir = self.path.parent / f"{self.path.stem}_png"
        self.pngs: dict[str, Path] = {}
        self.notes: list[str] = []

    # -- collection ------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self.step, self.started = 0, time.time()
        self.epochs: list[int] = []
        self.history: dict[str, list[float]] = {}
        self.lr: tuple[list[int], list[float]] = ([], [])
        self.memory_steps: list[int] = []
        self.memory: dict[str, list[int]] = {}
        self.grad_norms: dict[str, tuple[list[int], list[float]]] = {}
        self.op_time: dict[str, float] = {}
        self.notes = []
        self._recording = None
        self._debugger = _debugger()
        if self._debugger is None:
            self.notes.append("gradient health and per-op time skipped: fw_debugger is not "
                              "installed (pip install fw-debugger)")

    def on_train_batch_begin(self, batch, logs=None):
        if self._debugger is not None and self.step == PROFILE_STEP:
            self._recording = contextlib.ExitStack()
            self._trace = self._recording.enter_context(
                self._debugger[0](bounded=PROFILE_EVENTS))

    def on_train_batch_end(self, batch, logs=None):
        step, self.step = self.step, self.step + 1
        if self._recording is not None:
            self._recording.close()
            self._recording = None
            self._add_op_time(self._trace)
            self._trace = None
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            self.lr[0].append(step)
            self.lr[1].append(float(optimizer.param_groups[0]["lr"]))
        if step % self.every == 0:
            self._sample_memory(step)
            if self._debugger is not None:
                self._sample_health(step)

    def _sample_memory(self, step: int) -> None:
        totals: dict[str, int] = dict.fromkeys(fw.memory.TAGS, 0)
        for stats in fw.memory.summary().values():
            for tag in fw.memory.TAGS:
                totals[tag] += int(stats.get(tag, {}).get("live_bytes", 0))
        self.memory_steps.append(step)
        for tag, value in totals.items():
            self.memory.setdefault(tag, []).append(value)

    def _sample_health(self, step: int) -> None:
        report = self._debugger[1](self.model, warn=False, step=step)
        for layer in report.layers:
            if layer.grad_norm is not None:
                xs, ys = self.grad_norms.setdefault(layer.layer or "(root)", ([], []))
                xs.append(step)
                ys.append(layer.grad_norm)

    def _add_op_time(self, trace) -> None:
        for event in trace:
            key = event.op if event.phase == "forward" else f"{event.op} ({event.phase})"
            self.op_time[key] = self.op_time.get(key, 0.0) + event.elapsed_s

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
        self.write(final=False)

    def on_train_end(self, logs=None):
        if self._recording is not None:  # training stopped inside the recorded batch
            self._recording.close()
            self._recording = None
        if self._debugger is not None and not self.op_time:
            self.notes.append(f"per-op time skipped: training ended before batch "
                              f"{PROFILE_STEP + 1}, the one recorded")
        self.write(final=True)

    # -- output ----------------------------------------------------------------------------
    def _plots(self) -> dict[str, Path]:
        d, out = self.png_dir, {}
        history = types.SimpleNamespace(history=self.history, epoch=self.epochs)
        out["curves"] = pictures.history_png(history, d / "curves.png")
        if self.lr[0]:
            out["learning_rate"] = pictures.lines_png({"lr": self.lr}, d / "learning_rate.png",
                                                      "learning rate", "batch", "lr")
        if self.memory_steps:
            peak = max((max(vs) for vs in self.memory.values()), default=0)
            unit, size = next((u, s) for u, s in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 1024),
                                                  ("bytes", 1)) if peak >= s or s == 1)
            stacks = {t: [v / size for v in vs] for t, vs in self.memory.items() if any(vs)}
            out["memory"] = pictures.area_png(self.memory_steps, stacks, d / "memory.png",
                                              "live memory by lifecycle tag", "batch", unit)
        if self.grad_norms:
            out["gradient_health"] = pictures.lines_png(
                self.grad_norms, d / "gradient_health.png", "gradient norm per layer",
                "batch", "L2 norm", logy=True)
        if self.op_time:
            top = sorted(self.op_time.items(), key=lambda kv: -kv[1])[:TOP_OPS]
            out["op_time"] = pictures.bars_png([k for k, _ in top], [v * 1e3 for _, v in top],
                                               d / "op_time.png",
                                               f"time per op, batch {PROFILE_STEP + 1}", "ms")
        return out

    def write(self, final: bool = True) -> Path:
        """Redraw the PNGs and rewrite the HTML (called at each epoch end and at the end)."""
        self.pngs = self._plots()
        page = self._render(final)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, self.path)
        return self.path

    def _render(self, final: bool) -> str:
        refresh = (f'<meta http-equiv="refresh" content="{self.refresh_s:g}">'
                   if self.refresh_s and not final else "")
        state = "finished" if final else "running"
        last = {k: v[-1] for k, v in self.history.items() if v}
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v:.6g}</td></tr>"
                       for k, v in last.items())
        figures = "".join(
            f'<figure><img alt="{name}" src="data:image/png;base64,'
            f'{base64.b64encode(p.read_bytes()).decode("ascii")}">'
            f"<figcaption>{name.replace('_', ' ')}</figcaption></figure>"
            for name, p in self.pngs.items())
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        model = type(getattr(self.model, "module", self.model)).__name__
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'>" + refresh +
            f"<title>fw training: {html.escape(model)}</title><style>"
            "body{font-family:sans-serif;margin:1.5em;color:#222}"
            "figure{display:inline-block;margin:0.5em;vertical-align:top}"
            "img{max-width:100%;border:1px solid #ddd}table{border-collapse:collapse}"
            "td{border:1px solid #ccc;padding:2px 8px}</style></head><body>"
            f"<h1>Training {html.escape(model)}</h1>"
            f"<p id='state'>{state}: {len(self.epochs)} epochs, {self.step} batches, "
            f"{time.time() - self.started:.1f} s</p>"
            f"<table id='last'>{rows}</table>{figures}"
            + (f"<ul id='notes'>{notes}</ul>" if notes else "") + "</body></html>")
