"""Learning-rate schedulers: change ``group["lr"]`` of an optimizer as training goes on.

Every formula (and whether it is applied recursively to the current lr or in closed form from
the initial one) is PyTorch 2.13's, so a schedule gives the same floats as there. Call
``scheduler.step()`` once per epoch (or batch, for OneCycleLR) *after* ``optimizer.step()``.

>>> opt = fw.optim.SGD(params, lr=0.1)
>>> sched = fw.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
>>> for epoch in range(100):
...     train_one_epoch(); sched.step()
"""

from __future__ import annotations

import copy
import math
import numbers
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import ArgumentTypeError
from ..ops.meta import describe
from .optimizer import ArgumentError, Optimizer

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
           "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
           "StepLR"]


def _require_optimizer(scheduler, optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise ArgumentTypeError(f"needs an fw optimizer, got {type(optimizer).__name__}",
                                op=type(scheduler).__name__,
                                inputs=describe(optimizer=optimizer),
                                hint="pass the optimizer itself, e.g. StepLR(opt, step_size=10)")


def _require(ok: bool, scheduler, message: str, hint: str | None = None, **arrived) -> None:
    """Raise ArgumentError naming ``scheduler`` unless ``ok``; ``arrived`` are the arguments
    at fault, for the error's inputs line."""
    if not ok:
        raise ArgumentError(message, op=type(scheduler).__name__, inputs=describe(**arrived),
                            hint=hint or "see the scheduler's docstring for the valid values")


def _check_gamma(scheduler, gamma) -> None:
    _require(isinstance(gamma, numbers.Real) and not isinstance(gamma, bool) and gamma > 0,
             scheduler, f"gamma must be a number > 0, got {gamma!r}",
             hint="gamma multiplies the learning rate: a negative one makes it negative, e.g. "
             "gamma=0.1", gamma=gamma)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _per_group(scheduler, name: str, value, optimizer) -> list:
    """``value`` for each param group: a list of that length, or one value repeated."""
    if isinstance(value, (list, tuple)):
        _require(len(value) == len(optimizer.param_groups), scheduler,
                 f"{name} has {len(value)} values but the optimizer has "
                 f"{len(optimizer.param_groups)} parameter groups",
                 hint=f"give one {name} per group, or a single number for all", **{name: value})
        return list(value)
    return [value] * len(optimizer.param_groups)


def _start_momentum_cycle(scheduler, optimizer, base_momentum, max_momentum,
                          last_epoch: int) -> tuple[list, list]:
    """For a schedule that cycles momentum (OneCycleLR, CyclicLR): check the optimizer has
    one (SGD's ``momentum`` or Adam's beta1, ``scheduler.use_beta1``), and on a fresh start set
    it to ``max_momentum`` and record both bounds in each group. Returns (lows, highs)."""
    defaults = optimizer.defaults
    _require("momentum" in defaults or "betas" in defaults, scheduler,
             f"cycle_momentum needs an optimizer with momentum or betas; "
             f"{type(optimizer).__name__} has neither",
             hint="pass cycle_momentum=False", optimizer=optimizer)
    scheduler.use_beta1 = "betas" in defaults
    highs = _per_group(scheduler, "max_momentum", max_momentum, optimizer)
    lows = _per_group(scheduler, "base_momentum", base_momentum, optimizer)
    if last_epoch == -1:
        for high, low, group in zip(highs, lows, optimizer.param_groups):
            _set_momentum(scheduler, group, high)
            group["max_momentum"] = high
            group["base_momentum"] = low
    return lows, highs


def _set_momentum(scheduler, group: dict, momentum: float) -> None:
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class LRScheduler:
    """Base class: holds the optimizer, the initial learning rates and the step count.

    Subclasses compute the next learning rates in :meth:`get_lr` (from the current
    ``group["lr"]``: chainable with other schedulers) and may give a closed form in
    ``_get_closed_form_lr`` (used when a step is given an explicit epoch).

    Args:
        optimizer: the optimizer whose learning rates are scheduled.
        last_epoch: index of the last epoch; -1 starts the schedule (and records each group's
            ``initial_lr``). Resuming from a checkpoint is done with :meth:`load_state_dict`.

    Attributes:
        base_lrs: the initial learning rate of each group.
        last_epoch: how many times :meth:`step` has run.
    """

    _not_saved: tuple[str, ...] = ("optimizer",)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        _require_optimizer(self, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise ArgumentError(
                        f"parameter group {i} has no 'initial_lr', so the schedule cannot "
                        f"resume from last_epoch={last_epoch}", op=type(self).__name__,
                        inputs=describe(last_epoch=last_epoch),
                        hint="load the optimizer's state dict first (it carries initial_lr), "
                        "or start a fresh schedule with last_epoch=-1")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rate of each group for the epoch ``self.last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr")

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new rates into the optimizer.

        ``epoch`` (deprecated, as in PyTorch: a UserWarning) jumps to that epoch using the
        closed form.
        """
        if self._step_count == 1 and getattr(self.optimizer, "_step_calls", 1) == 0:
            warnings.warn("lr_scheduler.step() was called before optimizer.step(): the first "
                          "learning rate of the schedule is skipped. Call optimizer.step() "
                          "first, then scheduler.step()", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn("scheduler.step(epoch) is deprecated; call scheduler.step() once per "
                          "epoch", UserWarning, stacklevel=2)  # PyTorch's category
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """A copy of the scheduler's state (everything but the optimizer)."""
        return copy.deepcopy({k: v for k, v in self.__dict__.items()
                              if k not in self._not_saved})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`'s result (load the optimizer's state too)."""
        if not isinstance(state_dict, dict):
            raise ArgumentError(f"load_state_dict expects a dict, got "
                                f"{type(state_dict).__name__}", op=type(self).__name__,
                                inputs=describe(state_dict=state_dict),
                                hint="pass what scheduler.state_dict() returned")
        self.__dict__.update(copy.deepcopy({k: v for k, v in state_dict.items()
                                            if k not in self._not_saved}))


class _LRScheduler(LRScheduler):
    """PyTorch's former name of :class:`LRScheduler`, which older custom schedulers subclass."""


class _FactorFunctionsLR(LRScheduler):
    """What LambdaLR and MultiplicativeLR share: one factor function per group, whose state is
    saved only for callable objects (not functions or lambdas), as in PyTorch."""

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence,
                 last_epoch: int = -1):
        _require_optimizer(self, optimizer)
        self.lr_lambdas = _per_group(self, "lr_lambda", lr_lambda, optimizer)
        for fn in self.lr_lambdas:
            _require(callable(fn), self, f"lr_lambda must be callable, got {fn!r}",
                     hint="e.g. lr_lambda=lambda epoch: 0.95 ** epoch", lr_lambda=lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = super().state_dict()
        state["lr_lambdas"] = [_callable_state(fn) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        for fn, saved in zip(self.lr_lambdas, state_dict.get("lr_lambdas", ())):
            _load_callable_state(fn, saved)


def _callable_state(fn) -> dict | None:
    """What a state dict keeps of a user function: a callable object's attributes, nothing of
    a function or lambda (PyTorch's rule: those cannot be pickled portably)."""
    return None if fn is None or isinstance(fn, types.FunctionType) else copy.deepcopy(
        fn.__dict__)


def _load_callable_state(fn, saved: dict | None) -> None:
    if saved is not None:
        fn.__dict__.update(copy.deepcopy(saved))


class LambdaLR(_FactorFunctionsLR):
    """``lr = initial_lr * lr_lambda(epoch)``: any schedule written as a function (warm-up...).

    Args:
        optimizer: the optimizer.
        lr_lambda: a function of the epoch giving a factor, or one function per group.

    Only callable objects (not functions or lambdas) have their state saved by
    :meth:`state_dict`, as in PyTorch.
    """

    def get_lr(self):
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas,
                                                                        self.base_lrs)]


class MultiplicativeLR(_FactorFunctionsLR):
    """``lr = lr * lr_lambda(epoch)`` every epoch after the first: a factor function applied
    to the current learning rate (so it compounds, and chains with other schedulers).

    Args:
        optimizer: the optimizer.
        lr_lambda: a function of the epoch giving a factor, or one function per group.

    >>> sched = MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
    """

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [group["lr"] for group in groups]
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, groups)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    >>> sched = StepLR(opt, step_size=30, gamma=0.1)   # lr 0.1, then 0.01 from epoch 30, ...
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        _require(_is_number(step_size) and step_size > 0, self,
                 f"step_size must be a positive number, got {step_size!r}",
                 hint="the number of epochs between two decays, e.g. step_size=30",
                 step_size=step_size)
        _check_gamma(self, gamma)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch listed in ``milestones``.

    >>> sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1):
        milestones = list(milestones)
        _require(all(_is_int(m) for m in milestones), self,
                 f"milestones must be integers (epoch indices), got {milestones!r}",
                 hint="list the epochs where the lr drops, e.g. milestones=[30, 80]",
                 milestones=milestones)
        _check_gamma(self, gamma)
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [group["lr"] for group in self.optimizer.param_groups]
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        _check_gamma(self, gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then keep it (a linear warm-up or decay).

    >>> sched = LinearLR(opt, start_factor=0.1, total_iters=5)   # warm up over 5 epochs
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1):
        _require(0 < start_factor <= 1, self,
                 f"start_factor must be in (0, 1], got {start_factor!r}",
                 hint="the first epoch's lr is start_factor * lr, e.g. start_factor=0.1",
                 start_factor=start_factor)
        _require(0 <= end_factor <= 1, self, f"end_factor must be in [0, 1], got {end_factor!r}",
                 end_factor=end_factor)
        _require(_is_int(total_iters) and total_iters >= 0, self,
                 f"total_iters must be an integer >= 0, got {total_iters!r}",
                 total_iters=total_iters)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor
                                 + (self.last_epoch - 1) * change)
        return [group["lr"] * factor for group in groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` for the first ``total_iters`` epochs, then restore
    it (a constant warm-up).

    >>> sched = ConstantLR(opt, factor=0.5, total_iters=4)   # lr/2 for epochs 0-3, then lr
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        _require(_is_number(factor) and 0 <= factor <= 1, self,
                 f"factor must be in [0, 1], got {factor!r}",
                 hint="the lr is multiplied by factor until total_iters, e.g. factor=0.5",
                 factor=factor)
        _require(_is_number(total_iters), self,
                 f"total_iters must be a number of epochs, got {total_iters!r}",
                 total_iters=total_iters)
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in groups]
        if self.last_epoch != self.total_iters:
            return [group["lr"] for group in groups]
        return [group["lr"] * (1.0 / self.factor) for group in groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor)) for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Decay the learning rate polynomially to 0 over ``total_iters`` epochs, then keep it:

    .. math::
        \eta_t = \eta_0 (1 - \min(t, T) / T)^{p}

    applied recursively to the current lr, as PyTorch does.

    >>> sched = PolynomialLR(opt, total_iters=100, power=2.0)
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1):
        _require(_is_number(total_iters) and total_iters >= 0, self,
                 f"total_iters must be a number of epochs >= 0, got {total_iters!r}",
                 hint="the epoch at which the lr reaches 0, e.g. total_iters=100",
                 total_iters=total_iters)
        _require(_is_number(power), self, f"power must be a number, got {power!r}",
                 hint="e.g. power=1.0 (linear decay)", power=power)
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal the learning rate along a cosine from its initial value to ``eta_min`` over
    ``T_max`` epochs (and back up over the next ``T_max``, periodically):

    .. math::
        \eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})(1 + \cos(\pi t / T_{max}))

    applied recursively to the current lr, as PyTorch does, so it chains with other schedulers.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1):
        _require(isinstance(T_max, numbers.Real) and T_max > 0, self,
                 f"T_max must be a positive number of epochs, got {T_max!r}",
                 hint="e.g. T_max=the number of epochs you train", T_max=T_max)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        eta_min, t_max, epoch = self.eta_min, self.T_max, self.last_epoch
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * epoch / t_max))
                / (1 + math.cos(math.pi * (epoch - 1) / t_max))
                * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith): warm the learning rate up from ``max_lr / div_factor`` to
    ``max_lr``, then anneal it to ``initial_lr / final_div_factor``; momentum (SGD's
    ``momentum`` or Adam's beta1) moves the opposite way. Step it after every batch.

    Args:
        optimizer: the optimizer.
        max_lr: peak learning rate, or one per group.
        total_steps: number of steps in the cycle; or give ``epochs`` and ``steps_per_epoch``.
        pct_start: fraction of the cycle spent warming up.
        anneal_strategy: ``"cos"`` or ``"linear"``.
        cycle_momentum: cycle momentum inversely between ``max_momentum`` and
            ``base_momentum`` (each a number or one per group).
        div_factor: ``initial_lr = max_lr / div_factor``.
        final_div_factor: ``min_lr = initial_lr / final_div_factor``.
        three_phase: warm up, come back down symmetrically, then anneal to ``min_lr`` (the
            paper's schedule) instead of two phases (fastai's).

    Raises:
        ArgumentError: bad arguments, or stepping past ``total_steps``.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85,
                 max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1):
        _require_optimizer(self, optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            _require(_is_int(total_steps) and total_steps > 0, self,
                     f"total_steps must be a positive integer, got {total_steps!r}",
                     total_steps=total_steps)
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                _require(_is_int(value) and value > 0, self,
                         f"{name} must be a positive integer, got {value!r}", **{name: value})
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ArgumentError("give total_steps, or both epochs and steps_per_epoch",
                                op="OneCycleLR",
                                inputs=describe(total_steps=total_steps, epochs=epochs,
                                                steps_per_epoch=steps_per_epoch),
                                hint="e.g. OneCycleLR(opt, max_lr=0.1, total_steps=1000)")
        _require(isinstance(pct_start, numbers.Real) and 0 <= pct_start <= 1, self,
                 f"pct_start must be a number in [0, 1], got {pct_start!r}", pct_start=pct_start)
        _require(anneal_strategy in ("cos", "linear"), self,
                 f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}",
                 anneal_strategy=anneal_strategy)
        self.anneal_strategy = anneal_strategy
        warm_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                {"end_step": warm_end, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * self.total_steps) - 2,
                 "start_lr": "max_lr", "end_lr": "initial_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr",
                 "end_lr": "min_lr", "start_momentum": "max_momentum",
                 "end_momentum": "max_momentum"},
            ]
        else:
            self._schedule_phases = [
                {"end_step": warm_end, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]
        max_lrs = _per_group(self, "max_lr", max_lr, optimizer)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _start_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ArgumentError(
                f"stepped {step} times, but total_steps is {self.total_steps}",
                op="OneCycleLR", inputs=describe(step=step, total_steps=self.total_steps),
                hint="set total_steps (or epochs * steps_per_epoch) to the number of batches "
                "you train on")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]],
                                                group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(self, group, momentum)
        return lrs


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


# The composite and cyclic schedulers live in sibling files (each file one kind of schedule)
# and build on the classes above, so they are imported last; this module is the one namespace
# (fw.optim.lr_scheduler.X, as torch.optim.lr_scheduler.X).
from .lr_composite import ChainedScheduler, SequentialLR  # noqa: E402
from .lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR  # noqa: E402
