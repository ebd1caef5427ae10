"""fw_mpi's errors: FwError subclasses, each naming the collective or module, the ranks involved
and a fix."""

from __future__ import annotations

from fw_core.errors import FwError


class DistributedError(FwError):
    """Something about the processes of a distributed job is wrong (set-up, device, data)."""


class RankMismatchError(DistributedError):
    """The ranks disagree about what they hold (parameter names, shapes, dtypes, values)."""


class CollectiveTimeoutError(DistributedError):
    """A collective did not complete in time; the message names the ranks that did not arrive."""
