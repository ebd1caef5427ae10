"""Upsampling layers over :func:`fw_core.nn.functional.interpolate`: Upsample and the older
UpsamplingNearest2d / UpsamplingBilinear2d (the latter with align_corners=True, as PyTorch)."""

from __future__ import annotations

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

from ...ops.meta import argument_error
from .. import functional as F
from ..module import Module
from ._check import check_choice

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "nearest-exact", "area")


class Upsample(Module):
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) inputs to ``size`` or by
    ``scale_factor`` (one of them), as ``F.interpolate`` with the same arguments.

    Args:
        size: the output spatial size (an int for all dimensions, or one per dimension).
        scale_factor: a multiplier (a number or one per dimension), kept as floats.
        mode: 'nearest', 'linear', 'bilinear', 'bicubic', 'trilinear', 'nearest-exact' or
            'area'.
        align_corners: for the interpolating modes only (see interpolate).
        recompute_scale_factor: derive the sampling scale from the sizes.
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        check_choice(name, "mode", mode, _MODES)
        if (size is None) == (scale_factor is None):
            raise argument_error(name, "exactly one of size or scale_factor should be defined",
                                 "pass e.g. scale_factor=2 or size=(64, 64)", size=size,
                                 scale_factor=scale_factor)
        self.name = name
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W) (``Upsample(mode='nearest')``)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with align_corners=True
    (``Upsample(mode='bilinear', align_corners=True)``)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
