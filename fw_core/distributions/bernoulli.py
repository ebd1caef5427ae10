"""The Bernoulli distribution: 1 with probability ``probs``, else 0."""

from __future__ import annotations

import math
from functools import cached_property

from ..autograd import no_grad
from ..ops.creation import arange, rand
from ..ops.elementwise import sigmoid, softplus, where
from . import constraints
from ._probs import given_one, probs_to_logits
from .distribution import Distribution, broadcast_all


class Bernoulli(Distribution):
    """Bernoulli(probs) or Bernoulli(logits=l) with ``probs = sigmoid(l)``; samples are 0.0 or
    1.0 in the parameters' dtype. No ``rsample``: a discrete sample has no pathwise gradient."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        given_one("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        super().__init__(self._first_param().shape, (), validate_args)

    @cached_property
    def probs(self):
        return sigmoid(self.logits)

    @cached_property
    def logits(self):
        return probs_to_logits(self.probs, binary=True)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where probs > 1/2, 0 where below, NaN at exactly 1/2 (as PyTorch)."""
        return where(self.probs == 0.5, math.nan, (self.probs > 0.5).to(self.probs.dtype))

    def enumerate_support(self, expand: bool = True):
        return self._enumerate(arange(2, dtype=self.probs.dtype, device=self.probs.device),
                               expand)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return (self._noise(rand, sample_shape) < self.probs).to(self.probs.dtype)

    def log_prob(self, value):
        value = self._value(value)
        return value * self.logits - softplus(self.logits)

    def entropy(self):
        return softplus(self.logits) - self.probs * self.logits

