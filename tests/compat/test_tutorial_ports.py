"""PyTorch tutorial programs run on fw with their imports renamed, and nothing else changed.

Each program in ``tutorials/`` is plain PyTorch code with a ``build()`` returning its model and
a ``train(model, data)`` returning what it computed. It runs twice: as written, on torch, and
with its import lines renamed (``import torch`` -> ``import fw_core as torch``, ``torch.X`` ->
``fw_core.X``), on fw. Both start from the same weights (torch's, copied into fw's model with
``load_state_dict``) and the same data, so every loss, rate and prediction must agree to 1e-5.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pytest

import fw_core as fw

torch = pytest.importorskip("torch")

PROGRAMS = Path(__file__).resolve().parent / "tutorials"

_RENAMES = [
    (re.compile(r"^import torch$", re.M), "import fw_core as torch"),
    (re.compile(r"^import torch\.([\w.]+) as (\w+)$", re.M), r"import fw_core.\1 as \2"),
    (re.compile(r"^from torch((?:\.\w+)*) import ", re.M), r"from fw_core\1 import "),
]


def renamed(source: str) -> str:
    """``source`` with its torch imports pointing at fw_core; no other line changes."""
    for pattern, replacement in _RENAMES:
        source = pattern.sub(replacement, source)
    return source


def load(name: str, on_fw: bool) -> types.ModuleType:
    path = PROGRAMS / f"{name}.py"
    source = path.read_text()
    if on_fw:
        source = renamed(source)
        assert not re.search(r"^\s*(import|from) torch\b", source, re.M), "an import escaped"
    module = types.ModuleType(f"tutorial_{name}_{'fw' if on_fw else 'torch'}")
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def _data(name: str, tmp_path: Path) -> dict:
    rng = np.random.default_rng(7)
    if name == "mlp_classifier":
        x = rng.standard_normal((48, 8))
        return {"x": x, "y": (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5)}
    if name == "cnn_classifier":
        images = rng.standard_normal((16, 1, 10, 10)).astype(np.float32)
        return {"images": images, "labels": rng.integers(0, 4, 16).astype(np.int64)}
    if name == "transformer_lm":
        return {"tokens": rng.integers(0, 20, (3, 13)).astype(np.int64)}
    if name == "checkpoint_resume":
        tmp_path.mkdir()
        x = rng.standard_normal((32, 5))
        return {"x": x, "y": np.sin(x).sum(1), "path": str(tmp_path / f"{name}.pt")}
    if name == "custom_function":
        return {"probe": rng.standard_normal((3, 4)), "x": rng.standard_normal((10, 6)),
                "target": rng.standard_normal((10, 2))}
    return {}


def _same(ours, theirs, where: str) -> None:
    if isinstance(theirs, dict):
        assert ours.keys() == theirs.keys(), where
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, (str, bool, int)) and not isinstance(theirs, np.integer):
        assert ours == theirs, where
    else:
        np.testing.assert_allclose(np.asarray(ours, dtype=np.float64),
                                   np.asarray(theirs, dtype=np.float64),
                                   rtol=1e-5, atol=1e-5, err_msg=where)


@pytest.mark.parametrize("name", sorted(p.stem for p in PROGRAMS.glob("*.py")))
def test_program_runs_renamed_and_agrees_with_torch(name, tmp_path):
    on_torch, on_fw = load(name, on_fw=False), load(name, on_fw=True)
    torch.manual_seed(0)
    theirs_model = on_torch.build()
    ours_model = on_fw.build()
    state = {k: fw.tensor(v.detach().numpy()) for k, v in theirs_model.state_dict().items()}
    ours_model.load_state_dict(state)

    theirs = on_torch.train(theirs_model, _data(name, tmp_path / "torch"))
    ours = on_fw.train(ours_model, _data(name, tmp_path / "fw"))
    _same(ours, theirs, name)


def test_renaming_touches_only_import_lines():
    source = "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n" \
             "x = torch.zeros(2)  # torch.nn stays\n"
    assert renamed(source) == ("import fw_core as torch\nimport fw_core.nn as nn\n"
                               "from fw_core.utils.data import DataLoader\n"
                               "x = torch.zeros(2)  # torch.nn stays\n")
