"""``benchmarks/edge.py --quick`` runs end to end and writes every section it promises, each
figure a positive number, after every contender's outputs agreed (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK_ONLY = "a benchmark-only dependency of benchmarks/edge.py, not installed"
MODELS = ["tiny_mlp", "mlp", "cnn", "transformer", "lstm", "minilm_seq16", "minilm_seq128"]


def positive(value) -> bool:
    return isinstance(value, (int, float)) and value > 0


@pytest.mark.slow
def test_quick_edge_benchmark_writes_every_section(tmp_path):
    for module in ("onnxruntime", "onnx", "torch"):
        pytest.importorskip(module, reason=f"{module} is {BENCHMARK_ONLY}")
    out = tmp_path / "out.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "edge.py"), "--quick",
                          "--json", str(out)], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())

    assert "minilm_error" not in results, results.get("minilm_error")
    assert positive(results["install"]["fw_edge_bytes"])
    assert positive(results["install"]["onnxruntime_bytes"])
    for section in ("import_s", "minilm_peak_rss_mib"):
        assert all(positive(results[section][r]) for r in ("fw_edge", "onnxruntime")), section
    assert list(results["latency"]) == MODELS
    for name in MODELS:
        row = results["latency"][name]
        for figure in ("fw_edge_us", "onnxruntime_us", "torch_us", "fw_edge/onnxruntime",
                       "fw_edge/torch"):
            assert positive(row[figure]), (name, figure)
        assert results["agreement"][name]["ok"] is True
        assert results["agreement"][name]["max_abs_diff"] <= 1e-4
    sizes = results["sizes"]
    assert positive(sizes["tiny_mlp_packed"]["bytes"])
    assert positive(sizes["minilm_int8_bytes"]) and positive(sizes["minilm_fp32_bytes"])
    assert 0 < sizes["minilm_int8_cosine"] <= 1
    assert "| tiny_mlp b1 latency |" in run.stdout
