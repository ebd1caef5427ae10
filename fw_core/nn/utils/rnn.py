"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``: padding a list
of sequences, packing a padded batch into a PackedSequence, and back.

A PackedSequence holds the batch time step by time step with only the sequences still running:
sequences are sorted by length (longest first), ``batch_sizes[t]`` says how many have a step t,
and ``data`` stacks those steps, (sum of lengths, *). RNN, LSTM and GRU take one and return
their output packed the same way, with each sequence's final state taken at its own last step.

Every function here is an index_select (or a cat) of the data, so gradients flow through
packing and unpacking.
"""

# ruff: noqa: A001, A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]

from collections import namedtuple

import numpy as np

from ... import dtypes
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops.creation import full, tensor
from ...ops.indexing import index_select
from ...ops.shape import cat, narrow, reshape, stack, transpose
from ...tensor import Tensor

_Fields = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                        "unsorted_indices"])


def _index(values, device) -> Tensor:
    return tensor(np.asarray(values, dtype=np.int64), device=device)


class PackedSequence(_Fields):
    """A batch of variable-length sequences, time step by time step (see the module docstring).

    Fields: ``data`` (sum of lengths, *); ``batch_sizes`` int64 (longest length,), on the CPU;
    ``sorted_indices`` int64 (batch,): the original position of each sorted sequence (None when
    the batch came sorted); ``unsorted_indices``: its inverse (computed when not given).
    Build one with :func:`pack_padded_sequence` or :func:`pack_sequence`.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            raise ArgumentTypeError("PackedSequence needs batch_sizes",
                                    op="PackedSequence",
                                    hint="build it with pack_padded_sequence or pack_sequence")
        if unsorted_indices is None and sorted_indices is not None:
            inverse = np.empty(sorted_indices.shape[0], dtype=np.int64)
            inverse[np.asarray(sorted_indices.tolist(), dtype=np.int64)] = np.arange(
                sorted_indices.shape[0])
            unsorted_indices = _index(inverse, sorted_indices.device)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data`` converted with ``Tensor.to``; the indices follow it to its device
        (``batch_sizes`` stays on the CPU, as PyTorch's)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, index: int = 0) -> PackedSequence:
        return self.to(f"cuda:{index}")

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def _lengths(op: str, lengths, batch: int) -> np.ndarray:
    values = lengths.tolist() if isinstance(lengths, Tensor) else lengths
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise ArgumentTypeError(f"lengths must be a 1-d sequence of ints, got {array.dtype} "
                                f"shape {array.shape}", op=op,
                                hint="pass one length per sequence, e.g. [5, 3, 2]")
    if array.size != batch:
        raise ShapeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                         f"{array.size} (batch_size={batch})", op=op,
                         hint="pass one length per sequence of the batch")
    if array.size and array.min() <= 0:
        raise ShapeError("Length of all samples has to be greater than 0, but found an element "
                         "in 'lengths' that is <= 0", op=op,
                         hint="drop the empty sequences from the batch")
    return array.astype(np.int64)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (each (L_i, *)) into one (L_max, B, *) tensor
    ((B, L_max, *) with ``batch_first``), filling with ``padding_value`` after each sequence
    (before it with ``padding_side="left"``).

    Raises:
        ArgumentError: for an empty list or a padding_side other than "left" / "right".
        ShapeError: when the sequences differ in their trailing dimensions.
    """
    if padding_side not in ("left", "right"):
        raise ArgumentError(f"Expected padding_side to be one of left or right, but got "
                            f"{padding_side}.", op="pad_sequence",
                            hint='pass padding_side="right" (the default) or "left"')
    if isinstance(sequences, Tensor):
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    sequences = list(sequences)
    if not sequences:
        raise ArgumentError("received an empty list of sequences", op="pad_sequence",
                            hint="pass at least one tensor")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            raise ShapeError(f"sequence {i} has shape {tuple(s.shape)}, but sequence 0 has "
                             f"trailing dimensions {trailing}", op="pad_sequence",
                             hint="every sequence must be (L_i, *) with the same *")
    longest = max(s.shape[0] for s in sequences)
    first = sequences[0]
    rows = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            filler = full((missing, *trailing), padding_value, dtype=first.dtype,
                          device=first.device)
            s = cat([s, filler] if padding_side == "right" else [filler, s], 0)
        rows.append(s)
    out = stack(rows, 0)  # (B, L_max, *)
    return out if batch_first else transpose(out, 0, 1)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The inverse of :func:`pad_sequence` (right padding): the list of (L_i, *) tensors."""
    batch = padded_sequences.shape[0 if batch_first else 1]
    lengths = _lengths("unpad_sequence", lengths, batch)
    batch_major = padded_sequences if batch_first else transpose(padded_sequences, 0, 1)
    return [narrow(batch_major[i], 0, 0, int(n)) for i, n in enumerate(lengths)]


