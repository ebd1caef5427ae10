"""The default progress display: a live bar on a terminal, one line per epoch elsewhere."""

from __future__ import annotations

import sys
import time

from .callbacks import Callback


def _format(logs: dict) -> str:
    return "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in logs.items())


class ProgressBar(Callback):
    """Shows epoch progress with ETA and running metrics.

    On a TTY the bar redraws in place; otherwise (CI logs, files) it prints exactly one line per
    epoch, so logs never flood. ``verbose=0`` prints nothing, ``2`` one line per epoch always.
    """

    def __init__(self, verbose: int | str = "auto", stream=None, width: int = 24):
        self.stream = stream or sys.stdout
        if verbose == "auto":
            verbose = 1 if getattr(self.stream, "isatty", lambda: False)() else 2
        self.verbose, self.width = verbose, width

    def on_train_begin(self, logs=None):
        self.epochs = self.model._fit_epochs
        self.steps = self.model._fit_steps

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.start, self.last_draw = epoch, time.perf_counter(), 0.0

    def on_train_batch_end(self, batch, logs=None):
        if self.verbose != 1:
            return
        now = time.perf_counter()
        done = batch + 1
        if now - self.last_draw < 0.1 and done != self.steps:
            return
        self.last_draw = now
        elapsed = now - self.start
        total = self.steps or done
        filled = int(self.width * done / total)
        eta = elapsed / done * (total - done)
        bar = "=" * filled + ">" * (filled < self.width) + "." * (self.width - filled - 1)
        self.stream.write(f"\rEpoch {self.epoch + 1}/{self.epochs} [{bar}] {done}/{total} "
                          f"ETA {eta:4.1f}s  {_format(logs or {})}")
        self.stream.flush()

    def on_epoch_end(self, epoch, logs=None):
        if self.verbose == 0:
            return
        elapsed = time.perf_counter() - self.start
        prefix = "\r\x1b[K" if self.verbose == 1 else ""  # erase the longer bar line
        self.stream.write(f"{prefix}Epoch {epoch + 1}/{self.epochs} - {elapsed:.1f}s - "
                          f"{_format(logs or {})}\n")
        self.stream.flush()
