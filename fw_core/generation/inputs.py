"""The prompt ``generate`` receives, checked and turned into host arrays: the token ids, the
attention mask (given, or inferred from the pad token as HF does) and the position ids.

A decoder-only model continues each row from its last column, so padding must be on the left:
each mask row is zeros then ones. Right padding would make the model continue a pad token; it
is refused here, where the mistake is visible, instead of producing a quietly wrong text.
"""

from __future__ import annotations

__all__ = ["Prompt", "position_ids", "prompt"]

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor

_FIX_LEFT = ("pad on the left (tokenizer padding_side='left'): each attention_mask row must be "
             "zeros then ones, ending with a 1")


@dataclass
class Prompt:
    """A checked prompt: ``ids`` and ``mask`` are (B, T) int64 host arrays."""

    ids: np.ndarray
    mask: np.ndarray
    device: object


def _host_ints(name: str, value, shape: tuple | None = None) -> np.ndarray:
    """``value`` (an fw tensor) as a 2-d int64 host array, with errors naming ``name``."""
    if not isinstance(value, Tensor):
        raise ArgumentTypeError(f"{name} must be an fw tensor, got {type(value).__name__}",
                                op="generate", hint=f"pass {name}=fw.tensor([[...]]) (int64, one "
                                "row per prompt)")
    if value.ndim != 2:
        raise ShapeError(f"{name} must be 2-d (batch, length), got shape {tuple(value.shape)}",
                         op="generate", hint="add the batch dimension: value.unsqueeze(0)"
                         if value.ndim == 1 else "pass one row of token ids per prompt")
    if shape is not None and tuple(value.shape) != shape:
        raise ShapeError(f"{name} must have input_ids' shape {shape}, got {tuple(value.shape)}",
                         op="generate", hint="give one mask entry per prompt token")
    array = value.numpy()
    if array.dtype.kind not in "iub":
        raise DTypeError(f"{name} must hold integers, got {value.dtype.name}", op="generate",
                         hint=f"pass {name}.long()")
    return array.astype(np.int64)


def _checked_mask(mask: np.ndarray) -> np.ndarray:
    if not np.isin(mask, (0, 1)).all():
        raise ArgumentError("attention_mask must hold only 0 (padding) and 1 (token), got "
                            f"values {np.unique(mask).tolist()[:8]}", op="generate",
                            hint="build it as (input_ids != pad_token_id).long()")
    bad = np.flatnonzero(np.any(np.diff(mask, axis=1) < 0, axis=1) | (mask[:, -1] == 0))
    if bad.size:
        raise ArgumentError(f"right padding detected: attention_mask rows {bad.tolist()[:8]} "
                            "end in padding (or hold no token), but generation continues "
                            "each row from its last column", op="generate",
                            inputs=f"attention_mask[{int(bad[0])}] = {mask[bad[0]].tolist()}",
                            hint=_FIX_LEFT)
    return mask


def prompt(input_ids, attention_mask, pad_token_id: int | None, eos_token_ids: list[int],
           vocab_size: int) -> Prompt:
    """The checked prompt. Without ``attention_mask`` the pad token marks padding, as in HF,
    unless it is also an eos token (then every token counts).

    Raises ArgumentTypeError / ShapeError / DTypeError for ids or a mask of the wrong kind,
    ArgumentError for ids outside the vocabulary and for right padding."""
    ids = _host_ints("input_ids", input_ids)
    if ids.shape[1] == 0 or ids.shape[0] == 0:
        raise ShapeError(f"input_ids must hold at least one token per row, got shape "
                         f"{ids.shape}", op="generate", hint="start each prompt with at least "
                         "the bos token (model.config.bos_token_id)")
    outside = (ids < 0) | (ids >= vocab_size)
    if outside.any():
        raise ArgumentError(f"input_ids holds ids outside the vocabulary [0, {vocab_size}): "
                            f"{np.unique(ids[outside]).tolist()[:8]}", op="generate",
                            hint="encode the prompt with the model's own tokenizer")
    if attention_mask is not None:
        mask = _host_ints("attention_mask", attention_mask, ids.shape)
    elif pad_token_id is not None and pad_token_id not in eos_token_ids:
        mask = (ids != pad_token_id).astype(np.int64)
    else:
        mask = np.ones_like(ids)
    return Prompt(ids, _checked_mask(mask), input_ids.device)


def position_ids(mask: np.ndarray) -> np.ndarray:
    """HF's positions for a left-padded mask: ``cumsum(mask) - 1``, padding clamped to 0."""
    return np.maximum(np.cumsum(mask, axis=1) - 1, 0)
