"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

A sampler is an iterable of indices with a length; a batch sampler is an iterable of index
lists. Random samplers draw from an ``fw.Generator`` (default: ``fw.random.default_generator``,
read at each epoch, so ``fw.manual_seed`` fixes the order). Each epoch continues the stream,
so epochs differ from one another while a run stays reproducible.
"""

from __future__ import annotations

__all__ = ["BatchSampler", "DistributedSampler", "RandomSampler", "Sampler",
           "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler"]

import math
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


def _flag(value, name: str, owner: str) -> bool:
    """``value`` if it is a bool; PyTorch's samplers refuse anything else (a 1, a "yes")."""
    if not isinstance(value, bool):
        raise DataError(f"{name} must be True or False, got {value!r}", op=owner,
                        inputs=describe(**{name: value}), hint=f"pass {name}=True or False")
    return value


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
        self.replacement = _flag(replacement, "replacement", "RandomSampler")
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
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 1:
            raise DataError(f"weights must be a 1-d sequence, got shape {weights.shape}",
                            op="WeightedRandomSampler", inputs=describe(weights=weights),
                            hint="give one weight per sample in a flat list")
        if weights.size == 0 or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                or weights.sum() <= 0:
            raise DataError("weights must be finite, >= 0 and not all 0",
                            op="WeightedRandomSampler",
                            inputs=f"{weights.size} weights, min {weights.min(initial=0)}, "
                                   f"sum {weights.sum()}",
                            hint="give each sample a weight >= 0, e.g. 1 / (count of its "
                            "class)")
        self.num_samples = _positive_int(num_samples, "num_samples", "WeightedRandomSampler")
        replacement = _flag(replacement, "replacement", "WeightedRandomSampler")
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
        self.drop_last = _flag(drop_last, "drop_last", "BatchSampler")

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = length_of(self.sampler, "BatchSampler")
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """The share of a dataset's indices that one of ``num_replicas`` processes reads.

    Each epoch orders the indices (a permutation seeded by ``seed + epoch`` when
    ``shuffle``, else 0, 1, ...), pads that order by repeating it from its start until every
    replica gets ``num_samples`` indices (or, with ``drop_last``, cuts its tail instead), and
    gives replica ``rank`` every ``num_replicas``-th index from position ``rank`` on: PyTorch's
    partition, so replicas never overlap except on padding. Every replica must use the same
    ``seed`` and call :meth:`set_epoch` with the same epoch before each epoch, or the
    permutations differ (fw's permutations are not torch's: same seed, other order).

    Args:
        dataset: a sized dataset.
        num_replicas: how many processes read the dataset (the world size).
        rank: this process's number, 0 to ``num_replicas - 1``.
        shuffle: a new order each epoch (default True).
        seed: the permutation's seed, shared by all replicas.
        drop_last: cut the tail so that the dataset divides evenly (default: pad instead).

    Raises:
        DataError: ``num_replicas`` or ``rank`` not given (fw has no process group to ask),
            or a rank outside ``[0, num_replicas)``.

    >>> sampler = fw.data.DistributedSampler(ds, num_replicas=4, rank=1)
    >>> for epoch in range(3):
    ...     sampler.set_epoch(epoch)
    ...     for batch in fw.data.DataLoader(ds, batch_size=32, sampler=sampler): ...
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            raise DataError("needs num_replicas and rank: fw has no default process group "
                            "to read the world size and rank from", op="DistributedSampler",
                            inputs=describe(num_replicas=num_replicas, rank=rank),
                            hint="pass num_replicas=<number of processes> and rank=<this "
                                 "process's number>, e.g. from your launcher's WORLD_SIZE "
                                 "and RANK environment variables")
        self.num_replicas = _positive_int(num_replicas, "num_replicas", "DistributedSampler")
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) \
                or not 0 <= rank < self.num_replicas:
            raise DataError(f"invalid rank {rank!r}, rank should be in the interval "
                            f"[0, {self.num_replicas - 1}]", op="DistributedSampler",
                            inputs=describe(num_replicas=num_replicas, rank=rank),
                            hint="ranks count the processes from 0")
        self.dataset, self.rank, self.epoch = dataset, int(rank), 0
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.drop_last = bool(drop_last)
        n = length_of(dataset, "DistributedSampler")
        if self.drop_last and n % self.num_replicas:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` from the next iteration on (call it with the same
        epoch in every replica, before each epoch)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[int]:
        n = length_of(self.dataset, "DistributedSampler")
        if self.shuffle:
            order = _random.Generator(self.seed + self.epoch).numpy.permutation(n)
        else:
            order = np.arange(n)
        if self.drop_last:
            order = order[:self.total_size]
        elif n:
            order = np.resize(order, self.total_size)  # repeats the order from its start
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples
