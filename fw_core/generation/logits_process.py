"""Logits processors: objects that rewrite next-token scores before a token is chosen, with
HF transformers' names and rules, so a user adds their own by subclassing
:class:`LogitsProcessor`.

Each is ``processor(input_ids, scores) -> scores``: ``input_ids`` the (B, length) int64 tokens
so far (prompt included), ``scores`` the (B, vocab) float32 scores of the next token. The
filtering warpers (top-k, top-p, min-p) each find one threshold per row and set every score
below it to ``filter_value``. Top-k and top-p find theirs on the host (a partition, and for
top-p a sort of only the highest scores, as many as the nucleus may hold), min-p's is the row's
maximum plus log(min_p); the masking stays an fw op on the scores' device.
"""

from __future__ import annotations

__all__ = ["LogitsProcessor", "LogitsProcessorList", "MinPLogitsWarper",
           "RepetitionPenaltyLogitsProcessor", "TemperatureLogitsWarper", "TopKLogitsWarper",
           "TopPLogitsWarper"]

import math

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError
from ..ops.creation import tensor
from ..ops.elementwise import minimum, where
from ..ops.indexing import gather, scatter
from ..ops.reduction import amax
from ..tensor import Tensor


class LogitsProcessor:
    """Base of the processors: subclass it and define ``__call__(input_ids, scores)``
    returning the new (B, vocab) scores (a new tensor or ``scores`` itself)."""

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        raise ArgumentTypeError(
            f"{type(self).__name__} subclasses LogitsProcessor without defining __call__",
            op="LogitsProcessor", hint="define __call__(self, input_ids, scores) -> scores")


class LogitsProcessorList(list):
    """A list of processors applied in order, itself a processor."""

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


def _number(name: str, value, check, expected: str, fix: str) -> float:
    """``value`` as a float after ``check(value)`` holds, else an ArgumentError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not check(value):
        raise ArgumentError(f"{name} must be {expected}, got {value!r}", op=name.split(".")[0],
                            inputs=f"{name.split('.')[-1]}={value!r}", hint=fix)
    return float(value)


def _keep_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"{name}.min_tokens_to_keep must be an int >= 1, got {value!r}",
                            op=name, hint="keep at least one token (the default, 1)")
    return value


def _drop_below(scores: Tensor, threshold, filter_value: float) -> Tensor:
    """``scores`` with every entry under its row's ``threshold`` set to ``filter_value``."""
    if not isinstance(threshold, Tensor):
        threshold = tensor(threshold, dtype=scores.dtype, device=scores.device)
    return where(scores < threshold, filter_value, scores)


def _kth_largest(scores: Tensor, k: int) -> np.ndarray:
    """The ``k``-th largest score of each row, (B, 1) on the host (a partition, not a sort)."""
    host = np.asarray(scores.numpy(), dtype=np.float32)
    size = host.shape[-1]
    return np.partition(host, size - k, axis=-1)[:, size - k:size - k + 1]


class TemperatureLogitsWarper(LogitsProcessor):
    """``scores / temperature``: below 1 sharpens the distribution, above 1 flattens it.

    Raises ArgumentError unless ``temperature`` is a number > 0 (for greedy decoding pass
    ``do_sample=False`` instead of a temperature of 0)."""

    def __init__(self, temperature: float):
        self.temperature = _number(
            "TemperatureLogitsWarper.temperature", temperature,
            lambda t: t > 0 and math.isfinite(t), "a finite number > 0",
            "pass e.g. 0.7 (sharper) or 1.3 (flatter); for greedy decoding use do_sample=False")

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        return scores / self.temperature


class TopKLogitsWarper(LogitsProcessor):
    """Keep the ``top_k`` highest scores of each row (at least ``min_tokens_to_keep``), set the
    rest to ``filter_value``; scores tied with the k-th are kept too, as in HF."""

    def __init__(self, top_k: int, filter_value: float = -math.inf, min_tokens_to_keep: int = 1):
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
            raise ArgumentError(f"TopKLogitsWarper.top_k must be an int > 0, got {top_k!r}",
                                op="TopKLogitsWarper", inputs=f"top_k={top_k!r}",
                                hint="pass e.g. top_k=50; to keep every token leave top-k out "
                                "(generate takes top_k=0 to mean that)")
        self.top_k = max(top_k, _keep_count("TopKLogitsWarper", min_tokens_to_keep))
        self.filter_value = filter_value

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        k = min(self.top_k, scores.shape[-1])
        return _drop_below(scores, _kth_largest(scores, k), self.filter_value)


