"""The activations PyTorch has that fw builds from its own ops rather than as ops of their own:
each is a few elementwise ops (or a split), so autograd differentiates it, twice if need be, and
the compiler fuses it like any elementwise chain. ``fw.nn.functional`` re-exports them.

Where an activation has a corner (hardsigmoid at +-3, the shrinks at +-lambd) the gradient at
the corner itself follows the ops it is built from, which may differ from PyTorch's choice
there; everywhere else it is PyTorch's.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "logsigmoid", "normalize",
           "prelu", "selu", "softshrink", "softsign", "tanhshrink", "threshold"]

from ..ops import elementwise as _ew
from ..ops.meta import argument_error
from ..ops.reduction import norm
from ..ops.shape import chunk
from ..tensor import Tensor
from ..tensor_methods import maybe_inplace

# PyTorch's SELU constants (Klambauer et al., 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between."""
    return maybe_inplace(input, _ew.hardtanh(input + 3.0, 0.0, 6.0) / 6.0, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x) (MobileNetV3's activation)."""
    return maybe_inplace(input, input * hardsigmoid(input), inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (_ew.abs(input) + 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, ``alpha * (exp(x / alpha) - 1)`` otherwise (ELU that stays C1 at 0 for
    every alpha)."""
    if alpha == 0:
        raise argument_error("celu", "alpha must not be 0", "pass a non-zero alpha, e.g. 1.0",
                             values=(input,), alpha=alpha)
    return maybe_inplace(input, _ew.elu(input / alpha, 1.0) * alpha, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants (alpha ~1.6733, scale
    ~1.0507)."""
    return maybe_inplace(input, _ew.elu(input, _SELU_ALPHA) * _SELU_SCALE, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed as -softplus(-x) so it does not underflow for very negative
    x."""
    return -_ew.softplus(-input, 1.0, 20.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - _ew.tanh(input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    _non_negative("softshrink", lambd, input)
    return _ew.where(input > lambd, input - lambd, _ew.where(input < -lambd, input + lambd, 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, 0 elsewhere."""
    _non_negative("hardshrink", lambd, input)
    return _ew.where(_ew.abs(input) > lambd, input, 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, ``value`` elsewhere."""
    return maybe_inplace(input, _ew.where(input > threshold, input, value), inplace)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the halves of ``input`` along ``dim`` (gated linear
    unit)."""
    if input.shape[dim] % 2:
        raise argument_error("glu", f"the size of dim {dim} must be even, got "
                             f"{input.shape[dim]}", "split a dimension of even size",
                             values=(input,), dim=dim)
    a, b = chunk(input, 2, dim)
    return a * _ew.sigmoid(b)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x for x >= 0, ``weight * x`` otherwise; ``weight`` holds one slope, or one per channel
    (dimension 1 of ``input``)."""
    if weight.numel() not in (1, input.shape[1] if input.ndim > 1 else 1):
        raise argument_error("prelu", f"weight has {weight.numel()} slopes for "
                             f"{input.shape[1] if input.ndim > 1 else 1} channels",
                             "give one slope, or one per channel (dimension 1)",
                             values=(input, weight))
    slopes = weight
    if weight.numel() > 1:
        slopes = weight.reshape(-1, *([1] * (input.ndim - 2)))
    return _ew.where(input >= 0, input, input * slopes)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input`` divided by its p-norm along ``dim`` (at least ``eps``)."""
    return input / _ew.clamp(norm(input, p, dim, keepdim=True), eps, None)


def _non_negative(op: str, lambd: float, input: Tensor) -> None:
    if lambd < 0:
        raise argument_error(op, f"lambd must be at least 0, got {lambd}",
                             "pass a non-negative threshold", values=(input,), lambd=lambd)

