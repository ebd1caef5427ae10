"""What ``Model.fit(..., distributed=True)`` trains through: the module under
DistributedDataParallel, this rank's shard of the data, metrics averaged over the ranks, and
progress bars and files written by rank 0 only.
"""

from __future__ import annotations

import numpy as np

import fw_core as fw
from fw_core.data import DataLoader, Dataset, TensorDataset
from fw_core.training.callbacks import CSVLogger, ModelCheckpoint

from .collectives import all_reduce
from .ddp import DistributedDataParallel
from .errors import DistributedError
from .sampler import DistributedSampler
from .world import init, rank

#: callbacks that write files: run on rank 0 only, so ranks never write one path at once
WRITERS = (ModelCheckpoint, CSVLogger)


class DistributedFit:
    """One distributed ``fit``: built by :func:`prepare_fit`, asked by the fit loop."""

    def __init__(self, model, bucket_cap_mb: float):
        init()
        self.main = rank() == 0
        self.ddp = DistributedDataParallel(model.module, bucket_cap_mb=bucket_cap_mb)
        self.sampler: DistributedSampler | None = None

    def loader(self, x, y, batch_size: int, shuffle: bool):
        """A DataLoader over this rank's shard of ``(x, y)`` or a Dataset."""
        if hasattr(x, "batch_size") and y is None:
            raise DistributedError("fit(distributed=True) shards the data itself and cannot "
                                   "reshard a DataLoader", op="Model.fit",
                                   hint="pass the Dataset (or x, y arrays) instead")
        if not isinstance(x, Dataset):
            if y is None:
                raise DistributedError("fit(distributed=True) needs targets", op="Model.fit",
                                       hint="pass (x, y) arrays or a Dataset of (x, y) pairs")
            x = TensorDataset(_tensor(x), _tensor(y))
        self.sampler = DistributedSampler(x, shuffle=shuffle)
        return DataLoader(x, batch_size=batch_size, sampler=self.sampler)

    def set_epoch(self, epoch: int) -> None:
        self.sampler.set_epoch(epoch)

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


def _tensor(value):
    return value if isinstance(value, fw.Tensor) else fw.as_tensor(np.asarray(value))
