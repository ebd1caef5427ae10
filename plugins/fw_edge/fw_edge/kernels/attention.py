"""``scaled_dot_product_attention``: softmax(q k^T * scale + mask) v, with fw's (PyTorch's)
semantics: a bool mask marks where a query may attend (True = keep), a float mask is added to
the scores, ``is_causal`` lets query i see keys 0..i, and a query row with no allowed key
gives 0, not NaN. Half precision is computed in float32.

The scores live in a working array *transposed*, (..., keys, queries): the softmax then
reduces over the second-to-last axis, which NumPy vectorises across the queries (a reduction
along a short last axis costs it per row, twice as long at BERT's sizes). They are k q^T, so q
is copied transposed first, and scaled in that copy (D values per query rather than one per
key): OpenBLAS's threaded product against a transposed operand is several times slower at
these sizes than the copy and a plain product. The softmax's division is applied to the
output (D values per query) rather than to the scores (one per key).
"""

from __future__ import annotations

import numpy as np

from ..errors import EdgeError
from ..kernel_api import Kernel, Writes
from .softmax import softmax_into


def attention(spec):
    """The fused attention of one node, its mask handled as its attributes say."""
    a = spec.attrs
    if a.get("dropout_p", 0.0) > 0:
        raise EdgeError(f"{spec.where} has dropout_p={a['dropout_p']}: a program runs "
                        "inference, where attention dropout is off; export in eval mode")
    q, k, v = spec.inputs[:3]
    mask = spec.inputs[3] if a.get("has_mask") else None
    dtype = np.dtype(np.float32) if q.dtype == np.float16 else q.dtype
    length, keys = q.shape[-2], k.shape[-2]
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    q_t = spec.scratch(q.shape[:-2] + (q.shape[-1], length), dtype)
    scores = spec.scratch(lead + (keys, length), dtype)  # transposed: (..., keys, queries)
    scale = dtype.type(a["scale"])
    masked = mask is not None or a.get("is_causal", False)
    softmax = softmax_into(spec, scores.shape, dtype, -2, safe=masked, divide=False)
    # the mask seen with two axes at least, so that it transposes as the scores do
    mask_shape = None if mask is None else (1,) * (2 - len(mask.shape)) + tuple(mask.shape)
    hidden = None  # where a key is hidden from a query, transposed as the scores are
    if a.get("is_causal", False):
        hidden = ~np.tri(length, keys, dtype=bool).T
    elif mask is not None and mask.dtype == np.bool_:
        hidden = spec.scratch(mask_shape[:-2] + (mask_shape[-1], mask_shape[-2]), np.bool_)
    wide = dtype != q.dtype
    result = spec.scratch(spec.out.shape, dtype) if wide else None

    def run(out, q, k, v, *extra):
        np.multiply(np.swapaxes(q, -1, -2), scale, out=q_t)
        np.matmul(k, q_t, out=scores, dtype=dtype)
        if mask is not None:
            mask_t = np.swapaxes(extra[0].reshape(mask_shape), -1, -2)
        if mask is not None and mask.dtype != np.bool_:
            np.add(scores, mask_t, out=scores, casting="unsafe")
        elif hidden is not None:
            if mask is not None:
                np.logical_not(mask_t, out=hidden)
            np.copyto(scores, -np.inf, where=hidden)
        total = np.swapaxes(softmax(scores), -1, -2)  # (..., queries, 1)
        target = result if wide else out
        np.matmul(np.swapaxes(scores, -1, -2), v, out=target, dtype=dtype)
        np.true_divide(target, total, out=out, casting="unsafe")
    return Writes(run)


KERNELS = [Kernel("scaled_dot_product_attention", attention)]
