"""PixelShuffle and PixelUnshuffle, as PyTorch's (no parameters)."""

from __future__ import annotations

__all__ = ["PixelShuffle", "PixelUnshuffle"]

from ..module import Module
from ..shuffle_composed import _factor, pixel_shuffle, pixel_unshuffle


class PixelShuffle(Module):
    """Rearrange (*, C * r^2, H, W) into (*, C, H * r, W * r), r = ``upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = _factor("PixelShuffle", "upscale_factor", upscale_factor)

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange (*, C, H * r, W * r) into (*, C * r^2, H, W), r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = _factor("PixelUnshuffle", "downscale_factor", downscale_factor)

    def forward(self, input):  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
