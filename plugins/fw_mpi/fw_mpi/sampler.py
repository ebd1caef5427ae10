"""``DistributedSampler`` with the world size and rank of the running MPI job as defaults."""

from __future__ import annotations

from fw_core.data import DistributedSampler as _Sampler

from . import world


class DistributedSampler(_Sampler):
    """``fw.data.DistributedSampler`` (PyTorch's partition: pad by repeating the epoch's order,
    give rank r every ``num_replicas``-th index from r; the order a permutation seeded by
    ``seed + epoch``), with ``num_replicas`` and ``rank`` read from the MPI job when omitted.
    Call :meth:`set_epoch` with the same epoch on every rank before each epoch.
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        replicas = world.size() if num_replicas is None else num_replicas
        super().__init__(dataset, num_replicas=replicas,
                         rank=world.rank() if rank is None else rank, shuffle=shuffle, seed=seed,
                         drop_last=drop_last)

