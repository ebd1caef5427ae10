"""The ``cuda`` kernel table: fw_cpu's xp-generic kernels run with ``xp=cupy``, with
hand-written CUDA kernels for the row-wise ops and Adam over them.

Every family in ``fw_cpu.kernels`` is written against an array namespace, and CuPy follows the
NumPy API closely enough that the same code is the GPU code: ``xp.matmul``/``xp.einsum`` go to
cuBLAS, reductions to CuPy's CUDA reductions, convolution and pooling to im2col
(``sliding_window_view``) + a cuBLAS GEMM (CuPy 14 removed its cuDNN bindings; CuPy 13 had them
only with a separately installed cuDNN). fw_cpu's Numba-specific replacements
(fused Adam, pooling and row kernels) are host-only and not used.

softmax, safe_softmax, log_softmax, layer_norm, rms_norm and scaled_dot_product_attention are
:mod:`fw_cuda.rows`' raw CUDA kernels instead (one launch per row op rather than five CuPy
passes); they hand the cases they do not cover back to the generic kernels. ``adam_update`` is
:mod:`fw_cuda.optim_kernels`' one raw CUDA launch per parameter (the generic kernel is about a
dozen), with the generic kernel kept for the dtypes and layouts it does not cover.
"""

from __future__ import annotations

import numpy as np


def op_names() -> list[str]:
    """The ops :func:`cuda_kernels` serves, known without CuPy: the xp-generic families' ops
    (the row ops and ``adam_update`` replace kernels among them)."""
    from fw_cpu import special
    from fw_cpu.kernels import all_kernels

    return list(all_kernels(np, special))


def cuda_kernels() -> dict:
    """{op name: kernel} for every core op with an xp-generic kernel, on CuPy arrays; the row
    ops replaced by :func:`fw_cuda.rows.row_kernels` and ``adam_update`` by
    :func:`fw_cuda.optim_kernels.adam_kernel`."""
    import cupy
    import cupyx.scipy.special

    from fw_cpu.kernels import all_kernels

    from .optim_kernels import adam_kernel
    from .rows import row_kernels

    table = all_kernels(cupy, cupyx.scipy.special)
    table.update(row_kernels(table))
    table["adam_update"] = adam_kernel(table["adam_update"])
    return table
