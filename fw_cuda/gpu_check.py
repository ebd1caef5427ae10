"""The GPU check of fw_cuda: one command, one JSON summary on stdout.

    python fw_cuda/gpu_check.py [--steps 30] [--skip-conformance] [--device cpu]

With a GPU it runs
1. the conformance suite's cuda cases, each checked against the CPU result
   (``tests/conformance/test_conformance.py -k cuda``), and fw_cuda's own tests, whose
   GPU-only ones (kernels against the CPU, memory tags, staged batches) skip elsewhere;
2. a short fit of every benchmark workload on ``cuda`` (loss finite and lower at the end), and
   each workload's training step, eager and compiled (fused CUDA kernels), against PyTorch CUDA
   eager: same shapes, same initial weights, same run, median step times and their ratios;
3. single kernels (matmul, softmax, layer norm, causal attention, gelu(x + b)) against
   PyTorch on the same GPU, with the achieved TFLOP/s or GB/s;
4. the DataLoader staging batches onto the GPU (pinned buffers, copy stream): batches equal to
   the host's, and an epoch's time against plain synchronous copies.
Without a GPU it prints ``{"gpu": false, "reason": ...}`` and exits 0. Built to finish in well
under 8 minutes on an H200.

``--device cpu`` runs every section on the CPU at small sizes (the conformance section on the
float32 softmax cases only): a dry run of this script's own logic, which CI does, so the GPU's
minutes are not spent finding a typo.
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


def pytest_counts(paths: list[str], expression: str | None, timeout: int = 360) -> dict:
    """Counts (and the first failures) of pytest over ``paths`` (``expression``: its ``-k``),
    run in fresh processes: 8 xdist workers share the GPU."""
    with tempfile.NamedTemporaryFile(suffix=".xml") as report:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "8",
                   *paths, f"--junitxml={report.name}"]
        if expression is not None:
            command += ["-k", expression]
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


def conformance(device: str, select: str | None = None) -> dict:
    """The conformance suite's ``device`` cases (``select``: a further ``-k`` expression),
    each checked against the CPU result."""
    expression = device if select is None else f"{device} and ({select})"
    return pytest_counts(["tests/conformance/test_conformance.py"], expression)


def _timed(step, steps: int) -> tuple[list[float], list[float]]:
    """Run ``step() -> loss`` ``steps`` times; (losses, seconds). ``loss.item()`` ends each
    step, so the time includes the device's work in both frameworks."""
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        losses.append(float(step().item()))
        times.append(time.perf_counter() - start)
    return losses, times


