"""Each GEMM and convolution phase of one fw eager training step, as a fraction of oneDNN's own
rate at that shape; run by ``benchmarks/run.py`` in a fresh process of its own.

    python -m benchmarks.phases --workload W [--weights W.npz] [--out R.json] [--quick]

Without ``--weights`` the workload starts from its PyTorch-initialised weights (as run.py's);
without ``--out`` the phases are printed as run.py's markdown table.

1. One training step (forward, then backward) of the workload in fw eager, with fw_onednn
   loaded, is recorded through an inspector (``fw.inspectors``): every call of a product or
   convolution op (:data:`OPS`) with its raw arrays (shapes and strides, views included) and
   attributes. Identical calls are one phase, counted once per step.
2. For each phase, in alternating rounds: fw's cpu kernel for the op (``fw.ops.kernel(op,
   "cpu")``: the guards and whichever kernel they choose, as fw's dispatch runs it) on the
   recorded arrays, against oneDNN's own primitive for the same shape and strides executed
   alone in a compiled loop (``dnnl_primitive_execute`` only: no guard, no allocation, no
   per-call binding, no reorders into its blocked layouts). A product is built as fw_onednn
   builds it (its planners) even where fw_onednn's size policy leaves it to fw_cpu; a
   convolution is fw_onednn's own program, of which only the convolution primitive is timed.
3. Per phase: FLOP/s of each (2 FLOPs per multiply-add, from the best round of each) and
   their ratio, fw over oneDNN. Per workload: the time-weighted total, oneDNN's seconds over
   fw's for all the step's phases together.

The result: ``{"phases": [{op, phase, module, shapes, transposed, equation, calls, gflop,
served_by, fw_s, fw_gflop_s, onednn_s, onednn_gflop_s, onednn_impl, fraction}, ...],
"fw_ms": ..., "onednn_ms": ..., "fraction": ..., "untimed": phases oneDNN has no primitive
for, "others_cpu": ...}``, or ``{"error": ...}`` when fw_onednn is not loaded. The best round
of each is taken (a shared machine only ever adds time). ``others_cpu`` (per phase and for the
whole measurement) is the share of the machine's CPU time that other processes used meanwhile
(Linux's ``/proc/stat`` less this process's own; None elsewhere): a 2-thread OpenMP team
whose thread waits for a core loses a time slice at every barrier, far more than a
single-threaded NumPy call loses, so a phase timed while others ran says little.

Not phases here: ops whose kernels run products inside them, such as
``scaled_dot_product_attention``'s forward (its backward is matmuls, which are) and the recurrent
layers (``lstm_layer``: oneDNN's LSTM primitive, one call per layer and direction).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.workloads import WORKLOADS
from benchmarks.workloads.common import build_model, fw_lib

#: the product and convolution ops whose calls are phases
PRODUCTS = ("matmul", "bmm", "linear", "einsum")
CONVOLUTIONS = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
                "conv1d_weight_grad", "conv2d_weight_grad")
OPS = PRODUCTS + CONVOLUTIONS
ROUNDS, QUICK_ROUNDS = 15, 2
ROUND_S, QUICK_ROUND_S = 0.01, 0.002  # seconds each contender runs per round (3 batches)


class OthersCPU:
    """The share of all cores' time that other processes used since this was made: ``share()``
    (None where ``/proc/stat`` is missing)."""

    def __init__(self):
        self._start = self._now()

    @staticmethod
    def _now() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat") as stat:
                fields = [int(v) for v in stat.readline().split()[1:8]]
        except OSError:
            return None
        hz, own = os.sysconf("SC_CLK_TCK"), os.times()
        return sum(fields) / hz, (fields[3] + fields[4]) / hz, own.user + own.system

    def share(self) -> float | None:
        end = self._now()
        if end is None or self._start is None or end[0] <= self._start[0]:
            return None
        total, idle, own = (e - s for e, s in zip(end, self._start))
        return max(0.0, (total - idle - own) / total)


def record_step(name: str, weights: dict) -> list[dict]:
    """The product and convolution calls of one fw eager training step of workload ``name``,
    one entry per distinct call: op, phase, module, arrays, attrs, calls per step."""
    import fw_core as fw
    from fw_core.records import Inspector

    workload, lib = WORKLOADS[name], fw_lib()
    model = build_model(workload, lib, weights)
    x, y = (fw.tensor(a) for a in workload.data(workload.train_batch, np.random.default_rng(0)))
    found: dict = {}
    phase = ["forward"]

    def on_op(event) -> None:
        if event.op.name not in OPS or event.phase != "forward":  # "backward": a VJP's summary
            return
        arrays = tuple(getattr(t, "_data", t) for t in event.inputs)
        key = (event.op.name, tuple(_layout(a) for a in arrays), repr(sorted(event.attrs.items())))
        if key in found:
            found[key]["calls"] += 1
        else:
            found[key] = {"op": event.op.name, "phase": phase[0], "module": event.module,
                          "arrays": arrays, "attrs": dict(event.attrs), "calls": 1}

    inspector = Inspector(name="benchmarks.phases", on_op=on_op)
    for _ in range(2):  # the recorded step is a steady one (kernels compiled, caches filled)
        model.zero_grad()
        workload.loss(lib, model(x), y).backward()
    found.clear()
    model.zero_grad()
    with fw.inspectors.activated(inspector):
        loss = workload.loss(lib, model(x), y)
        phase[0] = "backward"
        loss.backward()
    return list(found.values())


def _layout(a) -> tuple | None:
    return (a.shape, a.strides, a.dtype.str) if isinstance(a, np.ndarray) else None


def flops(op: str, arrays: tuple, attrs: dict, out: np.ndarray) -> float:
    """Floating-point operations of one call with result ``out`` (2 per multiply-add; a bias
    add is not counted)."""
    if op == "einsum":
        terms = attrs["equation"].split("->")[0].split(",")
        sizes = {}
        for term, a in zip(terms, arrays):
            sizes.update(zip(term, a.shape))
        return 2.0 * math.prod(sizes.values())
    if op in PRODUCTS:  # every result element is a dot product along the contracted axis
        return 2.0 * out.size * arrays[0].shape[-1]
    groups = attrs.get("groups", 1)
    if op.endswith("_weight_grad"):  # (x, grad): every grad element meets C/groups x kernel
        x, g = arrays
        return 2.0 * g.size * (x.shape[-len(attrs["kernel_size"]) - 1] // groups) * \
            math.prod(attrs["kernel_size"])
    x, w = arrays[:2]
    kernel = math.prod(w.shape[2:])
    if op.startswith("conv_transpose"):  # every input element spreads to C_out/groups x kernel
        return 2.0 * x.size * w.shape[1] * kernel
    return 2.0 * out.size * w.shape[1] * kernel  # every output element: C_in/groups x kernel


def onednn_primitive(op: str, arrays: tuple, attrs: dict):
    """(a function running oneDNN's primitive for this call ``n`` times -> seconds, its
    implementation), or (None, why not)."""
    from fw_onednn import conv, equations, layouts, primitive

    if op in PRODUCTS:
        a, b = arrays[:2]
        if op == "einsum":
            plan = equations.einsum(attrs["equation"], a.shape, a.strides, b.shape, b.strides)
        elif op == "linear":
            bias = arrays[2] if len(arrays) > 2 else None
            plan = layouts.linear(a.shape, a.strides, b.shape, b.strides,
                                  None if bias is None else bias.shape,
                                  None if bias is None else bias.strides)
        else:
            plan = layouts.matmul(a.shape, a.strides, b.shape, b.strides)
        built = plan if isinstance(plan, str) else primitive.matmul(plan)
        if isinstance(built, (str, primitive.Refusal)):
            return None, str(built)
        out = np.empty(built.out_shape, np.float32)
        operands = [v for v in arrays if v is not None]

        def bind():
            built.run(built.handles, *operands, out)
        return _timed_loop(bind, built.handles[:4].copy(), keep=(built, out)), built.impl
    takes = getattr(conv, f"takes_{op}")
    if not takes(*arrays, **attrs):
        return None, str(conv._found.entry)
    program = conv._found.entry  # reorders into oneDNN's layouts, the convolution, reorders back
    out = np.empty(program.out_shape, np.float32)
    operands = [v for v in arrays if v is not None]
    if len(operands) == 3:
        operands[2] = np.ascontiguousarray(operands[2])  # the bias, as fw_onednn passes it

    def bind():
        program(*operands, out)
    return _timed_loop(bind, _main_step(program), keep=(program, out)), program.impl


def _main_step(program) -> np.ndarray:
    """``(primitive, stream, nargs, args)`` of a program's convolution: the step with more
    than a reorder's two arguments."""
    handles = program._handles
    bindings, steps = int(handles[1]), int(handles[2])
    first = 3 + 3 * bindings
    for j in range(steps):
        at = first + 3 * j
        if int(handles[at + 1]) > 2:
            return np.array([handles[at], handles[0], handles[at + 1], handles[at + 2]],
                            np.uint64)
    raise ValueError(f"{program!r} has no step with more than two arguments")


