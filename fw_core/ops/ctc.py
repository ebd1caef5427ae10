"""Connectionist temporal classification loss, composed of fw ops (PyTorch's ``ctc_loss``).

The loss is -log of the total probability of every alignment of a target sequence to the
input frames, where an alignment may repeat a label and insert blanks. It is computed by the
forward (alpha) recursion in log space over the extended target ``blank l1 blank l2 ... blank``:
each frame is a few elementwise fw ops on an (N, 2S + 1) tensor, so the gradient (the
alignment posteriors) comes from autograd. Integer targets and lengths are read on the host:
they are indices, not differentiable values.
"""

from __future__ import annotations

__all__ = ["ctc_loss"]

import numpy as np

from .. import dtypes as _dt
from ..errors import ArgumentError, DTypeError, FwError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from . import reduction as _reduction
from .creation import as_tensor, full
from .elementwise import clamp, exp, isinf, log, maximum, where
from .indexing import gather
from .loss import _check_reduction
from .meta import located
from .shape import cat, squeeze, unsqueeze

_NEG_INF = float("-inf")


def _host_ints(value, name: str) -> np.ndarray:
    """Lengths or labels as a NumPy int64 array (from a Tensor, a sequence or an int)."""
    data = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
    if data.dtype.kind not in "iu":
        raise DTypeError(f"{name} must be integers, got {data.dtype}", op="ctc_loss",
                         hint=f"convert with {name}.long()")
    return data.astype(np.int64)


def _padded_targets(targets, target_lengths, batch: int, unbatched: bool) -> np.ndarray:
    """Targets as an (N, max(target_lengths)) array, from the padded or the concatenated form."""
    labels = _host_ints(targets, "targets")
    longest = int(target_lengths.max(initial=0))
    if unbatched or labels.ndim == 2:
        padded = labels[None] if unbatched and labels.ndim == 1 else labels
        if padded.ndim != 2 or padded.shape[0] != batch or padded.shape[1] < longest:
            raise ShapeError(f"padded targets must be ({batch}, S) with S >= the longest target "
                             f"length {longest}, got shape {tuple(labels.shape)}", op="ctc_loss",
                             hint="pad each target to the same length, one row per sample")
        return padded[:, :longest]
    if labels.ndim != 1 or labels.size < target_lengths.sum():
        raise ShapeError(f"concatenated targets need sum(target_lengths) = "
                         f"{int(target_lengths.sum())} labels, got shape {tuple(labels.shape)}",
                         op="ctc_loss", hint="pass (N, S) padded targets or the targets of "
                         "every sample joined into one 1-d tensor")
    padded = np.zeros((batch, longest), np.int64)
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    for row, (start, length) in enumerate(zip(starts, target_lengths, strict=True)):
        padded[row, :length] = labels[start:start + length]
    return padded


def _check_lengths(name: str, lengths: np.ndarray, batch: int, most: int | None = None) -> None:
    """One length per sample, each >= 0 (and <= ``most`` where given)."""
    if lengths.shape != (batch,):
        raise ShapeError(f"{name} must hold one length per sample ({batch}), got shape "
                         f"{lengths.shape}", op="ctc_loss", hint=f"pass {batch} lengths")
    if lengths.size and (lengths.min() < 0 or (most is not None and lengths.max() > most)):
        bound = f"[0, {most}]" if most is not None else ">= 0"
        raise ArgumentError(f"{name} must be {bound}, got {lengths.tolist()}", op="ctc_loss",
                            hint="a length counts frames (at most T) or labels")


def _log_add_exp(*terms):
    """log(sum(exp(terms))) elementwise, -inf (with a zero gradient) where every term is -inf."""
    top = terms[0].detach()
    for term in terms[1:]:
        top = maximum(top, term.detach())
    dead = isinf(top)  # the max is -inf only where every term is
    shift = where(dead, 0.0, top)
    total = exp(terms[0] - shift)
    for term in terms[1:]:
        total = total + exp(term - shift)
    return where(dead, _NEG_INF, log(where(dead, 1.0, total)) + shift)


def _shifted(alpha, by: int):
    """alpha moved ``by`` positions to the right along the extended target, -inf filling in."""
    fill = full((alpha.shape[0], by), _NEG_INF, dtype=alpha.dtype, device=alpha.device)
    return cat([fill, alpha[:, :-by]], 1)


def _like(reference, array: np.ndarray):
    """A host array (mask, index or length) as a tensor on ``reference``'s device."""
    return as_tensor(np.ascontiguousarray(array), device=reference.device)


