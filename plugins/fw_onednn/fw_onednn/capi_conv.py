"""The part of oneDNN 3.2's C API that fw_onednn's convolution and pooling kernels call, declared
with ctypes beside :mod:`fw_onednn.capi`, whose library handle and types they share.

Names drop the ``dnnl_`` prefix, as in ``capi``; the enum values are those of
``oneapi/dnnl/dnnl_types.h``. What these add to the matmul path: memory descriptors whose format
oneDNN chooses (``FORMAT_ANY``, then read back from the primitive descriptor with
``primitive_desc_query_md``), reorders between a plain layout and the one chosen, the
convolution, deconvolution and pooling primitive descriptors, and the size of a layout (for the
buffers a call allocates in oneDNN's blocked layouts and for max pooling's workspace).
"""

from __future__ import annotations

import ctypes

from .capi import Dims, _declare, handle, status_t

# dnnl_format_tag_t: oneDNN picks the layout
FORMAT_ANY = 1
# dnnl_data_type_t
U8, S32 = 6, 4
# dnnl_prop_kind_t
FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96
# dnnl_alg_kind_t
CONVOLUTION_DIRECT, DECONVOLUTION_DIRECT = 0x1, 0xA
POOLING_MAX, POOLING_AVG_INCLUDE_PADDING, POOLING_AVG_EXCLUDE_PADDING = 0x1FF, 0x2FF, 0x3FF
# dnnl_query_t: memory descriptors of a primitive descriptor
QUERY_SRC_MD, QUERY_DIFF_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DIFF_WEIGHTS_MD = 129, 130, 131, 132
QUERY_DST_MD, QUERY_DIFF_DST_MD, QUERY_WORKSPACE_MD = 133, 134, 135
# DNNL_ARG_*
ARG_FROM, ARG_TO = 1, 17
ARG_WORKSPACE = 64
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS = 129, 145, 161


_out = ctypes.POINTER(handle)

memory_desc_create_with_tag = _declare(
    "memory_desc_create_with_tag", status_t, _out, ctypes.c_int, Dims, ctypes.c_int, ctypes.c_int)
memory_desc_equal = _declare("memory_desc_equal", ctypes.c_int, handle, handle)
memory_desc_get_size = _declare("memory_desc_get_size", ctypes.c_size_t, handle)
primitive_desc_query_md = _declare("primitive_desc_query_md", handle, handle, ctypes.c_int,
                                   ctypes.c_int)

reorder_primitive_desc_create = _declare(
    "reorder_primitive_desc_create", status_t, _out, handle, handle, handle, handle, handle)
convolution_forward_primitive_desc_create = _declare(
    "convolution_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    ctypes.c_int, handle, handle, handle, handle, Dims, Dims, Dims, Dims, handle)
convolution_backward_data_primitive_desc_create = _declare(
    "convolution_backward_data_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    handle, handle, handle, Dims, Dims, Dims, Dims, handle, handle)
convolution_backward_weights_primitive_desc_create = _declare(
    "convolution_backward_weights_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    handle, handle, handle, handle, Dims, Dims, Dims, Dims, handle, handle)
deconvolution_forward_primitive_desc_create = _declare(
    "deconvolution_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int,
    ctypes.c_int, handle, handle, handle, handle, Dims, Dims, Dims, Dims, handle)
pooling_forward_primitive_desc_create = _declare(
    "pooling_forward_primitive_desc_create", status_t, _out, handle, ctypes.c_int, ctypes.c_int,
    handle, handle, Dims, Dims, Dims, Dims, Dims, handle)
pooling_backward_primitive_desc_create = _declare(
    "pooling_backward_primitive_desc_create", status_t, _out, handle, ctypes.c_int, handle,
    handle, Dims, Dims, Dims, Dims, Dims, handle, handle)
