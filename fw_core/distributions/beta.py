"""The beta distribution on [0, 1]."""

from __future__ import annotations

from ..ops.elementwise import digamma, lgamma
from . import constraints
from .dirichlet import clamp_simplex
from .distribution import Distribution, broadcast_all
from .gamma import standard_gamma, xlogy


class Beta(Distribution):
    """Beta(concentration1 alpha > 0, concentration0 beta > 0): density
    ``x^(alpha-1) (1-x)^(beta-1) / B(alpha, beta)``; mean ``alpha / (alpha + beta)``.

    ``rsample`` is ``X / (X + Y)`` with X ~ Gamma(alpha), Y ~ Gamma(beta): differentiable in
    both by the gamma implicit gradient (per-draw gradients differ from PyTorch's, which
    differentiates the Beta CDF directly; their expectation is the same).
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total * total * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1.expand(shape))
        y = standard_gamma(self.concentration0.expand(shape))
        return clamp_simplex(x / (x + y))

    def log_prob(self, value):
        value = self._value(value)
        a, b = self.concentration1, self.concentration0
        return xlogy(a - 1, value) + xlogy(b - 1, 1 - value) - log_beta(a, b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        return (log_beta(a, b) - (a - 1) * digamma(a) - (b - 1) * digamma(b)
                + (a + b - 2) * digamma(a + b))


def log_beta(a, b):
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    return lgamma(a) + lgamma(b) - lgamma(a + b)
