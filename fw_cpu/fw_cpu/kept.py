"""What a forward kernel keeps for the backward kernel of the same output, while that output lives.

A recurrent layer's backward needs values its forward computed on the way (the gate activations
of every step, oneDNN's workspace) that are not part of the op's result. The forward kernel
files them here under its output array; the backward kernel, which receives that array again
(the op's VJP passes it), finds them and skips recomputing the forward. The entry goes when the
output array is freed (a weak reference), so it lives exactly as long as autograd or the caller
holds the output, and no longer. A backward kernel that finds nothing (the forward ran on
another kernel, or kept nothing) recomputes what it needs from the inputs: keeping only ever
saves time, never changes a result.
"""

from __future__ import annotations

import weakref
from functools import partial


class KeptForBackward:
    """A map from live output arrays (by identity) to what their forward kernel kept."""

    def __init__(self):
        self._entries: dict[int, tuple[weakref.ref, object]] = {}

    def keep(self, out, value) -> None:
        """File ``value`` under the array ``out`` until ``out`` is freed."""
        key = id(out)
        self._entries[key] = (weakref.ref(out, partial(self._drop, key)), value)

    def find(self, out):
        """What was kept for this very array ``out``, or None."""
        entry = self._entries.get(id(out))
        if entry is None or entry[0]() is not out:
            return None
        return entry[1]

    def _drop(self, key: int, ref: weakref.ref) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is ref:  # not a newer array that reused the id
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)
