"""The process's oneDNN CPU engine and stream, and what the loaded library says about itself.

One engine and one in-order stream serve every primitive: on the CPU a stream executes
synchronously in the calling thread, so a result is ready when ``dnnl_primitive_execute``
returns. Both are created at import (about 30 µs); a failure fails the plugin at load, with the
status, instead of at the first matmul.
"""

from __future__ import annotations

import ctypes

from . import capi


def _create(fn, what: str, *args) -> int:
    out = capi.handle()
    capi.check(fn(ctypes.byref(out), *args), "fw_onednn", what)
    return out.value


ENGINE = _create(capi.engine_create, "dnnl_engine_create", capi.ENGINE_CPU, 0)
STREAM = _create(capi.stream_create, "dnnl_stream_create", ENGINE, capi.STREAM_IN_ORDER)


def version() -> str:
    """The loaded library's version, "3.2.0"."""
    v = capi.version().contents
    return f"{v.major}.{v.minor}.{v.patch}"


def cpu_isa() -> str:
    """The most capable instruction set oneDNN dispatches to on this CPU ("avx512_core_bf16",
    "avx512_core_amx", "avx2", ...)."""
    isa = capi.get_effective_cpu_isa()
    return capi.CPU_ISA_NAMES.get(isa, hex(isa))


def describe() -> str:
    """One line for ``fw plugins``: version, source hash, threading runtime and ISA."""
    v = capi.version().contents
    commit = (v.hash or b"").decode()[:8]
    runtime = capi.RUNTIME_NAMES.get(v.cpu_runtime, hex(v.cpu_runtime))
    return (f"oneDNN {version()} ({commit}, {runtime} threads) dispatching to {cpu_isa()} "
            f"({capi.lib._name})")
