"""The Keras-style examples run end to end and learn: each runs in a fresh interpreter, in a
shortened form where the full run takes long, and its printed result is checked.

The full runs (the numbers the README and the examples' docstrings quote) are longer; these
shortened ones keep every code path (fit, callbacks, checkpoint reload, sampling) and assert
bars well above chance.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
README = ROOT / "README.md"

#: one BLAS thread per example: under ``pytest -n 2`` on two cores, OpenBLAS's own threads
#: oversubscribe the machine and make small matrix products an order of magnitude slower
_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1"}


def run(name: str, *args: str) -> str:
    """The example's stdout; a failed run fails the test with its stderr."""
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=ROOT, env=_ENV,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def final_accuracy(out: str) -> float:
    """The number after the last "test accuracy" the example printed."""
    found = re.findall(r"test accuracy (\d\.\d+)", out)
    assert found, f"no 'test accuracy' line in:\n{out}"
    return float(found[-1])


def test_quickstart_reaches_93_percent():
    out = run("quickstart.py")  # the full run: the README's claim
    assert len(re.findall(r"^Epoch \d+/12 ", out, re.MULTILINE)) == 12, out
    assert final_accuracy(out) >= 0.93, out


def test_readme_quickstart_is_the_example():
    readme = README.read_text()
    section = readme.split("## Quickstart", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = (EXAMPLES / "quickstart.py").read_text().split('"""', 2)[2].strip("\n")
    assert block.strip("\n") == example
    assert len(block.strip("\n").splitlines()) < 20
    assert "examples/quickstart.py" in readme.split("## Set-up", 1)[1]


def test_mnist_mlp_stops_early_and_reloads_the_best_epoch(tmp_path):
    """With patience 0 training ends at the first epoch whose validation loss does not improve
    (epoch 8 with seed 0), long before 30; the reloaded checkpoint is the epoch before."""
    checkpoint = tmp_path / "best"
    out = run("mnist_mlp.py", "--epochs", "30", "--patience", "0", "--checkpoint",
              str(checkpoint))
    assert "val_loss" in out and "val_accuracy" in out, out
    trained = int(re.search(r"trained (\d+) epochs", out)[1])
    best = int(re.search(r"best val_loss [\d.]+ at epoch (\d+)", out)[1])
    assert best == trained - 1 and trained < 30, out
    assert f"(epoch {best})" in out, out  # the reloaded model is the best epoch's
    assert (checkpoint / "CURRENT").is_file() and len(list(checkpoint.iterdir())) == 2
    assert final_accuracy(out) > 0.85, out


def test_cnn_learns():
    out = run("cnn.py", "--epochs", "1", "--samples", "1000")
    assert final_accuracy(out) > 0.5, out  # chance is 0.1


def test_lstm_learns():
    out = run("lstm.py", "--epochs", "2", "--samples", "2000")
    assert final_accuracy(out) > 0.45, out  # chance is 0.1; this run gets 0.54


def test_char_transformer_generates_text():
    length = 60
    out = run("char_transformer.py", "--steps", "15", "--generate", str(length))
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss (\d+\.\d+)", out, re.MULTILINE)]
    uniform = float(re.search(r"uniform loss (\d+\.\d+)", out)[1])
    assert losses and losses[-1] < uniform - 1.0, out  # learnt character frequencies at least
    sample = out.split("temperature 0.8 ---\n", 1)[1].split("\n--- end of sample ---", 1)[0]
    assert sample.startswith("def ")
    assert len(sample) == len("def ") + length, out
