"""The smallest arrays fw_onednn's eltwise, softmax and normalisation kernels take.

Each of those kernels has a cut-off measured on this project's 2-core AVX-512 machine
(``benchmarks/eltwise.py``): below it, a oneDNN call (OpenMP fork and join, ~2–3 µs) costs more
than fw_cpu's NumPy or Numba kernel. :func:`set_min_elements` replaces every cut-off at once
(0: oneDNN takes every call it can, as the conformance suite's ``onednn_every_product`` plugin
sets it); None restores the measured ones.
"""

from __future__ import annotations

from .arguments import whole_number

#: op -> the fewest elements its guard takes now (the kernels' modules register their defaults)
CUTOFFS: dict[str, int] = {}
_DEFAULTS: dict[str, int] = {}


def register(op: str, measured: int) -> None:
    """Declare ``op``'s measured cut-off (at import of the module that serves it)."""
    _DEFAULTS[op] = measured
    CUTOFFS[op] = measured


def set_min_elements(elements: int | None) -> None:
    """Send arrays of at least ``elements`` elements to oneDNN's eltwise, softmax and
    normalisation kernels (where the guard otherwise takes them), or restore the measured
    cut-offs with None.

    Raises:
        ArgumentError: ``elements`` is neither None nor an integer of at least 0.
    """
    if elements is None:
        CUTOFFS.update(_DEFAULTS)
        return
    whole_number(elements, least=0, setter="fw_onednn.set_min_elements", name="elements",
                 example="fw_onednn.set_min_elements(0)")
    for op in CUTOFFS:
        CUTOFFS[op] = elements
