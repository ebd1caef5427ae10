"""ASGD: stochastic gradient descent with a decaying step and a running average of the
iterates (Polyak-Ruppert averaging)."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    Optimizer,
    check_number,
    implementation_flags,
    step_state,
    zeros_state,
)


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak & Juditsky), step for step as PyTorch.

    For each parameter :math:`\theta` with gradient :math:`g` (:math:`-g` with ``maximize``),
    at step :math:`t` (:math:`\eta_1 = \gamma`, :math:`\mu_1 = 1`):

    .. math::
        g &= g + \lambda\theta, \qquad
        \theta = \theta(1 - \lambda_d\eta_t) - \eta_t g \\
        \bar\theta &= \bar\theta + \mu_t(\theta - \bar\theta) \quad (\bar\theta = \theta
        \text{ while } \mu_t = 1) \\
        \eta_{t+1} &= \gamma / (1 + \lambda_d\gamma t)^\alpha, \qquad
        \mu_{t+1} = 1 / \max(1, t - t_0)

    The average :math:`\bar\theta` is ``state["ax"]``; copy it into the parameters to use it.

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma` (>= 0).
        lambd: decay term :math:`\lambda_d`.
        alpha: power :math:`\alpha` of the step-size decay.
        t0: the step :math:`t_0` after which averaging starts.
        weight_decay: L2 penalty :math:`\lambda` (>= 0).
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``eta`` and ``mu`` (float32 0-d tensors, as in PyTorch),
    ``ax``.

    >>> opt = fw.optim.ASGD(model.parameters(), lr=1e-2, t0=100)
    """

    _scalar_state = ("step", "eta", "mu")

    update_op, update_state = "asgd_update", ("ax",)

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_number(self, group, "lr", hint="a learning rate is >= 0, typically 1e-2")
        check_number(self, group, "weight_decay", hint="weight decay is >= 0")
        for name in ("lambd", "alpha", "t0"):
            check_number(self, group, name, low=None)

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["eta"] = step_state(group["lr"])
        state["mu"] = step_state(1.0)
        state["ax"] = zeros_state(p)

    def _scalars(self, group):
        return {key: group[key] for key in ("lambd", "weight_decay", "maximize")}

    def _step_scalars(self, step, state, group):
        # eta and mu are host schedules: this step uses their values, then they advance
        eta, mu = state["eta"]._data, state["mu"]._data
        scalars = {"eta": float(eta), "mu": float(mu)}
        lr, lambd = group["lr"], group["lambd"]
        eta[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        mu[...] = 1 / max(1, step - group["t0"])
        return scalars
