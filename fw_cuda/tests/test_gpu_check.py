"""gpu_check.py's own logic, dry-run on the CPU at small sizes (``--device cpu``), so a lent GPU's
few minutes are not spent on a broken script. The figures mean nothing here; the structure,
the fits and the compiled-vs-eager agreement do."""

import importlib.util
import json
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "gpu_check.py"


def _errors(found, path=()):
    if isinstance(found, dict):
        for key, value in found.items():
            if key == "error":
                yield "/".join(path), value
            else:
                yield from _errors(value, (*path, key))


def test_dry_run_on_cpu_covers_every_section(capsys):
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    assert gpu_check.main(["--device", "cpu", "--steps", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert list(_errors(summary)) == []
    assert summary["dry_run"] == "cpu"
    assert set(summary) >= {"conformance", "workloads", "kernels", "loader"}
    cases = summary["conformance"]
    assert cases["tests"] > 0 and cases["failures"] == cases["errors"] == 0
    for name, result in summary["workloads"].items():
        assert result["fit"]["ok"], name
        assert result["compiled_matches_eager"], name
    assert len(summary["kernels"]) == 5
    assert all(k["fw_ms"] > 0 and k["torch_ms"] > 0 for k in summary["kernels"].values())
    loader = summary["loader"]
    assert loader["on_device"] and loader["batches_equal"] and loader["sums_close"]
