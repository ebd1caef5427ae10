"""nn kernels: softmax family, normalisations, dropout and embedding, each one fused pass.

Half-precision inputs are computed in float32 and rounded once at the end (as PyTorch's CPU
kernels accumulate), so a float16 softmax sums to 1 within float16's resolution.
"""

from __future__ import annotations

from math import prod


def kernels(xp, special) -> dict:
    def widen(x):
        return x.astype(xp.float32) if x.dtype == xp.float16 else x

    def expect(t, shape):
        if t is not None and t.shape != shape:
            raise ValueError(f"parameter of shape {t.shape}, expected {shape}")

    def fresh(x):
        """A float copy of x that a kernel may overwrite (float32 for half inputs)."""
        return x.astype(xp.float32 if x.dtype == xp.float16 else x.dtype)

    def softmax_(e, dim, safe=False):
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

    def softmax_family(x, dim, safe=False, log=False):
        if x.ndim == 0:
            return xp.zeros_like(x) if log else xp.ones_like(x)
        if x.size == 0:
            return xp.empty_like(x)
        e = fresh(x)
        if log:
            e -= e.max(axis=dim, keepdims=True)
            e -= xp.log(xp.exp(e).sum(axis=dim, keepdims=True))
        else:
            softmax_(e, dim, safe)
        return e.astype(x.dtype, copy=False)

    def standardize_rows(rows, eps, center=True):
        """Each row of a 2-d array scaled to unit mean square (after centering), as a new array."""
        count = rows.shape[1]
        inv_count = 1.0 / count if count else xp.nan
        out = rows - rows.sum(axis=1, keepdims=True) * inv_count if center else rows.copy()
        mean_square = xp.einsum("ij,ij->i", out, out) * inv_count
        out *= (1 / xp.sqrt(mean_square + eps))[:, None]
        return out

    def as_rows(x, k):
        """x (widened) as a 2-d (samples, features) array over its last k dimensions."""
        return widen(x).reshape(prod(x.shape[:x.ndim - k]), prod(x.shape[x.ndim - k:]))

    def affine(out, weight, bias, shape, dtype):
        if weight is not None:
            out *= weight.reshape(shape)
        if bias is not None:
            out += bias.reshape(shape)
        return out.astype(dtype, copy=False)

    def split(tensors, flags):
        it = iter(tensors)
        return [next(it) if present else None for present in flags]

    def batch_norm(x, *tensors, training, momentum, eps, has_running, has_weight, has_bias):
        running_mean, running_var, weight, bias = split(
            tensors, (has_running, has_running, has_weight, has_bias))
        batch, channels = x.shape[:2]
        for t in (running_mean, running_var, weight, bias):
            expect(t, (channels,))
        a = widen(x).reshape(batch, channels, prod(x.shape[2:]))  # (N, C, positions)
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

    def layer_norm(x, *tensors, normalized_shape, eps, has_weight, has_bias):
        weight, bias = split(tensors, (has_weight, has_bias))
        expect(weight, normalized_shape)
        expect(bias, normalized_shape)
        k = len(normalized_shape)
        if x.shape[x.ndim - k:] != normalized_shape:
            raise ValueError(f"normalized_shape {normalized_shape} does not match {x.shape}")
        out = standardize_rows(as_rows(x, k), eps)
        return affine(out, weight, bias, (-1,), x.dtype).reshape(x.shape)

    def group_norm(x, *tensors, num_groups, eps, has_weight, has_bias):
        weight, bias = split(tensors, (has_weight, has_bias))
        channels = x.shape[1]
        expect(weight, (channels,))
        expect(bias, (channels,))
        grouped = widen(x).reshape(x.shape[0] * num_groups,
                                   channels // num_groups * prod(x.shape[2:]))
        out = standardize_rows(grouped, eps).reshape(x.shape)
        view = (1, channels) + (1,) * (x.ndim - 2)
        return affine(out, weight, bias, view, x.dtype)

    def rms_norm(x, *tensors, normalized_shape, eps, has_weight):
        weight = tensors[0] if has_weight else None
        expect(weight, normalized_shape)
        k = len(normalized_shape)
        if x.shape[x.ndim - k:] != normalized_shape:
            raise ValueError(f"normalized_shape {normalized_shape} does not match {x.shape}")
        out = standardize_rows(as_rows(x, k), eps, center=False)
        return affine(out, weight, None, (-1,), x.dtype).reshape(x.shape)

    def dropout(x, mask, p):
        if mask.shape != x.shape:
            raise ValueError(f"mask of shape {mask.shape} for an input of shape {x.shape}")
        out = x * mask
        out *= 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
        return out

    def embedding(indices, weight, padding_idx):
        return xp.take(weight, indices, axis=0)

    def embedding_backward(g, indices, num_weights, padding_idx):
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

    def scaled_dot_product_attention(q, k, v, *extra, scale, is_causal, dropout_p, has_mask):
        mask = extra[0] if has_mask else None
        keep = extra[-1] if dropout_p > 0 else None
        scores = (widen(q) * scale) @ xp.swapaxes(widen(k), -1, -2)  # a fresh array
        if is_causal:
            mask = xp.tri(q.shape[-2], k.shape[-2], dtype=bool)
        if mask is not None and mask.dtype == xp.bool_:
            xp.copyto(scores, -xp.inf, where=~mask)
        elif mask is not None:
            scores += mask.astype(scores.dtype, copy=False)
        weights = softmax_(scores, -1, safe=mask is not None) if scores.size else scores
        if keep is not None:
            weights = dropout(weights, keep, dropout_p)
        return (weights @ widen(v)).astype(q.dtype, copy=False)

    return {
        "softmax": softmax_family,
        "safe_softmax": lambda x, dim: softmax_family(x, dim, safe=True),
        "log_softmax": lambda x, dim: softmax_family(x, dim, log=True),
        "batch_norm": batch_norm, "layer_norm": layer_norm, "group_norm": group_norm,
        "rms_norm": rms_norm, "dropout": dropout, "embedding": embedding,
        "embedding_backward": embedding_backward,
        "scaled_dot_product_attention": scaled_dot_product_attention,
    }
