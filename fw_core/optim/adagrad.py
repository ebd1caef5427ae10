"""Adagrad: per-coordinate learning rates from the sum of all past squared gradients."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_number,
    implementation_flags,
    step_state,
    zeros_state,
)


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t`:

    .. math::
        g &= g + \lambda\theta, \qquad s = s + g^2 \\
        \theta &= \theta - \frac{\gamma}{1 + (t - 1)\eta}\,\frac{g}{\sqrt{s} + \epsilon}

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        lr_decay: :math:`\eta` (>= 0), decays the learning rate with the step count.
        weight_decay: L2 penalty :math:`\lambda` (>= 0).
        initial_accumulator_value: starting value of the sum :math:`s` (>= 0).
        eps: :math:`\epsilon` (>= 0), added to the denominator.
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, fused: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.

    State per parameter (created with the optimizer, as in PyTorch): ``step`` and ``sum``.
    A parameter group may set its own ``initial_accumulator_value`` (PyTorch uses the
    constructor's value for every group).
    """

    update_op, update_state = "adagrad_update", ("sum",)

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "maximize": maximize,
                    **implementation_flags(foreach, differentiable, fused=fused)}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group, self.state[p])

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["sum"] = zeros_state(p, group["initial_accumulator_value"])

    def _check(self, group):
        check_number(self, group, "lr", hint="a learning rate is >= 0, typically 1e-2")
        check_number(self, group, "lr_decay", hint="lr_decay is >= 0 (0 disables it)")
        check_number(self, group, "weight_decay", hint="weight decay is >= 0")
        check_number(self, group, "initial_accumulator_value",
                     hint="the accumulator starts at a value >= 0, usually 0")
        check_number(self, group, "eps", hint="eps is a small positive number, e.g. 1e-10")

    def _scalars(self, group):
        return {key: group[key] for key in ("lr", "lr_decay", "eps", "weight_decay", "maximize")}
