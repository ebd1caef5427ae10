"""The raw-autograd examples train to their stated accuracy (they are the README's demo and the
fresh-install check)."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def run(name, *args):
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], check=True,
                          capture_output=True, text=True, timeout=300).stdout


def test_tiny_autograd_learns_xor():
    out = run("tiny_autograd.py")
    accuracy = float(out.split("accuracy")[-1])
    assert accuracy > 0.9, out


def test_raw_autograd_learns_spirals():
    out = run("raw_autograd.py", "--steps", "300")
    accuracy = float(out.split("train accuracy")[-1])
    assert accuracy > 0.9, out
