"""Dropout: zero random elements while training, the identity in evaluation mode."""

from __future__ import annotations

__all__ = ["Dropout"]

from .. import functional as F
from ..module import Module


class Dropout(Module):
    """While training, zero each element with probability ``p`` and scale the rest by
    1 / (1 - p), so the expectation is unchanged; in evaluation mode return the input.

    Shape: (*) -> (*). The mask comes from the default generator (``fw.manual_seed``).

    Raises:
        ValueError: if p is not in [0, 1].
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
