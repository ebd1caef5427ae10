"""fw's (N, C, *spatial) arrays as oneDNN sees them: dims and element strides, no copies.

oneDNN's convolutions and pools take a batch dimension always, so an unbatched (C, *spatial)
array, which fw accepts as PyTorch does, is the same memory with a batch of one. A dimension of
size 1 addresses nothing, so its stride is set to what a contiguous array would have there:
oneDNN then recognises a plain layout (and skips a reorder) whatever stride NumPy gave it.
oneDNN describes no negative strides, and fw_cpu takes views that repeat elements (stride 0).
"""

from __future__ import annotations

from .layouts import elements


def batched(shape, strides, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``(dims, element strides)`` of a float32 array of ``shape`` and byte ``strides`` as a
    ``rank``-d (N, C, *spatial) operand, or None when oneDNN cannot describe it (a stride that
    is negative, zero over more than one element, or not a whole element)."""
    counted = elements(strides)
    if counted is None or len(shape) not in (rank - 1, rank):
        return None
    dims, steps = list(shape), list(counted)
    if len(dims) == rank - 1:
        dims.insert(0, 1)
        steps.insert(0, 0)
    for i in reversed(range(rank)):
        if dims[i] == 1:
            steps[i] = steps[i + 1] * dims[i + 1] if i + 1 < rank else 1
        elif steps[i] <= 0:
            return None
    return tuple(dims), tuple(steps)

