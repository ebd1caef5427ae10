"""A model exported by fw runs where only NumPy is installed: first as a folder written by
``python -m fw_edge.pack``, then through the fw-edge wheel installed into the same fresh venv;
fw-core is importable in neither."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import numpy as np

import fw_core as fw

EDGE = Path(__file__).resolve().parents[3] / "plugins" / "fw_edge"

_RUN = """
    import sys; sys.path[:0] = {path!r}
    import importlib.util, numpy as np, fw_edge
    assert importlib.util.find_spec("fw_core") is None, "fw-core is importable"
    program = fw_edge.load({model!r})
    np.save({out!r}, program(np.load({x!r})))
    print(fw_edge.__file__)
"""


def _run(python, tmp_path, path, name):
    code = textwrap.dedent(_RUN.format(path=path, model=str(tmp_path / "cnn.fwm"),
                                       out=str(tmp_path / f"{name}.npy"),
                                       x=str(tmp_path / "x.npy")))
    done = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return np.load(tmp_path / f"{name}.npy"), done.stdout.strip()


def test_an_exported_model_runs_with_numpy_alone(tmp_path):
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Conv2d(3, 8, 3, padding=1), fw.nn.BatchNorm2d(8),
                             fw.nn.ReLU(), fw.nn.MaxPool2d(2), fw.nn.Flatten(),
                             fw.nn.Linear(8 * 4 * 4, 10), fw.nn.Softmax(dim=-1))
    fw.export(model, (fw.randn(2, 3, 8, 8),), tmp_path / "cnn.fwm",
              dynamic_dims={"x": {0: "batch"}})
    x = np.random.default_rng(0).standard_normal((5, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    with fw.no_grad():
        want = model.eval()(fw.tensor(x)).numpy()

    subprocess.run([sys.executable, "-m", "fw_edge.pack", str(tmp_path / "cnn.fwm"), "--out",
                    str(tmp_path / "app")], check=True, capture_output=True)
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "numpy>=2.0,<2.6"], check=True,
                   capture_output=True)
    packed, where = _run(python, tmp_path, [str(tmp_path / "app")], "packed")
    assert where.startswith(str(tmp_path / "app"))
    np.testing.assert_allclose(packed, want, rtol=1e-6, atol=1e-7)

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "wheels"), str(EDGE)], check=True,
                   capture_output=True)
    (wheel,) = (tmp_path / "wheels").glob("fw_edge-*.whl")
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True)
    installed, where = _run(python, tmp_path, [], "installed")
    assert "site-packages" in where
    np.testing.assert_allclose(installed, want, rtol=1e-6, atol=1e-7)
