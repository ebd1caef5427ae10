"""The launch command of ``fw run -n N``: the installed ``mpiexec`` (the one beside this Python,
as the mpich wheel installs it, else the first on PATH)."""

from __future__ import annotations

import os
import pathlib
import shutil
import sys

from .errors import DistributedError


def find_mpiexec() -> str:
    """The path of mpiexec, or a DistributedError saying how to install one."""
    here = pathlib.Path(sys.executable).parent
    found = shutil.which("mpiexec", path=os.pathsep.join([str(here),
                                                         os.environ.get("PATH", "")]))
    if found is None:
        raise DistributedError("no mpiexec found beside this Python or on PATH",
                               op="fw run", hint="pip install fw-mpi[mpich]")
    return found


def mpiexec_command(ranks: int, program: list[str]) -> list[str]:
    """``mpiexec -n ranks program...`` (the ``fw_core.distributed`` launcher)."""
    return [find_mpiexec(), "-n", str(ranks), *program]
