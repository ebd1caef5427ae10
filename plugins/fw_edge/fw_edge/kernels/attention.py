"""``scaled_dot_product_attention``: softmax(q k^T * scale + mask) v, with fw's (PyTorch's)
semantics: a bool mask marks where a query may attend (True = keep), a float mask is added to
the scores, ``is_causal`` lets query i see keys 0..i, and a query row with no allowed key
gives 0, not NaN. The scores live in a working array; half precision is computed in float32."""

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
    scores = spec.scratch(np.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (length, keys), dtype)
    scale = dtype.type(a["scale"])
    masked = mask is not None or a.get("is_causal", False)
    softmax = softmax_into(spec, scores.shape, dtype, -1, safe=masked)
    hidden = None
    if a.get("is_causal", False):
        hidden = ~np.tri(length, keys, dtype=bool)
    elif mask is not None and mask.dtype == np.bool_:
        hidden = spec.scratch(mask.shape, np.bool_)
    wide = dtype != q.dtype
    result = spec.scratch(spec.out.shape, dtype) if wide else None

    def run(out, q, k, v, *extra):
        np.matmul(q, np.swapaxes(k, -1, -2), out=scores, dtype=dtype)
        np.multiply(scores, scale, out=scores)
        if mask is not None and mask.dtype != np.bool_:
            np.add(scores, extra[0], out=scores, casting="unsafe")
        elif hidden is not None:
            if mask is not None:
                np.logical_not(extra[0], out=hidden)
            np.copyto(scores, -np.inf, where=hidden)
        softmax(scores)
        if wide:
            np.matmul(scores, v, out=result, dtype=dtype)
            np.copyto(out, result, casting="unsafe")
        else:
            np.matmul(scores, v, out=out)
    return Writes(run)


KERNELS = [Kernel("scaled_dot_product_attention", attention)]
