"""The ``cuda`` kernel table: fw_cpu's xp-generic kernels run with ``xp=cupy``.

Every family in ``fw_cpu.kernels`` is written against an array namespace, and CuPy follows the
NumPy API closely enough that the same code is the GPU code: ``xp.matmul``/``xp.einsum`` go to
cuBLAS, reductions, softmax, layer norm and attention to CuPy's CUDA reductions and GEMMs,
convolution and pooling to im2col (``sliding_window_view``) + a cuBLAS GEMM (CuPy exposes cuDNN
only when a separate cuDNN library is installed, which the wheels do not bring). fw_cpu's
Numba-specific replacements (fused Adam, pooling and row kernels) are host-only and not used.
"""

from __future__ import annotations


def cuda_kernels() -> dict:
    """{op name: kernel} for every core op with an xp-generic kernel, on CuPy arrays."""
    import cupy
    import cupyx.scipy.special

    from fw_cpu.kernels import all_kernels

    return all_kernels(cupy, cupyx.scipy.special)
