"""The fw_mpi plugin: makes ``fit(distributed=True)`` and ``fw run -n`` find fw_mpi.

Loading it imports neither mpi4py nor the rest of fw_mpi (importing mpi4py's ``MPI`` starts an MPI
process): ``fw_configure`` only registers the backend's name and where its pieces live, and fw
imports them when a distributed fit or launch asks.
"""

from __future__ import annotations

from fw_core import distributed, hookimpl

NAME = "fw_mpi"
BACKEND = distributed.Backend(name="mpi", fit="fw_mpi.fit:prepare_fit",
                              launcher="fw_mpi.launch:mpiexec_command")


@hookimpl
def fw_configure(config):
    distributed.register(BACKEND)


@hookimpl
def fw_unconfigure():
    distributed.unregister(BACKEND)
