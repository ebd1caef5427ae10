"""The preallocated key/value cache of :class:`~fw_zoo.llama.LlamaForCausalLM`.

Generation treats it as opaque apart from ``length`` and ``max_length``. The model writes each
layer's new keys and values into ``keys[i]``/``values[i]`` in place, and keeps the attention
mask of the compiled decode step in ``mask`` (the whole ``max_length``, zero past the filled
positions), so that step has the same shapes from the first new token to the last.
"""

from __future__ import annotations

import numpy as np

import fw_core as fw


class KVCache:
    """Keys and values of ``layers`` layers, each (batch, kv_heads, max_length, head_dim) of
    ``dtype`` (the model's), zero-filled; ``length``: positions filled so far."""

    def __init__(self, layers: int, batch: int, kv_heads: int, max_length: int, head_dim: int,
                 dtype=fw.float32):
        shape = (batch, kv_heads, max_length, head_dim)
        self.keys = [fw.zeros(*shape, dtype=dtype) for _ in range(layers)]
        self.values = [fw.zeros(*shape, dtype=dtype) for _ in range(layers)]
        self._mask = np.zeros((batch, max_length), dtype=np.int64)
        self.mask = fw.from_numpy(self._mask)  # shares _mask's memory
        self.length = 0
        self.max_length = max_length

    def __repr__(self) -> str:
        b, h, n, d = self.keys[0].shape
        return (f"KVCache(layers={len(self.keys)}, batch={b}, kv_heads={h}, head_dim={d}, "
                f"length={self.length}, max_length={n})")


def decode_mask(cache: KVCache, attention_mask) -> fw.Tensor:
    """``cache.mask`` holding ``attention_mask`` (B, cache.length + 1) in its first positions
    and 0 after them (all ones there when ``attention_mask`` is None)."""
    n = cache.length + 1
    if attention_mask is None:
        cache._mask[:, :n] = 1
    else:
        cache._mask[:, :n] = attention_mask.numpy()
    cache._mask[:, n:] = 0
    return cache.mask
