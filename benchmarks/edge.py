"""fw-edge (fw programs on NumPy alone) against onnxruntime and PyTorch eager, for inference.

    python benchmarks/edge.py [--quick] [--json PATH]

All in one run, on this machine, with the same weights and the same inputs:

1. install size: the bytes fw-edge adds to an environment with NumPy (its installed files; for an
   editable install, its package's sources plus their bytecode as pip would compile it) against
   onnxruntime's with every dependency it pulls in but NumPy (their RECORDs);
2. ``import fw_edge`` against ``import onnxruntime`` (fresh interpreters, median), and the peak
   RSS of a fresh process that loads MiniLM and runs it at batch 1, sequence 128;
3. latency per call at batch 1: the tiny MLP 16->32->4, the suite's mlp, cnn, transformer and
   lstm workloads, MiniLM at sequence 16 and 128. The three contenders take turns round by
   round in this one process, each round the median of single calls; a ratio is the median of
   the per-round ratios (above 1, fw-edge is slower). Every contender's outputs are checked
   against PyTorch eager's (``edge_models.AGREEMENT``) before anything is timed;
4. the folder ``python -m fw_edge.pack`` writes for the tiny MLP, and MiniLM's int8 program: its
   size and cosine to fw (``fw.export(..., quantize="int8")``).

Threads: PyTorch and onnxruntime (intra- and inter-op) run ``TORCH_THREADS``; NumPy's BLAS
threads are left as the caller has them, as are ``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE``
(whoever runs benchmarks unsets those).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import py_compile
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.edge_models import (  # noqa: E402
    WORKLOAD_NAMES,
    Contenders,
    MiniLM,
    minilm,
    workload_contenders,
)
from benchmarks.import_time import one_run  # noqa: E402
from benchmarks.measure import per_call  # noqa: E402
from benchmarks.workloads.common import TORCH_THREADS  # noqa: E402
from fw_core.errors import ExportError  # noqa: E402


@dataclass(frozen=True)
class Budget:
    """How long to measure: fresh processes per import and per RSS figure, latency rounds,
    seconds each contender spends per round, and the bounds on single calls per round."""

    import_runs: int
    rss_runs: int
    rounds: int
    round_s: float
    min_calls: int
    max_calls: int


FULL = Budget(import_runs=10, rss_runs=3, rounds=7, round_s=0.3, min_calls=10, max_calls=2000)
QUICK = Budget(import_runs=2, rss_runs=1, rounds=2, round_s=0.01, min_calls=3, max_calls=50)


# -- 1. install size -------------------------------------------------------------------------------
def _requirements(name: str) -> list[str]:
    """The distributions ``name`` requires with no extra asked for, on this platform."""
    from packaging.requirements import Requirement

    found = []
    for line in importlib.metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement.name)
    return found


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _record_bytes(name: str) -> int:
    """The bytes of the files ``name``'s RECORD lists (as they lie on disk)."""
    files = importlib.metadata.distribution(name).files or []
    return sum(p.stat().st_size for f in files if (p := Path(f.locate())).is_file())


def installed_bytes(name: str, exclude=("numpy",)) -> dict:
    """Bytes ``name`` and what it pulls in (recursively, ``exclude`` left out) add on disk."""
    seen, todo = {}, [name]
    while todo:
        dist = _canonical(todo.pop())
        if dist in seen or dist in exclude:
            continue
        seen[dist] = _record_bytes(dist)
        todo.extend(_requirements(dist))
    return {"bytes": sum(seen.values()), "distributions": seen}


