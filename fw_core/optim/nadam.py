"""NAdam: Adam with Nesterov momentum, its momentum coefficient warmed up over the steps."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_moment_options,
    check_number,
    implementation_flags,
    moment_scalars,
    step_state,
    zeros_state,
)


class NAdam(Optimizer):
    r"""NAdam (Dozat), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t`, with :math:`\mu_t = \beta_1(1 - \tfrac12 0.96^{t\psi})` and
    :math:`\Pi_t = \prod_{i \le t} \mu_i`:

    .. math::
        g &= g + \lambda\theta \quad\text{(or } \theta = \theta(1 - \gamma\lambda)
             \text{ with decoupled weight decay)} \\
        m &= \beta_1 m + (1 - \beta_1) g, \qquad v = \beta_2 v + (1 - \beta_2) g^2,
        \qquad s = \sqrt{v / (1 - \beta_2^t)} + \epsilon \\
        \theta &= \theta - \gamma\frac{1 - \mu_t}{1 - \Pi_t}\frac{g}{s}
                  - \gamma\frac{\mu_{t+1}}{1 - \Pi_t\mu_{t+1}}\frac{m}{s}

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        betas: :math:`(\beta_1, \beta_2)`, each in [0, 1).
        eps: :math:`\epsilon` (>= 0).
        weight_decay: :math:`\lambda` (>= 0).
        momentum_decay: :math:`\psi` (>= 0), how fast :math:`\mu_t` approaches :math:`\beta_1`.
        decoupled_weight_decay: decay the weights directly (as AdamW) instead of adding
            :math:`\lambda\theta` to the gradient (NAdamW).
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``mu_product`` (:math:`\Pi_t`, a float32 0-d tensor as in
    PyTorch, so it rounds the same), ``exp_avg`` and ``exp_avg_sq``.

    >>> opt = fw.optim.NAdam(model.parameters(), lr=2e-3)
    """

    _scalar_state = ("step", "mu_product")

    update_op, update_state = "nadam_update", ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_moment_options(self, group, "2e-3")
        check_number(self, group, "momentum_decay", hint="momentum_decay is >= 0, e.g. 4e-3")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["mu_product"] = step_state(1.0)
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _scalars(self, group):
        return moment_scalars(group)

    def _step_scalars(self, step, state, group):
        # the momentum schedule is host arithmetic on the step; the kernel gets coefficients
        lr, momentum_decay = group["lr"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        product = state["mu_product"]._data
        product *= mu
        mu_product = float(product)
        mu_product_next = mu_product * mu_next
        return {"bias_correction2": 1 - beta2 ** step,
                "grad_coef": -lr * (1.0 - mu) / (1.0 - mu_product),
                "avg_coef": (-lr * mu_next) / (1.0 - mu_product_next)}
