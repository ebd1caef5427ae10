"""Fold and Unfold: sliding local blocks of an image as columns (im2col), and columns summed
back into an image (col2im), as PyTorch's ``nn.Fold`` / ``nn.Unfold``."""

from __future__ import annotations

__all__ = ["Fold", "Unfold"]

from ..im2col import fold, unfold
from ..module import Module


class Fold(Module):
    """Sum columns (N, C * kh * kw, L) into an image (N, C, *output_size); see ``F.fold``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """Sliding blocks of (N, C, H, W) as columns (N, C * kh * kw, L); see ``F.unfold``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
