"""``DistributedDataParallel``: one replica of a module per rank, gradients averaged during
backward.

At wrap time every rank checks that all ranks hold the same parameter and buffer names, shapes
and dtypes (:mod:`fw_mpi.consistency`), then takes rank 0's values; from then on each backward
pass all-reduces the gradients in buckets (:mod:`fw_mpi.reducer`), so that after
``loss.backward()`` every rank holds the same averaged gradients and the optimizer steps keep
the replicas equal.
"""

from __future__ import annotations

import contextlib

import numpy as np

from fw_core.nn import Module

from .collectives import host_array
from .consistency import check_same_structure, check_same_values
from .reducer import Reducer
from .waiting import timed
from .world import init, size


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training over the MPI job's ranks.

    Args:
        module: the model, built the same way on every rank.
        bucket_cap_mb: the most gradient data (MiB) one all-reduce carries; smaller buckets
            start earlier in backward (more overlap), larger ones cost fewer messages.
        broadcast_buffers: also take rank 0's buffers (BatchNorm statistics) at wrap time.
        check_every: every this many forward calls, check that the replicas' parameters are
            still equal (:meth:`check_parameters`; one small all-reduce); 0 never.

    Raises:
        RankMismatchError: on every rank, when the ranks' modules differ (the first differing
            parameter and the ranks are named).
        DistributedError: the module has no trainable parameter, or lives off the cpu.

    >>> model = fw_mpi.DistributedDataParallel(Net())
    >>> loss = fw.nn.functional.cross_entropy(model(x), y)
    >>> loss.backward()        # gradients are averaged over the ranks when this returns
    >>> optimizer.step()
    """

    def __init__(self, module: Module, bucket_cap_mb: float = 25.0,
                 broadcast_buffers: bool = True, check_every: int = 0):
        super().__init__()
        init()
        self.module = module
        check_same_structure(module)
        named = list(module.named_parameters())
        tensors = [p for _, p in named]
        if broadcast_buffers:
            tensors += [b for _, b in module.named_buffers()]
        for t in tensors:
            _broadcast_in_place(t)
        self.reducer = Reducer(named, bucket_cap_mb, size())
        self.check_every = int(check_every)
        self._forwards = 0

    def forward(self, *args, **kwargs):
        self.reducer.check_finished()
        self._forwards += 1
        if self.check_every and self._forwards % self.check_every == 0:
            self.check_parameters()
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate local gradients only; the first backward after it
        averages the accumulated sums (gradient accumulation without extra communication)."""
        previous, self.reducer.syncing = self.reducer.syncing, False
        try:
            yield
        finally:
            self.reducer.syncing = previous

    def check_parameters(self) -> None:
        """Raise RankMismatchError (on every rank) if the replicas' parameters differ (what
        ``check_every`` runs periodically)."""
        check_same_values(self.module)

    @property
    def buckets(self) -> list[list[str]]:
        """The parameter names of each gradient bucket, in the order they are reduced."""
        return [[self.reducer.names[id(p)] for p in b.params] for b in self.reducer.buckets]

    @property
    def gradient_bytes(self) -> int:
        """The bytes of the gradients of the parameters this wrapper averages."""
        return self.reducer.gradient_bytes

    @property
    def communicated_bytes(self) -> int:
        """The bytes this rank has passed to gradient all-reduces since wrapping (one step's
        share is :attr:`gradient_bytes`: each gradient travels once, in its bucket)."""
        return self.reducer.sent_bytes


def _broadcast_in_place(t) -> None:
    """Overwrite ``t``'s storage with rank 0's values."""
    buf = host_array(t, "DistributedDataParallel broadcast")
    timed("DistributedDataParallel: broadcast of rank 0's state",
          lambda comm: comm.Ibcast(buf, root=0))
    if buf is not t._data:
        t._data[...] = np.reshape(buf, t._data.shape)
