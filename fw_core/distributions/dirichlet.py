"""The Dirichlet distribution over probability vectors (the last dim)."""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..ops.elementwise import clamp, digamma, lgamma
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import standard_gamma, xlogy


def clamp_simplex(draw):
    """Draws kept a float epsilon inside (0, 1), as PyTorch clamps its Beta and Dirichlet
    samples, so their log densities stay finite."""
    eps = float(np.finfo(draw.dtype.numpy).eps)
    return clamp(draw, min=eps, max=1 - eps)


class Dirichlet(Distribution):
    """Dirichlet(concentration) with ``concentration`` (..., K) > 0: event shape (K,), batch
    shape the leading dims.

    ``rsample`` normalises K independent Gamma(concentration_k, 1) draws, so its gradient
    w.r.t. the concentration comes from the gamma implicit gradient (see ``fw_core
    .distributions.gamma``): the same expectation as PyTorch's ``_dirichlet_grad``, computed
    by another pathwise estimator, so per-draw gradients differ from PyTorch's.
    """

    arg_constraints = {"concentration": constraints.positive_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None):
        (self.concentration,) = broadcast_all(concentration)
        if self.concentration.ndim < 1:
            raise ArgumentError("concentration must have at least one dim (the K categories), "
                                f"got shape {tuple(self.concentration.shape)}", op="Dirichlet",
                                hint="pass a vector, e.g. Dirichlet(fw.tensor([1.0, 2.0]))")
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total * total * (total + 1))

    def rsample(self, sample_shape=()):
        draws = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return clamp_simplex(draws / draws.sum(-1, keepdim=True))

    def log_prob(self, value):
        value = self._value(value)
        c = self.concentration
        return (xlogy(c - 1, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (lgamma(c).sum(-1) - lgamma(total) - (k - total) * digamma(total)
                - ((c - 1) * digamma(c)).sum(-1))
