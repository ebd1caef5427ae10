"""nn op cases: softmax family, normalisations, dropout, embedding, attention."""

import math

import numpy as np

from fw_core.testing.conformance import OpCase, arg, index, value

_HALF = ("float32", "float64", "float16")
_NEG_INF = -math.inf


# -- NumPy references -----------------------------------------------------------------------------
def _softmax(x, dim):
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - x.max(axis=dim, keepdims=True)) if x.size else x
    return (e / e.sum(axis=dim, keepdims=True)).astype(x.dtype) if x.size else x


def _log_softmax(x, dim):
    if x.ndim == 0:
        return np.zeros_like(x)
    if not x.size:
        return x
    shifted = x - x.max(axis=dim, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))).astype(x.dtype)


def _standardize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _batch_norm_train(x, w=None, b=None, eps=1e-5):
    view = (1, -1) + (1,) * (x.ndim - 2)
    out = _standardize(x.astype(np.float64), (0, *range(2, x.ndim)), eps)
    if w is not None:
        out = out * w.reshape(view) + b.reshape(view)
    return out.astype(x.dtype)


def _batch_norm_eval(x, mean, var, w, b, eps=1e-5):
    view = (1, -1) + (1,) * (x.ndim - 2)
    out = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps)
    return (out * w.reshape(view) + b.reshape(view)).astype(x.dtype)


def _layer_norm(x, k, w=None, b=None, eps=1e-5):
    out = _standardize(x.astype(np.float64), tuple(range(x.ndim - k, x.ndim)), eps)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out.astype(x.dtype)


def _group_norm(x, groups, w=None, b=None, eps=1e-5):
    grouped = x.astype(np.float64).reshape(x.shape[0], groups, -1)
    out = _standardize(grouped, (2,), eps).reshape(x.shape)
    if w is not None:
        view = (1, -1) + (1,) * (x.ndim - 2)
        out = out * w.reshape(view) + b.reshape(view)
    return out.astype(x.dtype)


def _rms_norm(x, k, w=None, eps=None):
    if eps is None:
        eps = np.finfo(np.float32 if x.dtype == np.float16 else x.dtype).eps
    a = x.astype(np.float64)
    out = a / np.sqrt((a * a).mean(axis=tuple(range(x.ndim - k, x.ndim)), keepdims=True) + eps)
    return (out if w is None else out * w).astype(x.dtype)


def _keep_mask(shape, p, seed=0):
    return np.asarray(np.random.Generator(np.random.PCG64(seed)).random(shape, np.float32) >= p)


def _dropout(x, p, seed=0):
    return (x * _keep_mask(x.shape, p, seed) / (1 - p)).astype(x.dtype)


def _embedding_backward(g, indices, num_weights, padding_idx=None):
    out = np.zeros((num_weights, g.shape[-1]), g.dtype)
    np.add.at(out, indices.reshape(-1), g.reshape(-1, g.shape[-1]))
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def _attention(q, k, v, mask=None, causal=False, scale=None, dropout_p=0.0):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q * scale) @ np.swapaxes(k, -1, -2)
    if causal:
        mask = np.tri(q.shape[-2], k.shape[-2], dtype=bool)
    if mask is not None and mask.dtype == bool:
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None:
        scores = scores + mask
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0, top)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0, 1, total)
    if dropout_p:
        weights = weights * _keep_mask(weights.shape, dropout_p) / (1 - dropout_p)
    return (weights @ v).astype(q.dtype)


