"""Runs a worker script under ``mpiexec -n N`` (one BLAS thread per rank, a timeout) and reads
the JSON lines its ranks print."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from fw_mpi.errors import DistributedError
from fw_mpi.launch import find_mpiexec

ROOT = pathlib.Path(__file__).resolve().parents[3]
WORKERS = pathlib.Path(__file__).resolve().parent / "workers"


def mpiexec() -> str:
    try:
        return find_mpiexec()
    except DistributedError:
        pytest.skip("no mpiexec: pip install fw-mpi[mpich]")


def run(ranks: int, script: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    """``mpiexec -n ranks python workers/script args`` from the repository root."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    path = script if os.path.isabs(script) else str(WORKERS / script)
    return subprocess.run([mpiexec(), "-n", str(ranks), sys.executable, path, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def records(out: str) -> list[dict]:
    """Every JSON object printed (ranks' lines may run together), in order."""
    decoder, found, i = json.JSONDecoder(), [], 0
    while (i := out.find("{", i)) != -1:
        value, i = decoder.raw_decode(out, i)
        found.append(value)
    return found


def by_rank(done: subprocess.CompletedProcess, ranks: int) -> dict[int, dict]:
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[int, dict] = {}
    for r in records(done.stdout):
        seen.setdefault(r["rank"], {}).update(r)
    assert sorted(seen) == list(range(ranks)), done.stdout
    return seen
