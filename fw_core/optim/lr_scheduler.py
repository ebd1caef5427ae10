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


# The composite, cyclic and plateau schedulers live in sibling files (each file one kind of
# schedule) and build on the classes above, so they are imported last; this module is the one
# namespace (fw.optim.lr_scheduler.X, as torch.optim.lr_scheduler.X).
from .lr_composite import ChainedScheduler, SequentialLR  # noqa: E402
from .lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: E402
from .lr_plateau import ReduceLROnPlateau  # noqa: E402
