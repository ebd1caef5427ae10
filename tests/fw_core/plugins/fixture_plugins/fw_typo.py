"""A hook implementation whose name has a typo (``kernel`` for ``kernels``)."""

from fw_core import hookimpl


@hookimpl
def fw_register_kernel():
    return []
