"""Collectives that cannot hang: started non-blocking, polled until a deadline, and on timeout
a report of which ranks never arrived.

Before a rank joins its k-th collective it posts a small notice "I reached k" to every other
rank on a side communicator. Completing collective k implies every rank posted notice k, so
each rank then receives those notices (the side channel stays in step). If the collective does
not complete in time, the waiting rank reads whatever notices have come and names the ranks
whose last notice is older than k, with the collective this rank ran at that number.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .errors import CollectiveTimeoutError
from .world import world

_TAG = 7301
#: Test() calls spent spinning before the poll starts sleeping between tries: a collective that
#: is about to complete is seen at once, a long wait leaves the core to the other ranks
_SPINS = 200
_NAP = 5e-5


class _Log:
    """This rank's collectives so far, the notices it has sent and what it knows of the others."""

    def __init__(self, ranks: int, me: int):
        self.count = 0
        self.names: dict[int, str] = {}
        self.sent: list[tuple[object, np.ndarray]] = []
        self.others = [r for r in range(ranks) if r != me]
        self.seen = dict.fromkeys(self.others, 0)


_log: _Log | None = None


def _the_log() -> _Log:
    global _log
    if _log is None:
        w = world()
        _log = _Log(w.comm.Get_size(), w.comm.Get_rank())
    return _log


class Pending:
    """A started collective: :meth:`wait` blocks until it completes or its deadline passes."""

    __slots__ = ("request", "number", "what", "timeout", "done")

    def __init__(self, request, number: int, what: str, timeout: float):
        self.request, self.number, self.what, self.timeout = request, number, what, timeout
        self.done = False

    def test(self) -> bool:
        """True once complete (lets MPI progress the transfer meanwhile)."""
        if not self.done and self.request.Test():
            self._finish()
        return self.done

    def wait(self) -> None:
        """Return when complete; raise CollectiveTimeoutError naming the missing ranks if the
        collective has not completed ``timeout`` seconds after this call."""
        if self.done:
            return
        deadline = time.monotonic() + self.timeout
        spins = 0
        while not self.request.Test():
            spins += 1
            if spins > _SPINS:
                if time.monotonic() > deadline:
                    raise _timeout_error(self)
                time.sleep(_NAP)
        self._finish()

    def _finish(self) -> None:
        self.done = True
        log = _the_log()
        side = world().side
        notice = np.zeros(1, np.int64)
        for r in log.others:
            while log.seen[r] < self.number:
                side.Recv(notice, source=r, tag=_TAG)
                log.seen[r] = int(notice[0])


def start(what: str, begin: Callable[[object], object], timeout: float | None = None) -> Pending:
    """Post this rank's arrival notice, then ``begin(comm)`` (a non-blocking MPI call returning
    its request) as collective number k; ``what`` names it in errors."""
    w = world()
    log = _the_log()
    log.count += 1
    log.names[log.count] = what
    log.sent = [(req, buf) for req, buf in log.sent if not req.Test()]
    notice = np.array([log.count], np.int64)
    for r in log.others:
        log.sent.append((w.side.Isend(notice, dest=r, tag=_TAG), notice))
    request = begin(w.comm)
    return Pending(request, log.count, what, w.timeout if timeout is None else float(timeout))


def timed(what: str, begin: Callable[[object], object], timeout: float | None = None) -> None:
    """:func:`start` and wait: a blocking collective with a timeout."""
    start(what, begin, timeout).wait()


def _timeout_error(pending: Pending) -> CollectiveTimeoutError:
    w = world()
    log = _the_log()
    notice = np.zeros(1, np.int64)
    for r in log.others:
        while w.side.Iprobe(source=r, tag=_TAG):
            w.side.Recv(notice, source=r, tag=_TAG)
            log.seen[r] = int(notice[0])
    me, k = w.comm.Get_rank(), pending.number
    missing = [r for r in log.others if log.seen[r] < k]
    if missing:
        last = "; ".join(f"rank {r} last reached collective #{log.seen[r]}"
                         f"{_named(log, log.seen[r])}" for r in missing)
        detail = (f"rank(s) {', '.join(map(str, missing))} did not arrive ({last})")
        hint = ("every rank must run the same collectives in the same order: look for a "
                "branch on the rank, an exception or a shorter data shard on the missing "
                "rank(s); raise the timeout with fw_mpi.init(timeout=...) if they are only slow")
    else:
        detail = "every rank arrived, so they called different collectives at this point"
        hint = "every rank must call the same collectives (same kind, sizes) in the same order"
    return CollectiveTimeoutError(
        f"collective #{k} did not complete within {pending.timeout:g} s on "
        f"rank {me}: {detail}", op=pending.what, hint=hint)


def _named(log: _Log, number: int) -> str:
    return f" ({log.names[number]} here)" if number in log.names else ""
