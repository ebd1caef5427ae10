"""The benchmark workloads, one module each: every model, optimizer and loss is
written once against ``common``'s framework interface and runs identically in fw and PyTorch.

``WORKLOADS`` maps a name to its :class:`~benchmarks.workloads.common.Workload`.
"""

from . import cnn, lstm, lstm_cell, mlp, transformer
from .common import Workload

WORKLOADS: dict[str, Workload] = {m.WORKLOAD.name: m.WORKLOAD
                                  for m in (mlp, cnn, transformer, lstm_cell, lstm)}

__all__ = ["WORKLOADS", "Workload"]
