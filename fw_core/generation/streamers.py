"""Streaming generated tokens as they come: HF's streamer protocol (``put(ids)`` with the
prompt first, then each step's new tokens; ``end()`` once at the end), a plain callback
(``callback(new_ids)`` per step, the prompt left out), and :class:`TextStreamer`, which prints
the decoded text.
"""

from __future__ import annotations

__all__ = ["TextStreamer", "as_streamer"]

import sys

from ..errors import ArgumentTypeError, ShapeError
from ..tensor import Tensor


class TextStreamer:
    """Print the text of a batch-of-one generation as it is produced.

    Text is printed up to the last whitespace of what is decoded so far (a token's text can
    change once the next token arrives: a word split over tokens, a character split over
    bytes), everything at a newline, and the rest at the end followed by a newline.

    Args:
        tokenizer: anything with ``decode(list[int], **decode_kwargs) -> str``.
        skip_prompt: leave the prompt out of the printed text.
        file: where to print (standard output by default).
        **decode_kwargs: passed to ``tokenizer.decode`` (``skip_special_tokens=True``, ...).

    Override :meth:`on_finalized_text` to send the text elsewhere.

    Example::

        model.generate(ids, max_new_tokens=40, streamer=fw.generation.TextStreamer(tok))
    """

    def __init__(self, tokenizer, skip_prompt: bool = False, file=None, **decode_kwargs):
        if not callable(getattr(tokenizer, "decode", None)):
            raise ArgumentTypeError(f"TextStreamer needs a tokenizer with decode(ids), got "
                                    f"{type(tokenizer).__name__}", op="TextStreamer",
                                    hint="pass model.tokenizer")
        self.tokenizer, self.skip_prompt = tokenizer, skip_prompt
        self.file, self.decode_kwargs = file, decode_kwargs
        self._tokens: list[int] = []
        self._printed = 0
        self._prompt_next = True

    def put(self, value: Tensor) -> None:
        """Take the next token ids: (1, T) or (1,) or (T,) for one row."""
        if value.ndim > 1 and value.shape[0] > 1:
            raise ShapeError(f"TextStreamer prints one row, got a batch of {value.shape[0]}",
                             op="TextStreamer", hint="stream a batch with a callback "
                             "(streamer=fn receives each step's (B,) tokens)")
        prompt, self._prompt_next = self._prompt_next, False
        if prompt and self.skip_prompt:
            return
        self._tokens.extend(value.numpy().reshape(-1).tolist())
        text = self.tokenizer.decode(self._tokens, **self.decode_kwargs)
        if text.endswith("\n"):
            self.on_finalized_text(text[self._printed:])
            self._tokens, self._printed = [], 0
            return
        cut = max(text.rfind(" "), text.rfind("\t")) + 1
        if cut > self._printed:
            self.on_finalized_text(text[self._printed:cut])
            self._printed = cut

    def end(self) -> None:
        """Print what is left and a newline; the next ``put`` is a new prompt."""
        text = self.tokenizer.decode(self._tokens, **self.decode_kwargs) if self._tokens else ""
        self.on_finalized_text(text[self._printed:], stream_end=True)
        self._tokens, self._printed, self._prompt_next = [], 0, True

    def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
        """Write ``text`` (and a newline at the end of the stream)."""
        print(text, end="\n" if stream_end else "", flush=True,
              file=self.file if self.file is not None else sys.stdout)


class _Callback:
    """A plain function as a streamer: called with each step's (B,) new tokens."""

    def __init__(self, function):
        self.function = function
        self._prompt_next = True

    def put(self, value: Tensor) -> None:
        if self._prompt_next:
            self._prompt_next = False
            return
        self.function(value)

    def end(self) -> None:
        self._prompt_next = True


def as_streamer(streamer):
    """``streamer`` as an object with ``put``/``end`` (None stays None)."""
    if streamer is None or (callable(getattr(streamer, "put", None))
                            and callable(getattr(streamer, "end", None))):
        return streamer
    if callable(streamer):
        return _Callback(streamer)
    raise ArgumentTypeError(f"streamer must have put(ids) and end(), or be a function of the new "
                            f"token ids, got {type(streamer).__name__}", op="generate",
                            hint="pass fw.generation.TextStreamer(tokenizer) or a function")
