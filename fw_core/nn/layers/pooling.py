"""Pooling layers in 1, 2 and 3 d, as PyTorch's: max, average, adaptive average and max,
max unpooling and power-average (LP) pooling over (N, C, *spatial) inputs.

Each family is one class parametrised by the number of spatial dimensions ``_n`` and the
functional it calls; the windows are checked when the layer is built.
"""

from __future__ import annotations

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]

from ...errors import FwError
from ...ops.meta import located
from ...ops.pooling import check_divisor, check_window
from .. import functional as F
from ..module import Module
from ._check import check_range, check_size


def _check_window(layer: str, n: int, kernel_size, stride, padding, dilation=1,
                  divisor_override=None) -> None:
    """Refuse a window the pooling op would refuse, when the layer is built."""
    try:
        check_window(layer, kernel_size, stride, padding, dilation, n)
        check_divisor(divisor_override, layer)
    except FwError as err:
        raise located(err, layer, kernel_size=kernel_size, stride=stride, padding=padding,
                      dilation=dilation) from None


def _tuple(value, n: int) -> tuple:
    """PyTorch's _single/_pair/_triple: an int repeated ``n`` times, a sequence as a tuple."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _MaxPoolNd(Module):
    """Max over windows (stride defaults to the kernel size).

    Shape: (N, C, *S) or (C, *S) -> (N, C, *S_out) with
    S_out = floor((S + 2 padding - dilation (k - 1) - 1) / stride + 1) (ceil with ceil_mode).
    With ``return_indices`` forward returns (values, flat indices into each spatial plane).
    """

    _n = 2
    _pool = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        _check_window(type(self).__name__, self._n, kernel_size, stride, padding, dilation)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, x):
        return type(self)._pool(x, self.kernel_size, self.stride, self.padding, self.dilation,
                                self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over k-wide windows of (N, C, L) or (C, L); see :class:`MaxPool2d`."""

    _n = 1
    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over kH x kW windows of (N, C, H, W) or (C, H, W) (stride defaults to the kernel
    size). H_out = floor((H + 2 padding - dilation (kH - 1) - 1) / stride + 1) (ceil with
    ceil_mode). With ``return_indices`` forward returns (values, flat indices into each
    H x W plane)."""

    _n = 2
    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over kD x kH x kW windows of (N, C, D, H, W) or (C, D, H, W); see MaxPool2d."""

    _n = 3
    _pool = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    """Mean over windows (stride defaults to the kernel size).

    ``count_include_pad`` counts zero padding in the divisor; ``divisor_override`` (2-d and
    3-d) replaces it. Sizes as max pooling's (dilation 1).
    """

    _n = 2
    _pool = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__()
        _check_window(type(self).__name__, self._n, kernel_size, stride, padding,
                      divisor_override=divisor_override)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x):
        return type(self)._pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over k-wide windows of (N, C, L) or (C, L); no divisor_override, and the window
    kept as 1-tuples, as PyTorch's."""

    _n = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        del self.divisor_override
        self.kernel_size = _tuple(self.kernel_size, 1)
        self.stride = _tuple(self.stride, 1)
        self.padding = _tuple(self.padding, 1)

    def forward(self, x):
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over kH x kW windows of (N, C, H, W) or (C, H, W) (stride defaults to the kernel
    size); ``count_include_pad`` counts zero padding in the divisor, ``divisor_override``
    replaces it."""

    _n = 2
    _pool = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """Mean over kD x kH x kW windows of (N, C, D, H, W) or (C, D, H, W); see AvgPool2d."""

    _n = 3
    _pool = staticmethod(F.avg_pool3d)


def _check_output_size(layer: str, output_size) -> None:
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,)
    for size in sizes:
        if size is not None:
            check_size(layer, "output_size", size, output_size=output_size)


class _AdaptiveAvgPoolNd(Module):
    """Mean pooling to a fixed output size whatever the input size (windows chosen as
    PyTorch's: start floor(i L / L_out), end ceil((i + 1) L / L_out)).

    Args:
        output_size: an int (the same for each dimension), or one per dimension where None
            keeps that input size.
    """

    _pool = None

    def __init__(self, output_size):
        super().__init__()
        _check_output_size(type(self).__name__, output_size)
        self.output_size = output_size

    def forward(self, x):
        return type(self)._pool(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """(N, C, L) or (C, L) -> (N, C, L_out) averages over L_out bins."""

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """(N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) averages; ``output_size`` an int
    (square) or (H_out, W_out), None keeping that input size."""

    _pool = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """(N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) averages."""

    _pool = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(_AdaptiveAvgPoolNd):
    """Max pooling to a fixed output size (bins as the adaptive average's); with
    ``return_indices`` forward returns (values, flat indices into each spatial plane)."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x):
        return type(self)._pool(x, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """(N, C, L) or (C, L) -> (N, C, L_out) maxima over L_out bins."""

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """(N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) maxima."""

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """(N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) maxima."""

    _pool = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    """The partial inverse of max pooling: ``forward(input, indices, output_size=None)`` puts
    each value at the index the max pool returned, zeros elsewhere. The output size is
    (S - 1) stride - 2 padding + kernel_size per dimension, or ``output_size`` (within a
    stride of it). The window is kept as n-tuples, as PyTorch's."""

    _n = 2
    _unpool = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._n
        _check_window(type(self).__name__, n, kernel_size, stride, padding)
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride if stride is not None else kernel_size, n)
        self.padding = _tuple(padding, n)

    def forward(self, input, indices, output_size=None):  # noqa: A002 - PyTorch's name
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding,
                                  output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of MaxPool1d: (N, C, L) values and indices -> (N, C, L_out)."""

    _n = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of MaxPool2d: (N, C, H, W) values and indices -> (N, C, H_out, W_out)."""

    _n = 2
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of MaxPool3d: (N, C, D, H, W) values and indices -> (N, C, D_out, H_out,
    W_out)."""

    _n = 3
    _unpool = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    """The p-norm (sum of x^p)^(1/p) of each window, p = ``norm_type`` (stride defaults to
    the kernel size; no padding), as PyTorch's LPPool: arguments stored as given."""

    _n = 2
    _pool = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        name = type(self).__name__
        check_range(name, "norm_type", norm_type, 0.0, hint="pass a positive norm_type, e.g. 2")
        _check_window(name, self._n, kernel_size, stride, 0)
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, x):
        return type(self)._pool(x, float(self.norm_type), self.kernel_size, self.stride,
                                self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """p-norm over k-wide windows of (N, C, L) or (C, L)."""

    _n = 1
    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """p-norm over kH x kW windows of (N, C, H, W) or (C, H, W)."""

    _n = 2
    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """p-norm over kD x kH x kW windows of (N, C, D, H, W) or (C, D, H, W)."""

    _n = 3
    _pool = staticmethod(F.lp_pool3d)
