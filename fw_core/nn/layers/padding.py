"""Padding layers over ``F.pad``, as PyTorch's: ZeroPad, ConstantPad, ReflectionPad,
ReplicationPad and CircularPad in 1, 2 and 3 dimensions. ``padding`` is an int (the same on
every side) or a tuple ``(left, right[, top, bottom[, front, back]])``, last dimension first;
negative amounts crop. The layers have no parameters or buffers."""

from __future__ import annotations

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]

import numbers

from ...errors import ArgumentTypeError
from ...ops.meta import argument_error
from ...ops.rearrange import pad
from ..module import Module
from ._check import check_ndim


def _padding(layer: str, padding, dims: int) -> tuple[int, ...]:
    """An int repeated 2 * dims times, or the tuple as given (ints), as torch's _ntuple."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * (2 * dims)
    try:
        sizes = tuple(padding)
    except TypeError:
        sizes = None
    if sizes is None or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool)
                                for s in sizes):
        raise argument_error(layer, f"padding must be an int or a tuple of ints, got "
                             f"{padding!r}", f"pass e.g. padding=1 or padding={(1,) * 2 * dims}",
                             error=ArgumentTypeError, padding=padding)
    return tuple(int(s) for s in sizes)


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self._dims)

    def forward(self, input):  # noqa: A002 - PyTorch's name
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):  # noqa: A002
        # torch checks the layout first: (C, *spatial) or (N, C, *spatial)
        check_ndim(type(self).__name__, input, (self._dims + 1, self._dims + 2),
                   f"(C, *{self._dims} spatial) or (N, C, *{self._dims} spatial)")
        return pad(input, self.padding, "circular")


_SIDES = {1: "the last dimension", 2: "the last two dimensions (left, right, top, bottom)",
          3: "the last three dimensions (left, right, top, bottom, front, back)"}
_HOW = {"Constant": "with ``value``", "Zero": "with zeros",
        "Reflection": "with their reflection (the edge not repeated; pads < the size)",
        "Replication": "by repeating their edge values",
        "Circular": "with the values from their other ends (wrap around)"}
_BASES = {"Constant": _ConstantPadNd, "Zero": _ZeroPadNd, "Reflection": _PadNd,
          "Replication": _PadNd, "Circular": _CircularPadNd}
_MODES = {"Reflection": "reflect", "Replication": "replicate", "Circular": "circular"}


def _layer(kind: str, dims: int) -> type:
    name = f"{kind}Pad{dims}d"
    doc = f"Pad {_SIDES[dims]} {_HOW[kind]}, as torch.nn.{name}."
    return type(name, (_BASES[kind],), {"__doc__": doc, "__module__": __name__,
                                        "__qualname__": name, "_dims": dims,
                                        "_mode": _MODES.get(kind, "constant")})


(ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d,
 ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
 CircularPad1d, CircularPad2d, CircularPad3d) = (
    _layer(kind, dims) for kind in _HOW for dims in (1, 2, 3))
