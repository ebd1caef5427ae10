"""Model.fit compiles its training step through the scheduler; the audit log of a fit run can
be exported, and replaying it in a fresh run gives the same decisions."""

import json

import numpy as np

import fw_core as fw


def _fit_once(epochs=2):
    fw.manual_seed(0)
    x, y = fw.randn(96, 10), fw.randint(0, 3, (96,))
    model = fw.Sequential([fw.nn.Linear(10, 16), fw.nn.ReLU(), fw.nn.Linear(16, 3)])
    model.compile(optimizer="adam", loss="cross_entropy")
    history = model.fit(x, y, epochs=epochs, batch_size=32, verbose=0, shuffle=False)
    return model, history


def _decisions(entries):
    return [(e["kind"], e["subject"], e["choice"]) for e in entries]


def test_fit_compiles_its_step_and_matches_eager(tmp_path):
    fw.scheduler.reset()
    compiled_model, compiled = _fit_once()
    fw.scheduler.disable()
    try:
        eager_model, eager = _fit_once()
    finally:
        fw.scheduler.reset()
    np.testing.assert_allclose(compiled.history["loss"], eager.history["loss"], rtol=1e-5)
    for p, q in zip(compiled_model.module.parameters(), eager_model.module.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-6)
    step = compiled_model._compiled[1]
    assert step.counts["plan_calls"] > 0, step.explain()


def test_audit_log_frozen_exported_and_replayed(tmp_path):
    fw.scheduler.reset()
    _fit_once()
    fw.scheduler.freeze()
    path = fw.scheduler.export(tmp_path / "audit.jsonl")
    recorded = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = {e["kind"] for e in recorded}
    assert "compile" in kinds and "fuse" in kinds, kinds
    for entry in recorded:
        assert entry["reason"] and "stats" in entry

    fw.scheduler.reset()
    fw.scheduler.replay(path)
    _fit_once()
    replayed = fw.scheduler.log()
    assert _decisions(replayed) == _decisions(recorded)
    assert all(e["mode"] == "replayed" for e in replayed)
    fw.scheduler.reset()
