"""Timing helpers shared by fw_onednn's benchmarks."""

from __future__ import annotations

import statistics
import time


def seconds_per_call(fn, *args, seconds: float = 0.02) -> float:
    """Seconds per call of ``fn(*args)``: one untimed call, then back-to-back calls for
    ~``seconds``."""
    fn(*args)
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        elapsed = time.perf_counter() - start
        if elapsed > seconds:
            return elapsed / n
        n *= 2 if elapsed < seconds / 8 else 4


def in_turns(candidates: dict, rounds: int, pick=statistics.median) -> dict[str, float]:
    """Seconds per call of each ``name: (fn, args)``, the candidates taking turns for
    ``rounds`` rounds; ``pick`` chooses among the rounds (the median, or min for µs timings,
    where a shared machine only ever adds time)."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, (fn, args) in candidates.items():
            times[name].append(seconds_per_call(fn, *args))
    return {name: pick(ts) for name, ts in times.items()}
