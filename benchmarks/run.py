"""The benchmark suite: fw eager and compiled against PyTorch eager and torch.compile
on five fixed float32 workloads (see ``benchmarks/workloads/``).

    python benchmarks/run.py [--quick] [--json PATH] [--workloads mlp,cnn] [--modes ...]
                             [--without fw_onednn] [--phases auto|yes|no]
                             [--markdown docs/benchmarks.md]

Every (workload, mode) runs in a fresh process (``benchmarks/measure.py``), so its peak RSS is
its own. Compiled modes start with empty on-disk caches (Numba's, inductor's), so their compile
times are cold; fw_compiled runs a second time with Numba's cache warm (the "warm start").
The fw / PyTorch time ratios come from one more process per workload in which both take turns
round by round. All start from the same PyTorch-initialised weights. The result,
``{workload: {mode: {...}}, "machine": {...}, "ratios": {workload: {pair: {...}}}}``, is
printed as markdown tables and optionally written as JSON and into the doc's results section.

With ``--without fw_onednn`` (the default when fw-onednn is installed) the fw modes are also
measured with that plugin blocked (``FW_DISABLE_PLUGINS``), as ``fw_eager without fw_onednn``
and so on, with their own ratio process: what the plugin brings, in the same run.

With fw_onednn loaded (``--phases auto``, the default), one more fresh process per workload
(``benchmarks/phases.py``) times each GEMM and convolution call of a training step as fw's
kernel runs it against oneDNN's own primitive for that shape: ``results["phases"]``.

Threads, as the issue fixes them: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this
process's environment (and so from every measuring process's), PyTorch runs 2 intra-op
threads, OPENBLAS_NUM_THREADS is left as the caller has it.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # before NumPy loads OpenBLAS
    os.environ.pop(_variable, None)

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.measure import machine_limits  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import TORCH_THREADS, initial_weights  # noqa: E402
from benchmarks.workloads.modes import MODES, PAIRS  # noqa: E402
from benchmarks.workloads.report import markdown, rewrite_doc  # noqa: E402


def child(what: str, workload: str, target: str, weights: Path, quick: bool,
          env: dict | None = None) -> dict:
    """Run one measurement of ``benchmarks/measure.py`` in a fresh process; its failure
    (crash, timeout) becomes ``{"error": ...}`` rather than ending the run."""
    return _fresh_process(["benchmarks.measure", what, "--workload", workload,
                           "--mode" if what == "mode" else "--modes", target], what, weights,
                          quick, env)


def phases_child(workload: str, weights: Path, quick: bool) -> dict:
    """``benchmarks/phases.py`` for one workload in a fresh process (failures as in
    :func:`child`)."""
    return _fresh_process(["benchmarks.phases", "--workload", workload], "phases", weights,
                          quick, None)


def _fresh_process(module_args: list[str], what: str, weights: Path, quick: bool,
                   env: dict | None) -> dict:
    """``python -m *module_args --weights W --out R.json [--quick]``: the JSON it wrote, or
    ``{"error": ...}``."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, "-m", *module_args, "--weights", str(weights), "--out",
                   out.name] + (["--quick"] * quick)
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=900 if quick else 3600)
        except subprocess.TimeoutExpired as e:
            return {"error": f"{what} process timed out after {e.timeout:.0f} s"}
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            return {"error": f"{what} process exited with {done.returncode}: {last}"}
        return json.loads(Path(out.name).read_text())


def measure_workload(name: str, modes: list[str], quick: bool, tmp: Path, weights: Path,
                     without: list[str]) -> tuple[dict, dict]:
    """Every mode of one workload, each in its own process, then its ratios; then the fw modes
    again with each plugin of ``without`` blocked."""
    found, ratios = measure_modes(name, modes, quick, tmp, weights, dict(os.environ), "")
    for plugin in without:
        env = {**os.environ, "FW_DISABLE_PLUGINS": ",".join(
            filter(None, (os.environ.get("FW_DISABLE_PLUGINS"), plugin)))}
        fw_modes = [m for m in modes if m.startswith("fw_")]
        more, more_ratios = measure_modes(name, [*fw_modes, "torch_eager"], quick, tmp,
                                          weights, env, f" without {plugin}", measure=fw_modes)
        found.update(more)
        ratios.update(more_ratios)
    return found, ratios


