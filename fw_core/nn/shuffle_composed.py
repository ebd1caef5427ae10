"""``pixel_shuffle`` and ``pixel_unshuffle`` as PyTorch's, composed of reshape and permute (so
their gradients are those ops' gradients)."""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["pixel_shuffle", "pixel_unshuffle"]

import numbers

from ..errors import ArgumentTypeError, ShapeError
from ..ops.meta import argument_error, describe


def _factor(op: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise argument_error(op, f"{name} must be an int, got {type(value).__name__} {value!r}",
                             f"pass a whole number, e.g. {name}=2", error=ArgumentTypeError,
                             **{name: value})
    if value < 1:
        raise argument_error(op, f"{name} must be positive, got {value}", f"pass {name} >= 1",
                             **{name: value})
    return int(value)


def _shape_error(op: str, input, message: str, hint: str) -> ShapeError:
    return ShapeError(message, op=op, inputs=describe((input,)), hint=hint)


def _image_shape(op: str, input, layout: str) -> tuple[int, ...]:
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise _shape_error(op, input, f"{op} expects input to have at least 3 dimensions, but "
                           f"got input with {len(shape)} dimension(s)", f"pass {layout}")
    return shape


def pixel_shuffle(input, upscale_factor: int):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): each group of r^2 channels becomes an r x r
    block of pixels."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    *batch, c, h, w = _image_shape("pixel_shuffle", input, "(*, C * r^2, H, W)")
    if c % (r * r):
        raise _shape_error("pixel_shuffle", input, f"pixel_shuffle expects its input's "
                           f"'channel' dimension to be divisible by the square of upscale_factor, "
                           f"but input.size(-3)={c} is not divisible by {r * r}",
                           f"use a channel count that is a multiple of {r * r}")
    n = len(batch)
    out = input.reshape(*batch, c // (r * r), r, r, h, w)
    out = out.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of ``pixel_shuffle``."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    *batch, c, h, w = _image_shape("pixel_unshuffle", input, "(*, C, H * r, W * r)")
    if h % r or w % r:
        raise _shape_error("pixel_unshuffle", input, f"pixel_unshuffle expects height {h} and "
                           f"width {w} to be divisible by downscale_factor={r}",
                           f"crop or pad the image to multiples of {r}")
    n = len(batch)
    out = input.reshape(*batch, c, h // r, r, w // r, r)
    out = out.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*batch, c * r * r, h // r, w // r)
