"""``torch.utils.data.dataloader``'s public names, as fw has them (:mod:`fw_core.data.loader`,
:mod:`fw_core.data.collate`, :mod:`fw_core.data.workers`)."""

from ...data.collate import default_collate, default_convert
from ...data.loader import DataLoader
from ...data.workers import WorkerInfo, get_worker_info

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]
