"""Functional forms that draw random numbers, with PyTorch's names and arguments, composed
of fw ops: channel dropout (``dropout1d/2d/3d``, whole feature maps zeroed), alpha dropout
(SELU's self-normalising dropout, elementwise or per channel) and ``gumbel_softmax``.

Each draws its mask from fw's default generator (``fw.manual_seed``) and multiplies, so the
gradient is the mask's scaling, as PyTorch's.
"""

# ruff: noqa: A001, A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
           "gumbel_softmax"]

import math
import warnings

from .._state import state
from ..autograd import no_grad
from ..errors import ShapeError
from ..ops import elementwise as _ew
from ..ops import nn as _nn
from ..ops.creation import rand, zeros_like
from ..ops.indexing import scatter
from ..ops.meta import argument_error
from ..ops.shape import squeeze, unsqueeze
from ..tensor import Tensor
from ..tensor_methods import maybe_inplace

#: SELU's scale * alpha: the value SELU saturates to is -_ALPHA
_ALPHA = 1.7580993408473766


def _check_p(op: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise argument_error(op, f"dropout probability has to be between 0 and 1, but got {p}",
                             "pass p in [0, 1] (the fraction to drop)", p=p)


def _noise(input: Tensor, p: float, per_channel: bool) -> Tensor:
    """1.0 where kept (probability 1 - p), else 0.0: one draw per element, or per (N, C)
    channel broadcast over the rest."""
    shape = tuple(input.shape)
    if per_channel:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = _nn._keep_mask(shape, p, input._device)
    return keep.to(input.dtype)


def _dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool, *,
             per_channel: bool, alpha: bool) -> Tensor:
    """PyTorch's ``_dropout_impl``: the input unchanged when not training or p == 0, zeros
    when p == 1, else the input times a scaled mask (alpha dropout adds the shift that keeps
    SELU activations at mean 0 and variance 1)."""
    _check_p(op, p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return maybe_inplace(input, input * 0.0, inplace)
    noise = _noise(input, p, per_channel)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        out = input * (noise * a) + ((noise - 1.0) * (_ALPHA * a) + _ALPHA * a * p)
    else:
        out = input * (noise / (1.0 - p))
    return maybe_inplace(input, out, inplace)


def _batched(op: str, input: Tensor, p, training, inplace, batched: bool) -> Tensor:
    """Channel dropout of an input that may lack its batch dimension."""
    x = input if batched else unsqueeze(input, 0)
    out = _dropout(op, x, p, training, False, per_channel=True, alpha=False)
    if out is x:
        return input
    return maybe_inplace(input, out if batched else squeeze(out, 0), inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) (or unbatched (C, L)) with probability ``p``, scaling
    the rest by 1 / (1 - p).

    Raises:
        ShapeError: (a RuntimeError, as PyTorch's) for an input that is not 2-d or 3-d.
    """
    _check_p("dropout1d", p)
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                         "input. Note that dropout1d exists to provide channel-wise dropout on "
                         "inputs with 1 spatial dimension, a channel dimension, and an optional "
                         "batch dimension (i.e. 2D or 3D inputs).", op="dropout1d",
                         module=state.module_path or None,
                         hint="pass (N, C, L) or (C, L); use dropout for elementwise masks")
    return _batched("dropout1d", input, p, training, inplace, input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability ``p``, scaling the rest by
    1 / (1 - p). As in PyTorch, a 3-d input is taken as (N, C, L) (1-d channel dropout, with
    a warning) and other ranks warn that they are deprecated."""
    _check_p("dropout2d", p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", UserWarning,
                      stacklevel=2)
    return _dropout("dropout2d", input, p, training, inplace, per_channel=True, alpha=False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) (or unbatched (C, D, H, W)) with probability
    ``p``, scaling the rest by 1 / (1 - p); other ranks warn that they are deprecated."""
    _check_p("dropout3d", p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", UserWarning, stacklevel=2)
    return _batched("dropout3d", input, p, training, inplace, input.ndim != 4)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements are set to SELU's saturation value and
    the result is scaled and shifted so mean and variance stay as they were (note PyTorch's
    default ``training=False``)."""
    return _dropout("alpha_dropout", input, p, training, inplace, per_channel=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels of (N, C, *)."""
    return _dropout("feature_alpha_dropout", input, p, training, inplace, per_channel=True,
                    alpha=True)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample from the Gumbel-softmax (concrete) distribution over ``dim``:
    softmax((logits + g) / tau) with g standard Gumbel noise. With ``hard`` the value is the
    one-hot of its argmax while the gradient is the soft sample's (straight-through), as
    PyTorch's. ``eps`` is accepted for PyTorch compatibility and unused (as there).
    """
    with no_grad():
        uniform = rand(*logits.shape, dtype=logits.dtype, device=logits.device)
        # -log(E) for E ~ Exp(1) = -log(1 - U); the floor keeps log finite when U is 0
        exponential = _ew.clamp(-_ew.log1p(-uniform), min=1e-30)
        gumbels = -_ew.log(exponential)
    y_soft = _nn.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = scatter(zeros_like(logits), dim, index, value=1.0)
    return y_hard - y_soft.detach() + y_soft
