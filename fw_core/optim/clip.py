"""Gradient clipping: rescale gradients by their total norm, or clamp each value.

Both run between ``backward()`` and ``optimizer.step()`` and change the ``.grad`` tensors in
place, as ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_`` do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import capture
from ..device import get as _get_device
from ..errors import NonFiniteError
from ..ops.meta import describe
from ..tensor import Tensor
from ..tensor_methods import bump_version
from .optimizer import ArgumentError

__all__ = ["NonFiniteError", "clip_grad_norm_", "clip_grad_value_"]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    r"""Scale all gradients together so their total norm is at most ``max_norm``.

    The total norm is the ``norm_type``-norm of all gradients as if concatenated into one
    vector; every gradient is multiplied by :math:`\min(1, \text{max\_norm} /
    (\text{total} + 10^{-6}))`. Parameters without a gradient are skipped.

    Args:
        parameters: a tensor or an iterable of tensors (``model.parameters()``).
        max_norm: the largest total norm allowed (>= 0).
        norm_type: p of the p-norm: any p > 0, ``inf`` (largest magnitude), ``-inf``
            (smallest), or 0 (number of non-zero entries), as PyTorch.
        error_if_nonfinite: raise instead of scaling when the total norm is NaN or infinite.

    Size-0 gradients are left out of the norm (PyTorch raises for them with the inf norms).

    Returns:
        The total norm before clipping, a 0-d tensor (float32 0 when no gradient exists).

    Raises:
        NonFiniteError: ``error_if_nonfinite`` is set and the total norm is NaN or infinite.
        ArgumentError: ``max_norm`` < 0, or a ``norm_type`` that is not a number.

    >>> loss.backward()
    >>> total = fw.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    >>> optimizer.step()
    """
    parameters = _as_list(parameters)  # a compiled step replays the clipping on these
    return capture.host_effect("clip_grad_norm_()", lambda: _clip_norm(
        parameters, max_norm, norm_type, error_if_nonfinite))


def _clip_norm(parameters: list[Tensor], max_norm, norm_type, error_if_nonfinite) -> Tensor:
    grads = _grads(parameters)
    max_norm = _non_negative("clip_grad_norm_", "max_norm", max_norm)
    try:
        p = float(norm_type)
    except (TypeError, ValueError):
        raise ArgumentError(f"norm_type must be a number or inf, got {norm_type!r}",
                            op="clip_grad_norm_", inputs=describe(norm_type=norm_type),
                            hint="e.g. norm_type=2.0 or float('inf')") from None
    if not grads:
        return Tensor._wrap(np.zeros((), np.float32), _get_device("cpu"))
    first = grads[0]._device
    # size-0 gradients add nothing to any norm (PyTorch raises for them with inf norms)
    norms = [_norm_to(g, p, first) for g in grads if g._data.size] or \
        [first.xp.zeros((), dtype=grads[0]._data.dtype)]
    xp = first.xp
    total = _vector_norm(xp, xp.stack(norms), p)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise NonFiniteError(
            f"the total {p:g}-norm of the gradients is {float(total)}, so they cannot be "
            "clipped", op="clip_grad_norm_",
            hint="find where NaN/inf first appears (check the loss and inputs; try a lower "
            "learning rate), or pass error_if_nonfinite=False to scale anyway",
        )
    coef = xp.minimum(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        scale = coef if g._device is first else _move(coef, first, g._device)
        g._data *= scale.astype(g._data.dtype)
        bump_version(g)
    return Tensor._wrap(xp.asarray(total), first)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient value into ``[-clip_value, clip_value]``, in place (NaN stays NaN).

    Args:
        parameters: a tensor or an iterable of tensors (``model.parameters()``).
        clip_value: the largest magnitude allowed (>= 0).

    Raises:
        ArgumentError: ``clip_value`` < 0.
    """
    parameters = _as_list(parameters)
    capture.host_effect("clip_grad_value_()", lambda: _clip_value(parameters, clip_value))


def _clip_value(parameters: list[Tensor], clip_value) -> None:
    grads = _grads(parameters)
    clip_value = _non_negative("clip_grad_value_", "clip_value", clip_value)
    for g in grads:
        g._device.xp.clip(g._data, -clip_value, clip_value, out=g._data)
        bump_version(g)


def _as_list(parameters) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grads(parameters: list[Tensor]) -> list[Tensor]:
    return [p.grad for p in parameters if p.grad is not None]


def _non_negative(fn: str, name: str, value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a number, got {value!r}", op=fn,
                            inputs=describe(**{name: value}),
                            hint=f"pass a float, e.g. {name}=1.0") from None
    if not value >= 0:
        raise ArgumentError(f"{name} must be >= 0, got {value}", op=fn,
                            inputs=describe(**{name: value}),
                            hint=f"{name} bounds a magnitude, e.g. {name}=1.0")
    return value


def _vector_norm(xp, x, p: float):
    """The p-norm of all of ``x`` as a 0-d array of x's dtype (PyTorch's vector_norm);
    float16 is accumulated in float32, as PyTorch does."""
    dtype = x.dtype
    x = x.reshape(-1)
    if dtype.itemsize < 4:
        x = x.astype(xp.float32)
    if p == 2.0:
        out = xp.sqrt(xp.vdot(x, x))
    elif p == math.inf:
        out = xp.max(xp.abs(x))
    elif p == -math.inf:
        out = xp.min(xp.abs(x))
    elif p == 0.0:
        out = xp.count_nonzero(x)
    elif p == 1.0:
        out = xp.sum(xp.abs(x))
    else:
        out = xp.sum(xp.abs(x) ** p) ** (1.0 / p)
    return xp.asarray(out).astype(dtype)


def _norm_to(g: Tensor, p: float, device):
    norm = _vector_norm(g._device.xp, g._data, p)
    return norm if g._device is device else _move(norm, g._device, device)


def _move(array, source, target):
    return target.spec.from_numpy(source.spec.to_numpy(array), target.index)
