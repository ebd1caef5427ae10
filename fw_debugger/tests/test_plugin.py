"""The fw_debugger plugin: found by entry point, inactive and free until asked, fit(debug=True)."""

import importlib
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw
import fw_debugger
from fw_core import nn
from fw_core._state import state
from fw_core.errors import PluginError
from fw_debugger import AnomalyError, plugin

NAMES = ["fw_debugger.anomaly", "fw_debugger.breakpoints", "fw_debugger.health",
         "fw_debugger.record"]


def test_entry_point_is_installed():
    found = {ep.name: ep.value for ep in metadata.entry_points(group="fw.plugins")}
    assert found["fw_debugger"] == "fw_debugger.plugin"


def test_loaded_inspectors_are_registered_inactive_and_cost_nothing_per_op():
    fw.plugins.load()
    assert set(NAMES) <= set(fw.inspectors.registered())
    assert not set(NAMES) & set(fw.inspectors.active())
    row = next(r for r in fw.plugins.info() if r.name == "fw_debugger")
    assert sorted(row.provides["inspectors"]) == NAMES
    forwards = [i.on_op for i in plugin.inspectors()]
    (fw.randn(3, 3, requires_grad=True) * 2).sum().backward()
    assert state.observed is False
    assert all(f.target is None for f in forwards)  # never called


def test_loading_the_plugin_imports_nothing_else_of_it(tmp_path):
    code = ("import sys, fw_core; "
            "print(sorted(m for m in sys.modules if m.startswith('fw_debugger')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "['fw_debugger', 'fw_debugger.plugin']"


def test_the_registered_inspector_forwards_to_its_module():
    fw.plugins.load()
    with pytest.raises(AnomalyError), fw.inspectors.activated("fw_debugger.anomaly"):
        fw.log(fw.tensor([0.0]))


def test_every_public_name_resolves():
    for module in ("record", "compare"):  # submodules named like their function
        importlib.import_module(f"fw_debugger.{module}")
    for name in fw_debugger.__all__:
        value = getattr(fw_debugger, name)
        assert callable(value) and value.__name__ == name, name
    with pytest.raises(AttributeError):
        fw_debugger.no_such_name  # noqa: B018


class Planted(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return fw.log(fw.softmax(self.fc(x) * 1e4, dim=-1))  # planted in fit


def _model():
    model = fw.Model(Planted())
    model.compile(optimizer="sgd", loss=lambda out, y: (out * y).mean())
    return model


def _data():
    rng = np.random.default_rng(0)
    return (rng.normal(0, 10, (8, 3)).astype(np.float32),
            rng.normal(size=(8, 2)).astype(np.float32))


def test_fit_debug_names_the_planted_op():
    fw.plugins.load()
    with pytest.raises(AnomalyError) as caught:
        _model().fit(*_data(), epochs=1, batch_size=4, verbose=0, debug=True)
    assert (caught.value.op, caught.value.module) == ("log", "")
    assert caught.value.line.endswith(str(Planted.forward.__code__.co_firstlineno + 1))
    assert "fw_debugger.anomaly" not in fw.inspectors.active()


def test_fit_debug_without_the_plugin_says_how_to_install_it():
    try:
        fw.plugins.use(["fw_cpu"])
        with pytest.raises(PluginError, match="fw-debugger") as caught:
            _model().fit(*_data(), epochs=1, verbose=0, debug=True)
        assert "pip install fw-debugger" in caught.value.hint
    finally:
        fw.plugins.use(None)
    assert "fw_debugger.anomaly" in fw.inspectors.registered()


@pytest.mark.slow
def test_overhead_benchmark_runs(tmp_path):
    out = tmp_path / "overhead.json"
    subprocess.run([sys.executable, "benchmarks/debugger_overhead.py", "--quick",
                    "--workloads", "mlp", "--json", str(out)],
                   cwd=Path(__file__).resolve().parents[2], check=True, capture_output=True)
    result = json.loads(out.read_text())["mlp"]
    assert set(result["ratios"]) == {"loaded, inactive", "not loaded", "anomaly",
                                     "anomaly every=10", "record (summaries)",
                                     "breakpoint (never stops)"}
    assert result["ratios"]["loaded, inactive"] == 1.0 and result["ratios"]["not loaded"] > 0
