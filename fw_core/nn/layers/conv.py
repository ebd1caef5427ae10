"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (cross-correlations, as PyTorch).

Weights start from ``kaiming_uniform_(a=sqrt(5))`` and biases from U(-1/sqrt(fan_in),
1/sqrt(fan_in)), PyTorch's defaults, so the same seed-free statistics hold.
"""

from __future__ import annotations

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

from ..._state import state
from ...errors import ArgumentError, FwError, ShapeError
from ...ops.conv import check_conv_geometry, check_groups
from ...ops.dispatch import not_a_tensor
from ...ops.meta import argument_error, describe, located
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from ._check import check_choice, check_features, check_size
from ._params import reset_fan_in_uniform, weight_and_bias

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
_LAYOUTS = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


class _ConvNd(Module):
    """What the convolutions and transposed convolutions share: arguments, parameters,
    initialisation."""

    _n = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding=0, device=None, dtype=None):
        super().__init__()
        name, n = type(self).__name__, self._n
        arguments = {"in_channels": in_channels, "out_channels": out_channels,
                     "kernel_size": kernel_size, "stride": stride, "padding": padding,
                     "dilation": dilation, "groups": groups}
        try:
            check_size(name, "in_channels", in_channels)
            check_size(name, "out_channels", out_channels)
            check_choice(name, "padding_mode", padding_mode, _PADDING_MODES)
            if isinstance(padding, str):
                check_choice(name, "padding", padding, ("valid", "same"))
            geometry = check_conv_geometry(name, n, kernel_size, stride, dilation, padding,
                                           output_padding if self._transposed else None)
            self.kernel_size, self.stride, self.dilation, self.padding, _ = geometry
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ArgumentError("padding='same' is not supported for strided convolutions",
                                    hint="pass explicit padding, e.g. padding=kernel_size // 2")
            check_groups(name, groups, in_channels, out_channels)
        except FwError as err:
            raise located(err, name, **arguments) from None
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.output_padding = geometry[4] or (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's (left, right) pairs from the last dimension back; asymmetric for 'same' with
        # an odd total, where the extra element goes on the right as in PyTorch
        totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
        if self.padding == "valid":
            pairs = [(0, 0)] * n
        elif self.padding == "same":
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = tuple(v for pair in reversed(pairs)
                                                      for v in pair)
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        weight_and_bias(self, shape, out_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation."""
        reset_fan_in_uniform(self.weight, self.bias)

    def _check_input(self, x) -> None:
        n = self._n
        if not isinstance(x, Tensor):
            raise not_a_tensor(type(self).__name__, x)
        if x.ndim not in (n + 1, n + 2):
            raise ShapeError(
                f"expected a {n + 2}-d batch {_LAYOUTS[n]} or an unbatched {n + 1}-d input, got "
                f"shape {tuple(x.shape)}",
                op=type(self).__name__, module=state.module_path or None,
                inputs=describe((x,)), hint="add the missing dimension with unsqueeze")
        check_features(type(self).__name__, x, self.in_channels, "in_channels",
                       dim=x.ndim - n - 1)

    def _conv_padding(self):
        """The padding the conv op gets: ints when symmetric, else 0 after an explicit pad."""
        pads = self._reversed_padding_repeated_twice
        symmetric = all(pads[i] == pads[i + 1] for i in range(0, len(pads), 2))
        if self.padding_mode == "zeros" and symmetric:
            return tuple(pads[::2][::-1]), None
        return 0, ("constant" if self.padding_mode == "zeros" else self.padding_mode)

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _conv = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device=device, dtype=dtype)

    def forward(self, x):
        self._check_input(x)
        padding, pad_mode = self._conv_padding()
        if pad_mode is not None:
            x = F.pad(x, self._reversed_padding_repeated_twice, pad_mode)
        return type(self)._conv(x, self.weight, self.bias, self.stride, padding,
                                self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution (cross-correlation) over (N, C_in, L) signals.

    Args:
        in_channels, out_channels: C_in and C_out.
        kernel_size, stride, dilation: ints (or 1-tuples).
        padding: an int, "valid" (none) or "same" (output length = input length, stride 1).
        groups: split channels into groups convolved separately (C_in, C_out divisible).
        bias: learn a per-output-channel bias.
        padding_mode: "zeros", "reflect", "replicate" or "circular".

    Shape: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) with
    L_out = floor((L + 2 padding - dilation (k - 1) - 1) / stride + 1).
    Parameters: ``weight`` (C_out, C_in / groups, k), ``bias`` (C_out).
    """

    _n = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution (cross-correlation) over (N, C_in, H, W) images.

    Arguments as Conv1d, with ints or pairs for kernel_size, stride, padding and dilation.

    Shape: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out), each of H_out, W_out
    floor((size + 2 padding - dilation (k - 1) - 1) / stride + 1).
    Parameters: ``weight`` (C_out, C_in / groups, kH, kW), ``bias`` (C_out).
    """

    _n = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution (cross-correlation) over (N, C_in, D, H, W) volumes.

    Arguments as Conv1d, with ints or triples for kernel_size, stride, padding and dilation.

    Shape: (N, C_in, D, H, W) or (C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out), sizes as
    Conv2d's. Parameters: ``weight`` (C_out, C_in / groups, kD, kH, kW), ``bias`` (C_out).
    """

    _n = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d, 2d and 3d share: torch's argument order (output_padding after
    padding, dilation after bias), zero padding only, and ``forward(x, output_size)``."""

    _transposed = True
    _conv = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        name = type(self).__name__
        if padding_mode != "zeros":
            raise argument_error(name, 'only "zeros" padding_mode is supported, '
                                 f"got {padding_mode!r}", 'leave padding_mode="zeros"',
                                 padding_mode=padding_mode)
        if isinstance(padding, str):
            raise argument_error(name, "padding must be ints, not a string",
                                 "pass padding as an int or a tuple of ints", padding=padding)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device=device, dtype=dtype)

    def _output_padding(self, x, output_size) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = tuple(int(s) for s in output_size)
        if len(output_size) not in (n, n + 2):
            raise ShapeError(
                f"output_size must have {n} or {n + 2} elements, got {output_size}",
                op=type(self).__name__, module=state.module_path or None,
                hint=f"pass the {n} spatial sizes of the output")
        output_size = output_size[-n:]
        extra = []
        for d in range(n):
            size = x.shape[x.ndim - n + d]
            smallest = ((size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ShapeError(
                    f"requested output size {output_size} is not reachable from input "
                    f"{tuple(x.shape)}: dimension {d} can be {smallest} to {largest}",
                    op=type(self).__name__, module=state.module_path or None,
                    hint="pass an output_size in that range")
            extra.append(output_size[d] - smallest)
        return tuple(extra)

    def forward(self, x, output_size=None):
        self._check_input(x)
        return type(self)._conv(x, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(x, output_size), self.groups,
                                self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over (N, C_in, L); arguments as ConvTranspose2d, ints.

    Shape: (N, C_in, L) -> (N, C_out, L_out) with
    L_out = (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1.
    Parameters: ``weight`` (C_in, C_out / groups, k), ``bias`` (C_out).
    """

    _n = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution: the gradient of Conv2d w.r.t. its input, used to upsample.

    Args:
        in_channels, out_channels, kernel_size, stride, dilation, groups, bias: as Conv2d.
        padding: crops ``padding`` elements from each side of the full output (so a
            Conv2d with the same padding maps the output back to the input's size).
        output_padding: extra size added on one side of each output dimension (less than
            stride or dilation), to pick among the input sizes a strided Conv2d maps together.

    Shape: (N, C_in, H, W) -> (N, C_out, H_out, W_out) with
    H_out = (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1.
    ``forward(input, output_size=...)`` picks output_padding to reach that size.
    Parameters: ``weight`` (C_in, C_out / groups, kH, kW), ``bias`` (C_out).
    """

    _n = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over (N, C_in, D, H, W); arguments as ConvTranspose2d,
    ints or triples. Parameters: ``weight`` (C_in, C_out / groups, kD, kH, kW), ``bias``
    (C_out).
    """

    _n = 3
    _conv = staticmethod(F.conv_transpose3d)
