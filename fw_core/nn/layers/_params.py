"""Parameter creation and default initialisation that several layer families share."""

from __future__ import annotations

import math

from ...ops.creation import empty, ones, zeros
from .. import init
from ..parameter import Parameter


def weight_and_bias(module, weight_shape: tuple, bias_size: int, bias: bool, device,
                    dtype) -> None:
    """Register ``weight`` (uninitialised) and ``bias`` (or None) on ``module``."""
    module.weight = Parameter(empty(*weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(bias_size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def reset_fan_in_uniform(weight, bias) -> None:
    """Linear's and Conv's default: ``kaiming_uniform_(a=sqrt(5))`` for the weight, which is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bounds for the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


def affine_parameters(module, shape, weight: bool, bias: bool, device, dtype) -> None:
    """Register a normalisation's scale ``weight`` (ones) and shift ``bias`` (zeros); either
    may be None (``bias`` needs ``weight``, as in PyTorch)."""
    if weight:
        module.weight = Parameter(ones(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if weight and bias:
        module.bias = Parameter(zeros(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def reset_affine(module) -> None:
    """Scale 1, shift 0 (for the parameters the module has)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)
