"""Probabilities and logits, the two parameterisations of Bernoulli and Categorical."""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..ops.elementwise import clamp, log, log1p
from ..tensor import Tensor


def given_one(name: str, probs, logits) -> None:
    """ArgumentError unless exactly one of ``probs`` and ``logits`` was passed."""
    if (probs is None) == (logits is None):
        raise ArgumentError("give either probs or logits, not both and not neither", op=name,
                            inputs=f"probs={'given' if probs is not None else None}, "
                                   f"logits={'given' if logits is not None else None}",
                            hint=f"{name}(probs=p) or {name}(logits=l)")


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` kept a float epsilon inside (0, 1), so their logs stay finite."""
    eps = float(np.finfo(probs.dtype.numpy).eps)
    return clamp(probs, min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, binary: bool = False) -> Tensor:
    """log p (for a categorical) or log(p / (1 - p)) (``binary``), from clamped probs."""
    p = clamp_probs(probs)
    return log(p) - log1p(-p) if binary else log(p)
