"""fw_viz.capture: what a captured graph holds, and how it folds."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fw_core as fw
import fw_viz
from fw_viz import graph as graph_module
from fw_viz import plugin


def test_example_graph_nodes_carry_contract_shapes_and_module():
    g = fw_viz.example_graph()
    ops = [n["op"] for n in g.data["nodes"]]
    assert ops.count("linear") == 2 and ops.count("relu") == 1 and ops.count("parameter") == 4
    relu = next(n for n in g.data["nodes"] if n["op"] == "relu")
    assert relu["module"] == "1" and relu["phase"] == "forward"
    assert relu["inputs"] == [{"shape": [3, 8], "dtype": "float32"}]
    assert relu["outputs"] == [{"shape": [3, 8], "dtype": "float32"}]
    assert relu["signature"].startswith("relu(") and relu["doc"]
    assert relu["structure"] == "elementwise" and relu["anchor"]
    assert relu["memory_tag"] == "activation" and relu["time_ms"] >= 0
    params = [n for n in g.data["nodes"] if n["op"] == "parameter"]
    assert {p["name"] for p in params} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert all(p["memory_tag"] == "parameter" for p in params)
    assert g.data["inputs"] == [{"id": "in0", "shape": [3, 4], "dtype": "float32"}]
    assert [m["type"] for m in g.modules()] == ["Linear", "ReLU", "Linear"]
    # the two Linears are not a repeated block: a ReLU stands between them
    assert all(m["repeat_group"] is None for m in g.modules())
    assert json.loads(g.to_json()) == g.data


def test_edges_follow_tensors_with_shape_and_dtype():
    g = fw_viz.example_graph()
    by_id = {n["id"]: n for n in g.data["nodes"]}
    into_relu = [e for e in g.data["edges"] if by_id[e["target"]]["op"] == "relu"]
    assert len(into_relu) == 1
    assert by_id[into_relu[0]["source"]]["op"] == "linear"
    assert into_relu[0]["shape"] == [3, 8] and into_relu[0]["dtype"] == "float32"


def test_value_and_grad_summaries_match_the_run():
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    x = fw.randn(3, 4)
    g = fw_viz.capture(model, x, backward=True, values="summary")
    relu = next(n for n in g.data["nodes"] if n["op"] == "relu" and n["phase"] == "forward")
    expected = np.maximum(model[0](x).detach().numpy(), 0)
    assert relu["summary"]["min"] == pytest.approx(expected.min())
    assert relu["summary"]["mean"] == pytest.approx(expected.mean(), rel=1e-5)
    assert relu["grad_summary"] is not None
    weight = next(n for n in g.data["nodes"] if n.get("name") == "0.weight")
    grad = model[0].weight.grad.numpy()
    assert weight["grad_summary"]["max"] == pytest.approx(grad.max())
    backward = [n for n in g.data["nodes"] if n["phase"] == "backward"]
    assert backward and all(n["memory_tag"] == "gradient" for n in backward)
    assert {n["module"] for n in backward} >= {"0", "1", "2"}


def test_plain_function_and_no_summaries_by_default():
    g = fw_viz.capture(lambda a, b: (a * b).sum(), fw.ones(2, 3), fw.ones(2, 3))
    assert [n["op"] for n in g.data["nodes"]] == ["input", "input", "mul", "sum"]
    assert g.modules() == [] and all(n["summary"] is None for n in g.data["nodes"])


def test_bad_values_mode_and_inspector_switched_off_after_errors():
    with pytest.raises(fw.errors.FwError, match="values="):
        fw_viz.capture(lambda x: x, fw.ones(1), values="full")

    def broken(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fw_viz.capture(broken, fw.ones(1))
    assert "fw_viz.capture" not in fw.inspectors.active() and not graph_module._current


def test_fused_regions_from_a_compiled_function():
    def f(x):
        return ((x * 2 + 1).relu() * x).sum(1)

    compiled = fw.compile(f)
    x = fw.randn(16, 16)
    for _ in range(6):
        compiled(x)
    if not compiled.plans():
        pytest.skip("the scheduler built no plan for this function")
    g = fw_viz.capture(compiled, x)
    fused = [n for n in g.data["nodes"] if n["fused"]]
    assert fused, "no node marked fused"
    assert all(n["fused_rule"] for n in fused)
    assert g.data["title"] == "f"


def test_transformer_has_hundreds_of_ops_and_folds_to_a_readable_view(transformer_graph):
    g = transformer_graph
    assert len(g.data["nodes"]) > 300
    assert any(n["module"].startswith("encoder.layers.1.self_attn") for n in g.data["nodes"])
    layers = [m for m in g.modules() if m["type"] == "TransformerEncoderLayer"]
    assert [m["repeat_group"] for m in layers] == ["encoder.layers.*"] * 3
    view = g.fold()
    assert view["depth"] == g.data["fold"]["default_depth"]
    assert len(view["nodes"]) < 60
    repeats = [n for n in view["nodes"] if n["op"] == "repeat"]
    assert {n["phase"] for n in repeats} == {"forward", "backward"}
    assert all(n["repeat"] == 3 and "× 3" in n["label"] for n in repeats)
    full = g.fold(99, repeats=False, leaves=False)
    assert len(full["nodes"]) == len(g.data["nodes"])
    assert len(view["nodes"]) < len(g.fold(99, repeats=False)["nodes"]) < len(full["nodes"])
    ids = {n["id"] for n in view["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in view["edges"])
    assert all("shape" in e and "dtype" in e for e in view["edges"])


def test_plugin_registers_an_inactive_inspector_that_forwards():
    records = plugin.inspectors()
    assert [r.name for r in records] == ["fw_viz.capture"] and not records[0].active
    assert "fw_viz.capture" in fw.inspectors.registered()
    seen = []
    recorder = graph_module._Recorder({}, None)
    recorder.on_op = seen.append
    graph_module._current.append(recorder)
    try:
        with fw.inspectors.activated("fw_viz.capture"):
            fw.ones(2) + 1
    finally:
        graph_module._current.remove(recorder)
    assert seen and seen[-1].op.name == "add"


def test_a_training_model_is_captured_through_its_module():
    net = fw.nn.Sequential(fw.nn.Linear(3, 2))
    model = fw.Model(net)
    g = fw_viz.capture(model, fw.ones(1, 3))
    assert [m["path"] for m in g.modules()] == ["0"] and g.data["title"] == "Sequential"
