"""``torch.utils.data.sampler``'s public names, as fw has them (:mod:`fw_core.data.sampler`)."""

from ...data.sampler import *  # noqa: F403
from ...data.sampler import __all__  # noqa: F401
