"""CUDA fusion: CUDA C kernels for the groups fw_core's fusion pass forms, as ``RULES``.

fw_core forms the groups (``fw_core/compile/passes/fuse.py``); this package only writes their
code: :mod:`.render` (an op's formula as C statements; C types; float16 as ``__half``,
computed in float and rounded per node), :mod:`.codegen` (the source of a pointwise group,
optionally closed by a sum / mean / sum_to, and :class:`CudaKernel`, which launches it),
:mod:`.rules`
(``cuda.cublas_epilogue`` for a contraction + epilogue, ``cuda.rawkernel_pointwise``).
A group's elementwise nodes share one *iteration shape*; each input may broadcast to it (which
dimensions it spans is part of ``Group.signature()``, sizes are not), so one kernel serves
every batch size.

Why ``cupy.RawKernel`` rather than numba-cuda or ``ElementwiseKernel``/``ReductionKernel``:
the source is plain CUDA C we write ourselves, so the very text that runs on the GPU is what CI
compiles with ``nvcc -arch=sm_90 -cubin`` and what ptxas reports registers and spills for
(:mod:`fw_cuda.nvcc`) on a machine with no GPU; numba-cuda would add a second compiler (and an
NVRTC pin) whose output CI can only run in the slow simulator, and CuPy's Elementwise/Reduction
kernels wrap our expression in generated code we do not see, and fix the reduction shape to
one axis pattern per call. CuPy is imported only when a kernel first runs; it compiles with
NVRTC on first launch and caches the binary on disk itself.
"""

from .codegen import NAME, CudaKernel, generate, source
from .render import literal, supports
from .rules import RULES

__all__ = ["NAME", "RULES", "CudaKernel", "generate", "literal", "source", "supports"]
