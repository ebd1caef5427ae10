"""Adamax: Adam with the second moment replaced by an exponentially weighted infinity norm."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_moment_options,
    implementation_flags,
    moment_scalars,
    step_state,
    zeros_state,
)


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba, section 7), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t`:

    .. math::
        g &= g + \lambda\theta, \qquad m = \beta_1 m + (1 - \beta_1) g, \qquad
        u = \max(\beta_2 u, |g| + \epsilon) \\
        \theta &= \theta - \frac{\gamma}{1 - \beta_1^t}\,\frac{m}{u}

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        betas: :math:`(\beta_1, \beta_2)`, each in [0, 1).
        eps: :math:`\epsilon` (>= 0), keeps :math:`u` away from 0.
        weight_decay: L2 penalty :math:`\lambda` (>= 0).
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``exp_avg`` (:math:`m`) and ``exp_inf`` (:math:`u`).

    >>> opt = fw.optim.Adamax(model.parameters(), lr=2e-3)
    """

    update_op, update_state = "adamax_update", ("exp_avg", "exp_inf")

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_moment_options(self, group, "2e-3")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["exp_avg"] = zeros_state(p)
        state["exp_inf"] = zeros_state(p)

    def _scalars(self, group):
        return moment_scalars(group, decoupled=False)
