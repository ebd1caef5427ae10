"""The job's processes: ``init``, ``rank``, ``size``, ``local_rank``, ``barrier``, and the
exception hook that aborts the whole job when one rank fails.

``init()`` is idempotent and called by everything that communicates; importing mpi4py's ``MPI``
is what starts the MPI process, so nothing in fw_mpi imports it at module level.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass

#: seconds a collective may take before the ranks that did not arrive are reported
DEFAULT_TIMEOUT = float(os.environ.get("FW_MPI_TIMEOUT", "300"))


@dataclass
class _World:
    comm: object  # the communicator collectives run on (a duplicate of COMM_WORLD)
    side: object  # a second duplicate: arrival notices for the timeout report
    local_rank: int
    timeout: float


_world: _World | None = None


def init(timeout: float | None = None, abort_on_exception: bool = True) -> None:
    """Start MPI (if it is not started) and fw_mpi's communicators. Safe to call again; a
    given ``timeout`` (seconds per collective) replaces the current one.

    Args:
        timeout: how long a collective may wait for the other ranks before raising
            :class:`~fw_mpi.errors.CollectiveTimeoutError` (default: ``$FW_MPI_TIMEOUT`` or 300).
        abort_on_exception: install an exception hook that prints an uncaught exception's
            traceback once, prefixed by the rank, and aborts every rank (``MPI.Abort``), so one
            failing rank never leaves the others waiting forever.
    """
    global _world
    if _world is None:
        from mpi4py import MPI

        world = MPI.COMM_WORLD
        node = world.Split_type(MPI.COMM_TYPE_SHARED)
        _world = _World(comm=world.Dup(), side=world.Dup(), local_rank=node.Get_rank(),
                        timeout=DEFAULT_TIMEOUT)
        node.Free()
        if abort_on_exception:
            sys.excepthook = _abort_job
    if timeout is not None:
        _world.timeout = float(timeout)


#: seconds an aborting rank leaves mpiexec to forward its traceback
_FORWARDING_S = 0.5


def world() -> _World:
    init()
    return _world


def rank() -> int:
    """This process's number, 0 to ``size() - 1``."""
    return world().comm.Get_rank()


def size() -> int:
    """How many processes the job has."""
    return world().comm.Get_size()


def local_rank() -> int:
    """This process's number among the job's processes on the same machine."""
    return world().local_rank


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank has called ``barrier`` (within the collective timeout)."""
    from .waiting import timed

    timed("barrier", lambda comm: comm.Ibarrier(), timeout)


def _abort_job(kind, value, tb) -> None:
    """sys.excepthook: this rank's traceback, once, then abort every rank of the job."""
    from mpi4py import MPI

    text = "".join(traceback.format_exception(kind, value, tb))
    comm = MPI.COMM_WORLD
    sys.stderr.write(f"fw_mpi: rank {comm.Get_rank()} of {comm.Get_size()} raised an uncaught "
                     f"exception; aborting the job\n{text}")
    sys.stderr.flush()
    # mpiexec forwards each rank's output through its proxies, and Abort tears the job down
    # at once: without a moment for the forwarding, the traceback is sometimes lost
    time.sleep(_FORWARDING_S)
    comm.Abort(1)