# -- case builders --------------------------------------------------------------------------------
def _softmax_cases(op, reference):
    fw_call = lambda fw, x, _op=op, _d=-1: getattr(fw, _op)(x, _d)  # noqa: E731
    cases = [OpCase(op, "matrix_last", [arg(3, 4)], fw_call, lambda x: reference(x, -1),
                    torch=lambda torch, x, _op=op: getattr(torch, _op)(x, -1), dtypes=_HALF)]
    for name, shape, dim in (("matrix_dim0", (3, 4), 0), ("3d_dim1", (2, 3, 4), 1),
                             ("scalar", (), 0), ("empty_batch", (0, 3), 1),
                             ("empty_dim", (3, 0), 1), ("size1_dim", (3, 1), 1),
                             ("negative_dim", (2, 3, 4), -2)):
        cases.append(OpCase(
            op, name, [arg(*shape)], lambda fw, x, _op=op, _d=dim: getattr(fw, _op)(x, _d),
            lambda x, _d=dim: reference(x, _d),
            torch=lambda torch, x, _op=op, _d=dim: getattr(torch, _op)(x, _d)))
    cases.append(OpCase(op, "large_logits", [arg(2, 5, low=500, high=800)], fw_call,
                        lambda x: reference(x, -1),
                        torch=lambda torch, x, _op=op: getattr(torch, _op)(x, -1)))
    cases.append(OpCase(op, "dtype_arg", [arg(3, 4)],
                        lambda fw, x, _op=op: getattr(fw, _op)(x, 1, dtype=fw.float64),
                        lambda x: reference(x.astype(np.float64), 1),
                        torch=lambda torch, x, _op=op: getattr(torch, _op)(x, 1,
                                                                           dtype=torch.float64)))
    return cases


_ROW_MASK = np.array([[True, False, True, True], [False, False, False, False],
                      [True, True, True, True]])


def _masked(x, mask):
    return np.where(mask, x, -np.inf)


_SAFE_SOFTMAX = [
    OpCase("safe_softmax", "fully_masked_row", [arg(3, 4), value(_ROW_MASK)],
           lambda fw, x, m: fw.ops.nn.safe_softmax(fw.where(m, x, _NEG_INF), -1),
           lambda x, m: np.nan_to_num(_softmax(_masked(x, m), -1), nan=0.0),
           torch=lambda torch, x, m: torch._safe_softmax(x.masked_fill(~m, _NEG_INF), -1),
           dtypes=_HALF),
    OpCase("safe_softmax", "unmasked", [arg(2, 3, 4)],
           lambda fw, x: fw.ops.nn.safe_softmax(x, 1), lambda x: _softmax(x, 1),
           torch=lambda torch, x: torch._safe_softmax(x, 1)),
]

_BATCH_NORM = [
    OpCase("batch_norm", "train_affine_2d", [arg(4, 3), arg(3), arg(3)],
           lambda fw, x, w, b: fw.batch_norm(x, fw.zeros(3, dtype=x.dtype),
                                             fw.ones(3, dtype=x.dtype), w, b, training=True),
           _batch_norm_train,
           torch=lambda torch, x, w, b: torch.nn.functional.batch_norm(
               x, torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype), w, b,
               training=True), dtypes=_HALF),
    OpCase("batch_norm", "train_4d_no_affine", [arg(2, 3, 4, 5)],
           lambda fw, x: fw.batch_norm(x, training=True), _batch_norm_train,
           torch=lambda torch, x: torch.nn.functional.batch_norm(x, None, None, training=True)),
    OpCase("batch_norm", "train_3d_eps", [arg(3, 2, 4), arg(2), arg(2)],
           lambda fw, x, w, b: fw.batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
           lambda x, w, b: _batch_norm_train(x, w, b, 1e-3),
           torch=lambda torch, x, w, b: torch.nn.functional.batch_norm(
               x, None, None, w, b, True, 0.1, 1e-3)),
    OpCase("batch_norm", "eval_running_stats",
           [arg(4, 3, 5), value(np.array([0.1, -0.2, 0.3])), value(np.array([0.5, 1.5, 2.0])),
            arg(3), arg(3)],
           lambda fw, x, m, v, w, b: fw.batch_norm(x, m, v, w, b, training=False),
           _batch_norm_eval,
           torch=lambda torch, x, m, v, w, b: torch.nn.functional.batch_norm(
               x, m.to(x.dtype), v.to(x.dtype), w, b, training=False)),
    OpCase("batch_norm", "train_size1_spatial", [arg(2, 3, 1)],
           lambda fw, x: fw.batch_norm(x, training=True), _batch_norm_train,
           torch=lambda torch, x: torch.nn.functional.batch_norm(x, None, None, training=True)),
]

