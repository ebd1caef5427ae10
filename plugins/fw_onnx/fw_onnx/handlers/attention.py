"""ONNX's Attention (opset 23+): multi-head attention over 3-d (heads packed in the hidden
axis) or 4-d inputs, with a key/value cache, grouped-query heads, boolean or additive masks,
causal and sliding-window masks aligned to the cache's end, soft-capping and the optional
QK output; a query row that may attend to no key gives 0."""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .node import fw_dtype, host


def _heads(t, heads: int):
    """(B, S, heads * d) -> (B, heads, S, d)."""
    b, s, hidden = t.shape
    return t.reshape(b, s, heads, hidden // heads).permute(0, 2, 1, 3)


def _allowed(q_len: int, kv_len: int, offset, left: int, right: int, causal: bool):
    """Where query i may attend key j (NumPy, a per-batch offset broadcast over rows)."""
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    offset = np.asarray(offset).reshape(-1, 1, 1) if np.ndim(offset) else int(offset)
    diff = i + offset - j
    allowed = np.ones(np.broadcast_shapes(np.shape(diff)), bool)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    return allowed


def attention(node, q, k, v, mask=None, past_key=None, past_value=None, nonpad=None):
    three_d = q.ndim == 3
    if three_d:
        q = _heads(q, node.get("q_num_heads"))
        k, v = (_heads(t, node.get("kv_num_heads")) for t in (k, v))
    dtype = q.dtype
    scale = node.get("scale")
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    root = fw.tensor(np.array(np.sqrt(scale)), dtype=dtype)
    if past_key is not None:
        k, v = fw.cat([past_key, k], dim=2), fw.cat([past_value, v], dim=2)
    present_key, present_value = k, v
    q_len, kv_len = q.shape[2], k.shape[2]
    ninf = fw.tensor(-np.inf, dtype=dtype)
    zero = fw.tensor(0.0, dtype=dtype)
    bias = fw.zeros(q_len, kv_len, dtype=dtype)
    if mask is not None:
        if mask.shape[-1] < kv_len:
            fill = False if mask.dtype == fw.bool else -np.inf
            mask = fw.nn.functional.pad(mask.to(fw.float64) if mask.dtype == fw.bool else mask,
                                        (0, kv_len - mask.shape[-1]),
                                        value=0.0 if fill is False else fill)
            mask = mask.to(fw.bool) if fill is False else mask
        bias = bias + (fw.where(mask, zero, ninf) if mask.dtype == fw.bool else mask)
    left, right = node.get("left_window_size", -1), node.get("right_window_size", -1)
    causal = bool(node.get("is_causal", 0))
    if causal or left >= 0 or right >= 0:
        offset = past_key.shape[2] if past_key is not None else \
            host(nonpad).reshape(-1) - q_len if nonpad is not None else 0
        allowed = _allowed(q_len, kv_len, offset, left, right, causal)
        if allowed.ndim == 3:
            allowed = allowed.reshape(allowed.shape[0], 1, q_len, kv_len)
        bias = bias + fw.where(fw.tensor(allowed), zero, ninf)
    if nonpad is not None:
        keep = np.arange(kv_len) < host(nonpad).reshape(-1, 1)
        bias = bias + fw.where(fw.tensor(keep.reshape(-1, 1, 1, kv_len)), zero, ninf)
    heads_q, heads_k = q.shape[1], k.shape[1]
    if heads_q != heads_k and heads_q % heads_k == 0:
        k = fw.repeat_interleave(k, heads_q // heads_k, dim=1)
        v = fw.repeat_interleave(v, heads_q // heads_k, dim=1)
    scores = (q * root) @ (k * root).transpose(-1, -2)
    softcap = node.get("softcap", 0.0)
    if softcap:
        scores = fw.tanh(scores / softcap) * softcap
    capped = scores
    scores = scores + bias
    precision = node.get("softmax_precision")
    work = scores.to(fw_dtype(precision)) if precision else scores
    dead = fw.isneginf(bias.amax(dim=-1, keepdim=True)) if bias.ndim else None
    safe = fw.where(dead, fw.zeros_like(work), work) if dead is not None else work
    weights = fw.softmax(safe, dim=-1)
    weights = fw.where(dead, fw.zeros_like(weights), weights).to(dtype)
    mode = node.get("qk_matmul_output_mode", 0)
    qk = {0: capped if not softcap else (q * root) @ (k * root).transpose(-1, -2),
          1: capped, 2: scores, 3: weights}[mode]
    out = weights @ v
    if three_d:
        out = out.permute(0, 2, 1, 3)
        out = out.reshape(out.shape[0], out.shape[1], -1)
    return out, present_key, present_value, qk


HANDLERS = {"Attention": attention}
