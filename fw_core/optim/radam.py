"""RAdam: Adam whose adaptive step is switched on only once its variance estimate is
reliable, and rectified by how reliable it is."""

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


class RAdam(Optimizer):
    r"""RAdam (Liu et al.), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t`, with :math:`\rho_\infty = 2/(1 - \beta_2) - 1` and
    :math:`\rho_t = \rho_\infty - 2t\beta_2^t/(1 - \beta_2^t)`:

    .. math::
        g &= g + \lambda\theta \quad\text{(or } \theta = \theta(1 - \gamma\lambda)
             \text{ with decoupled weight decay)} \\
        m &= \beta_1 m + (1 - \beta_1) g, \qquad v = \beta_2 v + (1 - \beta_2) g^2,
        \qquad \hat m = m / (1 - \beta_1^t) \\
        \theta &= \theta - \gamma\hat m\, r_t \frac{\sqrt{1 - \beta_2^t}}{\sqrt v + \epsilon}
        \text{ if } \rho_t > 5 \text{, else } \theta - \gamma\hat m

    where :math:`r_t = \sqrt{(\rho_t - 4)(\rho_t - 2)\rho_\infty /
    ((\rho_\infty - 4)(\rho_\infty - 2)\rho_t)}`.

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        betas: :math:`(\beta_1, \beta_2)`, each in [0, 1).
        eps: :math:`\epsilon` (>= 0).
        weight_decay: :math:`\lambda` (>= 0).
        decoupled_weight_decay: decay the weights directly (as AdamW) instead of adding
            :math:`\lambda\theta` to the gradient.
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``exp_avg`` and ``exp_avg_sq``.

    >>> opt = fw.optim.RAdam(model.parameters(), lr=1e-3)
    """

    update_op, update_state = "radam_update", ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_moment_options(self, group, "1e-3")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _scalars(self, group):
        return moment_scalars(group)
