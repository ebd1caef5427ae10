"""Scaled dot-product attention: one op with a fused forward kernel and a VJP in fw ops.

PyTorch's semantics: a bool mask marks where to attend, a float mask is added to the scores,
``is_causal`` masks the future; a query row with no allowed key gives 0 (and zero gradient)
instead of NaN.
"""

from __future__ import annotations

__all__ = ["scaled_dot_product_attention"]

import functools
import math

import numpy as np

from .. import dtypes as _dt
from ..errors import (
    DTypeError,
    FwError,
    ShapeError,
    UnsupportedError,
)
from ..records import Structure, TensorSpec
from . import anchors, linalg, shape
from .broadcast import sum_to
from .creation import as_tensor
from .dispatch import apply
from .elementwise import where
from .meta import argument_error, broadcast_shapes, located, normalize_dim, require_floating
from .nn import DROPOUT, _keep_mask, _softmax_grad, meta_error, safe_softmax, softmax
from .registry import define_op


# -- attention ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _causal_mask(query_len: int, key_len: int, device):
    """The (L, S) bool mask letting query i see keys 0..i (cached: it only depends on sizes)."""
    return as_tensor(np.tri(query_len, key_len, dtype=bool), device=device)


def _attention_parts(q, k, v, extra, attrs):
    """(mask, keep): the optional inputs of scaled_dot_product_attention, by its attributes."""
    mask = extra[0] if attrs["has_mask"] else None
    keep = extra[-1] if attrs["dropout_p"] > 0 else None
    return mask, keep


def _attention_meta(q, k, v, *extra, scale, is_causal, dropout_p, has_mask):
    op = "scaled_dot_product_attention"
    for spec in (q, k, v):
        require_floating(spec, op)
    if q.dtype is not k.dtype or k.dtype is not v.dtype:
        raise DTypeError(f"q, k and v must share one dtype, got {q.dtype.name}, {k.dtype.name} "
                         f"and {v.dtype.name}", op=op, hint="convert them with .to(q.dtype)")
    if min(len(q.shape), len(k.shape), len(v.shape)) < 2 or q.shape[-1] != k.shape[-1] or \
            k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} do not "
                         "fit (..., L, E), (..., S, E), (..., S, Ev): q and k need the same "
                         "feature size E, k and v the same length S", op=op,
                         hint="check the head split (..., heads, L, E) of each projection")
    scores = broadcast_shapes(q.shape[:-2], k.shape[:-2], op=op) + (q.shape[-2], k.shape[-2])
    out = broadcast_shapes(scores[:-2], v.shape[:-2], op=op) + (q.shape[-2], v.shape[-1])
    mask, keep = _attention_parts(q, k, v, extra, {"has_mask": has_mask, "dropout_p": dropout_p})
    if mask is not None:
        if mask.dtype.category == _dt.INTEGER:
            raise DTypeError(f"attn_mask must be bool (True = may attend) or floating point "
                             f"(added to the scores), got {mask.dtype.name}", op=op,
                             hint="convert it with .bool() or .float()")
        try:
            fits = broadcast_shapes(tuple(mask.shape), scores) == scores
        except ShapeError:
            fits = False
        if not fits:
            raise ShapeError(f"attn_mask of shape {tuple(mask.shape)} does not broadcast to the "
                             f"scores' shape {scores} (..., L, S)", op=op,
                             hint="e.g. an (L, S) mask, or (N, 1, L, S) for per-sample masks")
    if keep is not None and tuple(keep.shape) != scores:
        raise ShapeError(f"dropout mask {keep} does not match the scores' shape {scores}", op=op,
                         hint="the dropout mask is drawn by scaled_dot_product_attention")
    return TensorSpec(out, q.dtype)


def _attention_vjp(ctx, g):
    q, k, v, *extra = ctx.inputs
    a = ctx.attrs
    mask, keep = _attention_parts(q, k, v, extra, a)
    scaled_q = q * a["scale"]
    scores = linalg.matmul(scaled_q, shape.transpose(k, -2, -1))
    if a["is_causal"]:
        mask = _causal_mask(q.shape[-2], k.shape[-2], q.device)
    if mask is None:
        weights = softmax(scores, -1)
    else:
        scores = where(mask, scores, -math.inf) if mask.dtype is _dt.bool_ else \
            scores + mask.to(scores.dtype)
        weights = safe_softmax(scores, -1)
    dropped = weights if keep is None else apply(DROPOUT, (weights, keep), {"p": a["dropout_p"]})
    grads = [None] * len(ctx.inputs)
    if ctx.next[2] is not None:
        grads[2] = sum_to(linalg.matmul(shape.transpose(dropped, -2, -1), g), v.shape)
    g_dropped = linalg.matmul(g, shape.transpose(v, -2, -1))
    g_weights = g_dropped if keep is None else apply(DROPOUT, (g_dropped, keep),
                                                     {"p": a["dropout_p"]})
    g_scores = _softmax_grad(weights, g_weights, -1)
    if ctx.next[0] is not None:
        grads[0] = sum_to(linalg.matmul(g_scores, k) * a["scale"], q.shape)
    if ctx.next[1] is not None:
        grads[1] = sum_to(linalg.matmul(shape.transpose(g_scores, -2, -1), scaled_q), k.shape)
    if a["has_mask"] and ctx.next[3] is not None:  # an additive float mask is differentiable
        grads[3] = sum_to(g_scores, mask.shape)
    return tuple(grads)


SCALED_DOT_PRODUCT_ATTENTION = define_op(
    "scaled_dot_product_attention", family="attention", builtin=True,
    doc="softmax(q k^T * scale + mask) v: each query's output is the average of the values, "
        "weighted by how well its key matches. Structure OPAQUE: two contractions around a row "
        "softmax; a device plugin replaces it whole (flash attention) rather than fusing parts.",
    signature="scaled_dot_product_attention(q: Tensor[..., L, E], k: Tensor[..., S, E], v: "
              "Tensor[..., S, Ev], attn_mask: Tensor[..., L, S] | None, keep: Tensor[bool] | "
              "None, scale: float, is_causal: bool, dropout_p: float) -> Tensor[..., L, Ev]",
    meta=_attention_meta, vjp=_attention_vjp, structure=Structure.OPAQUE,
    anchor=anchors.temperature("the scale is a softmax temperature: large q.k scores put all "
                               "the attention on one key and the gradients to the others "
                               "vanish (keep scale ~ 1/sqrt(E), normalise q and k)"),
    saves=("inputs",))


def _grouped_heads(kv, heads: int):
    """``kv`` with each of its heads (dimension -3) repeated to make ``heads``, as PyTorch's
    ``enable_gqa`` does (``repeat_interleave``): query heads ``i * r .. (i + 1) * r - 1`` share
    key/value head ``i``. Made of expand and reshape, so gradients sum over each group."""
    axis = normalize_dim(-3, kv._data.ndim, "scaled_dot_product_attention")
    n = kv.shape[axis]
    if n == heads:
        return kv
    if n == 0 or heads % n:
        raise ShapeError(
            f"with enable_gqa the number of heads in key and value must divide the number of "
            f"heads in query ({heads}), got {n}", op="scaled_dot_product_attention",
            hint="give key and value a number of heads (dimension -3) that divides the query's")
    lead, rest = tuple(kv.shape[:axis]), tuple(kv.shape[axis + 1:])
    spread = shape.expand(shape.unsqueeze(kv, axis + 1), *lead, n, heads // n, *rest)
    return shape.reshape(spread, *lead, heads, *rest)


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False):
    """softmax(q k^T * scale + mask) v, with PyTorch's semantics.

    Args:
        q: (..., L, E) queries; k: (..., S, E) keys; v: (..., S, Ev) values (batch dims
            broadcast).
        attn_mask: broadcastable to (..., L, S); bool (True = may attend) or float (added to
            the scores; -inf forbids; differentiable).
        dropout_p: dropout on the attention weights, applied whenever > 0 (as PyTorch); the
            mask comes from ``fw.random.default_generator``.
        is_causal: query i attends to keys 0..i (top-left aligned); excludes ``attn_mask``.
        scale: defaults to 1 / sqrt(E).
        enable_gqa: grouped-query attention: k and v may have fewer heads (dimension -3) than
            q, each shared by a group of query heads (their number must divide q's).

    A query with no allowed key gets all-zero weights (output 0 and zero gradient), not NaN,
    as PyTorch; rows with at least one allowed key are a normal softmax.

    Raises:
        ShapeError: q, k, v or the mask do not fit (with enable_gqa: k's or v's heads do not
            divide q's; an IndexError too for inputs under 3-d); UnsupportedError: mask with
            is_causal.
    """
    try:
        if is_causal and attn_mask is not None:
            raise UnsupportedError("an explicit attn_mask cannot be combined with is_causal=True",
                                   op="scaled_dot_product_attention",
                                   hint="fold the causal mask into attn_mask (logical_and with a "
                                   "lower-triangular bool mask) and pass is_causal=False")
        if not 0.0 <= dropout_p <= 1.0:
            raise argument_error("scaled_dot_product_attention", f"dropout_p must be in [0, 1], "
                                 f"got {dropout_p}",
                                 "pass the fraction of attention weights to drop",
                                 values=(q, k, v), dropout_p=dropout_p)
        if enable_gqa:
            heads = q.shape[normalize_dim(-3, q._data.ndim, "scaled_dot_product_attention")]
            k, v = _grouped_heads(k, heads), _grouped_heads(v, heads)
        if scale is None:
            features = q._data.shape[-1] if q._data.ndim else 0
            scale = 1.0 / math.sqrt(features) if features else 1.0
        inputs = (q, k, v) if attn_mask is None else (q, k, v, attn_mask)
        attrs = {"scale": float(scale), "is_causal": bool(is_causal), "dropout_p": float(dropout_p),
                 "has_mask": attn_mask is not None}
        dtype = q._data.dtype
        if not _dt.is_float(dtype) or k._data.dtype != dtype or v._data.dtype != dtype or min(
                q._data.ndim, k._data.ndim) < 2 or (attn_mask is not None and not (
                    attn_mask._data.dtype.kind == "b" or _dt.is_float(attn_mask._data.dtype))):
            raise meta_error(SCALED_DOT_PRODUCT_ATTENTION, inputs, attrs)
        if dropout_p > 0.0:
            scores = broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
            inputs = (*inputs, _keep_mask(scores, dropout_p, q._device))
        return apply(SCALED_DOT_PRODUCT_ATTENTION, inputs, attrs)
    except FwError as err:
        raise located(err, "scaled_dot_product_attention", (q, k, v), attn_mask=attn_mask,
                      dropout_p=dropout_p, is_causal=is_causal, scale=scale) from None