def edge_bytes() -> dict:
    """Bytes fw-edge adds: its RECORD, or for an editable install (whose RECORD lists a .pth,
    not the package) the package's files plus each source's bytecode, as a wheel install has."""
    total = _record_bytes("fw-edge")
    package = Path(importlib.util.find_spec("fw_edge").origin).parent
    files = importlib.metadata.distribution("fw-edge").files or []
    if any(f.parts[0] == "fw_edge" for f in files):
        return {"bytes": total, "how": "RECORD"}
    with tempfile.TemporaryDirectory() as scratch:
        for i, source in enumerate(f for f in package.rglob("*") if f.is_file()):
            if "__pycache__" in source.parts:
                continue
            total += source.stat().st_size
            if source.suffix == ".py":
                total += Path(py_compile.compile(str(source), f"{scratch}/{i}.pyc",
                                                 doraise=True)).stat().st_size
    return {"bytes": total, "how": "editable install: package files + compiled bytecode"}


# -- 2. import time and peak RSS in fresh processes ------------------------------------------------
RSS_PROBE = """
import sys
sys.path.insert(0, {root!r})
from benchmarks.measure import peak_rss_mib
from benchmarks.edge_models import minilm_inputs
feed = minilm_inputs(128)
if {runtime!r} == "fw_edge":
    import fw_edge
    program = fw_edge.load({program!r})
    run = lambda: program(**feed)
else:
    from benchmarks.edge_models import ort_session
    session = ort_session({onnx!r}, {threads})
    run = lambda: session.run(None, feed)
for _ in range(3):
    run()
print(peak_rss_mib())
"""


def startup(budget: Budget, bert: MiniLM | None) -> dict:
    """Import seconds, and MiniLM's peak RSS where it exported, runtime by runtime in
    alternating fresh processes."""
    imports = {"fw_edge": [], "onnxruntime": []}
    for _ in range(budget.import_runs):
        for module in imports:
            imports[module].append(one_run(module)[0])
    found = {"import_s": {m: statistics.median(t) for m, t in imports.items()}}
    if bert is None:
        return found
    rss = {"fw_edge": [], "onnxruntime": []}
    for _ in range(budget.rss_runs):
        for runtime in rss:
            probe = RSS_PROBE.format(root=str(ROOT), runtime=runtime, program=str(bert.program),
                                     onnx=str(bert.onnx), threads=TORCH_THREADS)
            out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                 check=True).stdout
            rss[runtime].append(float(out.split()[-1]))
    found["minilm_peak_rss_mib"] = {r: statistics.median(m) for r, m in rss.items()}
    return found


# -- 3. latency ------------------------------------------------------------------------------------
def latency(contenders: Contenders, budget: Budget) -> dict:
    """Median seconds per call of each contender, and fw-edge's per-round ratios' medians."""
    calls = contenders.calls
    for call in calls.values():  # plans, caches, first-call allocations
        for _ in range(3):
            call()
    slowest = max(per_call(call, 3) for call in calls.values())
    n = min(budget.max_calls, max(budget.min_calls, round(budget.round_s / slowest)))
    rounds = {name: [] for name in calls}
    for _ in range(budget.rounds):
        for name, call in calls.items():
            rounds[name].append(per_call(call, n))
    found = {f"{name}_us": 1e6 * statistics.median(t) for name, t in rounds.items()}
    for other in ("onnxruntime", "torch"):
        found[f"fw_edge/{other}"] = statistics.median(
            e / o for e, o in zip(rounds["fw_edge"], rounds[other]))
    found["calls_per_round"] = n
    return found


# -- 4. sizes --------------------------------------------------------------------------------------
def packed_bytes(program: Path, out: Path) -> dict:
    """The folder ``python -m fw_edge.pack`` writes for ``program``, and what it printed."""
    printed = subprocess.run([sys.executable, "-m", "fw_edge.pack", str(program), "--out",
                              str(out)], capture_output=True, text=True, check=True).stdout
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {"bytes": size, "printed": printed.strip()}


