"""Dropout: zero random elements (or whole channels) while training, the identity in
evaluation mode; the alpha variants keep SELU activations self-normalising."""

from __future__ import annotations

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]

from .. import functional as F
from .. import random_composed as R
from ..module import Module
from ._check import check_range


class _DropoutNd(Module):
    """What every dropout layer shares: ``p`` (checked to be in [0, 1]), ``inplace`` and the
    repr, as PyTorch's ``_DropoutNd`` (the variants are siblings, not Dropout subclasses)."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        self.p = check_range(type(self).__name__, "p", p, 0.0, 1.0,
                             hint="p is the probability of zeroing an element: between 0 and 1 "
                             "(e.g. Dropout(0.1))")
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """While training, zero each element with probability ``p`` and scale the rest by
    1 / (1 - p), so the expectation is unchanged; in evaluation mode return the input.

    Shape: (*) -> (*). The mask comes from the default generator (``fw.manual_seed``).

    Raises:
        ArgumentError: if p is not in [0, 1] (a ValueError); ArgumentTypeError if it is not a
            number.
    """

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)


class _ChannelDropout(_DropoutNd):
    """A Dropout whose forward is the functional form its subclass names (``_function``)."""

    def forward(self, x):
        return self._function(x, self.p, self.training, self.inplace)


class Dropout1d(_ChannelDropout):
    """While training, zero whole channels of (N, C, L) (or (C, L)) with probability ``p``
    and scale the rest by 1 / (1 - p): neighbouring positions are correlated, so dropping
    single elements regularises little."""

    _function = staticmethod(R.dropout1d)


class Dropout2d(_ChannelDropout):
    """Dropout1d for (N, C, H, W) feature maps (a 3-d input is taken as (N, C, L), as
    PyTorch does, with its warning)."""

    _function = staticmethod(R.dropout2d)


class Dropout3d(_ChannelDropout):
    """Dropout1d for (N, C, D, H, W) (or (C, D, H, W)) volumes."""

    _function = staticmethod(R.dropout3d)


class AlphaDropout(_ChannelDropout):
    """Dropout for SELU networks: dropped elements take SELU's saturation value and the
    output is scaled and shifted so its mean and variance stay those of the input."""

    _function = staticmethod(R.alpha_dropout)


class FeatureAlphaDropout(_ChannelDropout):
    """AlphaDropout of whole channels of (N, C, *)."""

    _function = staticmethod(R.feature_alpha_dropout)
