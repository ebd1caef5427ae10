"""Per-op eager overhead on tiny tensors, fw against PyTorch, measured in the same run.

    python benchmarks/dispatch.py [--json PATH] [--number N]

Tiny tensors make the kernel negligible, so the figure is the framework's own cost per op:
argument handling, dispatch, wrapping the result and (with grad) recording the graph.
Run it with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (they slow NumPy on some machines);
this script never changes them itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import timeit

import numpy as np

import fw_core as fw

CASES = {
    "add": ("a + b", "ta + tb"),
    "add_scalar": ("a + 1.0", "ta + 1.0"),
    "mul": ("a * b", "ta * tb"),
    "relu": ("fw.relu(a)", "torch.relu(ta)"),
    "exp": ("fw.exp(a)", "torch.exp(ta)"),
    "matmul_4x4": ("m @ m2", "tm @ tm2"),
    "sum": ("a.sum()", "ta.sum()"),
}


def paired_us(ours: str, theirs: str, env: dict, number: int, repeat: int = 9):
    """Median time per call of each statement, and the median of the per-round ratios.

    fw and torch alternate round by round, so a slow spell of a shared machine hits both
    sides of a ratio rather than one.
    """
    timers = timeit.Timer(ours, globals=env), timeit.Timer(theirs, globals=env)
    for t in timers:
        t.timeit(number // 10)  # warm-up
    fw_runs, torch_runs = [], []
    for _ in range(repeat):
        fw_runs.append(timers[0].timeit(number) / number * 1e6)
        torch_runs.append(timers[1].timeit(number) / number * 1e6)
    ratios = [f / t for f, t in zip(fw_runs, torch_runs)]
    return statistics.median(fw_runs), statistics.median(torch_runs), statistics.median(ratios)


def environment(torch, grad: bool) -> dict:
    rng = np.random.default_rng(0)
    one = rng.standard_normal(1).astype(np.float32)
    four = rng.standard_normal((4, 4)).astype(np.float32)
    env = {"fw": fw, "torch": torch}
    for prefix, make in (("", lambda v: fw.tensor(v, requires_grad=grad)),
                         ("t", lambda v: torch.tensor(v, requires_grad=grad))):
        env[prefix + "a"], env[prefix + "b"] = make(one), make(one * 2)
        env[prefix + "m"], env[prefix + "m2"] = make(four), make(four.T.copy())
    return env


def main(number: int) -> dict:
    import torch

    torch.set_num_threads(int(os.environ.get("FW_BENCH_THREADS", "2")))
    results = {}
    for grad in (False, True):
        env = environment(torch, grad)
        for name, (ours, theirs) in CASES.items():
            fw_us, torch_us, ratio = paired_us(ours, theirs, env, number)
            key = f"{name}{' +grad' if grad else ''}"
            results[key] = {"fw_us": round(fw_us, 3), "torch_us": round(torch_us, 3),
                            "ratio": round(ratio, 3)}
    return results


def table(results: dict) -> str:
    lines = ["| op | fw µs | torch µs | fw / torch (median of paired rounds) |",
             "| --- | ---: | ---: | ---: |"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['fw_us']:.2f} | {r['torch_us']:.2f} | {r['ratio']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--number", type=int, default=20000, help="calls per timing run")
    args = parser.parse_args()
    found = main(args.number)
    print(table(found))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(found, f, indent=2)