def _batch_sizes(lengths: np.ndarray) -> np.ndarray:
    """How many of the (descending) ``lengths`` have a step t, for each t."""
    return (lengths[None, :] > np.arange(lengths.max())[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) ((B, T, *) with ``batch_first``) whose sequence b has
    ``lengths[b]`` valid steps.

    With ``enforce_sorted`` the lengths must already be in decreasing order (sorted_indices is
    then None); otherwise the batch is sorted here (longest first, ties in batch order) and the
    permutation kept, so pad_packed_sequence and the RNN states come back in input order.

    Raises:
        ShapeError: for a length <= 0, longer than T, one length per sequence missing, or
            unsorted lengths with ``enforce_sorted``.
    """
    op = "pack_padded_sequence"
    if batch_first:
        input = transpose(input, 0, 1)
    steps, batch = input.shape[0], input.shape[1]
    lengths = _lengths(op, lengths, batch)
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise ShapeError("`lengths` array must be sorted in decreasing order when "
                             "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                             "to pack_padded_sequence and/or pack_sequence to sidestep this "
                             "requirement if you do not need ONNX exportability.", op=op,
                             hint="sort the batch by length, or pass enforce_sorted=False")
        order = np.arange(batch)
    else:
        order = np.argsort(-lengths, kind="stable")
    lengths = lengths[order]
    if lengths[0] > steps:
        raise ShapeError(f"a sequence has length {lengths[0]} but the padded input has only "
                         f"{steps} steps", op=op, hint="lengths must be <= the padded length")
    sizes = _batch_sizes(lengths)
    rows = np.concatenate([t * batch + order[:n] for t, n in enumerate(sizes)])
    flat = reshape(input, (steps * batch, *input.shape[2:]))
    data = index_select(flat, 0, _index(rows, input.device))
    sorted_indices = None if enforce_sorted else _index(order, input.device)
    return PackedSequence(data, _index(sizes, "cpu"), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)`` with padded
    (T, B, *) ((B, T, *) with ``batch_first``) in the batch's original order, filled with
    ``padding_value``, T the longest length or ``total_length``, and lengths int64 (B,).

    Raises:
        ArgumentError: if ``total_length`` is shorter than the longest sequence.
    """
    data = sequence.data
    sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    longest, batch = sizes.size, int(sizes[0])
    if total_length is not None and total_length < longest:
        raise ArgumentError(f"Expected total_length to be at least the length of the longest "
                            f"sequence in input, but got total_length={total_length} and max "
                            f"sequence length being {longest}", op="pad_packed_sequence",
                            hint=f"pass total_length >= {longest}, or None")
    steps = longest if total_length is None else total_length
    unsorted = (np.arange(batch) if sequence.unsorted_indices is None
                else np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    pad_row = offsets[-1]
    rows = np.full((steps, batch), pad_row, dtype=np.int64)
    for t, n in enumerate(sizes):
        valid = unsorted < n  # the sequences (original order) that have a step t
        rows[t, valid] = offsets[t] + unsorted[valid]
    filler = full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = index_select(cat([data, filler], 0), 0, _index(rows.reshape(-1), data.device))
    padded = reshape(padded, (steps, batch, *data.shape[1:]))
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1)[unsorted]
    return (transpose(padded, 0, 1) if batch_first else padded), _index(lengths, "cpu")


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences: ``pack_padded_sequence(pad_sequence(sequences),
    lengths)`` (with ``enforce_sorted``, the list must be longest first)."""
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The inverse of :func:`pack_sequence`: the list of (L_i, *) sequences, original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
