"""The part of oneDNN 3.2's C API behind fw_onednn's eltwise, softmax and normalisation kernels
and its matmul post-ops, declared with ctypes (names and conventions as in :mod:`.capi`).

Enum values are those of ``oneapi/dnnl/dnnl_types.h``: ``dnnl_alg_kind_t`` for the eltwise,
binary and softmax algorithms, ``dnnl_prop_kind_t``, ``dnnl_normalization_flags_t`` and the
``DNNL_ARG_*`` numbers of the statistics, the scale and shift, and the second operand of a
binary post-op.
"""

from __future__ import annotations

import ctypes

from .capi import _declare, _out, handle, status_t

# dnnl_prop_kind_t: forward_inference leaves out what only a backward pass would read
FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96

# dnnl_alg_kind_t: eltwise (alpha and beta as oneDNN's eltwise documentation defines them)
ELTWISE_RELU, ELTWISE_TANH, ELTWISE_ELU, ELTWISE_SQUARE, ELTWISE_ABS, ELTWISE_SQRT = range(
    0x20, 0x26)
ELTWISE_LINEAR, ELTWISE_SOFT_RELU, ELTWISE_HARDSIGMOID, ELTWISE_LOGISTIC, ELTWISE_EXP = range(
    0x26, 0x2B)
ELTWISE_GELU_TANH, ELTWISE_SWISH, ELTWISE_LOG, ELTWISE_CLIP, ELTWISE_CLIP_V2 = range(0x2B, 0x30)
ELTWISE_POW, ELTWISE_GELU_ERF, ELTWISE_ROUND, ELTWISE_MISH = range(0x30, 0x34)
# binary (post-ops)
BINARY_ADD, BINARY_MUL, BINARY_MAX, BINARY_MIN, BINARY_DIV, BINARY_SUB = range(0x1FFF0, 0x1FFF6)
# softmax
SOFTMAX_ACCURATE, SOFTMAX_LOG = 0x30000, 0x30001

# dnnl_normalization_flags_t
USE_GLOBAL_STATS, USE_SCALE, USE_SHIFT = 0x1, 0x2, 0x4

# DNNL_ARG_*
ARG_SRC_1, ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT = 2, 49, 50, 51, 52


def arg_post_op(index: int, arg: int) -> int:
    """``DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | arg``: an argument of the post-op at
    ``index`` (``ARG_SRC_1``: a binary post-op's second operand)."""
    return 32768 * (index + 1) | arg


eltwise_forward_primitive_desc_create = _declare(
    "eltwise_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int, ctypes.c_int,
    handle, handle, ctypes.c_float, ctypes.c_float, handle)
softmax_forward_primitive_desc_create = _declare(
    "softmax_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int, ctypes.c_int,
    handle, handle, ctypes.c_int, handle)
layer_normalization_forward_primitive_desc_create = _declare(
    "layer_normalization_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    handle, handle, handle, ctypes.c_float, ctypes.c_uint, handle)
batch_normalization_forward_primitive_desc_create = _declare(
    "batch_normalization_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    handle, handle, ctypes.c_float, ctypes.c_uint, handle)

primitive_attr_create = _declare("primitive_attr_create", status_t, _out)
primitive_attr_destroy = _declare("primitive_attr_destroy", status_t, handle)
primitive_attr_set_post_ops = _declare("primitive_attr_set_post_ops", status_t, handle, handle)
post_ops_create = _declare("post_ops_create", status_t, _out)
post_ops_destroy = _declare("post_ops_destroy", status_t, handle)
post_ops_append_eltwise = _declare("post_ops_append_eltwise", status_t, handle, ctypes.c_int,
                                   ctypes.c_float, ctypes.c_float)
post_ops_append_binary = _declare("post_ops_append_binary", status_t, handle, ctypes.c_int,
                                  handle)
