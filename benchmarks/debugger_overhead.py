"""What fw_debugger costs: the eager training step of the MLP and transformer workloads, with
the debugger not loaded, loaded but inactive, and with each of its modes active.

    python benchmarks/debugger_overhead.py [--workloads mlp,transformer] [--rounds 7]
                                           [--steps 2] [--quick] [--json out.json]

Every mode is timed in one process in alternating rounds (each round times every mode once,
in turn), and each ratio is the median of the per-round ratios to the loaded-but-inactive
step, so a slow spell of a shared machine hits both sides of a ratio. "Not loaded" reloads the
plugins without fw_debugger for its turn (``fw.plugins.use``) and with it afterwards; its ratio
is the cost of merely loading the plugin, which should be 1.00 up to noise (inspectors cost
nothing per op until active). Every step runs eagerly, as it does under the debugger. The
default run takes under a minute on two shared cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import fw_core as fw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import fw_lib  # noqa: E402


def _modes() -> dict:
    """Mode name -> function returning the context it runs under (None: no debugger)."""
    import fw_debugger

    return {
        "loaded, inactive": None,
        "not loaded": _without_debugger,
        "anomaly": lambda: fw_debugger.detect_anomaly(),
        "anomaly every=10": lambda: fw_debugger.detect_anomaly(every=10),
        "record (summaries)": lambda: fw_debugger.record(bounded=20_000),
        "breakpoint (never stops)": lambda: fw_debugger.break_on(op="softmax",
                                                                 when=lambda e: False),
    }


@contextlib.contextmanager
def _without_debugger():
    """The plugins reloaded without fw_debugger for the block, then with every plugin again."""
    names = [p.name for p in fw.plugins.info() if p.state == "loaded"
             and p.name not in ("fw_debugger", "fw_core")]
    fw.plugins.use(names)
    try:
        if "fw_debugger.anomaly" in fw.inspectors.registered():
            raise RuntimeError("fw_debugger is still loaded")
        yield
    finally:
        fw.plugins.use(None)


def train_step(name: str):
    """An eager training step of workload ``name`` (fw's own initialisation; fixed batch)."""
    workload = WORKLOADS[name]
    lib = fw_lib()
    fw.manual_seed(0)
    model = workload.build(lib)
    opt = workload.optimizer(lib.optim, model.parameters())
    x, y = (lib.tensor(a) for a in workload.data(workload.train_batch,
                                                  np.random.default_rng(0)))

    def step():
        opt.zero_grad()
        loss = workload.loss(lib, model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def timed(step, steps: int, make_context=None) -> float:
    """Seconds per step over ``steps`` steps, under a fresh context from ``make_context``."""
    context = make_context() if make_context is not None else contextlib.nullcontext()
    with context:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - start) / steps


def in_process(name: str, rounds: int, steps: int, warmup: int) -> dict:
    """Median seconds per step of the inactive mode, and each mode's median ratio to it."""
    modes = _modes()
    step = train_step(name)
    for make in modes.values():
        timed(step, warmup, make)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    for _ in range(rounds):
        for mode, make in modes.items():
            times[mode].append(timed(step, steps, make))
    base = times["loaded, inactive"]
    return {"step_s": statistics.median(base),
            "ratios": {mode: statistics.median(t / b for t, b in zip(times[mode], base))
                       for mode in modes}}


def table(results: dict) -> str:
    modes = list(next(iter(results.values()))["ratios"])
    head = ["workload", "step, loaded but inactive"] + modes
    rows = [head, ["---"] * len(head)]
    for name, r in results.items():
        rows.append([name, f"{r['step_s'] * 1e3:.1f} ms"]
                    + [f"{r['ratios'][m]:.2f}x" for m in modes])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", default="mlp,transformer")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke test)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.steps, args.warmup = 1, 1, 1
    if "fw_debugger.anomaly" not in fw.inspectors.registered():
        raise SystemExit("fw_debugger is not loaded: pip install -e ./fw_debugger, and check "
                         "FW_PLUGINS / FW_DISABLE_PLUGINS")
    results = {}
    for name in args.workloads.split(","):
        results[name] = in_process(name, args.rounds, args.steps, args.warmup)
    print(f"fw_debugger overhead: eager training step, ratio to the same step without the "
          f"debugger active (median of {args.rounds} alternating rounds of {args.steps} steps)")
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
