"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import (
    Optimizer,
    check_moment_options,
    implementation_flags,
    moment_scalars,
    step_state,
    zeros_state,
)


class Adam(Optimizer):
    r"""Adam, step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t`:

    .. math::
        g &= g + \lambda\theta \quad\text{(or } \theta = \theta(1 - \gamma\lambda)
             \text{ with decoupled weight decay)} \\
        m &= \beta_1 m + (1 - \beta_1) g, \qquad v = \beta_2 v + (1 - \beta_2) g^2 \\
        \theta &= \theta - \frac{\gamma}{1 - \beta_1^t}\,
                  \frac{m}{\sqrt{v'} / \sqrt{1 - \beta_2^t} + \epsilon}

    where :math:`v' = v`, or its running maximum with ``amsgrad``.

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        betas: :math:`(\beta_1, \beta_2)`, decay rates of the moment averages, each in [0, 1).
        eps: :math:`\epsilon` (>= 0), added to the denominator for stability.
        weight_decay: :math:`\lambda` (>= 0).
        amsgrad: normalise by the running maximum of :math:`v` (AMSGrad).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: decay the weights directly (AdamW) instead of adding
            :math:`\lambda\theta` to the gradient.
        foreach, capturable, differentiable, fused: accepted as PyTorch does and ignored: they
            pick PyTorch's implementation, not the result.

    State per parameter: ``step`` (float32 0-d tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``.

    >>> opt = fw.optim.Adam(model.parameters(), lr=1e-3)
    """

    update_op = "adam_update"

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    **implementation_flags(foreach, differentiable, capturable=capturable,
                                           fused=fused)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_moment_options(self, group, "1e-4 to 1e-2")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(p)

    def _state_keys(self, group):
        return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if group["amsgrad"] else None)

    def _scalars(self, group):
        return moment_scalars(group)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks the
    weights, :math:`\theta = \theta(1 - \gamma\lambda)`, then takes the Adam step; the decay
    never enters the moment averages. Arguments as :class:`Adam`; ``weight_decay`` defaults to
    1e-2.

    >>> opt = fw.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True  # AdamW is always decoupled
