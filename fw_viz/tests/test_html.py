"""The interactive HTML page: self-contained, and driven in a real browser (Debian chromium via
Playwright, never ``playwright install``): modules expand and collapse, the side panel shows a
node's shapes, search highlights. Screenshots go to ``test-artifacts/fw_viz/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fw_viz.html import render_html, save_html

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "fw_viz"


def module(path, type_, parent, repeat_group=None) -> dict:
    return {"path": path, "type": type_, "parent": parent, "repeat_group": repeat_group}


def small_graph(layers: int = 3) -> dict:
    """A hand-built graph in the documented model: x -> repeated blocks (fc, relu, add) -> head."""
    nodes, edges = [], []

    def node(op, module, inputs, shape, **extra):
        nid = f"n{len(nodes)}"
        nodes.append({"id": nid, "op": op, "module": module, "phase": "forward",
                      "inputs": [{"shape": s, "dtype": "float32"} for _, s in inputs],
                      "outputs": [{"shape": shape, "dtype": "float32"}],
                      "signature": f"{op}(x)", "doc": f"the {op} op", "structure": "elementwise",
                      "anchor": f"ops/{op}", "time_ms": 0.05, "memory_tag": "activation",
                      "fused": extra.get("fused"), "fused_rule": extra.get("rule"),
                      "summary": {"min": -1.0, "max": 2.0, "mean": 0.25}, "grad_summary": None})
        edges.extend({"source": src, "target": nid, "shape": s, "dtype": "float32"}
                     for src, s in inputs)
        return nid, shape

    x = node("input", "", [], [16, 64])
    modules = [module("encoder", "Encoder", ""), module("encoder.layers", "Sequential", "encoder")]
    for i in range(layers):
        path = f"encoder.layers.{i}"
        modules += [module(path, "Block", "encoder.layers", "encoder.layers.*"),
                    module(f"{path}.fc", "Linear", path)]
        w = node("parameter", f"{path}.fc", [], [64, 64])
        h = node("matmul", f"{path}.fc", [x, w], [16, 64])
        r = node("relu", path, [h], [16, 64], fused=f"g{i}", rule="cpu.numba_pointwise")
        x = node("add", path, [r, x], [16, 64], fused=f"g{i}", rule="cpu.numba_pointwise")
    modules.append(module("head", "Linear", ""))
    w = node("parameter", "head", [], [64, 10])
    node("matmul", "head", [x, w], [16, 10])
    return {"title": "small <test> graph", "nodes": nodes, "edges": edges, "inputs": [],
            "modules": modules, "fold": {"default_depth": 2}}


def test_page_is_self_contained(tmp_path):
    page = render_html(small_graph())
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"<script[^>]+src=|<link\b|@import|url\(", page)
    assert "small &lt;test&gt; graph" in page and "<test>" not in page  # title and JSON escaped
    path = save_html(small_graph(), tmp_path / "sub" / "g.html", depth=3)
    assert '"default_depth": 3' in path.read_text()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    path = save_html(small_graph(), ARTIFACTS / "small_graph.html")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1280, "height": 800})
        requests, errors = [], []
        pg.on("request", lambda r: requests.append(r.url))
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(path.as_uri())
        pg.wait_for_selector("g.node")
        yield pg
        browser.close()
    assert not errors, errors
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests


def visible(page) -> int:
    return page.locator("g.node").count()


def test_modules_expand_and_collapse(page):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "html_default_fold.png"))
    folded = visible(page)
    group = page.locator('g.node.group[data-key="group:encoder.layers.*"]')
    assert group.count() == 1 and "× 3" in group.text_content()
    group.click()                                  # unfold the repeated blocks: three boxes
    unfolded = visible(page)
    assert unfolded == folded + 2
    page.locator('g.node.module[data-key="module:encoder.layers.1"]').click()
    expanded = visible(page)
    assert expanded > unfolded
    assert page.locator('g.node.module[data-key="module:encoder.layers.1.fc"]').count() == 1
    page.screenshot(path=str(ARTIFACTS / "html_expanded.png"))
    page.locator('text.cluster-label[data-module="encoder.layers.1"]').click()
    assert visible(page) == unfolded


def test_side_panel_shows_shapes(page):
    page.click("#fw-reset")
    page.locator('g.node[data-key="op:n14"]').click()  # the head's matmul
    body = page.locator("#fw-panel-body").text_content()
    assert "16, 64" in body and "16, 10" in body and "matmul(x)" in body and "activation" in body
    page.locator('g.node.group').click()  # a box: its outputs and op count
    assert "[16, 64] float32" in page.locator("#fw-panel-body").text_content()


def test_search_highlights_and_tooltip(page):
    page.click("#fw-expand-all")
    page.fill("#fw-search", "relu")
    assert page.locator("g.node.highlight").count() == 3
    assert page.locator("g.fused-region").count() == 3
    page.locator('g.node[data-key="op:n3"]').hover()
    assert "mean 0.25" in page.locator("#fw-tooltip").text_content()
    page.screenshot(path=str(ARTIFACTS / "html_search.png"))
    page.fill("#fw-search", "")
    assert page.locator("g.node.highlight").count() == 0


def test_transformer_readable_at_default_fold(page):
    fw = pytest.importorskip("fw_core")
    capture = pytest.importorskip("fw_viz.graph").capture
    fw.manual_seed(0)
    model = fw.nn.TransformerEncoder(fw.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64), 3)
    graph = capture(model, fw.randn(8, 2, 32), backward=True, values="summary")
    ops = len(graph.data["nodes"])
    path = save_html(graph, ARTIFACTS / "transformer.html")
    page.goto(path.as_uri())
    page.wait_for_selector("g.node")
    shown = visible(page)
    page.screenshot(path=str(ARTIFACTS / "html_transformer_default_fold.png"))
    assert ops > 200 and 0 < shown < 20  # hundreds of ops, folded to a readable handful
    page.locator("g.node.group").first.click()
    page.locator("g.node.module").first.click()
    assert visible(page) > shown
    page.screenshot(path=str(ARTIFACTS / "html_transformer_layer_open.png"))
