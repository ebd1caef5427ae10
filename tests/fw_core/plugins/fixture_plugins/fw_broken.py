"""A plugin whose import fails: it needs a package that is not installed."""

import fw_missing_dependency  # noqa: F401

from fw_core import hookimpl


@hookimpl
def fw_register_kernels():
    return []
