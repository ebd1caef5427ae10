"""``python -m fw_edge.pack`` folders and the built wheel, each run in isolation on NumPy
alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import numpy as np
from fwm_writer import Builder

PACKAGE_ROOT = Path(__file__).parents[1]


def _mlp(path) -> Path:
    rng = np.random.default_rng(2)
    b = Builder({"batch": 1})
    x = b.input("x", "float32", ["batch", 4])
    w = b.weight(rng.standard_normal((3, 4)).astype(np.float32), "fc.weight")
    h = b.node("linear", [x, w, None], "float32", ["batch", 3], module="fc",
               weight_layout="out_in")
    b.output(b.node("softmax", [h], "float32", ["batch", 3], module="head", dim=-1), "output")
    return b.save(path)


_CHECK = """
    import sys; sys.path.insert(0, {folder!r})
    import numpy as np, fw_edge
    prog = fw_edge.load({model!r})
    print(round(float(prog(np.ones((2, 4), np.float32)).sum()), 5))
    print(fw_edge.__file__.startswith({folder!r}), "fw_core" not in sys.modules)
    import importlib.util
    print(importlib.util.find_spec("fw_core") is None)
"""


def test_pack_writes_a_folder_that_runs_alone(tmp_path):
    model = _mlp(tmp_path / "mlp.fwm")
    out = tmp_path / "bundle"
    printed = subprocess.run([sys.executable, "-m", "fw_edge.pack", str(model), "--out",
                              str(out)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}).stdout
    assert "KiB" in printed and "linear, softmax" in printed
    kernels = sorted(p.name for p in (out / "fw_edge" / "kernels").glob("*.py"))
    assert kernels == ["__init__.py", "linalg.py", "softmax.py"]
    code = textwrap.dedent(_CHECK.format(folder=str(out), model=str(out / "mlp.fwm")))
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, env={})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:3] == ["2.0", "True", "True"]  # (this venv has fw_core)


def test_the_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(wheels), str(PACKAGE_ROOT)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("fw_edge-0.1.0-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "numpy>=2.0,<2.6",
                                str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    model = _mlp(tmp_path / "mlp.fwm")
    code = textwrap.dedent(_CHECK.format(folder=str(tmp_path / "nothing"), model=str(model)))
    result = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.0", "False", "True", "True"]  # fw_core not importable
