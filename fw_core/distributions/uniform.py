"""The continuous uniform distribution on [low, high)."""

from __future__ import annotations

import math

from ..ops.creation import rand
from ..ops.elementwise import clamp, log, logical_and
from . import constraints
from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    """Uniform on ``[low, high)``, elementwise; ``low < high`` is checked when validating.

    ``rsample`` is ``low + u * (high - low)`` with u ~ U[0, 1): differentiable in both bounds.
    ``log_prob`` is ``-log(high - low)`` inside and ``-inf`` outside (a value outside
    ``[low, high]`` is refused when validating, as in PyTorch).
    """

    arg_constraints = {"low": constraints.real, "high": constraints.real}
    has_rsample = True

    def __init__(self, low, high, validate_args: bool | None = None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)
        if self._validate_args:
            high = self.high.detach().numpy()
            self._check("parameter low", self.low,
                        constraints.Constraint("below high", lambda v: v < high))

    @property
    def support(self):
        return constraints.interval(self.low.detach().numpy(), self.high.detach().numpy(),
                                    closed_high=True)

    @property
    def mean(self):
        return (self.low + self.high) * 0.5

    @property
    def mode(self):
        """NaN, as in PyTorch: every point of the interval is a mode."""
        return self.low * math.nan

    def cdf(self, value):
        value = self._value(value)
        return clamp((value - self.low) / (self.high - self.low), min=0.0, max=1.0)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    @property
    def variance(self):
        width = self.high - self.low
        return width * width / 12

    def rsample(self, sample_shape=()):
        return self.low + self._noise(rand, sample_shape) * (self.high - self.low)

    def log_prob(self, value):
        value = self._value(value)
        inside = logical_and(value >= self.low, value < self.high).to(self.low.dtype)
        return log(inside) - log(self.high - self.low)

    def entropy(self):
        return log(self.high - self.low)
