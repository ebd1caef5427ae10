"""fw_onednn's kernels against fw_cpu (NumPy/OpenBLAS) and PyTorch, measured in one run.

    python plugins/fw_onednn/benchmarks/kernels.py [--threads 2] [--rounds 7]

1. Per-call cost of a 4×4 float32 matmul, in µs: oneDNN's ``dnnl_primitive_execute`` alone (a
   C loop: the kernel itself), fw_onednn as fw's dispatch calls it (guard + kernel), the
   same primitive through plain ctypes, fw_cpu's NumPy kernel, torch.matmul, and ``fw.matmul``
   on tensors with and without fw_onednn loaded.
2. GFLOP/s at the benchmark workloads' shapes (mlp and transformer linears, their backward
   products, attention's batched products with a transposed operand): fw_onednn, torch, and
   fw_cpu as fw runs it with fw_onednn loaded (OpenBLAS held to one thread), taking turns in
   each round; then NumPy on all threads, timed in a block of its own (alternating it with
   oneDNN's spinning OpenMP threads would measure the fight, see threads.py).
3. What the first call of a layout costs: the primitive build (nothing compiles at run time).

Each timing repeats a call for ~20 ms; per-call figures are the best of the rounds, GFLOP/s the
median. The machine is shared: compare only figures of one run.
"""

from __future__ import annotations

import time

import numpy as np
from timing import in_turns, start


def _execute_alone(entry, count=200_000) -> float:
    """Seconds per ``dnnl_primitive_execute`` of ``entry``, called from a C loop."""
    from fw_onednn import execute

    loop = execute.repeat
    loop(entry.handles, 10)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        loop(entry.handles, count)
        best = min(best, (time.perf_counter() - start) / count)
    return best


def _plain_ctypes(entry):
    """The same primitive run through plain ctypes calls: the mechanism fw_onednn did not take."""
    from fw_onednn import capi

    handles = [int(h) for h in entry.handles]
    primitive, stream, nargs, args, mem_a, mem_b, mem_out = handles

    def run(a, b):
        out = np.empty(entry.out_shape, np.float32)
        capi.memory_set_data_handle(mem_a, a.ctypes.data)
        capi.memory_set_data_handle(mem_b, b.ctypes.data)
        capi.memory_set_data_handle(mem_out, out.ctypes.data)
        capi.check(capi.primitive_execute(primitive, stream, nargs, args), "matmul", "execute")
        return out

    return run


def call_costs(fw, torch, cpu, rounds: int) -> None:
    """Section 1: the per-call cost of a 4x4 matmul on each path."""
    import fw_onednn
    from fw_onednn import kernels
    from fw_onednn.cache import PRIMITIVES

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    x, y = fw.from_numpy(a), fw.from_numpy(b)
    chain = fw.ops.registry.kernel("matmul", "cpu")
    default = in_turns({"": (fw.matmul, (x, y))}, rounds, min)[""]
    fw_onednn.set_min_work(0, matrix_vector=True)  # a 4x4 product is fw_cpu's by default
    try:
        kernels.takes_matmul(a, b)
        entry = PRIMITIVES.latest()
        out = np.empty((4, 4), np.float32)
        results = in_turns({
            "fw_onednn via fw's cpu kernel (guard + kernel)": (chain, (a, b)),
            "fw_onednn C call only (primitive in hand)":
                (entry.run, (entry.handles, a, b, out)),
            "fw_onednn primitive's call (C call, allocating the result)": (entry.call, (a, b)),
            "same primitive through plain ctypes": (_plain_ctypes(entry), (a, b)),
            "fw_cpu kernel (NumPy a.dot(b))": (cpu["matmul"], (a, b)),
            "torch.matmul": (torch.matmul, (ta, tb)),
            "fw.matmul on tensors, served by fw_onednn": (fw.matmul, (x, y)),
        }, rounds, min)
        kernel = _execute_alone(entry)
    finally:
        fw_onednn.set_min_work(kernels.DEFAULT_MIN_WORK)
    results["fw.matmul on tensors, default policy (fw_cpu serves 4x4)"] = default
    others = [i.name for i in fw.plugins.info() if i.name not in ("fw_core", "fw_onednn")]
    fw.plugins.use(others)
    try:
        results["fw.matmul on tensors, fw_onednn not loaded"] = in_turns(
            {"": (fw.matmul, (x, y))}, rounds, min)[""]
    finally:
        fw.plugins.use(None)
    print(f"\n## Per call, 4x4 float32 matmul (µs, best of {rounds}; oneDNN impl {entry.impl})")
    print(f"{'dnnl_primitive_execute alone (C loop)':58} {kernel * 1e6:7.2f}")
    for name, seconds in results.items():
        above = f"  ({(seconds - kernel) * 1e6:+.2f} above the kernel)" if "onednn" in name \
            or "ctypes" in name else ""
        print(f"{name:58} {seconds * 1e6:7.2f}{above}")


