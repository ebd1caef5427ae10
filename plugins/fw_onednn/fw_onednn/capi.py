"""The part of oneDNN 3.2's C API that fw_onednn calls, declared with ctypes.

Names drop the ``dnnl_`` prefix (``capi.memory_create`` is ``dnnl_memory_create``); the enum
values are those of ``oneapi/dnnl/dnnl_types.h`` and ``dnnl_common_types.h``. Opaque handles
(engine, stream, memory, primitive, descriptors) are ``void *``. The two functions the compiled
execute path calls per kernel run (:mod:`fw_onednn.execute`) take their handles as ``size_t``
instead, so Numba passes plain addresses: on x86-64 Linux (LP64) that is the same calling
convention as a pointer.

:func:`check` turns a status other than ``dnnl_success`` into an fw error naming the call and the
status (and the op: fw's dispatch adds the one that was running).
"""

from __future__ import annotations

import ctypes

from fw_core.errors import KernelError, OutOfMemoryError, UnsupportedError

from . import library

lib = library.load()

handle = ctypes.c_void_p
address = ctypes.c_size_t
status_t = ctypes.c_int
MAX_NDIMS = 12
Dims = ctypes.c_int64 * MAX_NDIMS

# dnnl_status_t
SUCCESS, OUT_OF_MEMORY, UNIMPLEMENTED = 0, 1, 3
STATUS_NAMES = {
    0: "success", 1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented",
    4: "last_impl_reached", 5: "runtime_error", 6: "not_required", 7: "invalid_graph",
    8: "invalid_graph_op", 9: "invalid_shape", 10: "invalid_data_type",
}
# dnnl_data_type_t, dnnl_engine_kind_t, dnnl_stream_flags_t
BF16, F32 = 2, 3
ENGINE_CPU = 1
STREAM_IN_ORDER = 1
# dnnl_query_t
QUERY_IMPL_INFO_STR = 8
# DNNL_ARG_*
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 17, 33, 41
# dnnl_cpu_isa_t
CPU_ISA_NAMES = {
    0x0: "default", 0x1: "sse41", 0x3: "avx", 0x7: "avx2", 0xF: "avx2_vnni",
    0x1F: "avx2_vnni_2", 0x27: "avx512_core", 0x67: "avx512_core_vnni",
    0xE7: "avx512_core_bf16", 0x1EF: "avx512_core_fp16", 0xFEF: "avx512_core_amx",
    0x1FEF: "avx512_core_amx_fp16",
}
# dnnl_version_t.cpu_runtime (DNNL_RUNTIME_*)
RUNTIME_NAMES = {0: "none", 1: "sequential", 2: "OpenMP", 4: "TBB", 8: "threadpool",
                 256: "SYCL"}


class Version(ctypes.Structure):
    """``dnnl_version_t``."""

    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


def _declare(name: str, restype, *argtypes):
    fn = getattr(lib, f"dnnl_{name}")
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_out = ctypes.POINTER(handle)

version = _declare("version", ctypes.POINTER(Version))
get_effective_cpu_isa = _declare("get_effective_cpu_isa", ctypes.c_int)

engine_create = _declare("engine_create", status_t, _out, ctypes.c_int, ctypes.c_size_t)
stream_create = _declare("stream_create", status_t, _out, handle, ctypes.c_uint)

memory_desc_create_with_strides = _declare(
    "memory_desc_create_with_strides", status_t, _out, ctypes.c_int, Dims, ctypes.c_int, Dims)
memory_desc_destroy = _declare("memory_desc_destroy", status_t, handle)
memory_create = _declare("memory_create", status_t, _out, handle, handle, handle)
memory_destroy = _declare("memory_destroy", status_t, handle)

matmul_primitive_desc_create = _declare(
    "matmul_primitive_desc_create", status_t, _out, handle, handle, handle, handle, handle,
    handle)
primitive_desc_query = _declare("primitive_desc_query", status_t, handle, ctypes.c_int,
                                ctypes.c_int, ctypes.c_void_p)
primitive_desc_destroy = _declare("primitive_desc_destroy", status_t, handle)
primitive_create = _declare("primitive_create", status_t, _out, handle)
primitive_destroy = _declare("primitive_destroy", status_t, handle)

# called from compiled code with integer addresses (see the module docstring)
memory_set_data_handle = _declare("memory_set_data_handle", status_t, address, address)
primitive_execute = _declare("primitive_execute", status_t, address, address, ctypes.c_int,
                             address)


def status_name(status: int) -> str:
    """``dnnl_status_t`` in words ("unimplemented")."""
    return STATUS_NAMES.get(status, f"status {status}")


def check(status: int, op: str | None, call: str) -> None:
    """Raise the fw error for a failed oneDNN call (nothing for ``dnnl_success``). Kernels pass
    no ``op``: fw's dispatch fills in the op that was running, its module and inputs.

    Raises:
        OutOfMemoryError: oneDNN could not allocate.
        UnsupportedError: oneDNN has no implementation (``unimplemented``).
        KernelError: any other status.
    """
    if status == SUCCESS:
        return
    message = f"oneDNN's {call} failed: {status_name(status)} (dnnl status {status})"
    if status == OUT_OF_MEMORY:
        raise OutOfMemoryError(message, op=op, hint="free memory or use smaller batches")
    if status == UNIMPLEMENTED:
        raise UnsupportedError(message, op=op, hint="block fw_onednn for this run "
                               "(FW_DISABLE_PLUGINS=fw_onednn) so fw_cpu serves it")
    raise KernelError(message, op=op, hint="report it with the shapes above; meanwhile "
                      "FW_DISABLE_PLUGINS=fw_onednn runs it on fw_cpu")
