"""``affine_grid`` and ``grid_sample`` as PyTorch's functionals, composed of fw ops (floor,
clamp, where, gather, matmul) so gradients reach the input, the grid and theta without a
kernel of their own.

``grid_sample`` maps each grid point from [-1, 1] to source pixel coordinates, applies the
padding mode to them (``border`` clamps, ``reflection`` folds back and clamps), and mixes the
neighbouring pixels gathered from the flattened input: 2 ** d of them with weights linear in
the coordinates ('bilinear', 4-d and 5-d inputs), the nearest one ('nearest', half-way
coordinates round to even as PyTorch's ``nearbyint``), or 4 x 4 with cubic-convolution
weights (A = -0.75; 'bicubic', 4-d inputs as in PyTorch). Points outside the input read zeros
under ``zeros`` padding.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["affine_grid", "grid_sample"]

import itertools
import warnings

import numpy as np

from .. import dtypes
from .._state import state
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedError
from ..ops.creation import tensor
from ..ops.elementwise import clamp, where
from ..ops.indexing import gather
from ..ops.linalg import matmul
from ..ops.shape import expand, reshape
from ..tensor import Tensor

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")
_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _fail(error, op: str, message: str, hint: str):
    return error(message, op=op, module=state.module_path or None, hint=hint)


def _align(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# ---------------------------------------------------------------------------- affine_grid


def _steps(n: int, align_corners: bool) -> np.ndarray:
    """PyTorch's ``linspace_from_neg_one``: n points over [-1, 1] (pixel centres unless
    align_corners), one point at 0."""
    if n <= 1:
        return np.zeros(1)
    points = np.linspace(-1.0, 1.0, n)
    return points if align_corners else points * (n - 1) / n


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) that the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) make of the normalised output coordinates of ``size``
    (N, C, H, W) (or (N, C, D, H, W)); each point is (x, y[, z]), for ``grid_sample``."""
    align_corners = _align(align_corners)
    if not theta.dtype.is_floating_point:
        raise _fail(DTypeError, "affine_grid", f"Expected theta to have floating point type, "
                    f"but got {theta.dtype}", "pass theta.float() or theta.double()")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise _fail(UnsupportedError, "affine_grid", "affine_grid only supports 4D and 5D "
                    f"sizes, for 2D and 3D affine transforms, respectively. Got size {size}.",
                    "pass size=(N, C, H, W) or (N, C, D, H, W)")
    d = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (d, d + 1):
        raise _fail(ShapeError, "affine_grid", f"Expected a batch of {d}D affine matrices of "
                    f"shape Nx{d}x{d + 1} for size {list(size)}. Got {tuple(theta.shape)}.",
                    f"pass theta of shape (N, {d}, {d + 1})")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise _fail(ArgumentError, "affine_grid", "Expected non-zero, positive output size. "
                    f"Got {list(size)}", "give every size entry > 0")
    if theta.shape[0] != size[0]:
        raise _fail(ShapeError, "affine_grid", f"theta holds {theta.shape[0]} matrices but "
                    f"size asks for a batch of {size[0]}", "make size[0] == theta.shape[0]")
    # the base grid, (x, y[, z], 1) at each output point, x running along the last dim
    axes = [_steps(n, align_corners) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*mesh[::-1], np.ones(spatial)], axis=-1).reshape(1, -1, d + 1)
    base = tensor(base, dtype=theta.dtype, device=theta.device)
    grid = matmul(base, theta.transpose(1, 2))
    return reshape(grid, (size[0], *spatial, d))


# ---------------------------------------------------------------------------- grid_sample


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = coord.fmod(span)
    flips = (coord.detach() / span).floor()
    even = flips.fmod(2) == 0
    return where(even, extra + low, span - extra + low)