#: name -> (op, einsum equation or None, operand shapes): "linear" operands are (x, weight, bias),
#: "matmul" and "einsum" (a, b); a trailing "T" transposes the last two dimensions of a
#: contiguous operand (a view). The einsums are the backward products autograd runs.
SHAPES = {
    "mlp fc1 linear 128x784 -> 512": ("linear", None, (128, 784), (512, 784), (512,)),
    "mlp fc1 grad_x matmul 128x512 @ 512x784": ("matmul", None, (128, 512), (512, 784)),
    "mlp fc1 grad_w einsum ao,ai->oi": ("einsum", "ao,ai->oi", (128, 512), (128, 784)),
    "transformer ffn linear 1024x128 -> 512": ("linear", None, (1024, 128), (512, 128), (512,)),
    "transformer ffn linear 1024x512 -> 128": ("linear", None, (1024, 512), (128, 512), (128,)),
    "transformer qkv linear (16,64,128) -> 384":
        ("linear", None, (16, 64, 128), (384, 128), (384,)),
    "transformer ffn grad_w einsum abo,abi->oi":
        ("einsum", "abo,abi->oi", (16, 64, 512), (16, 64, 128)),
    "attention scores (16,4,64,32) @ k.T":
        ("matmul", None, (16, 4, 64, 32), (16, 4, 64, 32, "T")),
    "attention values (16,4,64,64) @ (16,4,64,32)":
        ("matmul", None, (16, 4, 64, 64), (16, 4, 64, 32)),
    "attention grad_q einsum abnm,abkm->abnk":
        ("einsum", "abnm,abkm->abnk", (16, 4, 64, 64), (16, 4, 64, 32, "T")),
    "attention grad_k einsum abnk,abnm->abkm":
        ("einsum", "abnk,abnm->abkm", (16, 4, 64, 32), (16, 4, 64, 64)),
    "lstm_cell gates linear 32x128 -> 512": ("linear", None, (32, 128), (512, 128), (512,)),
    "cnn fc linear 64x1568 -> 128": ("linear", None, (64, 1568), (128, 1568), (128,)),
}


def _operand(rng, shape):
    if shape[-1] == "T":
        return np.swapaxes(rng.standard_normal(shape[:-1]).astype(np.float32), -1, -2)
    return rng.standard_normal(shape).astype(np.float32)


def _flops(op, equation, arrays) -> float:
    if op == "einsum":
        ta, tb = equation.split("->")[0].split(",")
        sizes = dict(zip(ta, arrays[0].shape)) | dict(zip(tb, arrays[1].shape))
        return 2.0 * np.prod(list(sizes.values()))
    if op == "linear":
        x, w = arrays[:2]
        return 2.0 * np.prod(x.shape[:-1]) * w.shape[0] * w.shape[1]
    a, b = arrays
    return 2.0 * np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])) * a.shape[-2] * \
        a.shape[-1] * b.shape[-1]


def _implementations(fw, torch, cpu, op, equation):
    """(fw's cpu kernel, torch, fw_cpu's kernel, fw_onednn's guard) as functions of arrays."""
    from fw_onednn import kernels

    chain = fw.ops.registry.kernel(op, "cpu")
    if op == "einsum":
        return (lambda *a: chain(*a, equation=equation),
                lambda *t: torch.einsum(equation, *t),
                lambda *a: cpu["einsum"](*a, equation=equation),
                lambda *a: kernels.takes_einsum(*a, equation=equation))
    theirs = torch.nn.functional.linear if op == "linear" else torch.matmul
    return chain, theirs, cpu[op], getattr(kernels, f"takes_{op}")


def throughput(fw, torch, cpu, rounds: int, threads: int) -> None:
    """Section 2: GFLOP/s at the workloads' shapes."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    print(f"\n## GFLOP/s (float32, {threads} threads; fw_cpu runs with OpenBLAS held to one thread "
          "while fw_onednn is loaded)")
    print(f"{'shape':46} {'fw_onednn':>9} {'torch':>7} {'fw_cpu':>7} {'numpy*':>7} "
          f"{'onednn/np*':>10} {'onednn/torch':>12}")
    for name, (op, equation, *shapes) in SHAPES.items():
        arrays = [_operand(rng, s) for s in shapes]
        tensors = [torch.from_numpy(a) for a in arrays]  # the same memory and strides
        ours, theirs, fw_cpu, takes = _implementations(fw, torch, cpu, op, equation)
        served = takes(*arrays)
        medians = in_turns({"onednn": (ours, arrays), "torch": (theirs, tensors),
                            "fw_cpu": (fw_cpu, arrays)}, rounds)
        with threadpool_limits(limits=threads, user_api="blas"):
            medians["numpy"] = in_turns({"numpy": (fw_cpu, arrays)}, rounds)["numpy"]
        flops = _flops(op, equation, arrays)
        rate = {k: flops / v / 1e9 for k, v in medians.items()}
        mark = "" if served else " (refused)"
        print(f"{name + mark:46} {rate['onednn']:9.1f} {rate['torch']:7.1f} {rate['fw_cpu']:7.1f} "
              f"{rate['numpy']:7.1f} {rate['onednn'] / rate['numpy']:10.2f} "
              f"{rate['onednn'] / rate['torch']:12.2f}")
    print("numpy*: NumPy/OpenBLAS on all threads, timed in a block of its own")


def first_calls(fw) -> None:
    """Section 3 (run first, in a fresh process): what a new layout costs once."""
    import fw_onednn

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((256, 300), np.float32), rng.standard_normal((300, 200), np.float32)
    chain = fw.ops.registry.kernel("matmul", "cpu")
    timings = []
    for operands in ((a, b), (a[:128], b), (a[None], b[None])):
        start = time.perf_counter()
        chain(*operands)
        timings.append(time.perf_counter() - start)
    print("\n## First calls of a layout")
    for what, seconds in zip(("the first in the process (primitive build)",
                              "a new shape (primitive build)",
                              "a new operand rank (primitive build)"), timings):
        print(f"{what:58} {seconds * 1e3:8.1f} ms")
    print(f"cache: {fw_onednn.cache_info()}")


def main() -> None:
    args, fw, torch = start(__doc__, "fw_onednn kernels")
    import scipy.special

    from fw_cpu.kernels import linalg

    cpu = linalg.kernels(np, scipy.special)
    first_calls(fw)
    call_costs(fw, torch, cpu, args.rounds)
    throughput(fw, torch, cpu, args.rounds, args.threads)


if __name__ == "__main__":
    main()
