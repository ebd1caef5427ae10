"""What ``Model.fit(..., distributed=True)`` trains through: the module under
DistributedDataParallel, this rank's shard of the data, metrics averaged over the ranks, and
progress bars and files written by rank 0 only.
"""

from __future__ import annotations

import numpy as np

import fw_core as fw
from fw_core.training.callbacks import CSVLogger, ModelCheckpoint

from .collectives import all_reduce
from .ddp import DistributedDataParallel
from .sampler import DistributedSampler
from .world import init, rank

#: callbacks that write files: run on rank 0 only, so ranks never write one path at once
WRITERS = (ModelCheckpoint, CSVLogger)


class DistributedFit:
    """One distributed ``fit``: built by :func:`prepare_fit`, asked by the fit loop (which
    builds the data loader itself, drawing through :meth:`sampler`)."""

    def __init__(self, model, bucket_cap_mb: float):
        init()
        self.main = rank() == 0
        self.ddp = DistributedDataParallel(model.module, bucket_cap_mb=bucket_cap_mb)
        self._sampler: DistributedSampler | None = None

    def sampler(self, dataset, shuffle: bool) -> DistributedSampler:
        """This rank's shard of ``dataset`` (the fit loop's DataLoader draws through it)."""
        self._sampler = DistributedSampler(dataset, shuffle=shuffle)
        return self._sampler

    def set_epoch(self, epoch: int) -> None:
        self._sampler.set_epoch(epoch)

    def callbacks(self, callbacks) -> list:
        """The callbacks this rank runs: all on rank 0, all but file writers elsewhere."""
        return list(callbacks) if self.main else [c for c in callbacks
                                                  if not isinstance(c, WRITERS)]

    def average(self, logs: dict) -> dict:
        """The epoch's logs averaged over the ranks (every shard has the same length)."""
        if not logs:
            return logs
        names = sorted(logs)
        mean = all_reduce(fw.tensor(np.array([logs[k] for k in names], np.float64)), op="mean")
        return dict(zip(names, mean.tolist()))


def prepare_fit(model, bucket_cap_mb: float = 25.0) -> DistributedFit:
    """The distributed-fit backend entry (``fw_core.distributed.Backend.fit``)."""
    return DistributedFit(model, bucket_cap_mb)

