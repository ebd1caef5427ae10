"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

A sampler is an iterable of indices with a length; a batch sampler is an iterable of index
lists. Random samplers draw from an ``fw.Generator`` (default: ``fw.random.default_generator``,
read at each epoch, so ``fw.manual_seed`` fixes the order). Each epoch continues the stream,
so epochs differ from one another while a run stays reproducible.
"""

from __future__ import annotations

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

import numbers
from collections.abc import Iterator, Sequence
from itertools import islice

import numpy as np

from .. import random as _random
from ..errors import UnsupportedError
from ..ops.meta import describe
from .dataset import length_of
from .errors import DataError


def _rng(generator: _random.Generator | None) -> np.random.Generator:
    return (generator or _random.default_generator).numpy


def _positive_int(value, name: str, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise DataError(f"{name} must be a positive integer, got {value!r}", op=owner,
                        inputs=describe(**{name: value}),
                        hint=f"pass {name}=1 or more (a whole number)")
    return int(value)


class Sampler:
    """Base class: subclasses define ``__iter__`` (yielding indices) and ``__len__``.

    ``data_source`` is accepted, and not kept, as in PyTorch, whose samplers' subclasses often
    call ``super().__init__(data_source)``.
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self) -> Iterator[int]:
        raise UnsupportedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(length_of(self.data_source, "SequentialSampler")))

    def __len__(self) -> int:
        return length_of(self.data_source, "SequentialSampler")


class RandomSampler(Sampler):
    """Indices in random order.

    Args:
        data_source: a sized dataset.
        replacement: draw ``num_samples`` indices with replacement (default: a permutation).
        num_samples: how many indices per epoch (default: ``len(data_source)``; more than that
            without replacement gives several permutations back to back).
        generator: the random stream (default ``fw.random.default_generator``).
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: _random.Generator | None = None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = (None if num_samples is None
                             else _positive_int(num_samples, "num_samples", "RandomSampler"))
        self.generator = generator

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return length_of(self.data_source, "RandomSampler")
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = length_of(self.data_source, "RandomSampler")
        count, rng = self.num_samples, _rng(self.generator)
        if n == 0:
            return iter(())
        if self.replacement:
            return iter(rng.integers(0, n, count).tolist())
        rounds = [rng.permutation(n) for _ in range(-(-count // n))]
        return iter(np.concatenate(rounds)[:count].tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a new random order each epoch."""

    def __init__(self, indices: Sequence[int], generator: _random.Generator | None = None):
        self.indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices[_rng(self.generator).permutation(len(self.indices))].tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights``.

    Args:
        weights: one non-negative weight per sample (need not sum to 1), e.g. the inverse class
            frequency of each sample's label to balance classes.
        num_samples: how many indices per epoch.
        replacement: draw with replacement (default); without it, ``num_samples`` must not
            exceed the number of non-zero weights.
        generator: the random stream (default ``fw.random.default_generator``).
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator: _random.Generator | None = None):
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
        if weights.size == 0 or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                or weights.sum() <= 0:
            raise DataError("weights must be finite, >= 0 and not all 0",
                            op="WeightedRandomSampler",
                            inputs=f"{weights.size} weights, min {weights.min(initial=0)}, "
                                   f"sum {weights.sum()}",
                            hint="give each sample a weight >= 0, e.g. 1 / (count of its "
                            "class)")
        self.num_samples = _positive_int(num_samples, "num_samples", "WeightedRandomSampler")
        if not replacement and self.num_samples > np.count_nonzero(weights):
            raise DataError(f"cannot draw {self.num_samples} distinct indices from "
                            f"{np.count_nonzero(weights)} non-zero weights",
                            op="WeightedRandomSampler",
                            inputs=describe(num_samples=num_samples, replacement=replacement,
                                            weights=weights),
                            hint="lower num_samples or pass replacement=True")
        self.weights = weights
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        p = self.weights / self.weights.sum()
        picks = _rng(self.generator).choice(len(p), self.num_samples, self.replacement, p)
        return iter(picks.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``.

    Args:
        sampler: any iterable of indices (a Sampler, a list, a range).
        batch_size: indices per batch.
        drop_last: drop the last batch when it is smaller than ``batch_size``.

    >>> list(fw.data.BatchSampler(range(5), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool = False):
        self.sampler = sampler
        self.batch_size = _positive_int(batch_size, "batch_size", "BatchSampler")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = length_of(self.sampler, "BatchSampler")
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
