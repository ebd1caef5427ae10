"""Schedulers made of schedulers: SequentialLR runs them one after another, ChainedScheduler
steps them all together (their factors multiply)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from .lr_plateau import ReduceLROnPlateau
from .lr_scheduler import LRScheduler, _require, _require_optimizer
from .optimizer import Optimizer


class _CompositeLR(LRScheduler):
    """What the composites share: checking their members and saving each member's state."""

    _not_saved = ("optimizer", "_schedulers")

    def _check_members(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler]) -> None:
        _require(len(schedulers) >= 1, self, "needs at least one scheduler",
                 hint=f"{type(self).__name__}(opt, [warmup, decay], ...)",
                 schedulers=schedulers)
        for i, scheduler in enumerate(schedulers):
            _require(not isinstance(scheduler, ReduceLROnPlateau), self,
                     f"scheduler {i} is a ReduceLROnPlateau, whose step needs a metric",
                     hint=f"call ReduceLROnPlateau.step(metric) yourself, outside "
                     f"{type(self).__name__}", schedulers=schedulers)
            _require(isinstance(scheduler, LRScheduler), self,
                     f"scheduler {i} is a {type(scheduler).__name__}, not an LRScheduler",
                     hint="pass schedulers such as StepLR(opt, 10)", schedulers=schedulers)
            _require(scheduler.optimizer is optimizer, self,
                     f"scheduler {i} ({type(scheduler).__name__}) belongs to another optimizer",
                     hint=f"build every scheduler on the optimizer given to "
                     f"{type(self).__name__}", schedulers=schedulers)

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        saved = state_dict.get("_schedulers", [])
        _require(len(saved) == len(self._schedulers), self,
                 f"the state dict holds {len(saved)} schedulers, this one has "
                 f"{len(self._schedulers)}", hint="build the same schedulers as when saved",
                 schedulers=self._schedulers)
        for scheduler, state in zip(self._schedulers, saved):
            scheduler.load_state_dict(state)


class SequentialLR(_CompositeLR):
    """Run schedulers one after another, switching at the ``milestones`` epochs.

    >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
    >>> cosine = CosineAnnealingLR(opt, T_max=95)
    >>> sched = SequentialLR(opt, [warmup, cosine], milestones=[5])
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1):
        _require_optimizer(self, optimizer)
        self._check_members(optimizer, schedulers)
        _require(len(milestones) == len(schedulers) - 1, self,
                 f"expects one milestone fewer than schedulers, got {len(schedulers)} "
                 f"schedulers and {len(milestones)} milestones",
                 hint="milestones are the epochs where the next scheduler takes over",
                 schedulers=schedulers, milestones=milestones)
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        # undo the step each scheduler took when it was built, then start the first one
        for scheduler in self._schedulers:
            _undo_initial_step(scheduler)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one epoch with the scheduler in charge (restarted at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_initial_step(scheduler) -> None:
    inner = getattr(scheduler, "_schedulers", None)
    if inner is not None:
        for s in inner:
            _undo_initial_step(s)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(_CompositeLR):
    """Step several schedulers of one optimizer together, in order, every epoch: each applies
    its factor to the learning rate the previous one left, so their effects multiply.

    Args:
        schedulers: the schedulers, built on the same optimizer (recursive ones: StepLR,
            ExponentialLR, CosineAnnealingLR, ...).
        optimizer: that optimizer (default: the first scheduler's).

    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2),
    ...                           ExponentialLR(opt, gamma=0.9)])
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None):
        if optimizer is None and len(schedulers) and hasattr(schedulers[0], "optimizer"):
            optimizer = schedulers[0].optimizer
        self._check_members(optimizer, schedulers)
        _require_optimizer(self, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
