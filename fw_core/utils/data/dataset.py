"""``torch.utils.data.dataset``'s public names, as fw has them (:mod:`fw_core.data.dataset`)."""

from ...data.dataset import *  # noqa: F403
from ...data.dataset import __all__  # noqa: F401
