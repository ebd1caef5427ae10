"""Cyclic learning-rate schedules: CyclicLR (triangular waves between two bounds, momentum
the other way), CosineAnnealingWarmRestarts (SGDR: cosine decays that restart) and OneCycleLR
(one warm-up and one annealing, momentum the other way)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

from ..ops.meta import describe
from .lr_scheduler import (
    LRScheduler,
    _callable_state,
    _is_int,
    _is_number,
    _load_callable_state,
    _per_group,
    _require,
    _require_optimizer,
    _set_momentum,
    _start_momentum_cycle,
)
from .optimizer import ArgumentError, Optimizer

_MODES = ("triangular", "triangular2", "exp_range")


class CyclicLR(LRScheduler):
    """Cycle the learning rate between ``base_lr`` and ``max_lr`` (Smith, "Cyclical Learning
    Rates"): up over ``step_size_up`` steps, down over ``step_size_down``, the amplitude
    scaled per cycle (``"triangular"``: 1, ``"triangular2"``: halved each cycle) or per step
    (``"exp_range"``: ``gamma ** step``), or by your ``scale_fn``. Step it after every batch.

    Args:
        optimizer: the optimizer; building the scheduler sets its lr to ``base_lr``.
        base_lr, max_lr: the bounds, each a number or one per group.
        step_size_up, step_size_down: steps of the rising and falling halves (down defaults to
            up).
        mode: ``"triangular"``, ``"triangular2"`` or ``"exp_range"``; ignored with ``scale_fn``.
        gamma: the base of ``"exp_range"``'s scale.
        scale_fn: a custom scale of the amplitude, a function of the cycle number
            (``scale_mode="cycle"``) or of the step (``"iterations"``), in [0, 1].
        cycle_momentum: move momentum (SGD's ``momentum`` or Adam's beta1) inversely between
            ``max_momentum`` and ``base_momentum`` (numbers or one per group).
        last_epoch: the index of the last batch (to resume; load the state dict instead).

    Only a callable object given as ``scale_fn`` (not a function or lambda) has its state
    saved by :meth:`state_dict`, as in PyTorch.

    >>> sched = CyclicLR(opt, base_lr=1e-3, max_lr=0.1, step_size_up=500, mode="triangular2")
    """

    _not_saved = ("optimizer", "_scale_fn_custom")

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float],
                 max_lr: float | Sequence[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.8,
                 max_momentum: float | Sequence[float] = 0.9, last_epoch: int = -1):
        _require_optimizer(self, optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group(self, "base_lr", base_lr, optimizer)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group(self, "max_lr", max_lr, optimizer)
        for name, value in (("step_size_up", step_size_up), ("step_size_down", step_size_down)):
            _require(value is None or (_is_number(value) and value > 0), self,
                     f"{name} must be a positive number of steps, got {value!r}",
                     hint="e.g. step_size_up=2000 (2-10 epochs of batches)", **{name: value})
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        _require(mode in _MODES or scale_fn is not None, self,
                 f"mode must be one of {', '.join(_MODES)} (or give scale_fn), got {mode!r}",
                 hint="mode='triangular', or scale_fn=lambda cycle: ...", mode=mode)
        _require(scale_fn is None or callable(scale_fn), self,
                 f"scale_fn must be callable, got {scale_fn!r}",
                 hint="e.g. scale_fn=lambda cycle: 0.5 ** cycle", scale_fn=scale_fn)
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        _require(self.scale_mode in ("cycle", "iterations"), self,
                 f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}",
                 hint="'cycle': scale_fn of the cycle number; 'iterations': of the step",
                 scale_mode=scale_mode)
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _start_momentum_cycle(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        # as PyTorch: the first step used the groups' initial_lr, later ones use base_lr
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        # scale_fn is called once per group and value, as PyTorch does (it may keep state)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(at)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momenta = [high - (high - low) * scale_factor * self.scale_fn(at)
                       for low, high in zip(self.base_momentums, self.max_momentums)]
            for group, momentum in zip(self.optimizer.param_groups, momenta):
                _set_momentum(self, group, momentum)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state["_scale_fn_custom"] = _callable_state(self._scale_fn_custom)
        return state

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        _load_callable_state(self._scale_fn_custom, state_dict.get("_scale_fn_custom"))


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""SGDR (Loshchilov & Hutter): anneal the learning rate along a cosine from its initial
    value to ``eta_min`` over ``T_0`` epochs, then restart, each period ``T_mult`` times
    longer than the last:

    .. math::
        \eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})(1 + \cos(\pi T_{cur} / T_i))

    ``step()`` advances one epoch; ``step(epoch)`` jumps to ``epoch``, which may be fractional
    (``step(epoch + i / batches)`` after each batch), without a deprecation warning.

    Args:
        optimizer: the optimizer.
        T_0: epochs until the first restart (a positive integer).
        T_mult: growth of the period after each restart (an integer >= 1).
        eta_min: the lowest learning rate.
        last_epoch: the index of the last epoch.

    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)   # restarts at 10, 30, 70
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1):
        _require(_is_int(T_0) and T_0 > 0, self, f"T_0 must be a positive integer, got {T_0!r}",
                 hint="the epochs until the first restart, e.g. T_0=10", T_0=T_0)
        _require(_is_int(T_mult) and T_mult >= 1, self,
                 f"T_mult must be an integer >= 1, got {T_mult!r}",
                 hint="1 keeps every period T_0 long; 2 doubles each one", T_mult=T_mult)
        _require(_is_number(eta_min), self, f"eta_min must be a number, got {eta_min!r}",
                 hint="the lowest learning rate, e.g. eta_min=1e-5", eta_min=eta_min)
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (fractional epochs allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            _require(epoch >= 0, self, f"epoch must be >= 0, got {epoch!r}",
                     hint="pass the (possibly fractional) epoch count", epoch=epoch)
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


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
