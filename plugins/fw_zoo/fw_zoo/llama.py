"""A LLaMA-family causal language model in fw, with Hugging Face's module names.

``LlamaForCausalLM`` follows ``transformers``' ``LlamaForCausalLM``: RMSNorm, rotary position
embeddings applied the Hugging Face way (``rotate_half``: each head's first and second halves
are the rotated pairs' components), a SwiGLU MLP, grouped-query attention (``num_key_value_heads``
key/value heads shared by ``num_attention_heads`` query heads) and an ``lm_head`` tied to the
token embeddings. It implements fw's causal-LM protocol (see :meth:`LlamaForCausalLM.forward`):
a preallocated key/value cache (:class:`~fw_zoo.llama_cache.KVCache`, from ``new_cache``), one
call for the prompt, then one call per new token.

One forward serves every case. Attention reads keys ``0 .. L-1`` of the cache and a bias made
from data: the attention mask and each query's cache slot (a key is seen when its slot is not
after the query's and the mask marks it real). Eagerly, ``L`` is the filled length; the decode
step compiled with :func:`fw.compile` reads the whole preallocated cache with the mask as data
and writes the new keys/values at the slot it is given as data (``index_write``), so every step
has the same shapes and one plan serves the whole generation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import fw_core as fw
from fw_core.errors import InvalidArgumentError, ShapeError
from fw_core.generation import GenerationMixin
from fw_core.nn import functional as F
from fw_core.ops.index_update import index_write

from .llama_cache import KVCache, decode_mask

#: cache sizes are rounded up to a multiple of this: one decode plan per bucket, and a step reads
#: at most this many unused key/value positions per layer (2% of the weights' bytes at 256)
CACHE_BUCKET = 256


@dataclass(frozen=True)
class LlamaConfig:
    """The sizes and constants of a LLaMA model (Hugging Face's ``LlamaConfig`` names)."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    max_position_embeddings: int
    rms_norm_eps: float
    rope_theta: float
    tie_word_embeddings: bool
    bos_token_id: int | None
    eos_token_id: int | list[int] | None
    pad_token_id: int | None

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_gguf(cls, metadata: dict, tied: bool) -> LlamaConfig:
        """The config a GGUF file's ``llama.*`` and ``tokenizer.ggml.*`` metadata describe;
        ``tied``: the file has no ``output.weight`` (the lm_head is the embedding).

        Raises:
            InvalidArgumentError: the file is not a LLaMA model, or uses RoPE scaling or a
                rotary dimension other than the head size (not implemented here).
        """
        arch = metadata.get("general.architecture")
        if arch != "llama":
            raise InvalidArgumentError(f"the GGUF file's architecture is {arch!r}",
                                       hint="fw_zoo's LlamaForCausalLM reads 'llama' files only")
        heads = int(metadata["llama.attention.head_count"])
        hidden = int(metadata["llama.embedding_length"])
        rope_dim = int(metadata.get("llama.rope.dimension_count", hidden // heads))
        if rope_dim != hidden // heads or "llama.rope.scaling.type" in metadata:
            raise InvalidArgumentError("the GGUF file uses partial or scaled RoPE",
                                       hint="fw_zoo's LlamaForCausalLM rotates whole heads "
                                       "with plain RoPE")
        vocab = metadata.get("llama.vocab_size") or len(metadata["tokenizer.ggml.tokens"])
        return cls(
            vocab_size=int(vocab), hidden_size=hidden,
            intermediate_size=int(metadata["llama.feed_forward_length"]),
            num_hidden_layers=int(metadata["llama.block_count"]),
            num_attention_heads=heads,
            num_key_value_heads=int(metadata.get("llama.attention.head_count_kv", heads)),
            max_position_embeddings=int(metadata["llama.context_length"]),
            rms_norm_eps=float(metadata["llama.attention.layer_norm_rms_epsilon"]),
            rope_theta=float(metadata.get("llama.rope.freq_base", 10000.0)),
            tie_word_embeddings=tied,
            bos_token_id=metadata.get("tokenizer.ggml.bos_token_id"),
            eos_token_id=metadata.get("tokenizer.ggml.eos_token_id"),
            pad_token_id=metadata.get("tokenizer.ggml.padding_token_id"))


class LlamaRotaryEmbedding(fw.nn.Module):
    """cos and signed sin of each position's rotation angles, for :func:`rotate`.

    ``forward(position_ids, dtype)``: (batch, seq) int64 -> two (batch, 1, seq, head_dim)
    tensors of ``dtype``, computed in float32 (as Hugging Face does). Angle ``j`` of position
    ``p`` is ``p * theta ** (-2j / head_dim)``, repeated for both halves of the head; the sin
    carries the sign of ``rotate_half`` (-1 on the first half).
    """

    def __init__(self, config: LlamaConfig):
        super().__init__()
        d = config.head_dim
        inv_freq = 1.0 / (config.rope_theta ** (np.arange(0, d, 2, dtype=np.int64)
                                                .astype(np.float32) / d))
        self.register_buffer("inv_freq", fw.from_numpy(inv_freq.astype(np.float32)),
                             persistent=False)
        sign = np.concatenate([-np.ones(d // 2), np.ones(d // 2)]).astype(np.float32)
        self.register_buffer("sign", fw.from_numpy(sign), persistent=False)

    def forward(self, position_ids, dtype=fw.float32):
        freqs = position_ids.float().unsqueeze(-1) * self.inv_freq.float()
        angles = fw.cat([freqs, freqs], dim=-1).unsqueeze(1)
        return fw.cos(angles).to(dtype), (fw.sin(angles) * self.sign.float()).to(dtype)


def rotate(x, cos, signed_sin):
    """RoPE on (..., seq, head_dim): ``x * cos + rotate_half(x) * sin``, with
    ``rotate_half(x) = [-x2, x1]`` written as a roll of the halves times the sign in
    ``signed_sin``."""
    return x * cos + fw.roll(x, x.shape[-1] // 2, -1) * signed_sin


class LlamaAttention(fw.nn.Module):
    """Grouped-query self-attention with rotary positions (``q_proj``, ``k_proj``, ``v_proj``,
    ``o_proj``, no biases).

    ``forward(hidden, cos, sin, bias, cache_slot, keys, values)``: hidden (B, T, hidden);
    cos/sin from :class:`LlamaRotaryEmbedding`; bias (B, 1, 1, T, L) additive; with a cache,
    ``keys``/``values`` are this layer's (B, kv_heads, L', head_dim) cache tensors, the new ones
    are written at ``cache_slot`` (T,) and the first L slots are attended over.
    """

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        self.q_proj = fw.nn.Linear(config.hidden_size, self.heads * self.head_dim, bias=False)
        self.k_proj = fw.nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = fw.nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = fw.nn.Linear(self.heads * self.head_dim, config.hidden_size, bias=False)

    def forward(self, hidden, cos, sin, bias, cache_slot=None, keys=None, values=None):
        b, t = hidden.shape[0], hidden.shape[1]
        group = self.heads // self.kv_heads
        # queries as (B, kv_heads, group, T, D): head h reads key/value head h // group
        q = self.q_proj(hidden).reshape(b, t, self.kv_heads, group, self.head_dim)
        q = rotate(q.permute(0, 2, 3, 1, 4), cos.unsqueeze(1), sin.unsqueeze(1))
        k = self.k_proj(hidden).reshape(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden).reshape(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        k = rotate(k, cos, sin)
        if keys is None:
            keys, values = k, v
        else:
            span = bias.shape[-1]
            keys = index_write(keys, 2, cache_slot, k)
            values = index_write(values, 2, cache_slot, v)
            if span != keys.shape[2]:
                keys, values = keys[:, :, :span], values[:, :, :span]
        scores = (q * (1.0 / math.sqrt(self.head_dim))) @ keys.unsqueeze(2).transpose(-1, -2)
        probs = softmax_rows(scores + bias)
        mixed = (probs @ values.unsqueeze(2)).permute(0, 3, 1, 2, 4)
        return self.o_proj(mixed.reshape(b, t, self.heads * self.head_dim))


class LlamaMLP(fw.nn.Module):
    """SwiGLU: ``down_proj(silu(gate_proj(x)) * up_proj(x))``."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.gate_proj = fw.nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = fw.nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = fw.nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(fw.nn.Module):
    """Pre-norm block: attention, then the MLP, each added to its input."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = fw.nn.RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = fw.nn.RMSNorm(config.hidden_size,
                                                      eps=config.rms_norm_eps)

    def forward(self, x, cos, sin, bias, cache_slot=None, keys=None, values=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, bias, cache_slot, keys, values)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(fw.nn.Module):
    """Token embeddings, the decoder layers and the final RMSNorm (``model.*``)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.embed_tokens = fw.nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = fw.nn.ModuleList(LlamaDecoderLayer(config)
                                       for _ in range(config.num_hidden_layers))
        self.norm = fw.nn.RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.rotary_emb = LlamaRotaryEmbedding(config)

    def forward(self, input_ids, position_ids, bias, cache_slot=None, keys=(), values=()):
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary_emb(position_ids, x.dtype)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, bias, cache_slot, keys[i] if keys else None,
                      values[i] if values else None)
        return self.norm(x)


class LlamaForCausalLM(GenerationMixin, fw.nn.Module):
    """A LLaMA causal LM: ``model`` (:class:`LlamaModel`) and ``lm_head`` (tied to
    ``model.embed_tokens`` when ``config.tie_word_embeddings``); ``generate(...)`` comes from
    :class:`fw.generation.GenerationMixin`.

    ``compiled_decode``: run one-token steps with a cache through one plan of
    :func:`fw.compile` (see the module docstring); False runs them eagerly.
    """

    def __init__(self, config: LlamaConfig, compiled_decode: bool = True):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = fw.nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.compiled_decode = compiled_decode
        self.decode_step = fw.compile(self._decode_step)

    def new_cache(self, batch_size: int, max_length: int) -> KVCache:
        """A preallocated key/value cache for ``batch_size`` sequences of at least
        ``max_length`` positions (prompt and new tokens). Its ``max_length`` is rounded up to a
        multiple of :data:`CACHE_BUCKET` (at most ``config.max_position_embeddings``), so
        generations of nearby lengths share one compiled decode plan.

        Raises:
            ShapeError: ``max_length`` exceeds ``config.max_position_embeddings``.
        """
        c = self.config
        if max_length > c.max_position_embeddings:
            raise ShapeError(f"a cache of {max_length} positions is longer than the "
                             f"{c.max_position_embeddings} this model was trained on",
                             hint="generate fewer tokens or shorten the prompt")
        capacity = min(-(-max_length // CACHE_BUCKET) * CACHE_BUCKET, c.max_position_embeddings)
        return KVCache(c.num_hidden_layers, batch_size, c.num_key_value_heads, capacity,
                       c.head_dim, self.lm_head.weight.dtype)

    def forward(self, input_ids, cache: KVCache | None = None, attention_mask=None,
                position_ids=None):
        """Logits (B, T, vocab) for ``input_ids`` (B, T) int64.

        Without ``cache``: a causal forward over the whole sequence. With it: the tokens
        continue the ``cache.length`` positions already in the cache; their keys and values
        are written into it and ``cache.length`` grows by T. ``attention_mask`` (B,
        cache.length + T), 1 for real tokens and 0 for (left) padding; ``position_ids`` (B, T),
        by default ``cache.length + arange(T)`` (Hugging Face's convention).

        Raises:
            ShapeError: the tokens do not fit in the cache, or the mask or positions have the
                wrong shape.
        """
        b, t = input_ids.shape
        past = cache.length if cache is not None else 0
        if cache is not None and past + t > cache.max_length:
            raise ShapeError(f"{t} new tokens do not fit a cache holding {past} of "
                             f"{cache.max_length} positions", op="LlamaForCausalLM",
                             hint="make the cache with new_cache(batch, a larger max_length)")
        if attention_mask is not None and tuple(attention_mask.shape) != (b, past + t):
            raise ShapeError(f"attention_mask has shape {tuple(attention_mask.shape)}, not "
                             f"{(b, past + t)} (cache length + new tokens)",
                             op="LlamaForCausalLM", hint="cover the past and the new tokens")
        if position_ids is None:
            position_ids = fw.arange(past, past + t).unsqueeze(0).expand(b, t)
        elif tuple(position_ids.shape) != (b, t):
            raise ShapeError(f"position_ids has shape {tuple(position_ids.shape)}, not {(b, t)}",
                             op="LlamaForCausalLM", hint="one position per input token")
        slots = fw.arange(past, past + t)
        dtype = self.lm_head.weight.dtype
        if cache is None:
            bias = attention_bias(attention_mask, slots, t, dtype)
            return self.lm_head(self.model(input_ids, position_ids, bias))
        if t == 1 and self.compiled_decode:
            logits = self.decode_step(input_ids, position_ids, slots,
                                      decode_mask(cache, attention_mask), *cache.keys,
                                      *cache.values)
        else:
            bias = attention_bias(attention_mask, slots, past + t, dtype)
            logits = self.lm_head(self.model(input_ids, position_ids, bias, slots, cache.keys,
                                             cache.values))
        cache.length = past + t
        return logits

    def _decode_step(self, input_ids, position_ids, slots, mask, *kv):
        """One step attending over the whole preallocated cache (the mask, the slot and the
        positions are data, so every step traces to the same plan)."""
        n = len(kv) // 2
        bias = attention_bias(mask, slots, mask.shape[1], self.lm_head.weight.dtype)
        return self.lm_head(self.model(input_ids, position_ids, bias, slots, kv[:n], kv[n:]))


def softmax_rows(x):
    """Softmax over the last dimension, written as the elementwise ops and row reductions it
    is: a compiled plan fuses them, and rows of a few hundred keys do not go to a threaded
    library kernel whose start-up costs more than the row."""
    e = fw.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def attention_bias(attention_mask, slots, span: int, dtype=fw.float32):
    """The additive attention bias (B, 1, 1, T, span) of ``dtype``: 0 where query t (at cache
    slot ``slots[t]``) may see key slot s (s <= slots[t] and the mask marks s real), the lowest
    finite value elsewhere (so a fully padded row stays finite, as in Hugging Face)."""
    causal = fw.arange(span).unsqueeze(0) <= slots.unsqueeze(1)  # (T, span)
    if attention_mask is None:
        allowed = causal.unsqueeze(0)
    else:
        allowed = causal.unsqueeze(0) & (attention_mask > 0).unsqueeze(1)
    lowest = float(fw.finfo(dtype).min)
    return fw.where(allowed, 0.0, lowest).to(dtype).unsqueeze(1).unsqueeze(1)
