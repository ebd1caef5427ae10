"""The ``special`` namespace of the cpu kernels: ``scipy.special``'s ``erf`` and ``expit``,
imported on first use.

Importing SciPy costs ~0.1 s and ~15 MiB, which every ``import fw_core`` would pay for the four
kernels (erf, gelu, sigmoid, silu) that call these. The first look-up of a name imports
``scipy.special`` and binds the function here, so every later look-up is a plain module
attribute: the kernels pay nothing per call for the deferral.
"""

from __future__ import annotations

#: the scipy.special functions the kernels call (``fw_cpu.kernels``: "erf and expit")
NAMES = ("erf", "expit", "gammaln", "digamma", "polygamma")


def __getattr__(name: str):
    if name not in NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import scipy.special

    value = getattr(scipy.special, name)
    globals()[name] = value
    return value
