"""Resampling (``interpolate``) of the trailing 1, 2 or 3 spatial dimensions of (N, C, ...).

One op per PyTorch kernel: ``upsample_nearest{n}d``, ``upsample_nearest_exact{n}d``,
``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_trilinear3d`` and
``upsample_bicubic2d``. Each is a linear map of its input (nearest picks one source element,
the others weight 2, 4 or 8 of them, bicubic 4 per axis), paired with its adjoint
``*_backward``; each is the other's VJP. Mode 'area' is ``adaptive_avg_pool{n}d``, as in PyTorch.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["interpolate"]

import math
import operator

from .. import dtypes as _dt
from ..errors import (
    ArgumentError,
    ArgumentTypeError,
    DTypeError,
    FwError,
    ShapeError,
    UnsupportedError,
)
from ..records import Structure, TensorSpec
from ..tensor import Tensor
from ._spatial import linear_pair, nonempty_plane, shape_text
from .dispatch import apply, check_tensors
from .meta import located
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_INTERPOLATING = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_MODES = ("nearest", "nearest-exact", "area", *_INTERPOLATING)


def _resample_meta(op: str, n: int, uint8: bool):
    """(N, C, *spatial) of a floating dtype (or uint8 where PyTorch takes it) to size."""

    def meta(x, *, size, scales, **_):
        if len(x.shape) != n + 2:
            raise ShapeError(f"expects a {n + 2}-d input (N, C, ...), got shape "
                             f"{shape_text(x.shape)}", op=op,
                             hint="add a batch dimension with unsqueeze(0)")
        if not (x.dtype.is_floating_point or (uint8 and x.dtype is _dt.uint8)):
            raise DTypeError(f"is not implemented for {x.dtype.name}", op=op,
                             hint="convert with .float() first" + (" (or to uint8)" if uint8
                                                                    else ""))
        if min(size, default=1) < 1:
            raise ShapeError(f"Input and output sizes should be greater than 0, but got input "
                             f"{shape_text(x.shape[2:])} output {shape_text(size)}", op=op,
                             hint="ask for a positive size (or scale_factor)")
        nonempty_plane(op, x, n)
        return TensorSpec(tuple(x.shape[:2]) + tuple(size), x.dtype)

    return meta


def _define(name, n, doc, uint8, structure):
    attrs = "size, scales" if "nearest" in name else "size, align_corners, scales"
    return linear_pair(name, n, doc, f"{name}(x: Tensor, {attrs}) -> Tensor",
                       _resample_meta(name, n, uint8), structure, Structure.OPAQUE)[0]


_NEAREST = {n: _define(f"upsample_nearest{n}d", n,
                       "Resample by copying the nearest source element: src = min(floor(dst * "
                       "scale), L - 1), scale = 1 / scale_factor or L_in / L_out (float32).",
                       True, Structure.INJECTIVE) for n in (1, 2, 3)}
_NEAREST_EXACT = {n: _define(f"upsample_nearest_exact{n}d", n,
                             "Resample by copying the source element whose centre is nearest: "
                             "src = min(floor((dst + 0.5) * scale), L - 1).",
                             True, Structure.INJECTIVE) for n in (1, 2, 3)}
_LINEAR_DOC = ("Resample by {} interpolation of the nearest source elements; align_corners=True "
               "maps the corner elements' centres onto each other, False their outer edges.")
_INTERPOLATE = {
    "linear": _define("upsample_linear1d", 1, _LINEAR_DOC.format("linear"), False,
                      Structure.CONTRACTION),
    "bilinear": _define("upsample_bilinear2d", 2, _LINEAR_DOC.format("bilinear"), True,
                        Structure.CONTRACTION),
    "trilinear": _define("upsample_trilinear3d", 3, _LINEAR_DOC.format("trilinear"), False,
                         Structure.CONTRACTION),
    "bicubic": _define("upsample_bicubic2d", 2,
                       "Resample by cubic convolution (A = -0.75) of the 4 x 4 nearest source "
                       "elements, the edges repeated beyond the input.", False,
                       Structure.CONTRACTION),
}
_AREA = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}


def _per_dim(value, n, what, input, convert):
    if isinstance(value, (tuple, list)):
        if len(value) != n:
            raise ArgumentError(
                f"Input and {what} must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and {what} of "
                f"{'shape ' if what == 'scale_factor' else ''}{value}. Please provide input "
                f"tensor in (N, C, d1, d2, ...,dK) format and {what} in (s1, s2, ...,sK) format.",
                op="interpolate", hint=f"give one {what} per spatial dimension, or one number")
        return tuple(convert(v) for v in value)
    return (convert(value),) * n


def _integer(v):
    try:
        return operator.index(v)
    except TypeError:
        raise ArgumentTypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, "
                                f"int] or Tuple[int, int, int], but got size with {type(v)}",
                                op="interpolate", hint="give sizes as ints") from None


def _mode_fits(mode, ndim) -> None:
    need = _INTERPOLATING.get(mode)
    if ndim not in (3, 4, 5) or (need is not None and ndim != need + 2):
        if need is not None and ndim in (3, 4, 5):
            raise UnsupportedError(f"Got {ndim}D input, but {mode} mode needs {need + 2}D input",
                                   op="interpolate", hint=f"pass an (N, C{', ...' * need}) "
                                   "input, or pick the mode of its dimensionality")
        raise UnsupportedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                               f"{ndim}D) for the modes: nearest | linear | bilinear | bicubic "
                               f"| trilinear | area | nearest-exact (got {mode})",
                               op="interpolate", hint="add a batch dimension: x.unsqueeze(0)")


#: the modes PyTorch also runs on uint8 images
_UINT8_MODES = ("nearest", "nearest-exact", "bilinear")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None) -> Tensor:
    """Resize the spatial dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W), as
    ``torch.nn.functional.interpolate``.

    Args:
        size: the output spatial size (one int for all); or give ``scale_factor`` instead
            (a number or one per dimension; output = floor(input * scale_factor)).
        mode: 'nearest', 'nearest-exact', 'linear' (3-d input), 'bilinear' or 'bicubic'
            (4-d), 'trilinear' (5-d) or 'area' (adaptive average pooling). 'nearest',
            'nearest-exact' and 'bilinear' also take uint8 (bilinear in PyTorch's fixed point).
        align_corners: interpolating modes only: True maps the corner elements' centres onto
            each other, False (default) their outer edges.
        recompute_scale_factor: True derives the sampling scale from the sizes rather than
            using ``1 / scale_factor`` (they differ when the product is not whole).

    Raises ArgumentError (a ValueError) for PyTorch's argument errors and UnsupportedError
    when the mode does not fit the input's dimensionality.
    """
    try:
        check_tensors(_NEAREST[2], input)
        if mode not in _MODES:
            raise UnsupportedError(f"mode {mode!r} is not one of {', '.join(_MODES)}",
                                   op="interpolate", hint="use e.g. mode='bilinear'")
        if mode in ("nearest", "nearest-exact", "area"):
            if align_corners is not None:
                raise ArgumentError("align_corners option can only be set with the "
                                    "interpolating modes: linear | bilinear | bicubic | trilinear",
                                    op="interpolate", hint="leave align_corners=None")
        elif align_corners is None:
            align_corners = False
        n = input._data.ndim - 2
        if size is not None and scale_factor is not None:
            raise ArgumentError("only one of size or scale_factor should be defined",
                                op="interpolate", hint="drop one of them")
        if size is None and scale_factor is None:
            raise ArgumentError("either size or scale_factor should be defined",
                                op="interpolate", hint="e.g. scale_factor=2 or size=(64, 64)")
        if recompute_scale_factor and size is not None:
            raise ArgumentError("recompute_scale_factor is not meaningful with an explicit "
                                "size.", op="interpolate", hint="drop recompute_scale_factor")
        _mode_fits(mode, n + 2)
        if size is not None:
            out, scales = _per_dim(size, n, "output size", input, _integer), (None,) * n
        else:
            scales = _per_dim(scale_factor, n, "scale_factor", input, float)
            out = tuple(math.floor(length * s) for length, s in zip(input.shape[2:], scales))
            if recompute_scale_factor or mode == "area":
                scales = (None,) * n
        if mode == "area":
            return _AREA[n](input, out)
        if mode == "bicubic" and input.dtype is _dt.uint8:
            raise UnsupportedError("bicubic interpolation of uint8 is not implemented",
                                   op="interpolate",
                                   hint="interpolate x.float() and round, or use 'bilinear'")
        if not (input.dtype.is_floating_point
                or (input.dtype is _dt.uint8 and mode in _UINT8_MODES)):
            raise DTypeError(f"{mode} interpolation is not implemented for {input.dtype.name}",
                             op="interpolate", hint="convert with .float() first")
        if mode in ("nearest", "nearest-exact"):
            op = (_NEAREST if mode == "nearest" else _NEAREST_EXACT)[n]
            return apply(op, (input,), {"size": out, "scales": scales})
        return apply(_INTERPOLATE[mode], (input,),
                     {"size": out, "align_corners": bool(align_corners), "scales": scales})
    except FwError as err:
        raise located(err, "interpolate", (input,), size=size, scale_factor=scale_factor,
                      mode=mode, align_corners=align_corners,
                      recompute_scale_factor=recompute_scale_factor) from None


#: Tensor methods this family provides (none: resampling is a function)
METHODS: dict = {}
