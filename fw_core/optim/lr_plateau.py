"""ReduceLROnPlateau: lower the learning rate when a watched metric stops improving."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from ..ops.meta import describe
from .lr_scheduler import LRScheduler, _per_group, _require, _require_optimizer
from .optimizer import ArgumentError, Optimizer


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric stops improving for more than
    ``patience`` epochs. Call ``step(metric)`` after each evaluation.

    Args:
        optimizer: the optimizer.
        mode: ``"min"`` (the metric should fall, e.g. a loss) or ``"max"`` (e.g. accuracy).
        factor: multiplier of the learning rate, < 1.
        patience: epochs without improvement tolerated before reducing.
        threshold: how much better counts as an improvement: relative
            (``threshold_mode="rel"``: better than ``best * (1 -/+ threshold)``) or absolute
            (``"abs"``: better than ``best -/+ threshold``).
        cooldown: epochs to wait after a reduction before counting bad epochs again.
        min_lr: lower bound of the learning rate, or one per group.
        eps: reductions smaller than this are skipped.

    >>> sched = ReduceLROnPlateau(opt, mode="min", patience=5)
    >>> for epoch in range(100):
    ...     train(); sched.step(validation_loss())
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0, eps: float = 1e-8):
        _require(factor < 1.0, self, f"factor must be < 1, got {factor!r}",
                 hint="the lr is multiplied by factor on a plateau, e.g. factor=0.1",
                 factor=factor)
        _require_optimizer(self, optimizer)
        _require(mode in ("min", "max"), self, f"mode must be 'min' or 'max', got {mode!r}",
                 hint="'min' for a loss, 'max' for an accuracy", mode=mode)
        _require(threshold_mode in ("rel", "abs"), self,
                 f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}",
                 hint="'rel' compares by ratio, 'abs' by difference",
                 threshold_mode=threshold_mode)
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _per_group(self, "min_lr", min_lr, optimizer)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record one evaluation of the metric; reduce the lr if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn("ReduceLROnPlateau.step(metric, epoch) is deprecated; omit epoch",
                          UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise ArgumentError(
                    f"the optimizer now has {len(groups)} parameter groups but min_lr gives "
                    f"{len(self.min_lrs)}", op="ReduceLROnPlateau",
                    inputs=describe(min_lrs=self.min_lrs),
                    hint="set scheduler.min_lrs to one value per group after add_param_group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold
