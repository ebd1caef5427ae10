"""nn kernels: softmax family, normalisations, dropout and embedding, each one fused pass.

Half-precision inputs are computed in float32 and rounded once at the end (as PyTorch's CPU
kernels accumulate), so a float16 or bfloat16 softmax sums to 1 within its resolution.
"""

from __future__ import annotations

from functools import partial
from math import prod

from ._half import compute_dtype
from ._half import widen as _widen


# -- shared pieces --------------------------------------------------------------------------------
def _expect(t, shape):
    """A ValueError unless the optional parameter ``t`` is absent or of ``shape``."""
    if t is not None and t.shape != shape:
        raise ValueError(f"parameter of shape {t.shape}, expected {shape}")


def _fresh(xp, x):
    """A float copy of x that a kernel may overwrite (float32 for half inputs)."""
    return x.astype(compute_dtype(xp, x.dtype))


def _softmax_(xp, e, dim, safe=False):
    """softmax of ``e`` along ``dim``, in place; ``safe``: all -inf slices give 0."""
    top = e.max(axis=dim, keepdims=True)
    if safe:
        top[top == -xp.inf] = 0  # then exp(-inf - 0) = 0 and the slice sums to 0, not NaN
    e -= top
    xp.exp(e, out=e)
    total = e.sum(axis=dim, keepdims=True)
    if safe:
        total[total == 0] = 1
    e *= 1 / total
    return e


def _standardize_rows(xp, rows, eps, center=True):
    """Each row of a 2-d array scaled to unit mean square (after centering), as a new array."""
    count = rows.shape[1]
    inv_count = 1.0 / count if count else xp.nan
    out = rows - rows.sum(axis=1, keepdims=True) * inv_count if center else rows.copy()
    mean_square = xp.einsum("ij,ij->i", out, out) * inv_count
    out *= (1 / xp.sqrt(mean_square + eps))[:, None]
    return out


def _as_rows(xp, x, k):
    """x (widened) as a 2-d (samples, features) array over its last k dimensions."""
    return _widen(xp, x).reshape(prod(x.shape[:x.ndim - k]), prod(x.shape[x.ndim - k:]))


def _affine(out, weight, bias, shape, dtype):
    """``out * weight + bias`` in place (each optional, viewed as ``shape``), as ``dtype``."""
    if weight is not None:
        out *= weight.reshape(shape)
    if bias is not None:
        out += bias.reshape(shape)
    return out.astype(dtype, copy=False)


def _split(tensors, flags):
    """The optional tensors, passed positionally as only those present: one per flag in
    ``flags``, None where the flag is off."""
    it = iter(tensors)
    return [next(it) if present else None for present in flags]


# -- softmax family -------------------------------------------------------------------------------
def softmax(xp, x, dim, safe=False, log=False):
    """softmax of ``x`` along ``dim`` in x's dtype (``log``: log_softmax; ``safe``: slices all
    -inf give 0, not NaN). A 0-d ``x`` is one slice of one element."""
    if x.ndim == 0:
        return xp.zeros_like(x) if log else xp.ones_like(x)
    if x.size == 0:
        return xp.empty_like(x)
    e = _fresh(xp, x)
    if log:
        e -= e.max(axis=dim, keepdims=True)
        e -= xp.log(xp.exp(e).sum(axis=dim, keepdims=True))
    else:
        _softmax_(xp, e, dim, safe)
    return e.astype(x.dtype, copy=False)


def safe_softmax(xp, x, dim):
    """softmax of ``x`` along ``dim``, where a slice all -inf (fully masked) gives 0s."""
    return softmax(xp, x, dim, safe=True)


def log_softmax(xp, x, dim):
    """log(softmax(x)) along ``dim``, as ``x - max - log(sum(exp(x - max)))``."""
    return softmax(xp, x, dim, log=True)


# -- normalisations -------------------------------------------------------------------------------
def batch_norm(xp, x, *tensors, training, momentum, eps, has_running, has_weight, has_bias):
    """Batch norm of ``x`` (N, C, *) per channel. ``tensors``: those present of running_mean,
    running_var, weight and bias (C,), in that order. Training normalises by the batch's
    statistics and, with ``has_running``, updates the running ones in place (the variance
    unbiased); evaluation normalises by the running ones."""
    running_mean, running_var, weight, bias = _split(
        tensors, (has_running, has_running, has_weight, has_bias))
    batch, channels = x.shape[:2]
    for t in (running_mean, running_var, weight, bias):
        _expect(t, (channels,))
    a = _widen(xp, x).reshape(batch, channels, prod(x.shape[2:]))  # (N, C, positions)
    if training:
        count = a.size // channels if channels else 0
        inv_count = 1.0 / count if count else xp.nan
        mean = a.sum(axis=(0, 2)) * inv_count
        out = a - mean[:, None]
        var = xp.einsum("ncs,ncs->c", out, out) * inv_count
        if has_running:
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean
            running_var[...] = (1 - momentum) * running_var + \
                momentum * var * (count / (count - 1))
    else:
        out = a - running_mean[:, None]
        var = running_var
    scale = 1 / xp.sqrt(var + eps)
    out *= (scale if weight is None else scale * weight)[:, None]
    if bias is not None:
        out += bias[:, None]
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def layer_norm(xp, x, *tensors, normalized_shape, eps, has_weight, has_bias):
    """``x`` standardised over its trailing ``normalized_shape`` dimensions, then scaled and
    shifted by the weight and bias present in ``tensors`` (each of ``normalized_shape``)."""
    weight, bias = _split(tensors, (has_weight, has_bias))
    _expect(weight, normalized_shape)
    _expect(bias, normalized_shape)
    k = len(normalized_shape)
    if x.shape[x.ndim - k:] != normalized_shape:
        raise ValueError(f"normalized_shape {normalized_shape} does not match {x.shape}")
    out = _standardize_rows(xp, _as_rows(xp, x, k), eps)
    return _affine(out, weight, bias, (-1,), x.dtype).reshape(x.shape)


