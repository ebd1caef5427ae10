"""fw_viz.to_dot / save_svg: the Graphviz drawing of a folded graph."""

from __future__ import annotations

import shutil

import pytest

import fw_core as fw
import fw_viz
from fw_viz import dot as dot_module

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (apt-get install graphviz)")


def test_dot_text_has_clusters_labelled_edges_and_summaries():
    g = fw_viz.example_graph(backward=True)
    text = fw_viz.to_dot(g, depth=9, leaves=False)
    assert text.startswith('digraph "MLP" {') and text.rstrip().endswith("}")
    assert 'subgraph "cluster_forward_0"' in text and 'label="1 (ReLU)' in text
    assert "1 (ReLU) · backward" in text
    assert 'label="f32[3,8]"' in text  # an edge with its shape and dtype
    assert "value " in text and "grad " in text  # summaries in the labels
    assert text == g.to_dot(9, leaves=False) == fw_viz.to_dot(g.data, 9, leaves=False)


def test_dot_folds_the_transformer_to_repeat_blocks(transformer_graph):
    text = fw_viz.to_dot(transformer_graph)
    assert "encoder.layers.* × 3 (TransformerEncoderLayer)" in text
    assert 'peripheries="2"' in text
    assert text.count("->") < 120


def test_fused_nodes_are_filled_by_group():
    compiled = fw.compile(lambda x: ((x * 2 + 1).relu() * x).sum(1))
    x = fw.randn(16, 16)
    for _ in range(6):
        compiled(x)
    g = fw_viz.capture(compiled, x)
    if not any(n["fused"] for n in g.data["nodes"]):
        pytest.skip("the scheduler fused nothing here")
    text = fw_viz.to_dot(g)
    assert "fused: g" in text and 'fillcolor="#ffe0b2"' in text


def test_quotes_in_names_are_escaped():
    g = fw_viz.capture(lambda x: x + 1, fw.ones(2), title='say "hi"\\')
    assert 'digraph "say \\"hi\\"\\\\" {' in fw_viz.to_dot(g)


@needs_dot
def test_save_svg_of_the_example_transformer(transformer_graph, artifacts):
    path = fw_viz.save_svg(transformer_graph, artifacts / "transformer.svg")
    svg = (artifacts / "transformer.svg").read_text()
    assert path == str(artifacts / "transformer.svg")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "× 3" in svg and "f32[2,8,32]" in svg
    full = fw_viz.save_svg(transformer_graph, artifacts / "transformer_full.svg", depth=99,
                           repeats=False)
    assert len(open(full).read()) > len(svg)
    fw_viz.save_svg(fw_viz.example_graph(backward=True), artifacts / "mlp.svg", depth=9,
                    leaves=False)


def test_save_svg_without_graphviz_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: None)
    with pytest.raises(fw.errors.FwError) as info:
        fw_viz.save_svg(fw_viz.example_graph(), tmp_path / "g.svg")
    assert "apt-get install graphviz" in str(info.value)
    assert "brew install graphviz" in str(info.value)
