"""Model.compile/fit/evaluate/predict, callbacks, bad inputs and exact resume."""

import io
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import CheckpointError, FwError, StateDictError


def blobs(n=240, classes=3, features=8, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, (classes, features))
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.normal(0, 1, (n, features))
    return x.astype(np.float32), y.astype(np.int64)


def small_model(features=8, classes=3):
    fw.manual_seed(0)
    return fw.Sequential([nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, classes)])


def test_fit_learns_and_history_records_every_epoch():
    x, y = blobs()
    model = small_model()
    model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"], lr=0.05)
    history = model.fit(x, y, epochs=5, batch_size=32, validation_split=0.25, verbose=0)
    assert history.epoch == [0, 1, 2, 3, 4]
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert history.history["loss"][-1] < history.history["loss"][0]
    result = model.evaluate(x, y)
    assert result["accuracy"] > 0.9
    assert model.predict(x).shape == (len(x), 3)


def test_fit_accepts_datasets_and_loaders():
    x, y = blobs()
    data = fw.data.TensorDataset(fw.tensor(x), fw.tensor(y))
    model = small_model()
    model.compile(optimizer=lambda params: fw.optim.SGD(params, lr=0.1), loss="cross_entropy")
    model.fit(data, epochs=1, batch_size=50, verbose=0)
    loader = fw.data.DataLoader(data, batch_size=40)
    history = model.fit(loader, epochs=2, verbose=0, validation_data=loader)
    assert "val_loss" in history.history


def test_progress_prints_one_line_per_epoch_off_a_terminal():
    from fw_core.training import ProgressBar

    x, y = blobs(64)
    stream = io.StringIO()
    model = small_model()
    model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
    model.fit(x, y, epochs=3, batch_size=8, verbose=0, callbacks=[ProgressBar(stream=stream)])
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and all(line.startswith(f"Epoch {i + 1}/3") for i, line in
                                    enumerate(lines))
    assert "\r" not in stream.getvalue()


def test_early_stopping_restores_best_weights():
    x, y = blobs()
    model = small_model()
    model.compile(optimizer="sgd", loss="cross_entropy", lr=0.05)
    seen = []
    stopper = fw.callbacks.EarlyStopping(monitor="loss", patience=0, restore_best_weights=True,
                                         min_delta=10.0)  # nothing counts as improving
    record = fw.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(
        {k: v.clone() for k, v in model.module.state_dict().items()}))
    model.fit(x, y, epochs=10, verbose=0, callbacks=[record, stopper])
    assert stopper.stopped_epoch == 1 and len(seen) == 2
    for k, v in model.module.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), seen[0][k].numpy())


def test_checkpoint_csv_lr_schedule_and_terminate_on_nan(tmp_path):
    x, y = blobs()
    model = small_model()
    model.compile(optimizer="sgd", loss="cross_entropy", lr=0.1)
    callbacks = [
        fw.callbacks.ModelCheckpoint(str(tmp_path / "best"), monitor="loss", save_best_only=True),
        fw.callbacks.CSVLogger(str(tmp_path / "log.csv")),
        fw.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 * 0.5 ** epoch),
    ]
    model.fit(x, y, epochs=3, verbose=0, callbacks=callbacks)
    assert fw.Model.load(tmp_path / "best").epoch >= 1
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].startswith("epoch,") and len(rows) == 4
    assert model.optimizer.param_groups[0]["lr"] == pytest.approx(0.025)

    model.compile(optimizer="sgd", loss=lambda out, t: fw.cross_entropy(out, t) * float("nan"))
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[fw.callbacks.TerminateOnNaN()])
    assert len(history.epoch) == 1


def test_metrics_by_name():
    x, y = blobs()
    model = small_model()
    model.compile(optimizer="adam", loss="cross_entropy", lr=0.05,
                  metrics=["accuracy", "top2_accuracy", "precision", "recall", "f1"])
    model.fit(x, y, epochs=3, verbose=0)
    result = model.evaluate(x, y)
    assert result["top2_accuracy"] >= result["accuracy"]
    assert 0 <= result["f1"] <= 1


def test_bad_inputs_give_clear_errors():
    x, y = blobs()
    model = small_model()
    with pytest.raises(FwError, match="compile"):
        model.fit(x, y)
    model.compile(optimizer="adam", loss="cross_entropy")
    with pytest.raises(fw.errors.ShapeError) as wrong_shape:
        model.fit(x[:, :5], y, verbose=0)
    assert "0" in str(wrong_shape.value)  # names the module path of the first Linear
    with pytest.raises(FwError, match="class|label|target"):
        model.fit(x, y + 5, verbose=0)
    bad = x.copy()
    bad[3, 2] = np.nan
    with pytest.raises(FwError, match="NaN"):
        model.fit(bad, y, verbose=0, batch_size=16)
    with pytest.raises(FwError, match="samples"):
        model.fit(x, y[:10], verbose=0)
    with pytest.raises(FwError, match="unknown optimizer"):
        model.compile(optimizer="adamax")


RESUME = textwrap.dedent("""
    import sys, json, numpy as np
    import fw_core as fw, fw_core.nn as nn
    sys.path.insert(0, {here!r})
    from test_model import blobs, small_model
    x, y = blobs()
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "first":
        model = small_model()
        model.compile(optimizer="adamw", loss="cross_entropy", lr=0.01)
        model.fit(x, y, epochs=2, batch_size=32, verbose=0)
        model.save(path)
    else:
        model = fw.Model.load(path)
        model.fit(x, y, epochs=3, batch_size=32, verbose=0, initial_epoch=model.epoch)
        print(json.dumps({{k: v.numpy().tolist() for k, v in model.module.state_dict().items()}}))
""")


def test_resume_in_a_new_process_equals_uninterrupted_training(tmp_path):
    import pathlib

    here = str(pathlib.Path(__file__).parent)
    script = tmp_path / "resume.py"
    script.write_text(RESUME.format(here=here))
    ckpt = str(tmp_path / "ckpt")
    subprocess.run([sys.executable, str(script), "first", ckpt], check=True)
    out = subprocess.run([sys.executable, str(script), "second", ckpt], check=True,
                         capture_output=True, text=True).stdout
    resumed = json.loads(out)

    x, y = blobs()
    model = small_model()
    model.compile(optimizer="adamw", loss="cross_entropy", lr=0.01)
    model.fit(x, y, epochs=3, batch_size=32, verbose=0)
    for k, v in model.module.state_dict().items():
        np.testing.assert_allclose(np.array(resumed[k]), v.numpy(), rtol=1e-6, atol=1e-7)


def test_truncated_model_checkpoint_and_foreign_state_dict(tmp_path):
    model = small_model()
    model.compile(optimizer="adam", loss="cross_entropy")
    model.save(tmp_path / "m")
    weights = tmp_path / "m" / "v000001" / "tensors.safetensors"
    weights.write_bytes(weights.read_bytes()[:50])
    with pytest.raises(CheckpointError, match="truncated or damaged"):
        fw.Model.load(tmp_path / "m")
    other = fw.Sequential([nn.Linear(8, 4)])
    with pytest.raises(StateDictError, match="unexpected keys: 2.weight, 2.bias") as info:
        other.module.load_state_dict(model.module.state_dict())
    assert "0.weight: checkpoint (16, 8) vs model (4, 8)" in str(info.value)
