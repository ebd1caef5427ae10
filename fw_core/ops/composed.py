"""Functions PyTorch has at top level (and as Tensor methods) that fw builds from its own ops:
comparisons with a tolerance, the finite tests, mean and spread together, interpolation and a
stable log-sum of two exponentials. Being compositions, they differentiate (twice if need be)
and compile like what they are made of; their facts live in those ops' contracts.
"""

from __future__ import annotations

__all__ = ["addcdiv", "addcmul", "allclose", "equal", "isclose", "isfinite", "isneginf",
           "isposinf", "lerp", "logaddexp", "std_mean", "var_mean"]


from ..tensor import Tensor
from . import elementwise as _ew
from ._reduction_support import numpy_names
from .meta import argument_error
from .reduction import STD, VAR, mean, std, var


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` (bool), infinities close only to
    themselves; NaNs are close to each other only with ``equal_nan``."""
    if rtol < 0 or atol < 0:
        raise argument_error("isclose", f"rtol and atol must be at least 0, got rtol={rtol}, "
                             f"atol={atol}", "pass non-negative tolerances",
                             values=(input, other))
    same = _ew.eq(input, other)
    finite = _ew.logical_and(isfinite(input), isfinite(other))
    within = _ew.le(_ew.abs(input - other), atol + rtol * _ew.abs(other))
    close = _ew.logical_or(same, _ew.logical_and(finite, within))
    if equal_nan:
        close = _ew.logical_or(close, _ew.logical_and(_ew.isnan(input), _ew.isnan(other)))
    return close


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape and the same values."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(_ew.eq(input, other).all().item())


def isfinite(input: Tensor) -> Tensor:
    """Where ``input`` is neither infinite nor NaN (bool; integers are always finite)."""
    return _ew.logical_not(_ew.logical_or(_ew.isnan(input), _ew.isinf(input)))


def isposinf(input: Tensor) -> Tensor:
    """Where ``input`` is +inf (bool)."""
    return _ew.logical_and(_ew.isinf(input), _ew.gt(input, 0))


def isneginf(input: Tensor) -> Tensor:
    """Where ``input`` is -inf (bool)."""
    return _ew.logical_and(_ew.isinf(input), _ew.lt(input, 0))


def lerp(input: Tensor, end, weight) -> Tensor:
    """``input + weight * (end - input)``: linear interpolation from input to end."""
    return input + weight * (end - input)


def addcmul(input: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (broadcast)."""
    return input + (tensor1 * tensor2 if value == 1 else tensor1 * tensor2 * value)


def addcdiv(input: Tensor, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (broadcast)."""
    return input + (tensor1 / tensor2 if value == 1 else tensor1 / tensor2 * value)


def logaddexp(input: Tensor, other) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow: the larger plus
    ``log1p(exp(-|input - other|))``."""
    return _ew.maximum(input, other) + _ew.log1p(_ew.exp(-_ew.abs(input - other)))


def var_mean(input: Tensor, dim=None, *, correction=None, keepdim: bool = False,
             unbiased=None, axis=None, keepdims=None):
    """``(var(input, dim), mean(input, dim))`` as PyTorch returns them (NumPy's ``axis`` /
    ``keepdims`` accepted, as there)."""
    return _spread_mean(VAR, var, input, dim, correction, keepdim, unbiased, axis, keepdims)


def std_mean(input: Tensor, dim=None, *, correction=None, keepdim: bool = False,
             unbiased=None, axis=None, keepdims=None):
    """``(std(input, dim), mean(input, dim))`` as PyTorch returns them (NumPy's ``axis`` /
    ``keepdims`` accepted, as there)."""
    return _spread_mean(STD, std, input, dim, correction, keepdim, unbiased, axis, keepdims)


def _spread_mean(op, spread, input, dim, correction, keepdim, unbiased, axis, keepdims):
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_names(op, dim, keepdim, axis, keepdims)
    return (spread(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim))



#: Tensor methods this module provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__ if name not in ("std_mean", "var_mean")}
METHODS.update({f"{name}_": _ew.inplace_method(globals()[name])
                for name in ("addcmul", "addcdiv", "lerp")})
