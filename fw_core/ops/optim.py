"""Optimizer update ops: one parameter's whole update as one kernel call.

An optimizer is a loop over parameters; each step of Adam reads and writes every element of
the parameter and its two moments about a dozen times when it is written as separate array
operations. Declaring the update as an op lets a device plugin run it as one fused pass (fw_cpu
uses one Numba loop for large parameters, as PyTorch's ``fused=True``), while any device whose
namespace follows NumPy gets the generic kernel. Optimizers run them on raw arrays through
``fw_core.optim.optimizer.run_update`` (so inspectors see them); they are not differentiable
and update their inputs in place.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..records import Structure
from . import anchors
from .meta import require_floating
from .registry import define_op


def _state_meta(op: str, names: tuple[str, ...]):
    """The meta rule of an update op: a floating parameter, and each state tensor (None where
    the optimizer keeps none) of its shape and dtype; the result is the parameter."""

    def meta(param, *states, **attrs):
        require_floating(param, op)
        for what, spec in zip(names, states):
            if spec is not None and (spec.shape != param.shape or spec.dtype != param.dtype):
                raise ShapeError(f"{what} is {spec}, the parameter is {param}", op=op,
                                 hint="every state tensor has the parameter's shape and dtype")
        return param

    return meta


_UPDATE = anchors.flat("an update, not a function of the loss: nothing flows back through it")


def _update_op(name: str, states: tuple[str, ...], doc: str, signature: str):
    """The contract of an update op taking ``(param, grad, *state)`` in that order
    (``states`` names grad and then each state array): it writes the parameter and every
    state array, never the gradient."""
    return define_op(name, family="optim", doc=doc, signature=signature,
                     meta=_state_meta(name, states), vjp=None, structure=Structure.OPAQUE,
                     effects=(0, *range(2, len(states) + 1)), anchor=_UPDATE, builtin=True)


ADAM_UPDATE = _update_op(
    "adam_update", ("grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
    doc="One Adam/AdamW step of a parameter, in place: the moments are updated from the "
        "gradient (plus L2 decay, or with the parameter decayed directly when decoupled), then "
        "param -= lr / (1 - beta1^step) * m / (sqrt(v') / sqrt(1 - beta2^step) + eps), where v' "
        "is v or, with amsgrad, its running maximum.",
    signature="adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq: Tensor | None, "
              "lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, "
              "decoupled: bool, maximize: bool, step: float) -> param (updated in place)")

SGD_UPDATE = _update_op(
    "sgd_update", ("grad", "momentum_buffer"),
    doc="One SGD step of a parameter, in place: d = g + weight_decay * param (g negated with "
        "maximize); with momentum, buf = d at the first step, else momentum * buf + (1 - "
        "dampening) * d, and d = d + momentum * buf (nesterov) or buf; then param -= lr * d.",
    signature="sgd_update(param, grad, momentum_buffer: Tensor | None, lr: float, "
              "momentum: float, dampening: float, weight_decay: float, nesterov: bool, "
              "maximize: bool, first: bool) -> param (updated in place)")

RMSPROP_UPDATE = _update_op(
    "rmsprop_update", ("grad", "square_avg", "grad_avg", "momentum_buffer"),
    doc="One RMSprop step of a parameter, in place: v = alpha v + (1 - alpha) d^2 for d = g + "
        "weight_decay * param (g negated with maximize); with grad_avg (centered) m = alpha m + "
        "(1 - alpha) d and the denominator sqrt(v - m^2) + eps, else sqrt(v) + eps; with a "
        "momentum buffer b = momentum b + d / denominator and param -= lr b, else "
        "param -= lr d / denominator.",
    signature="rmsprop_update(param, grad, square_avg, grad_avg: Tensor | None, "
              "momentum_buffer: Tensor | None, lr: float, alpha: float, eps: float, "
              "weight_decay: float, momentum: float, maximize: bool) -> param (in place)")

ADAGRAD_UPDATE = _update_op(
    "adagrad_update", ("grad", "state_sum"),
    doc="One Adagrad step of a parameter, in place: s += d^2 for d = g + weight_decay * param "
        "(g negated with maximize), then param -= lr / (1 + (step - 1) lr_decay) * d / "
        "(sqrt(s) + eps).",
    signature="adagrad_update(param, grad, state_sum, lr: float, lr_decay: float, eps: float, "
              "weight_decay: float, maximize: bool, step: float) -> param (in place)")

ADADELTA_UPDATE = _update_op(
    "adadelta_update", ("grad", "square_avg", "acc_delta"),
    doc="One Adadelta step of a parameter, in place: v = rho v + (1 - rho) d^2 for d = g + "
        "weight_decay * param (g negated with maximize); delta = sqrt(u + eps) / sqrt(v + eps) "
        "* d; u = rho u + (1 - rho) delta^2; param -= lr delta.",
    signature="adadelta_update(param, grad, square_avg, acc_delta, lr: float, rho: float, "
              "eps: float, weight_decay: float, maximize: bool) -> param (in place)")

ADAMAX_UPDATE = _update_op(
    "adamax_update", ("grad", "exp_avg", "exp_inf"),
    doc="One Adamax step of a parameter, in place: m = beta1 m + (1 - beta1) d for d = g + "
        "weight_decay * param (g negated with maximize); u = max(beta2 u, |d| + eps); "
        "param -= lr / (1 - beta1^step) * m / u.",
    signature="adamax_update(param, grad, exp_avg, exp_inf, lr: float, beta1: float, "
              "beta2: float, eps: float, weight_decay: float, maximize: bool, step: float) -> "
              "param (in place)")

NADAM_UPDATE = _update_op(
    "nadam_update", ("grad", "exp_avg", "exp_avg_sq"),
    doc="One NAdam step of a parameter, in place: the moments are updated from d (g plus L2 "
        "decay, or the parameter decayed directly when decoupled; negated with maximize), then "
        "param += grad_coef * d / den + avg_coef * m / den with den = sqrt(v / "
        "bias_correction2) + eps; the optimizer computes the coefficients from its momentum "
        "schedule on the host.",
    signature="nadam_update(param, grad, exp_avg, exp_avg_sq, lr: float, beta1: float, "
              "beta2: float, eps: float, weight_decay: float, decoupled: bool, maximize: bool, "
              "bias_correction2: float, grad_coef: float, avg_coef: float) -> param (in place)")

RADAM_UPDATE = _update_op(
    "radam_update", ("grad", "exp_avg", "exp_avg_sq"),
    doc="One RAdam step of a parameter, in place: Adam's moments from d (L2 or decoupled decay, "
        "negated with maximize), then param -= lr m / (1 - beta1^step), times the variance "
        "rectification sqrt(1 - beta2^step) / (sqrt(v) + eps) * r once the approximated SMA "
        "length exceeds 5.",
    signature="radam_update(param, grad, exp_avg, exp_avg_sq, lr: float, beta1: float, "
              "beta2: float, eps: float, weight_decay: float, decoupled: bool, maximize: bool, "
              "step: float) -> param (in place)")

ASGD_UPDATE = _update_op(
    "asgd_update", ("grad", "ax"),
    doc="One ASGD step of a parameter, in place: param = param (1 - lambd eta) - eta d for d = g "
        "+ weight_decay * param (g negated with maximize), then the average ax += mu (param - "
        "ax) (ax = param when mu is 1); the optimizer keeps eta and mu on the host.",
    signature="asgd_update(param, grad, ax, lambd: float, eta: float, mu: float, "
              "weight_decay: float, maximize: bool) -> param (in place)")

RPROP_UPDATE = _update_op(
    "rprop_update", ("grad", "prev", "step_size"),
    doc="One Rprop step of a parameter, in place: each element's step size grows by eta_plus "
        "where the gradient kept its sign, shrinks by eta_minus where it flipped (and that "
        "element does not move now), clipped to [step_size_min, step_size_max]; param -= "
        "sign(g) * step size (g negated with maximize).",
    signature="rprop_update(param, grad, prev, step_size, eta_minus: float, eta_plus: float, "
              "step_size_min: float, step_size_max: float, maximize: bool) -> param (in place)")
