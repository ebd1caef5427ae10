"""model.save / fw.Model.load: architecture as data (never a pickle, never an import), exact
resume in a fresh process, versioned folders behind one pointer, verified loads."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import CheckpointError

nn = fw.nn
HERE = Path(__file__).parent


def same_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return list(sa) == list(sb) and all(
        sa[k].dtype is sb[k].dtype and np.array_equal(sa[k].numpy(), sb[k].numpy()) for k in sa)


def data(n=128):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    return x, (x[:, 0] + x[:, 1] > 0).astype(np.int64)


def bn_model() -> fw.Model:
    return fw.Model(nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(),
                                  nn.Dropout(0.2), nn.Linear(32, 2)))


RESUME = textwrap.dedent("""
    import sys, numpy as np
    import fw_core as fw
    sys.path.insert(0, {here!r})
    from test_model_folder import bn_model, data
    # the same decisions in every process: the scheduler's measured fusions depend on timings,
    # and a fused group may round differently from its nodes run one by one
    fw.scheduler.configure(fusion="always")
    x, y = data()
    if sys.argv[1] == "second":
        model = fw.Model.load(sys.argv[2])
        model.fit(x, y, epochs=4, batch_size=16, verbose=0, initial_epoch=model.epoch)
    else:
        fw.manual_seed(3)
        model = bn_model()
        model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"], lr=0.01)
        model.fit(x, y, epochs=2 if sys.argv[1] == "first" else 4, batch_size=16, verbose=0)
    if sys.argv[1] == "first":
        model.save(sys.argv[2])
    else:
        fw.save(model.module.state_dict(), sys.argv[3])
""")


def test_batchnorm_dropout_adam_resumed_in_a_fresh_process_equals_straight_training(tmp_path):
    # straight training runs in a fresh process too: what a pytest worker ran before (its
    # kernel caches, plugins registered by other tests) must not decide the comparison
    script = tmp_path / "resume.py"
    script.write_text(RESUME.format(here=str(HERE)))
    folder = str(tmp_path / "ckpt")
    resumed, straight = (str(tmp_path / f"{name}.safetensors") for name in ("resumed", "straight"))
    for argv in (["first", folder], ["second", folder, resumed], ["straight", folder, straight]):
        subprocess.run([sys.executable, str(script), *argv], check=True)
    a, b = bn_model().module, bn_model().module
    a.load_state_dict(fw.load(resumed))
    b.load_state_dict(fw.load(straight))
    assert same_weights(a, b)  # bit for bit


# -- what the folder holds -----------------------------------------------------------------------
def saved(tmp_path, model=None, **compile_args) -> tuple[fw.Model, Path]:
    model = model or bn_model()
    model.compile(**{"optimizer": "adam", "loss": "cross_entropy", **compile_args})
    x, y = data(32)
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    model.save(tmp_path / "m")
    return model, tmp_path / "m"


def test_the_folder_holds_a_pointer_and_one_version_of_data_only(tmp_path):
    model, folder = saved(tmp_path, metrics=["accuracy", "top2_accuracy"])
    assert sorted(os.listdir(folder)) == ["CURRENT", "v000001"]
    assert sorted(os.listdir(folder / "v000001")) == [
        "model.json", "optimizer.safetensors", "tensors.safetensors"]
    meta = json.loads((folder / "v000001" / "model.json").read_text())
    assert meta["architecture"]["class"] == "fw.nn.Sequential"
    assert meta["optimizer"]["class"] == "fw.optim.Adam"
    assert meta["loss"] == "cross_entropy" and meta["metrics"] == ["accuracy", "top2_accuracy"]
    model.save(folder)
    assert sorted(os.listdir(folder)) == ["CURRENT", "v000002"]
    again = fw.Model.load(folder)
    assert same_weights(again.module, model.module) and again.epoch == 1
    assert [m.name for m in again.metrics] == ["accuracy", "top2_accuracy"]


class Tower(nn.Module):
    """A model class of a user's own, with tied weights."""

    def __init__(self, vocab: int, width: int, act=nn.functional.gelu):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.body = nn.ModuleList([nn.Linear(width, width) for _ in range(2)])
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight
        self.act = act

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.body:
            h = self.act(layer(h))
        return self.head(h)


def test_classes_of_your_own_need_custom_objects_or_registration(tmp_path):
    model = fw.Model(Tower(11, 4))
    model.compile(optimizer="sgd", loss="cross_entropy")
    model.save(tmp_path / "t")
    with pytest.raises(CheckpointError, match="custom_objects=\\{'Tower': Tower\\}"):
        fw.Model.load(tmp_path / "t")
    back = fw.Model.load(tmp_path / "t", custom_objects={"Tower": Tower})
    assert same_weights(back.module, model.module)
    assert back.module.head.weight is back.module.embed.weight
    fw.serializable(Tower)
    assert same_weights(fw.Model.load(tmp_path / "t").module, model.module)


