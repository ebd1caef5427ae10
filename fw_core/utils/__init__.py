"""PyTorch's ``torch.utils`` address: ``fw.utils.data`` is :mod:`fw_core.data` under the name
PyTorch programs import it by (``from fw_core.utils.data import DataLoader``).

A name ``torch.utils`` has and this module lacks raises a MissingNameError saying so.
"""

from . import data

__all__ = ["data"]

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from ..names import guard as _guard  # noqa: E402

_guard(__name__, "utils")
