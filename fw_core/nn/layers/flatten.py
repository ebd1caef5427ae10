"""Flatten and Unflatten: merge a range of dimensions into one, and split one back."""

from __future__ import annotations

__all__ = ["Flatten", "Unflatten"]

from ...ops.meta import argument_error
from ...ops.shape import flatten, unflatten
from ..module import Module
from ._check import check_size


class Flatten(Module):
    """Merge dimensions ``start_dim`` .. ``end_dim`` into one.

    Shape: (N, C, H, W) -> (N, C * H * W) with the defaults (start_dim=1, end_dim=-1).
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x):
        return flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (one entry may be -1).

    Shape: (N, 12) -> (N, 3, 4) with ``Unflatten(1, (3, 4))``. A ShapeError says when the
    sizes do not multiply to the dimension's length.
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim = dim
        sizes = tuple(check_size("Unflatten", "unflattened_size", s, least=-1,
                                 unflattened_size=unflattened_size) for s in unflattened_size)
        if sizes.count(-1) > 1:
            raise argument_error("Unflatten", f"unflattened_size {sizes} has more than one -1",
                                 "at most one size can be -1 (inferred from the others)",
                                 unflattened_size=unflattened_size)
        self.unflattened_size = sizes

    def forward(self, x):
        return unflatten(x, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
