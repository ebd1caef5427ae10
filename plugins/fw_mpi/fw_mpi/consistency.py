"""Rank-consistency checks: every rank must hold the same parameters (names, shapes, dtypes) at
wrap time, and, checked on demand, the same values.

One small all-reduce compares a fingerprint of each rank's list; only when they differ are the
lists gathered, so that every rank raises the same error naming the first differing entry and
the ranks that differ — every rank reaches the error, none is left waiting.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .errors import RankMismatchError
from .waiting import timed


def _fingerprint(items) -> np.ndarray:
    digest = hashlib.blake2b(repr(items).encode(), digest_size=8).digest()
    return np.frombuffer(digest, np.int64).copy()


def _agree(local: np.ndarray, what: str) -> bool:
    """True when ``local`` (int64 values) is the same on every rank."""
    from mpi4py import MPI

    low, high = np.empty_like(local), np.empty_like(local)
    timed(what, lambda comm: comm.Iallreduce(local, low, op=MPI.MIN))
    timed(what, lambda comm: comm.Iallreduce(local, high, op=MPI.MAX))
    return bool((low == high).all())


def _describe(entry) -> str:
    if entry is None:
        return "nothing (its list ended)"
    name, shape, dtype = entry
    return f"{name} {list(shape)} {dtype}"


def check_same_structure(module, what: str = "DistributedDataParallel") -> None:
    """Raise RankMismatchError on every rank unless all ranks' ``module`` have the same
    parameter and buffer names, shapes and dtypes, in the same order."""
    from .world import world

    items = [(name, tuple(t.shape), t.dtype.name) for name, t in
             [*module.named_parameters(), *module.named_buffers()]]
    if _agree(_fingerprint(items), f"{what}: structure check"):
        return
    lists = world().comm.allgather(items)
    longest = max(len(x) for x in lists)
    for i in range(longest):
        entries = [x[i] if i < len(x) else None for x in lists]
        if any(e != entries[0] for e in entries):
            groups: dict[str, list[int]] = {}
            for r, e in enumerate(entries):
                groups.setdefault(_describe(e), []).append(r)
            told = "; ".join(f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}: "
                             f"{d}" for d, rs in groups.items())
            name = next(e[0] for e in entries if e is not None)
            raise RankMismatchError(
                f"the ranks' models differ at parameter/buffer #{i} {name!r} ({told})",
                op=what, hint="build the same model on every rank (same config, no branch on "
                              "the rank) before wrapping it")
    raise RankMismatchError("the ranks' parameter lists differ", op=what,
                            hint="build the same model on every rank")


def check_same_values(module, what: str = "parameter check") -> None:
    """Raise RankMismatchError on every rank unless all ranks' parameters are bitwise equal
    (a checksum per parameter, compared across ranks): replicas that have diverged."""
    named = list(module.named_parameters())
    sums = np.array([_checksum(p._data) for _, p in named], np.int64)
    if _agree(sums, what):
        return
    from .world import world

    gathered = np.array(world().comm.allgather(sums))
    first = int(np.flatnonzero((gathered != gathered[0]).any(axis=0))[0])
    differ = [r for r in range(len(gathered)) if gathered[r, first] != gathered[0, first]]
    raise RankMismatchError(
        f"the replicas have diverged: parameter {named[first][0]!r} differs on "
        f"rank(s) {', '.join(map(str, differ))} from rank 0", op=what,
        hint="every rank must apply the same averaged gradients: look for a step taken inside "
             "no_sync() on one rank only, or a per-rank random update")


def _checksum(array: np.ndarray) -> int:
    raw = np.ascontiguousarray(array).view(np.uint8)
    return int(np.frombuffer(hashlib.blake2b(raw, digest_size=8).digest(), np.int64)[0])
