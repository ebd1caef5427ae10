"""Rprop: per-coordinate step sizes that grow while the gradient keeps its sign and shrink
when it flips; only the gradient's sign moves the parameter."""

from __future__ import annotations

from collections.abc import Iterable

from ..ops.meta import describe
from .optimizer import (
    ArgumentError,
    Optimizer,
    check_number,
    check_pair,
    implementation_flags,
    step_state,
    zeros_state,
)


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller & Braun), step for step as PyTorch.

    For each coordinate with gradient :math:`g` (:math:`-g` with ``maximize``) and previous
    (kept) gradient :math:`g'`:

    .. math::
        s &= \operatorname{clamp}(s \cdot \{\eta_+ \text{ if } gg' > 0,\ \eta_- \text{ if }
             gg' < 0,\ 1 \text{ otherwise}\},\ s_{min}, s_{max}) \\
        g &= 0 \text{ where the sign flipped}, \qquad
        \theta = \theta - \operatorname{sign}(g)\, s, \qquad g' = g

    Args:
        params: tensors or parameter groups (see :class:`Optimizer`).
        lr: the initial step size :math:`s` of every coordinate (>= 0).
        etas: :math:`(\eta_-, \eta_+)` with :math:`0 < \eta_- < 1 < \eta_+`.
        step_sizes: :math:`(s_{min}, s_{max})`, the bounds of the step sizes.
        foreach, capturable, differentiable: accepted as PyTorch does and ignored: they pick
            PyTorch's implementation, not the result.
        maximize: ascend the objective instead of descending it.

    State per parameter: ``step``, ``prev`` (:math:`g'`) and ``step_size`` (:math:`s`).

    >>> opt = fw.optim.Rprop(model.parameters(), lr=1e-2)   # full-batch training
    """

    update_op, update_state = "rprop_update", ("prev", "step_size")

    def __init__(self, params: Iterable, lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "maximize": maximize,
                    **implementation_flags(foreach, differentiable, capturable=capturable)}
        super().__init__(params, defaults)

    def _check(self, group):
        check_number(self, group, "lr", hint="the initial step size is >= 0, e.g. 1e-2")
        minus, plus = check_pair(self, group, "etas", None, None, "(0.5, 1.2)",
                                 "etas are (shrink, grow) factors, e.g. etas=(0.5, 1.2)")
        if not 0.0 < minus < 1.0 < plus:
            raise ArgumentError(
                f"invalid etas=({minus!r}, {plus!r}): expected 0 < etas[0] < 1 < etas[1]",
                op="Rprop", inputs=describe(etas=group["etas"]),
                hint="etas[0] shrinks the step of a coordinate whose gradient changed sign, "
                "etas[1] grows it while the sign holds, e.g. etas=(0.5, 1.2)")
        check_pair(self, group, "step_sizes", None, None, "(1e-6, 50)",
                   "step_sizes are (smallest, largest) step, e.g. step_sizes=(1e-6, 50)")

    def _init_state(self, p, group, state):
        state["step"] = step_state()
        state["prev"] = zeros_state(p)
        state["step_size"] = zeros_state(p, group["lr"])

    def _scalars(self, group):
        eta_minus, eta_plus = group["etas"]
        low, high = group["step_sizes"]
        return {"eta_minus": eta_minus, "eta_plus": eta_plus, "step_size_min": low,
                "step_size_max": high, "maximize": group["maximize"]}

    def _step_scalars(self, step, state, group):
        return {}
