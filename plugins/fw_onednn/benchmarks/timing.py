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


def warm_sessions(name: str, modes, batches=(1,)) -> dict:
    """``{mode: Session}`` of the workload ``name`` (``benchmarks/workloads``; the repository's
    root must be on ``sys.path``) from one set of initial weights, each compiled (fw from its
    third call) and warmed up by four training steps and inferences on ``batches``."""
    from benchmarks.workloads import WORKLOADS
    from benchmarks.workloads.common import initial_weights
    from benchmarks.workloads.modes import Session

    workload = WORKLOADS[name]
    weights = initial_weights(workload)
    sessions = {mode: Session(workload, mode, weights) for mode in modes}
    for session in sessions.values():
        for _ in range(4):
            session.train()
            for batch in batches:
                session.infer(batch)
    return sessions


def start(doc: str, title: str):
    """A benchmark's start: ``--threads`` (default: every CPU) and ``--rounds`` (default 7) from
    the command line, fw loaded with fw_onednn, fw's pools and PyTorch's on that many threads,
    and a first line naming ``title``, the machine and the versions. Returns (args, fw, torch).
    """
    import argparse
    import os
    import platform

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    import numpy as np
    import torch

    import fw_core as fw  # before any fw_cpu module: importing it loads the plugins
    import fw_onednn

    fw.plugins.require("fw_onednn")
    fw.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"# {title}: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{args.threads} threads, oneDNN {fw_onednn.version()} on {fw_onednn.cpu_isa()}, "
          f"torch {torch.__version__}, numpy {np.__version__}")
    return args, fw, torch