def measure_modes(name: str, modes: list[str], quick: bool, tmp: Path, weights: Path,
                  base_env: dict, label: str, measure: list[str] | None = None
                  ) -> tuple[dict, dict]:
    """``measure`` (default: all of ``modes``) each in its own process and the ratios of
    ``modes``, in ``base_env``; results keyed by mode + ``label``."""
    found = {}
    for mode in modes if measure is None else measure:
        env = dict(base_env)  # compiled modes start from empty on-disk caches: cold
        if mode == "fw_compiled":
            env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"numba_{name}_", dir=tmp)
        if mode == "torch_compile":
            env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"inductor_{name}_",
                                                              dir=tmp)
        key = mode + label
        found[key] = child("mode", name, mode, weights, quick, env)
        if mode == "fw_compiled" and "error" not in found[key]:
            warm = child("mode", name, mode, weights, quick, env)
            found[key]["warm_start_s"] = warm.get("compile_s")
            found[key]["warm_start_infer_s"] = warm.get("infer_compile_s")
        print(f"{name} {key}: done", file=sys.stderr, flush=True)
    ratios = child("pairs", name, ",".join(modes), weights, quick, dict(base_env))
    if "error" in ratios:  # the ratio process failed: every pair it would have timed says why
        ratios = {f"{mine}/{theirs}": ratios for mine, theirs in PAIRS
                  if mine in modes and theirs in modes}
    return found, {_labelled(pair, label): r for pair, r in ratios.items()}


def _labelled(pair: str, label: str) -> str:
    """``fw_eager/torch_eager`` with the label on the fw side."""
    mine, theirs = pair.split("/")
    return f"{mine}{label}/{theirs}"


def machine(quick: bool) -> dict:
    """Where the run happened, with the ceilings measured by this same run."""
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) \
        if Path("/proc/cpuinfo").exists() else platform.processor()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = {p: metadata.version(p) for p in ("numpy", "torch", "numba")}
    versions["fw_plugins"] = ", ".join(f"{n} {v}" for n, v in sorted(_installed_plugins().items()))
    versions["onednn"] = _onednn_note()
    return {"cpu": model, "cores": len(os.sched_getaffinity(0)), "memory_gib": round(memory, 1),
            "system": platform.platform(), "python": platform.python_version(), **versions,
            "torch_threads": TORCH_THREADS,
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
            "date": datetime.date.today().isoformat(), "quick": quick, **machine_limits(quick)}


def run(workloads: list[str], modes: list[str], quick: bool, without: list[str],
        phases: bool) -> dict:
    """The results of every workload; with ``phases``, also each one's GEMM and convolution
    phases against oneDNN's own rate (``results["phases"]``, benchmarks/phases.py)."""
    results = {"machine": machine(quick), "ratios": {}}
    if phases:
        results["phases"] = {}
    with tempfile.TemporaryDirectory(prefix="fw_bench_") as tmp:
        for name in workloads:
            weights = Path(tmp) / f"{name}.npz"
            np.savez(weights, **initial_weights(WORKLOADS[name]))
            results[name], results["ratios"][name] = measure_workload(name, modes, quick,
                                                                      Path(tmp), weights,
                                                                      without)
            if phases:
                results["phases"][name] = phases_child(name, weights, quick)
                print(f"{name} phases: done", file=sys.stderr, flush=True)
    return results


def _onednn_loaded() -> bool:
    import fw_core as fw

    return any(i.name == "fw_onednn" and i.state == "loaded" for i in fw.plugins.info())


def _onednn_note() -> str | None:
    """The oneDNN version and ISA fw_onednn reports (None when it is not loaded)."""
    import fw_core as fw

    fw.device("cpu")  # the library loads with the first cpu device
    info = next((i for i in fw.plugins.info() if i.name == "fw_onednn"), None)
    return next((n for n in info.notes if n.startswith("oneDNN")), None) if info else None


def _installed_plugins() -> dict[str, str]:
    """fw plugins installed here, by entry-point name, with their distribution's version."""
    return {ep.name: (ep.dist.version if ep.dist else "?")
            for ep in metadata.entry_points(group="fw.plugins")}


def _choices(value: str, allowed, what: str) -> list[str]:
    chosen = [v for v in value.split(",") if v]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what} {unknown}; choose from {', '.join(allowed)}")
    return chosen


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timings (smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"comma-separated, from {', '.join(WORKLOADS)}")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated, from {', '.join(MODES)}")
    installed = _installed_plugins()
    parser.add_argument("--without", default="fw_onednn" if "fw_onednn" in installed else "",
                        help="comma-separated plugins to also measure the fw modes without "
                        "(default: fw_onednn when installed)")
    parser.add_argument("--phases", choices=("auto", "yes", "no"), default="auto",
                        help="measure each GEMM/conv phase against oneDNN's own rate (auto: "
                        "when fw_onednn is loaded)")
    parser.add_argument("--markdown", metavar="PATH",
                        help="rewrite the results section of this doc (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    results = run(_choices(args.workloads, WORKLOADS, "workloads"),
                  _choices(args.modes, MODES, "modes"), args.quick,
                  _choices(args.without, installed, "plugins"),
                  args.phases == "yes" or (args.phases == "auto" and _onednn_loaded()))
    section = markdown(results)
    print(section)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.markdown:
        rewrite_doc(Path(args.markdown), section)
    return results


if __name__ == "__main__":
    main()
