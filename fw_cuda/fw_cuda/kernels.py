"""The ``cuda`` kernel tables: fw_cpu's xp-generic kernels run with ``xp=cupy``, and above
them, for the row-wise ops and Adam, hand-written CUDA kernels with guards.

Every family in ``fw_cpu.kernels`` is written against an array namespace, and CuPy follows the
NumPy API closely enough that the same code is the GPU code: ``xp.matmul``/``xp.einsum`` go to
cuBLAS, reductions to CuPy's CUDA reductions, convolution and pooling to im2col
(``sliding_window_view``) + a cuBLAS GEMM (CuPy 14 removed its cuDNN bindings; CuPy 13 had them
only with a separately installed cuDNN). fw_cpu's Numba loops are host-only and not used.

softmax, safe_softmax, log_softmax, layer_norm, rms_norm and scaled_dot_product_attention have
:mod:`fw_cuda.rows`' raw CUDA kernels (one launch per row op rather than five CuPy passes), and
``adam_update`` :mod:`fw_cuda.optim_kernels`' one launch per parameter (the generic kernel is
about a dozen). Each is a guarded kernel at priority 1 in the dispatch table: its guard plans
the launch, and the calls it cannot plan go to the generic kernel below it.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from fw_core.errors import UnsupportedError

#: the ops with a guarded CUDA kernel above the generic one, and what each guard takes
_ROWS = "non-empty float16/32/64 arrays (not 0-d)"
FAST = {
    "softmax": _ROWS, "safe_softmax": _ROWS, "log_softmax": _ROWS,
    "layer_norm": _ROWS + ", weight and bias of the rows' shape and dtype",
    "rms_norm": _ROWS + ", a weight of the rows' shape and dtype",
    "scaled_dot_product_attention": "non-empty q, k, v of one float dtype, a bool or float "
                                    "mask, a bool keep-mask of the scores' shape",
    "adam_update": "a non-empty dense float16/32/64 parameter, its state of the same dtype, "
                   "shape and strides",
}


def op_names() -> list[str]:
    """The ops :func:`cuda_kernels` serves, known without CuPy: the xp-generic families' ops."""
    from fw_cpu import special
    from fw_cpu.kernels import all_kernels

    return list(all_kernels(np, special))


def cuda_kernels() -> dict:
    """{op name: kernel} for every core op with an xp-generic kernel, on CuPy arrays."""
    import cupy
    import cupyx.scipy.special

    from fw_cpu.kernels import all_kernels

    return all_kernels(cupy, cupyx.scipy.special)


def fast_guards(xp=None) -> dict:
    """{op in :data:`FAST`: its guard} for namespace ``xp`` (CuPy unless given): the function
    that runs the call on the hand-written kernel, or None for the generic kernel."""
    from .optim_kernels import adam_guard
    from .rows import guards

    if xp is None:
        import cupy as xp
    return {**guards(xp), "adam_update": adam_guard}


def fast_kernels() -> dict:
    """{op in :data:`FAST`: its hand-written kernel}, each running the calls its guard takes."""
    return {op: partial(run_guarded, op, guard) for op, guard in fast_guards().items()}


def run_guarded(op: str, guard, *arrays, **attrs):
    """Run ``op``'s hand-written kernel on a call ``guard`` takes; refuse the others (the
    dispatch chain asks the guard first, so only a direct call gets here with one)."""
    run = guard(*arrays, **attrs)
    if run is None:
        raise UnsupportedError(f"the cuda {op} kernel does not take this call", op=op,
                               hint=f"it takes {FAST[op]}; the generic kernel takes the rest")
    return run(*arrays, **attrs)
