"""MultiheadAttention, with PyTorch's arguments, masks and parameter layout.

Parameters are named and shaped as in ``torch.nn.MultiheadAttention`` (``in_proj_weight``
(3E, E) or ``q/k/v_proj_weight``, ``in_proj_bias``, ``out_proj.weight/bias``, ``bias_k``,
``bias_v``), so a PyTorch state dict loads unchanged.
"""

from __future__ import annotations

__all__ = ["MultiheadAttention"]

import math

from ... import dtypes as _dt
from ..._state import state
from ...errors import DTypeError, ShapeError
from ...ops.attention import scaled_dot_product_attention
from ...ops.creation import empty, full, zeros
from ...ops.dispatch import check_tensors
from ...ops.elementwise import where
from ...ops.linalg import linear, matmul
from ...ops.meta import argument_error, located
from ...ops.nn import dropout, softmax
from ...ops.rearrange import pad, triu
from ...ops.reduction import mean
from ...ops.shape import cat, expand, permute, reshape, squeeze, transpose, unsqueeze
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._check import check_range, check_size
from .linear import Linear

_LAYER = "MultiheadAttention"


def _fail(message: str, hint: str) -> ShapeError:
    return ShapeError(message, op=_LAYER, module=state.module_path or None, hint=hint)


def check_heads(layer: str, embed_dim, num_heads, dropout=0.0) -> None:
    """Refuse a width the heads do not divide (or a bad dropout), naming ``layer``."""
    shown = {"embed_dim": embed_dim, "num_heads": num_heads, "dropout": dropout}
    check_size(layer, "embed_dim", embed_dim, **shown)
    check_size(layer, "num_heads", num_heads, **shown)
    check_range(layer, "dropout", dropout, 0.0, 1.0, **shown)
    if embed_dim % num_heads:
        raise argument_error(layer, f"embed_dim={embed_dim} must be divisible by "
                             f"num_heads={num_heads}", "pick a number of heads that divides "
                             "the model size", error=ShapeError, **shown)


def _additive(mask, dtype, what: str):
    """A bool mask (True = may NOT attend, PyTorch's MultiheadAttention convention) or a float
    mask, as a float mask to add to the scores (-inf where attention is forbidden)."""
    if mask is None:
        return None
    kind = mask._data.dtype.kind
    if kind == "b":
        return where(mask, -math.inf, 0.0).to(dtype)
    if kind in _dt.FLOAT_KINDS:
        return mask.to(dtype)
    raise DTypeError(f"{what} must be bool or floating point, got {mask.dtype.name}",
                     op="MultiheadAttention", module=state.module_path or None,
                     hint="pass a bool mask (True = masked out) or an additive float mask")


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads: ``out_proj(concat_h softmax(q_h k_h^T / sqrt(d) +
    mask) v_h)``, with q, k, v linear projections of query, key and value.

    Args:
        embed_dim: E, the model size (query features and output size).
        num_heads: H; each head has E / H features.
        dropout: dropout on the attention weights (training only).
        bias: learn biases for the input and output projections.
        add_bias_kv: learn a key and a value appended to the sequence (bias_k, bias_v).
        add_zero_attn: append an all-zero key and value.
        kdim, vdim: feature sizes of key and value (default E).
        batch_first: inputs and output are (N, L, E) instead of (L, N, E).

    Forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False):
        query (L, N, E), key (S, N, kdim), value (S, N, vdim) (batch_first: N first; or
        unbatched without N). ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or
        (N * H, L, S) are bool (True = masked out) or float (added to the scores).
        ``is_causal`` masks future keys (with or without an attn_mask holding that mask).
        Returns (output (L, N, E), weights (N, L, S) averaged over heads, (N, H, L, S) if not
        ``average_attn_weights``, or None if not ``need_weights``).

    Raises:
        ShapeError: naming the module path, for inputs or masks of the wrong shape.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        check_heads(_LAYER, embed_dim, num_heads, dropout)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        kw = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    # -- forward ------------------------------------------------------------------------------
    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        check_tensors(_LAYER, query, key, value)
        batched = query.ndim == 3
        try:
            self._check_inputs(query, key, value, batched)
        except ShapeError as err:
            raise located(err, _LAYER, (query, key, value)) from None
        # heads are computed as (N, H, L, head_dim); unbatched inputs get N = 1
        seq_dim = 1 if batched and self.batch_first else 0
        n = query.shape[1 - seq_dim] if batched else 1
        length, source = query.shape[seq_dim], key.shape[seq_dim]
        if not batched and key_padding_mask is not None:
            key_padding_mask = unsqueeze(key_padding_mask, 0)
        kpm = _additive(key_padding_mask, query.dtype, "key_padding_mask")
        mask = _additive(attn_mask, query.dtype, "attn_mask")
        try:
            self._check_masks(kpm, mask, n, length, source)
        except ShapeError as err:
            raise located(err, _LAYER, (query, key, value), key_padding_mask=kpm,
                          attn_mask=mask) from None
        q, k, v = self._project(query, key, value, batched)  # each (N, H, len, head_dim)
        if mask is not None and mask.ndim == 3:
            mask = reshape(mask, (n, self.num_heads, length, source))
        use_causal_kernel = is_causal and kpm is None and not need_weights
        if is_causal and not use_causal_kernel and mask is None:  # -inf above the diagonal
            mask = triu(full((length, source), -math.inf, dtype=q.dtype, device=q.device), 1)
        if use_causal_kernel:
            mask = None  # as PyTorch: is_causal says attn_mask (if any) is the causal mask
        if kpm is not None:
            kpm = reshape(kpm, (n, 1, 1, source))
        k, v, mask, kpm = self._extend_keys(k, v, mask, kpm, n)
        if kpm is not None:
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0

        if need_weights:
            scores = matmul(q * (1.0 / math.sqrt(self.head_dim)), transpose(k, -2, -1))
            weights = softmax(scores if mask is None else scores + mask, -1)
            if p > 0.0:
                weights = dropout(weights, p, True)
            heads = matmul(weights, v)
        else:
            weights = None
            heads = scaled_dot_product_attention(q, k, v, mask, p, use_causal_kernel)
        out = self._merge_heads(heads, batched)
        if weights is not None:
            if average_attn_weights:
                weights = mean(weights, dim=1)
            if not batched:
                weights = squeeze(weights, 0)
        return out, weights

    def _check_inputs(self, query, key, value, batched: bool) -> None:
        ndim = 3 if batched else 2
        if query.ndim not in (2, 3):
            raise _fail(f"expected query of shape (L, N, E), (N, L, E) with batch_first, or "
                        f"(L, E) unbatched, got {tuple(query.shape)}",
                        "pass a 3-d batch or a 2-d unbatched sequence")
        if key.ndim != ndim or value.ndim != ndim:
            raise _fail(f"query is {query.ndim}-d but key is {key.ndim}-d and value "
                        f"{value.ndim}-d", "pass key and value batched like the query")
        for what, t, size in (("query", query, self.embed_dim), ("key", key, self.kdim),
                              ("value", value, self.vdim)):
            if t.shape[-1] != size:
                argument = "embed_dim" if what == "query" else what[0] + "dim"
                raise _fail(f"expected {what} with {size} features (last dimension), got shape "
                            f"{tuple(t.shape)}", f"project the {what} to {size} features, or "
                            f"build the layer with {argument}={t.shape[-1]}")
        if key.shape[:-1] != value.shape[:-1]:
            raise _fail(f"key {tuple(key.shape)} and value {tuple(value.shape)} differ in "
                        "sequence length or batch size", "pass one value per key")
        if batched:
            batch = 0 if self.batch_first else 1
            if query.shape[batch] != key.shape[batch]:
                raise _fail(f"query {tuple(query.shape)} and key {tuple(key.shape)} have "
                            f"different batch sizes (dimension {batch})",
                            "check batch_first: it is "
                            f"{self.batch_first}, so the batch is dimension {batch}")

    def _check_masks(self, kpm, mask, n: int, length: int, source: int) -> None:
        if kpm is not None and tuple(kpm.shape) != (n, source):
            raise _fail(f"expected key_padding_mask of shape (N, S) = {(n, source)}, got "
                        f"{tuple(kpm.shape)}", "one entry per batch element and key")
        if mask is not None:
            allowed = ((length, source), (n * self.num_heads, length, source))
            if tuple(mask.shape) not in allowed:
                raise _fail(f"expected attn_mask of shape (L, S) = {allowed[0]} or (N * heads, "
                            f"L, S) = {allowed[1]}, got {tuple(mask.shape)}",
                            "build the mask for these query and key lengths")

    def _heads(self, x, batched: bool):
        """(L, N, E) / (N, L, E) / (L, E) projections -> (N, H, L, head_dim)."""
        if not batched:
            x = unsqueeze(x, 0)
        x = reshape(x, (x.shape[0], x.shape[1], self.num_heads, self.head_dim))
        return permute(x, (1, 2, 0, 3) if batched and not self.batch_first else (0, 2, 1, 3))

    def _project(self, query, key, value, batched: bool):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            if query is key and key is value:  # self-attention: one matmul for q, k and v
                qkv = linear(query, w, b)
                return tuple(self._heads(qkv[..., i * e:(i + 1) * e], batched)
                             for i in range(3))
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return (self._heads(linear(query, wq, bq), batched),
                self._heads(linear(key, wk, bk), batched),
                self._heads(linear(value, wv, bv), batched))

    def _extend_keys(self, k, v, mask, kpm, n: int):
        """Append bias_k/bias_v and a zero key/value (PyTorch's order), padding the masks."""
        h, d = self.num_heads, self.head_dim
        if self.bias_k is not None:
            k = cat([k, expand(reshape(self.bias_k, (1, h, 1, d)), (n, h, 1, d))], dim=2)
            v = cat([v, expand(reshape(self.bias_v, (1, h, 1, d)), (n, h, 1, d))], dim=2)
            mask = None if mask is None else pad(mask, (0, 1))
            kpm = None if kpm is None else pad(kpm, (0, 1))
        if self.add_zero_attn:
            zero = zeros(n, h, 1, d, dtype=k.dtype, device=k.device)
            k = cat([k, zero], dim=2)
            v = cat([v, zero], dim=2)
            mask = None if mask is None else pad(mask, (0, 1))
            kpm = None if kpm is None else pad(kpm, (0, 1))
        return k, v, mask, kpm

    def _merge_heads(self, heads, batched: bool):
        """(N, H, L, head_dim) -> out_proj over (L, N, E) / (N, L, E) / (L, E)."""
        n, h, length, d = heads.shape
        if batched and not self.batch_first:
            merged = reshape(permute(heads, (2, 0, 1, 3)), (length, n, h * d))
        else:
            merged = reshape(permute(heads, (0, 2, 1, 3)), (n, length, h * d))
        out = self.out_proj(merged)
        return out if batched else squeeze(out, 0)

    def extra_repr(self) -> str:
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.batch_first:
            s += ", batch_first=True"
        return s