def _train_step(lib, model, workload, batch, device: str, compiled=False):
    """A zero-argument training step of ``model`` on one fixed batch (fw.compile'd if asked)."""
    optimizer = workload.optimizer(lib.optim, model.parameters())
    x, y = (lib.tensor(a).to(device) for a in batch)

    def step(x, y):
        optimizer.zero_grad()
        loss = workload.loss(lib, model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    run = lib.module.compile(step, name=f"{workload.name}.gpu_step") if compiled else step
    return lambda: run(x, y)


def _median_ms(times: list[float]) -> float:
    warm = max(1, len(times) // 3)  # first steps allocate and compile
    return round(statistics.median(times[warm:]) * 1e3, 3)


def workloads(device: str, steps: int) -> dict:
    """Per workload: the fw fit on ``device``, eager and compiled, and the step-time ratios
    against PyTorch eager on the same device."""
    from benchmarks.workloads import WORKLOADS
    from benchmarks.workloads.common import build_model, fw_lib, initial_weights, torch_lib

    fw, torch = fw_lib(), torch_lib()
    results = {}
    for name, workload in WORKLOADS.items():
        try:
            weights = initial_weights(workload)
            batch = workload.data(workload.train_batch, np.random.default_rng(0))
            eager_losses, eager = _timed(_train_step(
                fw, build_model(workload, fw, weights).to(device), workload, batch, device), steps)
            compiled_losses, compiled = _timed(_train_step(
                fw, build_model(workload, fw, weights).to(device), workload, batch, device,
                compiled=True), steps)
            _, reference = _timed(_train_step(
                torch, build_model(workload, torch, weights).to(device), workload, batch,
                device), steps)
        except Exception as exc:  # one broken workload must not hide the others
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        torch_ms = _median_ms(reference)
        results[name] = {
            "fit": {"first_loss": eager_losses[0], "last_loss": eager_losses[-1],
                    "ok": bool(np.isfinite(eager_losses).all()
                               and eager_losses[-1] < eager_losses[0])},
            "compiled_matches_eager": bool(np.allclose(compiled_losses, eager_losses,
                                                       rtol=1e-3, atol=1e-4)),
            "fw_step_ms": _median_ms(eager), "fw_compiled_step_ms": _median_ms(compiled),
            "torch_step_ms": torch_ms,
            "fw_over_torch": round(_median_ms(eager) / torch_ms, 2),
            "fw_compiled_over_torch": round(_median_ms(compiled) / torch_ms, 2),
        }
    return results


#: H200 SXM datasheet limits, for the kernels' fraction of the machine
PEAK_TFLOPS_FP32 = 67.0  # dense FP32 (non-tensor-core)
PEAK_GBPS = 4800.0


def _kernel_cases(lib, device: str, n: int):
    """(name, fn, flops, bytes moved) per kernel; inputs of size ``n`` (4096 on a GPU) built
    by ``lib`` from the same seed in both frameworks."""
    rng = np.random.default_rng(0)

    def t(*shape):
        return lib.tensor(rng.standard_normal(shape, dtype=np.float32)).to(device)

    a, b = t(n, n), t(n, n)
    rows, w, bias = t(2 * n, n), t(n), t(n)
    heads, length = 16, n // 4
    q, k, v = (t(8, heads, length, 64) for _ in range(3))
    f = lib.module.nn.functional
    row_bytes = 2 * n * n * 4
    return [
        (f"matmul_{n}", lambda: a @ b, 2 * n ** 3, 3 * n * n * 4),
        (f"softmax_{2 * n}x{n}", lambda: f.softmax(rows, dim=-1), 5 * 2 * n * n, 2 * row_bytes),
        (f"layer_norm_{2 * n}x{n}", lambda: f.layer_norm(rows, (n,), w, bias), 8 * 2 * n * n,
         2 * row_bytes),
        (f"sdpa_causal_8x{heads}x{length}x64",
         lambda: f.scaled_dot_product_attention(q, k, v, is_causal=True),
         4 * 8 * heads * length * length * 64, 4 * 8 * heads * length * 64 * 4),
        (f"gelu_add_{2 * n}x{n}", lambda: f.gelu(rows + bias), 10 * 2 * n * n, 3 * row_bytes),
    ]


def _seconds(fn, sync, repeats: int = 20) -> float:
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def kernels(device: str, n: int) -> dict:
    """Each kernel in fw and in PyTorch on ``device``: ms, ratio, and fw's TFLOP/s, GB/s and
    fraction of the H200's peak (the larger of the compute and the bandwidth fractions)."""
    from benchmarks.workloads.common import fw_lib, torch_lib
    from fw_cuda import device as cuda

    ours, torch = fw_lib(), torch_lib()
    gpu = device != "cpu"
    syncs = {"fw": (lambda: cuda.runtime.synchronize(0)) if gpu else (lambda: None),
             "torch": torch.module.cuda.synchronize if gpu else (lambda: None)}
    cases = {"fw": _kernel_cases(ours, device, n), "torch": _kernel_cases(torch, device, n)}
    found = {}
    for (name, fn, flops, moved), (_, reference, _, _) in zip(cases["fw"], cases["torch"]):
        try:
            seconds, theirs = _seconds(fn, syncs["fw"]), _seconds(reference, syncs["torch"])
        except Exception as exc:  # one broken kernel must not hide the others
            found[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        tflops, gbps = flops / seconds / 1e12, moved / seconds / 1e9
        found[name] = {"fw_ms": round(seconds * 1e3, 3), "torch_ms": round(theirs * 1e3, 3),
                       "fw_over_torch": round(seconds / theirs, 2), "fw_tflops": round(tflops, 2),
                       "fw_gbps": round(gbps, 1),
                       "fraction_of_peak": round(max(tflops / PEAK_TFLOPS_FP32,
                                                     gbps / PEAK_GBPS), 3)}
    return found


def loader(device: str, batches: int, features: int) -> dict:
    """An epoch of (256, features) float32 batches onto ``device``: staged (batch k+1 copied
    during step k) against synchronous ``.to(device)`` in the loop, a matmul as the step."""
    import fw_core as fw

    data = np.random.default_rng(0).standard_normal((batches * 256, features),
                                                     dtype=np.float32)
    dataset = fw.data.TensorDataset(fw.tensor(data))
    weight = fw.randn(features, 512).to(device)

    def epoch(staged: bool):
        total = 0.0
        start = time.perf_counter()
        for (x,) in fw.data.DataLoader(dataset, batch_size=256,
                                       device=device if staged else None):
            total += float((x.to(device) @ weight).sum().item())
        return time.perf_counter() - start, total

    epoch(True)  # warms the pinned pool and the kernels
    staged_s, staged_sum = epoch(True)
    plain_s, plain_sum = epoch(False)
    got = [x for (x,) in fw.data.DataLoader(dataset, batch_size=256, device=device)]
    return {"on_device": all(x.device == device for x in got),
            "batches_equal": bool(np.array_equal(np.concatenate([x.numpy() for x in got]),
                                                 data)),
            "sums_close": bool(np.isclose(staged_sum, plain_sum, rtol=1e-4)),
            "staged_epoch_s": round(staged_s, 4), "synchronous_epoch_s": round(plain_s, 4),
            "staged_over_synchronous": round(staged_s / plain_s, 2)}


def run_sections(device: str, steps: int, small: bool) -> dict:
    """Sections 2-4 (each reports its own error and lets the others run)."""
    sizes = {"n": 256, "batches": 4, "features": 64} if small else \
        {"n": 4096, "batches": 40, "features": 3 * 64 * 64}
    sections = {"workloads": lambda: workloads(device, steps),
                "kernels": lambda: kernels(device, sizes["n"]),
                "loader": lambda: loader(device, sizes["batches"], sizes["features"])}
    summary = {}
    for section, run in sections.items():
        try:
            summary[section] = run()
        except Exception as exc:
            summary[section] = {"error": f"{type(exc).__name__}: {exc}"}
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--skip-conformance", action="store_true")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of this script")
    parser.add_argument("--small", action="store_true", help="small kernels and epochs")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.device == "cpu":
        summary = {"gpu": False, "dry_run": "cpu",
                   "conformance": conformance("cpu", select="softmax and float32"),
                   **run_sections("cpu", args.steps, True)}
    else:
        from fw_cuda import device

        reason = device.runtime.unavailable_reason()
        if reason is not None:
            print(json.dumps({"gpu": False, "reason": reason}))
            return 0
        cupy = device.runtime.cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        summary = {"gpu": True, "device": props["name"].decode(),
                   "count": device.runtime.count(), "cupy": cupy.__version__}
        if not args.skip_conformance:
            summary["conformance"] = conformance(args.device)
            summary["fw_cuda_tests"] = pytest_counts(["fw_cuda/tests"], "not dry_run",
                                                     timeout=240)
        summary.update(run_sections(args.device, args.steps, args.small))
    summary["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
