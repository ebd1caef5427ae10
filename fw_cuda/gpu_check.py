"""The GPU check of fw_cuda (issue 7): one command, one JSON summary on stdout.

    python fw_cuda/gpu_check.py [--steps 30] [--skip-conformance]

With a GPU it runs (1) the conformance suite's cuda cases, each checked against the CPU
result (``tests/conformance/test_conformance.py -k cuda``), (2) a short fit of every benchmark
workload on ``cuda`` (loss finite and lower at the end), and (3) each workload's training step
in fw on ``cuda`` against PyTorch CUDA eager, same shapes, same initial weights, same run, as
median step times and their ratio. Without a GPU it prints ``{"gpu": false, "reason": ...}``
and exits 0. Built to finish in well under 8 minutes on an H200.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package


def conformance(timeout: int = 300) -> dict:
    """Counts of the conformance suite's cuda cases (pytest in a fresh process)."""
    with tempfile.NamedTemporaryFile(suffix=".xml") as report:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda",
                   "tests/conformance/test_conformance.py", f"--junitxml={report.name}"]
        try:
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}
        try:
            suite = ET.parse(report.name).getroot().find("testsuite")
        except ET.ParseError:
            return {"error": done.stdout[-2000:] + done.stderr[-2000:]}
    counts = {key: int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")}
    failed = [case.get("name") for case in suite.iter("testcase")
              if case.find("failure") is not None or case.find("error") is not None]
    return {**counts, "first_failures": failed[:20]}


def _steps(lib, model, workload, batch, steps: int, to_device) -> tuple[list[float], list[float]]:
    """Train ``steps`` steps on one fixed batch; (losses, step seconds). ``loss.item()`` ends
    each step, so the time includes the GPU's work in both frameworks."""
    optimizer = workload.optimizer(lib.optim, model.parameters())
    x, y = (to_device(lib.tensor(a)) for a in batch)
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = workload.loss(lib, model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
        times.append(time.perf_counter() - start)
    return losses, times


def workloads(steps: int) -> dict:
    """Per workload: the fw fit on cuda and the step-time ratio against PyTorch CUDA eager."""
    from benchmarks.workloads import WORKLOADS
    from benchmarks.workloads.common import build_model, fw_lib, initial_weights, torch_lib

    fw, torch = fw_lib(), torch_lib()
    results = {}
    for name, workload in WORKLOADS.items():
        try:
            weights = initial_weights(workload)
            batch = workload.data(workload.train_batch, np.random.default_rng(0))
            ours = build_model(workload, fw, weights).to("cuda")
            losses, fw_times = _steps(fw, ours, workload, batch, steps, lambda t: t.to("cuda"))
            theirs = build_model(workload, torch, weights).cuda()
            _, torch_times = _steps(torch, theirs, workload, batch, steps, lambda t: t.cuda())
        except Exception as exc:  # one broken workload must not hide the others
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        warm = max(1, steps // 3)  # first steps allocate and compile
        fw_ms = statistics.median(fw_times[warm:]) * 1e3
        torch_ms = statistics.median(torch_times[warm:]) * 1e3
        results[name] = {
            "fit": {"first_loss": losses[0], "last_loss": losses[-1],
                    "ok": bool(np.isfinite(losses).all() and losses[-1] < losses[0])},
            "fw_step_ms": round(fw_ms, 3), "torch_cuda_step_ms": round(torch_ms, 3),
            "fw_over_torch": round(fw_ms / torch_ms, 2),
        }
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--skip-conformance", action="store_true")
    args = parser.parse_args(argv)

    from fw_cuda import device

    reason = device.runtime.unavailable_reason()
    if reason is not None:
        print(json.dumps({"gpu": False, "reason": reason}))
        return 0
    cupy = device.runtime.cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    summary = {"gpu": True, "device": props["name"].decode(), "count": device.runtime.count(),
               "cupy": cupy.__version__}
    start = time.perf_counter()
    if not args.skip_conformance:
        summary["conformance"] = conformance()
    summary["workloads"] = workloads(args.steps)
    summary["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
