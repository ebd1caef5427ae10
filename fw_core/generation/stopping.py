"""When a row of a batch stops: at an eos token, or when a stop string is completed.

A stop string counts as HF's ``stop_strings`` do: it must end inside the token just generated
(it may start in earlier tokens, the prompt included, and the token may run past its end). The
check decodes only the last few tokens of the row, as many as the longest stop string has
characters plus one, since every token but a special one decodes to at least one character.
"""

from __future__ import annotations

__all__ = ["RowStops", "eos_list", "token_id"]

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError


def token_id(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ArgumentError(f"{name} must be a token id (an int >= 0), got {value!r}",
                            op="generate", hint=f"pass {name}=tokenizer.token_to_id(...) or "
                            "leave it out to use model.config's")
    return int(value)


def eos_list(eos_token_id) -> list[int]:
    """``eos_token_id`` (None, an int or a list of ints) as a list of ints."""
    if eos_token_id is None:
        return []
    values = eos_token_id if isinstance(eos_token_id, (list, tuple)) else [eos_token_id]
    return [token_id("eos_token_id", value) for value in values]


def _stop_strings(stop) -> list[str]:
    strings = [stop] if isinstance(stop, str) else stop
    if not isinstance(strings, (list, tuple)) or not all(
            isinstance(s, str) and s for s in strings):
        raise ArgumentTypeError(f"stop must be a non-empty string or a list of them, got "
                                f"{stop!r}", op="generate", hint='pass e.g. stop=["\\n\\n", '
                                '"User:"]')
    return list(strings)


class RowStops:
    """Which rows the token just generated finishes.

    Args:
        eos_token_ids: the eos ids (a row stops after generating one).
        stop: a string or list of strings (or None).
        tokenizer: decodes token ids (``decode(list[int]) -> str``); needed with ``stop``.
    """

    def __init__(self, eos_token_ids: list[int], stop, tokenizer):
        self.eos = np.asarray(eos_token_ids, dtype=np.int64)
        self.strings = [] if stop is None else _stop_strings(stop)
        if self.strings and not callable(getattr(tokenizer, "decode", None)):
            raise ArgumentTypeError(
                f"stop strings need a tokenizer to decode the tokens, got tokenizer="
                f"{type(tokenizer).__name__}", op="generate",
                hint="pass tokenizer=model.tokenizer (anything with decode(ids) -> str)")
        self.tokenizer = tokenizer
        self.window = max(map(len, self.strings), default=0) + 1

    @property
    def can_stop(self) -> bool:
        """Whether any row can finish before the length limit."""
        return bool(self.eos.size or self.strings)

    def __call__(self, ids: np.ndarray, length: int) -> np.ndarray:
        """(B,) bool: which rows of ``ids[:, :length]`` end with an eos or a stop string."""
        done = np.isin(ids[:, length - 1], self.eos)
        if self.strings:
            for row in np.flatnonzero(~done):
                done[row] = self._completes_string(ids[row, max(length - self.window, 0):length])
        return done

    def _completes_string(self, tail: np.ndarray) -> bool:
        text = self.tokenizer.decode(tail.tolist())
        before = self.tokenizer.decode(tail[:-1].tolist())
        return any(text.count(s) > before.count(s) for s in self.strings)
