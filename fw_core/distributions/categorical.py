"""The categorical distribution over ``{0, ..., K - 1}`` (the last dim of its parameter)."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..autograd import no_grad
from ..errors import ArgumentError
from ..ops.creation import arange, full, rand
from ..ops.elementwise import clamp, minimum
from ..ops.indexing import gather
from ..ops.meta import broadcast_shapes
from ..ops.nn import softmax
from ..ops.reduction import argmax, cumsum, logsumexp
from . import constraints
from ._probs import given_one, probs_to_logits
from .distribution import Distribution, broadcast_all


class Categorical(Distribution):
    """Categorical(probs) or Categorical(logits=l) over the last dim (K events); probs need not
    sum to 1 (they are normalised), logits are normalised to log-probabilities. The batch shape
    is the parameter's shape without its last dim; samples are int64 indices."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None):
        given_one("Categorical", probs, logits)
        param = broadcast_all(probs if probs is not None else logits)[0]
        if param.ndim < 1:
            raise self._scalar_error(param)
        if probs is not None:
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - logsumexp(param, -1, keepdim=True)
        super().__init__(param.shape[:-1], (), validate_args)

    def _scalar_error(self, param):
        return ArgumentError("probs/logits must have at least one dim (the K categories), got "
                             f"shape {tuple(param.shape)}", op="Categorical",
                             hint="pass a vector per distribution, e.g. probs=[0.2, 0.8]")

    @cached_property
    def probs(self):
        return softmax(self.logits, -1)

    @cached_property
    def logits(self):
        return probs_to_logits(self.probs)

    @property
    def _num_events(self) -> int:
        return self._first_param().shape[-1]

    @property
    def support(self):
        return constraints.integer_below(self._num_events)

    @property
    def mean(self):
        """NaN, as in PyTorch: category indices have no meaningful mean."""
        return full(self._batch_shape, math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return argmax(self.probs, -1)

    def enumerate_support(self, expand: bool = True):
        return self._enumerate(arange(self._num_events, device=self.probs.device), expand)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        """Indices by inverting the CDF at uniform draws."""
        with no_grad():
            u = self._noise(rand, sample_shape).unsqueeze(-1)
            cdf = cumsum(self.probs, -1)
            index = (cdf <= u).sum(-1)
            return minimum(index, self._num_events - 1)

    def log_prob(self, value):
        value = self._value(value).long().unsqueeze(-1)
        shape = broadcast_shapes(tuple(value.shape), self._batch_shape + (1,))
        logits = self.logits.expand(shape[:-1] + (self._num_events,))
        return gather(logits, -1, value.expand(shape)).squeeze(-1)

    def entropy(self):
        lowest = float(np.finfo(self.logits.dtype.numpy).min)
        return -(clamp(self.logits, min=lowest) * self.probs).sum(-1)