_LAYER_NORM = [
    OpCase("layer_norm", "last_dim_affine", [arg(4, 5), arg(5), arg(5)],
           lambda fw, x, w, b: fw.layer_norm(x, 5, w, b), lambda x, w, b: _layer_norm(x, 1, w, b),
           torch=lambda torch, x, w, b: torch.nn.functional.layer_norm(x, (5,), w, b),
           dtypes=_HALF),
    OpCase("layer_norm", "two_dims_affine", [arg(2, 3, 4), arg(3, 4), arg(3, 4)],
           lambda fw, x, w, b: fw.layer_norm(x, (3, 4), w, b),
           lambda x, w, b: _layer_norm(x, 2, w, b),
           torch=lambda torch, x, w, b: torch.nn.functional.layer_norm(x, (3, 4), w, b)),
    OpCase("layer_norm", "no_affine", [arg(3, 4)], lambda fw, x: fw.layer_norm(x, (4,)),
           lambda x: _layer_norm(x, 1),
           torch=lambda torch, x: torch.nn.functional.layer_norm(x, (4,))),
    OpCase("layer_norm", "bias_only_eps", [arg(3, 4), arg(4)],
           lambda fw, x, b: fw.layer_norm(x, 4, None, b, eps=1e-2),
           lambda x, b: _layer_norm(x, 1, None, b, 1e-2),
           torch=lambda torch, x, b: torch.nn.functional.layer_norm(x, (4,), None, b, 1e-2)),
    OpCase("layer_norm", "whole_tensor", [arg(3, 4)], lambda fw, x: fw.layer_norm(x, (3, 4)),
           lambda x: _layer_norm(x, 2),
           torch=lambda torch, x: torch.nn.functional.layer_norm(x, (3, 4))),
    OpCase("layer_norm", "empty_batch", [arg(0, 4)], lambda fw, x: fw.layer_norm(x, 4),
           lambda x: _layer_norm(x, 1), torch=lambda torch, x: torch.nn.functional.layer_norm(
               x, (4,))),
]

_GROUP_NORM = [
    OpCase("group_norm", "3d_affine", [arg(2, 4, 3), arg(4), arg(4)],
           lambda fw, x, w, b: fw.group_norm(x, 2, w, b), lambda x, w, b: _group_norm(x, 2, w, b),
           torch=lambda torch, x, w, b: torch.nn.functional.group_norm(x, 2, w, b),
           dtypes=_HALF),
    OpCase("group_norm", "4d_no_affine", [arg(2, 6, 2, 2)], lambda fw, x: fw.group_norm(x, 3),
           lambda x: _group_norm(x, 3),
           torch=lambda torch, x: torch.nn.functional.group_norm(x, 3)),
    OpCase("group_norm", "one_group", [arg(2, 3, 4), arg(3), arg(3)],
           lambda fw, x, w, b: fw.group_norm(x, 1, w, b, eps=1e-3),
           lambda x, w, b: _group_norm(x, 1, w, b, 1e-3),
           torch=lambda torch, x, w, b: torch.nn.functional.group_norm(x, 1, w, b, 1e-3)),
    OpCase("group_norm", "2d_instance_like", [arg(3, 8)], lambda fw, x: fw.group_norm(x, 2),
           lambda x: _group_norm(x, 2),
           torch=lambda torch, x: torch.nn.functional.group_norm(x, 2)),
]

_RMS_NORM = [
    OpCase("rms_norm", "last_dim_weight", [arg(3, 4), arg(4)],
           lambda fw, x, w: fw.rms_norm(x, 4, w), lambda x, w: _rms_norm(x, 1, w),
           torch=lambda torch, x, w: torch.nn.functional.rms_norm(x, (4,), w), dtypes=_HALF),
    OpCase("rms_norm", "two_dims_default_eps", [arg(2, 3, 4)],
           lambda fw, x: fw.rms_norm(x, (3, 4)), lambda x: _rms_norm(x, 2),
           torch=lambda torch, x: torch.nn.functional.rms_norm(x, (3, 4))),
    OpCase("rms_norm", "explicit_eps", [arg(3, 5), arg(5)],
           lambda fw, x, w: fw.rms_norm(x, (5,), w, eps=1e-2),
           lambda x, w: _rms_norm(x, 1, w, 1e-2),
           torch=lambda torch, x, w: torch.nn.functional.rms_norm(x, (5,), w, 1e-2)),
]


