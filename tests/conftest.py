"""Test-wide settings: a workspace Numba cache and a fixed seed per test."""

import os
import pathlib

os.environ.setdefault("NUMBA_CACHE_DIR",
                      str(pathlib.Path(__file__).resolve().parent.parent / ".numba_cache"))

import pytest  # noqa: E402

import fw_core as fw  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    fw.manual_seed(0)
    yield
