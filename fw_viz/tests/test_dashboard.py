"""fw_viz.Dashboard: a fit run writes a self-contained HTML report and its PNGs."""

import base64
import re
import sys

import numpy as np
import pytest

import fw_core as fw
import fw_core.nn as nn


def _fit(callbacks, epochs=3):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 96)
    x = (np.eye(3)[y] @ rng.normal(0, 3, (3, 8)) + rng.normal(0, 1, (96, 8))).astype(np.float32)
    fw.manual_seed(0)
    model = fw.Sequential([nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)])
    model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"], lr=0.05)
    return model, model.fit(x, y, epochs=epochs, batch_size=32, validation_split=0.25,
                            verbose=0, callbacks=callbacks)


def _images(page):
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


def test_fit_writes_self_contained_html_and_pngs(artifacts):
    pytest.importorskip("fw_debugger")
    from fw_viz import Dashboard

    pages = []

    class Spy(fw.training.callbacks.Callback):  # runs after the dashboard each epoch
        def on_epoch_end(self, epoch, logs=None):
            pages.append(path.read_text())

    path = artifacts / "dashboard.html"
    dashboard = Dashboard(path, every=1, refresh_s=2)
    _, history = _fit([dashboard, Spy()])
    # rewritten at every epoch end, with a refresh while running, none at the end
    assert len(pages) == 3 and all('http-equiv="refresh" content="2"' in p for p in pages)
    assert "running: 2 epochs" in pages[1]
    page = path.read_text()
    assert "http-equiv" not in page and "finished: 3 epochs, 9 batches" in page
    assert set(dashboard.pngs) == {"curves", "learning_rate", "memory", "gradient_health",
                                   "op_time"}
    for name, png in dashboard.pngs.items():
        assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert len(_images(page)) == 5 and _images(page)[0] == dashboard.pngs["curves"].read_bytes()
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # no network
    assert dashboard.history["loss"] == pytest.approx(history.history["loss"])
    assert dashboard.memory["parameter"][-1] > 0  # weights are tracked in fw.memory
    assert {"0", "2"} <= set(dashboard.grad_norms) and len(dashboard.grad_norms["0"][0]) == 9
    assert any(op.startswith("linear") for op in dashboard.op_time)


def test_without_fw_debugger_the_panels_are_skipped_with_a_note(tmp_path, monkeypatch):
    from fw_viz import Dashboard

    monkeypatch.setitem(sys.modules, "fw_debugger", None)  # import fw_debugger -> ImportError
    dashboard = Dashboard(tmp_path / "d.html", every=2)
    _fit([dashboard], epochs=1)
    assert set(dashboard.pngs) == {"curves", "learning_rate", "memory"}
    assert dashboard.memory_steps == [0, 2]
    page = (tmp_path / "d.html").read_text()
    assert "fw_debugger is not installed" in page and len(_images(page)) == 3
    assert (tmp_path / "d_png" / "memory.png").exists()


def test_every_must_be_positive():
    from fw_viz import Dashboard

    with pytest.raises(ValueError, match="every"):
        Dashboard("x.html", every=0)