def _torch_dropout(torch, x, p):
    keep = torch.from_numpy(_keep_mask(tuple(x.shape), p))
    return x * keep / (1 - p)


_DROPOUT = [
    OpCase("dropout", "seeded", [arg(4, 5)],
           lambda fw, x: fw.dropout(x, 0.3, True, generator=fw.Generator(0)),
           lambda x: _dropout(x, 0.3), torch=lambda torch, x: _torch_dropout(torch, x, 0.3),
           dtypes=_HALF),
    OpCase("dropout", "scalar", [arg()],
           lambda fw, x: fw.dropout(x, 0.5, generator=fw.Generator(0)),
           lambda x: _dropout(x, 0.5), torch=lambda torch, x: _torch_dropout(torch, x, 0.5)),
    OpCase("dropout", "p_one_zeros", [arg(3, 4)], lambda fw, x: fw.dropout(x, 1.0),
           lambda x: np.zeros_like(x), torch=lambda torch, x: torch.nn.functional.dropout(x, 1.0)),
    # these return x itself, as PyTorch does
    OpCase("dropout", "p_zero_identity", [arg(3, 4)], lambda fw, x: fw.dropout(x, 0.0),
           lambda x: x, torch=lambda torch, x: torch.nn.functional.dropout(x, 0.0)),
    OpCase("dropout", "eval_identity", [arg(3, 4)], lambda fw, x: fw.dropout(x, 0.5, False),
           lambda x: x, torch=lambda torch, x: torch.nn.functional.dropout(x, 0.5, False)),
    OpCase("dropout", "empty", [arg(0, 4)],
           lambda fw, x: fw.dropout(x, 0.5, generator=fw.Generator(0)),
           lambda x: _dropout(x, 0.5), torch=lambda torch, x: _torch_dropout(torch, x, 0.5)),
]

_PADDED = np.array([[0, 1, 4], [1, 1, 3]])

_EMBEDDING = [
    OpCase("embedding", "matrix_indices", [index(2, 3, high=5), arg(5, 4)],
           lambda fw, i, w: fw.embedding(i, w), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w), dtypes=_HALF),
    # the padding row's gradient is 0 by definition, not the numerical derivative (1), so
    # these are not gradchecked; tests/fw_core/ops/test_nn.py compares their gradients to torch
    OpCase("embedding", "padding_idx", [value(_PADDED), arg(5, 4)],
           lambda fw, i, w: fw.embedding(i, w, padding_idx=1), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w, padding_idx=1),
           grad=False),
    OpCase("embedding", "negative_padding_idx", [value(_PADDED), arg(5, 4)],
           lambda fw, i, w: fw.embedding(i, w, padding_idx=-1), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w, padding_idx=-1),
           grad=False),
    OpCase("embedding", "int32_indices", [value(np.array([3, 0, 3], np.int32)), arg(4, 2)],
           lambda fw, i, w: fw.embedding(i, w), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w)),
    OpCase("embedding", "scalar_index", [value(np.array(2)), arg(4, 3)],
           lambda fw, i, w: fw.embedding(i, w), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w)),
    OpCase("embedding", "empty_indices", [value(np.zeros((0,), np.int64)), arg(4, 3)],
           lambda fw, i, w: fw.embedding(i, w), lambda i, w: w[i],
           torch=lambda torch, i, w: torch.nn.functional.embedding(i, w)),
]


def _embedding_backward_call(padding_idx):
    def call(fw, g, i):
        op = fw.ops.get("embedding_backward")
        return fw.ops.apply(op, (g, i), {"num_weights": 5, "padding_idx": padding_idx})

    return call


