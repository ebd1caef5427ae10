"""A tiny causal LM and character tokenizer following fw's causal-LM protocol, for the tests and
the docs of ``fw.generation`` (the way HF tests against tiny random models): one attention layer
with random weights from a seed, learned positions, and a real preallocated KV cache.

It checks what a real model relies on — the mask covering the past and the new tokens, the
cache not overflowing — so generation bugs show up here and not only with SmolLM2.
"""

from __future__ import annotations

__all__ = ["CharTokenizer", "KVCache", "TinyCausalLM", "TinyConfig"]

from dataclasses import dataclass

import numpy as np

from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError
from ..nn.layers.linear import Linear
from ..nn.layers.sparse import Embedding
from ..nn.module import Module
from ..ops.attention import scaled_dot_product_attention
from ..ops.creation import arange, tensor, zeros
from ..ops.elementwise import logical_and, tanh
from ..ops.shape import expand, reshape, transpose, unsqueeze
from ..random import get_rng_state, set_rng_state
from .mixin import GenerationMixin


@dataclass
class TinyConfig:
    """The protocol's config fields (``eos_token_id`` may be an int or a list)."""

    vocab_size: int = 32
    hidden_size: int = 16
    num_heads: int = 2
    max_position_embeddings: int = 64
    bos_token_id: int = 0
    eos_token_id: int | list[int] | None = 1
    pad_token_id: int | None = 2


class KVCache:
    """Preallocated keys and values, (B, heads, max_length, head_dim) each, filled from the
    left; ``length`` positions are filled."""

    def __init__(self, batch: int, heads: int, max_length: int, head_dim: int):
        self.keys = zeros(batch, heads, max_length, head_dim)
        self.values = zeros(batch, heads, max_length, head_dim)
        self.length, self.max_length = 0, max_length

    def append(self, keys, values):
        """Store (B, heads, T, head_dim) new keys and values; return all filled so far."""
        end = self.length + keys.shape[2]
        if end > self.max_length:
            raise ArgumentError(f"the KV cache holds {self.max_length} positions, asked for "
                                f"{end}", op="KVCache.append",
                                hint="create the cache with new_cache(batch, prompt + new tokens)")
        self.keys[:, :, self.length:end] = keys
        self.values[:, :, self.length:end] = values
        self.length = end
        return self.keys[:, :, :end], self.values[:, :, :end]


class TinyCausalLM(GenerationMixin, Module):
    """One attention layer over token + position embeddings, then ``lm_head(tanh(h))``.

    ``TinyCausalLM(TinyConfig(), seed=0)`` gives the same weights every time (drawn with its
    own NumPy generator, fw's global one untouched); ``scale`` spreads the logits."""

    def __init__(self, config: TinyConfig | None = None, seed: int = 0, scale: float = 3.0):
        super().__init__()
        self.config = config = config or TinyConfig()
        hidden, self.heads = config.hidden_size, config.num_heads
        rng, global_state = np.random.default_rng(seed), get_rng_state()
        self.embed_tokens = Embedding(config.vocab_size, hidden)
        self.embed_positions = Embedding(config.max_position_embeddings, hidden)
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (Linear(hidden, hidden)
                                                              for _ in range(4))
        self.lm_head = Linear(hidden, config.vocab_size)
        with no_grad():
            for parameter in self.parameters():
                values = rng.normal(0, scale / np.sqrt(hidden), tuple(parameter.shape))
                parameter.copy_(tensor(values.astype(np.float32)))
        set_rng_state(global_state)  # undo the layers' default initialisation draws

    def new_cache(self, batch_size: int, max_length: int) -> KVCache:
        hidden = self.config.hidden_size
        return KVCache(batch_size, self.heads, max_length, hidden // self.heads)

    def _split(self, x):
        batch, length, hidden = x.shape
        return transpose(reshape(x, batch, length, self.heads, hidden // self.heads), 1, 2)

    def forward(self, input_ids, cache=None, attention_mask=None, position_ids=None):
        batch, length = input_ids.shape
        past = cache.length if cache is not None else 0
        if position_ids is None:
            position_ids = expand(unsqueeze(arange(past, past + length), 0), batch, length)
        if attention_mask is not None and tuple(attention_mask.shape) != (batch, past + length):
            raise ShapeError(f"attention_mask must cover the past and the new tokens, "
                             f"({batch}, {past + length}), got {tuple(attention_mask.shape)}",
                             op="TinyCausalLM", hint="pass the mask of the whole sequence")
        x = self.embed_tokens(input_ids) + self.embed_positions(position_ids)
        q, k, v = (self._split(proj(x)) for proj in (self.q_proj, self.k_proj, self.v_proj))
        if cache is not None:
            k, v = cache.append(k, v)
        keys = past + length
        allowed = unsqueeze(arange(keys), 0) <= unsqueeze(arange(past, keys), 1)  # causal
        allowed = unsqueeze(unsqueeze(allowed, 0), 0)
        if attention_mask is not None:
            allowed = logical_and(allowed, reshape(attention_mask, batch, 1, 1, keys) > 0)
        attended = scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        hidden = x + self.o_proj(reshape(transpose(attended, 1, 2), batch, length, -1))
        return self.lm_head(tanh(hidden))


class CharTokenizer:
    """Characters as token ids after the special ones (bos 0, eos 1, pad 2); ``decode``
    leaves the special ids out."""

    specials = 3

    def __init__(self, alphabet: str = "abcdefghijklmnopqrstuvwxyz .,!?\n"):
        self.alphabet = alphabet
        self.vocab_size = self.specials + len(alphabet)

    def encode(self, text: str) -> list[int]:
        unknown = sorted(set(text) - set(self.alphabet))
        if unknown:
            raise ArgumentError(f"CharTokenizer has no token for {unknown}", op="CharTokenizer",
                                hint=f"use only the characters of {self.alphabet!r}")
        return [self.specials + self.alphabet.index(c) for c in text]

    def decode(self, ids) -> str:
        return "".join(self.alphabet[i - self.specials] for i in ids if i >= self.specials)
