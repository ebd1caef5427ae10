"""The normal (Gaussian) distribution, reparameterised by location and scale."""

from __future__ import annotations

import math

from ..ops.creation import randn
from ..ops.elementwise import erf, log
from . import constraints
from .distribution import Distribution, broadcast_all

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    """N(loc, scale^2), elementwise over the broadcast of ``loc`` and ``scale`` (> 0).

    ``rsample`` is ``loc + scale * eps`` with eps ~ N(0, 1): differentiable in both parameters.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def cdf(self, value):
        value = self._value(value)
        return (erf((value - self.loc) / (self.scale * math.sqrt(2))) + 1) * 0.5

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale * self.scale

    def rsample(self, sample_shape=()):
        return self.loc + self._noise(randn, sample_shape) * self.scale

    def log_prob(self, value):
        value = self._value(value)
        z = (value - self.loc) / self.scale
        return z * z * -0.5 - log(self.scale) - _HALF_LOG_2PI

    def entropy(self):
        return log(self.scale) + (0.5 + _HALF_LOG_2PI)
