"""Pooling layers: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over (N, C, H, W) inputs."""

from __future__ import annotations

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]

from ...errors import FwError
from ...ops.meta import located
from ...ops.pooling import check_divisor, check_window
from .. import functional as F
from ..module import Module
from ._check import check_size


def _check_window(layer: str, kernel_size, stride, padding, dilation=1,
                  divisor_override=None) -> None:
    """Refuse a window the pooling op would refuse, when the layer is built."""
    try:
        check_window(layer, kernel_size, stride, padding, dilation)
        check_divisor(divisor_override, layer)
    except FwError as err:
        raise located(err, layer, kernel_size=kernel_size, stride=stride, padding=padding,
                      dilation=dilation) from None


class MaxPool2d(Module):
    """Max over kH x kW windows (stride defaults to the kernel size).

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) with
    H_out = floor((H + 2 padding - dilation (kH - 1) - 1) / stride + 1) (ceil with ceil_mode).
    With ``return_indices`` forward returns (values, flat indices into each H x W plane).
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        _check_window("MaxPool2d", kernel_size, stride, padding, dilation)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over kH x kW windows (stride defaults to the kernel size).

    ``count_include_pad`` counts zero padding in the divisor; ``divisor_override`` replaces it.
    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out), sizes as MaxPool2d (dilation 1).
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__()
        _check_window("AvgPool2d", kernel_size, stride, padding, divisor_override=divisor_override)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean pooling to a fixed output size whatever the input size (windows chosen as
    PyTorch's: start floor(i H / H_out), end ceil((i + 1) H / H_out)).

    Args:
        output_size: an int (square), or (H_out, W_out) where None keeps that input size.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out).
    """

    def __init__(self, output_size):
        super().__init__()
        sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,)
        for size in sizes:
            if size is not None:
                check_size("AdaptiveAvgPool2d", "output_size", size, output_size=output_size)
        self.output_size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
