"""A causal LM whose next-token logits are a given function of the tokens so far, for checking
generate's bookkeeping (stopping, padding, processors) against hand-computed answers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import fw_core as fw
from fw_core.generation import GenerationMixin


class History:
    """A cache that keeps the token ids seen so far (generation treats it as opaque)."""

    def __init__(self, batch: int, max_length: int):
        self.ids = np.zeros((batch, 0), np.int64)
        self.length, self.max_length = 0, max_length


class ScriptedLM(GenerationMixin, fw.nn.Module):
    """``next_logits(ids) -> (B, vocab)`` gives the scores after the (B, L) ids so far."""

    def __init__(self, next_logits, vocab_size: int = 8, eos_token_id=1, pad_token_id=2,
                 max_position_embeddings: int = 64):
        super().__init__()
        self.next_logits = next_logits
        self.config = SimpleNamespace(vocab_size=vocab_size, bos_token_id=0,
                                      eos_token_id=eos_token_id, pad_token_id=pad_token_id,
                                      max_position_embeddings=max_position_embeddings)
        self.calls = []

    def new_cache(self, batch_size, max_length):
        self.cache = History(batch_size, max_length)
        return self.cache

    def forward(self, input_ids, cache=None, attention_mask=None, position_ids=None):
        self.calls.append({"ids": input_ids.numpy(), "mask": attention_mask.numpy(),
                           "positions": position_ids.numpy(), "grad": fw.is_grad_enabled()})
        cache.ids = np.concatenate([cache.ids, input_ids.numpy()], axis=1)
        cache.length += input_ids.shape[1]
        assert cache.length <= cache.max_length
        last = np.asarray(self.next_logits(cache.ids), np.float32)
        return fw.tensor(np.repeat(last[:, None], input_ids.shape[1], axis=1))


def script(rows: list[list[int]], vocab_size: int = 8, prompt_length: int = 1):
    """Logits making row b emit ``rows[b]`` token by token (then token 3 forever)."""
    def next_logits(ids):
        step = ids.shape[1] - prompt_length
        out = np.zeros((ids.shape[0], vocab_size), np.float32)
        for b, tokens in enumerate(rows[:ids.shape[0]]):
            out[b, tokens[step] if step < len(tokens) else 3] = 10.0
        return out
    return next_logits


def fixed(logits: np.ndarray):
    """The same logits row (vocab,) for every row and step."""
    return lambda ids: np.broadcast_to(logits, (ids.shape[0], logits.size))
