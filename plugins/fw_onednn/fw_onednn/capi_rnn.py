"""The part of oneDNN 3.2's C API that fw_onednn's recurrent kernels call, declared with ctypes.

Beside :mod:`fw_onednn.capi` (the library, the types, the status check) and
:mod:`fw_onednn.capi_conv` (layouts oneDNN chooses, reorders, layout sizes), it declares the
RNN primitive descriptors (vanilla RNN, LSTM, linear-before-reset GRU), forward and backward,
and the RNN primitives' argument numbers. Names drop the ``dnnl_`` prefix; enum values are those
of ``oneapi/dnnl/dnnl_types.h``.
"""

from __future__ import annotations

import ctypes

from .capi import _declare, handle, status_t

# dnnl_prop_kind_t (forward_training and forward_inference: capi_conv)
BACKWARD = 128
# dnnl_rnn_direction_t
LEFT2RIGHT, RIGHT2LEFT = 1, 2
# dnnl_rnn_flags_t: backward writes the weight gradients instead of adding to them
DIFF_WEIGHTS_OVERWRITE = 0x1
# dnnl_alg_kind_t: the vanilla RNN's activations
ELTWISE_RELU, ELTWISE_TANH = 0x20, 0x21
# dnnl_query_t: the memory descriptor a primitive chose for an execute argument (index = arg)
QUERY_EXEC_ARG_MD = 255
# DNNL_ARG_* of the RNN primitives (DNNL_ARG_DIFF_* are 128 above; workspace: capi_conv)
ARG_SRC_LAYER, ARG_SRC_ITER, ARG_SRC_ITER_C = 1, 2, 3
ARG_DST_LAYER, ARG_DST_ITER, ARG_DST_ITER_C = 17, 18, 19
ARG_WEIGHTS_LAYER, ARG_WEIGHTS_ITER, ARG_BIAS = 33, 34, 41
ARG_DIFF_SRC_LAYER, ARG_DIFF_SRC_ITER, ARG_DIFF_SRC_ITER_C = 129, 130, 131
ARG_DIFF_DST_LAYER, ARG_DIFF_DST_ITER, ARG_DIFF_DST_ITER_C = 145, 146, 147
ARG_DIFF_WEIGHTS_LAYER, ARG_DIFF_WEIGHTS_ITER, ARG_DIFF_BIAS = 161, 162, 169

_out = ctypes.POINTER(handle)
_md = handle  # const_dnnl_memory_desc_t (NULL: the argument is absent)
_prop, _direction, _flags, _float = ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_float

vanilla_rnn_forward_primitive_desc_create = _declare(
    "vanilla_rnn_forward_primitive_desc_create", status_t, _out, handle, _prop, ctypes.c_int,
    _direction, *[_md] * 7, _flags, _float, _float, handle)
vanilla_rnn_backward_primitive_desc_create = _declare(
    "vanilla_rnn_backward_primitive_desc_create", status_t, _out, handle, _prop, ctypes.c_int,
    _direction, *[_md] * 14, _flags, _float, _float, handle, handle)
lstm_forward_primitive_desc_create = _declare(
    "lstm_forward_primitive_desc_create", status_t, _out, handle, _prop, _direction,
    *[_md] * 11, _flags, handle)
lstm_backward_primitive_desc_create = _declare(
    "lstm_backward_primitive_desc_create", status_t, _out, handle, _prop, _direction,
    *[_md] * 22, _flags, handle, handle)
lbr_gru_forward_primitive_desc_create = _declare(
    "lbr_gru_forward_primitive_desc_create", status_t, _out, handle, _prop, _direction,
    *[_md] * 7, _flags, handle)
lbr_gru_backward_primitive_desc_create = _declare(
    "lbr_gru_backward_primitive_desc_create", status_t, _out, handle, _prop, _direction,
    *[_md] * 14, _flags, handle, handle)
