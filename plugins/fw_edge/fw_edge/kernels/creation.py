"""Creation ops: ``zeros``, ``ones``, ``full`` and ``arange``, their values fixed once sizes
are known, so each call only fills or copies into the output."""

from __future__ import annotations

import numpy as np

from ..kernel_api import Kernel, Writes


def _fill(value):
    def factory(spec):
        number = spec.out.dtype.type(spec.attrs["fill_value"] if value is None else value)
        return Writes(lambda out: out.fill(number))
    return factory


def arange(spec):
    """``start, start + step, ...`` before ``end``, computed at planning and copied per call."""
    a = spec.attrs
    values = np.arange(a.get("start", 0), a["end"], a.get("step", 1), dtype=spec.out.dtype)
    return Writes(lambda out: np.copyto(out, values))


KERNELS = [Kernel("zeros", _fill(0)), Kernel("ones", _fill(1)), Kernel("full", _fill(None)),
           Kernel("arange", arange)]