def _pad_coordinates(coord: Tensor, size: int, padding_mode: str, align_corners: bool):
    """PyTorch's ``compute_coordinates``: source coordinates after the padding mode."""
    if padding_mode == "border":
        return clamp(coord, 0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return clamp(coord, 0, size - 1)
    return coord


class _Source:
    """The flattened input and a way to read it at integer coordinates (one per spatial dim,
    first spatial dim first), zero outside."""

    def __init__(self, input: Tensor, out_shape):
        self.n, self.c = input.shape[:2]
        self.spatial = tuple(input.shape[2:])
        self.flat = reshape(input, (self.n, self.c, -1))
        self.out_shape = tuple(out_shape)

    def read(self, indices) -> Tensor:
        inside = None
        flat = None
        for idx, size in zip(indices, self.spatial):
            ok = (idx >= 0) & (idx <= size - 1)
            inside = ok if inside is None else inside & ok
            idx = clamp(idx, 0, size - 1)
            flat = idx if flat is None else flat * size + idx
        index = reshape(flat.to(dtypes.int64), (self.n, 1, -1))
        index = expand(index, (self.n, self.c, index.shape[-1]))
        values = gather(self.flat, 2, index)
        mask = reshape(inside, (self.n, 1, -1)).to(values.dtype)
        return values * mask

    def shaped(self, flat: Tensor) -> Tensor:
        return reshape(flat, (self.n, self.c, *self.out_shape))


def _weight(w: Tensor, n: int) -> Tensor:
    return reshape(w, (n, 1, -1))


def _cubic_coefficients(t: Tensor):
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _check_grid_sample(input, grid, mode, padding_mode):
    if mode not in _MODES:
        raise _fail(ArgumentError, "grid_sample", "nn.functional.grid_sample(): expected mode "
                    f"to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'",
                    "pass one of " + ", ".join(map(repr, _MODES)))
    if padding_mode not in _PADDINGS:
        raise _fail(ArgumentError, "grid_sample", "nn.functional.grid_sample(): expected "
                    "padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                    f"'{padding_mode}'", "pass one of " + ", ".join(map(repr, _PADDINGS)))
    if input.ndim not in (4, 5):
        raise _fail(ShapeError, "grid_sample", "grid_sampler(): expected 4D or 5D input and "
                    f"grid with same number of dimensions, but got input with sizes "
                    f"{list(input.shape)} and grid with sizes {list(grid.shape)}",
                    "pass a batched input (N, C, H, W) or (N, C, D, H, W); for one image, "
                    "input.unsqueeze(0) and grid.unsqueeze(0)")
    if grid.ndim != input.ndim:
        raise _fail(ShapeError, "grid_sample", "grid_sampler(): expected grid and input to have "
                    f"same number of dimensions, but got input with sizes {list(input.shape)} "
                    f"and grid with sizes {list(grid.shape)}",
                    "give the grid shape (N, H_out, W_out, 2) (or (N, D, H, W, 3) for 5-d)")
    d = input.ndim - 2
    if grid.shape[0] != input.shape[0]:
        raise _fail(ShapeError, "grid_sample", "grid_sampler(): expected grid and input to have "
                    f"same batch size, but got input with sizes {list(input.shape)} and grid "
                    f"with sizes {list(grid.shape)}", "give input and grid the same N")
    if grid.shape[-1] != d:
        raise _fail(ShapeError, "grid_sample", f"grid_sampler(): expected grid to have size {d} "
                    f"in last dimension, but got grid with sizes {list(grid.shape)}",
                    f"the last dim of the grid holds the {d} coordinates (x, y[, z])")
    if any(s == 0 for s in input.shape[2:]):
        raise _fail(ShapeError, "grid_sample", "grid_sampler(): expected input to have "
                    f"non-empty spatial dimensions, but input has sizes {list(input.shape)}",
                    "give the input at least one element along each spatial dim")
    if input.dtype != grid.dtype:
        raise _fail(DTypeError, "grid_sample", "grid_sampler(): expected input and grid to "
                    f"have same dtype, but input has {input.dtype} and grid has {grid.dtype}",
                    "cast the grid with grid.to(input.dtype)")
    if not input.dtype.is_floating_point:
        raise _fail(DTypeError, "grid_sample", f"grid_sample needs floating inputs, got "
                    f"{input.dtype}", "pass input.float() and grid.float()")
    if mode == "bicubic" and d != 2:
        raise _fail(UnsupportedError, "grid_sample", "grid_sampler(): bicubic interpolation "
                    "only supports 4D input", "use mode='bilinear' or 'nearest' for 5-d input, "
                    "or sample each depth slice of a 4-d input with mode='bicubic'")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) (or (N, C, D, H, W)) at the normalised points of ``grid``
    (N, H_out, W_out, 2) (or (N, D_out, H_out, W_out, 3)), each (x, y[, z]) in [-1, 1] from the
    left/top/front to the right/bottom/back edge; returns (N, C, H_out, W_out) (or 5-d).

    ``mode``: 'bilinear' (trilinear for 5-d), 'nearest' or 'bicubic' (4-d only);
    ``padding_mode``: 'zeros', 'border' or 'reflection' for points outside the input;
    ``align_corners``: True puts -1 and 1 at the corner pixels' centres, False (the default,
    with a warning when not given) at their outer edges."""
    _check_grid_sample(input, grid, mode, padding_mode)
    align_corners = _align(align_corners)
    d = input.ndim - 2
    src = _Source(input, grid.shape[1:-1])
    n = src.n
    # coordinate per spatial dim, the first spatial dim first (the grid holds x first)
    coords = [reshape(grid[..., d - 1 - k], (n, -1)) for k in range(d)]
    coords = [_unnormalize(c, size, align_corners) for c, size in zip(coords, src.spatial)]
    if mode == "bicubic":
        return src.shaped(_bicubic(src, coords, padding_mode, align_corners))
    coords = [_pad_coordinates(c, size, padding_mode, align_corners)
              for c, size in zip(coords, src.spatial)]
    if mode == "nearest":
        return src.shaped(src.read([c.detach().round() for c in coords]))
    lows = [c.detach().floor() for c in coords]
    fracs = [c - low for c, low in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=d):
        weight = None
        for bit, frac in zip(corner, fracs):
            w = frac if bit else 1 - frac
            weight = w if weight is None else weight * w
        term = src.read([low + bit for low, bit in zip(lows, corner)]) * _weight(weight, n)
        out = term if out is None else out + term
    return src.shaped(out)


def _bicubic(src: _Source, coords, padding_mode: str, align_corners: bool) -> Tensor:
    iy, ix = coords
    y0, x0 = iy.detach().floor(), ix.detach().floor()
    wy = _cubic_coefficients(iy - y0)
    wx = _cubic_coefficients(ix - x0)
    (h, w), n = src.spatial, src.n
    out = None
    for i in range(4):
        ty = _pad_coordinates(y0 - 1 + i, h, padding_mode, align_corners).trunc()
        for j in range(4):
            tx = _pad_coordinates(x0 - 1 + j, w, padding_mode, align_corners).trunc()
            term = src.read([ty, tx]) * _weight(wy[i] * wx[j], n)
            out = term if out is None else out + term
    return out
