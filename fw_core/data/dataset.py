"""Datasets: what a DataLoader reads from.

A map-style :class:`Dataset` answers ``len(ds)`` and ``ds[i]``; an :class:`IterableDataset`
yields samples in order. :class:`TensorDataset` slices tensors along their first dimension;
:class:`Subset`, :class:`ConcatDataset`, :class:`StackDataset`, :class:`ChainDataset` (of
streams) and :func:`random_split` combine datasets without copying samples.

A map-style dataset may also define ``get_batch(indices)``: the batch that
:func:`fw_core.data.default_collate` would build from ``[ds[i] for i in indices]`` (a list
where samples are tuples, as PyTorch's collate gives), computed in one step (one gather
instead of one small tensor per sample). The loader uses it whenever the collate function is
the default; returning ``None`` means "no fast path here".
"""

from __future__ import annotations

__all__ = ["ArrayDataset", "ChainDataset", "ConcatDataset", "Dataset", "IterableDataset",
           "StackDataset", "Subset", "TensorDataset", "random_split"]

import bisect
import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from .. import random as _random
from ..errors import ShapeError, UnsupportedError
from ..ops.creation import as_tensor, tensor
from ..ops.indexing import index_select
from ..ops.meta import describe
from ..tensor import Tensor
from .errors import DataError, DataFormatError, DataIndexError, UnsizedError


def check_index(index, length: int, owner) -> int:
    """``index`` as a non-negative int below ``length``; negative indices count from the end."""
    name = type(owner).__name__
    if not isinstance(index, numbers.Integral):
        raise DataError(f"indices must be integers, got {type(index).__name__} {index!r}",
                        op=name, inputs=describe(index=index, length=length),
                        hint="index one sample at a time: ds[3]; use Subset for a selection")
    index = int(index)
    if not -length <= index < length:
        raise DataIndexError(f"index {index} is out of range for {name} of length {length}",
                             op=name, inputs=describe(index=index, length=length),
                             hint=f"use an index in [-{length}, {length})")
    return index + length if index < 0 else index


def check_indices(indices: Sequence[int], length: int, owner) -> np.ndarray:
    """``indices`` as a non-negative int64 array; the first bad one raises as in check_index."""
    rows = np.asarray(indices, dtype=np.int64)
    bad = (rows < -length) | (rows >= length)
    if bad.any():
        check_index(int(rows[bad][0]), length, owner)
    return rows % max(length, 1)


