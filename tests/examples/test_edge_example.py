"""examples/edge_minilm.py exports all-MiniLM-L6-v2 and fw-edge reproduces fw's embeddings."""

import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "edge_minilm.py"


@pytest.mark.parametrize("flags, bound", [((), 1e-5), (("--int8",), 0.05)])
def test_edge_minilm_matches_fw(tmp_path, flags, bound):
    pytest.importorskip("fw_zoo")
    out = subprocess.run([sys.executable, str(EXAMPLE), "--out", str(tmp_path / "m.fwm"),
                          *flags], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    difference = float(re.search(r"max \|fw-edge - fw\|: (\S+)", out)[1])
    assert difference < bound, out
    assert "MiB" in out and "cosine" in out, out
