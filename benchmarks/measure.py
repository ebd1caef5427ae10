"""The measurements behind ``benchmarks/run.py``; each runs in a fresh process of its own.

    python -m benchmarks.measure mode  --workload W --mode M --weights W.npz --out R.json [--quick]
    python -m benchmarks.measure pairs --workload W --modes M1,M2 --weights W.npz --out R.json

``mode``: one (workload, mode) alone in the process, so its peak RSS (``ru_maxrss``) is that
mode's own: training samples/s, inference latency per batch size (median of single calls),
compile time (the first calls minus as many steady calls). PyTorch eager times its default and its
``fused=True`` optimizer in alternating rounds and reports the faster.
``pairs``: fw and PyTorch eager loaded in one process, timed in alternating rounds; each ratio
is the median of the per-round ratios (fw time / PyTorch time: above 1, fw is slower), so a
slow spell of a shared machine hits both sides of a ratio.
``machine_limits()``: float32 GEMM GFLOP/s and copy GB/s, the machine's ceilings.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.workloads import WORKLOADS
from benchmarks.workloads.modes import PAIRS, ModeError, Session


@dataclass(frozen=True)
class Budget:
    """How long to measure: untimed calls first, timed rounds, seconds per training round,
    single calls per inference median."""

    warmup: int
    rounds: int
    round_s: float
    infer_calls: int


FULL = Budget(warmup=5, rounds=7, round_s=0.5, infer_calls=1000)
QUICK = Budget(warmup=3, rounds=2, round_s=0.02, infer_calls=10)


def seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def per_call(fn, calls: int, *args) -> float:
    """Median seconds of ``calls`` single calls."""
    return statistics.median(seconds(fn, *args) for _ in range(calls))


def per_step(fn, steps: int) -> float:
    """Mean seconds per call over ``steps`` back-to-back calls (one training round)."""
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, in MiB.

    Linux's ``VmHWM`` (the high-water mark of this process image) where there is one:
    ``ru_maxrss`` also counts the parent's peak from before the ``exec`` (Linux carries it
    over), so every child of a runner that once held 600 MiB would report 600 MiB.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start(budget: Budget, call, *args) -> tuple[float, float]:
    """The first ``1 + warmup`` calls, then a steady one: how many seconds the first calls
    took beyond as many steady calls (compiling, with any recompiles on early calls such as a
    compiled optimizer's once its state exists), and the steady call's seconds."""
    early = [seconds(call, *args) for _ in range(1 + budget.warmup)]
    steady = per_call(call, 3, *args)
    return sum(early) - len(early) * steady, steady


def train_rounds(sessions: dict, budget: Budget) -> dict[str, list[float]]:
    """Seconds per training step of each session, one figure per round; the sessions take
    turns within each round. Steps per round are sized on the slowest session."""
    slowest = max(per_call(s.train, 1) for s in sessions.values())
    steps = max(1, round(budget.round_s / slowest))
    times = {name: [] for name in sessions}
    for _ in range(budget.rounds):
        for name, s in sessions.items():
            times[name].append(per_step(s.train, steps))
    return times


def measure_mode(workload, mode: str, weights: dict, budget: Budget) -> dict:
    """One (workload, mode): throughput, latencies, compile times and peak RSS."""
    result = {}
    try:
        sessions = {"default": Session(workload, mode, weights)}
        if mode == "torch_eager":
            sessions["fused"] = Session(workload, mode, weights, "fused")
        extra = [start(budget, s.train)[0] for s in sessions.values()]
        times = {v: statistics.median(t) for v, t in train_rounds(sessions, budget).items()}
        best = min(times, key=times.get)
        result["train_samples_per_s"] = workload.train_batch / times[best]
        if mode == "torch_eager":
            result["optimizer"] = best
            result.update({f"train_samples_per_s_{v}": workload.train_batch / t
                           for v, t in times.items()})
        if mode.endswith(("compiled", "compile")):
            result["compile_s"] = extra[0]
        session = sessions[best]
        session.eval()
        infer_compile = 0.0
        for batch in workload.infer_batches:
            infer_compile += start(budget, session.infer, batch)[0]
            result[f"infer_b{batch}_ms"] = 1e3 * per_call(session.infer, budget.infer_calls,
                                                          batch)
        if mode.endswith(("compiled", "compile")):
            result["infer_compile_s"] = infer_compile
        reported = session.reported_compile_s()
        if reported is not None:
            result["fw_reported_compile_s"] = reported
        explanation = session.explain()
        if explanation is not None:
            result["explain"] = explanation
    except ModeError as e:  # figures measured before the failure stay
        result["error"] = str(e)
    result["peak_rss_mib"] = peak_rss_mib()
    return result


def measure_pairs(workload, modes: list[str], weights: dict, budget: Budget) -> dict:
    """Time ratios fw mode / PyTorch eager (its faster optimizer) for every pair of PAIRS
    whose both modes are in ``modes``, from alternating rounds in this one process."""
    pairs = [p for p in PAIRS if p[0] in modes and p[1] in modes]
    if not pairs:
        return {}
    sessions, errors = {}, {}
    for mode in dict.fromkeys(p[0] for p in pairs):
        try:
            sessions[mode] = Session(workload, mode, weights)
            start(budget, sessions[mode].train)
        except ModeError as e:
            errors[mode] = str(e)
    for variant in ("default", "fused"):
        sessions[variant] = Session(workload, "torch_eager", weights, variant)
        start(budget, sessions[variant].train)
    times = {"train": train_rounds(sessions, budget)}
    rounds = max(2, budget.rounds)
    for session in sessions.values():
        session.eval()
    for batch in workload.infer_batches:
        for name, session in list(sessions.items()):
            try:
                start(budget, session.infer, batch)
            except ModeError as e:
                errors[name] = str(e)
                del sessions[name]
        calls = max(1, budget.infer_calls // rounds)
        times[f"infer_b{batch}"] = {name: [] for name in sessions}
        for _ in range(rounds):
            for name, session in sessions.items():
                times[f"infer_b{batch}"][name].append(per_call(session.infer, calls, batch))
    return {f"{mine}/{theirs}": ({"error": errors[mine]} if mine in errors
                                 else _ratios(times, mine)) for mine, theirs in pairs}


def _ratios(times: dict, mine: str) -> dict:
    """Median per-round ratio of ``mine`` over PyTorch eager's faster optimizer variant (the
    variant is chosen on the training rounds and kept for inference, where it plays no part)."""
    train = times["train"]
    torch = min(("default", "fused"), key=lambda v: statistics.median(train[v]))
    found = {"torch_optimizer": torch}
    for figure, by_session in times.items():
        if mine in by_session:
            found[figure] = statistics.median(
                m / t for m, t in zip(by_session[mine], by_session[torch]))
    return found


def machine_limits(quick: bool = False) -> dict:
    """float32 GEMM GFLOP/s (NumPy 2048x2048 matmul) and copy GB/s (``np.copyto`` of a large
    array, bytes read plus bytes written, as STREAM counts a copy); best of a few runs."""
    n = 2048
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    gemm = min(seconds(np.matmul, a, b) for _ in range(3 if quick else 10))
    size = (32 if quick else 256) * 2**20 // 4
    src, dst = np.ones(size, np.float32), np.zeros(size, np.float32)
    copy = min(seconds(np.copyto, dst, src) for _ in range(3 if quick else 10))
    return {"gemm_f32_gflop_s": 2 * n**3 / gemm / 1e9, "copy_gb_s": 2 * src.nbytes / copy / 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description="one measurement, in this fresh process")
    parser.add_argument("what", choices=("mode", "pairs"))
    parser.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    parser.add_argument("--mode", help="the mode (for 'mode')")
    parser.add_argument("--modes", help="comma-separated modes (for 'pairs')")
    parser.add_argument("--weights", required=True, help=".npz of the initial weights")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    workload, budget = WORKLOADS[args.workload], QUICK if args.quick else FULL
    with np.load(args.weights) as stored:
        weights = dict(stored)
    if args.what == "mode":
        result = measure_mode(workload, args.mode, weights, budget)
    else:
        result = measure_pairs(workload, args.modes.split(","), weights, budget)
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