def _sequence_nll(log_probs, labels, input_lengths, target_lengths, blank):
    """-log p(labels | log_probs) per sample: log_probs (T, N, C), labels (N, S) on the host."""
    frames, batch, _ = log_probs.shape
    width = 2 * labels.shape[1] + 1
    extended = np.full((batch, width), blank, np.int64)
    extended[:, 1::2] = labels
    # a label may be reached from two positions back unless it is blank or repeats that label
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    index = _like(log_probs, np.broadcast_to(extended, (frames, batch, width)))
    emit = gather(log_probs, 2, index)  # (T, N, 2S + 1): log p of each extended label per frame
    start = _like(log_probs, np.broadcast_to(np.arange(width) < 2, (batch, width)))
    alpha = where(start, emit[0], _NEG_INF)
    skip = _like(log_probs, skip)
    for t in range(1, frames):
        step = _log_add_exp(alpha, _shifted(alpha, 1),
                            where(skip, _shifted(alpha, 2), _NEG_INF)) + emit[t]
        running = _like(log_probs, (t < input_lengths)[:, None])
        alpha = where(running, step, alpha)  # a finished sequence keeps its last alpha
    ends = _like(log_probs, np.stack([2 * target_lengths, 2 * target_lengths - 1], 1).clip(0))
    last_two = gather(alpha, 1, ends)
    has_label = _like(log_probs, target_lengths > 0)
    total = _log_add_exp(last_two[:, 0], where(has_label, last_two[:, 1], _NEG_INF))
    # no frames at all: only the empty target is possible, with probability 1
    no_frames = _like(log_probs, input_lengths == 0)
    return where(no_frames, where(has_label, float("inf"), 0.0), -total)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False):
    """CTC loss of ``targets`` under per-frame log-probabilities (PyTorch's ``ctc_loss``).

    Args:
        log_probs: (T, N, C) log-probabilities (log_softmax over C), or (T, C) unbatched.
        targets: (N, S) labels padded to S >= max(target_lengths), the labels of every sample
            joined into one 1-d tensor, or (S,) unbatched. Labels are in [0, C).
        input_lengths, target_lengths: (N,) integers (tensors, sequences or, unbatched, an
            int): frames used per sample (<= T) and labels per target.
        blank: the blank class. zero_infinity: an impossible alignment (target longer than the
            frames can spell) gives 0 instead of inf.
        reduction: 'mean' divides each loss by its target length (at least 1) and averages
            over the batch; 'sum'; 'none' gives (N,) (a 0-d tensor unbatched).

    The gradient is the exact one of -log p. PyTorch returns exp(log_probs) minus the
    alignment posteriors instead, which agrees with it once the gradient has passed back
    through the log_softmax that made log_probs (each frame's probabilities sum to 1). An
    impossible alignment gets a zero gradient (PyTorch: NaN unless zero_infinity).

    Raises:
        IndexOutOfRangeError: a label (or blank) outside [0, C).
        ArgumentError: lengths outside [0, T] or [0, S]; a bad reduction.
        ShapeError: log_probs not 2-d or 3-d, or lengths and targets that do not fit it.
    """
    try:
        _check_reduction("ctc_loss", reduction)
        if log_probs.ndim not in (2, 3) or not _dt.is_float(log_probs._data.dtype):
            raise ShapeError(f"log_probs must be floating (T, N, C) or (T, C), got "
                             f"{log_probs.dtype.name} {tuple(log_probs.shape)}", op="ctc_loss",
                             hint="pass log_softmax(logits, dim=-1) with time first")
        unbatched = log_probs.ndim == 2
        if unbatched:
            log_probs = unsqueeze(log_probs, 1)
        frames, batch, classes = log_probs.shape
        in_lengths = _host_ints(input_lengths, "input_lengths").reshape(-1)
        out_lengths = _host_ints(target_lengths, "target_lengths").reshape(-1)
        _check_lengths("input_lengths", in_lengths, batch, frames)
        _check_lengths("target_lengths", out_lengths, batch)
        labels = _padded_targets(targets, out_lengths, batch, unbatched)  # checks their lengths
        if not 0 <= blank < classes:
            raise IndexOutOfRangeError(f"blank={blank} is not a class index in [0, {classes})",
                                       op="ctc_loss", hint="blank is usually 0")
        used = np.arange(labels.shape[1]) < out_lengths[:, None]
        if used.any() and (labels[used].min() < 0 or labels[used].max() >= classes):
            raise IndexOutOfRangeError(f"target labels must be in [0, {classes}), got values in "
                                       f"[{labels[used].min()}, {labels[used].max()}]",
                                       op="ctc_loss", hint="give log_probs one class per "
                                       "label plus the blank")
        loss = _sequence_nll(log_probs, labels, in_lengths, out_lengths, blank)
        if zero_infinity:
            loss = where(isinf(loss), 0.0, loss)
        if reduction == "mean":
            per_label = _like(log_probs, out_lengths.astype(np.dtype(log_probs.dtype.numpy)))
            return _reduction.mean(loss / clamp(per_label, min=1.0))
        if reduction == "sum":
            return _reduction.sum(loss)
        return squeeze(loss, 0) if unbatched else loss
    except FwError as err:
        raise located(err, "ctc_loss", (log_probs, targets), blank=blank,
                      reduction=reduction) from None