def test_changes_after_construction_are_saved(tmp_path):
    """Replaced, added and removed children, retyped and frozen tensors, changed attributes."""
    fw.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
    net[3] = nn.Linear(16, 3)
    net.append(nn.LogSoftmax(dim=1))
    del net[2]
    net[0].weight.requires_grad_(False)
    net[1].momentum = 0.5
    net = net.double()
    model = fw.Model(net)
    model.compile(optimizer="sgd", loss="nll")
    model.save(tmp_path / "m")
    back = fw.Model.load(tmp_path / "m").module
    assert repr(back) == repr(net) and same_weights(back, net)
    assert back[1].momentum == 0.5 and not back[0].weight.requires_grad
    assert back[0].weight.dtype is fw.float64
    x = fw.randn(4, 8, dtype=fw.float64)
    net.eval(), back.eval()
    with fw.no_grad():
        np.testing.assert_array_equal(back(x).numpy(), net(x).numpy())


def test_what_cannot_be_named_is_refused_before_anything_is_written(tmp_path):
    model = bn_model()
    model.compile(optimizer="adam", loss=lambda out, target: fw.cross_entropy(out, target))
    with pytest.raises(CheckpointError, match="cannot save loss"):
        model.save(tmp_path / "m")
    model.compile(optimizer="adam", loss="cross_entropy")
    model.module.activation = lambda t: t
    with pytest.raises(CheckpointError, match="attribute 'activation'"):
        model.save(tmp_path / "m")
    assert not (tmp_path / "m").exists() or os.listdir(tmp_path / "m") == []


def test_a_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    model, folder = saved(tmp_path)
    before = fw.Model.load(folder)
    from fw_core.io import files

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "dump", crash)
    with pytest.raises(CheckpointError, match="No space left"):
        model.save(folder)
    monkeypatch.undo()
    assert sorted(os.listdir(folder)) == ["CURRENT", "v000001"]
    assert same_weights(fw.Model.load(folder).module, before.module)


def test_a_folder_of_other_files_is_not_written_into(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "thesis.tex").write_text("mine")
    model = bn_model()
    model.compile()
    with pytest.raises(CheckpointError, match="not an fw checkpoint \\(thesis.tex\\)"):
        model.save(tmp_path / "notes")
    assert os.listdir(tmp_path / "notes") == ["thesis.tex"]


# -- verified loads ------------------------------------------------------------------------------
def test_damage_anywhere_in_the_folder_is_detected(tmp_path):
    _, folder = saved(tmp_path)
    files = [folder / "CURRENT", *sorted((folder / "v000001").iterdir())]
    originals = {p: p.read_bytes() for p in files}
    for path, data_ in originals.items():
        for position in range(0, len(data_), max(1, len(data_) // 40)):
            changed = bytearray(data_)
            changed[position] ^= 0x10
            path.write_bytes(bytes(changed))
            with pytest.raises(CheckpointError):
                fw.Model.load(folder)
        path.write_bytes(data_)
    other = tmp_path / "other"
    saved(other)
    (folder / "v000001" / "optimizer.safetensors").write_bytes(
        (other / "m" / "v000001" / "optimizer.safetensors").read_bytes())
    with pytest.raises(CheckpointError, match="not the file this checkpoint saved"):
        fw.Model.load(folder)


def test_an_interrupted_first_save_and_an_empty_folder_say_so(tmp_path):
    (tmp_path / "m").mkdir()
    with pytest.raises(CheckpointError, match="holds no complete model checkpoint"):
        fw.Model.load(tmp_path / "m")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    staging = tmp_path / "m" / f".v000001.{child.pid}-00000000.fw-tmp"
    staging.mkdir()
    with pytest.raises(CheckpointError, match="a save was interrupted"):
        fw.Model.load(tmp_path / "m")
    assert fw.io.stale(tmp_path / "m") == [staging]


MARKER_PICKLE = textwrap.dedent("""
    import os, pickle, sys
    class Plant:
        def __reduce__(self):
            return (os.system, ("touch " + sys.argv[2],))
    open(sys.argv[1], "wb").write(pickle.dumps(Plant()))
""")


def test_planted_pickles_and_module_names_never_run(tmp_path):
    marker = tmp_path / "ran"
    old = tmp_path / "old"
    old.mkdir()
    for name in ("architecture.pkl", "loss.pkl"):
        subprocess.run([sys.executable, "-c", MARKER_PICKLE, str(old / name), str(marker)],
                       check=True)
    (old / "model.json").write_text(json.dumps({"format": 1, "optimizer_class": "planted:X"}))
    (tmp_path / "planted.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(CheckpointError, match="fw never loads pickles"):
            fw.Model.load(old)
        _, folder = saved(tmp_path)
        meta_path = folder / "v000001" / "model.json"
        for planted in ("planted.X", "os.system", "subprocess.Popen", "builtins.eval"):
            meta = json.loads(meta_path.read_text())
            meta["architecture"]["config"]["modules"]["__dict__"][0][1]["class"] = planted
            meta["loss"] = {"function": planted}
            text = json.dumps(meta).encode()
            meta_path.write_bytes(text)
            (folder / "CURRENT").write_text(f"v000001 sha256:{hashlib.sha256(text).hexdigest()}\n")
            with pytest.raises(CheckpointError, match="fw never imports"):
                fw.Model.load(folder)
    finally:
        sys.path.remove(str(tmp_path))
    assert not marker.exists() and "planted" not in sys.modules