def _torch_embedding_backward(padding_idx):
    def call(torch, g, i):
        return torch.ops.aten.embedding_dense_backward(
            g, i, 5, -1 if padding_idx is None else padding_idx, False)

    return call


_EMBEDDING_BACKWARD = [
    OpCase("embedding_backward", "repeated_rows", [arg(2, 3, 4), value(_PADDED)],
           _embedding_backward_call(None), lambda g, i: _embedding_backward(g, i, 5),
           torch=_torch_embedding_backward(None)),
    OpCase("embedding_backward", "padding_row", [arg(2, 3, 4), value(_PADDED)],
           _embedding_backward_call(1), lambda g, i: _embedding_backward(g, i, 5, 1),
           torch=_torch_embedding_backward(1)),
]


def _attention_case(name, shapes, extra=(), dtypes=("float32", "float64"), torch=True,
                    reference=None, **kwargs):
    inputs = [arg(*s) for s in shapes] + [value(e) for e in extra]
    return OpCase(
        "scaled_dot_product_attention", name, inputs,
        lambda fw, q, k, v, *m: fw.scaled_dot_product_attention(q, k, v, *m, **kwargs),
        reference or (lambda q, k, v, *m: _attention(
            q, k, v, *m, causal=kwargs.get("is_causal", False), scale=kwargs.get("scale"))),
        torch=(lambda t, q, k, v, *m: t.nn.functional.scaled_dot_product_attention(
            q, k, v, *(mask if mask.dtype == t.bool else mask.to(q.dtype) for mask in m),
            **kwargs)) if torch else None,
        dtypes=dtypes)


_BOOL_MASK = np.array([[True, False, True, True, False], [False] * 5,
                       [True, True, True, True, True]])
_FLOAT_MASK = np.where(_BOOL_MASK, 0.0, -np.inf) + np.linspace(-0.5, 0.5, 15).reshape(3, 5)

_ATTENTION = [
    _attention_case("3d", [(2, 3, 4), (2, 5, 4), (2, 5, 6)], dtypes=_HALF),
    _attention_case("4d_heads", [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)]),
    _attention_case("bool_mask_fully_masked_row", [(2, 3, 4), (2, 5, 4), (2, 5, 2)],
                    extra=(_BOOL_MASK,)),
    _attention_case("float_mask", [(2, 3, 4), (2, 5, 4), (2, 5, 2)], extra=(_FLOAT_MASK,)),
    _attention_case("causal_square", [(2, 4, 3), (2, 4, 3), (2, 4, 2)], is_causal=True),
    _attention_case("causal_more_queries", [(1, 5, 3), (1, 3, 3), (1, 3, 2)], is_causal=True),
    _attention_case("scale", [(2, 3, 4), (2, 5, 4), (2, 5, 2)], scale=0.3),
    _attention_case("broadcast_batch", [(2, 1, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)]),
    # grouped-query heads: each key/value head serves a group of query heads
    _attention_case("grouped_query_heads", [(2, 6, 3, 4), (2, 2, 5, 4), (2, 3, 5, 3)],
                    reference=lambda q, k, v: _attention(q, np.repeat(k, 3, -3),
                                                         np.repeat(v, 2, -3)),
                    enable_gqa=True),
    OpCase("scaled_dot_product_attention", "dropout_seeded",
           [arg(2, 3, 4), arg(2, 5, 4), arg(2, 5, 2)],
           lambda fw, q, k, v: (fw.manual_seed(0),
                                fw.scaled_dot_product_attention(q, k, v, dropout_p=0.4))[1],
           lambda q, k, v: _attention(q, k, v, dropout_p=0.4)),
]

CASES = [
    *_softmax_cases("softmax", _softmax),
    *_softmax_cases("log_softmax", _log_softmax),
    *_SAFE_SOFTMAX, *_BATCH_NORM, *_LAYER_NORM, *_GROUP_NORM, *_RMS_NORM, *_DROPOUT,
    *_EMBEDDING, *_EMBEDDING_BACKWARD, *_ATTENTION,
]