def measure(budget: Budget, folder: Path) -> dict:
    import torch

    torch.set_num_threads(TORCH_THREADS)
    results = {"threads": TORCH_THREADS, "agreement": {}, "latency": {}}
    edge = edge_bytes()
    ort = installed_bytes("onnxruntime")
    results["install"] = {"fw_edge_bytes": edge["bytes"], "fw_edge_how": edge["how"],
                          "onnxruntime_bytes": ort["bytes"],
                          "onnxruntime_distributions": ort["distributions"],
                          "fw_edge/onnxruntime": edge["bytes"] / ort["bytes"]}
    models = [workload_contenders(name, folder) for name in ("tiny_mlp", *WORKLOAD_NAMES)]
    start = time.perf_counter()
    try:
        bert = minilm(folder)
    except ExportError as e:  # the other figures are still worth having; the error is reported
        bert, results["minilm_error"] = None, str(e)
    else:
        results["minilm_export_s"] = time.perf_counter() - start  # fp32, int8, ONNX
        models += [bert.contenders(seq) for seq in (16, 128)]
    with torch.inference_mode():
        for model in models:
            results["agreement"][model.name] = {"max_abs_diff": model.check(), "ok": True}
            results["latency"][model.name] = latency(model, budget)
    results.update(startup(budget, bert))
    results["sizes"] = {"tiny_mlp_packed": packed_bytes(models[0].files["fw_edge"],
                                                        folder / "packed")}
    if bert is not None:
        results["sizes"].update(minilm_fp32_bytes=bert.fp32_bytes,
                                minilm_int8_bytes=bert.int8_bytes,
                                minilm_int8_cosine=bert.int8_cosine)
    return results


# -- report ----------------------------------------------------------------------------------------
def markdown(r: dict) -> str:
    """The figures as one markdown table and a few lines of notes."""
    install, imports, sizes = r["install"], r["import_s"], r["sizes"]
    lines = ["| figure | fw-edge | onnxruntime | torch eager | fw-edge/onnxruntime | "
             "fw-edge/torch |", "|---|---|---|---|---|---|",
             f"| installed (beyond NumPy) | {install['fw_edge_bytes'] / 2**20:.2f} MiB | "
             f"{install['onnxruntime_bytes'] / 2**20:.1f} MiB | | "
             f"{install['fw_edge/onnxruntime']:.3f} | |",
             f"| import | {imports['fw_edge'] * 1e3:.1f} ms | {imports['onnxruntime'] * 1e3:.1f}"
             f" ms | | {imports['fw_edge'] / imports['onnxruntime']:.2f} | |"]
    if "minilm_peak_rss_mib" in r:
        rss = r["minilm_peak_rss_mib"]
        lines.append(f"| MiniLM b1 seq 128 peak RSS | {rss['fw_edge']:.0f} MiB | "
                     f"{rss['onnxruntime']:.0f} MiB | | {rss['fw_edge'] / rss['onnxruntime']:.2f}"
                     " | |")
    for name, row in r["latency"].items():
        lines.append(f"| {name} b1 latency | {row['fw_edge_us']:.1f} µs | "
                     f"{row['onnxruntime_us']:.1f} µs | {row['torch_us']:.1f} µs | "
                     f"{row['fw_edge/onnxruntime']:.2f} | {row['fw_edge/torch']:.2f} |")
    lines += ["", f"tiny MLP packed folder (python -m fw_edge.pack): "
              f"{sizes['tiny_mlp_packed']['bytes'] / 1024:.1f} KiB."]
    if "minilm_int8_bytes" in sizes:
        lines.append(f"MiniLM program: fp32 {sizes['minilm_fp32_bytes'] / 2**20:.1f} MiB, int8 "
                     f"{sizes['minilm_int8_bytes'] / 2**20:.1f} MiB (cosine to fw "
                     f"{sizes['minilm_int8_cosine']:.6f}).")
    if "minilm_error" in r:
        lines.append(f"MiniLM not measured: {r['minilm_error']}")
    lines += ["Agreement before timing (largest difference between two contenders): " +
              ", ".join(f"{n} {a['max_abs_diff']:.1e}" for n, a in r["agreement"].items()) + ".",
              f"Threads: torch and onnxruntime {r['threads']}. Latency: median of single calls; "
              "ratios: medians of per-round ratios (above 1, fw-edge is slower)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few calls")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = measure(QUICK if args.quick else FULL, Path(folder))
    results["quick"] = args.quick
    print(markdown(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
