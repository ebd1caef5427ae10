"""The whole repository passes ruff with the configuration in pyproject.toml."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(pathlib.Path(sys.executable).parent / "ruff")
    if not pathlib.Path(ruff).exists():
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
