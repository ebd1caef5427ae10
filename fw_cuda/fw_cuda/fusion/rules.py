"""The CUDA fusion rules: the records fw_cuda registers through ``fw_register_fusion_rules``.

- ``cuda.rawkernel_pointwise``: a chain of elementwise / broadcasting ops, optionally closed by
  a sum / mean / sum_to, as one generated CUDA C kernel (:mod:`.codegen`).
- ``cuda.cublas_epilogue`` (tried first): a matmul / linear / bmm / conv1d / conv2d computed by
  the op's own ``cuda`` kernel (cuBLAS through CuPy; convolutions as im2col + a cuBLAS GEMM),
  then ONE generated kernel applies the whole elementwise epilogue (bias add, activation,
  residual), in place on the product's buffer when nothing else reads it. The splitting and
  the kernel object are fw_core's (:mod:`fw_core.compile.epilogue`), shared with fw_cpu's
  ``cpu.blas_epilogue``; this rule gives them the CUDA pointwise generator.
"""

from __future__ import annotations

from fw_core.compile import epilogue
from fw_core.records import FusionRule, Structure

from . import codegen, render

_POINTWISE = frozenset([Structure.ELEMENTWISE, Structure.BROADCAST])

POINTWISE = FusionRule(name="cuda.rawkernel_pointwise", device="cuda",
                       structures=_POINTWISE | {Structure.REDUCTION}, generate=codegen.generate,
                       supports=render.supports)
EPILOGUE = epilogue.rule("cuda.cublas_epilogue", "cuda", codegen.generate, render.supports)

#: what fw_cuda registers through ``fw_register_fusion_rules``
RULES = [EPILOGUE, POINTWISE]
