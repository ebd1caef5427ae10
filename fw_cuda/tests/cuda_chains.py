"""A hand-written cuda kernel chained above a generic table, as the dispatch table chains it."""

from functools import partial

from fw_core import kernel_chain
from fw_core.records import KernelSpec
from fw_cuda.kernels import run_guarded


def chained(generic: dict, guards: dict) -> dict:
    """{op: the composed kernel}: the guarded kernel of each of ``guards`` over ``generic[op]``."""
    return {op: kernel_chain.compose([
        (KernelSpec(op, "cuda", partial(run_guarded, op, guard), priority=1, guard=guard),
         "fw_cuda"),
        (KernelSpec(op, "cuda", generic[op]), "fw_cuda")]) for op, guard in guards.items()}
