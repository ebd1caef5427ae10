"""The sets a distribution's parameters and samples must lie in, checked when validation is on.

A constraint tests the values of a tensor (not its graph), so a check costs one host copy and
never enters autograd; ``describe`` is the phrase an error message uses for it.
"""

from __future__ import annotations

import numpy as np


class Constraint:
    """A set of values: ``check(array) -> bool array`` elementwise (or per event)."""

    #: the trailing dimensions one check covers (1 for a simplex, 2 for a matrix)
    event_dim = 0

    def __init__(self, describe: str, check):
        self.describe = describe
        self._check = check

    def check(self, values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.asarray(self._check(values))

    def __repr__(self) -> str:
        return f"Constraint({self.describe})"


class _EventConstraint(Constraint):
    def __init__(self, describe: str, check, event_dim: int):
        super().__init__(describe, check)
        self.event_dim = event_dim


def interval(low, high, *, closed_high: bool = False) -> Constraint:
    """Values in ``[low, high)`` (or ``[low, high]``); the bounds may be arrays."""
    def check(v):
        return (v >= low) & ((v <= high) if closed_high else (v < high))

    bracket = "]" if closed_high else ")"
    return Constraint(f"in [low, high{bracket}", check)


def _is_simplex(v):
    return np.all(v >= 0, axis=-1) & (np.abs(v.sum(-1) - 1) < 1e-6)


def _is_lower_cholesky(v):
    lower = np.all(np.isclose(np.triu(v, 1), 0), axis=(-2, -1))
    return lower & np.all(np.diagonal(v, axis1=-2, axis2=-1) > 0, axis=-1)


def _is_positive_definite(v):
    symmetric = np.all(np.isclose(v, np.swapaxes(v, -1, -2)), axis=(-2, -1))
    return symmetric & np.all(np.linalg.eigvalsh(v) > 0, axis=-1)


real = Constraint("real (not NaN)", lambda v: v == v)
positive = Constraint("positive (> 0)", lambda v: v > 0)
unit_interval = Constraint("in [0, 1]", lambda v: (v >= 0) & (v <= 1))
boolean = Constraint("0 or 1", lambda v: (v == 0) | (v == 1))
nonnegative = Constraint("nonnegative (>= 0)", lambda v: v >= 0)
simplex = _EventConstraint("a probability vector (>= 0, summing to 1 over the last dim)",
                           _is_simplex, 1)
positive_vector = _EventConstraint("positive (> 0) in every entry",
                                  lambda v: np.all(v > 0, axis=-1), 1)
real_vector = _EventConstraint("a real vector", lambda v: np.all(v == v, axis=-1), 1)
lower_cholesky = _EventConstraint("lower triangular with a positive diagonal",
                                  _is_lower_cholesky, 2)
positive_definite = _EventConstraint("symmetric positive definite", _is_positive_definite, 2)


def integer_below(count) -> Constraint:
    """Integers in ``[0, count)`` (a Categorical's support)."""
    return Constraint(f"an integer in [0, {count})",
                      lambda v: (v >= 0) & (v < count) & (v == np.floor(v)))
