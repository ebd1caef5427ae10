"""fw-mpi: data-parallel training of fw models on MPI (mpi4py).

>>> import fw_mpi
>>> fw_mpi.init()
>>> model = fw_mpi.DistributedDataParallel(Net())
>>> sampler = fw_mpi.DistributedSampler(dataset)     # this rank's share of the data

Run with ``mpiexec -n 2 python train.py`` or ``fw run -n 2 train.py`` (docs/distributed.md).
Each public name is imported from its module on first use, so that loading the plugin (at
``import fw_core``) costs nothing more than ``fw_mpi.plugin``.
"""

from __future__ import annotations

from fw_core.lazy import lazy_api

__version__ = "0.1.0"

#: public name -> module of this package that defines it
_API: dict[str, str] = {
    "init": "world", "rank": "world", "size": "world", "local_rank": "world",
    "barrier": "world",
    "all_reduce": "collectives", "broadcast": "collectives", "all_gather": "collectives",
    "reduce_scatter": "collectives",
    "check_same_structure": "consistency", "check_same_values": "consistency",
    "DistributedDataParallel": "ddp",
    "DistributedSampler": "sampler",
    "SyncBatchNorm": "sync_batchnorm", "convert_sync_batchnorm": "sync_batchnorm",
    "DistributedError": "errors", "RankMismatchError": "errors",
    "CollectiveTimeoutError": "errors",
}

lazy_api(__name__, _API)
