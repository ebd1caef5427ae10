"""Which device, kernel or fused kernel ran each op and why (:func:`explain_dispatch`), and an
op's contract in plain words (:func:`describe`)."""

from __future__ import annotations

import fw_core as fw
from fw_core.compile.function import CompiledFunction
from fw_core.compile.ir import Effect, Group, Node
from fw_core.records import Structure

from .record import record

#: what each Jacobian structure means, for people
STRUCTURES = {
    Structure.ELEMENTWISE: "elementwise: output i depends on input i only (a diagonal Jacobian)",
    Structure.BROADCAST: "broadcast: elementwise after broadcasting the inputs to one shape",
    Structure.INJECTIVE: "injective: each output is one input element moved (reshape, slice, "
                         "gather); the Jacobian is 0/1 with one 1 per row",
    Structure.REDUCTION: "reduction: outputs combine input elements along some axes",
    Structure.CONTRACTION: "contraction: sums of products (matmul, conv)",
    Structure.OPAQUE: "opaque: no structure is assumed",
    Structure.NONE: "none: no function of its tensor inputs (creation, random draws)",
}


def explain_dispatch(fn, *args, **kwargs) -> str:
    """Run ``fn(*args, **kwargs)`` once under a recording and say, for every op, which device
    and kernel (and the plugin owning it) ran it, and why; CPU fallbacks are named.

    When ``fn`` is an ``fw.compile``'d function (or module), the recorded run is eager (plans
    run without inspectors), so the report adds the steps of its cached plans: which ops each
    fused group holds and the fusion rule that generated its kernel, and which ops run alone.
    ``fn`` really runs: a training step takes one more optimizer step.

    Example::

        print(fw_debugger.explain_dispatch(model, x))
    """
    with record() as trace:
        fn(*args, **kwargs)
    name = getattr(fn, "name", None) or getattr(fn, "__qualname__", type(fn).__name__)
    lines = [f"explain_dispatch({name}): {len(trace)} events"]
    for e in trace:
        where = f" in '{e.module}'" if e.module else ""
        if e.kind == "vjp":
            lines.append(f"  #{e.index} backward{where}: gradient rule of {e.op} done (its "
                         "ops are listed above it)")
            continue
        fallback = "  <- CPU FALLBACK" if "fallback" in e.kernel else ""
        lines.append(f"  #{e.index} {e.phase} {e.op}{where} on {e.device}: kernel from "
                     f"{e.kernel} ({e.dispatch}){fallback}")
    fallbacks = sorted({e.op for e in trace if "fallback" in e.kernel})
    if fallbacks:
        lines.append(f"CPU fallbacks (no kernel on the tensors' device; inputs copied to the CPU "
                     f"and back): {', '.join(fallbacks)}")
    if isinstance(fn, CompiledFunction):
        lines += _plans(fn)
    return "\n".join(lines)


def _plans(fn: CompiledFunction) -> list[str]:
    """The steps of a compiled function's cached plans, fused groups first-class."""
    lines = [f"{fn.name} is compiled: while recording it ran eagerly (inspectors watch every "
             "op; plans replay without them). Its cached plans:"]
    plans = fn.plans()
    if not plans:
        knobs = fw.scheduler.knobs()
        lines.append(f"  no plan yet: a signature compiles on its call {knobs.compile_after + 1} "
                     "made outside a recording (fw.scheduler.configure(compile_after=...)); "
                     "fn.explain() says what happened so far")
    for number, plan in enumerate(plans):
        steps = plan.graph.steps
        groups = sum(1 for s in steps if s.__class__ is Group)
        lines.append(f"  plan {number} on {plan.device}: {len(steps)} steps, {groups} fused "
                     "groups")
        lines += [f"    {_step(s)}" for s in steps]
    return lines


def _step(step) -> str:
    if step.__class__ is Group:
        ops = " + ".join(n.op.name for n in step.nodes)
        rule = step.rule.name if step.rule is not None else "no rule"
        where = f" in '{step.module}'" if step.module else ""
        return (f"fused {step.phase}{where}: [{ops}] -> one kernel by rule {rule} "
                f"({step.structure or 'mixed'}; {len(step.nodes)} ops, "
                f"{len(step.inputs)} inputs, {len(step.outputs)} outputs)")
    if step.__class__ is Node:
        where = f" in '{step.module}'" if step.module else ""
        return (f"alone {step.phase}{where}: {step.op.name} ({step.op.structure.value}) by "
                f"{fw.plugins.kernel_owner(step.op.name)}")
    if step.__class__ is Effect:
        return f"host step ({step.kind}): {step.what}"
    return repr(step)


def describe(op_name: str) -> str:
    """An op's contract in plain words: signature, what it computes, the structure of its
    Jacobian, where its linear approximation breaks (its anchor), what backward keeps, and
    which kernel runs it on each device and from which plugin.

    Example::

        print(fw_debugger.describe("relu"))
    """
    op = fw.ops.get(op_name)
    saves = " and ".join(sorted(op.saves)) or "nothing"
    if op.vjp is None:
        grad = "not differentiable"
    else:
        grad = ("differentiable, twice (its gradient rule is made of fw ops)"
                if op.twice_differentiable else "differentiable once")
    lines = [
        f"{op.signature}",
        f"  {op.doc}",
        f"  family: {op.family}; {grad}",
        f"  Jacobian: {STRUCTURES[op.structure]}",
        f"  anchor ({op.anchor.kind}): {op.anchor.says}"
        + ("; fw_debugger can measure where it bites" if op.anchor.region else ""),
        f"  backward keeps: {saves}",
    ]
    if op.float_result:
        lines.append("  integer and bool inputs are converted to the default float dtype first")
    rows = {r["device"]: r for r in fw.plugins.dispatch_table() if r["op"] == op.name}
    devices = fw.ops.devices_with_kernel(op)
    if not devices:
        lines.append("  kernels: none registered (install a device plugin that provides it)")
    for device in devices:
        row = rows.get(device, {"plugin": "unknown", "why": "not in the dispatch table"})
        lines.append(f"  kernel on {device}: from {row['plugin']} ({row['why']})")
    return "\n".join(lines)
