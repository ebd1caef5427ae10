"""Collectives on fw tensors: ``all_reduce``, ``broadcast``, ``all_gather``, ``reduce_scatter``.

Each returns new tensors and leaves its input alone (as Horovod's ``allreduce`` and PyTorch's
functional collectives do): an in-place write into a tensor autograd has saved would corrupt a
backward pass. Each runs as a non-blocking MPI call polled with the collective timeout
(:mod:`fw_mpi.waiting`), so a missing rank is reported instead of hanging. Tensors live on the
cpu device; other devices raise (fw-mpi has no device-memory path).
"""

from __future__ import annotations

import numpy as np

import fw_core as fw

from .errors import DistributedError
from .waiting import timed
from .world import size

#: op name -> (the MPI reduction's name in mpi4py, divide by the world size afterwards)
OPS = {"sum": ("SUM", False), "mean": ("SUM", True), "max": ("MAX", False),
       "min": ("MIN", False), "prod": ("PROD", False)}


def mpi_op(op: str, what: str):
    """The MPI reduction for ``op`` and whether the result is divided by the world size."""
    from mpi4py import MPI

    if op not in OPS:
        raise DistributedError(f"unknown reduction {op!r}", op=what,
                               hint=f"use one of {', '.join(OPS)}")
    name, average = OPS[op]
    return getattr(MPI, name), average


def host_array(t, what: str) -> np.ndarray:
    """The C-contiguous NumPy array of a cpu tensor (its own storage when already so)."""
    if t.device.type != "cpu":
        raise DistributedError(f"{what} got a tensor on {t.device}; fw-mpi exchanges host "
                               "memory only", op=what, inputs=f"{tuple(t.shape)} on {t.device}",
                               hint="move it first: t.cpu()")
    return np.ascontiguousarray(t._data) if t._data.ndim else t._data.copy()


def _like(array: np.ndarray, t):
    return fw.from_numpy(array).to(t.device)


def _check_mean(send: np.ndarray, average: bool, what: str) -> None:
    if average and send.dtype.kind != "f":
        raise DistributedError(f"{what} of an integer tensor ({send.dtype}) has no exact "
                               "result", op=what, hint='reduce with op="sum" and divide '
                               "(after converting to float) yourself")


def all_reduce(t, op: str = "sum", timeout: float | None = None):
    """The elementwise reduction of ``t`` over all ranks ("sum", "mean", "max", "min",
    "prod"); every rank gets the result. Shapes and dtypes must agree across ranks."""
    what = f"all_reduce({op})"
    mpi, average = mpi_op(op, what)
    send = host_array(t, what)
    _check_mean(send, average, what)
    out = np.empty_like(send)
    timed(what, lambda comm: comm.Iallreduce(send, out, op=mpi), timeout)
    if average:
        out /= size()
    return _like(out, t)


def broadcast(t, src: int = 0, timeout: float | None = None):
    """Rank ``src``'s ``t`` on every rank (the other ranks' ``t`` gives shape and dtype)."""
    buf = np.array(host_array(t, "broadcast"), copy=True)
    timed(f"broadcast(src={src})", lambda comm: comm.Ibcast(buf, root=src), timeout)
    return _like(buf, t)


def all_gather(t, timeout: float | None = None) -> list:
    """Every rank's ``t``, as a list indexed by rank (same shape and dtype on all ranks)."""
    send = host_array(t, "all_gather")
    out = np.empty((size(), *send.shape), send.dtype)
    timed("all_gather", lambda comm: comm.Iallgather(send, out), timeout)
    return [_like(out[r], t) for r in range(size())]


def reduce_scatter(t, op: str = "sum", timeout: float | None = None):
    """Reduce ``t`` over the ranks and give rank r the r-th of ``size()`` equal slices along
    dimension 0 (``t.shape[0]`` must divide by the world size)."""
    what = f"reduce_scatter({op})"
    mpi, average = mpi_op(op, what)
    send = host_array(t, what)
    _check_mean(send, average, what)
    n = size()
    if send.ndim == 0 or send.shape[0] % n:
        raise DistributedError(f"{what} splits dimension 0 into {n} equal parts, got shape "
                               f"{tuple(send.shape)}", op=what,
                               hint=f"pad dimension 0 to a multiple of {n}")
    out = np.empty((send.shape[0] // n, *send.shape[1:]), send.dtype)
    timed(what, lambda comm: comm.Ireduce_scatter_block(send, out, op=mpi), timeout)
    if average:
        out /= n
    return _like(out, t)