def _timed_loop(bind, quad: np.ndarray, keep: tuple):
    """``run(n) -> seconds`` of ``n`` executes of ``quad``'s primitive, its memory objects bound
    to this phase's arrays first (fw's own calls of a shared program bind them to theirs)."""
    from fw_onednn import execute

    loop = execute.repeat

    def run(n: int) -> float:
        bind()
        start = time.perf_counter()
        status = loop(quad, n)
        elapsed = time.perf_counter() - start
        if status:
            raise RuntimeError(f"dnnl_primitive_execute failed ({status})")
        return elapsed
    run.keep = keep  # the primitive, and the arrays its memory objects point at
    return run


def seconds_per_call(fn, seconds: float) -> float:
    """Seconds per call of ``fn()``: back-to-back calls for about ``seconds``."""
    return loop_seconds_per_call(lambda n: _repeat(fn, n), seconds)


def _repeat(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - start


def loop_seconds_per_call(run, seconds: float) -> float:
    """Seconds per call of ``run(n) -> seconds of n calls``: the best of three batches, each
    ``n`` calls long, ``n`` grown until a batch takes about ``seconds / 3``."""
    n, batch = 1, seconds / 3
    while (elapsed := run(n)) < batch:
        n *= 2 if elapsed < batch / 8 else 4
    return min([elapsed, run(n), run(n)]) / n


def measure_phase(call: dict, rounds: int, round_s: float) -> dict:
    """One phase: fw's kernel and oneDNN's primitive in alternating rounds."""
    import fw_core as fw

    op, arrays, attrs = call["op"], call["arrays"], call["attrs"]
    served = fw.plugins.serving(op, "cpu", arrays, attrs)
    chain = fw.ops.kernel(op, "cpu")
    onednn, impl = onednn_primitive(op, arrays, attrs)
    out = chain(*arrays, **attrs)  # untimed: a first call may build a primitive or compile
    if onednn is not None:
        onednn(1)
    work = flops(op, arrays, attrs, out)
    result = {"op": op, "phase": call["phase"], "module": call["module"],
              "shapes": [None if a is None else list(a.shape) for a in arrays],
              "transposed": [isinstance(a, np.ndarray) and not a.flags.c_contiguous
                             for a in arrays],
              "equation": attrs.get("equation"), "calls": call["calls"], "gflop": work / 1e9,
              "served_by": served[0] if served else None}
    ours, theirs, others = [], [], OthersCPU()
    for _ in range(rounds):
        ours.append(seconds_per_call(lambda: chain(*arrays, **attrs), round_s))
        if onednn is not None:
            theirs.append(loop_seconds_per_call(onednn, round_s))
    fw_s = min(ours)  # a shared machine only ever adds time: the best round is the kernel's
    result.update(fw_s=fw_s, fw_gflop_s=work / fw_s / 1e9, onednn_impl=impl,
                  others_cpu=others.share())
    if onednn is None:
        result.update(onednn_s=None, onednn_gflop_s=None, fraction=None)
    else:
        onednn_s = min(theirs)
        result.update(onednn_s=onednn_s, onednn_gflop_s=work / onednn_s / 1e9,
                      fraction=onednn_s / fw_s)
    return result


def measure(name: str, weights: dict, quick: bool = False) -> dict:
    """Every GEMM and convolution phase of a training step of ``name``, and their total."""
    import fw_core as fw

    info = next((i for i in fw.plugins.info() if i.name == "fw_onednn"), None)
    if info is None or info.state != "loaded":
        return {"error": "fw_onednn is not loaded" + (f" ({info.state})" if info else "")}
    rounds, round_s = (QUICK_ROUNDS, QUICK_ROUND_S) if quick else (ROUNDS, ROUND_S)
    others = OthersCPU()
    phases = [measure_phase(c, rounds, round_s) for c in record_step(name, weights)]
    timed = [p for p in phases if p["onednn_s"] is not None]
    fw_s = sum(p["calls"] * p["fw_s"] for p in timed)
    onednn_s = sum(p["calls"] * p["onednn_s"] for p in timed)
    return {"phases": phases, "fw_ms": 1e3 * fw_s, "onednn_ms": 1e3 * onednn_s,
            "fraction": onednn_s / fw_s if fw_s else None,
            "untimed": len(phases) - len(timed), "others_cpu": others.share()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    parser.add_argument("--weights", help=".npz of the initial weights (default: the "
                        "workload's PyTorch-initialised ones)")
    parser.add_argument("--out", help="where the JSON result goes (default: print a table)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.weights:
        with np.load(args.weights) as stored:
            weights = dict(stored)
    else:
        from benchmarks.workloads.common import initial_weights

        weights = initial_weights(WORKLOADS[args.workload])
    result = measure(args.workload, weights, args.quick)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    else:
        from benchmarks.workloads.report import phase_table

        print(phase_table({args.workload: result}))


if __name__ == "__main__":
    main()