class TopPLogitsWarper(LogitsProcessor):
    """Nucleus filtering: keep the highest-probability tokens whose probabilities sum to at least
    ``top_p``, at least ``min_tokens_to_keep`` of them; the rest get ``filter_value``.

    HF's rule: sorted ascending, a token is dropped where the cumulative probability up to it
    is <= 1 - top_p. The kept set is the tokens scoring at least the lowest kept score, so a
    tie at that boundary keeps all the tied tokens (HF's sort would keep an arbitrary subset),
    and only the tokens that can be kept are sorted.
    """

    def __init__(self, top_p: float, filter_value: float = -math.inf, min_tokens_to_keep: int = 1):
        self.top_p = _number("TopPLogitsWarper.top_p", top_p, lambda p: 0 < p <= 1,
                             "a number in (0, 1]", "pass e.g. top_p=0.9; top_p=1.0 keeps every "
                             "token")
        self.min_tokens_to_keep = _keep_count("TopPLogitsWarper", min_tokens_to_keep)
        self.filter_value = filter_value

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        host = np.asarray(scores.numpy(), dtype=np.float32)
        thresholds = np.empty((host.shape[0], 1), np.float32)
        for row, values in enumerate(host):
            thresholds[row, 0] = self._lowest_kept(values)
        return _drop_below(scores, thresholds, self.filter_value)

    def _lowest_kept(self, values: np.ndarray) -> float:
        """The lowest score the nucleus keeps in one row. Only the highest scores are sorted:
        64 of them, four times more while the rest still holds more than ``1 - top_p`` of the
        probability (then some of it could be kept)."""
        finite = values[values > -np.inf]  # -inf scores have probability 0
        size = finite.size
        if size == 0:
            return -np.inf
        top = finite.max()
        total = np.exp(finite - top).sum(dtype=np.float64)
        count = min(max(64, self.min_tokens_to_keep), size)
        while True:
            highest = np.sort(np.partition(finite, size - count)[size - count:])
            probs = np.exp(highest - top) / total
            rest = 1.0 - probs.sum() if count < size else 0.0
            if count == size or rest <= 1 - self.top_p:
                break
            count = min(4 * count, size)
        dropped = int(np.count_nonzero(rest + np.cumsum(probs) <= 1 - self.top_p))
        return float(highest[min(dropped, count - min(self.min_tokens_to_keep, count))])


class MinPLogitsWarper(LogitsProcessor):
    """Drop the tokens whose probability is below ``min_p`` times the most likely token's (a
    cut that scales with the model's confidence); at least ``min_tokens_to_keep`` stay.

    ``p < min_p * p_max`` is ``score < max_score + log(min_p)``, so no softmax is needed."""

    def __init__(self, min_p: float, filter_value: float = -math.inf, min_tokens_to_keep: int = 1):
        self.min_p = _number("MinPLogitsWarper.min_p", min_p, lambda p: 0 <= p <= 1,
                             "a number in [0, 1]", "pass e.g. min_p=0.05 (values of 0.01-0.2 are "
                             "typical)")
        self.min_tokens_to_keep = _keep_count("MinPLogitsWarper", min_tokens_to_keep)
        self.filter_value = filter_value

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        if self.min_p == 0:
            return scores
        threshold = amax(scores, dim=-1, keepdim=True) + math.log(self.min_p)
        if self.min_tokens_to_keep > 1:
            kth = _kth_largest(scores, min(self.min_tokens_to_keep, scores.shape[-1]))
            threshold = minimum(threshold, tensor(kth, device=scores.device))
        return _drop_below(scores, threshold, self.filter_value)


class RepetitionPenaltyLogitsProcessor(LogitsProcessor):
    """CTRL's repetition penalty: every token already in ``input_ids`` (prompt included) has a
    positive score divided by ``penalty`` and a negative one multiplied by it, so ``penalty``
    > 1 discourages repeats and < 1 encourages them.

    Raises ArgumentError unless ``penalty`` is a number > 0."""

    def __init__(self, penalty: float):
        self.penalty = _number("RepetitionPenaltyLogitsProcessor.penalty", penalty,
                               lambda p: p > 0 and math.isfinite(p), "a finite number > 0",
                               "pass e.g. 1.2 to discourage repeats; 1.0 changes nothing")

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        seen = gather(scores, 1, input_ids)
        seen = where(seen < 0, seen * self.penalty, seen / self.penalty)
        return scatter(scores, 1, input_ids, seen)
