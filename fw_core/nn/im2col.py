"""``unfold`` (im2col) and ``fold`` (col2im, its adjoint) as PyTorch's functionals, composed of
fw ops so that autograd needs no kernel of its own.

``unfold`` pads with zeros, takes windows with ``Tensor.unfold`` along the height and width
(one element in ``dilation`` of each window kept) and lays them out as (N, C*kh*kw, L).
``fold`` adds every column entry at its place in the padded image with ``index_add``
(overlapping windows sum) and crops the padding.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["fold", "unfold"]

import operator

import numpy as np

from .._state import state
from ..errors import ArgumentTypeError, InvalidArgumentError, ShapeError
from ..ops.creation import tensor, zeros
from ..ops.index_update import index_add
from ..ops.rearrange import pad
from ..ops.shape import permute, reshape
from ..tensor import Tensor


def _fail(error, op: str, message: str, hint: str):
    return error(message, op=op, module=state.module_path or None, hint=hint)


def _pair(op: str, name: str, value, least: int) -> tuple[int, int]:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    try:
        values = tuple(operator.index(v) for v in values)
    except TypeError:
        raise _fail(ArgumentTypeError, op, f"{name} must be an int or a pair of ints, got "
                    f"{value!r}", f"pass {name}=2 or {name}=(2, 3)") from None
    if len(values) != 2:
        raise _fail(InvalidArgumentError, op, f"{name} must have 2 entries, got {value!r}",
                    f"pass one int or a pair (height, width) as {name}")
    if any(v < least for v in values):
        raise _fail(InvalidArgumentError, op, f"{name} should be greater than "
                    f"{'zero' if least else 'or equal to zero'}, but got {values}",
                    f"pass a {name} >= {least}")
    return values


def _arguments(op, kernel_size, dilation, padding, stride):
    return (_pair(op, "kernel_size", kernel_size, 1), _pair(op, "dilation", dilation, 1),
            _pair(op, "padding", padding, 0), _pair(op, "stride", stride, 1))


def _blocks(op, spatial, kernel, dilation, padding, stride) -> tuple[int, int]:
    out = tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                for s, k, d, p, st in zip(spatial, kernel, dilation, padding, stride))
    if any(o < 1 for o in out):
        raise _fail(ShapeError, op, f"given input with spatial size {tuple(spatial)}, "
                    f"kernel_size={kernel}, dilation={dilation}, padding={padding}, calculated "
                    f"shape of the array of sliding blocks as {out}, but its components must "
                    "be at least one", "use a smaller kernel or dilation, or more padding")
    return out


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) or unbatched (C, H, W) input as columns:
    (N, C * kh * kw, L), L the number of blocks (``(H + 2p - d (kh - 1) - 1) // s + 1`` times
    the same for the width). Channel-major within a column, as PyTorch."""
    kernel, dil, padd, strd = _arguments("unfold", kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise _fail(ShapeError, "unfold", "expected a non-empty 3-d (unbatched) or 4-d "
                    f"(batched) input, got shape {tuple(input.shape)}",
                    "pass (N, C, H, W) or (C, H, W)")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    oh, ow = _blocks("unfold", (h, w), kernel, dil, padd, strd)
    if padd != (0, 0):
        x = pad(x, (padd[1], padd[1], padd[0], padd[0]))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dil)]
    x = x.unfold(2, spans[0], strd[0])[..., ::dil[0]]           # (N, C, oh, Wp, kh)
    x = x.unfold(3, spans[1], strd[1])[..., ::dil[1]]           # (N, C, oh, ow, kh, kw)
    x = reshape(permute(x, (0, 1, 4, 5, 2, 3)), (n, c * kernel[0] * kernel[1], oh * ow))
    return x if batched else x.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C * kh * kw, L) or unbatched (C * kh * kw, L) back into an image
    (N, C, H, W) of ``output_size`` (H, W): the adjoint of ``unfold``, overlapping blocks
    add up."""
    size = _pair("fold", "output_size", output_size, 1)
    kernel, dil, padd, strd = _arguments("fold", kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise _fail(ShapeError, "fold", "expected a non-empty 2-d (unbatched) or 3-d (batched) "
                    f"input, got shape {tuple(input.shape)}", "pass (N, C * kh * kw, L) or "
                    "(C * kh * kw, L)")
    batched = input.ndim == 3
    x = input if batched else input.unsqueeze(0)
    n, rows, length = x.shape
    taps = kernel[0] * kernel[1]
    if rows % taps:
        raise _fail(ShapeError, "fold", f"expected size of input's dimension 1 to be divisible "
                    f"by the product of kernel_size, but got input.size(1)={rows} and "
                    f"kernel_size={kernel}", "give C * kh * kw rows")
    oh, ow = _blocks("fold", size, kernel, dil, padd, strd)
    if oh * ow != length:
        raise _fail(ShapeError, "fold", f"given output_size={size}, kernel_size={kernel}, "
                    f"dilation={dil}, padding={padd}, stride={strd}, expected size of input's "
                    f"dimension 2 to match the calculated number of sliding blocks {oh} * {ow} "
                    f"= {oh * ow}, but got input.size(2)={length}",
                    "check output_size and the unfold arguments the columns came from")
    c = rows // taps
    hp, wp = size[0] + 2 * padd[0], size[1] + 2 * padd[1]
    ki = np.arange(kernel[0]).reshape(-1, 1, 1, 1) * dil[0]
    kj = np.arange(kernel[1]).reshape(1, -1, 1, 1) * dil[1]
    bi = np.arange(oh).reshape(1, 1, -1, 1) * strd[0]
    bj = np.arange(ow).reshape(1, 1, 1, -1) * strd[1]
    where = ((ki + bi) * wp + (kj + bj)).reshape(-1)
    index = tensor(where.astype(np.int64), device=x.device)
    out = zeros(n, c, hp * wp, dtype=x.dtype, device=x.device)
    out = index_add(out, 2, index, reshape(x, (n, c, taps * length)))
    out = reshape(out, (n, c, hp, wp))[:, :, padd[0]:padd[0] + size[0],
                                       padd[1]:padd[1] + size[1]]
    return out if batched else out.squeeze(0)
