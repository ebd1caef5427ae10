"""How tensors print: ``fw.set_printoptions`` / ``fw.get_printoptions``, as PyTorch's, and the
text ``repr(tensor)`` shows.

Values are laid out by NumPy's ``array2string`` with these options (precision, summarising
past ``threshold`` elements with ``edgeitems`` at each end, ``linewidth``, scientific notation
forced on or off by ``sci_mode``), so the layout follows NumPy's conventions (``1.5`` rather
than PyTorch's ``1.5000``) while the options mean what PyTorch's do.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

import numpy as np

from . import dtypes as _dt
from .errors import ArgumentError

__all__ = ["get_printoptions", "set_printoptions"]


@dataclass
class _Options:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_PROFILES = {
    "default": _Options(),
    "short": _Options(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": _Options(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80),
}
PRINT_OPTS = _Options()


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: number of elements past which a tensor is summarised (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line (default 80).
        profile: "default", "short" or "full": resets every option to that preset first.
        sci_mode: True forces scientific notation, False forbids it, None (default) lets the
            values decide.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ArgumentError(f"unknown print profile {profile!r}", op="set_printoptions",
                                hint=f"use one of {', '.join(_PROFILES)}")
        for name, value in asdict(_PROFILES[profile]).items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict (the keywords of :func:`set_printoptions`)."""
    return asdict(PRINT_OPTS)


def format_values(values: np.ndarray, prefix: str) -> str:
    """``values`` laid out with the current options, continuation lines indented to sit
    under the first after ``prefix``."""
    opts = PRINT_OPTS
    threshold = sys.maxsize if opts.threshold == float("inf") else int(opts.threshold)
    formatter = None
    if values.dtype == _dt.bfloat16.numpy:  # exact in float32, which NumPy formats as a float
        values = values.astype(np.float32)
    if opts.sci_mode and values.dtype.kind == "f":
        formatter = {"float_kind": lambda v: f"{v:.{opts.precision}e}"}
    return np.array2string(values, separator=", ", precision=opts.precision, prefix=prefix,
                           threshold=threshold, edgeitems=opts.edgeitems,
                           max_line_width=opts.linewidth, suppress_small=opts.sci_mode is False,
                           formatter=formatter)
