"""The CPU's fusion rules: the records fw_cpu registers through ``fw_register_fusion_rules``.

- ``cpu.numba_pointwise``: a chain of elementwise / broadcasting ops, optionally closed by a
  sum / mean / sum_to, as one Numba loop (:mod:`.codegen`).
- ``cpu.blas_epilogue``: a matmul / linear / conv followed by elementwise ops: the existing
  BLAS-backed kernel computes the product, then one generated loop applies the epilogue, in
  place on the product's buffer when nothing else reads it (the device-neutral part lives in
  :mod:`fw_core.compile.epilogue`; this rule gives it the Numba loop generator).
"""

from __future__ import annotations

from fw_core.compile import epilogue
from fw_core.records import FusionRule, Structure

from . import render

_POINTWISE = frozenset([Structure.ELEMENTWISE, Structure.BROADCAST])


def rules() -> list[FusionRule]:
    return [
        FusionRule(name="cpu.numba_pointwise", device="cpu",
                   structures=_POINTWISE | {Structure.REDUCTION},
                   generate=_generate_pointwise, supports=render.supports),
        epilogue.rule("cpu.blas_epilogue", "cpu", _generate_pointwise, render.supports),
    ]


def _generate_pointwise(group):
    from . import codegen  # imports Numba: only when a kernel is needed

    return codegen.generate(group)
