"""A LLaMA causal LM written directly in torch, the reference fw_zoo's LlamaForCausalLM is
checked against: the same dequantized weights, computed the way Hugging Face's modeling_llama
does (rotate_half RoPE, repeat_kv for grouped-query attention, float32 RMSNorm, SwiGLU), with a
key/value cache that grows by concatenation. Test-only: fw never imports torch.
"""

from __future__ import annotations

import torch


class TorchLlama:
    """``logits(ids, cache)``: ids (B, T) int64 tensor -> (B, T, vocab); ``cache`` (a list, or
    None) collects each layer's keys and values and grows by T. Every position attends to the
    real ones before it; ``mask`` (B, past + T) marks real tokens (1) and padding (0)."""

    def __init__(self, weights: dict, config):
        self.w = {k: torch.from_numpy(v) for k, v in weights.items()}
        self.c = config
        d = config.head_dim
        self.inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64)
                                                     .float() / d))

    def _norm(self, x, weight):
        var = x.pow(2).mean(-1, keepdim=True)
        return weight * (x * torch.rsqrt(var + self.c.rms_norm_eps))

    @staticmethod
    def _rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    @torch.no_grad()
    def logits(self, ids, cache: list | None = None, mask=None, positions=None):
        c, w = self.c, self.w
        b, t = ids.shape
        past = cache[0][0].shape[2] if cache else 0
        if positions is None:
            positions = torch.arange(past, past + t).expand(b, t)
        freqs = positions.float()[..., None] * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        allowed = torch.arange(past + t)[None, :] <= torch.arange(past, past + t)[:, None]
        allowed = allowed[None].expand(b, t, past + t)
        if mask is not None:
            allowed = allowed & (mask[:, None, :] > 0)
        bias = torch.zeros(b, 1, t, past + t).masked_fill(~allowed[:, None],
                                                          torch.finfo(torch.float32).min)
        x = w["model.embed_tokens.weight"][ids]
        hd, nh, nkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
        for i in range(c.num_hidden_layers):
            p = f"model.layers.{i}."
            h = self._norm(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(b, t, nh, hd).transpose(1, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
            q = q * cos + self._rotate_half(q) * sin
            k = k * cos + self._rotate_half(k) * sin
            if cache is not None:
                if len(cache) <= i:
                    cache.append((k, v))
                else:
                    k = torch.cat((cache[i][0], k), dim=2)
                    v = torch.cat((cache[i][1], v), dim=2)
                    cache[i] = (k, v)
            k = k.repeat_interleave(nh // nkv, dim=1)
            v = v.repeat_interleave(nh // nkv, dim=1)
            scores = q @ k.transpose(-1, -2) / hd ** 0.5 + bias
            attn = torch.softmax(scores, dim=-1) @ v
            x = x + attn.transpose(1, 2).reshape(b, t, nh * hd) @ w[p + "self_attn.o_proj.weight"].T
            h = self._norm(x, w[p + "post_attention_layernorm.weight"])
            gate = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        x = self._norm(x, w["model.norm.weight"])
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
        return x @ head.T

    def greedy(self, ids: list[int], new_tokens: int) -> list[int]:
        """``new_tokens`` greedy continuations of ``ids`` (one sequence), through the cache."""
        cache: list = []
        logits = self.logits(torch.tensor([ids]), cache)
        out = []
        for _ in range(new_tokens):
            nxt = int(logits[0, -1].argmax())
            out.append(nxt)
            logits = self.logits(torch.tensor([[nxt]]), cache)
        return out
