"""The multivariate normal distribution, parameterised through its lower Cholesky factor."""

from __future__ import annotations

import math

from ..errors import ArgumentError
from ..ops.creation import eye, randn
from ..ops.elementwise import log
from ..ops.meta import broadcast_shapes
from . import constraints
from ._triangular import (
    cholesky,
    diagonal,
    precision_to_scale_tril,
    solve_lower,
    solve_lower_matrix,
)
from .distribution import Distribution, as_float_tensors

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over vectors of size n, given ``loc`` (..., n) and exactly one of
    ``covariance_matrix`` Sigma, ``precision_matrix`` Sigma^-1 (both symmetric positive
    definite) or ``scale_tril`` L (lower triangular, positive diagonal, Sigma = L L^T), each
    (..., n, n). The batch shape broadcasts the leading dims of loc and the matrix.

    Everything is computed from L: ``rsample`` is ``loc + L eps`` (differentiable in loc and
    in the matrix given), ``log_prob`` solves ``L z = x - loc``. L is found (and solved with)
    by fw-op compositions of O(n) ops (``_triangular``), meant for moderate n.
    """

    arg_constraints = {"loc": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None):
        given = {name: m for name, m in zip(_MATRICES, (covariance_matrix, precision_matrix,
                                                          scale_tril)) if m is not None}
        if len(given) != 1:
            raise ArgumentError(f"give exactly one of {', '.join(_MATRICES)}, got "
                                f"{sorted(given) or 'none'}", op="MultivariateNormal",
                                hint="MultivariateNormal(loc, covariance_matrix=S)")
        (name, matrix), = given.items()
        loc, matrix = as_float_tensors(loc, matrix)
        self.loc = loc  # named in a validation error
        self._check_shapes(loc, name, matrix)
        validate = (Distribution._validate_default if validate_args is None else validate_args)
        if validate:  # before factorising: a matrix that is not PD gives NaN factors
            constraint = (constraints.lower_cholesky if name == "scale_tril"
                          else constraints.positive_definite)
            self._check(f"parameter {name}", matrix, constraint)
        if name == "scale_tril":
            tril = matrix
        elif name == "covariance_matrix":
            tril = cholesky(matrix)
        else:
            tril = precision_to_scale_tril(matrix)
        batch = broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2]))
        self.loc = loc.expand(batch + tuple(loc.shape[-1:]))
        self._unbroadcasted_scale_tril = tril
        super().__init__(batch, tuple(loc.shape[-1:]), validate_args)

    def _expanded_params(self):
        return {"loc": 1, "_unbroadcasted_scale_tril": 2}

    @staticmethod
    def _check_shapes(loc, name, matrix) -> None:
        if loc.ndim < 1 or matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2] or \
                matrix.shape[-1] != loc.shape[-1]:
            raise ArgumentError(
                f"loc must be (..., n) and {name} (..., n, n), got loc {tuple(loc.shape)} and "
                f"{name} {tuple(matrix.shape)}", op="MultivariateNormal",
                hint="a vector mean and a square matrix of the same size n")

    @property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape * 2)

    @property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-1, -2)).expand(self._batch_shape + self._event_shape * 2)

    @property
    def precision_matrix(self):
        n = self._event_shape[0]
        inverse = solve_lower_matrix(self._unbroadcasted_scale_tril,
                                     eye(n, dtype=self.loc.dtype, device=self.loc.device))
        return (inverse.transpose(-1, -2) @ inverse).expand(self._batch_shape
                                                            + self._event_shape * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        tril = self._unbroadcasted_scale_tril
        return (tril * tril).sum(-1).expand(self._batch_shape + self._event_shape)

    def _half_log_det(self):
        return log(diagonal(self._unbroadcasted_scale_tril)).sum(-1)

    def rsample(self, sample_shape=()):
        eps = self._noise(randn, sample_shape)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        value = self._value(value)
        z = solve_lower(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return (z * z).sum(-1) * -0.5 - self._half_log_det() - 0.5 * n * math.log(2 * math.pi)

    def entropy(self):
        n = self._event_shape[0]
        entropy = self._half_log_det() + 0.5 * n * (1 + math.log(2 * math.pi))
        return entropy.expand(self._batch_shape)