def group_norm(xp, x, *tensors, num_groups, eps, has_weight, has_bias):
    """``x`` (N, C, *) standardised over each of ``num_groups`` groups of channels per sample,
    then scaled and shifted per channel by the weight and bias present in ``tensors`` (C,)."""
    weight, bias = _split(tensors, (has_weight, has_bias))
    channels = x.shape[1]
    _expect(weight, (channels,))
    _expect(bias, (channels,))
    grouped = _widen(xp, x).reshape(x.shape[0] * num_groups,
                                    channels // num_groups * prod(x.shape[2:]))
    out = _standardize_rows(xp, grouped, eps).reshape(x.shape)
    view = (1, channels) + (1,) * (x.ndim - 2)
    return _affine(out, weight, bias, view, x.dtype)


def rms_norm(xp, x, *tensors, normalized_shape, eps, has_weight):
    """``x`` divided by its root mean square over the trailing ``normalized_shape`` dimensions
    (not centred), then scaled by the weight in ``tensors`` if ``has_weight``."""
    weight = tensors[0] if has_weight else None
    _expect(weight, normalized_shape)
    k = len(normalized_shape)
    if x.shape[x.ndim - k:] != normalized_shape:
        raise ValueError(f"normalized_shape {normalized_shape} does not match {x.shape}")
    out = _standardize_rows(xp, _as_rows(xp, x, k), eps, center=False)
    return _affine(out, weight, None, (-1,), x.dtype).reshape(x.shape)


# -- dropout, embedding, attention ----------------------------------------------------------------
def dropout(x, mask, p):
    """``x * mask / (1 - p)`` (0 for ``p >= 1``): ``mask`` is the drawn keep-mask, of x's
    shape, so the kernel itself is deterministic."""
    if mask.shape != x.shape:
        raise ValueError(f"mask of shape {mask.shape} for an input of shape {x.shape}")
    out = x * mask
    out *= 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return out


def embedding(xp, indices, weight, padding_idx):
    """The rows of ``weight`` at ``indices``: (*indices.shape, D). ``padding_idx`` only matters
    to the backward."""
    return xp.take(weight, indices, axis=0)


def embedding_backward(xp, g, indices, num_weights, padding_idx):
    """The weight gradient (num_weights, D): each row of ``g`` (*indices.shape, D) summed into
    the row its index picked, the ``padding_idx`` row left 0."""
    if g.shape[:-1] != indices.shape:
        raise ValueError(f"gradient of shape {g.shape} for indices of shape {indices.shape}")
    dim = g.shape[-1]
    out = xp.zeros(num_weights * dim, dtype=g.dtype)
    # one flat scatter-add over elements: ufunc.at's fast 1-d path, ~3x its 2-d row path
    flat = (indices.reshape(-1, 1) * dim + xp.arange(dim)).reshape(-1)
    xp.add.at(out, flat, g.reshape(-1))
    out = out.reshape(num_weights, dim)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def scaled_dot_product_attention(xp, q, k, v, *extra, scale, is_causal, dropout_p, has_mask):
    """softmax(q k^T * scale + mask) v over the last two dimensions. ``extra``: the mask (if
    ``has_mask``; boolean: where True attends, else added to the scores) and the dropout
    keep-mask (if ``dropout_p > 0``). ``is_causal`` replaces the mask by a lower triangle;
    with a mask, query rows that attend nowhere give 0, not NaN."""
    mask = extra[0] if has_mask else None
    keep = extra[-1] if dropout_p > 0 else None
    scores = (_widen(xp, q) * scale) @ xp.swapaxes(_widen(xp, k), -1, -2)  # a fresh array
    if is_causal:
        mask = xp.tri(q.shape[-2], k.shape[-2], dtype=bool)
    if mask is not None and mask.dtype == xp.bool_:
        xp.copyto(scores, -xp.inf, where=~mask)
    elif mask is not None:
        scores += mask.astype(scores.dtype, copy=False)
    weights = _softmax_(xp, scores, -1, safe=mask is not None) if scores.size else scores
    if keep is not None:
        weights = dropout(weights, keep, dropout_p)
    return (weights @ _widen(xp, v)).astype(q.dtype, copy=False)


def kernels(xp, special) -> dict:
    """The nn kernels for namespace ``xp`` (they need nothing of ``special``)."""
    return {
        "softmax": partial(softmax, xp), "safe_softmax": partial(safe_softmax, xp),
        "log_softmax": partial(log_softmax, xp),
        "batch_norm": partial(batch_norm, xp), "layer_norm": partial(layer_norm, xp),
        "group_norm": partial(group_norm, xp), "rms_norm": partial(rms_norm, xp),
        "dropout": dropout, "embedding": partial(embedding, xp),
        "embedding_backward": partial(embedding_backward, xp),
        "scaled_dot_product_attention": partial(scaled_dot_product_attention, xp),
    }
