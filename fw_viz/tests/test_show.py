"""fw_viz.show: the right picture for each kind of object, saved, never opened headless."""

from __future__ import annotations

import importlib
import webbrowser

import pytest

import fw_core as fw
import fw_viz

show_module = importlib.import_module("fw_viz.show")


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    """No browser may open: tests run as if headless unless they say otherwise."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(webbrowser, "open", lambda url: pytest.fail(f"opened {url}"))


def test_graph_and_model_become_the_html_page(tmp_path):
    path = fw_viz.show(fw_viz.example_graph(), tmp_path / "g.html")
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "fw-graph-data" in page and "linear" in page
    model = fw.nn.Sequential(fw.nn.Linear(4, 3), fw.nn.Tanh())
    path = fw_viz.show(model, tmp_path / "m.html", inputs=fw.randn(2, 4), backward=True)
    assert "tanh" in path.read_text()


def test_a_models_inputs_go_positionally_as_capture_takes_them(tmp_path):
    model = fw.nn.Bilinear(3, 2, 4)
    x, y = fw.randn(5, 3), fw.randn(5, 2)
    path = fw_viz.show(model, x, y, path=tmp_path / "b.html")
    assert path == tmp_path / "b.html" and "bilinear" in path.read_text()
    assert fw_viz.show(model, x, y).suffix == ".html"  # a temporary file
    # the path may still come first when the inputs are named
    path = fw_viz.show(model, tmp_path / "c.html", inputs=(x, y))
    assert "bilinear" in path.read_text()


def test_a_path_given_twice_is_refused():
    with pytest.raises(fw.errors.FwError, match="takes one path") as caught:
        fw_viz.show(fw_viz.example_graph(), "a.html", path="b.html")
    assert "show(model, x)" in caught.value.hint
    with pytest.raises(fw.errors.FwError, match="2 positional"):
        fw_viz.show(fw.nn.Linear(2, 2), "a.html", "b.html", inputs=fw.randn(1, 2))


def test_default_path_is_a_temporary_file():
    path = fw_viz.show(fw_viz.example_graph())
    assert path.exists() and path.suffix == ".html" and "fw_viz_" in str(path.parent)


def test_a_model_needs_inputs_and_unknown_objects_are_refused():
    with pytest.raises(fw.errors.FwError, match="inputs"):
        fw_viz.show(fw.nn.Linear(2, 2))
    with pytest.raises(fw.errors.FwError, match="does not know"):
        fw_viz.show(42)


def test_history_becomes_a_png(tmp_path):
    path = fw_viz.show({"loss": [1.0, 0.5, 0.25]}, tmp_path / "h.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_trace_becomes_an_html_table(tmp_path):
    fw_debugger = pytest.importorskip("fw_debugger")
    model = fw.nn.Linear(3, 2)
    with fw_debugger.record() as trace:
        model(fw.randn(4, 3)).sum().backward()
    page = fw_viz.show(trace, tmp_path / "t.html").read_text()
    assert f"Trace: {len(trace)} events" in page and "<td>linear</td>" in page
    assert "float32[4,3]" in page


def test_attribution_becomes_token_bars_or_needs_the_picture(tmp_path):
    fw_debugger = pytest.importorskip("fw_debugger")
    model = fw.nn.Sequential(fw.nn.Flatten(), fw.nn.Linear(5, 2))
    attribution = fw_debugger.explain(model, fw.randn(1, 5, 1), target=0)
    path = fw_viz.show(attribution, tmp_path / "a.png", tokens=list("abcde"))
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(fw.errors.FwError, match="image="):
        fw_viz.show(attribution, tmp_path / "b.png")


def test_opens_a_browser_only_on_a_desktop_terminal(monkeypatch, tmp_path):
    opened = []
    monkeypatch.setattr(webbrowser, "open", opened.append)
    monkeypatch.setattr(show_module, "_headless", lambda: False)
    path = fw_viz.show(fw_viz.example_graph(), tmp_path / "g.html")
    assert opened == [path.resolve().as_uri()]


def test_headless_when_no_display_or_not_a_terminal(monkeypatch):
    monkeypatch.setattr(show_module.sys, "platform", "linux")
    assert show_module._headless()  # no DISPLAY (removed by the fixture)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(show_module.sys, "stdout", None)
    assert show_module._headless()


def test_importing_the_module_keeps_the_function():
    import fw_viz.show  # noqa: F401  (binds nothing over the public function)

    assert callable(fw_viz.show) and fw_viz.show is show_module.show
