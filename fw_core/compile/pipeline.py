"""From a trace to a Plan: the passes in order, each one logged on the graph."""

from __future__ import annotations

import time

from .. import plugins
from ..ops.dispatch import missing_kernel
from .plan import Plan
from .trace import Tracer


def build_plan(tracer: Tracer, fusion_decision, allocate=None, known_fusions=None) -> Plan:
    """Run the passes over a finished trace and return the executable plan.

    ``fusion_decision(group, fused_s, unfused_s) -> bool`` says whether a fused group pays
    (the scheduler's call); ``known_fusions(group)`` returns an earlier decision for a group
    of the same structure, or None (a partial rebuild reuses them instead of measuring);
    ``allocate(shape, dtype)`` makes the plan's static buffers.
    """
    from .passes.accumulate import batch_accumulated_sums, drop_superseded_grads
    from .passes.constfold import fold_constants
    from .passes.cse import eliminate_common_subexpressions
    from .passes.dce import eliminate_dead_code
    from .passes.fuse import fuse
    from .passes.memplan import plan_memory
    from .passes.remat import rematerialize

    graph = tracer.graph
    device = tracer.device
    if device is None:
        from ..device import get

        device = get("cpu")

    def kernel_of(node):
        return device.kernels.get(node.op) or missing_kernel(node.op, device)

    timings = {}
    for name, run in (
        ("constfold", lambda: fold_constants(graph, kernel_of)),
        ("cse", lambda: eliminate_common_subexpressions(graph)),
        ("grads", lambda: drop_superseded_grads(graph)),
        ("accumulate", lambda: batch_accumulated_sums(graph)),
        ("dce", lambda: eliminate_dead_code(graph)),
        ("remat", lambda: rematerialize(graph)),
        ("fuse", lambda: fuse(graph, plugins.fusion_rules(device.type), fusion_decision,
                              known_fusions, lambda: device.spec.synchronize(device.index),
                              lambda array: device.spec.from_numpy(array, device.index))),
    ):
        start = time.perf_counter()
        run()
        timings[name] = time.perf_counter() - start
    start = time.perf_counter()
    memory_plan = plan_memory(graph)
    plan = Plan(graph, device, memory_plan, allocate)
    timings["memplan+codegen"] = time.perf_counter() - start
    graph.samples.clear()
    plan.timings = timings
    return plan
