"""``torch.utils.data.dataloader``'s public names, as fw has them (:mod:`fw_core.data.loader`,
:mod:`fw_core.data.workers`)."""

from ...data.loader import DataLoader, default_collate
from ...data.workers import WorkerInfo, get_worker_info

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "get_worker_info"]
