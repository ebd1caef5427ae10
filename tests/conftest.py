"""Test-wide settings: a workspace Numba cache and a fixed seed per test."""

import os
import pathlib

# pytest -n 2 on 2 cores: one BLAS thread per worker, or OpenBLAS's threads fight each other
# (a 32x784 @ 784x128 product went from 0.16 ms to 14-34 ms). Set before NumPy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_CACHE_DIR",
                      str(pathlib.Path(__file__).resolve().parent.parent / ".numba_cache"))

import pytest  # noqa: E402

import fw_core as fw  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    fw.manual_seed(0)
    yield
