"""The embedding functional forms with PyTorch's full arguments, composed of fw ops:
``embedding`` (with ``max_norm`` renormalising the looked-up rows in place and
``scale_grad_by_freq``) and ``embedding_bag`` (sums, means or maxima of bags of rows).

The lookup itself is the ``embedding`` op; the bags are gathered into a padded
(bags, longest bag, dim) block and reduced, so gradients reach each row that was used.
"""

# ruff: noqa: A002 - PyTorch's argument name ``input``
from __future__ import annotations

__all__ = ["embedding", "embedding_bag"]

import math

import numpy as np

from .._state import state
from ..autograd import no_grad
from ..errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from ..ops import nn as _nn
from ..ops.creation import full, tensor
from ..ops.elementwise import where
from ..ops.indexing import index_select
from ..ops.reduction import amax, norm
from ..ops.reduction import sum as _sum
from ..ops.shape import cat, reshape, unsqueeze
from ..tensor import Tensor


def _fail(error, message: str, hint: str, op: str = "embedding_bag"):
    return error(message, op=op, module=state.module_path or None, hint=hint)


def _refuse_sparse(op: str, sparse: bool) -> None:
    if sparse:
        raise _fail(UnsupportedError, "sparse gradients are not implemented", "pass "
                    "sparse=False: the weight then gets a dense gradient", op)


def embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float,
                      norm_type: float = 2.0) -> Tensor:
    """Scale, in place and untracked, each row of ``weight`` that ``input`` looks up and whose
    ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm`` (times 1 / (1 + 1e-7 /
    norm), PyTorch's ``embedding_renorm_``). Returns ``weight``."""
    rows = np.unique(np.asarray(input.tolist(), dtype=np.int64).reshape(-1))
    if rows.size == 0:
        return weight
    with no_grad():
        index = tensor(rows, device=weight.device)
        picked = index_select(weight, 0, index)
        norms = norm(picked, norm_type, 1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight[index] = picked * scale
    return weight


def _scaled_by_frequency(out: Tensor, input: Tensor) -> Tensor:
    """``out`` with the gradient of each looked-up row divided by how often its index occurs
    in ``input`` (the value is unchanged)."""
    ids = np.asarray(input.tolist(), dtype=np.int64)
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    scale = tensor((1.0 / counts[inverse]).reshape(ids.shape + (1,)), dtype=out.dtype,
                   device=out.device)
    scaled = out * scale
    return scaled + (out - scaled).detach()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, dim) at the integer ``input`` indices:
    (*) -> (*, dim). ``padding_idx``'s row gets no gradient; with ``max_norm`` the rows looked
    up are first renormalised in place (see :func:`embedding_renorm_`); with
    ``scale_grad_by_freq`` each row's gradient is divided by its index's count in ``input``.

    Raises:
        UnsupportedError: for ``sparse=True`` (fw has no sparse gradients).
    """
    _refuse_sparse("embedding", sparse)
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    out = _nn.embedding(input, weight, padding_idx)
    return _scaled_by_frequency(out, input) if scale_grad_by_freq else out


def _bags(input: Tensor, offsets, include_last_offset: bool) -> tuple[np.ndarray, list]:
    """The flat indices and, per bag, the (start, stop) of its entries in them."""
    if input.ndim not in (1, 2):
        raise _fail(ShapeError, f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                    f"{input.ndim}", "pass (bags, bag size) indices, or 1-d indices with offsets")
    ids = np.asarray(input.tolist(), dtype=np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise _fail(ArgumentError, "if input is 2D, then offsets has to be None, as input is "
                        "treated is a mini-batch of fixed length sequences. However, found "
                        f"offsets of type {type(offsets).__name__}",
                        "drop offsets, or flatten the input to 1-d")
        bags, size = ids.shape
        return ids.reshape(-1), [(b * size, (b + 1) * size) for b in range(bags)]
    if offsets is None or getattr(offsets, "ndim", None) != 1:
        raise _fail(ShapeError, f"offsets has to be a 1D Tensor but got "
                    f"{'None' if offsets is None else f'{offsets.ndim}-d'}",
                    "pass offsets: where each bag starts in the 1-d input")
    starts = [int(v) for v in offsets.tolist()]
    if starts and starts[0] != 0:
        raise _fail(ShapeError, f"offsets[0] has to be 0, i.e., the first sequence in the "
                    f"mini-batch has to start from position 0. However, got {starts[0]}",
                    "start the first bag at 0")
    if starts and starts[-1] > ids.size:
        raise _fail(ShapeError, f"offsets[-1] can not be greater than input's length "
                    f"{ids.size}, but got {starts[-1]}", "offsets index into the input")
    stops = starts[1:] + ([] if include_last_offset else [ids.size])
    return ids, list(zip(starts, stops))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of embedding rows, without materialising the
    lookups per position in the caller's code: (bags, dim).

    Bags are the rows of a 2-d ``input``, or slices ``input[offsets[i]:offsets[i+1]]`` of a
    1-d one (``include_last_offset``: offsets has one entry per bag plus the end). Entries
    equal to ``padding_idx`` are left out (of the count of a mean too); an empty bag gives
    zeros. ``per_sample_weights`` (input's shape, mode "sum" only) weights each row.

    Raises:
        ArgumentError: for an unknown mode or per_sample_weights outside mode "sum";
        ShapeError: for inputs and offsets that do not describe bags (PyTorch's messages).
    """
    if mode not in ("sum", "mean", "max"):
        raise _fail(ArgumentError, f"mode has to be one of sum, mean or max, got {mode!r}",
                    'pass mode="sum", "mean" or "max"')
    if per_sample_weights is not None and mode != "sum":
        raise _fail(ArgumentError, "embedding_bag: per_sample_weights was not None. "
                    f"per_sample_weights is only supported for mode='sum' (got mode='{mode}'). "
                    "Please open a feature request on GitHub.", 'use mode="sum"')
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise _fail(ShapeError, f"per_sample_weights has shape {tuple(per_sample_weights.shape)}"
                    f" but input has {tuple(input.shape)}", "give one weight per index")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise _fail(ArgumentTypeError, "weight must be a 2-d (num_embeddings, dim) tensor",
                    "pass the embedding table")
    _refuse_sparse("embedding_bag", sparse)
    ids, spans = _bags(input, offsets, include_last_offset)
    if padding_idx is not None:
        padding_idx %= weight.shape[0]
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    kept = np.ones(ids.size, dtype=bool) if padding_idx is None else ids != padding_idx
    # each bag's kept entries, as positions in the kept rows; the filler row pads short bags
    positions = np.cumsum(kept) - 1
    members = [positions[start:stop][kept[start:stop]] for start, stop in spans]
    longest = max((m.size for m in members), default=0)
    rows = _nn.embedding(tensor(ids[kept], device=weight.device), weight)
    if scale_grad_by_freq:
        rows = _scaled_by_frequency(rows, tensor(ids[kept]))
    if per_sample_weights is not None:
        flat = reshape(per_sample_weights, (-1,))
        rows = rows * unsqueeze(index_select(flat, 0, tensor(np.flatnonzero(kept),
                                                              device=weight.device)), 1)
    dim = weight.shape[1]
    filler = full((1, dim), -math.inf if mode == "max" else 0.0, dtype=weight.dtype,
                  device=weight.device)
    block = np.full((len(spans), max(longest, 1)), int(kept.sum()), dtype=np.int64)
    for b, m in enumerate(members):
        block[b, :m.size] = m
    gathered = index_select(cat([rows, filler], 0), 0,
                            tensor(block.reshape(-1), device=weight.device))
    gathered = reshape(gathered, (len(spans), block.shape[1], dim))
    counts = np.array([m.size for m in members], dtype=np.int64)
    if mode == "max":
        nonempty = tensor((counts > 0)[:, None], device=weight.device)
        return where(nonempty, amax(gathered, 1), 0.0)
    out = _sum(gathered, 1)
    if mode == "mean":
        out = out / tensor(np.maximum(counts, 1)[:, None].astype(np.float64),
                           dtype=weight.dtype, device=weight.device)
    return out
