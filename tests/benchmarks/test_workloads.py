"""The benchmark suite measures what it says: each workload is the same model in fw and
PyTorch (same initial weights -> same first loss, same gradients, same loss after one optimizer
step), and ``benchmarks/run.py --quick`` writes the promised JSON schema and markdown (with
fw_onednn loaded, the GEMM/conv phases against oneDNN's own rate too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository, for the benchmarks package

from benchmarks.workloads import WORKLOADS  # noqa: E402
from benchmarks.workloads.common import initial_weights  # noqa: E402
from benchmarks.workloads.modes import Session  # noqa: E402
from benchmarks.workloads.report import BEGIN, END, markdown  # noqa: E402

LOSS_RTOL = 1e-5
GRAD_RTOL = 1e-4  # max |fw - torch| over max |torch|, per parameter (measured <= 4e-6)


def grads(session: Session) -> dict[str, np.ndarray]:
    return {name: np.array(p.grad.detach().numpy() if session.lib.name == "torch"
                           else p.grad.numpy())
            for name, p in session.model.named_parameters()}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_fw_and_torch_workloads_agree_on_the_first_step(name):
    workload = WORKLOADS[name]
    weights = initial_weights(workload)
    found = {}
    for mode in ("fw_eager", "torch_eager"):
        session = Session(workload, mode, weights)
        first = float(session.train().item())
        found[mode] = first, grads(session), float(session.train().item())
    (fw_first, fw_grads, fw_second), (t_first, t_grads, t_second) = found.values()
    assert fw_first == pytest.approx(t_first, rel=LOSS_RTOL)
    assert list(fw_grads) == list(t_grads)
    for key, theirs in t_grads.items():
        difference = np.abs(fw_grads[key] - theirs).max() / np.abs(theirs).max()
        assert difference <= GRAD_RTOL, f"{name}: gradient of {key} differs by {difference:.1e}"
    assert fw_second == pytest.approx(t_second, rel=LOSS_RTOL)
    assert fw_second != t_first  # the step changed the weights


def test_run_quick_writes_the_schema_and_the_doc_section(tmp_path):
    import importlib.metadata

    doc = tmp_path / "doc.md"
    doc.write_text(f"# Benchmarks\n\n{BEGIN}\nold\n{END}\n\nafter\n")
    out = tmp_path / "results.json"
    plugins = {ep.name for ep in importlib.metadata.entry_points(group="fw.plugins")}
    without = [p for p in ("fw_onednn",) if p in plugins]  # fw modes also without it
    import fw_core as fw

    onednn = any(i.name == "fw_onednn" and i.state == "loaded" for i in fw.plugins.info())
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--workloads", "mlp",
         "--modes", "fw_eager,torch_eager", "--json", str(out), "--markdown", str(doc),
         "--without", ",".join(without)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert set(results) == {"machine", "ratios", "mlp", *(["phases"] if onednn else [])}
    assert set(results["mlp"]) == {"fw_eager", "torch_eager",
                                   *(f"fw_eager without {p}" for p in without)}
    assert set(results["ratios"]["mlp"]) == {"fw_eager/torch_eager",
                                             *(f"fw_eager without {p}/torch_eager"
                                               for p in without)}
    for mode, figures in results["mlp"].items():
        for key in ("train_samples_per_s", "infer_b1_ms", "infer_b256_ms", "peak_rss_mib"):
            assert figures[key] > 0, (mode, key, figures)
    assert results["mlp"]["torch_eager"]["optimizer"] in ("default", "fused")
    assert {"gemm_f32_gflop_s", "copy_gb_s", "cpu", "cores"} <= set(results["machine"])
    pair = results["ratios"]["mlp"]["fw_eager/torch_eager"]
    assert {"train", "infer_b1", "infer_b256"} <= set(pair)
    assert "| mlp | fw_eager |" in done.stdout
    text = doc.read_text()
    assert "old" not in text and "| mlp | torch_eager |" in text and text.endswith("after\n")
    if onednn:  # each GEMM of the step (3 forward, 5 backward), fw's rate against oneDNN's
        found = results["phases"]["mlp"]
        assert [(p["phase"], p["op"]) for p in found["phases"]] == [
            ("forward", "linear")] * 3 + [("backward", "matmul"), ("backward", "einsum")] * 2 + [
            ("backward", "einsum")]
        first = found["phases"][0]
        assert first["shapes"] == [[128, 784], [512, 784], [512]] and first["calls"] == 1
        assert first["gflop"] == pytest.approx(2 * 128 * 784 * 512 / 1e9)
        for p in found["phases"]:
            assert p["fw_gflop_s"] > 0 and p["onednn_gflop_s"] > 0 and p["fraction"] > 0, p
        assert found["fw_ms"] > 0 and found["fraction"] > 0
        assert "| mlp | forward | linear | 128x784, 512x784, 512 | 1 | fw_onednn |" in text


def test_markdown_reports_a_failed_mode_and_carries_on():
    machine = {"date": "today", "quick": True, "cpu": "cpu", "cores": 2, "memory_gib": 1,
               "system": "os", "python": "3", "numpy": "2", "torch": "2", "numba": "0",
               "torch_threads": 2, "openblas_num_threads": "(unset)", "gemm_f32_gflop_s": 1.0,
               "copy_gb_s": 1.0}
    failed = "fw.compile is missing"
    results = {"machine": machine,
               "ratios": {"cnn": {"fw_compiled/torch_eager": {"error": failed}}},
               "cnn": {"fw_compiled": {"error": failed, "peak_rss_mib": 100.0},
                       "torch_compile": {"train_samples_per_s": 10.0, "infer_b1_ms": 1.0,
                                         "infer_b64_ms": 2.0, "peak_rss_mib": 300.0,
                                         "compile_s": 30.0, "infer_compile_s": 5.0}}}
    text = markdown(results)
    assert f"| cnn | fw_compiled | - | - | - (64) | 100 | - | - | error: {failed} |" in text
    assert "| cnn | torch_compile | 10 | 1.000 | 2.00 (64) | 300 | 30.00 + 5.00 | - |" in text
    assert f"| cnn | fw_compiled/torch_eager | error: {failed} |" in text
