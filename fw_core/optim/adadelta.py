"""Adadelta: step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_number,
    implementation_flags,
    step_state,
    zeros_state,
)


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``):

    .. math::
        g &= g + \lambda\theta, \qquad v = \rho v + (1 - \rho) g^2 \\
        \Delta &= \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}}\, g, \qquad
        u = \rho u + (1 - \rho) \Delta^2, \qquad \theta = \theta - \gamma \Delta

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0), scaling the delta.
        rho: :math:`\rho` in [0, 1], the decay of both running averages.
        eps: :math:`\epsilon` (>= 0), inside both square roots.
        weight_decay: L2 penalty :math:`\lambda` (>= 0).
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``square_avg`` (:math:`v`) and ``acc_delta`` (:math:`u`).

    >>> opt = fw.optim.Adadelta(model.parameters())
    """

    update_op, update_state = "adadelta_update", ("square_avg", "acc_delta")

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_number(self, group, "lr", hint="Adadelta's learning rate is >= 0, usually 1.0")
        check_number(self, group, "rho", high=1.0, high_open=False,
                     hint="rho is in [0, 1], typically 0.9")
        check_number(self, group, "eps", hint="eps is a small positive number, e.g. 1e-6")
        check_number(self, group, "weight_decay", hint="weight decay is >= 0")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["square_avg"] = zeros_state(p)
        state["acc_delta"] = zeros_state(p)

    def _scalars(self, group):
        return {key: group[key] for key in ("lr", "rho", "eps", "weight_decay", "maximize")}

    def _step_scalars(self, step, state, group):
        return {}
