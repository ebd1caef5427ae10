"""Collation: turning what a dataset returns into what the loop receives.

:func:`default_collate` batches a list of samples (the DataLoader's default with automatic
batching); :func:`default_convert` converts one sample (its default with ``batch_size=None``).
Both walk nested dicts, named tuples, tuples and lists as ``torch.utils.data``'s functions of
the same names do: a mapping keeps its type, a named tuple its class, a tuple becomes a list,
other sequences keep their type where it can be rebuilt from a list.
"""

from __future__ import annotations

__all__ = ["default_collate", "default_convert"]

import copy
import numbers
from collections.abc import Mapping, MutableMapping, Sequence

import numpy as np

from ..ops import shape as _shape
from ..ops.creation import as_tensor, tensor
from ..tensor import Tensor
from .errors import DataError

_TEXT = (str, bytes)
_NOT_NUMERIC = "SUO"  # NumPy dtype kinds of bytes, str and object arrays: nothing to convert


def default_collate(batch: Sequence):
    """Turn a list of samples into one batch.

    - tensors -> one tensor stacked along a new first dimension (same shape, dtype, device
      required);
    - NumPy arrays -> a stacked tensor of the same dtype; NumPy scalars -> a 1-d tensor of
      their dtype;
    - Python ints -> int64, bools -> bool, floats -> float32 (fw's default float, where
      PyTorch gives float64);
    - strings and bytes -> a list, unchanged (always a list: PyTorch hands back a tuple where
      the strings sat inside tuple or list samples);
    - mappings -> the same mapping type, collated key by key; named tuples -> the same class,
      field by field; tuples -> a list of collated fields; lists and other sequences -> the
      same type (a list where the type cannot be built from one), as PyTorch.

    Raises:
        DataError: samples whose shapes or structure differ (the message names the first
            sample that differs), or a type it cannot batch (pass your own ``collate_fn``).

    >>> x, y = fw.data.default_collate([(fw.zeros(3), 0), (fw.ones(3), 1)])
    >>> x.shape, y.tolist()
    ((2, 3), [0, 1])
    """
    if not isinstance(batch, Sequence) or len(batch) == 0:
        raise DataError(f"default_collate needs a non-empty list of samples, got {batch!r}")
    elem = batch[0]
    if isinstance(elem, Tensor):
        _same_shapes(batch, Tensor, "tensor")
        return _shape.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in _NOT_NUMERIC:
            raise _unsupported(elem)
        _same_shapes(batch, np.ndarray, "array")
        return as_tensor(np.stack(batch))
    if isinstance(elem, _TEXT):
        return list(batch)
    if isinstance(elem, numbers.Real) or (isinstance(elem, np.generic)
                                          and elem.dtype.kind in "biuf"):
        try:
            values = np.array(batch)
        except (ValueError, TypeError):
            values = np.array(batch, dtype=object)
        if values.ndim != 1 or values.dtype.kind not in "biuf":
            raise _mismatch(batch, f"a {type(elem).__name__}")
        return tensor(values) if isinstance(elem, np.generic) else tensor(list(batch))
    if isinstance(elem, Mapping):
        for position, sample in enumerate(batch):
            if not isinstance(sample, Mapping) or sample.keys() != elem.keys():
                raise _mismatch(batch, f"a dict with keys {sorted(map(str, elem))}", position)
        return _same_mapping(elem, {key: default_collate([s[key] for s in batch])
                                    for key in elem})
    if isinstance(elem, Sequence):
        for position, sample in enumerate(batch):
            if not isinstance(sample, Sequence) or len(sample) != len(elem):
                raise _mismatch(batch, f"a sequence of {len(elem)} fields", position)
        return _same_sequence(elem, [default_collate(list(column)) for column in zip(*batch)])
    raise _unsupported(elem)


def default_convert(data):
    """Convert one sample's arrays to tensors, keeping its structure (what a DataLoader with
    ``batch_size=None`` applies to each sample, as PyTorch's ``default_convert``).

    - tensors -> unchanged;
    - NumPy arrays and NumPy scalars -> tensors of the same dtype (a scalar gives a 0-d
      tensor); arrays of strings or objects stay as they are;
    - mappings, named tuples, tuples and sequences -> as in :func:`default_collate`, converted
      element by element (a tuple becomes a list);
    - anything else (Python numbers, strings, bytes, other objects) -> unchanged.

    >>> fw.data.default_convert({"x": np.zeros(2), "id": 7})
    {'x': tensor([0., 0.], dtype=fw.float64), 'id': 7}
    """
    if isinstance(data, Tensor) or isinstance(data, _TEXT):
        return data
    if isinstance(data, np.ndarray | np.generic):
        return data if data.dtype.kind in _NOT_NUMERIC else as_tensor(data)
    if isinstance(data, Mapping):
        return _same_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, Sequence):
        return _same_sequence(data, [default_convert(item) for item in data])
    return data


def _same_mapping(elem: Mapping, values: dict) -> Mapping:
    """``values`` in a mapping of ``elem``'s type: a mutable one is copied and updated (so a
    defaultdict keeps its factory), any other built from a dict, or a dict where it cannot."""
    if isinstance(elem, MutableMapping):
        clone = copy.copy(elem)
        clone.update(values)
        return clone
    try:
        return type(elem)(values)
    except TypeError:
        return values


def _same_sequence(elem: Sequence, items: list) -> Sequence:
    """``items`` in a sequence like ``elem``: a named tuple's class, a list for a plain tuple,
    ``elem``'s type where it can be built from a list, else a list."""
    if isinstance(elem, tuple):
        return type(elem)(*items) if hasattr(elem, "_fields") else items
    try:
        return type(elem)(items)
    except TypeError:
        return items


def _unsupported(elem) -> DataError:
    kind = type(elem).__name__
    if isinstance(elem, np.ndarray):
        kind = f"ndarray of dtype {elem.dtype}"
    return DataError(f"default_collate cannot batch samples of type {kind}",
                     hint="return tensors, NumPy arrays, numbers, strings, or dicts/tuples of "
                          "them from the dataset, or pass DataLoader(collate_fn=...)")


def _same_shapes(batch: Sequence, kind: type, what: str) -> None:
    shape = batch[0].shape
    for position, sample in enumerate(batch):
        if not isinstance(sample, kind) or sample.shape != shape:
            raise _mismatch(batch, f"a {what} of shape {tuple(shape)}", position)


def _mismatch(batch: Sequence, expected: str, position: int | None = None) -> DataError:
    if position is None:
        position = next((i for i, s in enumerate(batch) if type(s) is not type(batch[0])), None)
        if position is None:
            return _unsupported(batch[0])
    found = batch[position]
    shape = getattr(found, "shape", None)
    found_text = type(found).__name__ + ("" if shape is None else f" of shape {tuple(shape)}")
    return DataError(
        f"default_collate: sample {position} of the batch is a {found_text}, but sample 0 is "
        f"{expected}", hint="make every sample the same shape (crop, pad or resize in a "
        "transform), or pass DataLoader(collate_fn=...) to batch them your way")
