"""Dropout: zero random elements while training, the identity in evaluation mode."""

from __future__ import annotations

__all__ = ["Dropout"]

from .. import functional as F
from ..module import Module
from ._check import check_range


class Dropout(Module):
    """While training, zero each element with probability ``p`` and scale the rest by
    1 / (1 - p), so the expectation is unchanged; in evaluation mode return the input.

    Shape: (*) -> (*). The mask comes from the default generator (``fw.manual_seed``).

    Raises:
        ArgumentError: if p is not in [0, 1] (a ValueError); ArgumentTypeError if it is not a
            number.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        self.p = check_range("Dropout", "p", p, 0.0, 1.0,
                             hint="p is the probability of zeroing an element: between 0 and 1 "
                             "(e.g. Dropout(0.1))")
        self.inplace = inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
