"""``torch.utils.data`` spelled for fw: the very objects of :mod:`fw_core.data` (datasets,
samplers, the DataLoader, ``default_collate``, ``default_convert``, ``get_worker_info``), so
code written ``from torch.utils.data import DataLoader, TensorDataset`` runs with ``fw_core``
in its place.

``fw.utils.data.DataLoader is fw.data.DataLoader``. The submodules PyTorch programs import
from are here too: :mod:`.dataloader`, :mod:`.dataset`, :mod:`.sampler`. A name PyTorch has
and fw lacks (the DataPipe classes, ``IterDataPipe``) raises a MissingNameError.
"""

from ...data import *  # noqa: F403
from ...data import __all__ as _names
from . import dataloader, dataset, sampler

__all__ = [*_names, "dataloader", "dataset", "sampler"]

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from ...names import guard as _guard  # noqa: E402

_guard(__name__, "utils.data")
