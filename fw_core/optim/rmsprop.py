"""RMSprop: divide the gradient by a running root-mean-square of recent gradients."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_number,
    implementation_flags,
    step_state,
    zeros_state,
)


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``):

    .. math::
        g &= g + \lambda\theta, \qquad v = \alpha v + (1 - \alpha) g^2 \\
        s &= \sqrt{v} + \epsilon, \text{ or (centered) } \sqrt{v - \bar g^2} + \epsilon
             \text{ with } \bar g = \alpha \bar g + (1 - \alpha) g \\
        b &= \mu b + g / s, \quad \theta = \theta - \gamma b
             \quad\text{(or } \theta = \theta - \gamma g / s \text{ without momentum)}

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        alpha: smoothing constant :math:`\alpha` (>= 0) of the squared-gradient average.
        eps: :math:`\epsilon` (>= 0), added to the denominator.
        weight_decay: L2 penalty :math:`\lambda` (>= 0).
        momentum: momentum factor :math:`\mu` (>= 0).
        centered: normalise by an estimate of the gradient's variance instead of its second
            moment.
        maximize: ascend the objective instead of descending it.
        capturable, foreach, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.

    State per parameter: ``step``, ``square_avg``, and ``momentum_buffer`` (momentum > 0),
    ``grad_avg`` (centered).
    """

    update_op = "rmsprop_update"

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False):
        defaults = {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                    "momentum": momentum, "centered": centered, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_number(self, group, "lr", hint="a learning rate is >= 0, typically 1e-3 to 1e-2")
        check_number(self, group, "alpha", hint="alpha is >= 0, typically 0.99")
        check_number(self, group, "eps", hint="eps is a small positive number, e.g. 1e-8")
        check_number(self, group, "weight_decay", hint="weight decay is >= 0")
        check_number(self, group, "momentum", hint="momentum is >= 0, e.g. 0.9")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["square_avg"] = zeros_state(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)

    def _state_keys(self, group):
        return ("square_avg", "grad_avg" if group["centered"] else None,
                "momentum_buffer" if group["momentum"] > 0 else None)

    def _scalars(self, group):
        return {key: group[key] for key in ("lr", "alpha", "eps", "weight_decay", "momentum",
                                            "maximize")}

    def _step_scalars(self, step, state, group):
        return {}