class Dataset:
    """A map-style dataset: subclasses define ``__len__`` and ``__getitem__(index)``.

    ``a + b`` concatenates two datasets (a :class:`ConcatDataset`).

    >>> class Squares(fw.data.Dataset):
    ...     def __len__(self): return 10
    ...     def __getitem__(self, i): return i * i
    """

    def __getitem__(self, index):
        raise UnsupportedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])

    def get_batch(self, indices: Sequence[int]):
        """The collated batch for ``indices`` in one step, or None when there is no fast path
        (the default: the loader then reads sample by sample)."""
        return None


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``. Shuffling and samplers do not
    apply (there are no indices); a DataLoader batches the stream in order.

    ``a + b`` reads one stream after the other (a :class:`ChainDataset`), as in PyTorch."""

    def __iter__(self):
        raise UnsupportedError(f"{type(self).__name__} must define __iter__()")

    def __add__(self, other) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several IterableDatasets read one after the other (``a + b`` of two streams).

    ``len()`` is the sum of their lengths, for streams that have one.

    Raises:
        DataError: a dataset that is not an IterableDataset (a map-style one goes in a
            :class:`ConcatDataset`).
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DataError(f"holds IterableDatasets only, got a {type(d).__name__}",
                                op="ChainDataset", inputs=describe(self.datasets),
                                hint="put map-style datasets in a ConcatDataset")

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(length_of(d, "ChainDataset") for d in self.datasets)


class StackDataset(Dataset):
    """Datasets of equal length read side by side: sample ``i`` holds sample ``i`` of each.

    ``StackDataset(images, labels)`` gives tuples ``(images[i], labels[i])``;
    ``StackDataset(image=images, label=labels)`` gives dicts ``{"image": ..., "label": ...}``.
    Where every dataset has a batch fast path (``get_batch``), so does the stack.

    Raises:
        DataError: no datasets, both positional and keyword datasets, or lengths that differ.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise DataError("takes datasets either positionally (tuple samples) or by keyword "
                            "(dict samples), not both", op="StackDataset",
                            inputs=f"{len(args)} positional, keywords {sorted(kwargs)}",
                            hint="StackDataset(a, b) or StackDataset(x=a, y=b)")
        self.datasets = args or kwargs
        if not self.datasets:
            raise DataError("needs at least one dataset", op="StackDataset",
                            inputs="no datasets", hint="StackDataset(images, labels)")
        members = self.datasets.values() if kwargs else self.datasets
        lengths = [length_of(d, "StackDataset") for d in members]
        if len(set(lengths)) != 1:
            raise DataError(f"the datasets' lengths differ: {lengths}", op="StackDataset",
                            inputs=describe(lengths=lengths),
                            hint="stack datasets with one sample per index each")
        self._length = lengths[0]

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def get_batch(self, indices: Sequence[int]):
        keyed = isinstance(self.datasets, dict)
        batches = {}
        for key, d in (self.datasets.items() if keyed else enumerate(self.datasets)):
            fast = getattr(d, "get_batch", None)
            batches[key] = None if fast is None else fast(indices)
            if batches[key] is None:
                return None
        return batches if keyed else list(batches.values())


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension.

    Args:
        *tensors: tensors (or NumPy arrays, converted without copying) with equal
            ``shape[0]``; sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Raises:
        ShapeError: the first dimensions differ, or a tensor is 0-d.

    >>> ds = fw.data.TensorDataset(fw.randn(100, 3), fw.arange(100))
    >>> x, y = ds[0]
    """

    def __init__(self, *tensors):
        if not tensors:
            raise DataError("needs at least one tensor", op="TensorDataset",
                            inputs="no tensors", hint="TensorDataset(features, targets)")
        tensors = tuple(t if isinstance(t, Tensor) else as_tensor(t) for t in tensors)
        if any(t.ndim == 0 for t in tensors) or len({t.shape[0] for t in tensors}) != 1:
            shapes = " and ".join(str(tuple(t.shape)) for t in tensors)
            raise ShapeError(f"the tensors must share their first dimension, got shapes {shapes}",
                             op="TensorDataset",
                            inputs=describe(tensors),
                            hint="the first dimension indexes samples: give every tensor "
                                 "one row per sample")
        self.tensors = tensors
        self._length = tensors[0].shape[0]

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index) -> tuple:
        index = check_index(index, self._length, self)
        return tuple(t[index] for t in self.tensors)

    def get_batch(self, indices: Sequence[int]) -> list:
        rows = check_indices(indices, self._length, self)
        by_device = {}
        out = []
        for t in self.tensors:
            index = by_device.get(t.device)
            if index is None:
                index = by_device[t.device] = tensor(rows, device=t.device)
            out.append(index_select(t, 0, index))
        return out


class ArrayDataset(Dataset):
    """Samples and targets held in NumPy arrays, with optional per-sample transforms.

    Sample ``i`` is ``(transform(data[i]), target_transform(targets[i]))``: the raw sample is a
    NumPy array (or scalar) and the target a NumPy scalar, so :class:`ToTensor` and friends
    apply and the default collate keeps their dtypes. Without transforms the loader fetches
    a whole batch with one gather.

    Args:
        data: an array with one sample per row (images as N x H x W [x C]).
        targets: one target per sample.
        transform, target_transform: callables applied to each sample / target.
        classes: the class names, if targets are class indices.

    Attributes: ``data``, ``targets``, ``classes``, ``transform``, ``target_transform``.
    """

    def __init__(self, data: np.ndarray, targets: np.ndarray, transform=None,
                 target_transform=None, classes: Sequence[str] | None = None):
        data, targets = np.asarray(data), np.asarray(targets)
        if data.ndim == 0 or targets.ndim != 1 or len(data) != len(targets):
            raise ShapeError("needs one target per sample", op=type(self).__name__,
                             inputs=describe(data=data, targets=targets),
                             hint="data is (N, ...) and targets (N,)")
        if classes is not None:
            check_class_indices(type(self).__name__, targets, len(classes))
        self.data, self.targets = data, targets
        self.transform, self.target_transform = transform, target_transform
        self.classes = None if classes is None else list(classes)

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index) -> tuple:
        index = check_index(index, len(self.targets), self)
        sample, target = self.data[index], self.targets[index]
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def get_batch(self, indices: Sequence[int]):
        if self.transform is not None or self.target_transform is not None:
            return None
        rows = check_indices(indices, len(self.targets), self)
        return [as_tensor(self.data[rows]), as_tensor(self.targets[rows])]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self)} samples of shape {self.data.shape[1:]}, "
                f"{'no' if self.classes is None else len(self.classes)} classes)")


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order (no copy).

    Args:
        dataset: a map-style dataset.
        indices: a sequence of ints (list, range, NumPy array or 1-d integer tensor).
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        if hasattr(dataset, "__len__"):  # the first bad index raises here, not mid-epoch
            n = length_of(dataset, "Subset")
            bad = (self.indices < -n) | (self.indices >= n)
            if bad.any():
                raise DataIndexError(
                    f"index {int(self.indices[bad][0])} is out of range for a dataset of "
                    f"length {n}", op="Subset",
                    inputs=describe(dataset=dataset, indices=self.indices),
                    hint=f"subset indices must be in [-{n}, {n})")

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index):
        if isinstance(index, list):  # PyTorch's Subset passes a list on to the dataset
            return self.dataset[[self._source_index(i) for i in index]]
        return self.dataset[self._source_index(index)]

    def _source_index(self, index) -> int:
        return int(self.indices[check_index(index, len(self.indices), self)])

    def get_batch(self, indices: Sequence[int]):
        fast = getattr(self.dataset, "get_batch", None)
        if fast is None:
            return None
        return fast(self.indices[np.asarray(indices, dtype=np.int64)].tolist())


class ConcatDataset(Dataset):
    """Several map-style datasets read one after the other.

    ``ConcatDataset([a, b])[len(a)]`` is ``b[0]``. ``cumulative_sizes[k]`` is the total length
    of the first ``k + 1`` datasets.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise DataError("needs at least one dataset", op="ConcatDataset",
                            inputs="no datasets", hint="ConcatDataset([train, extra])")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DataError(f"cannot hold an IterableDataset ({type(d).__name__}): it has "
                                "no indices", op="ConcatDataset",
                                inputs=describe(self.datasets),
                                hint="read streams one after the other with ChainDataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        index = check_index(index, len(self), self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths: Sequence[int | float],
                 generator: _random.Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into disjoint random subsets.

    Args:
        dataset: a map-style dataset of length n.
        lengths: subset sizes that add up to n, or fractions (each in [0, 1]) that add up to
            1. Fractions give ``floor(n * fraction)`` samples each, and the remainder goes one
            by one to the subsets in turn from the first; a subset left empty warns. As in
            PyTorch, lengths whose sum is close to 1 and at most 1 are read as fractions
            whatever their type (``[1, 0]`` is all samples, then none).
        generator: the random stream; defaults to ``fw.random.default_generator``, so
            ``fw.manual_seed`` fixes the split.

    Raises:
        DataError: a fraction outside [0, 1], sizes that are not integers >= 0, or sizes
            that do not add up to n.

    >>> train, val = fw.data.random_split(ds, [0.8, 0.2], generator=fw.Generator(0))
    """
    n = length_of(dataset, "random_split")
    lengths = list(lengths)
    shown = describe(dataset=dataset, length=n, lengths=lengths)
    hint = "e.g. random_split(ds, [800, 200]) or [0.8, 0.2]"
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in lengths):
        raise DataError(f"lengths must be numbers, got {lengths}", op="random_split",
                        inputs=shown, hint=hint)
    total = sum(lengths)
    if lengths and math.isclose(total, 1) and total <= 1:
        sizes = _fraction_sizes(n, lengths, shown)
    elif all(isinstance(v, numbers.Integral) and v >= 0 for v in lengths):
        sizes = [int(v) for v in lengths]
    else:
        raise DataError(f"lengths {lengths} are neither integers >= 0 nor fractions adding up "
                        "to 1", op="random_split", inputs=shown, hint=hint)
    if sum(sizes) != n:
        raise DataError(f"lengths add up to {sum(sizes)}, but the dataset has {n} samples",
                        op="random_split", inputs=shown,
                        hint="give lengths that add up to len(dataset), or fractions that "
                             "add up to 1")
    order = (generator or _random.default_generator).numpy.permutation(n)
    bounds = np.cumsum([0, *sizes])
    return [Subset(dataset, order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _fraction_sizes(n: int, fractions: list, shown: str) -> list[int]:
    """Subset sizes for ``fractions`` of ``n`` samples, by PyTorch's rule: the floors, then
    the remainder dealt one by one from the first subset on."""
    for i, fraction in enumerate(fractions):
        if not 0 <= fraction <= 1:
            raise DataError(f"the fraction at index {i} ({fraction}) is not between 0 and 1",
                            op="random_split", inputs=shown,
                            hint="give fractions in [0, 1] that add up to 1, e.g. [0.8, 0.2]")
    sizes = [math.floor(n * fraction) for fraction in fractions]
    for k in range(n - sum(sizes)):
        sizes[k % len(sizes)] += 1
    for i, size in enumerate(sizes):
        if size == 0:
            warnings.warn(f"random_split: the subset at index {i} is empty ({fractions[i]} of "
                          f"{n} samples)", stacklevel=3)
    return sizes


def length_of(dataset, op: str | None = None) -> int:
    """``len(dataset)``, or an error naming ``op`` (what asked: "DataLoader", a sampler) when
    the dataset has no length (UnsizedError) or its ``__len__`` returns a negative number."""
    name = type(dataset).__name__
    try:
        return len(dataset)
    except TypeError:
        raise UnsizedError(f"{name} has no length", op=op, inputs=describe(dataset=dataset),
                           hint="define __len__ on the dataset, or iterate without len()") \
            from None
    except ValueError:  # Python refuses a negative __len__ result
        raise DataError(f"{name}.__len__() returned {dataset.__len__()}, a negative length",
                        op=op, inputs=describe(dataset=dataset),
                        hint="__len__ must return the number of samples, an int >= 0") from None


def check_class_indices(owner: str, targets: np.ndarray, classes: int, source=None) -> None:
    """Raise unless every target is a class index in [0, classes); ``source`` (a file) makes
    it a DataFormatError naming that file, else a DataError."""
    if targets.size == 0:
        return
    whole = targets.dtype.kind in "biu" or bool(np.all(targets == np.round(targets)))
    low, high = targets.min(), targets.max()
    if whole and 0 <= low and high < classes:
        return
    bad = (targets < 0) | (targets >= classes) | (targets != np.round(targets))
    position = int(np.flatnonzero(bad)[0])
    where = f"{source} holds" if source is not None else "the targets hold"
    error = DataError if source is None else DataFormatError
    raise error(f"{where} label {targets[position]} at position {position}, but there are "
                f"{classes} classes (labels 0 to {classes - 1})", op=owner,
                inputs=describe(targets=targets, classes=classes),
                hint="the label file is damaged or from another dataset: copy it again"
                if source is not None else "targets must be class indices; pass the class "
                "names that match them, or leave classes=None")
