"""Optimizer update ops: one parameter's whole update as one kernel call.

An optimizer is a loop over parameters; each step of Adam reads and writes every element of
the parameter and its two moments about a dozen times when it is written as separate array
operations. Declaring the update as an op lets a device plugin run it as one fused pass (fw_cpu
uses one Numba loop for large parameters, as PyTorch's ``fused=True``), while any device whose
namespace follows NumPy gets the generic kernel. Optimizers call these kernels on raw arrays
under ``no_grad``; they are not differentiable and update their inputs in place.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..records import Structure
from . import anchors
from .meta import require_floating
from .registry import define_op


def _adam_meta(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq=None, **attrs):
    require_floating(param, "adam_update")
    for what, spec in (("grad", grad), ("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq),
                       ("max_exp_avg_sq", max_exp_avg_sq)):
        if spec is not None and (spec.shape != param.shape or spec.dtype != param.dtype):
            raise ShapeError(f"{what} is {spec}, the parameter is {param}", op="adam_update",
                             hint="every state tensor has the parameter's shape and dtype")
    return param


ADAM_UPDATE = define_op(
    "adam_update", family="optim",
    doc="One Adam/AdamW step of a parameter, in place: the moments are updated from the "
        "gradient (plus L2 decay, or with the parameter decayed directly when decoupled), then "
        "param -= lr / (1 - beta1^step) * m / (sqrt(v') / sqrt(1 - beta2^step) + eps), where v' "
        "is v or, with amsgrad, its running maximum.",
    signature="adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq: Tensor | None, "
              "lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, "
              "decoupled: bool, maximize: bool, step: float) -> param (updated in place)",
    meta=_adam_meta, vjp=None, structure=Structure.OPAQUE, effects=(0, 2, 3, 4),
    anchor=anchors.flat("an update, not a function of the loss: nothing flows back through it"),
    builtin=True)
