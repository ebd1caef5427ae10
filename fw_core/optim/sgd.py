"""SGD: stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.meta import describe
from .optimizer import (
    ArgumentError,
    Optimizer,
    check_number,
    implementation_flags,
    run_update,
    zeros_state,
)


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``):

    .. math::
        d &= g + \lambda\theta \\
        b &= d \text{ at the first step, else } \mu b + (1 - \tau) d \\
        d &= d + \mu b \text{ (nesterov) or } b \\
        \theta &= \theta - \gamma d

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        momentum: momentum factor :math:`\mu` (>= 0; 0 disables the buffer).
        dampening: :math:`\tau`, how much of the new gradient is damped in the buffer.
        weight_decay: L2 penalty :math:`\lambda` (>= 0), added to the gradient.
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, fused: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.

    State per parameter: ``momentum_buffer`` (when momentum != 0).

    >>> opt = fw.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> loss.backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None):
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, fused=fused)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_number(self, group, "lr", hint="a learning rate is >= 0, typically 1e-3 to 1")
        check_number(self, group, "momentum", hint="momentum is >= 0, typically 0.9")
        check_number(self, group, "dampening", low=None)
        check_number(self, group, "weight_decay", hint="weight decay is >= 0, e.g. 1e-4")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ArgumentError(
                f"Nesterov momentum needs momentum > 0 and dampening 0, got momentum="
                f"{group['momentum']!r}, dampening={group['dampening']!r}", op="SGD",
                inputs=describe(nesterov=True, momentum=group["momentum"],
                                dampening=group["dampening"]),
                hint="set momentum (e.g. 0.9) and dampening=0, or nesterov=False")

    def _update(self, group):
        lr = group["lr"]
        weight_decay = group["weight_decay"]
        momentum = group["momentum"]
        dampening = group["dampening"]
        nesterov = group["nesterov"]
        maximize = group["maximize"]
        for p, g, state in self._with_grad(group):
            buf, first = state.get("momentum_buffer"), False
            if momentum != 0 and buf is None:
                buf, first = state.setdefault("momentum_buffer", zeros_state(p)), True
            run_update("sgd_update", p, (p._data, g, None if buf is None else buf._data),
                       {"lr": lr, "momentum": momentum, "dampening": dampening,
                        "weight_decay": weight_decay, "nesterov": nesterov,
                        "maximize": maximize, "first": first})
