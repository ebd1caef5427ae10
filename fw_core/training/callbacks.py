"""Callbacks: one protocol for everything that hooks into ``Model.fit``.

A callback overrides any of ``on_train_begin/end(logs)``, ``on_epoch_begin/end(epoch, logs)``
and ``on_train_batch_begin/end(batch, logs)``; ``self.model`` is the Model being fitted.
Setting ``model.stop_training = True`` ends training after the current epoch.
"""

from __future__ import annotations

import csv
import math
import os

from ..errors import FwError


class Callback:
    """Base class; every method is optional."""

    model = None

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, batch, logs=None): ...
    def on_train_batch_end(self, batch, logs=None): ...


class CallbackList:
    """Calls every callback in order."""

    def __init__(self, callbacks, model):
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            cb.set_model(model)

    def __getattr__(self, hook):
        def call(*args):
            for cb in self.callbacks:
                getattr(cb, hook)(*args)

        return call


class History(Callback):
    """Records the logs of every epoch: ``history.history["loss"]`` is a list per epoch."""

    def on_train_begin(self, logs=None):
        self.epoch: list[int] = []
        self.history: dict[str, list[float]] = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class _Monitor(Callback):
    """Shared by callbacks that watch one logged quantity for improvement."""

    def __init__(self, monitor: str, mode: str, min_delta: float = 0.0):
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
        if mode == "auto":
            mode = "max" if any(k in monitor for k in ("acc", "f1", "precision", "recall")) \
                else "min"
        self.monitor, self.mode, self.min_delta = monitor, mode, abs(min_delta)
        self.best = math.inf if mode == "min" else -math.inf

    def _current(self, logs):
        if self.monitor not in (logs or {}):
            raise FwError(f"{type(self).__name__} monitors {self.monitor!r}, which is not logged",
                          hint=f"logged keys: {', '.join(sorted(logs or {}))}; add a validation "
                          "set for 'val_*' keys or the metric to compile(metrics=...)")
        return logs[self.monitor]

    def _improved(self, value) -> bool:
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta


class EarlyStopping(_Monitor):
    """Stop when ``monitor`` has not improved for ``patience`` epochs; optionally restore the
    weights of the best epoch."""

    def __init__(self, monitor: str = "val_loss", patience: int = 0, min_delta: float = 0.0,
                 mode: str = "auto", restore_best_weights: bool = False):
        super().__init__(monitor, mode, min_delta)
        self.patience, self.restore_best_weights = patience, restore_best_weights

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights = 0, None, None
        self.best = math.inf if self.mode == "min" else -math.inf

    def on_epoch_end(self, epoch, logs=None):
        value = self._current(logs)
        if self._improved(value):
            self.best, self.wait = value, 0
            if self.restore_best_weights:
                self.best_weights = {k: v.clone() for k, v in
                                     self.model.module.state_dict().items()}
            return
        self.wait += 1
        if self.wait > self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.best_weights is not None:
            self.model.module.load_state_dict(self.best_weights)


class ModelCheckpoint(_Monitor):
    """Save the model (``Model.save``) after each epoch, or only when ``monitor`` improves.
    ``path`` may contain ``{epoch}`` and logged keys, e.g. ``"ckpt/e{epoch:02d}"``."""

    def __init__(self, path: str, monitor: str = "val_loss", save_best_only: bool = False,
                 mode: str = "auto"):
        super().__init__(monitor, mode)
        self.path, self.save_best_only = path, save_best_only

    def on_epoch_end(self, epoch, logs=None):
        if self.save_best_only:
            value = self._current(logs)
            if not self._improved(value):
                return
            self.best = value
        self.model.save(self.path.format(epoch=epoch + 1, **(logs or {})))


class LearningRateScheduler(Callback):
    """Set the learning rate each epoch: ``schedule(epoch, lr) -> lr``, or step an
    ``fw.optim.lr_scheduler`` object once per epoch."""

    def __init__(self, schedule):
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        if callable(self.schedule) and not hasattr(self.schedule, "step"):
            for group in self.model.optimizer.param_groups:
                group["lr"] = float(self.schedule(epoch, group["lr"]))

    def on_epoch_end(self, epoch, logs=None):
        if hasattr(self.schedule, "step"):
            if type(self.schedule).__name__ == "ReduceLROnPlateau":
                self.schedule.step(logs.get("val_loss", logs.get("loss")))
            else:
                self.schedule.step()
        if logs is not None:
            logs["lr"] = self.model.optimizer.param_groups[0]["lr"]


class CSVLogger(Callback):
    """Append one CSV row of logs per epoch to ``path`` (header written once)."""

    def __init__(self, path: str, append: bool = False):
        self.path, self.append = path, append

    def on_train_begin(self, logs=None):
        self._keys = None
        if not self.append and os.path.exists(self.path):
            os.remove(self.path)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        new_file = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        if self._keys is None:
            self._keys = ["epoch", *sorted(logs)]
        with open(self.path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self._keys, extrasaction="ignore")
            if new_file:
                writer.writeheader()
            writer.writerow({"epoch": epoch, **logs})


class TerminateOnNaN(Callback):
    """Stop training as soon as the batch loss is NaN or infinite."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(f"TerminateOnNaN: batch {batch} has loss {loss}; stopping")
            self.model.stop_training = True
            self.model._stop_now = True


class LambdaCallback(Callback):
    """A callback from plain functions: ``LambdaCallback(on_epoch_end=lambda e, logs: ...)``."""

    def __init__(self, **hooks):
        allowed = {"on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
                   "on_train_batch_begin", "on_train_batch_end"}
        unknown = set(hooks) - allowed
        if unknown:
            raise ValueError(f"LambdaCallback: unknown hooks {sorted(unknown)}; use "
                             f"{sorted(allowed)}")
        for name, fn in hooks.items():
            setattr(self, name, fn)
