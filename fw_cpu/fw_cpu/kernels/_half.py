"""The 16-bit floats (float16, bfloat16): kernels compute them in float32 and round back once.

That is what PyTorch's CPU kernels do (their ``acc_type``), and what NumPy needs: it has no
half-precision BLAS, and a sum accumulated in bfloat16's 8-bit mantissa stops growing after a
few hundred terms. ``fw_core.dtypes.HALF_NUMPY`` names the dtypes; these helpers apply it.
"""

from __future__ import annotations

from fw_core.dtypes import HALF_NUMPY


def widen(xp, x):
    """``x``, or a float32 copy of a float16 or bfloat16 ``x``."""
    return x.astype(xp.float32) if x.dtype in HALF_NUMPY else x


def compute_dtype(xp, dtype):
    """The dtype a kernel computes ``dtype`` in: float32 for a 16-bit float, else ``dtype``."""
    return xp.dtype(xp.float32) if dtype in HALF_NUMPY else dtype


def in_float32(xp, fn, x, *args, **attrs):
    """``fn(x, *args, **attrs)``, a 16-bit float ``x`` computed in float32 and the result rounded
    once: a kernel of several NumPy steps (``x * sigmoid(x)``) would round after each."""
    if x.dtype in HALF_NUMPY:
        return fn(x.astype(xp.float32), *args, **attrs).astype(x.dtype)
    return fn(x, *args, **attrs)
