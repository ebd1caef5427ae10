"""Kernel chains as the dispatch table composes them, for testing fast paths against the
generic kernels they stand above."""

from fw_core import kernel_chain
from fw_core.records import KernelSpec


def above(generic: dict, specs: list) -> dict:
    """{op: the composed kernel} for each guarded spec over ``generic[op]``."""
    return {spec.op: kernel_chain.compose([(spec, "fw_cpu"),
                                           (KernelSpec(spec.op, "cpu", generic[spec.op]),
                                            "fw_cpu")])
            for spec in specs}
